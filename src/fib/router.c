/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rxpath/proto.h"
#include "router_priv.h"
#include "seed.h"

int rxp_router_init(struct rxp_router *r, uint32_t max_routes4, uint32_t max_routes6)
{
	memset(r, 0, sizeof(*r));
	for (unsigned p = 0; p < RXP_PORTS_MAX; p++)
		r->port_if[p] = -1;
	/* room for a full table: one 256-entry group per /24 holding longer routes */
	r->fib4 = rxp_lpm4_create(max_routes4, 1u << 17);
	r->fib6 = rxp_lpm6_create(max_routes6, 0);
	if (!r->fib4 || !r->fib6 || rxp_neigh_init(&r->neigh, RXP_NEIGH_MAX_DEFAULT)) {
		rxp_router_free(r);
		return -ENOMEM;
	}
	/* the default table: the VRFs' sizes follow it (rxp_router_add_vrf) */
	r->vrfs[RXP_VRF_DEFAULT] = (struct rxp_vrf){ .table = RXP_VRF_TABLE_MAIN, .used = true,
						    .fib4 = r->fib4, .fib6 = r->fib6 };
	r->n_vrfs = 1;
	r->max_routes4 = max_routes4;
	r->max_routes6 = max_routes6;
	/* next hop 0: the router itself */
	r->nh[RXP_NH_LOCAL].kind = RXP_NH_KIND_LOCAL;
	r->n_nh = 1;
	r->neigh_reachable_ns = RXP_NEIGH_REACHABLE_NS;
	rxp_seed_fill(&r->mp_seed, 1, r);
	return 0;
}

void rxp_router_free(struct rxp_router *r)
{
	if (r->fib4)
		rxp_lpm4_destroy(r->fib4);
	if (r->fib6)
		rxp_lpm6_destroy(r->fib6);
	router_vrfs_free(r);
	rxp_neigh_free(&r->neigh);
	router_groups_free(r);
	if (r->shared) {
		pthread_spin_destroy(&r->neigh_lock);
		r->shared = false;
	}
	free(r->routes);
	r->routes = NULL;
	r->fib4 = NULL;
	r->fib6 = NULL;
}

/* RFC 4291 2.5.1 / appendix A: interface id from the MAC, universal/local bit flipped. */
static void eui64_link_local(uint8_t out[16], const uint8_t mac[6])
{
	memset(out, 0, 16);
	out[0] = 0xfe;
	out[1] = 0x80;
	out[8] = mac[0] ^ 0x02;
	out[9] = mac[1];
	out[10] = mac[2];
	out[11] = 0xff;
	out[12] = 0xfe;
	out[13] = mac[3];
	out[14] = mac[4];
	out[15] = mac[5];
}

int rxp_router_add_if(struct rxp_router *r, const char *name, uint16_t port, uint16_t vlan,
		      const uint8_t mac[6], uint32_t mtu)
{
	struct rxp_l3if *ifp;

	if (port >= RXP_PORTS_MAX || vlan > 4094 || strlen(name) >= sizeof(ifp->name))
		return -EINVAL;
	if (rxp_router_if_by_name(r, name) >= 0 || rxp_router_if_of(r, port, vlan) >= 0)
		return -EEXIST;
	if (r->n_ifs == RXP_IFS_MAX)
		return -ENOSPC;
	ifp = &r->ifs[r->n_ifs];
	memset(ifp, 0, sizeof(*ifp));
	snprintf(ifp->name, sizeof(ifp->name), "%s", name);
	ifp->port = port;
	ifp->vlan = vlan;
	ifp->mtu = mtu;
	memcpy(ifp->mac, mac, 6);
	eui64_link_local(ifp->addr6[0], mac);
	ifp->plen6[0] = 64;
	ifp->n_addr6 = 1;
	if (vlan == 0)
		r->port_if[port] = (int16_t)r->n_ifs;
	else
		r->port_has_vlans[port] = true;
	return (int)r->n_ifs++;
}

int rxp_router_if_by_name(const struct rxp_router *r, const char *name)
{
	for (unsigned i = 0; i < r->n_ifs; i++)
		if (!strcmp(r->ifs[i].name, name))
			return (int)i;
	return -ENOENT;
}

int router_nh_get(struct rxp_router *r, uint8_t kind, uint8_t family, uint8_t vrf, uint16_t ifidx,
		  const uint8_t *gw, bool if_found)
{
	unsigned alen = family == 4 ? 4 : 16;
	int free_slot = -1;

	for (unsigned i = 1; i < r->n_nh; i++) {
		struct rxp_nexthop *nh = &r->nh[i];

		if (nh->refs == 0) {
			if (free_slot < 0)
				free_slot = (int)i;
			continue;
		}
		if (nh->kind == kind && nh->family == family && nh->ifidx == ifidx &&
		    nh->if_found == if_found && nh->vrf == vrf &&
		    (kind != RXP_NH_KIND_GATEWAY || !memcmp(nh->gw, gw, alen)))
			return (int)i;
	}
	if (free_slot < 0) {
		if (r->n_nh == RXP_NH_MAX)
			return -ENOSPC;
		free_slot = (int)r->n_nh++;
	}
	/* a reused id must not keep another next hop's cached adjacency */
	rxp_neigh_gen_bump(&r->neigh);
	memset(&r->nh[free_slot], 0, sizeof(r->nh[0]));
	r->nh[free_slot].kind = kind;
	r->nh[free_slot].family = family;
	r->nh[free_slot].ifidx = ifidx;
	r->nh[free_slot].vrf = vrf;
	r->nh[free_slot].if_found = if_found;
	if (gw)
		memcpy(r->nh[free_slot].gw, gw, alen);
	return free_slot;
}

void rxp_prefix_mask(uint8_t family, const uint8_t *in, uint8_t plen, uint8_t out[16])
{
	unsigned alen = family == 4 ? 4 : 16;

	/* a byte at a time, each read before it is written: @in may be @out */
	for (unsigned i = 0; i < 16; i++) {
		unsigned bits = plen > i * 8 ? RXP_MIN(8u, plen - i * 8u) : 0;

		out[i] = i < alen ? in[i] & (uint8_t)(0xff00u >> bits) : 0;
	}
}

static uint32_t route_hash(uint8_t vrf, uint8_t family, const uint8_t *p, uint8_t plen)
{
	uint32_t h = 2166136261u ^ family ^ ((uint32_t)plen << 8) ^ ((uint32_t)vrf << 16);

	for (unsigned i = 0; i < 16; i++)
		h = (h ^ p[i]) * 16777619u;
	return h ^ (h >> 13);
}

/* Returns the slot of the route, or the free slot where it would go. */
static struct rxp_route *route_slot(struct rxp_router *r, uint8_t vrf, uint8_t family,
				    const uint8_t *p, uint8_t plen)
{
	uint32_t mask = r->routes_size - 1;

	for (uint32_t i = route_hash(vrf, family, p, plen);; i++) {
		struct rxp_route *rt = &r->routes[i & mask];

		if (!rt->family || (rt->family == family && rt->plen == plen && rt->vrf == vrf &&
				    !memcmp(rt->prefix, p, 16)))
			return rt;
	}
}

struct rxp_route *rxp_router_route(struct rxp_router *r, unsigned vrf, uint8_t family,
				   const uint8_t *prefix, uint8_t plen)
{
	uint8_t p[16];
	struct rxp_route *rt;

	if (!r->routes_size || (family != 4 && family != 6) || plen > (family == 4 ? 32 : 128) ||
	    vrf >= RXP_VRF_MAX)
		return NULL;
	rxp_prefix_mask(family, prefix, plen, p);
	rt = route_slot(r, (uint8_t)vrf, family, p, plen);
	return rt->family ? rt : NULL;
}

const struct rxp_route *rxp_router_match(struct rxp_router *r, unsigned vrf, uint8_t family,
					 const uint8_t *addr)
{
	uint8_t p[16];

	if (!r->routes_size || (family != 4 && family != 6) || vrf >= RXP_VRF_MAX)
		return NULL;
	for (int plen = family == 4 ? 32 : 128; plen >= 0; plen--) {
		struct rxp_route *rt;

		rxp_prefix_mask(family, addr, (uint8_t)plen, p);
		rt = route_slot(r, (uint8_t)vrf, family, p, (uint8_t)plen);
		if (rt->family && !rt->parked)	/* as the FIB answers */
			return rt;
	}
	return NULL;
}

static int routes_grow(struct rxp_router *r)
{
	uint32_t old_size = r->routes_size;
	struct rxp_route *old = r->routes;
	uint32_t size = old_size ? old_size * 2 : 1024;

	r->routes = calloc(size, sizeof(*r->routes));
	if (!r->routes) {
		r->routes = old;
		return -ENOMEM;
	}
	r->routes_size = size;
	for (uint32_t i = 0; i < old_size; i++)
		if (old[i].family)
			*route_slot(r, old[i].vrf, old[i].family, old[i].prefix, old[i].plen) = old[i];
	free(old);
	return 0;
}

/* Removes a route record; re-inserts the rest of its cluster. */
static void route_remove(struct rxp_router *r, struct rxp_route *rt)
{
	uint32_t mask = r->routes_size - 1;
	uint32_t i = (uint32_t)(rt - r->routes);

	rt->family = 0;
	r->n_routes--;
	for (i = (i + 1) & mask; r->routes[i].family; i = (i + 1) & mask) {
		struct rxp_route moved = r->routes[i];

		r->routes[i].family = 0;
		*route_slot(r, moved.vrf, moved.family, moved.prefix, moved.plen) = moved;
	}
}

/* Puts @prefix/@plen (host bits cleared) -> @nh into the FIB of @vrf's family. */
static int fib_add(struct rxp_router *r, uint8_t vrf, uint8_t family, const uint8_t *prefix,
		   uint8_t plen, uint32_t nh)
{
	if (family == 4) {
		uint32_t a;

		memcpy(&a, prefix, 4);
		return rxp_lpm4_add(r->vrfs[vrf].fib4, ntohl(a), plen, nh);
	}
	return rxp_lpm6_add(r->vrfs[vrf].fib6, prefix, plen, nh);
}

void router_nh_ref(struct rxp_router *r, uint32_t nh, int delta)
{
	if (!rxp_nh_is_group(nh))
		r->nh[nh].refs += (uint32_t)delta;
	else if (delta > 0)
		r->groups[nh & (RXP_NH_GROUP - 1)].refs++;
	else
		router_group_put(r, nh & (RXP_NH_GROUP - 1));
}

int router_route_set(struct rxp_router *r, uint8_t vrf, uint8_t family, const uint8_t *prefix,
		     uint8_t plen, uint32_t nh)
{
	uint8_t p[16];
	struct rxp_route *rt;
	int ret;

	if (plen > (family == 4 ? 32 : 128))
		return -EINVAL;
	if ((r->n_routes + 1) * 2 > r->routes_size && routes_grow(r))
		return -ENOMEM;
	rxp_prefix_mask(family, prefix, plen, p);
	ret = fib_add(r, vrf, family, p, plen, nh);
	if (ret)
		return ret;
	rt = route_slot(r, vrf, family, p, plen);
	router_nh_ref(r, nh, 1);	/* before the old one goes: it may be the same group */
	if (rt->family) {
		router_nh_ref(r, rt->nh, -1);
	} else {
		rt->family = family;
		rt->plen = plen;
		rt->vrf = vrf;
		rt->origin = RXP_ROUTE_STATIC;
		memcpy(rt->prefix, p, 16);
		r->n_routes++;
	}
	rt->nh = nh;
	rt->parked = false;
	return 0;
}

/* The route record of exactly @prefix/@plen, or NULL. */
static struct rxp_route *route_find(struct rxp_router *r, uint8_t vrf, uint8_t family,
				    const uint8_t *prefix, uint8_t plen)
{
	uint8_t p[16];
	struct rxp_route *rt;

	if (!r->routes_size || plen > (family == 4 ? 32 : 128))
		return NULL;
	rxp_prefix_mask(family, prefix, plen, p);
	rt = route_slot(r, vrf, family, p, plen);
	return rt->family ? rt : NULL;
}

/* Returns true when another address of @vrf (not @ifidx's number @skip) makes the connected @prefix/@plen. */
static bool connected_shared(const struct rxp_router *r, uint8_t vrf, uint8_t family,
			     const uint8_t *prefix, uint8_t plen, int ifidx, unsigned skip)
{
	uint8_t a[16];

	for (unsigned i = 0; i < r->n_ifs; i++) {
		const struct rxp_l3if *ifp = &r->ifs[i];
		unsigned n = family == 4 ? ifp->n_addr4 : ifp->n_addr6;

		if (ifp->vrf != vrf)
			continue;

		for (unsigned k = 0; k < n; k++) {
			if ((int)i == ifidx && k == skip)
				continue;
			if ((family == 4 ? ifp->plen4[k] : ifp->plen6[k]) != plen)
				continue;
			rxp_prefix_mask(family, family == 4 ? (const uint8_t *)&ifp->addr4[k] : ifp->addr6[k],
				    plen, a);
			if (!memcmp(a, prefix, family == 4 ? 4 : 16))
				return true;
		}
	}
	return false;
}

/* True when @prefix/@plen is the connected route an address of the router makes. */
static bool route_is_connected(const struct rxp_router *r, uint8_t vrf, uint8_t family,
			       const uint8_t *prefix, uint8_t plen)
{
	return connected_shared(r, vrf, family, prefix, plen, -1, 0);
}

/* An address's own host route belongs to the address: only addr del takes it. */
static bool route_is_local(struct rxp_router *r, uint8_t vrf, uint8_t family,
			   const uint8_t *prefix, uint8_t plen)
{
	const struct rxp_route *rt = route_find(r, vrf, family, prefix, plen);

	return rt && rt->nh == RXP_NH_LOCAL;
}

/* Takes @prefix/@plen out of @vrf's FIB of its family (the route record stays). */
static int fib_del(struct rxp_router *r, uint8_t vrf, uint8_t family, const uint8_t *prefix,
		   uint8_t plen)
{
	uint8_t p[16];

	rxp_prefix_mask(family, prefix, plen, p);
	if (family == 4) {
		uint32_t a;

		memcpy(&a, p, 4);
		return rxp_lpm4_del(r->vrfs[vrf].fib4, ntohl(a), plen);
	}
	return rxp_lpm6_del(r->vrfs[vrf].fib6, p, plen);
}

/* rxp_router_del_route(), the addresses' own routes included. */
int router_route_del(struct rxp_router *r, uint8_t vrf, uint8_t family, const uint8_t *prefix,
		     uint8_t plen)
{
	struct rxp_route *rt = route_find(r, vrf, family, prefix, plen);
	int ret;

	if (!rt)
		return -ENOENT;
	ret = rt->parked ? 0 : fib_del(r, vrf, family, prefix, plen);
	if (ret)
		return ret;
	/*
	 * Tables change between polls of the one worker, so no lookup is inside
	 * a group the delete retired: it can be reused at once.
	 */
	if (family == 4)
		rxp_lpm4_reclaim(r->vrfs[vrf].fib4);
	else
		rxp_lpm6_reclaim(r->vrfs[vrf].fib6);
	router_nh_ref(r, rt->nh, -1);
	route_remove(r, rt);
	return 0;
}

bool rxp_router_route_of_addr(struct rxp_router *r, unsigned vrf, uint8_t family,
			      const uint8_t *prefix, uint8_t plen)
{
	return vrf < RXP_VRF_MAX && (route_is_local(r, (uint8_t)vrf, family, prefix, plen) ||
				     route_is_connected(r, (uint8_t)vrf, family, prefix, plen));
}

int rxp_router_del_route(struct rxp_router *r, unsigned vrf, uint8_t family, const uint8_t *prefix,
			 uint8_t plen)
{
	if (vrf >= RXP_VRF_MAX || !r->vrfs[vrf].used)
		return -EINVAL;
	if (route_is_local(r, (uint8_t)vrf, family, prefix, plen))
		return -EADDRINUSE;
	if (route_is_connected(r, (uint8_t)vrf, family, prefix, plen))
		return -EISCONN;	/* it goes with its address */
	return router_route_del(r, (uint8_t)vrf, family, prefix, plen);
}

/* Returns the interface of @vrf whose connected route covers @addr, or -ENETUNREACH. */
static int if_reaching(struct rxp_router *r, uint8_t vrf, uint8_t family, const uint8_t *addr)
{
	int best = -ENETUNREACH, best_len = -1;

	/* the longest subnet that holds it, as the FIB would choose */
	for (unsigned i = 0; i < r->n_ifs; i++) {
		const struct rxp_l3if *ifp = &r->ifs[i];
		unsigned n = family == 4 ? ifp->n_addr4 : ifp->n_addr6;
		uint8_t a[16], b[16];

		if (ifp->vrf != vrf)
			continue;

		for (unsigned k = 0; k < n; k++) {
			const uint8_t *own = family == 4 ? (const uint8_t *)&ifp->addr4[k] : ifp->addr6[k];
			uint8_t plen = family == 4 ? ifp->plen4[k] : ifp->plen6[k];

			rxp_prefix_mask(family, own, plen, a);
			rxp_prefix_mask(family, addr, plen, b);
			if (plen > best_len && !memcmp(a, b, family == 4 ? 4 : 16)) {
				best = (int)i;
				best_len = plen;
			}
		}
	}
	return best;
}

/*
 * Takes the routes whose next hop became unreachable out of the FIB, and
 * puts back those whose next hop is reachable again: lookups meanwhile find
 * the covering route, as when Linux drops routes with their gateway's subnet.
 */
static void routes_park(struct rxp_router *r, uint8_t family)
{
	for (uint32_t i = 0; i < r->routes_size; i++) {
		struct rxp_route *rt = &r->routes[i];
		bool gone;

		if (rt->family != family || rxp_nh_is_group(rt->nh))
			continue;	/* a group's members go down one by one instead */
		gone = r->nh[rt->nh].unreachable;
		if (gone && !rt->parked) {
			if (!fib_del(r, rt->vrf, family, rt->prefix, rt->plen))
				rt->parked = true;
		} else if (!gone && rt->parked) {
			if (!fib_add(r, rt->vrf, family, rt->prefix, rt->plen, rt->nh))
				rt->parked = false;
		}
	}
	/* between polls: no lookup is inside a retired group */
	for (unsigned v = 0; v < r->n_vrfs; v++) {
		if (!r->vrfs[v].used)
			continue;
		if (family == 4)
			rxp_lpm4_reclaim(r->vrfs[v].fib4);
		else
			rxp_lpm6_reclaim(r->vrfs[v].fib6);
	}
}

/*
 * After an address came or went: a gateway whose interface was found from
 * its subnet goes where that subnet now is (a reload that moves the subnet
 * to another port, say). One no subnet reaches any more is unreachable, its
 * routes parked (routes_park) until one does again.
 */
static void gateways_follow(struct rxp_router *r, uint8_t family)
{
	bool moved = false;

	for (unsigned i = 1; i < r->n_nh; i++) {
		struct rxp_nexthop *nh = &r->nh[i];
		int ifidx;

		if (!nh->refs || nh->kind != RXP_NH_KIND_GATEWAY || !nh->if_found ||
		    nh->family != family)
			continue;
		ifidx = if_reaching(r, nh->vrf, family, nh->gw);
		if ((ifidx < 0) != nh->unreachable) {
			nh->unreachable = ifidx < 0;
			moved = true;
		}
		if (ifidx >= 0 && (unsigned)ifidx != nh->ifidx) {
			nh->ifidx = (uint16_t)ifidx;
			moved = true;
		}
	}
	if (moved) {
		rxp_neigh_gen_bump(&r->neigh);	/* cached adjacencies name the old interface */
		routes_park(r, family);
		router_groups_follow(r);
	}
}

/* An address an interface may have: not 0/8, 127/8, multicast or class E; not ::, ::1 or ff00::/8. */
static bool unicast_addr(uint8_t family, const uint8_t *a)
{
	static const uint8_t zero[16];

	if (family == 4)
		return a[0] != 0 && a[0] != 127 && a[0] < 224;
	if (a[0] == 0xff || !memcmp(a, zero, 16))
		return false;
	return memcmp(a, zero, 15) || a[15] != 1;
}

_Static_assert(RXP_SRC4_SET_SLOTS >= 2 * 3 * RXP_IFS_MAX * RXP_IF_ADDRS,
	       "the set of addresses and broadcasts stays at most half full");

/* The home slot of @addr (network order) in the set of sources that are not a host's. */
static inline uint32_t src4_home(uint32_t addr)
{
	return (addr * 0x9e3779b1u) >> (32 - RXP_SRC4_SET_BITS);
}

/* Adds @addr (never 0: no address of ours or broadcast is 0.0.0.0) to that set and its filter. */
static void src4_insert(struct rxp_router *r, uint32_t addr)
{
	uint32_t i = src4_home(addr);

	while (r->src4_set[i] && r->src4_set[i] != addr)
		i = (i + 1) & (RXP_SRC4_SET_SLOTS - 1);
	r->src4_set[i] = addr;
	r->src4_low6 |= 1ull << (ntohl(addr) & 63);
}

bool rxp_router_in_src4_set(const struct rxp_router *r, uint32_t addr)
{
	for (uint32_t i = src4_home(addr); r->src4_set[i]; i = (i + 1) & (RXP_SRC4_SET_SLOTS - 1))
		if (r->src4_set[i] == addr)
			return true;
	return false;
}

/*
 * Adds the router's address @addr/@plen (network order) and the broadcast
 * addresses of its subnet, and their bits in the quick filters: the
 * directed broadcast, and the subnet's own number, which a router treats as
 * its obsolete form (RFC 1812 4.2.3.1). /31 and /32 have neither (RFC 3021).
 */
static void addr4_add(struct rxp_router *r, uint32_t addr, uint8_t plen)
{
	uint32_t host;

	src4_insert(r, addr);
	if (plen >= 31)
		return;
	host = htonl(~0u >> plen);
	r->bcast4[r->n_bcast4++] = addr | host;
	r->bcast4[r->n_bcast4++] = addr & ~host;
	r->bcast4_low6 |= 1ull << (ntohl(addr | host) & 63);
	r->bcast4_low6 |= 1ull << (ntohl(addr & ~host) & 63);
	src4_insert(r, addr | host);
	src4_insert(r, addr & ~host);
}

/*
 * Whether the routes an address brings (its subnet's, its own host route)
 * can be had: not while a configured route holds one of those prefixes
 * (-EBUSY: it would be lost for good when the address goes), nor while the
 * subnet is another interface's (-ENOTUNIQ: one route can name one of them;
 * link-local subnets are on every link and routed by none).
 */
static int addr_routes_free(struct rxp_router *r, int ifidx, uint8_t family,
			    const uint8_t *addr, uint8_t plen)
{
	uint8_t max = family == 4 ? 32 : 128, prefix[16], vrf = r->ifs[ifidx].vrf;
	const struct rxp_route *rt;

	if (family == 6 && addr[0] == 0xfe && (addr[1] & 0xc0) == 0x80)
		return 0;
	rxp_prefix_mask(family, addr, plen, prefix);
	rt = route_find(r, vrf, family, prefix, plen);
	if (rt && route_is_connected(r, vrf, family, prefix, plen) && !rxp_nh_is_group(rt->nh)) {
		if (r->nh[rt->nh].ifidx != ifidx)
			return -ENOTUNIQ;
	} else if (rt && rt->origin != RXP_ROUTE_KERNEL) {
		return -EBUSY;
	}
	rt = plen < max ? route_find(r, vrf, family, addr, max) : NULL;
	if (rt && rt->nh != RXP_NH_LOCAL && rt->origin != RXP_ROUTE_KERNEL)
		return -EBUSY;
	return 0;
}

int rxp_router_add_addr(struct rxp_router *r, int ifidx, uint8_t family, const uint8_t *addr,
			uint8_t plen)
{
	struct rxp_l3if *ifp;
	int nh, ret;

	if (ifidx < 0 || (unsigned)ifidx >= r->n_ifs || (family != 4 && family != 6) ||
	    plen > (family == 4 ? 32 : 128))
		return -EINVAL;
	ifp = &r->ifs[ifidx];
	if (!unicast_addr(family, addr))
		return -EADDRNOTAVAIL;
	for (unsigned i = 0; i < r->n_ifs; i++) {
		const struct rxp_l3if *o = &r->ifs[i];

		if (o->vrf != ifp->vrf)
			continue;	/* another table's: the same address may be in each */
		/* the same address said again, as it is: no change; anywhere else: refused */
		for (unsigned k = 0; family == 4 && k < o->n_addr4; k++)
			if (!memcmp(&o->addr4[k], addr, 4))
				return o == ifp && o->plen4[k] == plen ? 0 : -EEXIST;
		for (unsigned k = 0; family == 6 && k < o->n_addr6; k++)
			if (!memcmp(o->addr6[k], addr, 16))
				return o == ifp && o->plen6[k] == plen ? 0 : -EEXIST;
	}
	if ((family == 4 ? ifp->n_addr4 : ifp->n_addr6) == RXP_IF_ADDRS)
		return -ENOSPC;
	ret = addr_routes_free(r, ifidx, family, addr, plen);
	if (ret)
		return ret;
	nh = router_nh_get(r, RXP_NH_KIND_CONNECTED, family, ifp->vrf, (uint16_t)ifidx, NULL, false);
	if (nh < 0)
		return nh;
	ret = router_route_set(r, ifp->vrf, family, addr, plen, (uint32_t)nh);
	if (!ret)
		ret = router_route_set(r, ifp->vrf, family, addr, family == 4 ? 32 : 128, RXP_NH_LOCAL);
	if (ret)
		return ret;
	if (family == 4) {
		memcpy(&ifp->addr4[ifp->n_addr4], addr, 4);
		ifp->plen4[ifp->n_addr4++] = plen;
		{
			uint32_t a;

			memcpy(&a, addr, 4);
			addr4_add(r, a, plen);
		}
	} else {
		memcpy(ifp->addr6[ifp->n_addr6], addr, 16);
		ifp->plen6[ifp->n_addr6++] = plen;
	}
	gateways_follow(r, family);
	return 0;
}

/* Rebuilds the addresses and broadcast addresses from every interface's IPv4 addresses. */
static void bcast4_rebuild(struct rxp_router *r)
{
	r->n_bcast4 = 0;
	r->bcast4_low6 = 0;
	memset(r->src4_set, 0, sizeof(r->src4_set));
	r->src4_low6 = 0;
	for (unsigned i = 0; i < r->n_ifs; i++) {
		const struct rxp_l3if *ifp = &r->ifs[i];

		for (unsigned k = 0; k < ifp->n_addr4; k++)
			addr4_add(r, ifp->addr4[k], ifp->plen4[k]);
	}
}

int rxp_router_del_addr(struct rxp_router *r, int ifidx, uint8_t family, const uint8_t *addr)
{
	struct rxp_l3if *ifp;
	uint8_t prefix[16];
	unsigned n, k;
	uint8_t plen;

	if (ifidx < 0 || (unsigned)ifidx >= r->n_ifs || (family != 4 && family != 6))
		return -EINVAL;
	ifp = &r->ifs[ifidx];
	n = family == 4 ? ifp->n_addr4 : ifp->n_addr6;
	for (k = 0; k < n; k++)
		if (!memcmp(family == 4 ? (const uint8_t *)&ifp->addr4[k] : ifp->addr6[k], addr,
			    family == 4 ? 4 : 16))
			break;
	if (k == n)
		return -ENOENT;
	if (family == 6 && k == 0)
		return -EPERM;	/* the link-local address: ND needs it */
	plen = family == 4 ? ifp->plen4[k] : ifp->plen6[k];
	rxp_prefix_mask(family, addr, plen, prefix);
	router_route_del(r, ifp->vrf, family, addr, family == 4 ? 32 : 128);
	if (!connected_shared(r, ifp->vrf, family, prefix, plen, ifidx, k)) {
		struct rxp_route *rt = route_slot(r, ifp->vrf, family, prefix, plen);

		/* only the connected route this address made, not a route configured over it */
		if (rt->family && !rxp_nh_is_group(rt->nh) && r->nh[rt->nh].kind == RXP_NH_KIND_CONNECTED &&
		    r->nh[rt->nh].ifidx == ifidx)
			router_route_del(r, ifp->vrf, family, prefix, plen);
	}
	if (family == 4) {
		memmove(&ifp->addr4[k], &ifp->addr4[k + 1], (n - k - 1) * sizeof(ifp->addr4[0]));
		memmove(&ifp->plen4[k], &ifp->plen4[k + 1], n - k - 1);
		ifp->n_addr4--;
		ifp->addr4[n - 1] = 0;	/* the freed slot says nothing */
		ifp->plen4[n - 1] = 0;
		bcast4_rebuild(r);
	} else {
		memmove(ifp->addr6[k], ifp->addr6[k + 1], (n - k - 1) * sizeof(ifp->addr6[0]));
		memmove(&ifp->plen6[k], &ifp->plen6[k + 1], n - k - 1);
		ifp->n_addr6--;
		memset(ifp->addr6[n - 1], 0, sizeof(ifp->addr6[0]));	/* the freed slot says nothing */
		ifp->plen6[n - 1] = 0;
	}
	gateways_follow(r, family);
	return 0;
}

/*
 * Whether @gw can be a next hop: a unicast address that is not the
 * router's own, nor (IPv4) a broadcast address of one of its subnets, nor
 * an IPv4-mapped one. Else the router would ask the link for itself or for
 * everyone.
 */
static bool gateway_ok(const struct rxp_router *r, uint8_t family, const uint8_t *gw)
{
	uint32_t a;

	if (!unicast_addr(family, gw))
		return false;
	if (family == 4) {
		memcpy(&a, gw, 4);
		return !rxp_router_in_src4_set(r, a);
	}
	if (rxp_ip6_is_v4mapped(gw))
		return false;
	for (unsigned i = 0; i < r->n_ifs; i++)
		for (unsigned k = 0; k < r->ifs[i].n_addr6; k++)
			if (!memcmp(r->ifs[i].addr6[k], gw, 16))
				return false;
	return true;
}

int router_path_nh(struct rxp_router *r, uint8_t vrf, uint8_t family, const uint8_t *gw, int ifidx)
{
	bool if_found = gw && ifidx < 0;

	/* every interface has fe80::/64: a link-local gateway says nothing of which */
	if (family == 6 && gw && gw[0] == 0xfe && (gw[1] & 0xc0) == 0x80 && ifidx < 0)
		return -EDESTADDRREQ;
	if (gw && !gateway_ok(r, family, gw))
		return -ENXIO;
	if (vrf >= RXP_VRF_MAX || !r->vrfs[vrf].used)
		return -EINVAL;
	if (if_found)
		ifidx = if_reaching(r, vrf, family, gw);
	if (ifidx < 0)
		return ifidx;
	if ((unsigned)ifidx >= r->n_ifs)
		return -EINVAL;
	/* a given interface says where the next hop is: its own table */
	return router_nh_get(r, gw ? RXP_NH_KIND_GATEWAY : RXP_NH_KIND_CONNECTED, family,
			     if_found ? vrf : r->ifs[ifidx].vrf, (uint16_t)ifidx, gw, if_found);
}

int router_route_free(struct rxp_router *r, uint8_t vrf, uint8_t family, const uint8_t *prefix,
		      uint8_t plen)
{
	if (vrf >= RXP_VRF_MAX || !r->vrfs[vrf].used)
		return -EINVAL;
	if (route_is_local(r, vrf, family, prefix, plen))
		return -EADDRINUSE;
	if (route_is_connected(r, vrf, family, prefix, plen))
		return -EISCONN;
	return 0;
}

int rxp_router_add_route(struct rxp_router *r, unsigned vrf, uint8_t family, const uint8_t *prefix,
			 uint8_t plen, const uint8_t *gw, int ifidx)
{
	int nh, ret;

	if (vrf >= RXP_VRF_MAX)
		return -EINVAL;
	nh = router_path_nh(r, (uint8_t)vrf, family, gw, ifidx);
	if (nh < 0)
		return nh;
	ret = router_route_free(r, (uint8_t)vrf, family, prefix, plen);
	if (ret == -EISCONN) {
		const struct rxp_route *rt = route_find(r, (uint8_t)vrf, family, prefix, plen);

		/* the same route said again (dev, no gateway) is no change; any other is refused */
		if (!gw && rt && (uint32_t)nh == rt->nh)
			return 0;
	}
	if (ret)
		return ret;
	return router_route_set(r, (uint8_t)vrf, family, prefix, plen, (uint32_t)nh);
}

int rxp_router_add_route_reject(struct rxp_router *r, unsigned vrf, uint8_t family,
				const uint8_t *prefix, uint8_t plen, uint8_t kind)
{
	int nh;

	if (!rxp_nh_kind_rejects(kind) || kind > RXP_NH_KIND_PROHIBIT || vrf >= RXP_VRF_MAX)
		return -EINVAL;
	nh = router_route_free(r, (uint8_t)vrf, family, prefix, plen);
	if (nh)
		return nh;
	nh = router_nh_get(r, kind, family, 0, 0, NULL, false);	/* one per kind and family, shared */
	if (nh < 0)
		return nh;
	return router_route_set(r, (uint8_t)vrf, family, prefix, plen, (uint32_t)nh);
}

int rxp_router_add_neigh(struct rxp_router *r, int ifidx, uint8_t family, const uint8_t *addr,
			 const uint8_t mac[6])
{
	struct rxp_neigh *n;

	if (ifidx < 0 || (unsigned)ifidx >= r->n_ifs)
		return -EINVAL;
	n = rxp_neigh_lookup(&r->neigh, (uint16_t)ifidx, family, addr);
	if (!n)
		n = rxp_neigh_create(&r->neigh, (uint16_t)ifidx, family, addr, RXP_NEIGH_STATIC);
	if (!n)
		return -ENOSPC;
	n->state = RXP_NEIGH_STATIC;
	memcpy(n->mac, mac, 6);
	return 0;
}

int rxp_router_set_mtu(struct rxp_router *r, int ifidx, uint32_t mtu)
{
	if (ifidx < 0 || (unsigned)ifidx >= r->n_ifs || mtu < 68 || mtu > 65535)
		return -EINVAL;
	r->ifs[ifidx].mtu = mtu;
	/* the cached adjacencies carry the old MTU: make them look again */
	rxp_neigh_gen_bump(&r->neigh);
	return 0;
}

int rxp_router_set_workers(struct rxp_router *r, unsigned n_workers)
{
	int ret;

	if (r->path_pkts && n_workers > (r->n_workers ? r->n_workers : 1))
		return -EBUSY;	/* the groups' counters are sized by the workers they were made with */
	r->n_workers = n_workers;
	if (n_workers <= 1 || r->shared)
		return 0;
	ret = pthread_spin_init(&r->neigh_lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		return -ret;
	r->shared = true;
	return 0;
}
