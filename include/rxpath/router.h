/* SPDX-License-Identifier: MIT */
/*
 * The router's tables: L3 interfaces (a port, or a VLAN sub-port of one),
 * their addresses, next hops, the IPv4 and IPv6 FIBs and the neighbour
 * table. The datapath reads them; the configuration code writes them
 * through the functions below, before forwarding starts.
 */
#ifndef RXPATH_ROUTER_H
#define RXPATH_ROUTER_H

#include <arpa/inet.h>
#include <pthread.h>
#include <string.h>
#include "rxpath/common.h"
#include "rxpath/lpm4.h"
#include "rxpath/lpm6.h"
#include "rxpath/neigh.h"

#define RXP_IFS_MAX 64
#define RXP_IF_ADDRS 8
/* a set over twice the size of the addresses and broadcasts there can be (3 per address) */
#define RXP_SRC4_SET_BITS 12
#define RXP_SRC4_SET_SLOTS (1u << RXP_SRC4_SET_BITS)
#define RXP_NH_MAX 4096		/* next hops (a power of two: the stack masks ids by it) */
#define RXP_NH_LOCAL 0		/* next hop id of the router's own addresses */
#define RXP_NEIGH_MAX_DEFAULT 4096
#define RXP_VRF_MAX 16			/* routing tables: the default one and 15 VRFs */
#define RXP_VRF_DEFAULT 0
#define RXP_VRF_TABLE_MAIN 254		/* the kernel table the default one is (sync kernel) */

/*
 * Multipath: a route may lead to a group of next hops (ECMP, weighted). The
 * FIB then holds RXP_NH_GROUP | the group's index, and the stack picks one
 * member per packet by a hash of its flow (net/multipath.h), so that the FIB
 * and every single-path route stay as they are.
 */
#define RXP_NH_GROUP (1u << 23)		/* FIB values from here to 2^24: groups */
#define RXP_NH_GROUP_MAX 1024		/* groups in use at once */
#define RXP_NH_PATHS_MAX 64		/* next hops in one group */
#define RXP_NH_WEIGHT_MAX 256
#define RXP_NH_BUCKETS_LOG2 14		/* a group's hash buckets, each naming a member: a share is even to about 1% */
#define RXP_NH_BUCKETS (1u << RXP_NH_BUCKETS_LOG2)

enum rxp_nh_kind {
	RXP_NH_KIND_LOCAL,	/* deliver to the router itself */
	RXP_NH_KIND_CONNECTED,	/* on-link: the destination is the neighbour */
	RXP_NH_KIND_GATEWAY,	/* via a gateway on the interface */
	/* routes that lead nowhere, as iproute2's route types: */
	RXP_NH_KIND_BLACKHOLE,	/* dropped without a word */
	RXP_NH_KIND_UNREACHABLE,	/* dropped, Destination Unreachable (host / no route) */
	RXP_NH_KIND_PROHIBIT,	/* dropped, Destination Unreachable (administratively prohibited) */
};

struct rxp_nexthop {
	uint8_t kind;
	uint8_t family;		/* 4 or 6 */
	bool if_found;		/* the interface was found from the gateway, not given: it follows the subnet */
	bool unreachable;	/* if_found, and no subnet of the router's holds the gateway any more
				 * (its address was deleted): its routes are parked out of the FIB,
				 * as Linux drops them, until one does again; in a group, it is down */
	uint16_t ifidx;
	uint8_t vrf;		/* where a found interface is looked for: the VRF whose subnet holds the gateway */
	uint8_t gw[16];		/* network order; IPv4 in the first 4 bytes */
	uint32_t refs;		/* routes using it */
};

/*
 * A routing table: the default one (index 0, no name) or a VRF's. Each has
 * its own IPv4 and IPv6 FIB; an interface belongs to one, and what comes in
 * by it is routed in it. A route's next hop may be in another (route
 * leaking): the next hop's interface decides where the packet goes.
 */
struct rxp_vrf {
	char name[RXP_PORT_NAME_MAX];	/* empty: the default table, or a free slot */
	uint32_t table;			/* the kernel table it is (sync kernel follows it) */
	bool used;
	struct rxp_lpm4 *fib4;
	struct rxp_lpm6 *fib6;
};

/*
 * A group of next hops, resilient as the kernel's resilient nexthop groups
 * are: each of its RXP_NH_BUCKETS buckets names a member, and a flow keeps
 * its bucket. The buckets are laid out by weighted rendezvous hashing over
 * the members that are up, from each member's identity (gateway and
 * interface) alone: a member that goes takes only its own buckets with it,
 * one that comes back gets just its share, and one set of members always
 * gives one layout (which is why routes with the same set share a group).
 */
struct rxp_nh_group {
	uint32_t refs;			/* routes using it; 0: a free slot */
	uint8_t family;
	uint8_t n_paths;
	uint16_t nh[RXP_NH_PATHS_MAX];	/* the members' next hop ids, ascending */
	uint16_t weight[RXP_NH_PATHS_MAX];	/* 1-256 each (two said alike: their sum) */
	uint8_t *bucket;		/* [RXP_NH_BUCKETS]: a member's index in nh[] */
	uint64_t up;			/* bit per member: in the layout (its next hop is reachable) */
	uint64_t pkts_base[RXP_NH_PATHS_MAX];	/* the per-member counters when it was made */
};

/* A next hop of a multipath route, as configured (rxp_router_add_route_paths). */
struct rxp_route_path {
	bool has_gw;
	uint8_t gw[16];		/* network order */
	int ifidx;		/* -1: the interface whose subnet holds the gateway */
	int vrf;		/* with ifidx -1: the VRF where that subnet is; -1: the route's own */
	uint16_t weight;	/* 1-256 */
};

struct rxp_l3if {
	char name[RXP_PORT_NAME_MAX];
	uint16_t port;		/* the physical port */
	uint16_t vlan;		/* 802.1Q VLAN id; 0 for the port itself */
	uint8_t vrf;		/* the routing table it is in (RXP_VRF_DEFAULT, or a VRF's) */
	uint32_t mtu;		/* IP MTU */
	uint8_t mac[6];
	bool no_redirects;	/* `port set NAME redirects off` */
	bool ra;		/* `port set NAME ra on`: sends Router Advertisements (timers: net) */
	uint8_t n_addr4, n_addr6;
	uint32_t addr4[RXP_IF_ADDRS];	/* network order */
	uint8_t plen4[RXP_IF_ADDRS];
	uint8_t addr6[RXP_IF_ADDRS][16];	/* [0] is the EUI-64 link-local address */
	uint8_t plen6[RXP_IF_ADDRS];
};

/* One installed route, as configured (the FIB itself only answers longest-match lookups). */
enum rxp_route_origin {
	RXP_ROUTE_STATIC,	/* the config, the control socket, an address's own */
	RXP_ROUTE_KERNEL,	/* mirrored from the kernel's table (sync kernel) */
};

struct rxp_route {
	uint8_t family;		/* 4 or 6; 0 = free slot */
	uint8_t plen;
	uint8_t origin;		/* enum rxp_route_origin */
	bool parked;		/* out of the FIB while its gateway is on no subnet (the next hop's
				 * unreachable): lookups fall back to a covering route, as Linux's do */
	uint8_t vrf;		/* the table it is in */
	uint8_t prefix[16];	/* network order, host bits cleared */
	uint32_t nh;
};

struct rxp_router {
	unsigned n_ifs;
	struct rxp_l3if ifs[RXP_IFS_MAX];
	int16_t port_if[RXP_PORTS_MAX];		/* untagged interface of each port, -1 none */
	bool port_down[RXP_PORTS_MAX];		/* no carrier, or the device went: its group members are down */
	bool port_has_vlans[RXP_PORTS_MAX];
	struct rxp_lpm4 *fib4;		/* the default table's FIBs (vrfs[0]'s) */
	struct rxp_lpm6 *fib6;
	struct rxp_vrf vrfs[RXP_VRF_MAX];
	unsigned n_vrfs;		/* slots ever used; vrfs[0] is the default table */
	uint32_t max_routes4, max_routes6;	/* each table's size */
	unsigned n_nh;
	struct rxp_nexthop nh[RXP_NH_MAX];
	struct rxp_nh_group *groups;	/* [RXP_NH_GROUP_MAX], made with the first */
	unsigned n_groups;		/* slots ever used */
	uint64_t mp_seed;		/* the flow hash's secret, per router */
	/* per worker, group and member: packets sent [n_workers][RXP_NH_GROUP_MAX][RXP_NH_PATHS_MAX] */
	uint64_t *path_pkts;
	unsigned n_workers;
	struct rxp_neigh_table neigh;
	/*
	 * Several workers: the neighbour table is written under this lock (learning,
	 * resolution, timers: slow paths). The fast path reads only its own
	 * adjacency cache and the table's generation.
	 */
	bool shared;
	pthread_spinlock_t neigh_lock;
	uint64_t neigh_reachable_ns;	/* a learned neighbour lasts this long unconfirmed */
	bool no_source_route;	/* `ip source-route off`: source routes through us are dropped */
	uint64_t bcast4_low6;	/* bit n: a broadcast below ends in n (its low 6 bits) */
	uint64_t src4_low6;	/* bit n: an address in src4_set ends in n */
	struct rxp_route *routes;	/* open-addressing hash of installed routes */
	uint32_t routes_size, n_routes;
	/* the big tables last, away from what the fast path reads */
	unsigned n_bcast4;
	/* the connected subnets' broadcast addresses, {prefix, -1} and {prefix, 0} (network order) */
	uint32_t bcast4[RXP_IFS_MAX * RXP_IF_ADDRS * 2];
	/* the router's IPv4 addresses and broadcasts (network order), a hash set: 0 is empty */
	uint32_t src4_set[RXP_SRC4_SET_SLOTS];
};

/* Returns 0 with an empty router, or -ENOMEM. */
int rxp_router_init(struct rxp_router *r, uint32_t max_routes4, uint32_t max_routes6);
void rxp_router_free(struct rxp_router *r);

/*
 * Adds the interface of @port (vlan 0) or a VLAN sub-interface. Returns the
 * interface index, or -EEXIST / -ENOSPC / -EINVAL.
 */
int rxp_router_add_if(struct rxp_router *r, const char *name, uint16_t port, uint16_t vlan,
		      const uint8_t mac[6], uint32_t mtu);

/* Returns the index of the interface called @name, or -ENOENT. */
int rxp_router_if_by_name(const struct rxp_router *r, const char *name);

/*
 * Returns the interface a frame received on @port with VLAN id @vlan
 * (0 = untagged) belongs to, or -1.
 */
static inline int rxp_router_if_of(const struct rxp_router *r, uint16_t port, uint16_t vlan)
{
	if (rxp_likely(vlan == 0))
		return r->port_if[port];
	for (unsigned i = 0; i < r->n_ifs; i++)
		if (r->ifs[i].port == port && r->ifs[i].vlan == vlan)
			return (int)i;
	return -1;
}

/*
 * Adds address @addr/@plen (family 4 or 6, network order) to interface
 * @ifidx, with its local and connected routes. Returns 0 or -errno.
 */
int rxp_router_add_addr(struct rxp_router *r, int ifidx, uint8_t family, const uint8_t *addr,
			uint8_t plen);

/*
 * Removes address @addr from interface @ifidx with its local route, and its
 * connected route unless another address makes the same one. Returns 0,
 * -ENOENT, or -EPERM for the IPv6 link-local address.
 */
int rxp_router_del_addr(struct rxp_router *r, int ifidx, uint8_t family, const uint8_t *addr);

/*
 * Adds a route. @gw may be NULL (on-link via @ifidx); with a gateway and
 * @ifidx < 0, the interface is the one whose connected route covers @gw.
 * Returns 0 or -errno (-ENETUNREACH when no interface reaches the gateway,
 * -EADDRINUSE for the host route of one of the router's own addresses,
 * -EISCONN for the connected route of one, which only its address may
 * change; the connected route said again, by @ifidx alone, is no change).
 */
int rxp_router_add_route(struct rxp_router *r, unsigned vrf, uint8_t family, const uint8_t *prefix,
			 uint8_t plen, const uint8_t *gw, int ifidx);

/*
 * Adds a route over @n next hops (1..RXP_NH_PATHS_MAX) with weights
 * (1..RXP_NH_WEIGHT_MAX), or changes a route to them; each path is checked
 * as rxp_router_add_route() checks its one. One path is an ordinary route.
 * Returns 0 or -errno, with *@bad set to the index of the path at fault
 * (-ERANGE: a weight out of range; -E2BIG: too many paths).
 */
int rxp_router_add_route_paths(struct rxp_router *r, unsigned vrf, uint8_t family,
			       const uint8_t *prefix, uint8_t plen, const struct rxp_route_path *paths,
			       unsigned n, unsigned *bad);

/* True when FIB value @nh is a group's (RXP_NH_GROUP | index). */
static inline bool rxp_nh_is_group(uint32_t nh)
{
	return (nh >> 23) == 1;
}

/* The group FIB value @nh names. */
static inline const struct rxp_nh_group *rxp_router_group(const struct rxp_router *r, uint32_t nh)
{
	return &r->groups[nh & (RXP_NH_GROUP - 1)];
}

/*
 * The member of group @nh a flow of hash @hash takes; in *@path its index
 * in the group. A group's buckets may be rewritten while a worker reads
 * them (a member went down): each byte is whole, old or new.
 */
static inline uint32_t rxp_router_group_pick(const struct rxp_router *r, uint32_t nh,
					     uint32_t hash, unsigned *path)
{
	const struct rxp_nh_group *g = rxp_router_group(r, nh);
	unsigned p = __atomic_load_n(&g->bucket[hash >> (32 - RXP_NH_BUCKETS_LOG2)],
				     __ATOMIC_RELAXED);

	*path = p;
	return g->nh[p];
}

/*
 * The single next hop of the route @rt, or NULL when it has a group: for
 * what looks at one next hop's kind, port or gateway.
 */
static inline const struct rxp_nexthop *rxp_route_nh(const struct rxp_router *r,
						    const struct rxp_route *rt)
{
	return rxp_nh_is_group(rt->nh) ? NULL : &r->nh[rt->nh];
}

/* Packets group value @nh's member @path carried since the group was made, all workers. */
uint64_t rxp_router_path_pkts(const struct rxp_router *r, uint32_t nh, unsigned path);

/* Is member @path of group value @nh up (in its layout)? */
bool rxp_router_path_up(const struct rxp_router *r, uint32_t nh, unsigned path);

/*
 * Lays out again the groups whose members went down or came back: a
 * member is down when its gateway is on no subnet, its port is down
 * (rxp_router_set_port_down) or its neighbour failed to answer. Call it
 * where no worker changes the neighbour table (between polls); workers may
 * read the groups meanwhile. Returns the number of groups laid out again.
 */
unsigned rxp_router_groups_check(struct rxp_router *r);

/* Says whether port @port has its link (carrier); returns true when that changed. */
bool rxp_router_set_port_down(struct rxp_router *r, uint16_t port, bool down);

/*
 * Adds a route that leads nowhere: @kind is RXP_NH_KIND_BLACKHOLE,
 * _UNREACHABLE or _PROHIBIT. Returns 0 or -errno (-EADDRINUSE, -EISCONN as above).
 */
int rxp_router_add_route_reject(struct rxp_router *r, unsigned vrf, uint8_t family,
				const uint8_t *prefix, uint8_t plen, uint8_t kind);

/*
 * Writes to @out (16 bytes) the first @plen bits of @in (family 4 or 6), the
 * rest zero: the prefix a route names, whatever host bits it was written with.
 */
void rxp_prefix_mask(uint8_t family, const uint8_t *in, uint8_t plen, uint8_t out[16]);

/* Returns true for the next hop kinds of rxp_router_add_route_reject(). */
static inline bool rxp_nh_kind_rejects(uint8_t kind)
{
	return kind >= RXP_NH_KIND_BLACKHOLE;
}

/* Is @prefix/@plen an address's own host route or connected route (which goes with its address)? */
bool rxp_router_route_of_addr(struct rxp_router *r, unsigned vrf, uint8_t family,
			      const uint8_t *prefix, uint8_t plen);

/*
 * Deletes a route. Returns 0, -ENOENT, or -EADDRINUSE / -EISCONN for an
 * address's own host route / connected route.
 */
int rxp_router_del_route(struct rxp_router *r, unsigned vrf, uint8_t family, const uint8_t *prefix,
			 uint8_t plen);

/*
 * Returns the installed route a longest-prefix match of @addr selects, or
 * NULL; slow (one hash probe per prefix length), for reports.
 */
const struct rxp_route *rxp_router_match(struct rxp_router *r, unsigned vrf, uint8_t family,
					 const uint8_t *addr);

/* Returns the installed route for exactly @prefix/@plen (host bits ignored), or NULL. */
struct rxp_route *rxp_router_route(struct rxp_router *r, unsigned vrf, uint8_t family,
				   const uint8_t *prefix, uint8_t plen);

/*
 * Adds VRF @name with kernel table @table. Returns its index, or -EEXIST
 * (the name is taken), -EADDRINUSE (another has that table), -EINVAL (a
 * table the kernel keeps for itself: 0, 253-255), -ENOSPC or -ENOMEM.
 */
int rxp_router_add_vrf(struct rxp_router *r, const char *name, uint32_t table);

/* Deletes VRF @vrf with its routes; -EBUSY while an interface is in it, -EINVAL for the default. */
int rxp_router_del_vrf(struct rxp_router *r, unsigned vrf);

/* The index of VRF @name ("default" or "" is the default table), or -ENOENT. */
int rxp_router_vrf_by_name(const struct rxp_router *r, const char *name);

/* The index of the VRF of kernel table @table, or -ENOENT. */
int rxp_router_vrf_by_table(const struct rxp_router *r, uint32_t table);

/*
 * Moves interface @ifidx into VRF @vrf. Returns 0, or -EBUSY while it has
 * addresses (their routes are its table's: delete them first), -EINVAL.
 */
int rxp_router_set_if_vrf(struct rxp_router *r, int ifidx, unsigned vrf);

/* The IPv4 FIB of the table interface @ifidx is in. */
static inline const struct rxp_lpm4 *rxp_router_fib4_of(const struct rxp_router *r, unsigned ifidx)
{
	return r->vrfs[r->ifs[ifidx].vrf].fib4;
}

/* The IPv6 FIB of the table interface @ifidx is in. */
static inline const struct rxp_lpm6 *rxp_router_fib6_of(const struct rxp_router *r, unsigned ifidx)
{
	return r->vrfs[r->ifs[ifidx].vrf].fib6;
}

/* Adds a static neighbour. Returns 0 or -errno. */
int rxp_router_add_neigh(struct rxp_router *r, int ifidx, uint8_t family, const uint8_t *addr,
			 const uint8_t mac[6]);

/* Sets the IP MTU of an interface (68..the port's frame allows). Returns 0 or -EINVAL. */
int rxp_router_set_mtu(struct rxp_router *r, int ifidx, uint32_t mtu);

/* Returns true when @addr (network order) is one of @ifp's IPv4 addresses. */
static inline bool rxp_l3if_has_addr4(const struct rxp_l3if *ifp, uint32_t addr)
{
	for (unsigned i = 0; i < ifp->n_addr4; i++)
		if (ifp->addr4[i] == addr)
			return true;
	return false;
}

/*
 * Returns true when @addr (network order) is a broadcast address of a
 * connected subnet: its directed broadcast, or its number (the obsolete
 * form, RFC 1812 4.2.3.1, which a router silently discards).
 */
static inline bool rxp_router_is_bcast4(const struct rxp_router *r, uint32_t addr)
{
	/* most addresses end otherwise: one test instead of the list */
	if (!((r->bcast4_low6 >> (ntohl(addr) & 63)) & 1))
		return false;
	for (unsigned i = 0; i < r->n_bcast4; i++)
		if (r->bcast4[i] == addr)
			return true;
	return false;
}

/* rxp_router_is_bad_src4() past its quick filter: one of our addresses or broadcasts? */
bool rxp_router_in_src4_set(const struct rxp_router *r, uint32_t addr);

/*
 * True when @addr (network order) is a broadcast address of one of the
 * router's subnets or one of its own addresses: no packet from the wire
 * has such a source, but a forged one (as Linux, the router takes it for a
 * martian).
 */
static inline bool rxp_router_is_bad_src4(const struct rxp_router *r, uint32_t addr)
{
	/* most addresses end otherwise: one test before the set (out of line) */
	return ((r->src4_low6 >> (ntohl(addr) & 63)) & 1) && rxp_router_in_src4_set(r, addr);
}

/*
 * True when @addr (network order) may not be a packet's source (RFC 1812
 * 5.3.7): 0/8, 127/8, multicast, class E and the limited broadcast, a
 * broadcast address of one of the router's subnets (either form), or one of
 * the router's own addresses.
 */
static inline bool rxp_router_is_martian_src4(const struct rxp_router *r, uint32_t addr)
{
	uint32_t a = ntohl(addr);

	return (a >> 24) == 0 || (a >> 24) == 127 || (a >> 28) >= 0xe ||
	       rxp_router_is_bad_src4(r, addr);
}

/* True when @addr (network order) is one of the router's own addresses, in any table. */
static inline bool rxp_router_is_local4(const struct rxp_router *r, uint32_t addr)
{
	uint32_t nh;

	for (unsigned v = 0; v < r->n_vrfs; v++)
		if (r->vrfs[v].used && !rxp_lpm4_lookup(r->vrfs[v].fib4, ntohl(addr), &nh) &&
		    nh == RXP_NH_LOCAL)
			return true;
	return false;
}

/* True when @mac is the MAC of one of the router's interfaces: no neighbour's. */
static inline bool rxp_router_has_mac(const struct rxp_router *r, const uint8_t mac[6])
{
	for (unsigned i = 0; i < r->n_ifs; i++)
		if (!memcmp(r->ifs[i].mac, mac, 6))
			return true;
	return false;
}

/*
 * Returns the index of @ifp's IPv4 address whose subnet holds @addr
 * (network order), or -1 when @addr is on none of them.
 */
static inline int rxp_l3if_subnet4(const struct rxp_l3if *ifp, uint32_t addr)
{
	for (unsigned i = 0; i < ifp->n_addr4; i++) {
		uint32_t mask = ifp->plen4[i] ? htonl(~0u << (32 - ifp->plen4[i])) : 0;

		if (!((ifp->addr4[i] ^ addr) & mask))
			return (int)i;
	}
	return -1;
}

/*
 * Returns the address to speak from toward @addr on @ifp: one on its
 * subnet, else the first; 0 when @ifp has no IPv4 address.
 */
static inline uint32_t rxp_l3if_source4(const struct rxp_l3if *ifp, uint32_t addr)
{
	int i = rxp_l3if_subnet4(ifp, addr);

	if (!ifp->n_addr4)
		return 0;
	return ifp->addr4[i >= 0 ? i : 0];
}

/*
 * An IPv4 address of the router's for what must come from one when the
 * interface it concerns has none (RFC 1812 4.3.2.4, the router-id): the
 * first of the first interface that has one; 0 when none has.
 */
static inline uint32_t rxp_router_any_addr4(const struct rxp_router *r)
{
	for (unsigned i = 0; i < r->n_ifs; i++)
		if (r->ifs[i].n_addr4)
			return r->ifs[i].addr4[0];
	return 0;
}

/*
 * Makes the tables safe for @n_workers workers (locks on the slow paths
 * when there are several). Returns 0 or -errno.
 */
int rxp_router_set_workers(struct rxp_router *r, unsigned n_workers);

#endif
