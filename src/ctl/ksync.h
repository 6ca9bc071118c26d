/* SPDX-License-Identifier: MIT */
/*
 * Kernel sync ("sync kernel [table N]"): mirrors the unicast routes (IPv4 and
 * IPv6) of one kernel routing table and the resolved neighbours of rxpath's
 * network namespace into command-language lines, so that `ip route`, FRR or
 * BIRD can drive the datapath:
 *
 *   route add 10.9.0.0/24 via 10.0.2.2 dev p1
 *   route add 2001:db8:9::/48 dev p1
 *   route add 10.7.0.0/16 nexthop via 10.0.2.2 dev p1 weight 1 nexthop via 10.0.3.2 dev p2 weight 3
 *   route del 10.9.0.0/24
 *   neigh add 10.0.2.2 lladdr 02:00:00:00:00:22 dev p1
 *   neigh del 10.0.2.2 dev p1
 *
 * A multipath route (RTA_MULTIPATH, or a kernel nexthop group as FRR
 * makes them) is one line with its live next hops on mapped interfaces,
 * each with its weight; a route naming a kernel nexthop object (ip
 * nexthop) is resolved through it, and follows it when it changes.
 *
 * ksync knows nothing of the datapath. It hands each line to the caller's
 * apply callback, which applies it like `rxpath ctl LINE` and says whether
 * the router took it. ksync only ever deletes what it added.
 *
 * How it keeps up: a full dump (rxp_ksync_resync) computes the kernel's set
 * and emits the difference from what ksync installed before; a netlink
 * subscription (the fd of rxp_ksync_fd) updates the set as the kernel
 * announces changes; and because the kernel does not announce every deletion
 * (IPv4 routes flushed when a link goes down or an address goes away), a
 * full resync runs at an interval, soon after a mapped link goes down or
 * loses an IPv4 address, and after the event socket overran.
 *
 * Threading: one object belongs to one thread (the control thread). Every
 * function, and the apply callback, runs in that thread. The callback must
 * not call back into ksync.
 *
 * Use:
 *   rxp_ksync_open(&k, &cfg, err, sizeof(err));
 *   loop: poll({ rxp_ksync_fd(k), POLLIN }, timeout rxp_ksync_timeout_ms(k))
 *         rxp_ksync_run(k, err, sizeof(err));  on POLLIN and on timeout
 *   rxp_ksync_withdraw(k); rxp_ksync_close(k);  when sync is turned off
 * The first rxp_ksync_run does the initial full sync.
 */
#ifndef RXPATH_KSYNC_H
#define RXPATH_KSYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RXP_KSYNC_TABLE_MAIN 254u
#define RXP_KSYNC_RESYNC_MS_DEFAULT 30000u
#define RXP_KSYNC_MAX_ENTRIES_DEFAULT (2u << 20)	/* a full IPv4+IPv6 BGP table, with room */
#define RXP_KSYNC_EVENT_BUFFER_DEFAULT (8u << 20)
#define RXP_KSYNC_VRFS_MAX 15	/* rxpath's VRFs (RXP_VRF_MAX - 1) */
#define RXP_KSYNC_LINE_MAX 4096	/* a line and its NUL: the command language's longest */

/* One kernel interface that feeds an rxpath port (the port's afpacket:dev= or afxdp:dev=). */
struct rxp_ksync_port_map {
	const char *ifname;	/* kernel interface, e.g. "r1" */
	const char *port;	/* rxpath port, e.g. "p1" */
	bool routes_only;	/* the port's host path (its TAP): its routes are the port's, its
				 * neighbours rxpath's own to learn (not mirrored) */
};

/*
 * Applies one command-language line to the router. Returns 0 when applied,
 * or -errno when the router refused it (the route is then remembered as
 * refused: not emitted again on events, retried at the next full resync).
 */
typedef int (*rxp_ksync_apply_fn)(void *ctx, const char *line);

struct rxp_ksync_config {
	uint32_t table;			/* kernel routing table; 0 = main (254) */
	/* the VRFs: each mirrors its kernel table, with lines that say "vrf NAME" */
	unsigned n_vrfs;
	const struct rxp_ksync_vrf {
		uint32_t table;
		const char *name;
	} *vrfs;
	uint32_t resync_interval_ms;	/* full resync period; 0 = 30 s */
	uint32_t max_entries;		/* routes + neighbours held; 0 = 2M */
	uint32_t event_buffer_bytes;	/* event socket receive buffer; 0 = 8 MiB */
	const struct rxp_ksync_port_map *map;
	unsigned n_map;
	rxp_ksync_apply_fn apply;
	void *ctx;			/* passed to apply */
};

/* Kernel entries not mirrored, by reason. */
struct rxp_ksync_skips {
	uint64_t unmapped;	/* no live nexthop on an interface of the port map (or the neighbour's not) */
	uint64_t kernel;	/* proto kernel (connected, fe80::/64) and multicast routes */
	uint64_t unsupported;	/* other types (throw...), source or TOS routes; no live nexthop rxpath can have
				 * (IPv4 via IPv6, no interface, FDB, encap, more than 64); an unknown
				 * nexthop object */
	uint64_t full;		/* dropped because max_entries was reached */
};

struct rxp_ksync_stats {
	/* now */
	uint64_t routes;		/* kernel routes held (every metric of a prefix) */
	uint64_t routes_installed;	/* prefixes rxpath has from ksync */
	uint64_t routes_refused;	/* prefixes whose last route add rxpath refused */
	uint64_t routes_multipath;	/* routes held with more than one next hop to mirror */
	uint64_t routes_skipped;	/* routes held whose nexthop object gives nothing to mirror */
	uint64_t neighs, neighs_installed, neighs_refused;
	uint64_t nexthops;		/* distinct next hop sets (one path, or a multipath route's) */
	uint64_t nexthop_objects;	/* kernel nexthop objects held (ip nexthop) */
	size_t memory_bytes;		/* tables held */
	/* since open */
	uint64_t lines_add, lines_del;		/* emitted */
	uint64_t lines_refused;			/* adds the callback refused */
	uint64_t lines_del_failed;		/* dels the callback refused (taken as gone) */
	uint64_t events;			/* netlink messages received on the event socket */
	uint64_t resyncs, overruns, dump_retries;
	uint64_t last_resync_us;		/* how long the last full resync took */
	struct rxp_ksync_skips skipped;		/* over events and dumps */
	struct rxp_ksync_skips last_dump;	/* in the last full dump only */
};

enum rxp_ksync_state {
	RXP_KSYNC_INSTALLED,	/* rxpath has this route as the kernel has it */
	RXP_KSYNC_REFUSED,	/* rxpath refused it (error); retried at the next resync */
	RXP_KSYNC_SHADOWED,	/* a route of the same prefix with a lower metric is mirrored */
	RXP_KSYNC_PENDING,	/* not applied yet (a full resync failed midway) */
	RXP_KSYNC_SKIPPED,	/* its nexthop object gives nothing rxpath can have (see skipped) */
};

/* One next hop of a route (struct rxp_ksync_route_info). */
struct rxp_ksync_path_info {
	bool has_gw;
	uint8_t gw[16];
	const char *port;	/* rxpath port */
	const char *ifname;	/* kernel interface */
	unsigned weight;	/* 1-256 */
};

/* One route of the kernel's table as ksync sees it, for `show routes`. */
struct rxp_ksync_route_info {
	uint8_t family;		/* 4 or 6 */
	uint8_t plen;
	uint8_t prefix[16];	/* network order, host bits cleared */
	bool has_gw;		/* has_gw, gw, port, ifname: the first next hop's */
	uint8_t gw[16];
	const char *type;	/* NULL, or "blackhole", "unreachable", "prohibit" (no port then) */
	const char *port;	/* rxpath port (the strings live as long as the object); "" for a type */
	const char *ifname;	/* kernel interface; "" for a type */
	uint32_t metric;
	enum rxp_ksync_state state;
	int error;		/* -errno of the refusal, or 0 */
	unsigned n_paths;	/* next hops: 1, more for a multipath route; 0 for a type or skipped */
	const struct rxp_ksync_path_info *paths;	/* n_paths of them, valid during the call */
	uint32_t nhid;		/* the kernel nexthop object it names, or 0 */
	const char *skipped;	/* RXP_KSYNC_SKIPPED: why, in words; else NULL */
	const char *vrf;	/* the VRF whose table it is in; "" for the main table */
	uint32_t table;		/* that kernel table */
};

/* Called per route; a nonzero return stops the walk and is returned by rxp_ksync_foreach_route. */
typedef int (*rxp_ksync_route_fn)(void *ctx, const struct rxp_ksync_route_info *route);

struct rxp_ksync;

/*
 * Opens the netlink sockets (subscribed before any dump, so no change falls
 * between the two) and copies @cfg. Emits nothing: the first rxp_ksync_run
 * (or rxp_ksync_resync) does the initial sync.
 * Returns 0 with *@out set, or -errno with @err naming the step and the fix.
 */
int rxp_ksync_open(struct rxp_ksync **out, const struct rxp_ksync_config *cfg, char *err,
		   size_t errlen);

/*
 * Offers rxpath again what it refused because a configured route or
 * neighbour held the key (kept by rxpath under it): call it after a
 * configured one was deleted, so the kernel's that came back in its place is
 * known as installed. Emits an add per such record.
 */
void rxp_ksync_reoffer(struct rxp_ksync *k);

/* Closes the sockets and frees the tables; emits nothing (see rxp_ksync_withdraw). */
void rxp_ksync_close(struct rxp_ksync *k);

/* Returns the fd to poll for POLLIN (the non-blocking event socket). */
int rxp_ksync_fd(const struct rxp_ksync *k);

/* Returns the milliseconds until rxp_ksync_run has timed work (a resync), 0 when due now. */
int rxp_ksync_timeout_ms(const struct rxp_ksync *k);

/*
 * Reads pending kernel events (a bounded batch: when more remain, the fd
 * stays readable) and applies them, then runs a full resync if one is due.
 * Returns the number of lines emitted, or -errno with @err (the sockets
 * failed; the object stays usable and the next call retries).
 */
int rxp_ksync_run(struct rxp_ksync *k, char *err, size_t errlen);

/*
 * Dumps the kernel's links, routes and neighbours and emits the difference
 * from what ksync installed; refused entries are retried. Blocks for the
 * dump (about a second per million routes). Returns the number of lines
 * emitted, or -errno with @err (nothing is deleted when a dump fails).
 */
int rxp_ksync_resync(struct rxp_ksync *k, char *err, size_t errlen);

/* Emits a del for everything ksync installed and forgets it. Returns the number of lines. */
int rxp_ksync_withdraw(struct rxp_ksync *k);

/*
 * Calls @fn for each kernel route ksync holds, in no particular order.
 * Returns 0, or the first nonzero value @fn returned.
 */
int rxp_ksync_foreach_route(const struct rxp_ksync *k, rxp_ksync_route_fn fn, void *ctx);

/* Fills @st. Walks the tables (milliseconds for a million routes). */
void rxp_ksync_get_stats(const struct rxp_ksync *k, struct rxp_ksync_stats *st);

/* Returns "installed", "refused", "shadowed", "pending" or "skipped". */
const char *rxp_ksync_state_name(enum rxp_ksync_state state);

#endif
