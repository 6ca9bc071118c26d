/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/clock.h"
#include "dataplane.h"
#include "rxpath/proto.h"
#include "workers.h"

#define ROUTES4_MAX (1u << 20)
#define ROUTES6_MAX (1u << 17)
#define IP_MTU_DEFAULT 1500u

/*
 * The most an interface's MTU can be (@vlan: a sub-port, whose tag takes
 * room): what a frame of the pool carries.
 */
static uint32_t if_max_mtu(const struct dp *dp, uint16_t vlan)
{
	return dp->pool->max_frame - RXP_ETH_HLEN - (vlan ? RXP_VLAN_HLEN : 0u);
}

/*
 * An interface's MTU unless configured: its device's, as Linux gives its
 * VLAN devices their parent's (a port without a device, sim or pcap, has
 * 1500, Ethernet's), within what a frame of the pool carries.
 */
uint32_t dp_if_default_mtu(const struct dp *dp, uint16_t port, uint16_t vlan)
{
	uint32_t dev = dp->ports[port].mtu;

	return RXP_MIN(dev ? dev : IP_MTU_DEFAULT, if_max_mtu(dp, vlan));
}

void dp_log(const struct dp *dp, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!dp->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	dp->log(line);
}

void dp_config_default(struct dp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pool.max_frame = RXP_FRAME_DEFAULT;
	cfg->pool.rx_offset = 2;
	cfg->tuning = rxp_rx_tuning_default();
}

void dp_config_free(struct dp_config *cfg)
{
	free(cfg->cmds);
	cfg->cmds = NULL;
	cfg->n_cmds = cfg->cmds_cap = 0;
}

int dp_config_add_cmd(struct dp_config *cfg, const struct dp_cmd *cmd)
{
	if (cfg->n_cmds == cfg->cmds_cap) {
		unsigned cap = cfg->cmds_cap ? cfg->cmds_cap * 2 : 64;
		struct dp_cmd *c = realloc(cfg->cmds, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		cfg->cmds = c;
		cfg->cmds_cap = cap;
	}
	cfg->cmds[cfg->n_cmds++] = *cmd;
	return 0;
}

bool dp_config_has_name(const struct dp_config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->n_ports; i++)
		if (!strcmp(cfg->ports[i].name, name))
			return true;
	for (unsigned i = 0; i < cfg->n_vlans; i++)
		if (!strcmp(cfg->vlans[i].name, name))
			return true;
	return false;
}

/* "vlan:parent=p0,id=100": a VLAN sub-port, an L3 interface on its parent. */
static int add_vlan(struct dp_config *cfg, const char *name, const char *args, char *err,
		    size_t errlen)
{
	struct rxp_args a;
	const char *parent;
	uint32_t id = 0;
	struct dp_vlan_config *v;
	bool parent_known = false;

	if (rxp_args_parse(&a, args, err, errlen))
		return -EINVAL;
	parent = rxp_args_get(&a, "parent");
	if (rxp_args_u32(&a, "id", 1, 4094, &id, err, errlen))
		return -EINVAL;
	if (!parent || !id) {
		snprintf(err, errlen, "a VLAN sub-port needs parent=PORT and id=1..4094");
		return -EINVAL;
	}
	if (rxp_args_check_unused(&a, "parent, id", err, errlen))
		return -EINVAL;
	for (unsigned i = 0; i < cfg->n_ports; i++)
		parent_known |= !strcmp(cfg->ports[i].name, parent);
	if (!parent_known) {
		snprintf(err, errlen, "parent=%s: no such port (add the port first)", parent);
		return -ENOENT;
	}
	for (unsigned i = 0; i < cfg->n_vlans; i++) {
		if (!strcmp(cfg->vlans[i].parent, parent) && cfg->vlans[i].id == id) {
			snprintf(err, errlen, "VLAN %u on %s is already %s", id, parent,
				 cfg->vlans[i].name);
			return -EEXIST;
		}
	}
	if (cfg->n_vlans == DP_VLANS_MAX) {
		snprintf(err, errlen, "too many VLAN sub-ports (at most %d)", DP_VLANS_MAX);
		return -ENOSPC;
	}
	v = &cfg->vlans[cfg->n_vlans++];
	snprintf(v->name, sizeof(v->name), "%s", name);
	snprintf(v->parent, sizeof(v->parent), "%s", parent);
	v->id = (uint16_t)id;
	return 0;
}

int dp_config_add_port(struct dp_config *cfg, const char *name, const char *spec, char *err,
		       size_t errlen)
{
	struct dp_port_config *pc;

	if (!name[0] || strlen(name) >= sizeof(pc->name)) {
		snprintf(err, errlen, "port name '%s' must be 1 to %zu characters", name,
			 sizeof(pc->name) - 1);
		return -EINVAL;
	}
	/* names appear in JSON, metrics labels and shell commands: nothing to escape */
	if (name[strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")]) {
		snprintf(err, errlen, "port name '%s': only letters, digits, '.', '_' and '-'", name);
		return -EINVAL;
	}
	if (dp_config_has_name(cfg, name)) {
		snprintf(err, errlen, "port %s is already defined", name);
		return -EEXIST;
	}
	if (!strncmp(spec, "vlan:", 5) || !strcmp(spec, "vlan"))
		return add_vlan(cfg, name, spec[4] ? spec + 5 : "", err, errlen);
	if (cfg->n_ports == DP_PORTS_MAX) {
		snprintf(err, errlen, "too many ports (at most %d)", DP_PORTS_MAX);
		return -EINVAL;
	}
	if (strlen(spec) >= sizeof(pc->spec)) {
		snprintf(err, errlen, "port spec for %s is longer than %zu characters", name,
			 sizeof(pc->spec) - 1);
		return -EINVAL;
	}
	pc = &cfg->ports[cfg->n_ports++];
	pc->where[0] = '\0';
	snprintf(pc->name, sizeof(pc->name), "%s", name);
	snprintf(pc->spec, sizeof(pc->spec), "%s", spec);
	return 0;
}

static const char *af_err(int ret)
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
		    k->plen == c->plen && !memcmp(k->addr, c->addr, 16) &&
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

/* The route @rt as the add that would make it again. */
static struct dp_cmd route_cmd(const struct rxp_router *r, const struct rxp_route *rt)
{
	const struct rxp_nexthop *nh = &r->nh[rt->nh];
	struct dp_cmd k = { .kind = DP_CMD_ROUTE_ADD, .kernel = rt->origin == RXP_ROUTE_KERNEL,
			    .family = rt->family, .plen = rt->plen };

	memcpy(k.addr, rt->prefix, 16);
	if (rxp_nh_kind_rejects(nh->kind)) {
		k.route_type = nh->kind;
		return k;
	}
	/* a gateway whose port was found from its subnet is given the same way: it follows it */
	if (!nh->if_found)
		snprintf(k.dev, sizeof(k.dev), "%s", r->ifs[nh->ifidx].name);
	k.has_gw = nh->kind == RXP_NH_KIND_GATEWAY;
	memcpy(k.gw, nh->gw, 16);
	return k;
}

/* A VLAN sub-port's MTU cannot pass its port's interface's (as Linux's VLAN devices); UINT32_MAX: no limit. */
static uint32_t parent_mtu(const struct rxp_router *r, const struct rxp_l3if *ifp)
{
	int parent = r->port_if[ifp->port];

	return ifp->vlan && parent >= 0 ? r->ifs[parent].mtu : UINT32_MAX;
}

uint32_t dp_if_mtu(const struct dp *dp, int ifidx)
{
	const struct rxp_l3if *ifp = &dp->router->ifs[ifidx];
	uint32_t mtu = dp->mtu_cfg[ifidx] ? dp->mtu_cfg[ifidx] :
		       dp_if_default_mtu(dp, ifp->port, ifp->vlan);

	return RXP_MIN(mtu, parent_mtu(dp->router, ifp));
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
		dp_log(dp, "%s: mtu %u (%s, the port its frames leave by, has %u)", ifp->name, mtu, parent->name, parent->mtu);
		dp_host_mirror(dp, (int)i, &(struct dp_cmd){ .kind = DP_CMD_MTU, .where = "mtu" });
	}
}

/* Does @rt have the gateway and port a `route del ... via GW dev PORT` names (@ifidx, or -1)? */
static bool route_del_matches(const struct rxp_router *r, const struct rxp_route *rt,
			      const struct dp_cmd *c, int ifidx)
{
	const struct rxp_nexthop *nh = &r->nh[rt->nh];

	if (c->has_gw && (nh->kind != RXP_NH_KIND_GATEWAY ||
			  memcmp(nh->gw, c->gw, c->family == 4 ? 4 : 16)))
		return false;
	return ifidx < 0 || (!rxp_nh_kind_rejects(nh->kind) && nh->ifidx == ifidx);
}

bool dp_cmd_inverse(struct dp *dp, const struct dp_cmd *c, struct dp_cmd *inv)
{
	struct rxp_router *r = dp->router;
	int ifidx = c->dev[0] && r ? rxp_router_if_by_name(r, c->dev) : -1;
	const struct rxp_l3if *ifp = ifidx >= 0 ? &r->ifs[ifidx] : NULL;

	if (!r)
		return false;
	*inv = *c;
	inv->undo = true;
	inv->kernel = false;
	snprintf(inv->where, sizeof(inv->where), "undo of %.80s", c->where);
	switch (c->kind) {
	case DP_CMD_ADDR_ADD:
	case DP_CMD_ADDR_DEL: {
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
	case DP_CMD_ROUTE_ADD:
	case DP_CMD_ROUTE_DEL: {
		const struct rxp_route *rt = rxp_router_route(r, c->family, c->addr, c->plen);

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
			*inv = route_cmd(r, rt);
			inv->undo = true;
			memcpy(inv->where, where, sizeof(where));
			return true;
		}
		inv->kind = DP_CMD_ROUTE_DEL;
		inv->dev[0] = '\0';
		return c->kind == DP_CMD_ROUTE_ADD;
	}
	case DP_CMD_NEIGH_ADD:
	case DP_CMD_NEIGH_DEL: {
		const struct rxp_neigh *n = ifidx >= 0 ?
			rxp_neigh_lookup(&r->neigh, (uint16_t)ifidx, c->family, c->addr) : NULL;

		if (n && n->state == RXP_NEIGH_STATIC) {
			inv->kind = DP_CMD_NEIGH_ADD;
			inv->kernel = n->from_kernel;
			memcpy(inv->mac, n->mac, 6);
			return true;
		}
		inv->kind = DP_CMD_NEIGH_DEL;	/* a learned one is learned again */
		return c->kind == DP_CMD_NEIGH_ADD;
	}
	case DP_CMD_MTU:
		if (!ifp)
			return false;
		inv->mtu = dp->mtu_cfg[ifidx];
		return true;
	case DP_CMD_REDIRECTS:
		if (!ifp)
			return false;
		inv->redirects = !ifp->no_redirects;
		return true;
	case DP_CMD_RA:
		if (!ifp)
			return false;
		inv->ra_on = ifp->ra;
		return true;
	case DP_CMD_HOST: {
		const struct rxp_host *h = ifp && !ifp->vlan ? dp->stack.host[ifp->port] : NULL;

		if (!ifp)
			return false;
		inv->host_on = h != NULL;
		inv->host_gro = h ? h->gro : true;
		snprintf(inv->host_name, sizeof(inv->host_name), "%s", h ? h->tap.name : "");
		return true;
	}
	case DP_CMD_ICMP_RATE:
		inv->rate = r->icmp_limit.rate;
		inv->burst = r->icmp_limit.burst;
		return true;
	case DP_CMD_NEIGH_AGEING:
		inv->seconds = (uint32_t)(r->neigh_reachable_ns / 1000000000ull);
		return true;
	case DP_CMD_SOURCE_ROUTE:
		inv->source_route = !r->no_source_route;
		return true;
	}
	return false;
}

int dp_apply_cmd(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	struct rxp_router *r = dp->router;
	int ifidx = -1, ret = 0;

	err[0] = '\0';

	if (c->dev[0]) {
		ifidx = rxp_router_if_by_name(r, c->dev);
		if (ifidx < 0) {
			snprintf(err, errlen, "%s: '%s': no such port", c->where, c->dev);
			return -ENOENT;
		}
	}
	switch (c->kind) {
	case DP_CMD_ADDR_ADD:
		ret = rxp_router_add_addr(r, ifidx, c->family, c->addr, c->plen);
		break;
	case DP_CMD_ADDR_DEL:
		ret = rxp_router_del_addr(r, ifidx, c->family, c->addr);
		if (ret == -ENOENT && c->undo)
			ret = 0;	/* a reload taking back what ctl took already */
		break;
	case DP_CMD_ROUTE_ADD: {
		struct rxp_route *rt = rxp_router_route(r, c->family, c->addr, c->plen);

		/* a configured route wins over the kernel's for the same prefix, which waits under it */
		if (c->kernel && rt && rt->origin != RXP_ROUTE_KERNEL) {
			shadowed_keep(dp, c);
			snprintf(err, errlen, "%s: a configured route has this prefix; it stays", c->where);
			return -EEXIST;
		}
		struct dp_cmd under = { 0 };
		bool over_kernel = !c->kernel && rt && rt->origin == RXP_ROUTE_KERNEL;

		if (over_kernel) {
			under = route_cmd(r, rt);
			snprintf(under.where, sizeof(under.where), "sync (under a configured route)");
		}
		if (c->route_type)
			ret = rxp_router_add_route_reject(r, c->family, c->addr, c->plen, c->route_type);
		else
			ret = rxp_router_add_route(r, c->family, c->addr, c->plen,
						   c->has_gw ? c->gw : NULL, ifidx);
		rt = ret ? NULL : rxp_router_route(r, c->family, c->addr, c->plen);
		if (rt)
			rt->origin = c->kernel ? RXP_ROUTE_KERNEL : RXP_ROUTE_STATIC;
		if (rt && over_kernel)
			shadowed_keep(dp, &under);
		if (rt && c->kernel)
			shadowed_forget(dp, c);	/* nothing is over it: no copy waits */
		break;
	}
	case DP_CMD_ROUTE_DEL: {
		const struct rxp_route *rt = rxp_router_route(r, c->family, c->addr, c->plen);

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
		if (rt && !c->undo && !rxp_router_route_of_addr(r, c->family, c->addr, c->plen) &&
		    !route_del_matches(r, rt, c, ifidx)) {
			const struct rxp_nexthop *nh = &r->nh[rt->nh];
			char gw[INET6_ADDRSTRLEN] = "", has[80];

			if (nh->kind == RXP_NH_KIND_GATEWAY)
				inet_ntop(c->family == 4 ? AF_INET : AF_INET6, nh->gw, gw, sizeof(gw));
			if (rxp_nh_kind_rejects(nh->kind))
				snprintf(has, sizeof(has), "a reject route");
			else
				snprintf(has, sizeof(has), "%s%s%sdev %s", gw[0] ? "via " : "", gw,
					 gw[0] ? " " : "", r->ifs[nh->ifidx].name);
			snprintf(err, errlen, "%s: the route to that prefix is %s; nothing deleted",
				 c->where, has);
			return -ESRCH;
		}
		ret = rxp_router_del_route(r, c->family, c->addr, c->plen);
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
		break;
	}
	case DP_CMD_NEIGH_ADD: {
		const struct rxp_neigh *n = rxp_neigh_lookup(&r->neigh, (uint16_t)ifidx,
							     c->family, c->addr);
		struct dp_cmd under = { 0 };
		bool over_kernel = !c->kernel && n && n->from_kernel;

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
		break;
	}
	case DP_CMD_NEIGH_DEL: {
		const struct rxp_neigh *n = rxp_neigh_lookup(&r->neigh, (uint16_t)ifidx,
							     c->family, c->addr);

		if (c->undo && !c->kernel && n && n->from_kernel)
			return 0;	/* a reload taking back its neighbour finds the kernel's */
		ret = rxp_stack_neigh_del(&dp->stack, ifidx, c->family, c->addr, c->kernel);
		if (c->kernel)
			shadowed_forget(dp, c);
		else if (!ret && n)
			shadowed_restore(dp, c, err, errlen);
		if (ret == -ENOENT && c->undo)
			ret = 0;
		break;
	}
	case DP_CMD_MTU: {
		const struct rxp_l3if *ifp = &r->ifs[ifidx];
		struct rxp_port *port = &dp->ports[ifp->port];
		uint32_t max = if_max_mtu(dp, ifp->vlan), dev, mtu;
		uint32_t was_cfg = dp->mtu_cfg[ifidx];

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
			break;
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
		break;
	}
	case DP_CMD_ICMP_RATE:
		r->icmp_limit.rate = c->rate;
		r->icmp_limit.burst = c->burst;
		r->icmp_limit.tokens = c->burst;
		break;
	case DP_CMD_NEIGH_AGEING:
		/* entries learned from now on; read by the timer owner under the table's lock */
		rxp_stack_neigh_set_ageing(&dp->stack, (uint64_t)c->seconds * 1000000000ull);
		break;
	case DP_CMD_SOURCE_ROUTE:
		/* read by the workers' slow path only */
		r->no_source_route = !c->source_route;
		break;
	case DP_CMD_RA:
		rxp_stack_set_ra(&dp->stack, ifidx, c->ra_on);
		break;
	case DP_CMD_REDIRECTS:
		/* read by the workers' slow path only; a stale value costs one redirect more or less */
		r->ifs[ifidx].no_redirects = !c->redirects;
		break;
	case DP_CMD_HOST:
		if (dp->n_workers > 1) {
			snprintf(err, errlen, "%s: a host path (TAP) needs --workers 1 for now", c->where);
			return -EINVAL;
		}
		return dp_host_apply(dp, ifidx, c, err, errlen);	/* writes its own message */
	}
	if (ret)
		snprintf(err, errlen, "%s: %s%s", c->where, af_err(ret), cmd_subject(c).text);
	else
		dp_host_mirror(dp, ifidx, c);	/* a port's TAP follows its addresses and MTU */
	return ret;
}

static int open_router(struct dp *dp, const struct dp_config *cfg, char *err, size_t errlen)
{
	struct rxp_router *r;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r || rxp_router_init(r, ROUTES4_MAX, ROUTES6_MAX)) {
		free(r);
		snprintf(err, errlen, "out of memory for the routing tables");
		return -ENOMEM;
	}
	dp->router = r;
	if (dp->pool->max_frame < RXP_ETH_HLEN + RXP_VLAN_HLEN + 68u) {
		snprintf(err, errlen, "--max-frame %u is too small for routing: an IP packet of 68 bytes must fit (RFC 791); use at least %u",
			 dp->pool->max_frame, RXP_ETH_HLEN + RXP_VLAN_HLEN + 68u);
		return -EINVAL;
	}
	for (unsigned i = 0; i < dp->n_ports; i++) {
		const struct rxp_port *p = &dp->ports[i];

		rxp_router_add_if(r, p->name, p->id, 0, p->mac, dp_if_default_mtu(dp, p->id, 0));
	}
	for (unsigned i = 0; i < cfg->n_vlans; i++) {
		const struct dp_vlan_config *v = &cfg->vlans[i];
		int parent = rxp_router_if_by_name(r, v->parent);
		uint16_t port = r->ifs[parent].port;

		ret = rxp_router_add_if(r, v->name, port, v->id, r->ifs[parent].mac,
					dp_if_default_mtu(dp, port, v->id));
		if (ret < 0) {
			snprintf(err, errlen, "VLAN sub-port %s: %s", v->name, af_err(ret));
			return ret;
		}
	}
	ret = rxp_router_set_workers(r, dp->n_workers);
	if (ret) {
		snprintf(err, errlen, "cannot set up the routing tables' locks: %s", strerror(-ret));
		return ret;
	}
	for (unsigned w = 0; w < dp->n_workers; w++)
		rxp_stack_set_router(dp_stack(dp, w), r);
	for (unsigned i = 0; i < cfg->n_cmds; i++) {
		ret = dp_apply_cmd(dp, &cfg->cmds[i], err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

int dp_router_enable(struct dp *dp, char *err, size_t errlen)
{
	struct dp_config none;
	int ret;

	if (dp->router)
		return 0;
	dp_config_default(&none);
	ret = open_router(dp, &none, err, errlen);
	if (ret)
		dp_router_disable(dp);
	return ret;
}

void dp_router_disable(struct dp *dp)
{
	if (!dp->router)
		return;
	for (unsigned w = 0; w < dp->n_workers; w++)
		rxp_stack_set_router(dp_stack(dp, w), NULL);
	rxp_router_free(dp->router);
	free(dp->router);
	dp->router = NULL;
}

void dp_stack_stats(struct dp *dp, struct rxp_stack_stats *out)
{
	*out = dp->stack.stats;
	for (unsigned w = 1; w < dp->n_workers; w++) {
		const struct rxp_stack_stats *s = &dp_stack(dp, w)->stats;

		out->in_packets += s->in_packets;
		out->in_bytes += s->in_bytes;
		for (int c = 0; c < RXP_SINK_MAX; c++)
			out->delivered[c] += s->delivered[c];
		out->delivered_bytes += s->delivered_bytes;
		for (int r = 0; r < RXP_DROP_MAX; r++)
			out->drops[r] += s->drops[r];
		out->dropped += s->dropped;
		out->polls += s->polls;
		out->forwarded += s->forwarded;
		out->fragments += s->fragments;
		out->local_out += s->local_out;
		out->local_out_dropped += s->local_out_dropped;
		out->icmp_errors += s->icmp_errors;
		out->icmp_ratelimited += s->icmp_ratelimited;
		out->redirects += s->redirects;
		out->router_adverts += s->router_adverts;
		out->neigh_requests += s->neigh_requests;
	}
}

uint64_t dp_port_drops(struct dp *dp, uint16_t port, unsigned reason)
{
	uint64_t n = 0;

	for (unsigned w = 0; w < dp->n_workers; w++)
		n += dp_stack(dp, w)->port_drops[port][reason];
	return n;
}

uint32_t dp_pool_stats(struct dp *dp, struct rxp_pool_stats *out)
{
	uint32_t held = 0;

	memset(out, 0, sizeof(*out));
	for (unsigned w = 0; w < dp->n_workers; w++) {
		const struct rxp_pool_cache *c = dp_cache(dp, w);

		out->alloc_fast += c->stats.alloc_fast;
		out->alloc_slow += c->stats.alloc_slow;
		out->alloc_empty += c->stats.alloc_empty;
		out->recycle_cached += c->stats.recycle_cached;
		out->recycle_ring += c->stats.recycle_ring;
		held += c->count;
	}
	return held;
}

void dp_totals(struct dp *dp, struct dp_totals *t)
{
	dp_stack_stats(dp, &t->stack);
	t->in_caches = dp_pool_stats(dp, &t->pool);
}

/* Workers 1..n-1: a cache and a stack each, transmitting on their own queue of every port. */
static int open_workers(struct dp *dp, const struct dp_config *cfg, char *err, size_t errlen)
{
	if (dp->n_workers == 1)
		return 0;
	for (unsigned i = 0; i < dp->n_ports; i++)
		if (dp->ports[i].n_queues < dp->n_workers) {
			snprintf(err, errlen,
				 "port %s has %u queue%s; --workers %u needs one per worker (sim: queues=%u; afxdp: queues=%u; afpacket: queues=%u)",
				 dp->ports[i].name, dp->ports[i].n_queues,
				 dp->ports[i].n_queues == 1 ? "" : "s", dp->n_workers, dp->n_workers,
				 dp->n_workers, dp->n_workers);
			return -EINVAL;
		}
	for (unsigned i = 0; i < cfg->n_cmds; i++)
		if (cfg->cmds[i].kind == DP_CMD_HOST && cfg->cmds[i].host_on) {
			snprintf(err, errlen, "%s: a host path (TAP) needs --workers 1 for now",
				 cfg->cmds[i].where);
			return -EINVAL;
		}
	dp->workers = aligned_alloc(64, RXP_ALIGN_UP(sizeof(*dp->workers) * (dp->n_workers - 1), 64));
	if (!dp->workers) {
		snprintf(err, errlen, "out of memory for %u workers", dp->n_workers);
		return -ENOMEM;
	}
	memset(dp->workers, 0, sizeof(*dp->workers) * (dp->n_workers - 1));
	for (unsigned w = 1; w < dp->n_workers; w++)
		dp->workers[w - 1].idle.wake_fd = -1;
	for (unsigned w = 1; w < dp->n_workers; w++) {
		struct dp_worker *wk = &dp->workers[w - 1];

		wk->dp = dp;
		wk->id = w;
		wk->cpu = -1;
		dp_idle_init(&wk->idle);	/* without its eventfd the worker never sleeps */
		if (rxp_pool_cache_init(&wk->cache, dp->pool, RXP_POOL_CACHE_MAX) ||
		    rxp_stack_init(&wk->stack, &cfg->tuning, &wk->cache)) {
			snprintf(err, errlen, "cannot set up worker %u", w);
			return -ENOMEM;
		}
		wk->stack.timer_owner = false;	/* worker 0 runs the shared timers */
		for (unsigned i = 0; i < dp->n_ports; i++)
			rxp_stack_add_port(&wk->stack, dp->ports[i].id, dp->ports[i].mac,
					   &dp->ports[i].queues[w]);
	}
	return 0;
}

static void close_workers(struct dp *dp)
{
	if (!dp->workers)
		return;
	for (unsigned w = 1; w < dp->n_workers; w++) {
		if (dp->workers[w - 1].cache.pool)
			rxp_pool_cache_close(&dp->workers[w - 1].cache);
		dp_idle_close(&dp->workers[w - 1].idle);
	}
	free(dp->workers);
	dp->workers = NULL;
}

/*
 * The queues a port spec asks for (queues=N, 1 unless given or readable):
 * each has rings of its own to keep filled, so the pool grows with them.
 * A bad value is the driver's to report when it opens the port.
 */
static uint32_t spec_queues(const char *spec)
{
	const char *colon = strchr(spec, ':');
	struct rxp_args args;
	uint32_t n = 1;
	char err[RXP_ERR_LEN];

	if (!colon || rxp_args_parse(&args, colon + 1, err, sizeof(err)) ||
	    rxp_args_u32(&args, "queues", 1, RXP_QUEUES_MAX, &n, err, sizeof(err)))
		return 1;
	return n;
}

int dp_open(struct dp *dp, const struct dp_config *cfg, char *err, size_t errlen)
{
	struct rxp_pool_config pcfg = cfg->pool;
	int ret;

	memset(dp, 0, sizeof(*dp));
	dp->log = cfg->log;
	dp->n_workers = RXP_MAX(cfg->n_workers, 1u);
	dp->idle_spin = cfg->idle_spin;
	dp_idle_init(&dp->idle);	/* without its eventfd worker 0 never sleeps */
	if (dp->n_workers > DP_WORKERS_MAX) {
		snprintf(err, errlen, "--workers %u: at most %u", dp->n_workers, DP_WORKERS_MAX);
		return -EINVAL;
	}
	if (!pcfg.n_bufs) {
		/* every queue's rings and what is in flight, and every worker's cache */
		uint32_t queues = 0;

		for (unsigned i = 0; i < cfg->n_ports; i++)
			queues += spec_queues(cfg->ports[i].spec);
		pcfg.n_bufs = DP_BUFS_PER_PORT * RXP_MAX(queues, 1u) +
			      RXP_POOL_CACHE_MAX * dp->n_workers;
	}
	/* a driver may need a layout of its own (AF_XDP: the pool is its UMEM) */
	for (unsigned i = 0; i < cfg->n_ports; i++) {
		const struct rxp_port_ops *ops = rxp_port_driver_of_spec(cfg->ports[i].spec);

		if (ops && ops->pool_config)
			ops->pool_config(&pcfg);
	}
	dp->pool = rxp_pool_create(&pcfg, err, errlen);
	if (!dp->pool)
		return -errno;
	ret = rxp_pool_cache_init(&dp->cache, dp->pool, RXP_POOL_CACHE_MAX);
	if (ret) {
		snprintf(err, errlen, "cannot set up the buffer cache");
		goto err_pool;
	}
	ret = rxp_stack_init(&dp->stack, &cfg->tuning, &dp->cache);
	if (ret) {
		snprintf(err, errlen,
			 "invalid receive settings: budget %u (1..%u), prefetch %u lines (0..2)",
			 cfg->tuning.budget, RXP_BURST_MAX, cfg->tuning.prefetch_lines);
		goto err_cache;
	}
	for (unsigned i = 0; i < cfg->n_ports; i++) {
		char perr[RXP_ERR_LEN];
		struct rxp_port *port = &dp->ports[i];

		ret = rxp_port_open(port, (uint16_t)i, cfg->ports[i].name, cfg->ports[i].spec,
				    dp->pool, perr, sizeof(perr));
		if (ret) {
			snprintf(err, errlen, "%s%sport %s: %s", cfg->ports[i].where,
				 cfg->ports[i].where[0] ? ": " : "", cfg->ports[i].name, perr);
			goto err_ports;
		}
		dp->n_ports++;
		rxp_stack_add_port(&dp->stack, port->id, port->mac, &port->queues[0]);
		for (unsigned k = 0; k < i; k++) {
			const uint8_t *m = port->mac;

			if (memcmp(dp->ports[k].mac, m, 6))
				continue;
			/* allowed on separate links, but rarely meant: a default MAC met a mac= */
			dp_log(dp, "warning: ports %s and %s have the same MAC "
			       "%02x:%02x:%02x:%02x:%02x:%02x, and so the same IPv6 link-local address; "
			       "give one of them another with mac=", dp->ports[k].name, port->name,
			       m[0], m[1], m[2], m[3], m[4], m[5]);
		}
	}
	ret = open_workers(dp, cfg, err, errlen);
	if (ret)
		goto err_ports;
	if (cfg->n_cmds || cfg->n_vlans) {
		ret = open_router(dp, cfg, err, errlen);
		if (ret)
			goto err_ports;
	}
	{
		struct rxp_pool_cache *caches[DP_WORKERS_MAX];
		uint64_t now = rxp_clock_ns();

		for (unsigned w = 0; w < dp->n_workers; w++) {
			caches[w] = dp_cache(dp, w);
			dp_stack(dp, w)->now_ns = now;
		}
		for (unsigned i = 0; i < dp->n_ports; i++) {
			ret = rxp_port_start_caches(&dp->ports[i], caches, dp->n_workers, err, errlen);
			if (ret)
				goto err_ports;
		}
	}
	return 0;

err_ports:
	dp_hosts_close(dp);
	for (unsigned i = dp->n_ports; i-- > 0;)
		rxp_port_close(&dp->ports[i]);
	if (dp->router) {
		rxp_router_free(dp->router);
		free(dp->router);
		dp->router = NULL;
	}
	close_workers(dp);
err_cache:
	rxp_pool_cache_close(&dp->cache);
err_pool:
	rxp_pool_destroy(dp->pool);
	dp->pool = NULL;
	return ret;
}

/* Whether the queues from @first on, every @step-th, have received all their input. */
static bool inputs_done(struct dp *dp, unsigned first, unsigned step)
{
	for (unsigned p = 0; p < dp->n_ports; p++) {
		struct rxp_port *port = &dp->ports[p];

		for (unsigned q = first; q < port->n_queues; q += step)
			if (!port->ops->rx_finished(&port->queues[q]))
				return false;
	}
	return dp->n_ports > 0;
}

bool dp_finished(struct dp *dp)
{
	bool done;

	/* worker 0's own queues first: no other thread's state is read while any has input left */
	if (!inputs_done(dp, 0, dp->n_workers))
		return false;
	/* then every queue, and the drain, while the other workers wait between two polls
	 * (a round each 16 calls: the others may have a while to go) */
	if (dp->n_workers > 1 && dp->finish_checks++ % 16)
		return false;
	dp_barrier_enter(dp);
	done = inputs_done(dp, 0, 1);
	if (done && !dp->drained) {
		/* what waits for a neighbour that has not answered by now never will */
		rxp_stack_drain(&dp->stack);
		dp->drained = true;
	}
	dp_barrier_exit(dp);
	if (!done)
		return false;
	rxp_stack_flush(&dp->stack);
	for (unsigned p = 0; p < dp->n_ports; p++) {
		struct rxp_port *port = &dp->ports[p];

		/* worker 0's queues: the others' are settled when they stop (dp_settle) */
		for (uint16_t q = 0; q < port->n_queues; q += (uint16_t)dp->n_workers) {
			port->ops->complete(&port->queues[q]);
			if (!port->ops->tx_idle(&port->queues[q]))
				return false;
		}
	}
	return true;
}

void dp_settle(struct dp *dp)
{
	uint64_t deadline = rxp_clock_ns() + 100000000ull;
	bool idle;

	if (dp->router)
		for (unsigned i = 0; i < dp->router->n_ifs; i++)
			if (dp->router->ifs[i].ra)
				rxp_stack_set_ra(&dp->stack, (int)i, false);
	/*
	 * What still waits for a neighbour or for the rest of its datagram
	 * (a run stopped by --duration or a signal) is dropped now, so that
	 * the report counts it; unanswered: neither gave up, the run did.
	 */
	for (unsigned w = 0; w < dp->n_workers; w++)
		rxp_stack_release(dp_stack(dp, w));
	for (unsigned w = 0; w < dp->n_workers; w++)
		rxp_stack_flush(dp_stack(dp, w));
	do {
		idle = true;
		for (unsigned p = 0; p < dp->n_ports; p++) {
			struct rxp_port *port = &dp->ports[p];

			for (uint16_t q = 0; q < port->n_queues; q++) {
				port->ops->complete(&port->queues[q]);
				idle &= port->ops->tx_idle(&port->queues[q]);
			}
		}
	} while (!idle && rxp_clock_ns() < deadline);
}

long dp_close(struct dp *dp)
{
	struct rxp_pool_cache *caches[DP_WORKERS_MAX];
	long bad;

	if (!dp->pool)
		return 0;
	dp_hosts_close(dp);	/* the TAPs go away; what they held goes back to the cache */
	for (unsigned w = dp->n_workers; w-- > 0;)
		rxp_stack_close(dp_stack(dp, w));
	for (unsigned i = dp->n_ports; i-- > 0;)
		rxp_port_close(&dp->ports[i]);
	dp->n_ports = 0;
	if (dp->router) {
		rxp_router_free(dp->router);
		free(dp->router);
		dp->router = NULL;
	}
	free(dp->shadowed);
	dp->shadowed = NULL;
	dp->n_shadowed = dp->shadowed_cap = 0;
	for (unsigned w = 0; w < dp->n_workers; w++)
		caches[w] = dp_cache(dp, w);
	bad = rxp_pool_audit(dp->pool, caches, dp->n_workers);
	close_workers(dp);
	dp_idle_close(&dp->idle);
	rxp_pool_cache_close(&dp->cache);
	rxp_pool_destroy(dp->pool);
	dp->pool = NULL;
	return bad;
}
