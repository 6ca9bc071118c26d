/* SPDX-License-Identifier: MIT */
/*
 * NAT44 mappings (RFC 4787, RFC 5382): an internal endpoint (pool, protocol,
 * address, port) maps to one external endpoint for every destination
 * (endpoint-independent mapping), and an external (protocol, address, port)
 * belongs to at most one internal endpoint, whatever the pool (no port
 * overloading). All mappings of one internal address in a pool use the same
 * external address (paired pooling): a seeded hash of the internal address
 * picks it, and when it has no free port the mapping fails rather than use
 * another. The internal port is kept when it lies in the range in use and
 * is free; else the range is searched from a seeded position, with wrap.
 * Ranges: the pool's, or with default_ports 1..1023 for internal ports below
 * 1024 and 1024..65535 for the others; ICMP's identifiers always 1..65535
 * (an identifier 0 is only ever kept).
 *
 * Layout: a fixed array of @max mapping records with a free stack, and two
 * open-addressing indexes of record numbers (a power of two >= 2 * max
 * slots, linear probing, backward-shift deletion), one by the internal
 * endpoint and one by the external; both hash under a random seed, so that
 * an attacker cannot aim at a run of slots. Nothing is allocated after
 * creation.
 *
 * Lifetime: a mapping is reference counted; the caller's connection entries
 * hold the references (get or hold takes one, put drops one, the last frees).
 *
 * Threads: with @locked every call takes a spinlock (the table is touched
 * when a connection starts or ends, never per packet). Without it, one
 * thread at a time.
 */
#ifndef RXPATH_FIB_NAT_MAP_H
#define RXPATH_FIB_NAT_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RXP_NAT_MAP_NONE UINT32_MAX
#define RXP_NAT_MAP_MAX (1u << 24)

struct rxp_nat_pool {
	uint32_t addr_lo, addr_hi;	/* external addresses, host order, inclusive */
	uint16_t port_lo, port_hi;	/* inclusive; ignored when default_ports */
	bool default_ports;
	uint32_t id;			/* the rule's: mappings of other pools are other mappings */
};

struct rxp_nat_mapping {	/* what a lookup returns; read it while no one puts it */
	uint32_t in_addr, out_addr;	/* host order */
	uint16_t in_port, out_port;	/* host order */
	uint8_t proto;
	uint32_t pool_id;
	uint32_t refs;
};

struct rxp_nat_map;

/*
 * Called for a candidate external endpoint; returns true when the caller has it in use otherwise (a port
 * forward's outside port). May be NULL. Called under the table's lock: it must not call the table.
 */
typedef bool (*rxp_nat_excluded_fn)(void *ctx, uint8_t proto, uint32_t out_addr, uint16_t out_port);

/* Returns a table of @max mappings (@locked: several threads call it), or NULL with errno EINVAL/ENOMEM. */
struct rxp_nat_map *rxp_nat_map_create(uint32_t max, bool locked);
void rxp_nat_map_destroy(struct rxp_nat_map *m);

/*
 * Returns the mapping index of the internal endpoint in @pool with a reference taken, making the mapping
 * when there is none, or RXP_NAT_MAP_NONE with *err = -ENOSPC (the table is full), -EADDRNOTAVAIL (no free
 * port on the paired address) or -EINVAL (an empty pool or port range).
 */
uint32_t rxp_nat_map_get(struct rxp_nat_map *m, const struct rxp_nat_pool *pool, uint8_t proto,
			 uint32_t in_addr, uint16_t in_port, rxp_nat_excluded_fn excluded, void *ctx,
			 int *err);
/* Takes one more reference on a mapping the caller already holds one on. */
void rxp_nat_map_hold(struct rxp_nat_map *m, uint32_t idx);
/* Drops a reference; the last one frees the mapping. */
void rxp_nat_map_put(struct rxp_nat_map *m, uint32_t idx);

/* Returns the mapping whose external endpoint is (proto, out_addr, out_port), or RXP_NAT_MAP_NONE. */
uint32_t rxp_nat_map_find_out(struct rxp_nat_map *m, uint8_t proto, uint32_t out_addr, uint16_t out_port);
/* Returns the mapping of an internal endpoint in a pool, or RXP_NAT_MAP_NONE (no reference taken). */
uint32_t rxp_nat_map_find_in(struct rxp_nat_map *m, uint32_t pool_id, uint8_t proto, uint32_t in_addr,
			     uint16_t in_port);
/* Copies mapping @idx to @out; returns false when it is not in use. */
bool rxp_nat_map_read(struct rxp_nat_map *m, uint32_t idx, struct rxp_nat_mapping *out);
/* Calls @fn for each mapping in use (under the lock when locked); stops at nonzero and returns it. */
int rxp_nat_map_walk(struct rxp_nat_map *m, int (*fn)(const struct rxp_nat_mapping *mp, void *ctx),
		     void *ctx);

/* Returns the mappings in use. */
uint32_t rxp_nat_map_count(const struct rxp_nat_map *m);
/* Returns the mappings the table was sized for. */
uint32_t rxp_nat_map_max(const struct rxp_nat_map *m);
/* Returns the bytes the table allocated. */
size_t rxp_nat_map_memory(const struct rxp_nat_map *m);
/* Forgets every mapping: the indexes the callers hold become invalid (drop them without a put). */
void rxp_nat_map_flush(struct rxp_nat_map *m);

/*
 * Address-dependent filtering (RFC 4787 5): a connection through mapping
 * @idx to @remote (host order) counts +1 when made, -1 when it ends; the
 * mapping then takes what comes from an address it has a connection to.
 */
void rxp_nat_map_permit(struct rxp_nat_map *m, uint32_t idx, uint32_t remote, int delta);
bool rxp_nat_map_permits(struct rxp_nat_map *m, uint32_t idx, uint32_t remote);

#endif
