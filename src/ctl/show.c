/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "show.h"

static const char *const topics[] = { "ports", "stats", "drops", "routes", "neigh", "pool" };

const char *show_topics(void)
{
	return "ports, stats, drops, routes [PREFIX], neigh, pool";
}

bool show_topic_known(const char *what)
{
	for (unsigned i = 0; i < RXP_ARRAY_SIZE(topics); i++)
		if (!strcmp(what, topics[i]))
			return true;
	return false;
}

static void put_mac(struct rxp_sbuf *o, const uint8_t m[6])
{
	rxp_sbuf_printf(o, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static void put_addr(struct rxp_sbuf *o, uint8_t family, const void *a)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(family == 4 ? AF_INET : AF_INET6, a, buf, sizeof(buf));
	rxp_sbuf_printf(o, "%s", buf);
}

/* ---- show ports ---- */

/* An interface's addresses, a line each, as ip addr shows them. */
static void if_addrs_text(struct rxp_sbuf *o, const struct rxp_l3if *ifp)
{
	for (unsigned k = 0; k < ifp->n_addr4; k++) {
		rxp_sbuf_printf(o, "    inet ");
		put_addr(o, 4, &ifp->addr4[k]);
		rxp_sbuf_printf(o, "/%u\n", ifp->plen4[k]);
	}
	for (unsigned k = 0; k < ifp->n_addr6; k++) {
		rxp_sbuf_printf(o, "    inet6 ");
		put_addr(o, 6, ifp->addr6[k]);
		rxp_sbuf_printf(o, "/%u\n", ifp->plen6[k]);
	}
}

static void ports_text(struct dp *dp, const struct dp_config *cfg, struct rxp_sbuf *o)
{
	for (unsigned i = 0; i < dp->n_ports; i++) {
		const struct rxp_port *p = &dp->ports[i];
		struct rxp_queue_stats s;

		rxp_port_stats(p, &s);
		rxp_sbuf_printf(o, "%s: %s\n    mac ", p->name, cfg->ports[i].spec);
		put_mac(o, p->mac);
		rxp_sbuf_printf(o, ", %u queue%s%s", p->n_queues, p->n_queues == 1 ? "" : "s",
				p->down ? ", down (its interface went away)" : "");
		if (dp->router) {
			int ifidx = dp->router->port_if[p->id];
			const struct rxp_l3if *ifp = &dp->router->ifs[ifidx];

			rxp_sbuf_printf(o, ", mtu %u%s%s\n", ifp->mtu,
					ifp->no_redirects ? ", redirects off" : "",
					ifp->ra ? ", router advertisements on" : "");
			if_addrs_text(o, ifp);
		} else {
			rxp_sbuf_printf(o, "\n");
		}
		rxp_sbuf_printf(o, "    rx %llu packets %llu bytes, dropped %llu; tx %llu packets %llu bytes\n",
				(unsigned long long)s.rx_packets, (unsigned long long)s.rx_bytes,
				(unsigned long long)s.rx_dropped, (unsigned long long)s.tx_packets,
				(unsigned long long)s.tx_bytes);
	}
	if (dp->router)
		for (unsigned i = 0; i < dp->router->n_ifs; i++) {
			const struct rxp_l3if *ifp = &dp->router->ifs[i];

			if (!ifp->vlan)
				continue;
			rxp_sbuf_printf(o, "%s: vlan %u on %s, mtu %u%s%s\n", ifp->name, ifp->vlan,
					dp->ports[ifp->port].name, ifp->mtu,
					ifp->no_redirects ? ", redirects off" : "",
					ifp->ra ? ", router advertisements on" : "");
			if_addrs_text(o, ifp);
		}
}

static void if_addrs_json(struct rxp_sbuf *o, const struct rxp_l3if *ifp)
{
	rxp_sbuf_printf(o, ",\"mtu\":%u,\"redirects\":%s,\"router_adverts\":%s,\"addresses\":[",
			ifp->mtu, ifp->no_redirects ? "false" : "true", ifp->ra ? "true" : "false");
	for (unsigned k = 0; k < ifp->n_addr4; k++) {
		rxp_sbuf_printf(o, "%s\"", k ? "," : "");
		put_addr(o, 4, &ifp->addr4[k]);
		rxp_sbuf_printf(o, "/%u\"", ifp->plen4[k]);
	}
	for (unsigned k = 0; k < ifp->n_addr6; k++) {
		rxp_sbuf_printf(o, "%s\"", k || ifp->n_addr4 ? "," : "");
		put_addr(o, 6, ifp->addr6[k]);
		rxp_sbuf_printf(o, "/%u\"", ifp->plen6[k]);
	}
	rxp_sbuf_printf(o, "]");
}

static void ports_json(struct dp *dp, const struct dp_config *cfg, struct rxp_sbuf *o)
{
	rxp_sbuf_printf(o, "{\"ports\":[");
	for (unsigned i = 0; i < dp->n_ports; i++) {
		const struct rxp_port *p = &dp->ports[i];
		struct rxp_queue_stats s;

		rxp_port_stats(p, &s);
		rxp_sbuf_printf(o, "%s{\"name\":", i ? "," : "");
		rxp_sbuf_json_str(o, p->name);
		rxp_sbuf_printf(o, ",\"spec\":");
		rxp_sbuf_json_str(o, cfg->ports[i].spec);
		rxp_sbuf_printf(o, ",\"mac\":\"");
		put_mac(o, p->mac);
		rxp_sbuf_printf(o, "\",\"queues\":%u,\"down\":%s", p->n_queues,
				p->down ? "true" : "false");
		if (dp->router)
			if_addrs_json(o, &dp->router->ifs[dp->router->port_if[p->id]]);
		rxp_sbuf_printf(o, ",\"rx_packets\":%llu,\"rx_bytes\":%llu,\"rx_dropped\":%llu,"
				"\"tx_packets\":%llu,\"tx_bytes\":%llu}",
				(unsigned long long)s.rx_packets, (unsigned long long)s.rx_bytes,
				(unsigned long long)s.rx_dropped, (unsigned long long)s.tx_packets,
				(unsigned long long)s.tx_bytes);
	}
	rxp_sbuf_printf(o, "],\"vlans\":[");
	for (unsigned i = 0, first = 1; dp->router && i < dp->router->n_ifs; i++) {
		const struct rxp_l3if *ifp = &dp->router->ifs[i];

		if (!ifp->vlan)
			continue;
		rxp_sbuf_printf(o, "%s{\"name\":", first ? "" : ",");
		rxp_sbuf_json_str(o, ifp->name);
		rxp_sbuf_printf(o, ",\"parent\":");
		rxp_sbuf_json_str(o, dp->ports[ifp->port].name);
		rxp_sbuf_printf(o, ",\"id\":%u", ifp->vlan);
		if_addrs_json(o, ifp);
		rxp_sbuf_printf(o, "}");
		first = 0;
	}
	rxp_sbuf_printf(o, "]}\n");
}

/* ---- show stats ---- */

static double avg_batch(const struct rxp_queue_stats *s)
{
	return s->rx_nonempty ? (double)s->rx_packets / (double)s->rx_nonempty : 0.0;
}

static void stats_text(struct dp *dp, struct rxp_sbuf *o)
{
	struct dp_totals t;
	const struct rxp_stack_stats *ss = &t.stack;
	const struct rxp_pool_stats *ps = &t.pool;

	dp_totals(dp, &t);

	for (unsigned i = 0; i < dp->n_ports; i++) {
		const struct rxp_port *p = &dp->ports[i];

		for (uint16_t q = 0; q < p->n_queues; q++) {
			const struct rxp_queue_stats *s = &p->queues[q].stats;

			rxp_sbuf_printf(o, "port %s queue %u:", p->name, q);
#define X(f, metric, help) rxp_sbuf_printf(o, " " #f " %llu", (unsigned long long)s->f);
			RXP_QUEUE_COUNTERS(X)
#undef X
			rxp_sbuf_printf(o, " avg_batch %.1f\n", avg_batch(s));
		}
	}
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct rxp_xstat xs[RXP_XSTATS_MAX];
		unsigned n = rxp_port_xstats(&dp->ports[i], xs, RXP_XSTATS_MAX);

		if (n)
			rxp_sbuf_printf(o, "port %s driver %s:", dp->ports[i].name, dp->ports[i].ops->driver);
		for (unsigned k = 0; k < n; k++)
			rxp_sbuf_printf(o, " %s %llu", xs[k].name, (unsigned long long)xs[k].value);
		if (n)
			rxp_sbuf_printf(o, "\n");
	}
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct rxp_xstat xs[RXP_XSTATS_MAX];
		unsigned n = dp_host_counters(dp, dp->ports[i].id, xs, RXP_XSTATS_MAX);

		if (n)
			rxp_sbuf_printf(o, "port %s host: tap %s gro %s", dp->ports[i].name,
					dp->stack.host[dp->ports[i].id]->tap.name,
					dp->stack.host[dp->ports[i].id]->gro ? "on" : "off");
		for (unsigned k = 0; k < n; k++)
			rxp_sbuf_printf(o, " %s %llu", xs[k].name, (unsigned long long)xs[k].value);
		if (n)
			rxp_sbuf_printf(o, "\n");
	}
	rxp_sbuf_printf(o, "stack:");
#define X(f, metric, help) rxp_sbuf_printf(o, " " #f " %llu", (unsigned long long)ss->f);
	RXP_STACK_COUNTERS(X)
#undef X
	rxp_sbuf_printf(o, "\ndelivered:");
	for (int c = 0; c < RXP_SINK_MAX; c++)
		rxp_sbuf_printf(o, " %s %llu", rxp_sink_name((enum rxp_sink_class)c),
				(unsigned long long)ss->delivered[c]);
	rxp_sbuf_printf(o, "\npool: buffers %u free_in_ring %u in_cache %u", dp->pool->n_bufs,
			rxp_pool_ring_count(dp->pool), t.in_caches);
#define X(f, metric, help) rxp_sbuf_printf(o, " " #f " %llu", (unsigned long long)ps->f);
	RXP_POOL_COUNTERS(X)
#undef X
	rxp_sbuf_printf(o, "\n");
}

static void stats_json(struct dp *dp, struct rxp_sbuf *o)
{
	struct dp_totals t;
	const struct rxp_stack_stats *ss = &t.stack;
	const struct rxp_pool_stats *ps = &t.pool;

	dp_totals(dp, &t);
	bool first = true;

	rxp_sbuf_printf(o, "{\"queues\":[");
	for (unsigned i = 0; i < dp->n_ports; i++) {
		const struct rxp_port *p = &dp->ports[i];

		for (uint16_t q = 0; q < p->n_queues; q++) {
			const struct rxp_queue_stats *s = &p->queues[q].stats;

			rxp_sbuf_printf(o, "%s{\"port\":", first ? "" : ",");
			rxp_sbuf_json_str(o, p->name);
			rxp_sbuf_printf(o, ",\"queue\":%u", q);
#define X(f, metric, help) rxp_sbuf_printf(o, ",\"" #f "\":%llu", (unsigned long long)s->f);
			RXP_QUEUE_COUNTERS(X)
#undef X
			rxp_sbuf_printf(o, ",\"avg_batch\":%.2f}", avg_batch(s));
			first = false;
		}
	}
	rxp_sbuf_printf(o, "],\"drivers\":[");
	first = true;
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct rxp_xstat xs[RXP_XSTATS_MAX];
		unsigned n = rxp_port_xstats(&dp->ports[i], xs, RXP_XSTATS_MAX);

		if (!n)
			continue;
		rxp_sbuf_printf(o, "%s{\"port\":", first ? "" : ",");
		rxp_sbuf_json_str(o, dp->ports[i].name);
		rxp_sbuf_printf(o, ",\"driver\":\"%s\",\"counters\":{", dp->ports[i].ops->driver);
		for (unsigned k = 0; k < n; k++)
			rxp_sbuf_printf(o, "%s\"%s\":%llu", k ? "," : "", xs[k].name,
					(unsigned long long)xs[k].value);
		rxp_sbuf_printf(o, "}}");
		first = false;
	}
	rxp_sbuf_printf(o, "],\"hosts\":[");
	first = true;
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct rxp_xstat xs[RXP_XSTATS_MAX];
		unsigned n = dp_host_counters(dp, dp->ports[i].id, xs, RXP_XSTATS_MAX);

		if (!n)
			continue;
		rxp_sbuf_printf(o, "%s{\"port\":", first ? "" : ",");
		rxp_sbuf_json_str(o, dp->ports[i].name);
		rxp_sbuf_printf(o, ",\"tap\":");
		rxp_sbuf_json_str(o, dp->stack.host[dp->ports[i].id]->tap.name);
		rxp_sbuf_printf(o, ",\"gro\":%s,\"counters\":{",
				dp->stack.host[dp->ports[i].id]->gro ? "true" : "false");
		for (unsigned k = 0; k < n; k++)
			rxp_sbuf_printf(o, "%s\"%s\":%llu", k ? "," : "", xs[k].name,
					(unsigned long long)xs[k].value);
		rxp_sbuf_printf(o, "}}");
		first = false;
	}
	rxp_sbuf_printf(o, "],\"stack\":{\"delivered\":{");
	for (int c = 0; c < RXP_SINK_MAX; c++)
		rxp_sbuf_printf(o, "%s\"%s\":%llu", c ? "," : "", rxp_sink_name((enum rxp_sink_class)c),
				(unsigned long long)ss->delivered[c]);
	rxp_sbuf_printf(o, "}");
#define X(f, metric, help) rxp_sbuf_printf(o, ",\"" #f "\":%llu", (unsigned long long)ss->f);
	RXP_STACK_COUNTERS(X)
#undef X
	rxp_sbuf_printf(o, "},\"pool\":{\"buffers\":%u,\"free_in_ring\":%u,\"in_cache\":%u",
			dp->pool->n_bufs, rxp_pool_ring_count(dp->pool), t.in_caches);
#define X(f, metric, help) rxp_sbuf_printf(o, ",\"" #f "\":%llu", (unsigned long long)ps->f);
	RXP_POOL_COUNTERS(X)
#undef X
	rxp_sbuf_printf(o, "}}\n");
}

/* ---- show drops ---- */

/*
 * What never reached the stack, and so has no drop reason of its own: the
 * frames the kernel or a driver dropped on the way in (a full ring), as the
 * drivers count them. Closes the reasons'
 * JSON array first.
 */
static void not_received_out(struct dp *dp, struct rxp_sbuf *o, bool json)
{
	bool first = true;

	if (json)
		rxp_sbuf_printf(o, "],\"not_received\":[");
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct rxp_xstat xs[RXP_XSTATS_MAX];
		unsigned n = rxp_port_xstats(&dp->ports[i], xs, RXP_XSTATS_MAX);

		for (unsigned k = 0; k < n; k++) {
			if (!xs[k].lost || !xs[k].value)
				continue;
			if (json) {
				rxp_sbuf_printf(o, "%s{\"port\":", first ? "" : ",");
				rxp_sbuf_json_str(o, dp->ports[i].name);
				rxp_sbuf_printf(o, ",\"driver\":\"%s\",\"counter\":\"%s\",\"packets\":%llu}",
						dp->ports[i].ops->driver, xs[k].name,
						(unsigned long long)xs[k].value);
			} else {
				if (first)
					rxp_sbuf_printf(o, "not received (lost in the kernel or the driver, before the stack):\n");
				rxp_sbuf_printf(o, "  %-8s %-9s %-24s %12llu\n", dp->ports[i].name,
						dp->ports[i].ops->driver, xs[k].name,
						(unsigned long long)xs[k].value);
			}
			first = false;
		}
	}
	if (json)
		rxp_sbuf_printf(o, "]");
}

static void drops_out(struct dp *dp, struct rxp_sbuf *o, bool json)
{
	struct rxp_stack_stats sum;
	const struct rxp_stack_stats *ss = &sum;
	bool first = true;

	dp_stack_stats(dp, &sum);
	if (json)
		rxp_sbuf_printf(o, "{\"dropped\":%llu,\"reasons\":[", (unsigned long long)ss->dropped);
	else
		rxp_sbuf_printf(o, "dropped %llu packets\n", (unsigned long long)ss->dropped);
	for (int r = 0; r < RXP_DROP_MAX; r++) {
		const char *name = rxp_drop_name((enum rxp_drop_reason)r);

		if (!ss->drops[r])
			continue;
		if (json)
			rxp_sbuf_printf(o, "%s{\"reason\":\"%s\",\"packets\":%llu,\"help\":", first ? "" : ",",
					name, (unsigned long long)ss->drops[r]);
		else
			rxp_sbuf_printf(o, "  %-24s %12llu  %s\n", name, (unsigned long long)ss->drops[r],
					rxp_drop_help((enum rxp_drop_reason)r));
		if (json) {
			rxp_sbuf_json_str(o, rxp_drop_help((enum rxp_drop_reason)r));
			rxp_sbuf_printf(o, ",\"ports\":{");
		}
		for (unsigned i = 0, pf = 1; i < dp->n_ports; i++) {
			uint64_t v = dp_port_drops(dp, dp->ports[i].id, (unsigned)r);

			if (!v)
				continue;
			if (json)
				rxp_sbuf_printf(o, "%s\"%s\":%llu", pf ? "" : ",", dp->ports[i].name,
						(unsigned long long)v);
			else
				rxp_sbuf_printf(o, "    %-22s %12llu\n", dp->ports[i].name, (unsigned long long)v);
			pf = 0;
		}
		if (json)
			rxp_sbuf_printf(o, "}}");
		first = false;
	}
	not_received_out(dp, o, json);
	if (json)
		rxp_sbuf_printf(o, "}\n");
}

/* ---- show routes ---- */

/* A route as reported: copied off the tables, so that sorting and printing happen elsewhere. */
struct show_route {
	struct rxp_route rt;
	struct rxp_nexthop nh;	/* a multipath route's: in show_request.groups */
	char dev[RXP_PORT_NAME_MAX];
};

/* A group of next hops as reported, with each member's state and packets. */
struct show_group {
	uint8_t n;
	struct show_path {
		bool has_gw, up;
		uint8_t gw[16];
		uint16_t weight;
		char dev[RXP_PORT_NAME_MAX];
		uint64_t packets;
	} path[RXP_NH_PATHS_MAX];
};

static void group_out(const struct show_group *g, uint8_t family, bool json, struct rxp_sbuf *o)
{
	for (unsigned p = 0; p < g->n; p++) {
		const struct show_path *sp = &g->path[p];

		if (json) {
			rxp_sbuf_printf(o, "%s{", p ? "," : "");
			if (sp->has_gw) {
				rxp_sbuf_printf(o, "\"via\":\"");
				put_addr(o, family, sp->gw);
				rxp_sbuf_printf(o, "\",");
			}
			rxp_sbuf_printf(o, "\"dev\":\"%s\",\"weight\":%u,\"state\":\"%s\",\"packets\":%" PRIu64 "}",
					sp->dev, sp->weight, sp->up ? "up" : "down", sp->packets);
			continue;
		}
		rxp_sbuf_printf(o, "\tnexthop");
		if (sp->has_gw) {
			rxp_sbuf_printf(o, " via ");
			put_addr(o, family, sp->gw);
		}
		rxp_sbuf_printf(o, " dev %s weight %u %s packets %" PRIu64 "\n", sp->dev, sp->weight,
				sp->up ? "up" : "down", sp->packets);
	}
}

static int route_cmp(const void *a, const void *b)
{
	const struct rxp_route *x = &((const struct show_route *)a)->rt;
	const struct rxp_route *y = &((const struct show_route *)b)->rt;
	int c;

	if (x->family != y->family)
		return x->family - y->family;
	c = memcmp(x->prefix, y->prefix, x->family == 4 ? 4 : 16);
	return c ? c : x->plen - y->plen;
}

/* Returns true when @rt lies within @prefix/@plen (same family). */
static bool route_within(const struct rxp_route *rt, uint8_t family, const uint8_t *prefix,
			 uint8_t plen)
{
	if (rt->family != family || rt->plen < plen)
		return false;
	for (unsigned bit = 0; bit < plen; bit += 8) {
		unsigned n = plen - bit >= 8 ? 8 : plen - bit;
		uint8_t mask = (uint8_t)(0xff00 >> n);

		if ((rt->prefix[bit / 8] ^ prefix[bit / 8]) & mask)
			return false;
	}
	return true;
}

static void route_out(const struct show_route *sr, const struct show_group *groups, bool json,
		      bool first, struct rxp_sbuf *o)
{
	const struct rxp_route *rt = &sr->rt;
	const struct rxp_nexthop *nh = &sr->nh;

	if (rxp_nh_is_group(rt->nh)) {
		const struct show_group *g = &groups[rt->nh & (RXP_NH_GROUP - 1)];

		if (json) {
			rxp_sbuf_printf(o, "%s{\"prefix\":\"", first ? "" : ",");
			put_addr(o, rt->family, rt->prefix);
			rxp_sbuf_printf(o, "/%u\",\"type\":\"multipath\",\"nexthops\":[", rt->plen);
			group_out(g, rt->family, true, o);
			rxp_sbuf_printf(o, "],\"origin\":\"%s\"}", rt->origin == RXP_ROUTE_KERNEL ? "kernel" : "static");
			return;
		}
		put_addr(o, rt->family, rt->prefix);
		rxp_sbuf_printf(o, "/%u multipath%s\n", rt->plen, rt->origin == RXP_ROUTE_KERNEL ? " proto kernel" : "");
		group_out(g, rt->family, false, o);
		return;
	}
	{
	static const char *const kinds[] = {
		[RXP_NH_KIND_LOCAL] = "local", [RXP_NH_KIND_CONNECTED] = "connected",
		[RXP_NH_KIND_GATEWAY] = "gateway", [RXP_NH_KIND_BLACKHOLE] = "blackhole",
		[RXP_NH_KIND_UNREACHABLE] = "unreachable", [RXP_NH_KIND_PROHIBIT] = "prohibit",
	};
	const char *kind = rt->nh == RXP_NH_LOCAL ? "local" : kinds[nh->kind];
	bool rejects = rt->nh != RXP_NH_LOCAL && rxp_nh_kind_rejects(nh->kind);

	if (json) {
		rxp_sbuf_printf(o, "%s{\"prefix\":\"", first ? "" : ",");
		put_addr(o, rt->family, rt->prefix);
		rxp_sbuf_printf(o, "/%u\",\"type\":\"%s\"", rt->plen, kind);
		if (rt->nh != RXP_NH_LOCAL && nh->kind == RXP_NH_KIND_GATEWAY) {
			rxp_sbuf_printf(o, ",\"via\":\"");
			put_addr(o, rt->family, nh->gw);
			rxp_sbuf_printf(o, "\"");
		}
		if (rt->nh != RXP_NH_LOCAL && !rejects)
			rxp_sbuf_printf(o, ",\"dev\":\"%s\"", sr->dev);
		rxp_sbuf_printf(o, ",\"origin\":\"%s\"%s}", rt->origin == RXP_ROUTE_KERNEL ? "kernel" : "static",
				rt->parked ? ",\"parked\":true" : "");
		return;
	}
	put_addr(o, rt->family, rt->prefix);
	rxp_sbuf_printf(o, "/%u", rt->plen);
	if (rt->nh == RXP_NH_LOCAL || rejects) {
		rxp_sbuf_printf(o, " %s%s\n", kind, rt->origin == RXP_ROUTE_KERNEL ? " proto kernel" : "");
		return;
	}
	if (nh->kind == RXP_NH_KIND_GATEWAY) {
		rxp_sbuf_printf(o, " via ");
		put_addr(o, rt->family, nh->gw);
	}
	rxp_sbuf_printf(o, " dev %s%s%s%s\n", sr->dev,
			nh->kind == RXP_NH_KIND_CONNECTED ? " connected" : "",
			rt->origin == RXP_ROUTE_KERNEL ? " proto kernel" : "",
			rt->parked ? " (parked: no subnet holds the gateway)" : "");
	}
}

static void route_copy(const struct rxp_router *r, const struct rxp_route *rt, struct show_route *sr)
{
	sr->rt = *rt;
	if (rxp_nh_is_group(rt->nh)) {
		memset(&sr->nh, 0, sizeof(sr->nh));
		sr->dev[0] = '\0';
		return;
	}
	sr->nh = r->nh[rt->nh];
	snprintf(sr->dev, sizeof(sr->dev), "%s", r->ifs[sr->nh.ifidx].name);
}

/* The groups in use, each member's state and packets as they are now. */
static int groups_collect(const struct rxp_router *r, struct show_request *req)
{
	if (!r->n_groups)
		return 0;
	req->groups = calloc(r->n_groups, sizeof(*req->groups));
	if (!req->groups) {
		snprintf(req->err, sizeof(req->err), "out of memory for %u next hop groups", r->n_groups);
		return -ENOMEM;
	}
	req->n_groups = r->n_groups;
	for (unsigned i = 0; i < r->n_groups; i++) {
		const struct rxp_nh_group *g = &r->groups[i];
		struct show_group *sg = &req->groups[i];

		if (!g->refs)
			continue;
		sg->n = g->n_paths;
		for (unsigned p = 0; p < g->n_paths; p++) {
			const struct rxp_nexthop *nh = &r->nh[g->nh[p]];
			struct show_path *sp = &sg->path[p];

			sp->has_gw = nh->kind == RXP_NH_KIND_GATEWAY;
			memcpy(sp->gw, nh->gw, 16);
			sp->weight = g->weight[p];
			sp->up = rxp_router_path_up(r, RXP_NH_GROUP | i, p);
			sp->packets = rxp_router_path_pkts(r, RXP_NH_GROUP | i, p);
			snprintf(sp->dev, sizeof(sp->dev), "%s", r->ifs[nh->ifidx].name);
		}
	}
	return 0;
}

/*
 * On the datapath thread only the copying: a full table is sorted and
 * printed by the caller (show_finish), so forwarding waits a few
 * milliseconds, not the time it takes to print a million routes.
 */
static int routes_collect(struct dp *dp, struct show_request *req)
{
	const struct rxp_router *r = dp->router;
	uint8_t prefix[16] = { 0 };
	uint8_t family = 0, plen = 0;
	struct show_route *list;
	uint32_t n = 0;
	int vrf;

	req->routes_collected = true;
	if (req->arg[0]) {
		char buf[80], *slash;
		unsigned long len;

		snprintf(buf, sizeof(buf), "%s", req->arg);
		slash = strchr(buf, '/');
		if (slash)
			*slash = '\0';
		family = inet_pton(AF_INET, buf, prefix) == 1 ? 4 :
			 inet_pton(AF_INET6, buf, prefix) == 1 ? 6 : 0;
		len = family == 4 ? 32 : 128;
		if (family && slash) {
			char *end;

			len = strtoul(slash + 1, &end, 10);
			if (*end || end == slash + 1 || len > (family == 4 ? 32u : 128u))
				family = 0;
		}
		if (!family) {
			snprintf(req->err, sizeof(req->err),
				 "'%s': expected an address or a prefix, like 10.9.1.1 or 10.9.0.0/16",
				 req->arg);
			return -EINVAL;
		}
		plen = (uint8_t)len;
		req->route_of_address = !slash;
	}
	if (!r) {
		req->no_router = true;
		return 0;
	}
	vrf = rxp_router_vrf_by_name(r, req->vrf);
	if (vrf < 0) {
		snprintf(req->err, sizeof(req->err), "VRF '%s': no such VRF", req->vrf);
		return -ENOENT;
	}
	list = malloc(((size_t)r->n_routes + 1) * sizeof(*list));
	if (!list) {
		snprintf(req->err, sizeof(req->err), "out of memory for %u routes", r->n_routes);
		return -ENOMEM;
	}
	if (req->route_of_address) {
		const struct rxp_route *rt = rxp_router_match(dp->router, (unsigned)vrf, family, prefix);

		if (rt)
			route_copy(r, rt, &list[n++]);
	} else {
		for (uint32_t i = 0; i < r->routes_size; i++) {
			const struct rxp_route *rt = &r->routes[i];

			if (rt->family && rt->vrf == vrf && (!family || route_within(rt, family, prefix, plen)))
				route_copy(r, rt, &list[n++]);
		}
	}
	req->routes = list;
	req->n_routes = n;
	return groups_collect(r, req);
}

void show_finish(struct show_request *req, struct rxp_sbuf *o)
{
	if (!req->routes_collected)
		return;
	if (req->no_router) {
		rxp_sbuf_printf(o, req->json ? "{\"routes\":[]}\n" : "no routes: rxpath runs as a receive sink\n");
		return;
	}
	qsort(req->routes, req->n_routes, sizeof(*req->routes), route_cmp);
	if (req->json)
		rxp_sbuf_printf(o, "{\"routes\":[");
	for (uint32_t i = 0; i < req->n_routes; i++)
		route_out(&req->routes[i], req->groups, req->json, i == 0, o);
	if (req->json)
		rxp_sbuf_printf(o, "]}\n");
	else if (!req->n_routes && !req->arg[0])
		rxp_sbuf_printf(o, "no routes\n");
	else if (!req->n_routes)
		rxp_sbuf_printf(o, req->route_of_address ? "no route to %s\n" : "no routes within %s\n",
				req->arg);
	free(req->routes);
	req->routes = NULL;
	free(req->groups);
	req->groups = NULL;
}

/* ---- show neigh ---- */

struct neigh_walk {
	struct dp *dp;
	struct rxp_sbuf *o;
	bool json, first;
};

static const char *neigh_state_name(uint8_t state)
{
	switch (state) {
	case RXP_NEIGH_INCOMPLETE: return "incomplete";
	case RXP_NEIGH_REACHABLE: return "reachable";
	case RXP_NEIGH_STATIC: return "static";
	case RXP_NEIGH_FAILED: return "failed";
	default: return "free";
	}
}

static void neigh_one(void *arg, struct rxp_neigh *n)
{
	struct neigh_walk *w = arg;
	const struct rxp_l3if *ifp = &w->dp->router->ifs[n->ifidx];
	uint64_t now = w->dp->stack.now_ns;
	double expires = n->deadline_ns > now ? (double)(n->deadline_ns - now) * 1e-9 : 0;
	bool has_mac = n->state == RXP_NEIGH_REACHABLE || n->state == RXP_NEIGH_STATIC;

	if (w->json) {
		rxp_sbuf_printf(w->o, "%s{\"address\":\"", w->first ? "" : ",");
		put_addr(w->o, n->family, n->addr);
		rxp_sbuf_printf(w->o, "\",\"dev\":\"%s\",\"state\":\"%s\"", ifp->name,
				neigh_state_name(n->state));
		if (has_mac) {
			rxp_sbuf_printf(w->o, ",\"lladdr\":\"");
			put_mac(w->o, n->mac);
			rxp_sbuf_printf(w->o, "\"");
		}
		rxp_sbuf_printf(w->o, ",\"held\":%u", n->n_held);
		if (n->state == RXP_NEIGH_REACHABLE)
			rxp_sbuf_printf(w->o, ",\"renew_requests\":%u", n->probes);
		if (n->state != RXP_NEIGH_STATIC)
			rxp_sbuf_printf(w->o, ",\"expires_s\":%.1f", expires);
		rxp_sbuf_printf(w->o, "}");
	} else {
		put_addr(w->o, n->family, n->addr);
		rxp_sbuf_printf(w->o, " dev %s", ifp->name);
		if (has_mac) {
			rxp_sbuf_printf(w->o, " lladdr ");
			put_mac(w->o, n->mac);
		}
		rxp_sbuf_printf(w->o, " %s", neigh_state_name(n->state));
		if (n->state == RXP_NEIGH_REACHABLE && n->probes)
			rxp_sbuf_printf(w->o, ", renewing (%u request%s unanswered)", n->probes,
					n->probes == 1 ? "" : "s");
		if (n->n_held)
			rxp_sbuf_printf(w->o, " (%u packets waiting)", n->n_held);
		if (n->state != RXP_NEIGH_STATIC)
			rxp_sbuf_printf(w->o, " %s %.1f s", n->state == RXP_NEIGH_INCOMPLETE ?
					"next try in" : "expires in", expires);
		rxp_sbuf_printf(w->o, "\n");
	}
	w->first = false;
}

static void neigh_out(struct dp *dp, bool json, struct rxp_sbuf *o)
{
	struct neigh_walk w = { .dp = dp, .o = o, .json = json, .first = true };

	if (json)
		rxp_sbuf_printf(o, "{\"neighbours\":[");
	if (dp->router)
		rxp_neigh_walk(&dp->router->neigh, neigh_one, &w);
	if (json)
		rxp_sbuf_printf(o, "]}\n");
	else if (w.first)
		rxp_sbuf_printf(o, "no neighbours\n");
}

/* ---- show pool ---- */

static void pool_out(struct dp *dp, bool json, struct rxp_sbuf *o)
{
	const struct rxp_pool *p = dp->pool;
	struct rxp_pool_stats psum;
	const struct rxp_pool_stats *ps = &psum;
	uint32_t in_ring = rxp_pool_ring_count(p), in_cache = dp_pool_stats(dp, &psum);

	if (json) {
		rxp_sbuf_printf(o, "{\"buffers\":%u,\"buffer_size\":%u,\"region_bytes\":%zu,"
				"\"hugepages\":%s,\"rx_offset\":%u,\"max_frame\":%u,"
				"\"free_in_ring\":%u,\"in_cache\":%u,\"in_use\":%u",
				p->n_bufs, p->buf_size, p->region_len, p->hugepages ? "true" : "false",
				p->rx_offset, p->max_frame, in_ring, in_cache,
				p->n_bufs - in_ring - in_cache);
#define X(f, metric, help) rxp_sbuf_printf(o, ",\"" #f "\":%llu", (unsigned long long)ps->f);
		RXP_POOL_COUNTERS(X)
#undef X
		rxp_sbuf_printf(o, "}\n");
		return;
	}
	rxp_sbuf_printf(o, "pool: %u buffers x %u B (%.1f MiB%s), rx offset %u, max frame %u\n",
			p->n_bufs, p->buf_size, (double)p->region_len / (1 << 20),
			p->hugepages ? ", huge pages" : "", p->rx_offset, p->max_frame);
	rxp_sbuf_printf(o, "  free in ring %u, in the worker's cache %u, in use (rings, TX, held) %u\n",
			in_ring, in_cache, p->n_bufs - in_ring - in_cache);
	rxp_sbuf_printf(o, "  allocs fast %llu, slow %llu, empty %llu; recycled to cache %llu, to ring %llu\n",
			(unsigned long long)ps->alloc_fast, (unsigned long long)ps->alloc_slow,
			(unsigned long long)ps->alloc_empty, (unsigned long long)ps->recycle_cached,
			(unsigned long long)ps->recycle_ring);
}

int show_run(struct dp *dp, void *arg, struct rxp_sbuf *out)
{
	struct show_request *req = arg;

	if (req->arg[0] && strcmp(req->what, "routes")) {
		snprintf(req->err, sizeof(req->err), "'%s': show %s takes nothing more", req->arg,
			 req->what);
		return -EINVAL;
	}
	if (!strcmp(req->what, "ports"))
		req->json ? ports_json(dp, req->cfg, out) : ports_text(dp, req->cfg, out);
	else if (!strcmp(req->what, "stats"))
		req->json ? stats_json(dp, out) : stats_text(dp, out);
	else if (!strcmp(req->what, "drops"))
		drops_out(dp, out, req->json);
	else if (!strcmp(req->what, "routes"))
		return routes_collect(dp, req);
	else if (!strcmp(req->what, "neigh"))
		neigh_out(dp, req->json, out);
	else if (!strcmp(req->what, "pool"))
		pool_out(dp, req->json, out);
	else {
		snprintf(req->err, sizeof(req->err), "'%s': expected what to show: %s", req->what,
			 show_topics());
		return -EINVAL;
	}
	return 0;
}
