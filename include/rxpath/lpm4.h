/* SPDX-License-Identifier: MIT */
/*
 * IPv4 longest-prefix match, DIR-24-8.
 *
 * Layout:
 *  - tbl24: 2^24 entries indexed by the top 24 bits of the address (64 MiB,
 *    mmap'd anonymous, advised onto transparent huge pages). "No route" is
 *    the entry 0, so pages no route touches stay unmapped: an empty table
 *    costs nothing resident, and resident memory grows where routes are.
 *  - groups: 256-entry second-level tables for /24 blocks that hold a route
 *    longer than /24; the tbl24 entry then points at the group and the last
 *    8 bits of the address index it.
 *  - the /0 route lives in its own word, consulted when the tables say "no
 *    route", so a default route costs one store instead of 64 MiB of writes.
 *
 * A lookup is one load, two when a group is in the way; the single lookup is
 * inline below. rxp_lpm4_lookup_bulk() prefetches the first-level entry of
 * the address 24 places ahead of the one it resolves, so that some two dozen
 * cache misses are in flight at once (memory-level parallelism).
 *
 * Next hops are ids below RXP_LPM_NH_MAX (2^24): 24 bits of the 32-bit entry.
 *
 * Concurrency: one writer (add, del, reclaim, and the count, groups_used and
 * memory queries; the caller serialises them) and any number of readers
 * (lookup, lookup_bulk, prefetch) on other threads, without locks:
 *  - every entry is 32 bits and written with one atomic store, so a reader
 *    sees the old or the new entry, never half of one;
 *  - a new group is filled completely before the tbl24 entry pointing at it
 *    is published with a release store (partner: the acquire loads of tbl24
 *    in lookup and lookup_bulk);
 *  - a group emptied by a delete is retired, not reused: a reader may still
 *    be inside it. rxp_lpm4_reclaim() makes retired groups reusable; the
 *    writer calls it once every lookup that began before the last delete has
 *    finished (a grace period: e.g. each worker counts its poll loops, and
 *    the writer issues a seq_cst fence, then waits until every count has
 *    moved, as RCU's synchronize does);
 *  - during an update a reader sees, for each address, the route before or
 *    the route after; never "no route" where one covered the address
 *    throughout.
 */
#ifndef RXPATH_LPM4_H
#define RXPATH_LPM4_H

#include <errno.h>
#include <stdatomic.h>
#include "rxpath/common.h"

#define RXP_LPM_NH_MAX   (1u << 24)	/* next hops are ids below this */
#define RXP_LPM_NO_ROUTE UINT32_MAX	/* what lookup_bulk writes where no route matches */

/* A table entry: 32 bits, always read and written whole. */
#define RXP_LPM4_VAL_MASK    0x00ffffffu	/* next hop, or group number with EXT */
#define RXP_LPM4_EXT         (1u << 24)		/* points to a group */
#define RXP_LPM4_VALID       (1u << 25)		/* holds a route's next hop */
#define RXP_LPM4_DEPTH_SHIFT 26			/* length of that route (for the writer) */

#define RXP_LPM4_TBL24_ENTRIES (1u << 24)
#define RXP_LPM4_GROUP_ENTRIES 256u

struct rxp_lpm4_writer;

struct rxp_lpm4 {
	/* read by lookups */
	_Atomic uint32_t *tbl24;
	_Atomic uint32_t *groups;	/* group g is groups[g * 256 .. g * 256 + 255] */
	_Atomic uint32_t dflt;		/* the /0 route: VALID | nh, or 0 */
	/* writer only */
	struct rxp_lpm4_writer *w;
};

/*
 * Returns a table for up to @max_routes routes and @max_groups second-level
 * groups (one per /24 block holding a route longer than /24; 0 picks
 * max_routes clamped to 256..65536), or NULL with errno EINVAL or ENOMEM.
 */
struct rxp_lpm4 *rxp_lpm4_create(uint32_t max_routes, uint32_t max_groups);

/* Frees the table. No reader may be using it. */
void rxp_lpm4_destroy(struct rxp_lpm4 *lpm);

/*
 * Adds @prefix/@len (host byte order; host bits are ignored) with next hop
 * @nh, or replaces the next hop of a route already there. Returns 0, -EINVAL
 * (len > 32, nh >= RXP_LPM_NH_MAX) or -ENOSPC (route or group limit reached;
 * retired groups count as used until rxp_lpm4_reclaim()). A failed add
 * changes nothing.
 */
int rxp_lpm4_add(struct rxp_lpm4 *lpm, uint32_t prefix, uint8_t len, uint32_t nh);

/*
 * Deletes @prefix/@len; addresses it covered fall back to the next longest
 * covering route. Returns 0, -EINVAL (len > 32) or -ENOENT (no such route).
 */
int rxp_lpm4_del(struct rxp_lpm4 *lpm, uint32_t prefix, uint8_t len);

/*
 * Makes the groups retired by deletes reusable. Call only after a grace
 * period: every lookup that started before the last rxp_lpm4_del() has
 * finished. Returns the number of groups reclaimed.
 */
uint32_t rxp_lpm4_reclaim(struct rxp_lpm4 *lpm);

/* True when the route @prefix/@len itself is in the table (writer side). */
bool rxp_lpm4_has(const struct rxp_lpm4 *lpm, uint32_t prefix, uint8_t len);

/* Returns the number of routes, the default route included. */
uint32_t rxp_lpm4_count(const struct rxp_lpm4 *lpm);

/* Returns the number of groups in use (not free, not retired). */
uint32_t rxp_lpm4_groups_used(const struct rxp_lpm4 *lpm);

/*
 * Returns the bytes allocated for the table (mapped tables, groups, rule
 * store). When @resident is not NULL, stores there the bytes actually in
 * memory (pages the tables have touched, by mincore, plus the heap parts).
 */
size_t rxp_lpm4_memory(const struct rxp_lpm4 *lpm, size_t *resident);

/*
 * Looks up @n addresses (host byte order); writes each next hop, or
 * RXP_LPM_NO_ROUTE, to @nhs. Prefetches first-level entries well ahead of
 * their use so the cache misses overlap; the longer @n, the better (a whole
 * poll's worth). @addrs and @nhs may be the same array.
 */
void rxp_lpm4_lookup_bulk(const struct rxp_lpm4 *lpm, const uint32_t *addrs, uint32_t *nhs,
			  unsigned n);

/* Prefetches the first-level entry for @addr: call it a few packets ahead of the lookup. */
static inline void rxp_lpm4_prefetch(const struct rxp_lpm4 *lpm, uint32_t addr)
{
	rxp_prefetch((const void *)&lpm->tbl24[addr >> 8]);
}

/* Returns 0 with the next hop of the longest route covering @addr in *nh, or -ENOENT. */
static inline int rxp_lpm4_lookup(const struct rxp_lpm4 *lpm, uint32_t addr, uint32_t *nh)
{
	/* acquire: partner of the release store that publishes a group */
	uint32_t e = atomic_load_explicit(&lpm->tbl24[addr >> 8], memory_order_acquire);

	if (rxp_unlikely(e & RXP_LPM4_EXT))
		e = atomic_load_explicit(&lpm->groups[((size_t)(e & RXP_LPM4_VAL_MASK) << 8) |
						      (addr & 0xff)],
					 memory_order_relaxed);
	/*
	 * Branches, unlike lookup_bulk: the short path for a routed address
	 * keeps the loop small, so more lookups fit in the out-of-order window
	 * and more misses overlap (measured: masks were slower here).
	 */
	if (!(e & RXP_LPM4_VALID)) {
		e = atomic_load_explicit(&lpm->dflt, memory_order_relaxed);
		if (!(e & RXP_LPM4_VALID))
			return -ENOENT;
	}
	*nh = e & RXP_LPM4_VAL_MASK;
	return 0;
}

#endif
