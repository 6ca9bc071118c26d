/* SPDX-License-Identifier: MIT */
/* One worker's datapath: a buffer pool, its cache, the ports, the router and the stack. */
#ifndef RXPATH_ENGINE_DATAPLANE_H
#define RXPATH_ENGINE_DATAPLANE_H

#include <stdio.h>
#include "net/host.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include "rxpath/port.h"
#include "rxpath/router.h"
#include "rxpath/stack.h"
#include "fib/acl.h"

#define DP_PORTS_MAX 16
#define DP_VLANS_MAX 48
#define DP_BUFS_PER_PORT 4096u	/* RX ring + TX ring + room in flight, at default ring sizes */
#define DP_WHERE_LEN 96
#define DP_WORKERS_MAX 64

struct dp_filter;

struct dp_port_config {
	char name[RXP_PORT_NAME_MAX];
	char spec[256];
	char where[DP_WHERE_LEN];	/* the config line, for messages; may be empty */
};

struct dp_vlan_config {
	char name[RXP_PORT_NAME_MAX];
	char parent[RXP_PORT_NAME_MAX];
	uint16_t id;
	char where[DP_WHERE_LEN];
};

enum dp_cmd_kind {
	DP_CMD_ADDR_ADD,
	DP_CMD_ADDR_DEL,
	DP_CMD_ROUTE_ADD,
	DP_CMD_ROUTE_DEL,
	DP_CMD_NEIGH_ADD,
	DP_CMD_NEIGH_DEL,
	DP_CMD_MTU,
	DP_CMD_ICMP_RATE,
	DP_CMD_HOST,		/* port set NAME host on|off [gro on|off] [name TAP] */
	DP_CMD_REDIRECTS,	/* port set NAME redirects on|off */
	DP_CMD_NEIGH_AGEING,	/* neigh ageing SECONDS */
	DP_CMD_RA,		/* port set NAME ra on|off */
	DP_CMD_SOURCE_ROUTE,	/* ip source-route on|off */
	DP_CMD_FILTER_ADD,	/* filter add|insert CHAIN ... VERDICT */
	DP_CMD_FILTER_DEL,	/* filter del CHAIN N */
	DP_CMD_FILTER_FLUSH,	/* filter flush [CHAIN] */
	DP_CMD_FILTER_RESTORE,	/* a flush's inverse: the rules it took, back */
	DP_CMD_FILTER_POLICY,	/* filter policy CHAIN accept|drop */
	DP_CMD_SET_ADD,		/* filter set add NAME PREFIX (one per prefix) */
	DP_CMD_SET_DEL,		/* filter set del NAME PREFIX */
	DP_CMD_CT_TIMEOUT,	/* conntrack timeout NAME SECONDS */
	DP_CMD_CT_LIBERAL,	/* conntrack tcp liberal on|off */
	DP_CMD_CT_LOOSE,	/* conntrack tcp loose on|off */
	DP_CMD_NAT_ADD,		/* nat add masquerade|snat|dnat|static ... */
	DP_CMD_NAT_DEL,		/* nat del N */
	DP_CMD_NAT_FLUSH,	/* nat flush */
	DP_CMD_NAT_RESTORE,	/* a flush's inverse: the rules it took, back */
	DP_CMD_NAT_FILTERING,	/* nat filtering endpoint-independent|address-dependent|address-and-port-dependent */
	DP_CMD_NAT_TIMEOUT,	/* nat timeout udp|tcp-established|tcp-transitory|icmp SECONDS */
	DP_CMD_VRF_ADD,		/* vrf add NAME table N */
	DP_CMD_VRF_DEL,		/* vrf del NAME */
	DP_CMD_PORT_VRF,	/* port set NAME vrf VRF|default */
	DP_CMD_KINDS
};

/* The chains of the filter, as nftables' hooks of the same names. */
enum dp_chain {
	DP_CHAIN_INPUT,		/* to the router itself */
	DP_CHAIN_FORWARD,	/* what it routes */
	DP_CHAIN_OUTPUT,	/* what it originates */
	DP_CHAINS,
	DP_CHAIN_ALL = DP_CHAINS	/* filter flush without a chain */
};

enum dp_verdict { DP_VERDICT_ACCEPT, DP_VERDICT_DROP, DP_VERDICT_REJECT };

#define DP_SET_NAME_MAX 32
#define DP_RULE_TEXT_MAX 240
#define DP_SET_PREFIXES_PER_CMD 22

/* One prefix of a set, network order, the bits past its length 0. */
struct dp_set_prefix {
	uint8_t family, plen;
	uint8_t addr[16];
};

/* What a filter, set or conntrack command says, beyond dp_cmd's common fields. */
struct dp_filter_cmd {
	uint8_t chain;			/* enum dp_chain */
	uint8_t verdict;		/* enum dp_verdict; FILTER_POLICY: accept or drop */
	uint32_t index;			/* FILTER_DEL: rule number from 1; FILTER_ADD: insert before it (0: append) */
	uint32_t snapshot;		/* FILTER_RESTORE: which flush's rules */
	uint64_t rule_id;		/* FILTER_ADD taking back a del: the rule's own, so its counters come back */
	char set[DP_SET_NAME_MAX];	/* SET_ADD, SET_DEL */
	int timeout;			/* CT_TIMEOUT: enum rxp_ct_timeout */
	bool on;			/* CT_LIBERAL, CT_LOOSE */
	union {
		struct {	/* FILTER_ADD */
			struct rxp_acl_rule rule;	/* the match; set ids and interfaces resolved when applied */
			char src_set[DP_SET_NAME_MAX], dst_set[DP_SET_NAME_MAX];	/* empty: none */
			char in_if[RXP_PORT_NAME_MAX], out_if[RXP_PORT_NAME_MAX];	/* empty: any */
			char text[DP_RULE_TEXT_MAX];	/* the rule as `show filter` prints it */
		};
		struct {	/* SET_ADD, SET_DEL: a line's prefixes, a few per command (a million-prefix set stays small) */
			uint8_t n_prefixes;	/* SET_ADD with none: the set is made, empty */
			struct dp_set_prefix prefixes[DP_SET_PREFIXES_PER_CMD];
		};
	};
};

/* A NAT rule as given (src/net/nat.h resolves it when the block is built); addresses in host order. */
struct dp_nat_cmd {
	uint8_t kind;			/* enum rxp_nat_kind; FILTERING: enum rxp_nat_filtering */
	char port[RXP_PORT_NAME_MAX];	/* masquerade, snat: out; dnat: in */
	uint32_t src, src_mask;		/* masquerade, snat: [src PREFIX] (mask 0: any); static: the inside address */
	uint32_t dst;			/* dnat: [dst ADDR] (0: the in port's address); static: the outside address */
	uint32_t to_lo, to_hi;		/* snat: to ADDR[-ADDR]; dnat: to ADDR (to_lo) */
	uint16_t port_lo, port_hi;	/* snat: [ports N-M] (0: the defaults); dnat: to ...:PORT (port_lo) */
	uint8_t proto;			/* dnat */
	uint16_t dport_lo, dport_hi;	/* dnat */
	uint32_t index;			/* DEL: rule number from 1; ADD: insert before it (0: append) */
	uint32_t snapshot;		/* RESTORE */
	uint64_t rule_id;		/* ADD taking back a del: the rule's own, its counter with it */
	int timeout;			/* TIMEOUT: enum rxp_ct_nat_timeout */
	char text[DP_RULE_TEXT_MAX];	/* the rule as `show nat` prints it */
};

/* One router command, parsed; applied when the datapath opens, or while it runs. */
/*
 * A multipath route's next hops (route add P nexthop via GW [dev PORT]
 * [weight W] ...), kept small: the ports they name once each.
 */
#define DP_PATH_DEVS 8
#define DP_PATH_VRFS 4
struct dp_route_paths {
	uint8_t n;			/* 0: the route has the one next hop of has_gw/gw/dev */
	uint8_t n_devs, n_vrfs;
	char devs[DP_PATH_DEVS][RXP_PORT_NAME_MAX];
	char vrfs[DP_PATH_VRFS][RXP_PORT_NAME_MAX];
	struct dp_path {
		uint8_t gw[16];
		bool has_gw;
		uint8_t dev;		/* 0: none given; else devs[dev - 1] */
		uint8_t vrf;		/* 0: the route's; else vrfs[vrf - 1], where the gateway is */
		uint16_t weight;	/* 1-256 */
	} path[RXP_NH_PATHS_MAX];
};

struct dp_cmd {
	enum dp_cmd_kind kind;
	char where[DP_WHERE_LEN];	/* "-e 2", "file:7", "ctl": for messages */
	char dev[RXP_PORT_NAME_MAX];	/* empty: none given */
	char vrf[RXP_PORT_NAME_MAX];	/* routes: their table (empty: the default); VRF kinds: the VRF */
	char nh_vrf[RXP_PORT_NAME_MAX];	/* routes: the table the gateway is in, when another (leaking) */
	uint32_t table;			/* vrf add: its kernel table */
	uint8_t family;
	uint8_t plen;
	bool has_gw;
	uint8_t addr[16];
	uint8_t gw[16];
	uint8_t mac[6];
	uint32_t mtu;
	double rate, burst;
	bool kernel;			/* from kernel sync: never overrides or removes a static route */
	bool undo;			/* a reload taking back what the file no longer says */
	bool host_on, host_gro;
	bool redirects;
	bool ra_on;
	bool source_route;
	uint8_t route_type;		/* 0, or a rejecting next hop kind (blackhole, ...) */
	uint32_t seconds;		/* neigh ageing */
	char host_name[RXP_TAP_NAME_MAX];	/* empty: the default name */
	union {
		struct {
			struct dp_filter_cmd filter;	/* the FILTER_, SET_ and CT_ kinds */
			struct dp_nat_cmd nat;		/* the NAT_ kinds */
		};
		struct dp_route_paths paths;	/* ROUTE_ADD */
	};
};

/*
 * Where the engine tells what happened while it runs (a port went down, a
 * command's warning): one line, without a trailing newline. The engine
 * prints nothing itself; NULL: such lines are not told.
 */
typedef void (*dp_log_fn)(const char *line);

struct dp_config {
	dp_log_fn log;
	unsigned n_workers;		/* polling threads; 0 or 1: one, the caller's */
	bool idle_spin;			/* --idle spin: workers poll on when idle, never sleep */
	struct rxp_pool_config pool;	/* n_bufs 0: DP_BUFS_PER_PORT per port + a cache */
	struct rxp_rx_tuning tuning;
	unsigned n_ports;
	struct dp_port_config ports[DP_PORTS_MAX];
	unsigned n_vlans;
	struct dp_vlan_config vlans[DP_VLANS_MAX];
	unsigned n_cmds, cmds_cap;
	struct dp_cmd *cmds;		/* owned; dp_config_free() */
	struct {
		bool on;		/* `sync kernel`: mirror the kernel's routes and neighbours */
		uint32_t table;		/* kernel routing table (254 = main) */
		uint32_t interval_ms;	/* full resync period */
		char where[DP_WHERE_LEN];
	} sync;
	uint32_t ct_max;		/* `conntrack max N`: entries, sized at start; 0: the default */
};

/*
 * A worker after the first: its own buffer cache and stack (counters, TX
 * vectors, adjacency cache), so that no two cores write the same line.
 */
/* ---- sleeping while idle (idle.c) ---- */

#define DP_IDLE_AFTER_NS 1000000ull	/* no frame for this long: a worker may sleep */
#define DP_IDLE_SLEEP_MS 10		/* at most, so that timers and the control socket wait little */

/* One worker's idle state. */
struct dp_idle {
	unsigned frames;	/* frames polled since the last clock read (only 0 or not matters) */
	uint64_t busy_ns;	/* the last clock read that followed frames */
	int wake_fd;		/* an eventfd in its poll set: the barrier and control calls wake it */
};

/* Prepares @idle. Returns 0 or -errno (without an eventfd the worker never sleeps). */
int dp_idle_init(struct dp_idle *idle);
void dp_idle_close(struct dp_idle *idle);
/* Wakes the worker of @idle if it sleeps, or keeps its next sleep from starting (any thread). */
void dp_idle_wake(struct dp_idle *idle);

struct dp_worker {
	struct dp_idle idle;
	struct rxp_pool_cache cache;
	struct rxp_stack stack;
	pthread_t thread;
	int cpu;			/* pinned to; -1: not pinned */
	struct dp *dp;
	unsigned id;
	rxp_cache_aligned atomic_uint parked_round;	/* the barrier round it waits in */
};

struct dp {
	struct rxp_pool *pool;
	struct rxp_pool_cache cache;	/* worker 0's */
	/*
	 * Worker w polls queue w (and w + n_workers, ...) of every port and
	 * transmits on queue w. Worker 0 is the caller's thread (its
	 * dp_loop_run()); the others are threads (workers.c). Control changes run on worker 0 while the
	 * others wait between two polls (a barrier).
	 */
	unsigned n_workers;
	struct dp_worker *workers;	/* workers 1..n_workers-1 */
	bool idle_spin;			/* from the config: never sleep */
	dp_log_fn log;			/* from the config */
	uint64_t caps_dropped;		/* bit N: the program gave up capability N after set-up (for messages) */
	/* per interface: the MTU configured, or 0 to follow the device's (a VLAN sub-port's held to its port's) */
	uint32_t mtu_cfg[RXP_IFS_MAX];
	/*
	 * The kernel's routes (sync kernel) a configured route for the same
	 * prefix has replaced: each comes back when that one goes.
	 */
	struct dp_cmd *shadowed;
	unsigned n_shadowed, shadowed_cap;
	struct dp_idle idle;		/* worker 0's */
	/* a line of its own: every worker reads it each round, worker 0 writes it rarely */
	rxp_cache_aligned atomic_bool barrier;	/* worker 0 asks the others to wait */
	atomic_uint barrier_round;	/* which request: each worker waiting says it saw this one */
	atomic_bool stopping;
	unsigned n_workers_running;	/* threads started (dp_workers_start); 0: none */
	bool caller_pinned;		/* worker 0's thread was pinned: caller_cpus restores it */
	cpu_set_t caller_cpus;
	rxp_cache_aligned unsigned n_ports;
	struct rxp_port ports[DP_PORTS_MAX];
	struct rxp_router *router;	/* NULL: no addresses or routes, a receive sink */
	struct dp_filter *filter;	/* rules, sets, tracking (dp_filter.h); made at open */
	bool drained;
	unsigned finish_checks;		/* dp_finished() calls since worker 0's inputs ended */
	uint64_t next_port_check_ns;	/* dp_ports_check() */
	struct rxp_stack stack;		/* worker 0's */
	/* the stack's clock from a port's frames (pcap clock=packets), or -1: the monotonic clock */
	int clock_port;
	bool clock_started, clock_ended;
	uint64_t clock_at;		/* the stack's time at the first frame, then at the last */
	uint64_t clock_pkt0;		/* the first frame's capture time */
	uint64_t clock_wall_end;	/* the monotonic time when the last frame was taken */
	uint64_t clock_last;
};

/* Returns worker @w's stack. */
static inline struct rxp_stack *dp_stack(struct dp *dp, unsigned w)
{
	return w ? &dp->workers[w - 1].stack : &dp->stack;
}

/* The same, to read. */
static inline const struct rxp_stack *dp_cstack(const struct dp *dp, unsigned w)
{
	return w ? &dp->workers[w - 1].stack : &dp->stack;
}

/* Tells @fmt's line through the config's log function (nothing without one). */
void dp_log(const struct dp *dp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Returns the name of the port whose id is @id, or "?". */
static inline const char *dp_port_name(const struct dp *dp, uint16_t id)
{
	return id < dp->n_ports ? dp->ports[id].name : "?";
}

/* Returns worker @w's buffer cache. */
static inline struct rxp_pool_cache *dp_cache(struct dp *dp, unsigned w)
{
	return w ? &dp->workers[w - 1].cache : &dp->cache;
}

/* Sums the stack counters of every worker into @out. */
void dp_stack_stats(struct dp *dp, struct rxp_stack_stats *out);

/* Returns the packets of port @port dropped under @reason, over every worker. */
uint64_t dp_port_drops(struct dp *dp, uint16_t port, unsigned reason);

/* Sums the buffer caches' counters into @out; returns the buffers the caches hold. */
uint32_t dp_pool_stats(struct dp *dp, struct rxp_pool_stats *out);

/* Every worker's counters added up, for reports. */
struct dp_totals {
	struct rxp_stack_stats stack;
	struct rxp_pool_stats pool;
	uint32_t in_caches;		/* buffers the workers' caches hold */
};

/* Fills @t with the sums of every worker's stack and cache counters. */
void dp_totals(struct dp *dp, struct dp_totals *t);

/* Returns defaults: precise 1518-byte buffers at rx offset 2, every technique on. */
void dp_config_default(struct dp_config *cfg);
void dp_config_free(struct dp_config *cfg);

/* Adds a port. Returns 0 or -EINVAL with @err. */
int dp_config_add_port(struct dp_config *cfg, const char *name, const char *spec, char *err,
		       size_t errlen);

/* Returns true when a port or VLAN sub-port called @name is configured. */
bool dp_config_has_name(const struct dp_config *cfg, const char *name);

/* Adds a router command. Returns 0 or -ENOMEM. */
int dp_config_add_cmd(struct dp_config *cfg, const struct dp_cmd *cmd);

/*
 * Writes to @inv the command that puts back what @c is about to change, as
 * it is now (on the datapath, before @c is applied). Returns false when
 * there is nothing to put back (@c changes nothing, or what it removes
 * would come back by itself, as a learned neighbour).
 */
bool dp_cmd_inverse(struct dp *dp, const struct dp_cmd *c, struct dp_cmd *inv);

/* Writes what @c is about (reload's diff): commands about one thing share a key. */
void dp_cmd_key(const struct dp_cmd *c, char *key, size_t len);

/* Returns what a router table's -errno means, for a command's message. */
const char *dp_cmd_strerror(int ret);

/*
 * Applies one router command to the running tables (datapath thread, between
 * polls). Returns 0 or -errno with @err naming the command's source; on
 * success @err is empty, or holds a warning ("warning: ...") already logged.
 */
int dp_apply_cmd(struct dp *dp, const struct dp_cmd *cmd, char *err, size_t errlen);

/*
 * Turns a receive sink into a router with no addresses or routes yet, for a
 * first change made while running. Returns 0 or -errno with @err.
 */
int dp_router_enable(struct dp *dp, char *err, size_t errlen);

/* Back to a receive sink: the router dp_router_enable() made, with nothing in it yet, goes. */
void dp_router_disable(struct dp *dp);

/* Builds and starts everything. Returns 0 or -errno with @err; on error nothing is left open. */
int dp_open(struct dp *dp, const struct dp_config *cfg, char *err, size_t errlen);

/* Polls worker @w's queues of every port once. Returns the packets received. */
static inline unsigned dp_poll_worker(struct dp *dp, unsigned w)
{
	struct rxp_stack *st = dp_stack(dp, w);
	unsigned n = 0;

	for (unsigned p = 0; p < dp->n_ports; p++)
		for (uint16_t q = (uint16_t)w; q < dp->ports[p].n_queues; q += (uint16_t)dp->n_workers)
			n += rxp_napi_poll(&dp->ports[p].queues[q], st);
	return n;
}

/* Worker 0's poll (every queue of every port when there is one worker). */
static inline unsigned dp_poll(struct dp *dp)
{
	return dp_poll_worker(dp, 0);
}

/*
 * Called by worker @w's loop at each clock read (@now_ns), with @idle->frames
 * or-ed with what its polls and host paths took since the last one: when
 * none came for DP_IDLE_AFTER_NS, waits for its queues' file descriptors,
 * DP_IDLE_SLEEP_MS at most (idle.c).
 */
void dp_idle_after_clock(struct dp *dp, unsigned w, struct dp_idle *idle, uint64_t now_ns);

/* Returns the most an interface's MTU can be (@vlan: a sub-port's tag takes room): what a pool frame carries. */
uint32_t dp_if_max_mtu(const struct dp *dp, uint16_t vlan);

/*
 * An interface's MTU unless configured: its device's, or 1500 for a port
 * without one, within what a frame of the pool carries.
 */
uint32_t dp_if_default_mtu(const struct dp *dp, uint16_t port, uint16_t vlan);

/*
 * Router interface @ifidx's MTU: the configured one, else the default; for a
 * VLAN sub-port within its port interface's, as a Linux VLAN device's.
 */
uint32_t dp_if_mtu(const struct dp *dp, int ifidx);

/* ---- ports whose device goes away or comes back (dp_ports.c) ---- */

#define DP_PORT_CHECK_NS 100000000ull	/* devices are looked at 10 times a second */

/*
 * Asks every port's driver whether its device went away or came back, says
 * so through dp_log() in one line, and drops what the stack held for a port that
 * went down. Call it from dp_tick().
 */
void dp_ports_check(struct dp *dp, uint64_t now_ns);

/*
 * The stack's time at monotonic time @wall: @wall itself, or with a port
 * that drives the clock, the capture time of its next frame (counted from
 * the first frame's, which is @wall then), never going back; after its last
 * frame the clock goes on with @wall.
 */
uint64_t dp_packet_time(struct dp *dp, uint64_t wall);

static inline uint64_t dp_stack_time(struct dp *dp, uint64_t wall)
{
	return rxp_likely(dp->clock_port < 0) ? wall : dp_packet_time(dp, wall);
}

/*
 * Runs the stack's timers, reads what the host paths' kernels sent on
 * their own and looks at the ports' devices; call between polls with the
 * monotonic time. Returns the frames read from the host paths.
 */
static inline unsigned dp_tick(struct dp *dp, uint64_t now_ns)
{
	unsigned from_host = 0;

	rxp_stack_tick(&dp->stack, dp_stack_time(dp, now_ns));
	if (dp->stack.host_ports)
		from_host = rxp_host_poll_all(&dp->stack, RXP_BUDGET_DEFAULT);
	if (rxp_unlikely(now_ns >= dp->next_port_check_ns))
		dp_ports_check(dp, now_ns);
	return from_host;
}

/*
 * Returns true when every port is a finite source that has delivered
 * everything, and all it caused has been sent. At the end of the input,
 * neighbours still resolving are given up on (their packets dropped and
 * answered).
 */
bool dp_finished(struct dp *dp);

/*
 * After the workers have stopped: interfaces that send Router
 * Advertisements send a last one (Router Lifetime 0); sends what the
 * stacks gathered and reaps transmit completions on every queue (100 ms at
 * most), so that the summary counts what was sent.
 */
void dp_settle(struct dp *dp);

/* ---- host paths (dp_host.c) ---- */

/*
 * Applies a DP_CMD_HOST for interface @ifidx: opens, re-opens or closes the
 * port's host path, or turns its GRO on or off. Returns 0 or -errno with @err.
 */
int dp_host_apply(struct dp *dp, int ifidx, const struct dp_cmd *c, char *err, size_t errlen);

/*
 * After the router took @c (an address added or deleted, an MTU set) on
 * interface @ifidx: does the same on the port's TAP, if it has one. A TAP
 * that does not follow is told through dp_log(); the router keeps the change.
 */
void dp_host_mirror(struct dp *dp, int ifidx, const struct dp_cmd *c);

/* Closes every host path: the TAPs go away and their held buffers return to the cache. */
void dp_hosts_close(struct dp *dp);

/* Port @port's host path counters, every worker's queue summed; false when it has none. */
bool dp_host_stats(const struct dp *dp, uint16_t port, struct rxp_host_stats *sum);

/*
 * Fills @out with up to @max counters of port @port's host path, named as
 * in its struct rxp_host_stats. Returns how many: 0 without a host path.
 */
unsigned dp_host_counters(const struct dp *dp, uint16_t port, struct rxp_xstat *out, unsigned max);

/*
 * Stops the ports, returns every buffer and checks that the pool has them all.
 * Returns 0, or the number of buffers missing or returned twice.
 */
long dp_close(struct dp *dp);

#endif
