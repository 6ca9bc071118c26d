/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the engine (src/engine): each router command kind applied
 * and taken back with the inverse computed before it (the router's state,
 * as a report would list it, is as it was), batches (all or nothing with
 * the take-back, keep going, the undo handed back), the mailbox (calls run
 * on the thread that services them; none after control_stop), the barrier
 * between workers, the poll loop's duration and forwarding, and the buffer
 * audit of dp_close(). Only sim ports: no privileges needed.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/clock.h"
#include "engine/control.h"
#include "engine/dataplane.h"
#include "engine/loop.h"
#include "engine/workers.h"
#include "rxpath/router.h"
#include "rxpath/stack.h"
#include "check.h"

#define ERR_LEN 512
#define MAC_NEIGH "02:00:00:00:01:02"
#define MAC_OTHER "02:00:00:00:01:99"

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- commands, written by hand (the engine's own input, not the parser's) ---- */

/* "10.0.1.1/24", "2001:db8::1" (a host prefix without a length) into @c. */
static void set_prefix(struct dp_cmd *c, const char *text)
{
	char buf[64];
	const char *slash = strchr(text, '/');
	size_t n = slash ? (size_t)(slash - text) : strlen(text);

	memcpy(buf, text, n);
	buf[n] = '\0';
	memset(c->addr, 0, sizeof(c->addr));
	c->family = strchr(buf, ':') ? 6 : 4;
	if (inet_pton(c->family == 4 ? AF_INET : AF_INET6, buf, c->addr) != 1)
		fprintf(stdout, "  bad address in the test itself: %s\n", text);
	c->plen = (uint8_t)(slash ? atoi(slash + 1) : c->family == 4 ? 32 : 128);
}

static void set_mac(uint8_t mac[6], const char *text)
{
	unsigned m[6] = { 0 };

	sscanf(text, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]);
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
}

static struct dp_cmd mk(enum dp_cmd_kind kind, const char *dev)
{
	static unsigned line;
	struct dp_cmd c = { .kind = kind };

	snprintf(c.where, sizeof(c.where), "test:%04u", ++line);	/* no where a prefix of another */
	if (dev)
		snprintf(c.dev, sizeof(c.dev), "%s", dev);
	return c;
}

static struct dp_cmd cmd_addr(enum dp_cmd_kind kind, const char *prefix, const char *dev)
{
	struct dp_cmd c = mk(kind, dev);

	set_prefix(&c, prefix);
	return c;
}

/* @gw and @dev may be NULL. */
static struct dp_cmd cmd_route(enum dp_cmd_kind kind, const char *prefix, const char *gw,
			       const char *dev)
{
	struct dp_cmd c = mk(kind, dev);

	set_prefix(&c, prefix);
	if (gw) {
		c.has_gw = true;
		inet_pton(c.family == 4 ? AF_INET : AF_INET6, gw, c.gw);
	}
	return c;
}

static struct dp_cmd cmd_neigh(enum dp_cmd_kind kind, const char *addr, const char *mac,
			       const char *dev)
{
	struct dp_cmd c = mk(kind, dev);

	set_prefix(&c, addr);
	if (mac)
		set_mac(c.mac, mac);
	return c;
}

/* ---- a datapath of sim ports ---- */

static unsigned log_lines;
static char last_log[512];

static void count_log(const char *line)
{
	log_lines++;
	snprintf(last_log, sizeof(last_log), "%s", line);
}

/*
 * The router of the tests: p0 receives (@p0_spec), p1 only transmits, both
 * with addresses; on p1 a static neighbour, gateway of 16.0.0.0/8 (found
 * from its subnet) and of an IPv6 route; an address with nothing on it.
 */
static void router_config(struct dp_config *cfg, const char *p0_spec, unsigned workers)
{
	char err[ERR_LEN];
	struct dp_cmd c[] = {
		cmd_addr(DP_CMD_ADDR_ADD, "198.18.1.1/16", "p0"),
		cmd_addr(DP_CMD_ADDR_ADD, "10.0.1.1/24", "p1"),
		cmd_addr(DP_CMD_ADDR_ADD, "10.0.3.1/24", "p1"),
		cmd_addr(DP_CMD_ADDR_ADD, "2001:db8:1::1/64", "p1"),
		cmd_neigh(DP_CMD_NEIGH_ADD, "10.0.1.2", MAC_NEIGH, "p1"),
		cmd_route(DP_CMD_ROUTE_ADD, "16.0.0.0/8", "10.0.1.2", NULL),
		cmd_route(DP_CMD_ROUTE_ADD, "17.0.0.0/8", "10.0.1.2", "p1"),
		cmd_route(DP_CMD_ROUTE_ADD, "2001:db8:9::/48", "2001:db8:1::2", NULL),
		cmd_route(DP_CMD_ROUTE_ADD, "192.0.2.0/24", NULL, NULL),
	};

	c[8].route_type = RXP_NH_KIND_UNREACHABLE;
	dp_config_default(cfg);
	cfg->log = count_log;
	cfg->n_workers = workers;
	CHECK_EQ(dp_config_add_port(cfg, "p0", p0_spec, err, sizeof(err)), 0);
	CHECK_EQ(dp_config_add_port(cfg, "p1", "sim:rx=off", err, sizeof(err)), 0);
	for (size_t i = 0; i < RXP_ARRAY_SIZE(c); i++)
		CHECK_EQ(dp_config_add_cmd(cfg, &c[i]), 0);
}

/* Opens @cfg (freed here). Returns true when it opened. */
static bool open_cfg(struct dp *dp, struct dp_config *cfg)
{
	char err[ERR_LEN] = "";
	int ret = dp_open(dp, cfg, err, sizeof(err));

	if (ret)
		fprintf(stdout, "  dp_open: %d: %s\n", ret, err);
	CHECK_EQ(ret, 0);
	dp_config_free(cfg);
	return ret == 0;
}

static bool open_router(struct dp *dp)
{
	struct dp_config cfg;

	router_config(&cfg, "sim:rx=off", 1);
	return open_cfg(dp, &cfg);
}

/* Closes @dp and checks that every buffer came back. */
static void close_dp(struct dp *dp)
{
	CHECK_EQ(dp_close(dp), 0);
}

/* ---- the router's state, as lines a report would show, sorted ---- */

#define STATE_LINE 200
#define STATE_LINES 2048

struct state {
	unsigned n;
	char (*line)[STATE_LINE];
};

static void state_add(struct state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void state_add(struct state *s, const char *fmt, ...)
{
	va_list ap;

	if (s->n == STATE_LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(s->line[s->n++], STATE_LINE, fmt, ap);
	va_end(ap);
}

static const char *ip_text(uint8_t family, const void *a, char *buf)
{
	return inet_ntop(family == 4 ? AF_INET : AF_INET6, a, buf, INET6_ADDRSTRLEN) ? buf : "?";
}

struct neigh_ctx {
	struct state *s;
	const struct rxp_router *r;
};

static void state_neigh(void *ctx, struct rxp_neigh *n)
{
	struct neigh_ctx *c = ctx;
	char a[INET6_ADDRSTRLEN];

	state_add(c->s, "neigh %s %s %02x:%02x:%02x:%02x:%02x:%02x state %u kernel %d",
		  c->r->ifs[n->ifidx].name, ip_text(n->family, n->addr, a), n->mac[0], n->mac[1],
		  n->mac[2], n->mac[3], n->mac[4], n->mac[5], n->state, n->from_kernel);
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Every interface, address, route (with its next hop), neighbour and setting of @dp. */
static struct state state_of(struct dp *dp)
{
	struct state s = { 0, calloc(STATE_LINES, STATE_LINE) };
	struct rxp_router *r = dp->router;
	char a[INET6_ADDRSTRLEN], g[INET6_ADDRSTRLEN];
	double rate, burst;

	if (!s.line)
		return s;
	rxp_stack_icmp_rate(&dp->stack, &rate, &burst);
	state_add(&s, "icmp rate %.3f burst %.3f", rate, burst);
	state_add(&s, "shadowed %u", dp->n_shadowed);
	if (!r) {
		state_add(&s, "no router");
		return s;
	}
	state_add(&s, "ageing %llu source-route %d", (unsigned long long)r->neigh_reachable_ns,
		  !r->no_source_route);
	state_add(&s, "counts ifs %u routes %u neigh %u", r->n_ifs, r->n_routes,
		  r->neigh.n_entries);
	for (unsigned i = 0; i < r->n_ifs; i++) {
		const struct rxp_l3if *ifp = &r->ifs[i];

		state_add(&s, "if %s port %u vlan %u mtu %u mtu_cfg %u redirects %d ra %d", ifp->name,
			  ifp->port, ifp->vlan, ifp->mtu, dp->mtu_cfg[i], !ifp->no_redirects, ifp->ra);
		for (unsigned k = 0; k < ifp->n_addr4; k++)
			state_add(&s, "addr %s %s/%u", ifp->name, ip_text(4, &ifp->addr4[k], a),
				  ifp->plen4[k]);
		for (unsigned k = 0; k < ifp->n_addr6; k++)
			state_add(&s, "addr %s %s/%u", ifp->name, ip_text(6, ifp->addr6[k], a),
				  ifp->plen6[k]);
	}
	for (uint32_t i = 0; i < r->routes_size; i++) {
		const struct rxp_route *rt = &r->routes[i];
		const struct rxp_nexthop *nh;

		if (!rt->family)
			continue;
		nh = &r->nh[rt->nh];
		state_add(&s, "route %s/%u kind %u gw %s if %s found %d origin %u parked %d",
			  ip_text(rt->family, rt->prefix, a), rt->plen, nh->kind,
			  nh->kind == RXP_NH_KIND_GATEWAY ? ip_text(rt->family, nh->gw, g) : "-",
			  nh->kind == RXP_NH_KIND_LOCAL || rxp_nh_kind_rejects(nh->kind) ? "-" :
			  r->ifs[nh->ifidx].name, nh->if_found, rt->origin, rt->parked);
	}
	rxp_neigh_walk(&r->neigh, state_neigh, &(struct neigh_ctx){ &s, r });
	qsort(s.line, s.n, STATE_LINE, line_cmp);
	return s;
}

static bool state_has(const struct state *s, const char *prefix)
{
	for (unsigned i = 0; i < s->n; i++)
		if (!strncmp(s->line[i], prefix, strlen(prefix)))
			return true;
	return false;
}

/* True when @a and @b are the same; else prints the lines only one has. */
static bool state_same(const struct state *a, const struct state *b)
{
	bool same = a->n == b->n;

	for (unsigned i = 0; i < a->n; i++) {
		bool found = false;

		for (unsigned k = 0; k < b->n && !found; k++)
			found = !strcmp(a->line[i], b->line[k]);
		if (!found) {
			fprintf(stdout, "  before, not after: %s\n", a->line[i]);
			same = false;
		}
	}
	for (unsigned k = 0; k < b->n; k++) {
		bool found = false;

		for (unsigned i = 0; i < a->n && !found; i++)
			found = !strcmp(a->line[i], b->line[k]);
		if (!found) {
			fprintf(stdout, "  after, not before: %s\n", b->line[k]);
			same = false;
		}
	}
	return same;
}

static bool state_differs(const struct state *a, const struct state *b)
{
	if (a->n != b->n)
		return true;
	for (unsigned i = 0; i < a->n; i++)
		if (strcmp(a->line[i], b->line[i]))
			return true;
	return false;
}

static void state_free(struct state *s)
{
	free(s->line);
	s->line = NULL;
}

/* ---- apply and take back ---- */

struct roundtrip {
	struct state before;
	struct dp_cmd inv;
	bool has_inv;
	char err[ERR_LEN];
};

/* Keeps the state, computes the inverse of @c before it goes in, applies @c. Returns its result. */
static int rt_apply(struct dp *dp, const struct dp_cmd *c, struct roundtrip *t)
{
	struct state mid;
	int ret;

	t->before = state_of(dp);
	t->has_inv = dp_cmd_inverse(dp, c, &t->inv);
	CHECK(t->has_inv);
	CHECK(t->inv.undo);
	ret = dp_apply_cmd(dp, c, t->err, sizeof(t->err));
	if (ret)
		fprintf(stdout, "  %s: %d: %s\n", c->where, ret, t->err);
	CHECK_EQ(ret, 0);
	mid = state_of(dp);
	CHECK(state_differs(&t->before, &mid));	/* the command changed something */
	state_free(&mid);
	return ret;
}

/* Applies the inverse; the state is the one before. */
static void rt_undo(struct dp *dp, struct roundtrip *t)
{
	struct state after;
	int ret = t->has_inv ? dp_apply_cmd(dp, &t->inv, t->err, sizeof(t->err)) : -1;

	if (ret)
		fprintf(stdout, "  %s: %d: %s\n", t->inv.where, ret, t->err);
	CHECK_EQ(ret, 0);
	after = state_of(dp);
	CHECK(state_same(&t->before, &after));
	state_free(&after);
	state_free(&t->before);
}

static const struct rxp_route *route_of(struct dp *dp, const char *prefix)
{
	struct dp_cmd c = { 0 };

	set_prefix(&c, prefix);
	return rxp_router_route(dp->router, RXP_VRF_DEFAULT, c.family, c.addr, c.plen);
}

static const struct rxp_neigh *neigh_of(struct dp *dp, const char *dev, const char *addr)
{
	struct dp_cmd c = { 0 };
	int ifidx = rxp_router_if_by_name(dp->router, dev);

	set_prefix(&c, addr);
	return ifidx < 0 ? NULL : rxp_neigh_lookup(&dp->router->neigh, (uint16_t)ifidx, c.family,
						    c.addr);
}

static bool gw_is(struct dp *dp, const struct rxp_route *rt, const char *gw)
{
	uint8_t a[16] = { 0 };

	if (!rt || dp->router->nh[rt->nh].kind != RXP_NH_KIND_GATEWAY)
		return false;
	inet_pton(rt->family == 4 ? AF_INET : AF_INET6, gw, a);
	return !memcmp(dp->router->nh[rt->nh].gw, a, rt->family == 4 ? 4 : 16);
}

static const struct rxp_l3if *if_of(struct dp *dp, const char *name)
{
	int i = rxp_router_if_by_name(dp->router, name);

	return i < 0 ? NULL : &dp->router->ifs[i];
}

static bool if_has_addr4(struct dp *dp, const char *dev, const char *addr, uint8_t plen)
{
	const struct rxp_l3if *ifp = if_of(dp, dev);
	uint32_t a;

	inet_pton(AF_INET, addr, &a);
	for (unsigned k = 0; ifp && k < ifp->n_addr4; k++)
		if (ifp->addr4[k] == a && ifp->plen4[k] == plen)
			return true;
	return false;
}

static void test_open_state(void)
{
	struct dp dp;
	struct state s;

	if (!open_router(&dp))
		return;
	CHECK(dp.router != NULL);
	CHECK_EQ(dp.n_ports, 2);
	CHECK(rxp_router_if_by_name(dp.router, "p0") >= 0);
	CHECK(rxp_router_if_by_name(dp.router, "p1") >= 0);
	CHECK(rxp_router_if_by_name(dp.router, "p9") < 0);
	CHECK(if_has_addr4(&dp, "p1", "10.0.1.1", 24));
	CHECK(gw_is(&dp, route_of(&dp, "16.0.0.0/8"), "10.0.1.2"));
	CHECK(route_of(&dp, "10.0.1.0/24") != NULL);	/* the connected route */
	CHECK(route_of(&dp, "10.9.0.0/16") == NULL);
	CHECK(neigh_of(&dp, "p1", "10.0.1.2") != NULL);
	CHECK_EQ(if_of(&dp, "p1")->mtu, 1500);
	s = state_of(&dp);
	CHECK(state_has(&s, "route 16.0.0.0/8 kind 2 gw 10.0.1.2 if p1 found 1"));
	CHECK(state_has(&s, "route 17.0.0.0/8 kind 2 gw 10.0.1.2 if p1 found 0"));
	CHECK(state_has(&s, "route 192.0.2.0/24 kind 4"));
	state_free(&s);
	close_dp(&dp);
}

static void test_undo_addr_add(void)
{
	struct dp dp;
	struct roundtrip t;
	struct dp_cmd c = cmd_addr(DP_CMD_ADDR_ADD, "10.0.2.1/24", "p1");
	struct dp_cmd c6 = cmd_addr(DP_CMD_ADDR_ADD, "2001:db8:5::1/64", "p0");
	struct dp_cmd same = cmd_addr(DP_CMD_ADDR_ADD, "10.0.1.1/24", "p1");
	struct dp_cmd inv;

	if (!open_router(&dp))
		return;
	if (!rt_apply(&dp, &c, &t)) {
		CHECK_EQ(t.inv.kind, DP_CMD_ADDR_DEL);
		CHECK(if_has_addr4(&dp, "p1", "10.0.2.1", 24));
		CHECK(route_of(&dp, "10.0.2.0/24") != NULL);
		CHECK(route_of(&dp, "10.0.2.1/32") != NULL);
	}
	rt_undo(&dp, &t);
	CHECK(!if_has_addr4(&dp, "p1", "10.0.2.1", 24));
	CHECK(route_of(&dp, "10.0.2.0/24") == NULL);

	if (!rt_apply(&dp, &c6, &t))
		CHECK(route_of(&dp, "2001:db8:5::/64") != NULL);
	rt_undo(&dp, &t);
	CHECK(route_of(&dp, "2001:db8:5::/64") == NULL);

	/* an address said again as it is changes nothing: nothing to put back */
	CHECK(!dp_cmd_inverse(&dp, &same, &inv));
	close_dp(&dp);
}

static void test_undo_addr_del(void)
{
	struct dp dp;
	struct roundtrip t;
	struct dp_cmd lone = cmd_addr(DP_CMD_ADDR_DEL, "10.0.3.1", "p1");
	struct dp_cmd gw_subnet = cmd_addr(DP_CMD_ADDR_DEL, "10.0.1.1", "p1");
	struct dp_cmd v6 = cmd_addr(DP_CMD_ADDR_DEL, "2001:db8:1::1", "p1");

	if (!open_router(&dp))
		return;
	/* the length is not given: the inverse puts back the one it had */
	lone.plen = 0;
	if (!rt_apply(&dp, &lone, &t)) {
		CHECK_EQ(t.inv.kind, DP_CMD_ADDR_ADD);
		CHECK_EQ(t.inv.plen, 24);
		CHECK(!if_has_addr4(&dp, "p1", "10.0.3.1", 24));
		CHECK(route_of(&dp, "10.0.3.0/24") == NULL);
	}
	rt_undo(&dp, &t);
	CHECK(if_has_addr4(&dp, "p1", "10.0.3.1", 24));

	/* the subnet of a gateway: its routes are parked, and back with the address */
	gw_subnet.plen = 0;
	if (!rt_apply(&dp, &gw_subnet, &t)) {
		const struct rxp_route *rt = route_of(&dp, "16.0.0.0/8");

		CHECK(rt == NULL || rt->parked);
	}
	rt_undo(&dp, &t);
	CHECK(gw_is(&dp, route_of(&dp, "16.0.0.0/8"), "10.0.1.2"));
	CHECK(route_of(&dp, "16.0.0.0/8") && !route_of(&dp, "16.0.0.0/8")->parked);

	v6.plen = 0;
	if (!rt_apply(&dp, &v6, &t))
		CHECK(route_of(&dp, "2001:db8:1::/64") == NULL);
	rt_undo(&dp, &t);
	CHECK(route_of(&dp, "2001:db8:1::/64") != NULL);
	close_dp(&dp);
}

static void test_undo_route_add(void)
{
	struct dp dp;
	struct roundtrip t;
	struct dp_cmd fresh = cmd_route(DP_CMD_ROUTE_ADD, "10.9.0.0/16", "10.0.1.2", NULL);
	struct dp_cmd change = cmd_route(DP_CMD_ROUTE_ADD, "16.0.0.0/8", "10.0.1.3", NULL);
	struct dp_cmd change_dev = cmd_route(DP_CMD_ROUTE_ADD, "17.0.0.0/8", "198.18.0.9", "p0");
	struct dp_cmd reject = cmd_route(DP_CMD_ROUTE_ADD, "10.66.0.0/16", NULL, NULL);
	struct dp_cmd onlink = cmd_route(DP_CMD_ROUTE_ADD, "10.77.0.0/16", NULL, "p0");
	struct dp_cmd v6 = cmd_route(DP_CMD_ROUTE_ADD, "2001:db8:9::/48", "2001:db8:1::3", "p1");

	reject.route_type = RXP_NH_KIND_BLACKHOLE;
	if (!open_router(&dp))
		return;
	if (!rt_apply(&dp, &fresh, &t)) {
		CHECK_EQ(t.inv.kind, DP_CMD_ROUTE_DEL);
		CHECK(gw_is(&dp, route_of(&dp, "10.9.0.0/16"), "10.0.1.2"));
	}
	rt_undo(&dp, &t);
	CHECK(route_of(&dp, "10.9.0.0/16") == NULL);

	/* a route replaced: the inverse is the route as it was */
	if (!rt_apply(&dp, &change, &t)) {
		CHECK_EQ(t.inv.kind, DP_CMD_ROUTE_ADD);
		CHECK(gw_is(&dp, route_of(&dp, "16.0.0.0/8"), "10.0.1.3"));
	}
	rt_undo(&dp, &t);
	CHECK(gw_is(&dp, route_of(&dp, "16.0.0.0/8"), "10.0.1.2"));

	if (!rt_apply(&dp, &change_dev, &t)) {
		const struct rxp_route *rt = route_of(&dp, "17.0.0.0/8");

		CHECK(gw_is(&dp, rt, "198.18.0.9"));
		CHECK(rt && dp.router->nh[rt->nh].ifidx == rxp_router_if_by_name(dp.router, "p0"));
	}
	rt_undo(&dp, &t);
	CHECK(gw_is(&dp, route_of(&dp, "17.0.0.0/8"), "10.0.1.2"));

	if (!rt_apply(&dp, &reject, &t)) {
		const struct rxp_route *rt = route_of(&dp, "10.66.0.0/16");

		CHECK(rt && dp.router->nh[rt->nh].kind == RXP_NH_KIND_BLACKHOLE);
	}
	rt_undo(&dp, &t);
	CHECK(route_of(&dp, "10.66.0.0/16") == NULL);

	if (!rt_apply(&dp, &onlink, &t)) {
		const struct rxp_route *rt = route_of(&dp, "10.77.0.0/16");

		CHECK(rt && dp.router->nh[rt->nh].kind == RXP_NH_KIND_CONNECTED);
	}
	rt_undo(&dp, &t);
	CHECK(route_of(&dp, "10.77.0.0/16") == NULL);

	if (!rt_apply(&dp, &v6, &t))
		CHECK(gw_is(&dp, route_of(&dp, "2001:db8:9::/48"), "2001:db8:1::3"));
	rt_undo(&dp, &t);
	CHECK(gw_is(&dp, route_of(&dp, "2001:db8:9::/48"), "2001:db8:1::2"));
	close_dp(&dp);
}

static void test_undo_route_del(void)
{
	struct dp dp;
	struct roundtrip t;
	struct dp_cmd found = cmd_route(DP_CMD_ROUTE_DEL, "16.0.0.0/8", NULL, NULL);
	struct dp_cmd with_dev = cmd_route(DP_CMD_ROUTE_DEL, "17.0.0.0/8", "10.0.1.2", "p1");
	struct dp_cmd reject = cmd_route(DP_CMD_ROUTE_DEL, "192.0.2.0/24", NULL, NULL);
	struct dp_cmd v6 = cmd_route(DP_CMD_ROUTE_DEL, "2001:db8:9::/48", NULL, NULL);
	struct dp_cmd wrong_gw = cmd_route(DP_CMD_ROUTE_DEL, "16.0.0.0/8", "10.0.1.7", NULL);
	char err[ERR_LEN];

	if (!open_router(&dp))
		return;
	if (!rt_apply(&dp, &found, &t)) {
		CHECK_EQ(t.inv.kind, DP_CMD_ROUTE_ADD);
		CHECK(route_of(&dp, "16.0.0.0/8") == NULL);
	}
	rt_undo(&dp, &t);

	if (!rt_apply(&dp, &with_dev, &t))
		CHECK(route_of(&dp, "17.0.0.0/8") == NULL);
	rt_undo(&dp, &t);

	if (!rt_apply(&dp, &reject, &t)) {
		CHECK_EQ(t.inv.route_type, RXP_NH_KIND_UNREACHABLE);
		CHECK(route_of(&dp, "192.0.2.0/24") == NULL);
	}
	rt_undo(&dp, &t);

	if (!rt_apply(&dp, &v6, &t))
		CHECK(route_of(&dp, "2001:db8:9::/48") == NULL);
	rt_undo(&dp, &t);

	/* a del naming another gateway deletes nothing, and says what the route is */
	CHECK_EQ(dp_apply_cmd(&dp, &wrong_gw, err, sizeof(err)), -ESRCH);
	CHECK(strstr(err, wrong_gw.where) == err);
	CHECK(strstr(err, "via 10.0.1.2") != NULL);
	CHECK(gw_is(&dp, route_of(&dp, "16.0.0.0/8"), "10.0.1.2"));
	close_dp(&dp);
}

static void test_undo_neigh(void)
{
	struct dp dp;
	struct roundtrip t;
	struct dp_cmd fresh = cmd_neigh(DP_CMD_NEIGH_ADD, "10.0.1.3", MAC_OTHER, "p1");
	struct dp_cmd change = cmd_neigh(DP_CMD_NEIGH_ADD, "10.0.1.2", MAC_OTHER, "p1");
	struct dp_cmd del = cmd_neigh(DP_CMD_NEIGH_DEL, "10.0.1.2", NULL, "p1");
	struct dp_cmd v6 = cmd_neigh(DP_CMD_NEIGH_ADD, "2001:db8:1::2", MAC_OTHER, "p1");
	uint8_t other[6], orig[6];

	set_mac(other, MAC_OTHER);
	set_mac(orig, MAC_NEIGH);
	if (!open_router(&dp))
		return;
	if (!rt_apply(&dp, &fresh, &t)) {
		const struct rxp_neigh *n = neigh_of(&dp, "p1", "10.0.1.3");

		CHECK_EQ(t.inv.kind, DP_CMD_NEIGH_DEL);
		CHECK(n && n->state == RXP_NEIGH_STATIC && !memcmp(n->mac, other, 6));
	}
	rt_undo(&dp, &t);
	CHECK(neigh_of(&dp, "p1", "10.0.1.3") == NULL);

	if (!rt_apply(&dp, &change, &t)) {
		const struct rxp_neigh *n = neigh_of(&dp, "p1", "10.0.1.2");

		CHECK_EQ(t.inv.kind, DP_CMD_NEIGH_ADD);
		CHECK(!memcmp(t.inv.mac, orig, 6));
		CHECK(n && !memcmp(n->mac, other, 6));
	}
	rt_undo(&dp, &t);
	CHECK(neigh_of(&dp, "p1", "10.0.1.2") && !memcmp(neigh_of(&dp, "p1", "10.0.1.2")->mac, orig, 6));

	if (!rt_apply(&dp, &del, &t)) {
		CHECK_EQ(t.inv.kind, DP_CMD_NEIGH_ADD);
		CHECK(neigh_of(&dp, "p1", "10.0.1.2") == NULL);
	}
	rt_undo(&dp, &t);
	CHECK(neigh_of(&dp, "p1", "10.0.1.2") != NULL);

	if (!rt_apply(&dp, &v6, &t))
		CHECK(neigh_of(&dp, "p1", "2001:db8:1::2") != NULL);
	rt_undo(&dp, &t);
	CHECK(neigh_of(&dp, "p1", "2001:db8:1::2") == NULL);
	close_dp(&dp);
}

static void test_undo_mtu(void)
{
	struct dp dp;
	struct roundtrip t;
	struct dp_cmd c = mk(DP_CMD_MTU, "p1");
	struct dp_cmd low = mk(DP_CMD_MTU, "p1");
	struct dp_cmd huge = mk(DP_CMD_MTU, "p1");
	char err[ERR_LEN];
	unsigned logged;

	c.mtu = 1400;
	low.mtu = 1200;
	huge.mtu = 9000;
	if (!open_router(&dp))
		return;
	if (!rt_apply(&dp, &c, &t)) {
		CHECK_EQ(if_of(&dp, "p1")->mtu, 1400);
		CHECK_EQ(t.inv.mtu, 0);	/* it followed the default */
		CHECK_EQ(if_of(&dp, "p0")->mtu, 1500);
	}
	rt_undo(&dp, &t);
	CHECK_EQ(if_of(&dp, "p1")->mtu, 1500);

	/* taken, with a warning for whoever asked and for the log */
	logged = log_lines;
	if (!rt_apply(&dp, &low, &t)) {
		CHECK(!strncmp(t.err, "warning: ", 9));
		CHECK_EQ(log_lines, logged + 1);
		CHECK(!strcmp(last_log, t.err));
		CHECK_EQ(if_of(&dp, "p1")->mtu, 1200);
	}
	rt_undo(&dp, &t);

	/* more than a frame of the pool carries: refused, nothing changed */
	CHECK_EQ(dp_apply_cmd(&dp, &huge, err, sizeof(err)), -EINVAL);
	CHECK(!strncmp(err, huge.where, strlen(huge.where)));
	CHECK(strstr(err, "--max-frame") != NULL);
	CHECK_EQ(if_of(&dp, "p1")->mtu, 1500);
	close_dp(&dp);
}

static void test_undo_icmp_rate(void)
{
	struct dp dp;
	struct roundtrip t;
	struct dp_cmd c = mk(DP_CMD_ICMP_RATE, NULL);
	double rate, burst;

	c.rate = 50;
	c.burst = 5;
	if (!open_router(&dp))
		return;
	rxp_stack_icmp_rate(&dp.stack, &rate, &burst);
	CHECK(rate == RXP_ICMP_RATE_DEFAULT && burst == RXP_ICMP_BURST_DEFAULT);
	if (!rt_apply(&dp, &c, &t)) {
		rxp_stack_icmp_rate(&dp.stack, &rate, &burst);
		CHECK(rate == 50 && burst == 5);
		CHECK(t.inv.rate == RXP_ICMP_RATE_DEFAULT && t.inv.burst == RXP_ICMP_BURST_DEFAULT);
	}
	rt_undo(&dp, &t);
	rxp_stack_icmp_rate(&dp.stack, &rate, &burst);
	CHECK(rate == RXP_ICMP_RATE_DEFAULT && burst == RXP_ICMP_BURST_DEFAULT);

	/* from another value than the default: the inverse is that one (0: no errors at all) */
	CHECK_EQ(dp_apply_cmd(&dp, &c, t.err, sizeof(t.err)), 0);
	c.rate = 0;
	c.burst = 0;
	if (!rt_apply(&dp, &c, &t))
		CHECK(t.inv.rate == 50 && t.inv.burst == 5);
	rt_undo(&dp, &t);
	rxp_stack_icmp_rate(&dp.stack, &rate, &burst);
	CHECK(rate == 50 && burst == 5);
	close_dp(&dp);
}

static void test_undo_flags(void)
{
	struct dp dp;
	struct roundtrip t;
	struct dp_cmd redir = mk(DP_CMD_REDIRECTS, "p1");
	struct dp_cmd ra = mk(DP_CMD_RA, "p1");
	struct dp_cmd sr = mk(DP_CMD_SOURCE_ROUTE, NULL);
	struct dp_cmd nosuch = mk(DP_CMD_REDIRECTS, "p9");
	char err[ERR_LEN];

	redir.redirects = false;
	ra.ra_on = true;
	sr.source_route = false;
	if (!open_router(&dp))
		return;
	if (!rt_apply(&dp, &redir, &t)) {
		CHECK(if_of(&dp, "p1")->no_redirects);
		CHECK(!if_of(&dp, "p0")->no_redirects);
		CHECK(t.inv.redirects);
	}
	rt_undo(&dp, &t);
	CHECK(!if_of(&dp, "p1")->no_redirects);

	if (!rt_apply(&dp, &ra, &t)) {
		CHECK(if_of(&dp, "p1")->ra);
		CHECK(!t.inv.ra_on);
	}
	rt_undo(&dp, &t);
	CHECK(!if_of(&dp, "p1")->ra);

	if (!rt_apply(&dp, &sr, &t)) {
		CHECK(dp.router->no_source_route);
		CHECK(t.inv.source_route);
	}
	rt_undo(&dp, &t);
	CHECK(!dp.router->no_source_route);

	/* a port the router does not have: refused, named */
	CHECK_EQ(dp_apply_cmd(&dp, &nosuch, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "'p9': no such port") != NULL);
	close_dp(&dp);
}

static void test_undo_neigh_ageing(void)
{
	struct dp dp;
	struct roundtrip t;
	struct dp_cmd c = mk(DP_CMD_NEIGH_AGEING, NULL);

	c.seconds = 60;
	if (!open_router(&dp))
		return;
	CHECK_EQ(dp.router->neigh_reachable_ns, RXP_NEIGH_REACHABLE_NS);
	if (!rt_apply(&dp, &c, &t)) {
		CHECK_EQ(dp.router->neigh_reachable_ns, 60000000000ull);
		CHECK_EQ(t.inv.seconds, RXP_NEIGH_REACHABLE_NS / 1000000000ull);
	}
	rt_undo(&dp, &t);
	CHECK_EQ(dp.router->neigh_reachable_ns, RXP_NEIGH_REACHABLE_NS);

	/* from another value than the default: the inverse is that one */
	CHECK_EQ(dp_apply_cmd(&dp, &c, t.err, sizeof(t.err)), 0);
	c.seconds = 120;
	if (!rt_apply(&dp, &c, &t)) {
		CHECK_EQ(dp.router->neigh_reachable_ns, 120000000000ull);
		CHECK_EQ(t.inv.seconds, 60);
	}
	rt_undo(&dp, &t);
	CHECK_EQ(dp.router->neigh_reachable_ns, 60000000000ull);
	close_dp(&dp);
}

/* What reload's diff pairs: commands about one thing share a key, others do not. */
static void test_cmd_key(void)
{
	struct dp_cmd r1 = cmd_route(DP_CMD_ROUTE_ADD, "10.9.0.0/16", "10.0.1.2", NULL);
	struct dp_cmd r2 = cmd_route(DP_CMD_ROUTE_DEL, "10.9.0.0/16", NULL, "p1");
	struct dp_cmd r3 = cmd_route(DP_CMD_ROUTE_ADD, "10.9.0.0/17", "10.0.1.2", NULL);
	struct dp_cmd a1 = cmd_addr(DP_CMD_ADDR_ADD, "10.0.1.1/24", "p1");
	struct dp_cmd a2 = cmd_addr(DP_CMD_ADDR_DEL, "10.0.1.1/25", "p1");
	struct dp_cmd a3 = cmd_addr(DP_CMD_ADDR_ADD, "10.0.1.1/24", "p0");
	struct dp_cmd m1 = mk(DP_CMD_MTU, "p1"), m2 = mk(DP_CMD_MTU, "p1"), m3 = mk(DP_CMD_MTU, "p0");
	struct dp_cmd i1 = mk(DP_CMD_ICMP_RATE, NULL), i2 = mk(DP_CMD_ICMP_RATE, NULL);
	char k1[128], k2[128];

	m2.mtu = 9000;
	i2.rate = 5;
#define SAME_KEY(a, b, yes) do { \
	dp_cmd_key(&(a), k1, sizeof(k1)); \
	dp_cmd_key(&(b), k2, sizeof(k2)); \
	CHECK((strcmp(k1, k2) == 0) == (yes)); \
} while (0)
	SAME_KEY(r1, r2, true);
	SAME_KEY(r1, r3, false);
	SAME_KEY(a1, a2, true);
	SAME_KEY(a1, a3, false);
	SAME_KEY(m1, m2, true);
	SAME_KEY(m1, m3, false);
	SAME_KEY(i1, i2, true);
	SAME_KEY(r1, a1, false);
	SAME_KEY(m1, r1, false);
#undef SAME_KEY
}

/* ---- batches ---- */

static void test_batch_all_or_nothing(void)
{
	struct dp dp;
	struct dp_cmd cmds[] = {
		/* the first two change what is there: a route and a neighbour replaced */
		cmd_route(DP_CMD_ROUTE_ADD, "16.0.0.0/8", "10.0.1.3", NULL),
		cmd_neigh(DP_CMD_NEIGH_ADD, "10.0.1.2", MAC_OTHER, "p1"),
		/* no subnet of the router's holds the gateway: fails */
		cmd_route(DP_CMD_ROUTE_ADD, "10.10.0.0/16", "203.0.113.1", NULL),
		cmd_addr(DP_CMD_ADDR_ADD, "10.0.8.1/24", "p0"),
	};
	struct rxp_sbuf errors = { 0 }, out = { 0 };
	struct dp_batch b = { .cmds = cmds, .n_cmds = 4, .all_or_nothing = true,
			      .want_undo = true, .errors = &errors };
	struct state before, after;
	int ret;

	if (!open_router(&dp))
		return;
	before = state_of(&dp);
	ret = dp_batch_apply(&dp, &b, &out);
	after = state_of(&dp);
	CHECK_EQ(ret, -ENETUNREACH);
	CHECK_EQ(b.applied, 2);
	CHECK_EQ(b.failed, 1);
	CHECK_EQ(b.undo_failed, 0);
	CHECK(b.undo == NULL && b.n_undo == 0);	/* nothing went in: nothing to hand back */
	CHECK(errors.data && strstr(errors.data, cmds[2].where) == errors.data);
	CHECK(errors.data && strstr(errors.data, "(10.10.0.0/16 via 203.0.113.1)") != NULL);
	CHECK(errors.data && strchr(errors.data, '\n') &&
	      !strchr(errors.data, '\n')[1]);	/* one line: the take-back went through */
	CHECK(state_same(&before, &after));
	CHECK(gw_is(&dp, route_of(&dp, "16.0.0.0/8"), "10.0.1.2"));
	CHECK(route_of(&dp, "10.8.0.0/24") == NULL);
	state_free(&before);
	state_free(&after);
	rxp_sbuf_free(&errors);
	rxp_sbuf_free(&out);
	close_dp(&dp);
}

static void test_batch_keep_going(void)
{
	struct dp dp;
	struct dp_cmd cmds[] = {
		cmd_route(DP_CMD_ROUTE_ADD, "10.9.0.0/16", "10.0.1.2", NULL),
		cmd_route(DP_CMD_ROUTE_DEL, "10.99.0.0/16", NULL, NULL),	/* not there */
		cmd_route(DP_CMD_ROUTE_ADD, "10.10.0.0/16", "203.0.113.1", NULL),
		cmd_addr(DP_CMD_ADDR_ADD, "10.0.8.1/24", "p0"),
	};
	struct rxp_sbuf errors = { 0 };
	struct dp_batch b = { .cmds = cmds, .n_cmds = 4, .keep_going = true, .errors = &errors };
	struct dp_batch stop = { .cmds = cmds + 1, .n_cmds = 3, .errors = &errors };
	int ret;

	if (!open_router(&dp))
		return;
	ret = dp_batch_apply(&dp, &b, NULL);
	CHECK_EQ(ret, -ENOENT);	/* the first failure's */
	CHECK_EQ(b.applied, 2);
	CHECK_EQ(b.failed, 2);
	CHECK(route_of(&dp, "10.9.0.0/16") != NULL);
	CHECK(if_has_addr4(&dp, "p0", "10.0.8.1", 24));
	/* two lines, one per failure, in order */
	CHECK(errors.data && strstr(errors.data, cmds[1].where) == errors.data);
	CHECK(errors.data && strstr(errors.data, cmds[2].where) != NULL &&
	      strchr(errors.data, '\n') < strstr(errors.data, cmds[2].where));

	/* without keep_going (nor all or nothing): stops at the first failure, keeps what went in */
	rxp_sbuf_reset(&errors);
	cmds[3] = cmd_addr(DP_CMD_ADDR_ADD, "10.0.7.1/24", "p0");
	ret = dp_batch_apply(&dp, &stop, NULL);
	CHECK_EQ(ret, -ENOENT);
	CHECK_EQ(stop.applied, 0);
	CHECK_EQ(stop.failed, 1);
	CHECK(!if_has_addr4(&dp, "p0", "10.0.7.1", 24));
	rxp_sbuf_free(&errors);
	close_dp(&dp);
}

/* All went in: the undo handed back, applied as a batch, puts everything back. */
static void test_batch_want_undo(void)
{
	struct dp dp;
	struct dp_cmd cmds[] = {
		cmd_route(DP_CMD_ROUTE_ADD, "16.0.0.0/8", "10.0.1.3", NULL),
		cmd_route(DP_CMD_ROUTE_ADD, "10.9.0.0/16", "10.0.1.2", NULL),
		cmd_route(DP_CMD_ROUTE_DEL, "17.0.0.0/8", NULL, NULL),
		cmd_addr(DP_CMD_ADDR_ADD, "10.0.8.1/24", "p0"),
		cmd_addr(DP_CMD_ADDR_ADD, "10.0.1.1/24", "p1"),	/* already there: no change */
		mk(DP_CMD_MTU, "p0"),
	};
	struct rxp_sbuf errors = { 0 };
	struct dp_batch b = { .cmds = cmds, .n_cmds = 6, .all_or_nothing = true, .want_undo = true,
			      .errors = &errors };
	struct dp_batch u = { .keep_going = true, .errors = &errors };
	struct state before, mid, after;

	cmds[5].mtu = 1280;
	if (!open_router(&dp))
		return;
	before = state_of(&dp);
	CHECK_EQ(dp_batch_apply(&dp, &b, NULL), 0);
	CHECK_EQ(b.applied, 6);
	CHECK_EQ(b.failed, 0);
	CHECK_EQ(b.n_undo, 5);	/* the address said again has nothing to take back */
	CHECK(b.undo != NULL);
	CHECK(b.undo && b.undo[0].kind == DP_CMD_MTU);	/* last first */
	mid = state_of(&dp);
	CHECK(state_differs(&before, &mid));
	CHECK(gw_is(&dp, route_of(&dp, "16.0.0.0/8"), "10.0.1.3"));
	u.cmds = b.undo;
	u.n_cmds = b.n_undo;
	CHECK_EQ(dp_batch_apply(&dp, &u, NULL), 0);
	CHECK_EQ(u.failed, 0);
	after = state_of(&dp);
	CHECK(state_same(&before, &after));
	CHECK(errors.data == NULL);
	free(b.undo);
	state_free(&before);
	state_free(&mid);
	state_free(&after);
	rxp_sbuf_free(&errors);
	close_dp(&dp);
}

/* A receive sink becomes a router for an address; one for which nothing takes stays a sink. */
static void test_batch_sink(void)
{
	struct dp dp;
	struct dp_config cfg;
	char err[ERR_LEN];
	struct dp_cmd mtu = mk(DP_CMD_MTU, "p0");
	struct dp_cmd bad[] = {
		cmd_addr(DP_CMD_ADDR_ADD, "10.0.8.1/24", "p0"),
		cmd_route(DP_CMD_ROUTE_ADD, "10.10.0.0/16", "203.0.113.1", NULL),
	};
	struct dp_cmd good = cmd_addr(DP_CMD_ADDR_ADD, "10.0.8.1/24", "p0");
	struct rxp_sbuf errors = { 0 };
	struct dp_batch b1 = { .cmds = &mtu, .n_cmds = 1, .errors = &errors };
	struct dp_batch b2 = { .cmds = bad, .n_cmds = 2, .all_or_nothing = true, .errors = &errors };
	struct dp_batch b3 = { .cmds = &good, .n_cmds = 1, .errors = &errors };

	mtu.mtu = 1400;
	dp_config_default(&cfg);
	CHECK_EQ(dp_config_add_port(&cfg, "p0", "sim:rx=off", err, sizeof(err)), 0);
	if (!open_cfg(&dp, &cfg))
		return;
	CHECK(dp.router == NULL);
	CHECK_EQ(dp_batch_apply(&dp, &b1, NULL), -EINVAL);
	CHECK(errors.data && strstr(errors.data, "receive sink") != NULL);
	CHECK(dp.router == NULL);
	CHECK(dp_batch_apply(&dp, &b2, NULL) < 0);
	CHECK(dp.router == NULL);
	CHECK_EQ(dp_batch_apply(&dp, &b3, NULL), 0);
	CHECK(dp.router != NULL);
	if (dp.router)
		CHECK(if_has_addr4(&dp, "p0", "10.0.8.1", 24));
	rxp_sbuf_free(&errors);
	close_dp(&dp);
}

/* ---- the mailbox ---- */

struct call_ctx {
	struct control *ctl;
	control_fn fn;
	void *arg;
	int ret;
	atomic_bool done;
	pthread_t ran_on;	/* the thread the function ran on */
	atomic_int runs;
};

static int fn_note_thread(struct dp *dp, void *arg, struct rxp_sbuf *out)
{
	struct call_ctx *c = arg;

	(void)dp;
	c->ran_on = pthread_self();
	atomic_fetch_add(&c->runs, 1);
	rxp_sbuf_printf(out, "ran");
	return 42;
}

struct caller {
	struct call_ctx *ctx;
	struct rxp_sbuf out;
	pthread_t self;
};

static void *caller_main(void *arg)
{
	struct caller *k = arg;

	k->self = pthread_self();
	k->ctx->ret = control_call(k->ctx->ctl, k->ctx->fn, k->ctx->arg, &k->out);
	atomic_store(&k->ctx->done, true);
	return NULL;
}

/* Services @ctl on this thread until @ctx's call is done, 2 s at most. */
static void serve_until_done(struct control *ctl, struct call_ctx *ctx)
{
	double end = rxp_clock_seconds() + 2;

	while (!atomic_load(&ctx->done) && rxp_clock_seconds() < end)
		control_service(ctl);
}

static void test_mailbox(void)
{
	struct dp dp;
	struct control ctl;
	struct call_ctx ctx = { .ctl = &ctl, .fn = fn_note_thread };
	struct caller k = { .ctx = &ctx };
	pthread_t th;

	if (!open_router(&dp))
		return;
	ctx.arg = &ctx;
	CHECK_EQ(control_init(&ctl, &dp), 0);

	/* before control_serve(): at once, in the caller's thread */
	CHECK_EQ(pthread_create(&th, NULL, caller_main, &k), 0);
	pthread_join(th, NULL);
	CHECK_EQ(ctx.ret, 42);
	CHECK(pthread_equal(ctx.ran_on, k.self));
	CHECK_EQ(atomic_load(&ctx.runs), 1);

	/* served: it waits for the datapath thread, and runs there */
	control_serve(&ctl);
	atomic_store(&ctx.done, false);
	ctx.ret = 0;
	rxp_sbuf_reset(&k.out);
	CHECK_EQ(pthread_create(&th, NULL, caller_main, &k), 0);
	serve_until_done(&ctl, &ctx);
	pthread_join(th, NULL);
	CHECK(atomic_load(&ctx.done));
	CHECK_EQ(ctx.ret, 42);
	CHECK(pthread_equal(ctx.ran_on, pthread_self()));
	CHECK(!pthread_equal(ctx.ran_on, k.self));
	CHECK(k.out.data && !strcmp(k.out.data, "ran"));
	CHECK_EQ(atomic_load(&ctx.runs), 2);

	/* a call waiting when the datapath stops fails, without running */
	atomic_store(&ctx.done, false);
	CHECK_EQ(pthread_create(&th, NULL, caller_main, &k), 0);
	for (double end = rxp_clock_seconds() + 2; !atomic_load(&ctl.pending) && rxp_clock_seconds() < end;)
		sleep_ms(1);
	CHECK(atomic_load(&ctl.pending));
	control_stop(&ctl);
	pthread_join(th, NULL);
	CHECK_EQ(ctx.ret, -ESHUTDOWN);
	CHECK_EQ(atomic_load(&ctx.runs), 2);

	/* and every later one */
	CHECK_EQ(pthread_create(&th, NULL, caller_main, &k), 0);
	pthread_join(th, NULL);
	CHECK_EQ(ctx.ret, -ESHUTDOWN);
	CHECK_EQ(atomic_load(&ctx.runs), 2);
	control_run_pending(&ctl);	/* nothing queued: nothing runs */
	CHECK_EQ(atomic_load(&ctx.runs), 2);
	control_destroy(&ctl);
	rxp_sbuf_free(&k.out);
	close_dp(&dp);
}

/* The poll loop's hook: services the mailbox; stops when the call is done or after 3 s. */
struct serve_hook {
	struct control *ctl;
	struct call_ctx *ctx;
	uint64_t deadline_ns;
};

static bool serve_at_clock(void *arg, uint64_t now_ns)
{
	struct serve_hook *h = arg;

	control_service(h->ctl);
	if (!h->deadline_ns)
		h->deadline_ns = now_ns + 3000000000ull;
	return !atomic_load(&h->ctx->done) && now_ns < h->deadline_ns;
}

/* A router change from another thread through the mailbox, while the poll loop forwards. */
static void test_mailbox_batch_in_loop(void)
{
	struct dp dp;
	struct dp_config cfg;
	struct control ctl;
	struct dp_cmd cmd = cmd_route(DP_CMD_ROUTE_ADD, "10.9.0.0/16", "10.0.1.2", NULL);
	struct rxp_sbuf errors = { 0 };
	struct dp_batch b = { .cmds = &cmd, .n_cmds = 1, .errors = &errors };
	struct call_ctx ctx = { .ctl = &ctl, .fn = dp_batch_apply, .arg = &b };
	struct caller k = { .ctx = &ctx };
	struct serve_hook hook = { .ctl = &ctl, .ctx = &ctx };
	struct dp_loop loop = { .at_clock = serve_at_clock, .ctx = &hook };
	pthread_t th;

	router_config(&cfg, "sim:proto=udp4,src4=198.18.0.0/24,dst4=16.0.0.0/8", 1);
	if (!open_cfg(&dp, &cfg))
		return;
	CHECK_EQ(control_init(&ctl, &dp), 0);
	control_serve(&ctl);
	ctx.ret = -1;
	CHECK_EQ(pthread_create(&th, NULL, caller_main, &k), 0);
	dp_loop_run(&dp, 0, &loop);
	control_stop(&ctl);
	pthread_join(th, NULL);
	CHECK_EQ(ctx.ret, 0);
	CHECK_EQ(b.applied, 1);
	CHECK(gw_is(&dp, route_of(&dp, "10.9.0.0/16"), "10.0.1.2"));
	CHECK(dp.ports[1].queues[0].stats.tx_packets > 0);	/* it forwarded meanwhile */
	control_destroy(&ctl);
	rxp_sbuf_free(&errors);
	rxp_sbuf_free(&k.out);
	dp_settle(&dp);
	close_dp(&dp);
}

/* ---- workers and the barrier ---- */

static uint64_t polls_of(const struct dp *dp, unsigned port, unsigned q)
{
	return __atomic_load_n(&dp->ports[port].queues[q].stats.rx_polls, __ATOMIC_RELAXED);
}

/* Waits until queue @q of port 0 has been polled past @than (1 s at most). Returns its count. */
static uint64_t polls_past(const struct dp *dp, unsigned q, uint64_t than)
{
	uint64_t n = polls_of(dp, 0, q);

	for (double end = rxp_clock_seconds() + 1; n <= than && rxp_clock_seconds() < end; n = polls_of(dp, 0, q))
		sleep_ms(1);
	return n;
}

static void test_barrier(void)
{
	struct dp dp;
	struct dp_config cfg;
	char err[ERR_LEN] = "";
	int cpus[2];
	uint64_t started, held0, held1, after;
	int ret;

	dp_config_default(&cfg);
	cfg.n_workers = 2;
	CHECK_EQ(dp_config_add_port(&cfg, "p0", "sim:queues=2,proto=udp4", err, sizeof(err)), 0);
	if (!open_cfg(&dp, &cfg))
		return;
	CHECK_EQ(dp.n_workers, 2);
	ret = dp_workers_start(&dp, cpus, err, sizeof(err));
	CHECK_EQ(ret, 0);
	if (ret) {
		fprintf(stdout, "  dp_workers_start: %s\n", err);
		close_dp(&dp);
		return;
	}
	/* worker 1 polls queue 1; worker 0 (this thread) does not poll here */
	started = polls_past(&dp, 1, 0);
	CHECK(started > 0);
	CHECK_EQ(polls_of(&dp, 0, 0), 0);
	for (int round = 0; round < 3; round++) {
		uint64_t before = polls_past(&dp, 1, polls_of(&dp, 0, 1));

		dp_barrier_enter(&dp);
		held0 = polls_of(&dp, 0, 1);
		sleep_ms(5);
		held1 = polls_of(&dp, 0, 1);
		dp_barrier_exit(&dp);
		CHECK(held0 >= before);
		CHECK_EQ(held1, held0);	/* no poll while the barrier was held */
		after = polls_past(&dp, 1, held1);
		CHECK(after > held1);	/* and it goes on once let go */
	}
	dp_workers_stop(&dp);
	after = polls_of(&dp, 0, 1);
	sleep_ms(3);
	CHECK_EQ(polls_of(&dp, 0, 1), after);	/* stopped: no more polls */
	dp_settle(&dp);
	close_dp(&dp);
}

/* A control call with two workers runs while the other one waits between two polls. */
struct held_polls {
	const struct dp *dp;
	uint64_t first, second;
	pthread_t ran_on;
};

static int fn_watch_polls(struct dp *dp, void *arg, struct rxp_sbuf *out)
{
	struct held_polls *h = arg;

	(void)dp;
	(void)out;
	h->ran_on = pthread_self();
	h->first = polls_of(h->dp, 0, 1);
	sleep_ms(5);
	h->second = polls_of(h->dp, 0, 1);
	return 0;
}

static void test_barrier_control_call(void)
{
	struct dp dp;
	struct dp_config cfg;
	struct control ctl;
	struct held_polls h = { 0 };
	struct call_ctx ctx = { .ctl = &ctl, .fn = fn_watch_polls, .arg = &h };
	struct caller k = { .ctx = &ctx };
	struct serve_hook hook = { .ctl = &ctl, .ctx = &ctx };
	struct dp_loop loop = { .at_clock = serve_at_clock, .ctx = &hook };
	char err[ERR_LEN] = "";
	int cpus[2];
	pthread_t th;

	dp_config_default(&cfg);
	cfg.n_workers = 2;
	CHECK_EQ(dp_config_add_port(&cfg, "p0", "sim:queues=2,proto=udp4", err, sizeof(err)), 0);
	if (!open_cfg(&dp, &cfg))
		return;
	h.dp = &dp;
	CHECK_EQ(control_init(&ctl, &dp), 0);
	control_serve(&ctl);
	CHECK_EQ(dp_workers_start(&dp, cpus, err, sizeof(err)), 0);
	polls_past(&dp, 1, 0);
	ctx.ret = -1;
	CHECK_EQ(pthread_create(&th, NULL, caller_main, &k), 0);
	dp_loop_run(&dp, 0, &loop);
	control_stop(&ctl);
	pthread_join(th, NULL);
	dp_workers_stop(&dp);
	CHECK_EQ(ctx.ret, 0);
	CHECK(pthread_equal(h.ran_on, pthread_self()));
	CHECK(h.first > 0);
	CHECK_EQ(h.second, h.first);
	CHECK(polls_of(&dp, 0, 0) > 0);	/* worker 0 polled its own queue in the loop */
	control_destroy(&ctl);
	rxp_sbuf_free(&k.out);
	dp_settle(&dp);
	close_dp(&dp);
}

/* ---- the poll loop ---- */

static uint64_t tx_of(const struct dp *dp, unsigned port)
{
	uint64_t n = 0;

	for (unsigned q = 0; q < dp->ports[port].n_queues; q++)
		n += __atomic_load_n(&dp->ports[port].queues[q].stats.tx_packets, __ATOMIC_RELAXED);
	return n;
}

/* What port 1 sent: the counter dp_measure_rate() follows. */
static uint64_t sent_on_1(const struct dp *dp)
{
	return tx_of(dp, 1);
}

static void test_loop_duration(void)
{
	struct dp dp;
	struct dp_config cfg;
	struct dp_loop loop = { .duration = 0.2 };
	struct rxp_stack_stats st;
	double t0, wall, mpps;
	uint64_t ns, tx0;

	router_config(&cfg, "sim:proto=udp4,src4=198.18.0.0/24,dst4=16.0.0.0/8", 1);
	if (!open_cfg(&dp, &cfg))
		return;
	tx0 = tx_of(&dp, 1);
	CHECK_EQ(tx0, 0);
	t0 = rxp_clock_seconds();
	ns = dp_loop_run(&dp, 0, &loop);
	wall = rxp_clock_seconds() - t0;
	CHECK(ns >= 200000000ull);
	CHECK((double)ns <= wall * 1e9 + 1e6);
	CHECK(wall >= 0.2);
	CHECK(wall < 0.2 + 0.3);	/* about that long: a clock read every 64 rounds */
	CHECK(tx_of(&dp, 1) > 1000);
	dp_stack_stats(&dp, &st);
	CHECK(st.forwarded > 1000);
	CHECK(st.forwarded == tx_of(&dp, 1));	/* all it sent was forwarded */
	CHECK_EQ(tx_of(&dp, 0), 0);		/* nothing back out of the input port */
	CHECK_EQ(dp.ports[1].queues[0].stats.rx_packets, 0);

	/* the rate of a counter: forwarding goes on */
	tx0 = tx_of(&dp, 1);
	mpps = dp_measure_rate(&dp, sent_on_1, 0.05);
	CHECK(mpps > 0.001 && mpps < 1000);
	CHECK(tx_of(&dp, 1) > tx0);
	dp_settle(&dp);
	close_dp(&dp);
}

/* A finite source: the loop runs until it is done, and every frame is forwarded. */
static void test_loop_until_finished(void)
{
	struct dp dp;
	struct dp_config cfg;
	struct dp_loop loop = { .until_finished = true, .duration = 3 };
	struct rxp_stack_stats st;
	struct rxp_queue_stats in;
	double t0;

	router_config(&cfg, "sim:proto=udp4,src4=198.18.0.0/24,dst4=16.0.0.0/8,count=1000", 1);
	if (!open_cfg(&dp, &cfg))
		return;
	t0 = rxp_clock_seconds();
	dp_loop_run(&dp, 0, &loop);
	CHECK(rxp_clock_seconds() - t0 < 2.5);	/* it ended with its input, not at the cap */
	CHECK(dp_finished(&dp));
	rxp_port_stats(&dp.ports[0], &in);
	CHECK_EQ(in.rx_packets, 1000);
	CHECK_EQ(tx_of(&dp, 1), 1000);
	dp_stack_stats(&dp, &st);
	CHECK_EQ(st.forwarded, 1000);
	CHECK_EQ(st.dropped, 0);
	dp_settle(&dp);
	close_dp(&dp);
}

/* ---- the buffer audit ---- */

static void test_buffer_audit(void)
{
	struct dp dp;
	struct dp_config cfg;
	struct dp_loop loop = { .duration = 0.02 };
	struct rxp_pkt *leak;

	/* after traffic, closed in the middle of it (no settle): every buffer is back */
	router_config(&cfg, "sim:proto=udp4,src4=198.18.0.0/24,dst4=16.0.0.0/8", 1);
	if (!open_cfg(&dp, &cfg))
		return;
	dp_loop_run(&dp, 0, &loop);
	CHECK(tx_of(&dp, 1) > 0);
	CHECK_EQ(dp_close(&dp), 0);
	CHECK_EQ(dp_close(&dp), 0);	/* twice: nothing more to do */

	/* traffic to a neighbour that does not answer: packets held, then closed */
	router_config(&cfg, "sim:proto=udp4,src4=198.18.0.0/24,dst4=10.0.3.0/24,flows=8", 1);
	if (!open_cfg(&dp, &cfg))
		return;
	dp_loop_run(&dp, 0, &loop);
	CHECK(dp.router->neigh.n_held > 0);
	CHECK_EQ(dp_close(&dp), 0);

	/* a buffer the test keeps is counted missing: the audit can tell */
	router_config(&cfg, "sim:rx=off", 1);
	if (!open_cfg(&dp, &cfg))
		return;
	leak = rxp_pool_alloc(&dp.cache);
	CHECK(leak != NULL);
	CHECK_EQ(dp_close(&dp), leak ? 1 : 0);
}

/* A config the datapath cannot open: an error naming the port, nothing left open. */
static void test_open_errors(void)
{
	struct dp dp;
	struct dp_config cfg;
	char err[ERR_LEN] = "";

	dp_config_default(&cfg);
	CHECK_EQ(dp_config_add_port(&cfg, "p0", "sim:queues=0", err, sizeof(err)), 0);
	snprintf(cfg.ports[0].where, sizeof(cfg.ports[0].where), "conf:4");
	CHECK(dp_open(&dp, &cfg, err, sizeof(err)) < 0);
	CHECK(!strncmp(err, "conf:4: port p0: ", 17));
	CHECK(dp.pool == NULL);
	dp_config_free(&cfg);

	/* two workers need two queues a port */
	dp_config_default(&cfg);
	cfg.n_workers = 2;
	CHECK_EQ(dp_config_add_port(&cfg, "p0", "sim:rx=off", err, sizeof(err)), 0);
	CHECK_EQ(dp_open(&dp, &cfg, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "queues=2") != NULL);
	dp_config_free(&cfg);

	/* a command that fails while opening: the open fails with its message */
	router_config(&cfg, "sim:rx=off", 1);
	cfg.cmds[cfg.n_cmds - 1] = cmd_route(DP_CMD_ROUTE_ADD, "10.10.0.0/16", "203.0.113.1", NULL);
	CHECK_EQ(dp_open(&dp, &cfg, err, sizeof(err)), -ENETUNREACH);
	CHECK(!strncmp(err, cfg.cmds[cfg.n_cmds - 1].where, strlen(cfg.cmds[cfg.n_cmds - 1].where)));
	CHECK(dp.pool == NULL && dp.router == NULL);
	dp_config_free(&cfg);

	/* bad names are refused before anything opens */
	dp_config_default(&cfg);
	CHECK_EQ(dp_config_add_port(&cfg, "p/0", "sim", err, sizeof(err)), -EINVAL);
	CHECK_EQ(dp_config_add_port(&cfg, "p0", "sim", err, sizeof(err)), 0);
	CHECK_EQ(dp_config_add_port(&cfg, "p0", "sim", err, sizeof(err)), -EEXIST);
	CHECK_EQ(cfg.n_ports, 1);
	dp_config_free(&cfg);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* dp_open(): "on error nothing is left open", file descriptors included. */
static void test_open_error_leaves_nothing_open(void)
{
	struct dp dp;
	struct dp_config cfg;
	char err[ERR_LEN] = "";
	int before;

	dp_config_default(&cfg);
	CHECK_EQ(dp_config_add_port(&cfg, "p0", "sim:queues=0", err, sizeof(err)), 0);
	before = open_fds();
	CHECK(before > 0);
	for (int i = 0; i < 4; i++)
		CHECK(dp_open(&dp, &cfg, err, sizeof(err)) < 0);
	CHECK_EQ(open_fds(), before);
	cfg.n_workers = DP_WORKERS_MAX + 1;
	CHECK_EQ(dp_open(&dp, &cfg, err, sizeof(err)), -EINVAL);
	CHECK_EQ(open_fds(), before);
	dp_config_free(&cfg);
}

int main(void)
{
	RUN(test_open_state);
	RUN(test_undo_addr_add);
	RUN(test_undo_addr_del);
	RUN(test_undo_route_add);
	RUN(test_undo_route_del);
	RUN(test_undo_neigh);
	RUN(test_undo_mtu);
	RUN(test_undo_icmp_rate);
	RUN(test_undo_flags);
	RUN(test_undo_neigh_ageing);
	RUN(test_cmd_key);
	RUN(test_batch_all_or_nothing);
	RUN(test_batch_keep_going);
	RUN(test_batch_want_undo);
	RUN(test_batch_sink);
	RUN(test_mailbox);
	RUN(test_mailbox_batch_in_loop);
	RUN(test_barrier);
	RUN(test_barrier_control_call);
	RUN(test_loop_duration);
	RUN(test_loop_until_finished);
	RUN(test_buffer_audit);
	RUN(test_open_errors);
	RUN(test_open_error_leaves_nothing_open);
	return tests_done();
}
