/* SPDX-License-Identifier: MIT */
/*
 * Router commands on the running datapath: one table with, for each kind,
 * how it applies, what puts back what it is about to change (a reload's
 * take-back, ctl's all-or-nothing), and what it is about (reload's key:
 * commands about one thing share one). Runs on the datapath thread,
 * between polls. A configured route or neighbour over the kernel's keeps
 * the kernel's aside (shadowed) and puts it back when it goes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dataplane.h"
#include "dp_filter.h"
#include "dp_vrf.h"
#include "rxpath/proto.h"

const char *dp_cmd_strerror(int ret)
{
	switch (ret) {
	case -EEXIST: return "already there (an address can be on one port only)";
	case -EADDRNOTAVAIL: return "not a unicast address a port can have";
	case -EDESTADDRREQ: return "a link-local gateway needs 'dev PORT': every port has one";
	case -ENOSPC: return "table full";
	case -ENETUNREACH: return "no interface has an address on the gateway's subnet; add one first, or give dev";
	case -ENOENT: return "no such entry";
	case -EPERM: return "the link-local address stays: Neighbor Discovery needs it";
	case -EADDRINUSE: return "that is the host route of one of the router's own addresses; addr del removes it";
	case -EISCONN: return "that is the connected route of one of the router's addresses; it comes and goes with the address (addr add/del)";
	case -ENOTUNIQ: return "another port is on that subnet already; a subnet is on one port only";
	case -ENXIO: return "not an address a next hop can have: the router's own, a broadcast, multicast, unspecified or loopback address";
	case -EBUSY: return "a configured route has the subnet's prefix or the address's own (/32, /128); route del it first";
	case -ENOMEM: return "out of memory";
	default: return strerror(-ret);
	}
}

struct subject {
	char text[2 * INET6_ADDRSTRLEN + 16];
};

/* What a failed command was about, for its message: " (10.0.1.1/24)", or "". */
static struct subject cmd_subject(const struct dp_cmd *c)
{
	struct subject s = { "" };
	char a[INET6_ADDRSTRLEN], gw[INET6_ADDRSTRLEN];

	if (c->kind != DP_CMD_ADDR_ADD && c->kind != DP_CMD_ADDR_DEL && c->kind != DP_CMD_ROUTE_ADD &&
	    c->kind != DP_CMD_ROUTE_DEL && c->kind != DP_CMD_NEIGH_ADD && c->kind != DP_CMD_NEIGH_DEL)
		return s;
	if (!inet_ntop(c->family == 4 ? AF_INET : AF_INET6, c->addr, a, sizeof(a)))
		return s;
	if (c->kind == DP_CMD_NEIGH_ADD || c->kind == DP_CMD_NEIGH_DEL || c->kind == DP_CMD_ADDR_DEL) {
		snprintf(s.text, sizeof(s.text), " (%s)", a);
	} else if (c->kind == DP_CMD_ROUTE_ADD && c->has_gw &&
		   inet_ntop(c->family == 4 ? AF_INET : AF_INET6, c->gw, gw, sizeof(gw))) {
		snprintf(s.text, sizeof(s.text), " (%s/%u via %s)", a, c->plen, gw);
	} else {
		snprintf(s.text, sizeof(s.text), " (%s/%u)", a, c->plen);
	}
	return s;
}

/* The table of a route command (its vrf word), or -ENOENT for a VRF no one added. */
static int route_vrf(const struct dp *dp, const struct dp_cmd *c)
{
	return rxp_router_vrf_by_name(dp->router, c->vrf);
}

static bool is_neigh_cmd(const struct dp_cmd *c)
{
	return c->kind == DP_CMD_NEIGH_ADD || c->kind == DP_CMD_NEIGH_DEL;
}

/*
 * The slot of the kernel's route or neighbour that a configured one replaced
 * for @c's prefix (route commands) or address and port (neighbour commands), or -1.
 */
static int shadowed_find(const struct dp *dp, const struct dp_cmd *c)
{
	for (unsigned i = 0; i < dp->n_shadowed; i++) {
		const struct dp_cmd *k = &dp->shadowed[i];

		if (is_neigh_cmd(k) == is_neigh_cmd(c) && k->family == c->family &&
		    k->plen == c->plen && !memcmp(k->addr, c->addr, 16) && !strcmp(k->vrf, c->vrf) &&
		    (!is_neigh_cmd(c) || !strcmp(k->dev, c->dev)))
			return (int)i;
	}
	return -1;
}

static void shadowed_forget(struct dp *dp, const struct dp_cmd *c)
{
	int i = shadowed_find(dp, c);

	if (i >= 0)
		dp->shadowed[i] = dp->shadowed[--dp->n_shadowed];
}

/* Keeps @k, a kernel route's or neighbour's add, for when the configured one over it goes. */
static void shadowed_keep(struct dp *dp, const struct dp_cmd *k)
{
	int i = shadowed_find(dp, k);

	if (i < 0 && dp->n_shadowed == dp->shadowed_cap) {
		unsigned cap = dp->shadowed_cap ? 2 * dp->shadowed_cap : 16;
		struct dp_cmd *more = realloc(dp->shadowed, cap * sizeof(*more));

		if (!more)
			return;	/* out of memory: that kernel route will not come back by itself */
		dp->shadowed = more;
		dp->shadowed_cap = cap;
	}
	dp->shadowed[i >= 0 ? i : (int)dp->n_shadowed++] = *k;
}

/* After @c deleted a configured route or neighbour: the kernel's it replaced comes back. */
static void shadowed_restore(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	int i = shadowed_find(dp, c);
	struct dp_cmd k;

	if (i < 0)
		return;
	k = dp->shadowed[i];
	dp->shadowed[i] = dp->shadowed[--dp->n_shadowed];
	if (dp_apply_cmd(dp, &k, err, errlen))
		dp_log(dp, "%s", err);
	err[0] = '\0';
}

/* The index + 1 in @names (@n of them, at most @max) of @name, added if new; 0 when full. */
static uint8_t name_slot(char (*names)[RXP_PORT_NAME_MAX], uint8_t *n, unsigned max, const char *name)
{
	unsigned d;

	for (d = 0; d < *n && strcmp(names[d], name); d++)
		;
	if (d == *n && d < max)
		snprintf(names[(*n)++], RXP_PORT_NAME_MAX, "%s", name);
	return d < *n ? (uint8_t)(d + 1) : 0;
}

/* A multipath route's group @g, in table @vrf, as the next hops of its add. */
static void paths_of(const struct rxp_router *r, unsigned vrf, const struct rxp_nh_group *g,
		     struct dp_route_paths *ps)
{
	for (unsigned p = 0; p < g->n_paths; p++) {
		const struct rxp_nexthop *nh = &r->nh[g->nh[p]];
		struct dp_path *dp_p = &ps->path[ps->n++];
		const char *dev = r->ifs[nh->ifidx].name;
		unsigned d;

		dp_p->has_gw = nh->kind == RXP_NH_KIND_GATEWAY;
		memcpy(dp_p->gw, nh->gw, 16);
		dp_p->weight = g->weight[p];
		if (nh->if_found && nh->vrf != vrf)	/* a gateway found in another table: that one */
			dp_p->vrf = name_slot(ps->vrfs, &ps->n_vrfs, DP_PATH_VRFS, r->vrfs[nh->vrf].name);
		if (nh->if_found)
			continue;	/* found from the subnet, and found again so */
		for (d = 0; d < ps->n_devs && strcmp(ps->devs[d], dev); d++)
			;
		if (d == ps->n_devs && d < DP_PATH_DEVS)
			snprintf(ps->devs[ps->n_devs++], sizeof(ps->devs[0]), "%s", dev);
		dp_p->dev = d < ps->n_devs ? (uint8_t)(d + 1) : 0;
	}
}

/* The route @rt as the add that would make it again. */
static struct dp_cmd route_cmd(const struct rxp_router *r, const struct rxp_route *rt)
{
	const struct rxp_nexthop *nh = rxp_route_nh(r, rt);
	struct dp_cmd k = { .kind = DP_CMD_ROUTE_ADD, .kernel = rt->origin == RXP_ROUTE_KERNEL,
			    .family = rt->family, .plen = rt->plen };

	memcpy(k.addr, rt->prefix, 16);
	snprintf(k.vrf, sizeof(k.vrf), "%s", r->vrfs[rt->vrf].name);
	if (!nh) {
		paths_of(r, rt->vrf, rxp_router_group(r, rt->nh), &k.paths);
		return k;
	}
	if (rxp_nh_kind_rejects(nh->kind)) {
		k.route_type = nh->kind;
		return k;
	}
	/* a gateway whose port was found from its subnet is given the same way: it follows it */
	if (!nh->if_found)
		snprintf(k.dev, sizeof(k.dev), "%s", r->ifs[nh->ifidx].name);
	else if (nh->vrf != rt->vrf)
		snprintf(k.nh_vrf, sizeof(k.nh_vrf), "%s", r->vrfs[nh->vrf].name);
	k.has_gw = nh->kind == RXP_NH_KIND_GATEWAY;
	memcpy(k.gw, nh->gw, 16);
	return k;
}

/*
 * The MTU of port interface @ifidx changed: its VLAN sub-ports follow, each
 * within it (told through dp_log(), and to the host paths); one configured above
 * it gets its own back when the port's is raised again.
 */
static void vlans_follow(struct dp *dp, int ifidx)
{
	struct rxp_router *r = dp->router;
	const struct rxp_l3if *parent = &r->ifs[ifidx];

	for (unsigned i = 0; i < r->n_ifs; i++) {
		const struct rxp_l3if *ifp = &r->ifs[i];
		uint32_t mtu;

		if (ifp->port != parent->port || !ifp->vlan)
			continue;
		mtu = dp_if_mtu(dp, (int)i);
		if (mtu == ifp->mtu || rxp_router_set_mtu(r, (int)i, mtu))
			continue;
		dp_log(dp, "%s: mtu %u (%s, the port its frames leave by, has %u)", ifp->name, mtu,
		       parent->name, parent->mtu);
		dp_host_mirror(dp, (int)i, &(struct dp_cmd){ .kind = DP_CMD_MTU, .where = "mtu" });
	}
}

/* Does @rt have the gateway and port a `route del ... via GW dev PORT` names (@ifidx, or -1)? */
static bool route_del_matches(const struct rxp_router *r, const struct rxp_route *rt,
			      const struct dp_cmd *c, int ifidx)
{
	const struct rxp_nexthop *nh = rxp_route_nh(r, rt);

	/* a multipath route: one of its next hops named is enough */
	if (!nh) {
		const struct rxp_nh_group *g = rxp_router_group(r, rt->nh);

		for (unsigned p = 0; p < g->n_paths; p++) {
			const struct rxp_nexthop *m = &r->nh[g->nh[p]];

			if ((!c->has_gw || (m->kind == RXP_NH_KIND_GATEWAY &&
					    !memcmp(m->gw, c->gw, c->family == 4 ? 4 : 16))) &&
			    (ifidx < 0 || m->ifidx == ifidx))
				return true;
		}
		return false;
	}

	if (c->has_gw && (nh->kind != RXP_NH_KIND_GATEWAY ||
			  memcmp(nh->gw, c->gw, c->family == 4 ? 4 : 16)))
		return false;
	return ifidx < 0 || (!rxp_nh_kind_rejects(nh->kind) && nh->ifidx == ifidx);
}

/* ---- each kind: apply (@ifidx: c->dev's interface, or -1), inverse, key ---- */

/* What an address or neighbour command is about: @what, the port and the address (hex). */
static void dev_addr_key(const struct dp_cmd *c, const char *what, char *key, size_t len)
{
	char hex[33];

	for (unsigned i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", c->addr[i]);
	snprintf(key, len, "%s %s %s", what, c->dev, hex);
}

static int addr_add(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	int ret = rxp_router_add_addr(dp->router, ifidx, c->family, c->addr, c->plen);

	(void)err;
	(void)errlen;
	if (!ret && c->family == 4)
		dp_nat_addr_changed(dp, NULL);	/* masquerade follows its port's address */
	return ret;
}

static int addr_del(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	int ret = rxp_router_del_addr(dp->router, ifidx, c->family, c->addr);

	(void)err;
	(void)errlen;
	if (!ret && c->family == 4)
		dp_nat_addr_changed(dp, c->addr);
	return ret == -ENOENT && c->undo ? 0 : ret;	/* a reload taking back what ctl took already */
}

static bool addr_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx, struct dp_cmd *inv)
{
	const struct rxp_l3if *ifp = ifidx >= 0 ? &dp->router->ifs[ifidx] : NULL;
	unsigned n = ifp ? (c->family == 4 ? ifp->n_addr4 : ifp->n_addr6) : 0;

	for (unsigned k = 0; k < n; k++) {
		const uint8_t *a = c->family == 4 ? (const uint8_t *)&ifp->addr4[k] : ifp->addr6[k];
		uint8_t plen = c->family == 4 ? ifp->plen4[k] : ifp->plen6[k];

		if (memcmp(a, c->addr, c->family == 4 ? 4 : 16))
			continue;
		/* there: an add of it as it is changes nothing; a del is undone by adding it back */
		if (c->kind == DP_CMD_ADDR_ADD && plen == c->plen)
			return false;
		inv->kind = DP_CMD_ADDR_ADD;
		inv->plen = plen;
		return true;
	}
	inv->kind = DP_CMD_ADDR_DEL;
	return c->kind == DP_CMD_ADDR_ADD;
}

static void addr_key(const struct dp_cmd *c, char *key, size_t len)
{
	dev_addr_key(c, "addr", key, len);
}

/* A multipath route's add; a next hop at fault is named in @err. */
static int route_add_paths(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	struct rxp_route_path paths[RXP_NH_PATHS_MAX];
	const struct dp_route_paths *ps = &c->paths;
	unsigned bad = 0;
	int ret;

	for (unsigned i = 0; i < ps->n; i++) {
		const struct dp_path *p = &ps->path[i];

		paths[i] = (struct rxp_route_path){ .has_gw = p->has_gw, .weight = p->weight, .ifidx = -1,
						    .vrf = -1 };
		memcpy(paths[i].gw, p->gw, 16);
		if (p->vrf && p->vrf <= ps->n_vrfs) {
			paths[i].vrf = rxp_router_vrf_by_name(dp->router, ps->vrfs[p->vrf - 1]);
			if (paths[i].vrf < 0) {
				snprintf(err, errlen, "%s: next hop %u: VRF '%s': no such VRF (vrf add NAME table N)",
					 c->where, i + 1, ps->vrfs[p->vrf - 1]);
				return -ENOENT;
			}
		}
		if (p->dev && p->dev <= ps->n_devs) {
			paths[i].ifidx = rxp_router_if_by_name(dp->router, ps->devs[p->dev - 1]);
			if (paths[i].ifidx < 0) {
				snprintf(err, errlen, "%s: next hop %u: '%s': no such port", c->where, i + 1,
					 ps->devs[p->dev - 1]);
				return -ENOENT;
			}
		}
	}
	ret = rxp_router_add_route_paths(dp->router, (unsigned)route_vrf(dp, c), c->family, c->addr,
					 c->plen, paths, ps->n, &bad);
	if (ret && bad < ps->n) {
		char gw[INET6_ADDRSTRLEN] = "";

		if (ps->path[bad].has_gw)
			inet_ntop(c->family == 4 ? AF_INET : AF_INET6, ps->path[bad].gw, gw, sizeof(gw));
		snprintf(err, errlen, "%s: next hop %u%s%s%s: %s%s", c->where, bad + 1, gw[0] ? " (via " : "",
			 gw, gw[0] ? ")" : "", ret == -ERANGE ? "weight out of range (1-256)" : dp_cmd_strerror(ret),
			 cmd_subject(c).text);
	}
	return ret;
}

/* A route with one gateway looked for in another table (route leaking). */
static int route_add_leak(struct dp *dp, const struct dp_cmd *c, unsigned vrf, int ifidx)
{
	struct rxp_route_path p = { .has_gw = c->has_gw, .ifidx = ifidx, .weight = 1,
				    .vrf = rxp_router_vrf_by_name(dp->router, c->nh_vrf) };
	unsigned bad;

	if (p.vrf < 0)
		return -ENOENT;
	memcpy(p.gw, c->gw, 16);
	return rxp_router_add_route_paths(dp->router, vrf, c->family, c->addr, c->plen, &p, 1, &bad);
}

static int route_add(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	struct rxp_router *r = dp->router;
	int vrf = route_vrf(dp, c);
	struct rxp_route *rt;
	struct dp_cmd under = { 0 };
	bool over_kernel;
	int ret;

	if (vrf < 0) {
		snprintf(err, errlen, "%s: VRF '%s': no such VRF (vrf add NAME table N)", c->where, c->vrf);
		return vrf;
	}
	if (c->nh_vrf[0] && rxp_router_vrf_by_name(r, c->nh_vrf) < 0) {
		snprintf(err, errlen, "%s: VRF '%s' of the gateway: no such VRF (vrf add NAME table N)",
			 c->where, c->nh_vrf);
		return -ENOENT;
	}
	rt = rxp_router_route(r, (unsigned)vrf, c->family, c->addr, c->plen);
	over_kernel = !c->kernel && rt && rt->origin == RXP_ROUTE_KERNEL;

	/* a configured route wins over the kernel's for the same prefix, which waits under it */
	if (c->kernel && rt && rt->origin != RXP_ROUTE_KERNEL) {
		shadowed_keep(dp, c);
		snprintf(err, errlen, "%s: a configured route has this prefix; it stays", c->where);
		return -EEXIST;
	}
	if (over_kernel) {
		under = route_cmd(r, rt);
		snprintf(under.where, sizeof(under.where), "sync (under a configured route)");
	}
	if (c->route_type)
		ret = rxp_router_add_route_reject(r, (unsigned)vrf, c->family, c->addr, c->plen,
						  c->route_type);
	else if (c->paths.n)
		ret = route_add_paths(dp, c, err, errlen);
	else if (c->nh_vrf[0])
		ret = route_add_leak(dp, c, (unsigned)vrf, ifidx);
	else
		ret = rxp_router_add_route(r, (unsigned)vrf, c->family, c->addr, c->plen,
					   c->has_gw ? c->gw : NULL, ifidx);
	rt = ret ? NULL : rxp_router_route(r, (unsigned)vrf, c->family, c->addr, c->plen);
	if (rt)
		rt->origin = c->kernel ? RXP_ROUTE_KERNEL : RXP_ROUTE_STATIC;
	if (rt && over_kernel)
		shadowed_keep(dp, &under);
	if (rt && c->kernel)
		shadowed_forget(dp, c);	/* nothing is over it: no copy waits */
	return ret;
}

static int route_del(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	struct rxp_router *r = dp->router;
	int vrf = route_vrf(dp, c);
	const struct rxp_route *rt;
	int ret;

	if (vrf < 0) {
		/* a reload taking back a route of a VRF it took away first: gone with it */
		if (c->undo)
			return 0;
		snprintf(err, errlen, "%s: VRF '%s': no such VRF", c->where, c->vrf);
		return vrf;
	}
	rt = rxp_router_route(r, (unsigned)vrf, c->family, c->addr, c->plen);

	if (c->kernel && rt && rt->origin != RXP_ROUTE_KERNEL) {
		shadowed_forget(dp, c);
		return 0;	/* the kernel's route went; the configured one was never replaced */
	}
	if (c->undo && !c->kernel && rt && rt->origin == RXP_ROUTE_KERNEL)
		return 0;	/* a reload taking back its route finds the kernel's: it stays */
	/*
	 * via/dev name the route to delete; a reload's or take-back's delete is
	 * of the prefix whatever it holds now, and an address's own routes are
	 * refused below with their reason
	 */
	if (rt && !c->undo && !rxp_router_route_of_addr(r, (unsigned)vrf, c->family, c->addr, c->plen) &&
	    !route_del_matches(r, rt, c, ifidx)) {
		const struct rxp_nexthop *nh = rxp_route_nh(r, rt);
		char gw[INET6_ADDRSTRLEN] = "", has[80];

		if (nh && nh->kind == RXP_NH_KIND_GATEWAY)
			inet_ntop(c->family == 4 ? AF_INET : AF_INET6, nh->gw, gw, sizeof(gw));
		if (!nh)
			snprintf(has, sizeof(has), "a multipath route, and none of its next hops is that");
		else if (rxp_nh_kind_rejects(nh->kind))
			snprintf(has, sizeof(has), "a reject route");
		else
			snprintf(has, sizeof(has), "%s%s%sdev %s", gw[0] ? "via " : "", gw,
				 gw[0] ? " " : "", r->ifs[nh->ifidx].name);
		snprintf(err, errlen, "%s: the route to that prefix is %s; nothing deleted",
			 c->where,
			 has);
		return -ESRCH;
	}
	ret = rxp_router_del_route(r, (unsigned)vrf, c->family, c->addr, c->plen);
	if (c->kernel)
		shadowed_forget(dp, c);
	else if (!ret)
		shadowed_restore(dp, c, err, errlen);
	/*
	 * an address's connected route the file also said: it stays with its
	 * address; one gone already (ctl took it): as the reload wants
	 */
	if ((ret == -EISCONN || ret == -ENOENT) && c->undo)
		ret = 0;
	return ret;
}

static bool route_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx, struct dp_cmd *inv)
{
	int vrf = route_vrf(dp, c);
	const struct rxp_route *rt;

	(void)ifidx;
	if (vrf < 0)
		return false;	/* refused when applied: nothing to take back */
	rt = rxp_router_route(dp->router, (unsigned)vrf, c->family, c->addr, c->plen);
	if (rt && rt->nh == RXP_NH_LOCAL)
		return false;	/* an address's own: ADDR commands move it */
	if (rt && rt->origin == RXP_ROUTE_KERNEL && !c->kernel) {
		/* the kernel's, under what @c puts there: it comes back when that goes */
		inv->kind = DP_CMD_ROUTE_DEL;
		inv->dev[0] = '\0';
		return c->kind == DP_CMD_ROUTE_ADD;
	}
	if (rt) {
		char where[DP_WHERE_LEN];

		memcpy(where, inv->where, sizeof(where));
		*inv = route_cmd(dp->router, rt);
		inv->undo = true;
		memcpy(inv->where, where, sizeof(where));
		return true;
	}
	inv->kind = DP_CMD_ROUTE_DEL;
	inv->dev[0] = '\0';
	return c->kind == DP_CMD_ROUTE_ADD;
}

/* A route is about its prefix, whatever its next hop. */
static void route_key(const struct dp_cmd *c, char *key, size_t len)
{
	char hex[33];

	for (unsigned i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", c->addr[i]);
	snprintf(key, len, "route %s %u %s/%u", c->vrf[0] ? c->vrf : "default", c->family, hex, c->plen);
}

static int neigh_add(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	const struct rxp_neigh *n = rxp_neigh_lookup(&dp->router->neigh, (uint16_t)ifidx,
						     c->family, c->addr);
	struct dp_cmd under = { 0 };
	bool over_kernel = !c->kernel && n && n->from_kernel;
	int ret;

	if (over_kernel) {
		/* the kernel's, replaced by a configured one: it comes back when that goes */
		under = *c;
		under.kernel = true;
		under.undo = false;
		memcpy(under.mac, n->mac, 6);
		snprintf(under.where, sizeof(under.where), "sync (under a configured neighbour)");
	}
	/* a reload putting the kernel's back over the configured one it made */
	if (c->undo && c->kernel)
		rxp_stack_neigh_del(&dp->stack, ifidx, c->family, c->addr, false);
	ret = rxp_stack_neigh_set(&dp->stack, ifidx, c->family, c->addr, c->mac, c->kernel);
	if (ret == -EEXIST) {
		shadowed_keep(dp, c);
		snprintf(err, errlen, "%s: a configured neighbour has this address; it stays",
			 c->where);
		return ret;
	}
	if (!ret && over_kernel)
		shadowed_keep(dp, &under);
	if (!ret && c->kernel)
		shadowed_forget(dp, c);
	return ret;
}

static int neigh_del(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	const struct rxp_neigh *n = rxp_neigh_lookup(&dp->router->neigh, (uint16_t)ifidx,
						     c->family, c->addr);
	int ret;

	if (c->undo && !c->kernel && n && n->from_kernel)
		return 0;	/* a reload taking back its neighbour finds the kernel's */
	ret = rxp_stack_neigh_del(&dp->stack, ifidx, c->family, c->addr, c->kernel);
	if (c->kernel)
		shadowed_forget(dp, c);
	else if (!ret && n)
		shadowed_restore(dp, c, err, errlen);
	return ret == -ENOENT && c->undo ? 0 : ret;
}

static bool neigh_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx, struct dp_cmd *inv)
{
	const struct rxp_neigh *n = ifidx >= 0 ?
		rxp_neigh_lookup(&dp->router->neigh, (uint16_t)ifidx, c->family, c->addr) : NULL;

	if (n && n->state == RXP_NEIGH_STATIC) {
		inv->kind = DP_CMD_NEIGH_ADD;
		inv->kernel = n->from_kernel;
		memcpy(inv->mac, n->mac, 6);
		return true;
	}
	inv->kind = DP_CMD_NEIGH_DEL;	/* a learned one is learned again */
	return c->kind == DP_CMD_NEIGH_ADD;
}

static void neigh_key(const struct dp_cmd *c, char *key, size_t len)
{
	dev_addr_key(c, "neigh", key, len);
}

static int mtu_set(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	struct rxp_router *r = dp->router;
	const struct rxp_l3if *ifp = &r->ifs[ifidx];
	struct rxp_port *port = &dp->ports[ifp->port];
	uint32_t max = dp_if_max_mtu(dp, ifp->vlan), dev, mtu;
	uint32_t was_cfg = dp->mtu_cfg[ifidx];
	int ret;

	/* the device's as it is now (it may have changed; mtu_follow notices that on its own) */
	if (rxp_port_device_mtu(port, &dev))
		dev = port->mtu;
	/* 0: the default */
	mtu = c->mtu ? c->mtu : dp_if_default_mtu(dp, ifp->port, ifp->vlan);

	if (mtu > max) {
		snprintf(err, errlen, "%s: mtu %u: larger than the %u bytes a %u-byte frame carries; raise --max-frame",
			 c->where, mtu, max, dp->pool->max_frame);
		return -EINVAL;
	}
	/* the kernel drops what its device's MTU does not carry, without a word */
	if (dev && mtu > dev) {
		snprintf(err, errlen, "%s: mtu %u: larger than the %u-byte MTU of %s's interface %s, "
			 "which would drop the larger packets unseen; raise that first (ip link set dev "
			 "%s mtu %u)", c->where, mtu, dev, port->name, port->dev, port->dev,
			 mtu);
		return -EINVAL;
	}
	/* 0: it follows the device's; a VLAN sub-port's stays within its port's either way */
	dp->mtu_cfg[ifidx] = c->mtu;
	ret = rxp_router_set_mtu(r, ifidx, dp_if_mtu(dp, ifidx));
	if (ret) {
		dp->mtu_cfg[ifidx] = was_cfg;
		return ret;
	}
	if (!ifp->vlan)
		vlans_follow(dp, ifidx);
	if (c->mtu && ifp->mtu < mtu) {
		/* as a Linux VLAN device's: held to the port's (Linux refuses it; a reload's order must not matter) */
		snprintf(err, errlen, "warning: %s: mtu %u held to %u, the MTU of %s, the port %s's "
			 "frames leave by, until that is raised", c->where, mtu, ifp->mtu,
			 r->ifs[r->port_if[ifp->port]].name, ifp->name);
		dp_log(dp, "%s", err);
	} else if (mtu < RXP_IP6_MIN_MTU) {
		/* taken, with a warning for the log and for whoever asked (ctl) */
		snprintf(err, errlen, "warning: %s: mtu %u is below the %u bytes every IPv6 link "
			 "carries (RFC 8200 5): IPv6 packets over %u bytes leaving %s are answered "
			 "with Packet Too Big, which hosts ignore below %u (RFC 8201); keep %u or "
			 "more where IPv6 is routed", c->where, mtu, RXP_IP6_MIN_MTU, mtu,
			 c->dev, RXP_IP6_MIN_MTU, RXP_IP6_MIN_MTU);
		dp_log(dp, "%s", err);
	}
	return 0;
}

static bool mtu_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx, struct dp_cmd *inv)
{
	(void)c;
	if (ifidx < 0)
		return false;
	inv->mtu = dp->mtu_cfg[ifidx];
	return true;
}

/* What a per-port setting is about: its word and the port. */
static void port_key(const struct dp_cmd *c, const char *what, char *key, size_t len)
{
	snprintf(key, len, "%s %s", what, c->dev);
}

static void mtu_key(const struct dp_cmd *c, char *key, size_t len)
{
	port_key(c, "mtu", key, len);
}

static int icmp_rate_set(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	(void)ifidx;
	(void)err;
	(void)errlen;
	rxp_stack_set_icmp_rate(&dp->stack, c->rate, c->burst);
	return 0;
}

static bool icmp_rate_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx, struct dp_cmd *inv)
{
	(void)c;
	(void)ifidx;
	rxp_stack_icmp_rate(&dp->stack, &inv->rate, &inv->burst);
	return true;
}

static void icmp_rate_key(const struct dp_cmd *c, char *key, size_t len)
{
	(void)c;
	snprintf(key, len, "icmp");
}

static int host_set(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	return dp_host_apply(dp, ifidx, c, err, errlen);	/* writes its own message */
}

static bool host_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx, struct dp_cmd *inv)
{
	const struct rxp_l3if *ifp = ifidx >= 0 ? &dp->router->ifs[ifidx] : NULL;
	const struct rxp_host *h = ifp && !ifp->vlan ? dp->stack.host[ifp->port] : NULL;

	(void)c;
	if (!ifp)
		return false;
	inv->host_on = h != NULL;
	inv->host_gro = h ? h->gro : true;
	snprintf(inv->host_name, sizeof(inv->host_name), "%s", h ? h->tap.name : "");
	return true;
}

static void host_key(const struct dp_cmd *c, char *key, size_t len)
{
	port_key(c, "host", key, len);
}

static int redirects_set(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err,
			 size_t errlen)
{
	(void)err;
	(void)errlen;
	/* read by the workers' slow path only; a stale value costs one redirect more or less */
	dp->router->ifs[ifidx].no_redirects = !c->redirects;
	return 0;
}

static bool redirects_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx,
			      struct dp_cmd *inv)
{
	(void)c;
	if (ifidx < 0)
		return false;
	inv->redirects = !dp->router->ifs[ifidx].no_redirects;
	return true;
}

static void redirects_key(const struct dp_cmd *c, char *key, size_t len)
{
	port_key(c, "redirects", key, len);
}

static int neigh_ageing_set(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err,
			    size_t errlen)
{
	(void)ifidx;
	(void)err;
	(void)errlen;
	/* entries learned from now on; read by the timer owner under the table's lock */
	rxp_stack_neigh_set_ageing(&dp->stack, (uint64_t)c->seconds * 1000000000ull);
	return 0;
}

static bool neigh_ageing_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx,
				 struct dp_cmd *inv)
{
	(void)c;
	(void)ifidx;
	inv->seconds = (uint32_t)(dp->router->neigh_reachable_ns / 1000000000ull);
	return true;
}

static void neigh_ageing_key(const struct dp_cmd *c, char *key, size_t len)
{
	(void)c;
	snprintf(key, len, "neigh ageing");
}

static int ra_set(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	rxp_stack_set_ra(&dp->stack, ifidx, c->ra_on);
	return 0;
}

static bool ra_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx, struct dp_cmd *inv)
{
	(void)c;
	if (ifidx < 0)
		return false;
	inv->ra_on = dp->router->ifs[ifidx].ra;
	return true;
}

static void ra_key(const struct dp_cmd *c, char *key, size_t len)
{
	port_key(c, "ra", key, len);
}

static int source_route_set(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err,
			    size_t errlen)
{
	(void)ifidx;
	(void)err;
	(void)errlen;
	/* read by the workers' slow path only */
	dp->router->no_source_route = !c->source_route;
	return 0;
}

static bool source_route_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx,
				 struct dp_cmd *inv)
{
	(void)c;
	(void)ifidx;
	inv->source_route = !dp->router->no_source_route;
	return true;
}

static void source_route_key(const struct dp_cmd *c, char *key, size_t len)
{
	(void)c;
	snprintf(key, len, "source-route");
}

/* The filter's, set's and conntrack's kinds live with their state (dp_filter.c). */
static int filter_apply(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	(void)ifidx;
	return dp_filter_apply(dp, c, err, errlen);
}

static bool filter_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx, struct dp_cmd *inv)
{
	(void)ifidx;
	return dp_filter_inverse(dp, c, inv);
}

/* NAT's kinds live with its state (dp_nat.c). */
static int nat_apply(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	(void)ifidx;
	return dp_nat_apply(dp, c, err, errlen);
}

static bool nat_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx, struct dp_cmd *inv)
{
	(void)ifidx;
	return dp_nat_inverse(dp, c, inv);
}

/* ---- the table ---- */

struct cmd_kind {
	/*
	 * Applies @c. Returns 0 (with a warning in @err, or @err empty) or
	 * -errno; @err empty on error: the caller names the error.
	 */
	int (*apply)(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen);
	/* Writes to @inv (a copy of @c, marked undo) what puts back what @c changes. Returns false: nothing to. */
	bool (*inverse)(struct dp *dp, const struct dp_cmd *c, int ifidx, struct dp_cmd *inv);
	/* Writes what @c is about: commands about one thing share a key. */
	void (*key)(const struct dp_cmd *c, char *key, size_t len);
};

static const struct cmd_kind kinds[] = {
	[DP_CMD_ADDR_ADD] = { addr_add, addr_inverse, addr_key },
	[DP_CMD_ADDR_DEL] = { addr_del, addr_inverse, addr_key },
	[DP_CMD_ROUTE_ADD] = { route_add, route_inverse, route_key },
	[DP_CMD_ROUTE_DEL] = { route_del, route_inverse, route_key },
	[DP_CMD_NEIGH_ADD] = { neigh_add, neigh_inverse, neigh_key },
	[DP_CMD_NEIGH_DEL] = { neigh_del, neigh_inverse, neigh_key },
	[DP_CMD_MTU] = { mtu_set, mtu_inverse, mtu_key },
	[DP_CMD_ICMP_RATE] = { icmp_rate_set, icmp_rate_inverse, icmp_rate_key },
	[DP_CMD_HOST] = { host_set, host_inverse, host_key },
	[DP_CMD_REDIRECTS] = { redirects_set, redirects_inverse, redirects_key },
	[DP_CMD_NEIGH_AGEING] = { neigh_ageing_set, neigh_ageing_inverse, neigh_ageing_key },
	[DP_CMD_RA] = { ra_set, ra_inverse, ra_key },
	[DP_CMD_SOURCE_ROUTE] = { source_route_set, source_route_inverse, source_route_key },
	[DP_CMD_FILTER_ADD] = { filter_apply, filter_inverse, dp_filter_key },
	[DP_CMD_FILTER_DEL] = { filter_apply, filter_inverse, dp_filter_key },
	[DP_CMD_FILTER_FLUSH] = { filter_apply, filter_inverse, dp_filter_key },
	[DP_CMD_FILTER_RESTORE] = { filter_apply, filter_inverse, dp_filter_key },
	[DP_CMD_FILTER_POLICY] = { filter_apply, filter_inverse, dp_filter_key },
	[DP_CMD_SET_ADD] = { filter_apply, filter_inverse, dp_filter_key },
	[DP_CMD_SET_DEL] = { filter_apply, filter_inverse, dp_filter_key },
	[DP_CMD_CT_TIMEOUT] = { filter_apply, filter_inverse, dp_filter_key },
	[DP_CMD_CT_LIBERAL] = { filter_apply, filter_inverse, dp_filter_key },
	[DP_CMD_CT_LOOSE] = { filter_apply, filter_inverse, dp_filter_key },
	[DP_CMD_NAT_ADD] = { nat_apply, nat_inverse, dp_nat_key },
	[DP_CMD_NAT_DEL] = { nat_apply, nat_inverse, dp_nat_key },
	[DP_CMD_NAT_FLUSH] = { nat_apply, nat_inverse, dp_nat_key },
	[DP_CMD_NAT_RESTORE] = { nat_apply, nat_inverse, dp_nat_key },
	[DP_CMD_NAT_FILTERING] = { nat_apply, nat_inverse, dp_nat_key },
	[DP_CMD_NAT_TIMEOUT] = { nat_apply, nat_inverse, dp_nat_key },
	[DP_CMD_VRF_ADD] = { dp_vrf_apply, dp_vrf_inverse, dp_vrf_key },
	[DP_CMD_VRF_DEL] = { dp_vrf_apply, dp_vrf_inverse, dp_vrf_key },
	[DP_CMD_PORT_VRF] = { dp_vrf_apply, dp_vrf_inverse, dp_vrf_key },
};
_Static_assert(RXP_ARRAY_SIZE(kinds) == DP_CMD_KINDS, "a command kind without its entry");

void dp_cmd_key(const struct dp_cmd *c, char *key, size_t len)
{
	kinds[c->kind].key(c, key, len);
}

bool dp_cmd_inverse(struct dp *dp, const struct dp_cmd *c, struct dp_cmd *inv)
{
	struct rxp_router *r = dp->router;
	int ifidx = c->dev[0] && r ? rxp_router_if_by_name(r, c->dev) : -1;

	if (!r)
		return false;
	*inv = *c;
	inv->undo = true;
	inv->kernel = false;
	snprintf(inv->where, sizeof(inv->where), "undo of %.80s", c->where);
	return kinds[c->kind].inverse(dp, c, ifidx, inv);
}

int dp_apply_cmd(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	int ifidx = -1, ret;

	err[0] = '\0';
	if (c->dev[0]) {
		ifidx = rxp_router_if_by_name(dp->router, c->dev);
		if (ifidx < 0) {
			snprintf(err, errlen, "%s: '%s': no such port", c->where, c->dev);
			return -ENOENT;
		}
	}
	ret = kinds[c->kind].apply(dp, c, ifidx, err, errlen);
	if (ret && !err[0])
		snprintf(err, errlen, "%s: %s%s", c->where, dp_cmd_strerror(ret),
			 cmd_subject(c).text);
	else if (!ret)
		dp_host_mirror(dp, ifidx, c);	/* a port's TAP follows its addresses and MTU */
	return ret;
}
