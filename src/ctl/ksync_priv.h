/* SPDX-License-Identifier: MIT */
/*
 * Kernel sync's private part, shared by its four files (the design is told
 * at the top of ksync.c):
 *   ksync_table.c    the mirrored table: records, keys, hashing, the nexthop pool
 *   ksync_nl.c       rtnetlink: parsing, applying messages, dumps, the event socket
 *   ksync_nexthop.c  the kernel's nexthop objects (ip nexthop) and what routes resolve to
 *   ksync.c          reconciliation (what to emit) and the API of ksync.h
 * Same thread rules as ksync.h: every function runs in the object's thread.
 */
#ifndef RXPATH_CTL_KSYNC_PRIV_H
#define RXPATH_CTL_KSYNC_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ksync.h"

struct mnl_socket;
struct nlattr;
struct nlmsghdr;

#define NAME_MAX_LEN 32
#define RECV_BUF_BYTES (64u * 1024)

enum rec_kind { KIND_FREE, KIND_ROUTE, KIND_NEIGH };

#define F_SEEN      0x01	/* in the dump in progress */
#define F_INSTALLED 0x02	/* owns the prefix in rxpath: inst_nh / inst_mac is what rxpath has */
#define F_REFUSED   0x04	/* rxpath refused the current content; wait for a resync */
#define F_DEAD      0x08	/* gone from the kernel; freed once reconciled */
#define F_DONE      0x10	/* reconciled in this pass */
#define F_MULTI     0x20	/* the kernel listed several nexthops (IPv6 deletes them one by one) */
#define F_DUP       0x40	/* IPv4: more routes were appended under this key; the first is used */

struct rec {
	uint8_t kind;
	uint8_t family;		/* 4 or 6 */
	uint8_t plen;		/* neighbours: 32 or 128 */
	uint8_t flags;
	uint16_t port;		/* neighbours: index in the port map; routes: 0 */
	uint8_t err;		/* errno of the last refusal */
	uint8_t why;		/* routes with nh 0: enum ks_why, why there is nothing to mirror */
	uint32_t metric;	/* routes: the kernel's priority; neighbours: 0 */
	uint8_t addr[16];	/* network order, host bits cleared */
	union {
		struct {
			uint32_t nh;		/* the kernel's nexthop set; 0: none rxpath can have */
			uint32_t inst_nh;	/* what rxpath has (F_INSTALLED) */
			uint32_t kid;		/* the kernel nexthop object it names (RTA_NH_ID), or 0 */
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
 * A route that leads nowhere (blackhole, unreachable, prohibit) has one
 * path with no gateway whose port is this mark | its type: no mapped port
 * comes near it, so it pools and compares like the others.
 */
#define NH_PORT_REJECT 0xff00u
enum { REJECT_BLACKHOLE = 1, REJECT_UNREACHABLE, REJECT_PROHIBIT };

/* The most paths a set holds: rxpath's limit for one route. */
#define KS_PATHS_MAX 64
#define KS_WEIGHT_MAX 256

/*
 * One path of a route: "nexthop via GW dev PORT weight W". Compared and
 * hashed as bytes, so every byte is set (pad zero, gw zero past 4 for IPv4).
 */
struct ks_path {
	uint8_t gw[16];		/* network order; zero without a gateway */
	uint16_t port;		/* map index, or NH_PORT_REJECT | REJECT_... (alone in its set) */
	uint16_t weight;	/* 1 to KS_WEIGHT_MAX */
	uint8_t has_gw;
	uint8_t pad;
};

/* Why a route has nothing rxpath can mirror (rec.why, and what the resolvers return). */
enum ks_why {
	WHY_OK,
	WHY_UNMAPPED,		/* no live nexthop on a mapped interface */
	WHY_UNSUPPORTED,	/* nexthops rxpath has no words for (FDB, encap, another family, too many) */
	WHY_DEAD,		/* no live nexthop */
	WHY_UNKNOWN,		/* a nexthop object the kernel has not described (or a group's member) */
	WHY_FULL,		/* out of room for the nexthop set */
};

/*
 * An interned set of paths, sorted (ks_paths_sort) so that one set is one
 * id whichever order the kernel listed it in.
 */
struct nexthop {
	uint8_t family;
	uint8_t n_paths;	/* 1 to KS_PATHS_MAX; 0 while free */
	uint16_t pad;
	uint32_t refs;		/* 0 = free; then next_free links it */
	uint32_t next_free;
	uint32_t hash;		/* of family and paths: the index probes by it */
	struct ks_path one;	/* a set of one: its path */
	struct ks_path *many;	/* a set of more: the paths, owned */
};

/* The paths of @nh. */
static inline const struct ks_path *ks_nh_paths(const struct nexthop *nh)
{
	return nh->n_paths > 1 ? nh->many : &nh->one;
}

/*
 * A kernel nexthop object (RTM_NEWNEXTHOP), by the kernel's id. One that
 * routes name but the kernel has not described (yet) is a placeholder,
 * KOBJ_NONE, kept while they name it.
 */
enum kobj_kind { KOBJ_NONE, KOBJ_SINGLE, KOBJ_BLACKHOLE, KOBJ_GROUP, KOBJ_UNSUPPORTED };

#define KO_DEAD  0x01	/* RTNH_F_DEAD: its link is down */
#define KO_DIRTY 0x02	/* changed: the routes through it are resolved again (ks_kobj_refresh) */
#define KO_SEEN  0x04	/* in the dump in progress */

struct kobj_member {
	uint32_t id;
	uint32_t weight;	/* 1 to 65536 */
};

struct kobj {
	uint32_t id;		/* 0 = a free slot */
	uint8_t kind;		/* enum kobj_kind */
	uint8_t family;		/* of the gateway: 4, 6, or 0 without one */
	uint8_t has_gw;
	uint8_t flags;		/* KO_... */
	int32_t oif;		/* KOBJ_SINGLE: the kernel interface */
	uint32_t routes;	/* records that name it (rec.r.kid) */
	uint32_t n_members;	/* KOBJ_GROUP */
	uint8_t gw[16];
	struct kobj_member *members;	/* KOBJ_GROUP: owned */
};

struct map_entry {
	char ifname[NAME_MAX_LEN];
	char port[NAME_MAX_LEN];
	int ifindex;		/* 0 while the kernel has no such interface */
	bool up;
	bool running;		/* IFF_RUNNING: it has its carrier */
	bool routes_only;	/* rxp_ksync_port_map.routes_only */
};

struct rxp_ksync {
	struct mnl_socket *events;	/* subscribed, non-blocking */
	struct mnl_socket *dumps;	/* requests, blocking with a timeout */
	unsigned dump_portid;
	uint32_t seq;
	uint32_t table;
	/* the VRFs' tables: a route record's port is 1 + its index here (0: the main table) */
	unsigned n_vrfs;
	uint32_t vrf_table[RXP_KSYNC_VRFS_MAX];
	char vrf_name[RXP_KSYNC_VRFS_MAX][NAME_MAX_LEN];
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
	size_t nh_heap_bytes;		/* the sets of more than one path */

	struct kobj *kobjs;		/* open addressing by id; power-of-two count */
	uint32_t kobj_mask, n_kobjs;
	bool kobj_dirty;		/* some object has KO_DIRTY */

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

/* Sorts @n paths into the one order a set is interned in (gateway, then port, then weight). */
void ks_paths_sort(struct ks_path *paths, unsigned n);

/*
 * Returns the id of the set of @n (1 to KS_PATHS_MAX) sorted @paths with
 * one more reference, or 0 when out of memory.
 */
uint32_t ks_nh_get(struct rxp_ksync *k, uint8_t family, const struct ks_path *paths, unsigned n);

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

/* Frees the nexthop pool's sets of more than one path (when closing). */
void ks_nh_free_all(struct rxp_ksync *k);

/*
 * Gives route @r the nexthop set @nh (a reference the record takes over;
 * 0 with @why when it has none to mirror). New content clears a refusal.
 * Returns true when the content changed.
 */
bool ks_route_set_nh(struct rxp_ksync *k, struct rec *r, uint32_t nh, enum ks_why why);

/* ---- kernel nexthop objects (ksync_nexthop.c) ---- */

/* Makes the empty object table. Returns 0 or -ENOMEM. */
int ks_kobj_init(struct rxp_ksync *k);

/* Frees the object table. */
void ks_kobj_free_all(struct rxp_ksync *k);

/*
 * Applies an RTM_NEWNEXTHOP or RTM_DELNEXTHOP; @from_dump marks the object
 * seen. A deleted object takes the routes naming it along (the kernel
 * deleted them, IPv4's without a word); a changed one marks them to be
 * resolved again by ks_kobj_refresh().
 */
void ks_kobj_msg(struct rxp_ksync *k, const struct nlmsghdr *nlh, bool from_dump);

/* Before a nexthop dump: nothing seen yet. */
void ks_kobj_dump_begin(struct rxp_ksync *k);

/* After a complete nexthop dump: the objects it did not list are gone from the kernel. */
void ks_kobj_dump_end(struct rxp_ksync *k);

/*
 * Resolves object @id for a route of @family into at most KS_PATHS_MAX
 * sorted @paths (*@n of them). Returns WHY_OK, or why there is nothing to mirror.
 */
enum ks_why ks_kobj_resolve(struct rxp_ksync *k, uint32_t id, uint8_t family,
			    struct ks_path *paths, unsigned *n);

/* A record names object @id: returns 0, or -ENOMEM (no placeholder could be made). */
int ks_kobj_route_ref(struct rxp_ksync *k, uint32_t id);

/* A record no longer names object @id. */
void ks_kobj_route_put(struct rxp_ksync *k, uint32_t id);

/* Resolves again, and reconciles, the routes through changed objects (after a batch of events). */
void ks_kobj_refresh(struct rxp_ksync *k);

/* Forgets that objects changed: a full dump has just resolved every route again. */
void ks_kobj_clean(struct rxp_ksync *k);

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

/* Between dumps: reconciles the prefixes of the records marked F_DEAD, then frees those records. */
void ks_forget_marked(struct rxp_ksync *k);

/* Returns @n as an int, saturated at INT32_MAX. */
int ks_count_int(uint64_t n);

/* ---- netlink (ksync_nl.c) ---- */

/* Adds the counters of @from to @to (all but "full", which is counted where it happens). */
void ks_add_skips(struct rxp_ksync_skips *to, const struct rxp_ksync_skips *from);

/* Counts a route with nothing to mirror for @why in @skips. */
void ks_count_why(struct rxp_ksync_skips *skips, enum ks_why why);

/* Returns the port-map index of kernel interface @ifindex, or -1. */
int ks_port_of_ifindex(struct rxp_ksync *k, int ifindex);

/*
 * Collects the attributes of @nlh past its @hdr_len-byte header into @tb
 * (types up to @max; later ones of a type win). Returns false when they do
 * not parse (an attribute's length past the message's).
 */
bool ks_attrs(const struct nlmsghdr *nlh, size_t hdr_len, const struct nlattr **tb, uint16_t max);

/* Reads a u32 attribute: false when @a is missing or too short. */
bool ks_attr_u32(const struct nlattr *a, uint32_t *out);

/* Copies an address attribute of exactly @alen bytes into zeroed @out: false when it is not that. */
bool ks_attr_addr(const struct nlattr *a, unsigned alen, uint8_t out[16]);

/* Applies netlink messages as if read from the event socket (for tests: crafted input). */
void ks_nl_feed(struct rxp_ksync *k, const void *buf, size_t len);

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
 * Dumps links, nexthop objects, routes and neighbours into the table
 * (marking what it sees F_SEEN, setting dump_intr when the kernel flags
 * the dump). Returns 0, or -errno with @err; a failed dump closes the dump
 * socket and the next call opens a fresh one.
 */
int ks_dump_all(struct rxp_ksync *k, char *err, size_t errlen);

#endif
