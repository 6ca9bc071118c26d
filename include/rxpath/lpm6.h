/* SPDX-License-Identifier: MIT */
/*
 * IPv6 longest-prefix match: a 24-bit first level, then 8-bit strides.
 *
 * Layout:
 *  - tbl24: 2^24 entries indexed by the top 24 bits of the address (64 MiB
 *    mmap'd anonymous, advised onto transparent huge pages; "no route" is 0,
 *    so only pages that hold routes become resident and an empty table is
 *    small). Routes up to /24 are expanded here.
 *  - groups: 256-entry tables, one per 8 bits below. A group at level k
 *    (k = 1..13) covers one /(16 + 8k) block, is indexed by address byte
 *    2 + k and holds routes of length 17 + 8k .. 24 + 8k; an entry pointing
 *    to a group of the next level carries EXT. A /48 takes 4 loads.
 *  - the /0 route lives in its own word, consulted on "no route".
 *
 * An entry holds a 24-bit next hop (or group number), EXT, VALID and a
 * 6-bit depth the writer uses: in tbl24 the route's length; in a group the
 * route's length minus the group's base, or 0 when the entry is inherited
 * from the level above (the writer keeps each group's inherited length).
 *
 * Next hops are ids below RXP_LPM_NH_MAX (2^24).
 *
 * Concurrency: the contract of lpm4.h. One writer (add, del, reclaim and
 * the queries) and any number of lock-free readers (lookup, lookup_bulk,
 * prefetch); entries are written with single atomic 32-bit stores; a new
 * group is filled before the entry pointing at it is published with a
 * release store (partners: the acquire loads in lookup and lookup_bulk);
 * groups emptied by deletes are retired and reused only after
 * rxp_lpm6_reclaim(), which the writer calls after a grace period (every
 * lookup begun before the last delete has finished).
 */
#ifndef RXPATH_LPM6_H
#define RXPATH_LPM6_H

#include <errno.h>
#include <stdatomic.h>
#include "rxpath/common.h"

#define RXP_LPM_NH_MAX   (1u << 24)	/* next hops are ids below this */
#define RXP_LPM_NO_ROUTE UINT32_MAX	/* what lookup_bulk writes where no route matches */

#define RXP_LPM6_VAL_MASK    0x00ffffffu	/* next hop, or group number with EXT */
#define RXP_LPM6_EXT         (1u << 24)		/* points to a group of the next level */
#define RXP_LPM6_VALID       (1u << 25)		/* holds a route's next hop */
#define RXP_LPM6_DEPTH_SHIFT 26			/* see above (for the writer) */

#define RXP_LPM6_TBL24_ENTRIES (1u << 24)
#define RXP_LPM6_GROUP_ENTRIES 256u

struct rxp_lpm6_writer;

struct rxp_lpm6 {
	/* read by lookups */
	_Atomic uint32_t *tbl24;
	_Atomic uint32_t *groups;	/* group g is groups[g * 256 .. g * 256 + 255] */
	_Atomic uint32_t dflt;		/* the /0 route: VALID | nh, or 0 */
	/* writer only */
	struct rxp_lpm6_writer *w;
};

/*
 * Returns a table for up to @max_routes routes and @max_groups groups (0
 * picks 4 per route, clamped to 1024..2^22; an isolated /48 needs 3, routes
 * in the same block share them), or NULL with errno EINVAL or ENOMEM.
 */
struct rxp_lpm6 *rxp_lpm6_create(uint32_t max_routes, uint32_t max_groups);

/* Frees the table. No reader may be using it. */
void rxp_lpm6_destroy(struct rxp_lpm6 *lpm);

/*
 * Adds @prefix/@len (network byte order; host bits are ignored) with next
 * hop @nh, or replaces the next hop of a route already there. Returns 0,
 * -EINVAL (len > 128, nh >= RXP_LPM_NH_MAX) or -ENOSPC (route or group limit
 * reached; retired groups count as used until rxp_lpm6_reclaim()). A failed
 * add changes nothing.
 */
int rxp_lpm6_add(struct rxp_lpm6 *lpm, const uint8_t prefix[16], uint8_t len, uint32_t nh);

/*
 * Deletes @prefix/@len; addresses it covered fall back to the next longest
 * covering route. Returns 0, -EINVAL (len > 128) or -ENOENT (no such route).
 */
int rxp_lpm6_del(struct rxp_lpm6 *lpm, const uint8_t prefix[16], uint8_t len);

/*
 * Makes the groups retired by deletes reusable. Call only after a grace
 * period: every lookup that started before the last rxp_lpm6_del() has
 * finished. Returns the number of groups reclaimed.
 */
uint32_t rxp_lpm6_reclaim(struct rxp_lpm6 *lpm);

/* True when the route @prefix/@len itself is in the table (writer side). */
bool rxp_lpm6_has(const struct rxp_lpm6 *lpm, const uint8_t prefix[16], uint8_t len);

/* Returns the number of routes, the default route included. */
uint32_t rxp_lpm6_count(const struct rxp_lpm6 *lpm);

/* Returns the number of groups in use (not free, not retired). */
uint32_t rxp_lpm6_groups_used(const struct rxp_lpm6 *lpm);

/*
 * Returns the bytes allocated for the table (mapped tables, groups, rule
 * store, group bookkeeping). When @resident is not NULL, stores there the
 * bytes actually in memory (pages the tables have touched, by mincore, plus
 * the heap parts).
 */
size_t rxp_lpm6_memory(const struct rxp_lpm6 *lpm, size_t *resident);

/*
 * Looks up @n addresses, 16 bytes each in network order; writes each next
 * hop, or RXP_LPM_NO_ROUTE, to @nhs. Keeps a couple of dozen walks in
 * flight, each at its own level, so that their cache misses overlap.
 */
void rxp_lpm6_lookup_bulk(const struct rxp_lpm6 *lpm, const uint8_t (*addrs)[16], uint32_t *nhs,
			  unsigned n);

/* Prefetches the first-level entry for @addr: call it a few packets ahead of the lookup. */
static inline void rxp_lpm6_prefetch(const struct rxp_lpm6 *lpm, const uint8_t addr[16])
{
	rxp_prefetch((const void *)&lpm->tbl24[(uint32_t)addr[0] << 16 | (uint32_t)addr[1] << 8 |
						addr[2]]);
}

/* Returns 0 with the next hop of the longest route covering @addr in *nh, or -ENOENT. */
static inline int rxp_lpm6_lookup(const struct rxp_lpm6 *lpm, const uint8_t addr[16], uint32_t *nh)
{
	uint32_t idx = (uint32_t)addr[0] << 16 | (uint32_t)addr[1] << 8 | addr[2];
	/* acquire: partner of the release store that publishes a group */
	uint32_t e = atomic_load_explicit(&lpm->tbl24[idx], memory_order_acquire);

	/* the last level (byte 15) never points further; the bound keeps a reader in the table */
	for (unsigned i = 3; (e & RXP_LPM6_EXT) && i < 16; i++)
		e = atomic_load_explicit(&lpm->groups[((size_t)(e & RXP_LPM6_VAL_MASK) << 8) |
						      addr[i]],
					 memory_order_acquire);
	if (!(e & RXP_LPM6_VALID)) {
		e = atomic_load_explicit(&lpm->dflt, memory_order_relaxed);
		if (!(e & RXP_LPM6_VALID))
			return -ENOENT;
	}
	*nh = e & RXP_LPM6_VAL_MASK;
	return 0;
}

#endif
