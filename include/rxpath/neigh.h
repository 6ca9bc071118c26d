/* SPDX-License-Identifier: MIT */
/*
 * The neighbour table: IP address on an interface -> MAC address, for ARP
 * (RFC 826) and Neighbor Discovery (RFC 4861). Bounded: a fixed number of
 * entries, each holding at most RXP_NEIGH_HOLD packets while it resolves
 * (and all of them together a share of the buffer pool; see resolve.c).
 * Owned by one worker; no locks.
 */
#ifndef RXPATH_NEIGH_H
#define RXPATH_NEIGH_H

#include "rxpath/common.h"
#include "rxpath/pkt.h"

#define RXP_NEIGH_HOLD 4		/* packets held per unresolved neighbour */
#define RXP_NEIGH_PROBES 3		/* requests sent before giving up */
#define RXP_NEIGH_RETRY_NS 1000000000ull	/* between requests */
#define RXP_NEIGH_FAILED_NS 3000000000ull	/* a failed entry answers "unreachable" this long */
#define RXP_NEIGH_REACHABLE_NS 30000000000ull	/* default: a learned entry ages out after this (RFC 4861 REACHABLE_TIME) */
#define RXP_NEIGH_UNRESOLVED_SHIFT 2	/* unresolved entries: at most max_entries >> this */

enum rxp_neigh_state {
	RXP_NEIGH_FREE,
	RXP_NEIGH_INCOMPLETE,	/* request sent, packets held */
	RXP_NEIGH_REACHABLE,	/* learned; ages out */
	RXP_NEIGH_STATIC,	/* configured; never ages */
	RXP_NEIGH_FAILED,	/* no answer; held packets were dropped */
};

struct rxp_neigh {
	uint8_t state;
	uint8_t family;		/* 4 or 6 */
	uint16_t ifidx;
	uint8_t addr[16];	/* network order; IPv4 in the first 4 bytes */
	uint8_t mac[6];
	uint8_t probes;		/* requests sent */
	bool used;		/* traffic went through it since it was last confirmed */
	bool from_kernel;	/* static, mirrored from the kernel's table (sync kernel) */
	uint8_t n_held;
	uint64_t deadline_ns;	/* next request, failure expiry or ageing */
	struct rxp_pkt *held[RXP_NEIGH_HOLD];
};

struct rxp_neigh_table {
	uint32_t gen;		/* bumped whenever an entry is removed or moves: cached pointers die */
	uint32_t size, mask;	/* slots, a power of two */
	uint32_t max_entries;	/* at most this many in use (keeps probes short) */
	uint32_t n_entries;
	/*
	 * Entries resolving or failed, as the last timer walk counted them plus
	 * those made since: at most a quarter of the table, so that traffic to
	 * addresses nobody answers for (a scan) leaves room to learn the
	 * neighbours that do answer (RFC 6583 6, 7).
	 */
	uint32_t n_unresolved;
	uint32_t n_held;	/* packets held by all entries together */
	uint32_t evict_next;	/* where the next search for an entry to evict starts */
	struct rxp_neigh *slots;
};

/* Returns the table's generation; workers read it without the lock. */
static inline uint32_t rxp_neigh_gen(const struct rxp_neigh_table *t)
{
	return __atomic_load_n(&t->gen, __ATOMIC_RELAXED);
}

/* Invalidates every cached adjacency (the writer holds the table's lock, if any). */
static inline void rxp_neigh_gen_bump(struct rxp_neigh_table *t)
{
	__atomic_store_n(&t->gen, t->gen + 1, __ATOMIC_RELEASE);
}

/* Returns 0 with a table of @max_entries, or -ENOMEM. */
int rxp_neigh_init(struct rxp_neigh_table *t, uint32_t max_entries);

/* Frees the table; held packets must have been released first (rxp_neigh_flush). */
void rxp_neigh_free(struct rxp_neigh_table *t);

/* Returns the entry for @addr (family 4 or 6) on @ifidx, or NULL. */
struct rxp_neigh *rxp_neigh_lookup(struct rxp_neigh_table *t, uint16_t ifidx, uint8_t family,
				   const uint8_t *addr);

/* Returns a new entry in state @state (FREE slots only), or NULL when the table is full. */
struct rxp_neigh *rxp_neigh_create(struct rxp_neigh_table *t, uint16_t ifidx, uint8_t family,
				   const uint8_t *addr, enum rxp_neigh_state state);

/* Removes @n (its held packets must be gone). */
void rxp_neigh_remove(struct rxp_neigh_table *t, struct rxp_neigh *n);

/* Calls @fn for every entry in use; @fn may remove the entry it is given. */
void rxp_neigh_walk(struct rxp_neigh_table *t, void (*fn)(void *ctx, struct rxp_neigh *n),
		    void *ctx);

#endif
