/* SPDX-License-Identifier: MIT */
/*
 * Kernel sync's private part, shared by its three files (the design is told
 * at the top of ksync.c):
 *   ksync_table.c  the mirrored table: records, keys, hashing, the nexthop pool
 *   ksync_nl.c     rtnetlink: parsing, applying messages, dumps, the event socket
 *   ksync.c        reconciliation (what to emit) and the API of ksync.h
 * Same thread rules as ksync.h: every function runs in the object's thread.
 */
#ifndef RXPATH_CTL_KSYNC_PRIV_H
#define RXPATH_CTL_KSYNC_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ksync.h"

struct mnl_socket;

#define NAME_MAX_LEN 32
#define RECV_BUF_BYTES (64u * 1024)

enum rec_kind { KIND_FREE, KIND_ROUTE, KIND_NEIGH };

#define F_SEEN      0x01	/* in the dump in progress */
#define F_INSTALLED 0x02	/* owns the prefix in rxpath: inst_nh / inst_mac is what rxpath has */
#define F_REFUSED   0x04	/* rxpath refused the current content; wait for a resync */
#define F_DEAD      0x08	/* gone from the kernel; freed once reconciled */
#define F_DONE      0x10	/* reconciled in this pass */
#define F_MULTI     0x20	/* the kernel's route has several nexthops (rxpath gets one) */
#define F_DUP       0x40	/* IPv4: more routes were appended under this key; the first is used */

struct rec {
	uint8_t kind;
	uint8_t family;		/* 4 or 6 */
	uint8_t plen;		/* neighbours: 32 or 128 */
	uint8_t flags;
	uint16_t port;		/* neighbours: index in the port map; routes: 0 */
	uint8_t err;		/* errno of the last refusal */
	uint8_t pad;
	uint32_t metric;	/* routes: the kernel's priority; neighbours: 0 */
	uint8_t addr[16];	/* network order, host bits cleared */
	union {
		struct {
			uint32_t nh;		/* the kernel's nexthop */
			uint32_t inst_nh;	/* what rxpath has (F_INSTALLED) */
		} r;
		struct {
			uint8_t mac[6];
			uint8_t inst_mac[6];
		} n;
	};
};
_Static_assert(sizeof(struct rec) == 40, "a record stays small: a million of them are held");

/* The fields that choose a record's cluster: the metric is not one of them. */
struct key {
	uint8_t kind, family, plen;
	uint16_t port;
	uint8_t addr[16];
};

/*
 * A route that leads nowhere (blackhole, unreachable, prohibit) has a
 * nexthop with no gateway whose port is this mark | its type: no mapped
 * port comes near it, so it pools and compares like the others.
 */
#define NH_PORT_REJECT 0xff00u
enum { REJECT_BLACKHOLE = 1, REJECT_UNREACHABLE, REJECT_PROHIBIT };

struct nexthop {
	uint8_t family;
	uint8_t has_gw;
	uint16_t port;		/* map index, or NH_PORT_REJECT | REJECT_... */
	uint32_t refs;		/* 0 = free; then next_free links it */
	uint32_t next_free;
	uint8_t gw[16];
};

struct map_entry {
	char ifname[NAME_MAX_LEN];
	char port[NAME_MAX_LEN];
	int ifindex;		/* 0 while the kernel has no such interface */
	bool up;
	bool routes_only;	/* rxp_ksync_port_map.routes_only */
};

struct rxp_ksync {
	struct mnl_socket *events;	/* subscribed, non-blocking */
	struct mnl_socket *dumps;	/* requests, blocking with a timeout */
	unsigned dump_portid;
	uint32_t seq;
	uint32_t table;
	uint64_t interval_ns;
	uint32_t max_entries;
	rxp_ksync_apply_fn apply;
	void *ctx;

	unsigned n_map;
	struct map_entry *map;
	unsigned last_map_hit;

	struct rec *slots;		/* power-of-two count */
	uint32_t mask;
	uint32_t n_recs;

	struct nexthop *nhs;		/* [0] unused: id 0 means none */
	uint32_t nh_cap, nh_used, nh_live, nh_free;
	uint32_t *nh_index;		/* ids by hash; 0 = empty */
	uint32_t nh_index_mask;

	uint64_t next_resync_ns;
	uint64_t last_resync_end_ns;
	bool dump_intr;			/* the kernel flagged the dump in progress */
	struct rxp_ksync_skips dump_skips;
	struct rxp_ksync_stats st;	/* the "since open" part */
	char buf[RECV_BUF_BYTES];
};

/* ---- the table (ksync_table.c) ---- */

/* Returns the hash that chooses @key's cluster (the metric is not in it). */
uint32_t ks_key_hash(const struct key *key);

/* Returns true when @r belongs to @key's group (same key, any metric). */
bool ks_rec_in_group(const struct rec *r, const struct key *key);

/* Returns the key of @r. */
struct key ks_key_of(const struct rec *r);

/* Returns the id of the nexthop with one more reference, or 0 when out of memory. */
uint32_t ks_nh_get(struct rxp_ksync *k, uint8_t family, bool has_gw, uint16_t port,
		   const uint8_t *gw);

/* Adds a reference to nexthop @id. */
void ks_nh_ref(struct rxp_ksync *k, uint32_t id);

/* Drops a reference; the last one frees the id and takes it out of the index. */
void ks_nh_put(struct rxp_ksync *k, uint32_t id);

/* Returns the record of @key/@metric, or NULL. */
struct rec *ks_rec_find(struct rxp_ksync *k, const struct key *key, uint32_t metric);

/* Returns a new zeroed record for @key/@metric, or NULL (table full or out of memory). */
struct rec *ks_rec_insert(struct rxp_ksync *k, const struct key *key, uint32_t metric);

/* Frees a record and its nexthop references; later records of its cluster may move into its slot. */
void ks_rec_free(struct rxp_ksync *k, struct rec *r);

/* ---- reconciliation (ksync.c) ---- */

/*
 * Makes rxpath match the kernel for @r's prefix (route) or key (neighbour),
 * emitting what it takes; @retry also re-emits what rxpath refused before.
 * Marks the records it looked at F_DONE. Never inserts or frees records.
 */
void ks_reconcile(struct rxp_ksync *k, struct rec *r, bool retry);

/* Clears F_DONE after an incremental reconcile (only this cluster was touched). */
void ks_clear_done(struct rxp_ksync *k, const struct key *key);

/* An event says @key/@metric is gone (or no longer mirrorable): reconciles and frees its record. */
void ks_rec_forget(struct rxp_ksync *k, const struct key *key, uint32_t metric);

/* Returns @n as an int, saturated at INT32_MAX. */
int ks_count_int(uint64_t n);

/* ---- netlink (ksync_nl.c) ---- */

/* Adds the counters of @from to @to (all but "full", which is counted where it happens). */
void ks_add_skips(struct rxp_ksync_skips *to, const struct rxp_ksync_skips *from);

/*
 * Opens the event socket (subscribed first, so no change falls between it
 * and a dump) with a receive buffer of @event_buffer_bytes, then the dump
 * socket, and dumps the links. Returns 0, or -errno with @err; the caller
 * closes what was opened (ks_nl_close).
 */
int ks_nl_open(struct rxp_ksync *k, uint32_t event_buffer_bytes, char *err, size_t errlen);

/* Closes the sockets that are open. */
void ks_nl_close(struct rxp_ksync *k);

/* Returns the event socket's fd. */
int ks_events_fd(const struct rxp_ksync *k);

/*
 * Reads and applies a bounded batch of pending events; an overrun sets a
 * resync due now. Returns 0, or -errno with @err when the socket failed.
 */
int ks_events_read(struct rxp_ksync *k, char *err, size_t errlen);

/* Discards the events queued before a full dump: the dump supersedes them. */
void ks_events_discard(struct rxp_ksync *k);

/*
 * Dumps links, routes and neighbours into the table (marking what it sees
 * F_SEEN, setting dump_intr when the kernel flags the dump). Returns 0, or
 * -errno with @err; a failed dump closes the dump socket and the next call
 * opens a fresh one.
 */
int ks_dump_all(struct rxp_ksync *k, char *err, size_t errlen);

#endif
