/* SPDX-License-Identifier: MIT */
/*
 * Tests of kernel sync (src/ctl/ksync.h) against a real kernel: the
 * program moves into a fresh network namespace, makes interfaces there and
 * changes routes and neighbours with `ip`, then checks the command-language
 * lines ksync hands to its apply callback. Needs root; otherwise it prints
 * a SKIP line saying why. What no kernel sends (a hostile or broken one's
 * messages) is crafted here and fed to ksync as events (ks_nl_feed).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ctl/ksync.h"
#include "ctl/ksync_priv.h"
#include "check.h"

#define MAX_LINES 4096
#define FOREVER_MS 3600000u	/* no timed resync during a test unless it asks */

/* What the apply callback was given, and what it should refuse. */
struct capture {
	char lines[MAX_LINES][RXP_KSYNC_LINE_MAX];
	unsigned n;		/* kept (at most MAX_LINES) */
	uint64_t total;		/* seen */
	const char *refuse;	/* lines containing this are refused */
	int refuse_err;		/* with this -errno; 0: -ENETUNREACH */
	unsigned n_refused;
};

/* The tests below need the sync object the first one made; without it each fails at once. */
#define NEED_KM() do { \
	if (!km) { \
		CHECK(km); \
		return; \
	} \
} while (0)

static struct capture cap_main, cap_other;
static struct rxp_ksync *km;	/* main table, ports r1 -> p1 and r3 -> p2 (r2 is not mapped) */

static const struct rxp_ksync_port_map port_map[] = {
	{ .ifname = "r1", .port = "p1" }, { .ifname = "r3", .port = "p2" },
};
#define N_MAP (sizeof(port_map) / sizeof(port_map[0]))

static int capture_apply(void *ctx, const char *line)
{
	struct capture *c = ctx;

	c->total++;
	if (c->n < MAX_LINES)
		snprintf(c->lines[c->n++], RXP_KSYNC_LINE_MAX, "%s", line);
	if (c->refuse && strstr(line, c->refuse)) {
		c->n_refused++;
		return c->refuse_err ? c->refuse_err : -ENETUNREACH;
	}
	return 0;
}

static void capture_clear(struct capture *c)
{
	c->n = 0;
	c->total = 0;
}

static unsigned count_line(const struct capture *c, const char *line)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->n; i++)
		n += !strcmp(c->lines[i], line);
	return n;
}

static void print_lines(const struct capture *c)
{
	for (unsigned i = 0; i < c->n && i < 20; i++)
		printf("  line %u: %s\n", i, c->lines[i]);
}

/* Runs a shell command; prints it when it fails. Returns its exit status. */
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ret = system(cmd);
	if (ret)
		printf("  command failed (%d): %s\n", ret, cmd);
	return ret;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Polls and runs @k for @ms milliseconds, as the control thread would. */
static void pump(struct rxp_ksync *k, int ms)
{
	double end = now_ms() + ms;
	char err[256];

	for (double now = now_ms(); now < end; now = now_ms()) {
		struct pollfd pfd = { .fd = rxp_ksync_fd(k), .events = POLLIN };
		int timeout = (int)(end - now) + 1, ret;

		if (rxp_ksync_timeout_ms(k) < timeout)
			timeout = rxp_ksync_timeout_ms(k);
		poll(&pfd, 1, timeout);
		ret = rxp_ksync_run(k, err, sizeof(err));
		if (ret < 0)
			printf("  rxp_ksync_run: %s\n", err);
	}
}

/* Runs @k until @line has been applied, at most @ms. Returns the milliseconds taken, or -1. */
static double wait_line(struct rxp_ksync *k, const struct capture *c, const char *line, int ms)
{
	double start = now_ms(), end = start + ms;
	char err[256];

	for (;;) {
		struct pollfd pfd = { .fd = rxp_ksync_fd(k), .events = POLLIN };
		double now = now_ms();
		int timeout;

		if (count_line(c, line))
			return now - start;
		if (now >= end)
			break;
		timeout = (int)(end - now) + 1;
		if (rxp_ksync_timeout_ms(k) < timeout)
			timeout = rxp_ksync_timeout_ms(k);
		poll(&pfd, 1, timeout);
		if (rxp_ksync_run(k, err, sizeof(err)) < 0)
			printf("  rxp_ksync_run: %s\n", err);
	}
	printf("  no \"%s\" within %d ms; lines seen:\n", line, ms);
	print_lines(c);
	return -1;
}

/* Checks that exactly @line was applied (after letting stray events arrive). */
#define CHECK_ONLY_LINE(k, c, line) do { \
	CHECK(wait_line(k, c, line, 1000) >= 0); \
	pump(k, 50); \
	CHECK_EQ((c)->n, 1); \
	if ((c)->n != 1) \
		print_lines(c); \
	capture_clear(c); \
} while (0)

/* Checks that nothing is applied for a while. */
#define CHECK_NO_LINE(k, c) do { \
	pump(k, 200); \
	CHECK_EQ((c)->n, 0); \
	if ((c)->n) \
		print_lines(c); \
	capture_clear(c); \
} while (0)

static struct rxp_ksync *open_ksync(uint32_t table, struct capture *c, uint32_t buffer)
{
	struct rxp_ksync_config cfg = {
		.table = table,
		.resync_interval_ms = FOREVER_MS,
		.event_buffer_bytes = buffer,
		.map = port_map,
		.n_map = N_MAP,
		.apply = capture_apply,
		.ctx = c,
	};
	struct rxp_ksync *k = NULL;
	char err[256];
	int ret = rxp_ksync_open(&k, &cfg, err, sizeof(err));

	if (ret)
		printf("  rxp_ksync_open: %d: %s\n", ret, err);
	return k;
}

static struct rxp_ksync_stats stats(const struct rxp_ksync *k)
{
	struct rxp_ksync_stats st;

	rxp_ksync_get_stats(k, &st);
	return st;
}

static int resync(struct rxp_ksync *k)
{
	char err[256];
	int ret = rxp_ksync_resync(k, err, sizeof(err));

	if (ret < 0)
		printf("  rxp_ksync_resync: %d: %s\n", ret, err);
	return ret;
}

/* The interfaces: r1 and r3 (mapped to p1, p2) and r2 (not mapped), each with a peer so they have carrier. */
static int make_interfaces(void)
{
	if (system("ip link set lo up"))
		return -1;
	for (int i = 1; i <= 3; i++) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd),
			 "ip link add r%d type dummy 2>/dev/null || ip link add r%d type veth peer name r%dp && "
			 "{ ! ip link show r%dp >/dev/null 2>&1 || ip link set r%dp up; } && ip link set r%d up",
			 i, i, i, i, i, i);
		if (system(cmd))
			return -1;
	}
	return system("ip addr add 10.0.2.1/24 dev r1 && ip -6 addr add 2001:db8:2::1/64 dev r1 nodad && "
		      "ip addr add 10.0.3.1/24 dev r2 && ip -6 addr add 2001:db8:3::1/64 dev r2 nodad && "
		      "ip addr add 10.0.4.1/24 dev r3 && ip -6 addr add 2001:db8:4::1/64 dev r3 nodad");
}

/* ---- the cases ---- */

/* A route that was there before sync started comes in the first sync, and nothing else: the kernel's own routes stay out. */
static void test_initial_sync(void)
{
	struct rxp_ksync_stats st;

	CHECK_EQ(sh("ip route add 10.4.0.0/24 via 10.0.2.2"), 0);
	km = open_ksync(0, &cap_main, 0);
	NEED_KM();
	CHECK_EQ(rxp_ksync_timeout_ms(km), 0);	/* the first run syncs */
	pump(km, 100);
	CHECK_EQ(count_line(&cap_main, "route add 10.4.0.0/24 via 10.0.2.2 dev p1"), 1);
	CHECK_EQ(cap_main.n, 1);
	if (cap_main.n != 1)
		print_lines(&cap_main);
	st = stats(km);
	CHECK_EQ(st.resyncs, 1);
	CHECK(st.last_dump.kernel >= 4);	/* 10.0.2.0/24, 10.0.3.0/24, the /64s, fe80::/64s */
	CHECK(rxp_ksync_timeout_ms(km) > 1000);	/* next resync far away */
	capture_clear(&cap_main);
	CHECK_EQ(sh("ip route del 10.4.0.0/24"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 10.4.0.0/24");
}

/* `ip route add` / `ip route del` reach rxpath within a second, through events. */
static void test_route_add_del(void)
{
	uint64_t resyncs;
	double ms;

	NEED_KM();
	resyncs = stats(km).resyncs;
	CHECK_EQ(sh("ip route add 10.9.0.0/24 via 10.0.2.2"), 0);
	ms = wait_line(km, &cap_main, "route add 10.9.0.0/24 via 10.0.2.2 dev p1", 1000);
	CHECK(ms >= 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.9.0.0/24 via 10.0.2.2 dev p1");
	CHECK_EQ(sh("ip route del 10.9.0.0/24"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 10.9.0.0/24");

	CHECK_EQ(sh("ip -6 route add 2001:db8:9::/48 via 2001:db8:2::2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:9::/48 via 2001:db8:2::2 dev p1");
	CHECK_EQ(sh("ip -6 route del 2001:db8:9::/48"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 2001:db8:9::/48");

	/* on-link routes; an IPv6 gateway may be link-local: the port names the link */
	CHECK_EQ(sh("ip route add 10.8.8.0/24 dev r1"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.8.8.0/24 dev p1");
	CHECK_EQ(sh("ip -6 route add 2001:db8:8::/64 via fe80::22 dev r1"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:8::/64 via fe80::22 dev p1");
	CHECK_EQ(sh("ip -6 route add default via 2001:db8:2::2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add ::/0 via 2001:db8:2::2 dev p1");
	CHECK_EQ(sh("ip route del 10.8.8.0/24 && ip -6 route del 2001:db8:8::/64 && ip -6 route del default"), 0);
	pump(km, 200);
	CHECK_EQ(count_line(&cap_main, "route del 10.8.8.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "route del 2001:db8:8::/64"), 1);
	CHECK_EQ(count_line(&cap_main, "route del ::/0"), 1);
	CHECK_EQ(cap_main.n, 3);
	capture_clear(&cap_main);
	CHECK_EQ(stats(km).resyncs, resyncs);	/* all of it came from events */
	CHECK_EQ(stats(km).routes, 0);
	CHECK_EQ(stats(km).nexthops, 0);	/* every reference released */
}

/* `ip route replace` with another gateway is one "route add" (rxpath's add replaces). */
static void test_route_replace(void)
{
	NEED_KM();
	CHECK_EQ(sh("ip route add 10.9.0.0/24 via 10.0.2.2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.9.0.0/24 via 10.0.2.2 dev p1");
	CHECK_EQ(sh("ip route replace 10.9.0.0/24 via 10.0.2.3"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.9.0.0/24 via 10.0.2.3 dev p1");
	CHECK_EQ(sh("ip -6 route add 2001:db8:9::/48 via 2001:db8:2::2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:9::/48 via 2001:db8:2::2 dev p1");
	CHECK_EQ(sh("ip -6 route replace 2001:db8:9::/48 via 2001:db8:2::3"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:9::/48 via 2001:db8:2::3 dev p1");
	/* moved to an interface rxpath does not have: it must leave rxpath */
	CHECK_EQ(sh("ip route replace 10.9.0.0/24 via 10.0.3.2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 10.9.0.0/24");
	CHECK_EQ(sh("ip route del 10.9.0.0/24 && ip -6 route del 2001:db8:9::/48"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 2001:db8:9::/48");
}

/* Routes through unmapped interfaces, other tables, and kinds rxpath has no words for are left out. */
static void test_route_ignored(void)
{
	struct rxp_ksync_stats before, after;

	NEED_KM();
	before = stats(km);
	CHECK_EQ(sh("ip route add 10.8.0.0/24 via 10.0.3.2"), 0);		/* r2: not mapped */
	CHECK_EQ(sh("ip -6 route add 2001:db8:7::/48 via 2001:db8:3::2"), 0);
	CHECK_EQ(sh("ip route add 10.5.0.0/24 via 10.0.2.2 table 100"), 0);	/* table 100 */
	CHECK_EQ(sh("ip route add throw 10.1.0.0/24"), 0);
	CHECK_EQ(sh("ip route add 10.1.1.0/24 via 10.0.2.2 tos 0x10"), 0);
	CHECK_NO_LINE(km, &cap_main);
	after = stats(km);
	CHECK_EQ(after.skipped.unmapped - before.skipped.unmapped, 2);
	CHECK_EQ(after.skipped.unsupported - before.skipped.unsupported, 2);
	CHECK_EQ(after.routes, 0);
	/* a full resync agrees */
	CHECK_EQ(resync(km), 0);
	CHECK_EQ(cap_main.n, 0);
	after = stats(km);
	CHECK_EQ(after.last_dump.unmapped, 2);
	CHECK_EQ(after.last_dump.unsupported, 2);
	CHECK_EQ(sh("ip route del 10.8.0.0/24 && ip -6 route del 2001:db8:7::/48 && "
		    "ip route del throw 10.1.0.0/24 && ip route del 10.1.1.0/24 tos 0x10"), 0);
	CHECK_NO_LINE(km, &cap_main);
}

/* The route types that lead nowhere have the same names in rxpath, and no port. */
static void test_route_reject_types(void)
{
	NEED_KM();
	CHECK_EQ(sh("ip route add blackhole 10.1.0.0/24"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.1.0.0/24 blackhole");
	CHECK_EQ(sh("ip route add unreachable 10.1.2.0/24"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.1.2.0/24 unreachable");
	CHECK_EQ(sh("ip -6 route add prohibit 2001:db8:66::/48"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:66::/48 prohibit");
	/* a type changed in place is one add: rxpath's add replaces */
	CHECK_EQ(sh("ip route replace prohibit 10.1.0.0/24"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.1.0.0/24 prohibit");
	CHECK_EQ(sh("ip route del 10.1.0.0/24 && ip route del 10.1.2.0/24 && "
		    "ip -6 route del 2001:db8:66::/48"), 0);
	pump(km, 200);
	CHECK_EQ(count_line(&cap_main, "route del 10.1.0.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "route del 10.1.2.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "route del 2001:db8:66::/48"), 1);
	CHECK_EQ(cap_main.n, 3);
	capture_clear(&cap_main);
	CHECK_EQ(stats(km).routes, 0);
	CHECK_EQ(stats(km).nexthops, 0);
}

/* `sync kernel table 100` mirrors table 100 and nothing of main. */
static void test_other_table(void)
{
	struct rxp_ksync *kt;

	NEED_KM();
	CHECK_EQ(sh("ip route add 10.9.0.0/24 via 10.0.2.2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.9.0.0/24 via 10.0.2.2 dev p1");
	kt = open_ksync(100, &cap_other, 0);
	if (!kt) {
		CHECK(kt);
		return;
	}
	CHECK(resync(kt) == 1);
	CHECK_EQ(count_line(&cap_other, "route add 10.5.0.0/24 via 10.0.2.2 dev p1"), 1);
	CHECK_EQ(cap_other.n, 1);
	capture_clear(&cap_other);
	CHECK_EQ(sh("ip -6 route add 2001:db8:5::/48 via 2001:db8:2::2 table 100"), 0);
	CHECK_ONLY_LINE(kt, &cap_other, "route add 2001:db8:5::/48 via 2001:db8:2::2 dev p1");
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(sh("ip route del 10.5.0.0/24 table 100 && ip -6 route del 2001:db8:5::/48 table 100"), 0);
	pump(kt, 200);
	CHECK_EQ(count_line(&cap_other, "route del 10.5.0.0/24"), 1);
	CHECK_EQ(count_line(&cap_other, "route del 2001:db8:5::/48"), 1);
	CHECK_EQ(cap_other.n, 2);
	capture_clear(&cap_other);
	CHECK_NO_LINE(km, &cap_main);
	/* turning sync off takes back what it put in, and only that */
	CHECK_EQ(sh("ip route add 10.5.0.0/24 via 10.0.2.2 table 100"), 0);
	CHECK_ONLY_LINE(kt, &cap_other, "route add 10.5.0.0/24 via 10.0.2.2 dev p1");
	CHECK_EQ(rxp_ksync_withdraw(kt), 1);
	CHECK_EQ(count_line(&cap_other, "route del 10.5.0.0/24"), 1);
	CHECK_EQ(stats(kt).routes, 0);
	capture_clear(&cap_other);
	rxp_ksync_close(kt);
	CHECK_EQ(sh("ip route del 10.5.0.0/24 table 100"), 0);

	/* a table the kernel does not have yet is an empty one, and filled by events */
	kt = open_ksync(4000, &cap_other, 0);
	if (!kt) {
		CHECK(kt);
		return;
	}
	CHECK_EQ(resync(kt), 0);
	CHECK_EQ(stats(kt).resyncs, 1);
	CHECK_EQ(sh("ip route add 10.5.5.0/24 via 10.0.2.2 table 4000"), 0);
	CHECK_ONLY_LINE(kt, &cap_other, "route add 10.5.5.0/24 via 10.0.2.2 dev p1");
	CHECK_EQ(resync(kt), 0);
	CHECK_EQ(stats(kt).routes_installed, 1);
	rxp_ksync_close(kt);
	CHECK_EQ(sh("ip route del 10.5.5.0/24 table 4000"), 0);
	CHECK_EQ(sh("ip route del 10.9.0.0/24"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 10.9.0.0/24");
}

/* Of two metrics for one prefix the lower wins, as in the kernel; deleting it falls back. */
static void test_route_metrics(void)
{
	NEED_KM();
	CHECK_EQ(sh("ip route add 10.7.0.0/24 via 10.0.2.3 metric 20"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.7.0.0/24 via 10.0.2.3 dev p1");
	CHECK_EQ(sh("ip route add 10.7.0.0/24 via 10.0.2.2 metric 10"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.7.0.0/24 via 10.0.2.2 dev p1");
	CHECK_EQ(sh("ip route add 10.7.0.0/24 via 10.0.2.4 metric 30"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(stats(km).routes, 3);
	CHECK_EQ(stats(km).routes_installed, 1);
	CHECK_EQ(sh("ip route del 10.7.0.0/24 metric 10"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.7.0.0/24 via 10.0.2.3 dev p1");
	CHECK_EQ(sh("ip route del 10.7.0.0/24 metric 30"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(sh("ip route del 10.7.0.0/24 metric 20"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 10.7.0.0/24");
	CHECK_EQ(stats(km).routes, 0);

	/* the same gateway at two metrics: losing one changes nothing in rxpath, losing both deletes */
	CHECK_EQ(sh("ip -6 route add 2001:db8:7::/48 via 2001:db8:2::2 metric 10 && "
		    "ip -6 route add 2001:db8:7::/48 via 2001:db8:2::2 metric 20"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:7::/48 via 2001:db8:2::2 dev p1");
	CHECK_EQ(sh("ip -6 route del 2001:db8:7::/48 metric 10"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(stats(km).routes_installed, 1);
	CHECK_EQ(sh("ip -6 route del 2001:db8:7::/48 metric 20"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 2001:db8:7::/48");
	CHECK_EQ(stats(km).routes, 0);
	CHECK_EQ(stats(km).nexthops, 0);
}

/*
 * A multipath route is one line with its live nexthops on mapped
 * interfaces, each with its weight (rtnh_hops + 1), in one order whichever
 * the kernel lists them in: the same set said again is no new line.
 */
static void test_route_multipath(void)
{
	uint64_t unmapped;

	NEED_KM();
	CHECK_EQ(sh("ip route add 10.6.0.0/24 nexthop via 10.0.4.2 dev r3 weight 3 nexthop via 10.0.2.3 dev r1"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.6.0.0/24 nexthop via 10.0.2.3 dev p1 weight 1 "
				       "nexthop via 10.0.4.2 dev p2 weight 3");
	CHECK_EQ(stats(km).routes_multipath, 1);
	/* the same set in another order: nothing to tell rxpath */
	CHECK_EQ(sh("ip route replace 10.6.0.0/24 nexthop via 10.0.2.3 dev r1 nexthop via 10.0.4.2 dev r3 weight 3"), 0);
	CHECK_NO_LINE(km, &cap_main);
	/* a weight changed is a new set */
	CHECK_EQ(sh("ip route replace 10.6.0.0/24 nexthop via 10.0.2.3 dev r1 weight 2 nexthop via 10.0.4.2 dev r3 weight 3"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.6.0.0/24 nexthop via 10.0.2.3 dev p1 weight 2 "
				       "nexthop via 10.0.4.2 dev p2 weight 3");
	/* on-link nexthops (no gateway) sort first */
	CHECK_EQ(sh("ip route add 10.6.5.0/24 nexthop via 10.0.4.2 dev r3 nexthop dev r1"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.6.5.0/24 nexthop dev p1 weight 1 nexthop via 10.0.4.2 dev p2 weight 1");

	/* a nexthop on an interface rxpath does not have is left out */
	unmapped = stats(km).skipped.unmapped;
	CHECK_EQ(sh("ip route add 10.6.2.0/24 nexthop via 10.0.3.2 nexthop via 10.0.4.5 nexthop via 10.0.2.5"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.6.2.0/24 nexthop via 10.0.2.5 dev p1 weight 1 "
				       "nexthop via 10.0.4.5 dev p2 weight 1");
	/* ... and when one is left, it is an ordinary route */
	CHECK_EQ(sh("ip route add 10.6.1.0/24 nexthop via 10.0.3.2 nexthop via 10.0.2.5"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.6.1.0/24 via 10.0.2.5 dev p1");
	/* ... and when none is, the route is skipped as unmapped */
	CHECK_EQ(sh("ip route add 10.6.3.0/24 nexthop via 10.0.3.2 nexthop via 10.0.3.3"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(stats(km).skipped.unmapped - unmapped, 1);
	CHECK_EQ(stats(km).routes_multipath, 3);
	/* a dump agrees with the events, whatever order it lists the nexthops in */
	CHECK_EQ(resync(km), 0);
	CHECK_EQ(stats(km).last_dump.unmapped, 1);
	CHECK_EQ(sh("ip route del 10.6.0.0/24 && ip route del 10.6.1.0/24 && ip route del 10.6.2.0/24 && "
		    "ip route del 10.6.3.0/24 && ip route del 10.6.5.0/24"), 0);
	pump(km, 200);
	CHECK_EQ(count_line(&cap_main, "route del 10.6.0.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "route del 10.6.1.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "route del 10.6.2.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "route del 10.6.5.0/24"), 1);
	CHECK_EQ(cap_main.n, 4);
	capture_clear(&cap_main);
	CHECK_EQ(stats(km).routes, 0);
	CHECK_EQ(stats(km).nexthops, 0);
}

/*
 * A nexthop whose link goes down is dead (the kernel says nothing of the
 * route): the link event brings a resync, which leaves it out; the link
 * coming up revives it, silently too.
 */
static void test_route_multipath_dead(void)
{
	NEED_KM();
	CHECK_EQ(sh("ip route add 10.6.0.0/24 nexthop via 10.0.2.3 dev r1 nexthop via 10.0.4.2 dev r3 weight 3"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.6.0.0/24 nexthop via 10.0.2.3 dev p1 weight 1 "
				       "nexthop via 10.0.4.2 dev p2 weight 3");
	CHECK_EQ(sh("ip link set r3 down"), 0);
	CHECK(wait_line(km, &cap_main, "route add 10.6.0.0/24 via 10.0.2.3 dev p1", 3000) >= 0);
	capture_clear(&cap_main);
	CHECK_EQ(sh("ip link set r3 up"), 0);
	CHECK(wait_line(km, &cap_main, "route add 10.6.0.0/24 nexthop via 10.0.2.3 dev p1 weight 1 "
				       "nexthop via 10.0.4.2 dev p2 weight 3", 3000) >= 0);
	pump(km, 100);
	capture_clear(&cap_main);
	CHECK_EQ(sh("ip route del 10.6.0.0/24"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 10.6.0.0/24");
	/* the link's IPv6 address went with it (keep_addr_on_down is off) */
	CHECK_EQ(sh("ip -6 addr show dev r3 | grep -q 2001:db8:4::1 || ip -6 addr add 2001:db8:4::1/64 dev r3 nodad"), 0);
	CHECK_EQ(stats(km).routes, 0);
}

/*
 * IPv6 adds the nexthops of a multipath route one at a time, announcing the
 * whole set each time in its own order; a deletion names only the nexthop
 * that went, and ksync takes it out of the set it has (no dump needed).
 */
static void test_route_multipath6(void)
{
	uint64_t resyncs;

	NEED_KM();
	resyncs = stats(km).resyncs;
	CHECK_EQ(sh("ip -6 route add 2001:db8:6::/48 nexthop via 2001:db8:4::2 dev r3 nexthop via 2001:db8:2::3 dev r1 weight 2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:6::/48 nexthop via 2001:db8:2::3 dev p1 weight 2 "
				       "nexthop via 2001:db8:4::2 dev p2 weight 1");
	CHECK_EQ(sh("ip -6 route append 2001:db8:6::/48 via 2001:db8:2::4 dev r1"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:6::/48 nexthop via 2001:db8:2::3 dev p1 weight 2 "
				       "nexthop via 2001:db8:2::4 dev p1 weight 1 nexthop via 2001:db8:4::2 dev p2 weight 1");
	CHECK_EQ(resync(km), 0);	/* the dump's order is another: the same set */
	resyncs++;
	/* one on an unmapped interface comes and goes: rxpath's set stays */
	CHECK_EQ(sh("ip -6 route append 2001:db8:6::/48 via 2001:db8:3::2 dev r2"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(sh("ip -6 route del 2001:db8:6::/48 via 2001:db8:3::2 dev r2"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(sh("ip -6 route del 2001:db8:6::/48 via 2001:db8:2::3 dev r1"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:6::/48 nexthop via 2001:db8:2::4 dev p1 weight 1 "
				       "nexthop via 2001:db8:4::2 dev p2 weight 1");
	CHECK_EQ(stats(km).resyncs, resyncs);	/* from the events alone */
	CHECK_EQ(resync(km), 0);		/* ... and right: the kernel agrees */
	CHECK_EQ(sh("ip -6 route del 2001:db8:6::/48 via 2001:db8:4::2 dev r3"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:6::/48 via 2001:db8:2::4 dev p1");
	CHECK_EQ(sh("ip -6 route del 2001:db8:6::/48"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 2001:db8:6::/48");
	/* a whole multipath route deleted at once */
	CHECK_EQ(sh("ip -6 route add 2001:db8:6::/48 nexthop via 2001:db8:2::3 dev r1 nexthop via 2001:db8:4::2 dev r3"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:6::/48 nexthop via 2001:db8:2::3 dev p1 weight 1 "
				       "nexthop via 2001:db8:4::2 dev p2 weight 1");
	CHECK_EQ(sh("ip -6 route del 2001:db8:6::/48"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 2001:db8:6::/48");
	CHECK_EQ(stats(km).routes, 0);
	CHECK_EQ(stats(km).nexthops, 0);
}

struct route_find {
	const char *prefix;	/* "10.54.0.0/24" */
	unsigned n;
	struct rxp_ksync_route_info info;	/* the last one found (its pointers not kept) */
	char skipped[256];
};

static int find_route(void *ctx, const struct rxp_ksync_route_info *r)
{
	struct route_find *f = ctx;
	char p[INET6_ADDRSTRLEN + 8];

	inet_ntop(r->family == 4 ? AF_INET : AF_INET6, r->prefix, p, INET6_ADDRSTRLEN);
	snprintf(p + strlen(p), 8, "/%u", r->plen);
	if (strcmp(p, f->prefix))
		return 0;
	f->n++;
	f->info = *r;
	f->info.paths = NULL;
	snprintf(f->skipped, sizeof(f->skipped), "%s", r->skipped ? r->skipped : "");
	return 0;
}

static struct route_find route_of(struct rxp_ksync *k, const char *prefix)
{
	struct route_find f = { .prefix = prefix };

	rxp_ksync_foreach_route(k, find_route, &f);
	return f;
}

/*
 * Kernel nexthop objects (ip nexthop, as FRR makes them): a route naming
 * one is resolved through it, a group into its members with their
 * weights, and follows it when it is replaced or deleted.
 */
static void test_nexthop_objects(void)
{
	struct route_find f;
	uint64_t unmapped, unsupported;

	NEED_KM();
	CHECK_EQ(sh("ip nexthop add id 10 via 10.0.2.2 dev r1 && ip nexthop add id 11 via 10.0.4.2 dev r3 && "
		    "ip nexthop add id 20 group 10/11,3 && "
		    "ip nexthop add id 21 group 10/11 type resilient buckets 8"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(stats(km).nexthop_objects, 4);
	CHECK_EQ(sh("ip route add 10.50.0.0/24 nhid 20"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.50.0.0/24 nexthop via 10.0.2.2 dev p1 weight 1 "
				       "nexthop via 10.0.4.2 dev p2 weight 3");
	CHECK_EQ(sh("ip route add 10.51.0.0/24 nhid 10"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.51.0.0/24 via 10.0.2.2 dev p1");
	CHECK_EQ(sh("ip route add 10.52.0.0/24 nhid 21"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.52.0.0/24 nexthop via 10.0.2.2 dev p1 weight 1 "
				       "nexthop via 10.0.4.2 dev p2 weight 1");
	f = route_of(km, "10.50.0.0/24");
	CHECK_EQ(f.n, 1);
	CHECK_EQ(f.info.nhid, 20);
	CHECK_EQ(f.info.n_paths, 2);
	CHECK_EQ(f.info.state, RXP_KSYNC_INSTALLED);

	/* a member replaced: every route through a group that has it, once each */
	CHECK_EQ(sh("ip nexthop replace id 11 via 10.0.4.3 dev r3"), 0);
	pump(km, 200);
	CHECK_EQ(count_line(&cap_main, "route add 10.50.0.0/24 nexthop via 10.0.2.2 dev p1 weight 1 "
				       "nexthop via 10.0.4.3 dev p2 weight 3"), 1);
	CHECK_EQ(count_line(&cap_main, "route add 10.52.0.0/24 nexthop via 10.0.2.2 dev p1 weight 1 "
				       "nexthop via 10.0.4.3 dev p2 weight 1"), 1);
	CHECK_EQ(cap_main.n, 2);
	capture_clear(&cap_main);
	/* a group replaced */
	CHECK_EQ(sh("ip nexthop replace id 20 group 10"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.50.0.0/24 via 10.0.2.2 dev p1");
	CHECK_EQ(resync(km), 0);	/* the dump agrees */

	/* a blackhole object, IPv4 and IPv6; replaced by a gateway */
	CHECK_EQ(sh("ip nexthop add id 30 blackhole && ip route add 10.53.0.0/24 nhid 30"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.53.0.0/24 blackhole");
	CHECK_EQ(sh("ip -6 nexthop add id 31 blackhole && ip -6 route add 2001:db8:53::/48 nhid 31"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:53::/48 blackhole");
	CHECK_EQ(sh("ip nexthop replace id 30 via 10.0.2.9 dev r1"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.53.0.0/24 via 10.0.2.9 dev p1");

	/*
	 * A member deleted: the route through it goes (IPv4's without a word),
	 * the group left empty goes with its route, the other loses it.
	 */
	CHECK_EQ(sh("ip nexthop del id 10"), 0);
	pump(km, 200);
	CHECK_EQ(count_line(&cap_main, "route del 10.51.0.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "route del 10.50.0.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "route add 10.52.0.0/24 via 10.0.4.3 dev p2"), 1);
	CHECK_EQ(cap_main.n, 3);
	if (cap_main.n != 3)
		print_lines(&cap_main);
	capture_clear(&cap_main);
	CHECK_EQ(sh("ip nexthop del id 21"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 10.52.0.0/24");

	/* on an unmapped interface: held, shown skipped, and mirrored once the object moves */
	unmapped = stats(km).skipped.unmapped;
	CHECK_EQ(sh("ip nexthop add id 12 via 10.0.3.2 dev r2 && ip route add 10.54.0.0/24 nhid 12"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(stats(km).skipped.unmapped - unmapped, 1);
	f = route_of(km, "10.54.0.0/24");
	CHECK_EQ(f.n, 1);
	CHECK_EQ(f.info.state, RXP_KSYNC_SKIPPED);
	CHECK_EQ(f.info.nhid, 12);
	CHECK_EQ(f.info.n_paths, 0);
	CHECK(strstr(f.skipped, "mapped") != NULL);
	CHECK_EQ(stats(km).routes_skipped, 1);
	CHECK_EQ(sh("ip nexthop replace id 12 via 10.0.2.7 dev r1"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.54.0.0/24 via 10.0.2.7 dev p1");
	CHECK_EQ(route_of(km, "10.54.0.0/24").info.state, RXP_KSYNC_INSTALLED);
	CHECK_EQ(sh("ip nexthop replace id 12 via 10.0.3.2 dev r2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 10.54.0.0/24");

	/* IPv6 groups; an IPv4 route through an IPv6 nexthop is one rxpath cannot have */
	unsupported = stats(km).skipped.unsupported;
	CHECK_EQ(sh("ip nexthop add id 40 via 2001:db8:2::2 dev r1 && ip nexthop add id 41 via 2001:db8:4::2 dev r3 && "
		    "ip nexthop add id 42 group 40,2/41 && ip -6 route add 2001:db8:50::/48 nhid 42"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:50::/48 nexthop via 2001:db8:2::2 dev p1 weight 2 "
				       "nexthop via 2001:db8:4::2 dev p2 weight 1");
	CHECK_EQ(sh("ip route add 10.55.0.0/24 nhid 40"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(stats(km).skipped.unsupported - unsupported, 1);
	CHECK_EQ(route_of(km, "10.55.0.0/24").info.state, RXP_KSYNC_SKIPPED);
	CHECK_EQ(resync(km), 0);
	CHECK_EQ(sh("ip nexthop del id 41"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:50::/48 via 2001:db8:2::2 dev p1");
	CHECK_EQ(sh("ip nexthop del id 42"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 2001:db8:50::/48");

	CHECK_EQ(sh("ip route del 10.53.0.0/24 && ip -6 route del 2001:db8:53::/48 && "
		    "ip route del 10.54.0.0/24 && ip route del 10.55.0.0/24 && ip nexthop flush >/dev/null"), 0);
	pump(km, 200);
	CHECK_EQ(count_line(&cap_main, "route del 10.53.0.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "route del 2001:db8:53::/48"), 1);
	CHECK_EQ(cap_main.n, 2);
	capture_clear(&cap_main);
	CHECK_EQ(stats(km).routes, 0);
	CHECK_EQ(stats(km).nexthops, 0);
	CHECK_EQ(stats(km).nexthop_objects, 0);
}

/*
 * A link going down takes its nexthop objects, their place in groups and
 * the routes through them along, all without a word: the link event
 * brings a resync, which finds it all.
 */
static void test_nexthop_link_down(void)
{
	uint64_t resyncs;

	NEED_KM();
	CHECK_EQ(sh("ip nexthop add id 70 via 10.0.2.2 dev r1 && ip nexthop add id 71 via 10.0.4.2 dev r3 && "
		    "ip nexthop add id 72 group 70/71 && ip route add 10.59.0.0/24 nhid 72 && "
		    "ip route add 10.59.1.0/24 nhid 71"), 0);
	pump(km, 200);
	CHECK_EQ(count_line(&cap_main, "route add 10.59.0.0/24 nexthop via 10.0.2.2 dev p1 weight 1 "
				       "nexthop via 10.0.4.2 dev p2 weight 1"), 1);
	CHECK_EQ(count_line(&cap_main, "route add 10.59.1.0/24 via 10.0.4.2 dev p2"), 1);
	capture_clear(&cap_main);
	CHECK_EQ(sh("ip link set r3 down"), 0);
	CHECK(wait_line(km, &cap_main, "route add 10.59.0.0/24 via 10.0.2.2 dev p1", 3000) >= 0);
	CHECK(wait_line(km, &cap_main, "route del 10.59.1.0/24", 1000) >= 0);
	pump(km, 100);
	CHECK_EQ(cap_main.n, 2);
	capture_clear(&cap_main);
	CHECK_EQ(stats(km).nexthop_objects, 2);
	resyncs = stats(km).resyncs;
	CHECK_EQ(sh("ip link set r3 up && { ip -6 addr show dev r3 | grep -q 2001:db8:4::1 || "
		    "ip -6 addr add 2001:db8:4::1/64 dev r3 nodad; }"), 0);
	for (double end = now_ms() + 3000; now_ms() < end && stats(km).resyncs == resyncs;)
		pump(km, 50);	/* the one the link coming up brings */
	CHECK(stats(km).resyncs > resyncs);
	/* the same when it only loses its carrier (the peer goes down) */
	CHECK_EQ(sh("ip nexthop add id 71 via 10.0.4.2 dev r3 && ip nexthop replace id 72 group 70/71 && "
		    "ip route add 10.59.1.0/24 nhid 71"), 0);
	pump(km, 200);
	CHECK_EQ(count_line(&cap_main, "route add 10.59.0.0/24 nexthop via 10.0.2.2 dev p1 weight 1 "
				       "nexthop via 10.0.4.2 dev p2 weight 1"), 1);
	CHECK_EQ(count_line(&cap_main, "route add 10.59.1.0/24 via 10.0.4.2 dev p2"), 1);
	capture_clear(&cap_main);
	if (!sh("ip link show r3p >/dev/null 2>&1")) {
		CHECK_EQ(sh("ip link set r3p down"), 0);
		CHECK(wait_line(km, &cap_main, "route add 10.59.0.0/24 via 10.0.2.2 dev p1", 3000) >= 0);
		CHECK(wait_line(km, &cap_main, "route del 10.59.1.0/24", 1000) >= 0);
		CHECK_EQ(sh("ip link set r3p up"), 0);
	}
	CHECK_EQ(sh("ip route del 10.59.0.0/24 && ip route del 10.59.1.0/24 2>/dev/null; ip nexthop flush >/dev/null"), 0);
	CHECK(wait_line(km, &cap_main, "route del 10.59.0.0/24", 1000) >= 0);
	pump(km, 100);
	capture_clear(&cap_main);
	CHECK_EQ(stats(km).routes, 0);
	CHECK_EQ(stats(km).nexthop_objects, 0);
}

/*
 * A route through an object, refused because a configured route holds the
 * prefix (rxpath keeps a copy under it): when the object gives nothing to
 * mirror any more, rxpath is told to forget that copy, once.
 */
static void test_nexthop_under_configured(void)
{
	NEED_KM();
	cap_main.refuse = "route add 10.54.0.0/24";
	cap_main.refuse_err = -EEXIST;
	CHECK_EQ(sh("ip nexthop add id 12 via 10.0.2.7 dev r1 && ip route add 10.54.0.0/24 nhid 12"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.54.0.0/24 via 10.0.2.7 dev p1");
	CHECK_EQ(route_of(km, "10.54.0.0/24").info.state, RXP_KSYNC_REFUSED);
	CHECK_EQ(sh("ip nexthop replace id 12 via 10.0.3.2 dev r2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 10.54.0.0/24");
	CHECK_EQ(route_of(km, "10.54.0.0/24").info.state, RXP_KSYNC_SKIPPED);
	CHECK_EQ(resync(km), 0);
	cap_main.refuse = NULL;
	cap_main.refuse_err = 0;
	CHECK_EQ(sh("ip route del 10.54.0.0/24 && ip nexthop del id 12"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(stats(km).routes, 0);
}

/*
 * With nexthop_compat_mode off the kernel gives a route only its object's
 * id, and says nothing of the routes when the object is replaced.
 */
static void test_nexthop_id_only(void)
{
	struct rxp_ksync *k2;

	NEED_KM();
	if (sh("sysctl -qw net.ipv4.nexthop_compat_mode=0")) {
		printf("  (no net.ipv4.nexthop_compat_mode: routes carry their gateways too)\n");
		return;
	}
	CHECK_EQ(sh("ip nexthop add id 60 via 10.0.2.2 dev r1 && ip nexthop add id 61 via 10.0.4.2 dev r3 && "
		    "ip nexthop add id 62 group 60/61,2 && ip route add 10.56.0.0/24 nhid 62 && "
		    "ip -6 nexthop add id 63 via 2001:db8:2::2 dev r1 && ip -6 route add 2001:db8:56::/48 nhid 63"), 0);
	pump(km, 200);
	CHECK_EQ(count_line(&cap_main, "route add 10.56.0.0/24 nexthop via 10.0.2.2 dev p1 weight 1 "
				       "nexthop via 10.0.4.2 dev p2 weight 2"), 1);
	CHECK_EQ(count_line(&cap_main, "route add 2001:db8:56::/48 via 2001:db8:2::2 dev p1"), 1);
	CHECK_EQ(cap_main.n, 2);
	capture_clear(&cap_main);
	CHECK_EQ(sh("ip nexthop replace id 61 via 10.0.4.4 dev r3"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.56.0.0/24 nexthop via 10.0.2.2 dev p1 weight 1 "
				       "nexthop via 10.0.4.4 dev p2 weight 2");
	CHECK_EQ(sh("ip -6 nexthop replace id 63 via 2001:db8:4::4 dev r3"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:56::/48 via 2001:db8:4::4 dev p2");
	/* a first sync from dumps that carry only the ids */
	k2 = open_ksync(0, &cap_other, 0);
	if (k2) {
		CHECK_EQ(resync(k2), 2);
		CHECK_EQ(count_line(&cap_other, "route add 10.56.0.0/24 nexthop via 10.0.2.2 dev p1 weight 1 "
						"nexthop via 10.0.4.4 dev p2 weight 2"), 1);
		CHECK_EQ(count_line(&cap_other, "route add 2001:db8:56::/48 via 2001:db8:4::4 dev p2"), 1);
		CHECK_EQ(stats(k2).nexthop_objects, 4);
		rxp_ksync_close(k2);
		capture_clear(&cap_other);
	}
	/* deleted: the IPv4 route goes without a word, the IPv6 one said nothing either */
	CHECK_EQ(sh("ip nexthop del id 62 && ip nexthop del id 63"), 0);
	pump(km, 200);
	CHECK_EQ(count_line(&cap_main, "route del 10.56.0.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "route del 2001:db8:56::/48"), 1);
	CHECK_EQ(cap_main.n, 2);
	capture_clear(&cap_main);
	CHECK_EQ(sh("ip nexthop flush >/dev/null && sysctl -qw net.ipv4.nexthop_compat_mode=1"), 0);
	pump(km, 100);
	CHECK_EQ(cap_main.n, 0);
	capture_clear(&cap_main);
	CHECK_EQ(stats(km).routes, 0);
	CHECK_EQ(stats(km).nexthop_objects, 0);
}

/* ---- crafted messages ---- */

#define CRAFT_TABLE 4001u	/* a table of its own: the kernel has nothing there */

static char craft_buf[16384];

static struct nlmsghdr *craft_begin(uint16_t type)
{
	struct nlmsghdr *nlh;

	memset(craft_buf, 0, sizeof(craft_buf));
	nlh = mnl_nlmsg_put_header(craft_buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = type == RTM_NEWROUTE || type == RTM_NEWNEXTHOP ? NLM_F_CREATE : 0;
	return nlh;
}

/* A single nexthop object: @gw (or NULL) on @dev; @fdb adds NHA_FDB. */
static void craft_nh(struct rxp_ksync *k, uint32_t id, const char *gw, const char *dev, bool fdb)
{
	struct nlmsghdr *nlh = craft_begin(RTM_NEWNEXTHOP);
	struct nhmsg *nhm = mnl_nlmsg_put_extra_header(nlh, sizeof(*nhm));
	uint8_t a[16];
	int af = gw && strchr(gw, ':') ? AF_INET6 : AF_INET;

	nhm->nh_family = (uint8_t)af;
	mnl_attr_put_u32(nlh, NHA_ID, id);
	if (dev)
		mnl_attr_put_u32(nlh, NHA_OIF, if_nametoindex(dev));
	if (gw && inet_pton(af, gw, a) == 1)
		mnl_attr_put(nlh, NHA_GATEWAY, af == AF_INET ? 4 : 16, a);
	if (fdb)
		mnl_attr_put(nlh, NHA_FDB, 0, NULL);
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
}

/* A group object of @n members (id, weight - 1, weight_high) */
static void craft_group(struct rxp_ksync *k, uint32_t id, const struct nexthop_grp *g, unsigned n,
			unsigned len)
{
	struct nlmsghdr *nlh = craft_begin(RTM_NEWNEXTHOP);

	mnl_nlmsg_put_extra_header(nlh, sizeof(struct nhmsg));
	mnl_attr_put_u32(nlh, NHA_ID, id);
	mnl_attr_put(nlh, NHA_GROUP, len ? len : n * sizeof(*g), g);
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
}

static void craft_nh_del(struct rxp_ksync *k, uint32_t id)
{
	struct nlmsghdr *nlh = craft_begin(RTM_DELNEXTHOP);

	mnl_nlmsg_put_extra_header(nlh, sizeof(struct nhmsg));
	mnl_attr_put_u32(nlh, NHA_ID, id);
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
}

/* A route of CRAFT_TABLE; the caller adds its nexthop attributes, then feeds it. */
static struct nlmsghdr *craft_route(uint16_t type, const char *prefix)
{
	struct nlmsghdr *nlh = craft_begin(type);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	int af = strchr(prefix, ':') ? AF_INET6 : AF_INET;
	char p[64];
	uint8_t a[16];
	char *slash;

	snprintf(p, sizeof(p), "%s", prefix);
	slash = strchr(p, '/');
	*slash = '\0';
	inet_pton(af, p, a);
	rtm->rtm_family = (uint8_t)af;
	rtm->rtm_dst_len = (uint8_t)atoi(slash + 1);
	rtm->rtm_table = RT_TABLE_UNSPEC;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_TABLE, CRAFT_TABLE);
	mnl_attr_put(nlh, RTA_DST, af == AF_INET ? 4 : 16, a);
	return nlh;
}

/* Appends an RTA_MULTIPATH nexthop: @gw on @dev, @flags, @hops (weight - 1); @gw_len 4 normally. */
static void craft_rtnh(struct nlmsghdr *nlh, const char *gw, unsigned gw_len, const char *dev,
		       uint8_t flags, uint8_t hops)
{
	struct rtnexthop *rtnh = mnl_nlmsg_get_payload_tail(nlh);
	uint8_t a[16] = { 0 };

	nlh->nlmsg_len += RTNH_ALIGN(sizeof(*rtnh));
	rtnh->rtnh_flags = flags;
	rtnh->rtnh_hops = hops;
	rtnh->rtnh_ifindex = (int)if_nametoindex(dev);
	if (gw) {
		inet_pton(strchr(gw, ':') ? AF_INET6 : AF_INET, gw, a);
		mnl_attr_put(nlh, RTA_GATEWAY, gw_len, a);
	}
	rtnh->rtnh_len = (unsigned short)((char *)mnl_nlmsg_get_payload_tail(nlh) - (char *)rtnh);
}

static struct rxp_ksync *open_craft(void)
{
	struct rxp_ksync *k = open_ksync(CRAFT_TABLE, &cap_other, 0);

	if (k)
		resync(k);	/* the first sync: a resync is then far away */
	capture_clear(&cap_other);
	return k;
}

/* What no kernel sends: nexthop objects rxpath cannot have, unknown members, bad lengths. */
static void test_nexthop_crafted(void)
{
	struct rxp_ksync *k = open_craft();
	struct nlmsghdr *nlh;
	uint64_t unsupported;

	if (!k) {
		CHECK(k);
		return;
	}
	craft_nh(k, 100, "10.0.2.2", "r1", false);
	craft_nh(k, 101, "10.0.2.3", NULL, true);	/* an FDB nexthop */
	craft_group(k, 102, (const struct nexthop_grp[]){ { .id = 100 }, { .id = 101 } }, 2, 0);
	craft_group(k, 103, (const struct nexthop_grp[]){ { .id = 100 }, { .id = 999, .weight = 1 } }, 2, 0);
	/* weight 257 (high byte 1, low 0): above what rxpath has */
	craft_group(k, 104, (const struct nexthop_grp[]){ { .id = 100, .resvd1 = 1 } }, 1, 0);
	CHECK_EQ(stats(k).nexthop_objects, 5);
	/* malformed: ignored, nothing half-read */
	craft_group(k, 105, (const struct nexthop_grp[]){ { .id = 100 } }, 1, 7);
	nlh = craft_begin(RTM_NEWNEXTHOP);
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + 4;	/* shorter than an nhmsg */
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
	nlh = craft_begin(RTM_NEWNEXTHOP);
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct nhmsg));
	mnl_attr_put_u16(nlh, NHA_ID, 7);		/* an id too short */
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
	CHECK_EQ(stats(k).nexthop_objects, 6);		/* 105: known, as one rxpath cannot have */

	unsupported = stats(k).skipped.unsupported;
	for (uint32_t id = 102; id <= 105; id++) {
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "10.57.%u.0/24", id - 100);
		nlh = craft_route(RTM_NEWROUTE, prefix);
		mnl_attr_put_u32(nlh, RTA_NH_ID, id);
		ks_nl_feed(k, nlh, nlh->nlmsg_len);
	}
	/* only the id, of an object the kernel has not described */
	nlh = craft_route(RTM_NEWROUTE, "10.57.9.0/24");
	mnl_attr_put_u32(nlh, RTA_NH_ID, 555);
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
	CHECK_EQ(cap_other.n, 0);
	if (cap_other.n)
		print_lines(&cap_other);
	CHECK_EQ(stats(k).skipped.unsupported - unsupported, 5);
	CHECK_EQ(stats(k).routes, 5);
	CHECK_EQ(stats(k).routes_skipped, 5);
	CHECK_EQ(route_of(k, "10.57.3.0/24").info.state, RXP_KSYNC_SKIPPED);
	CHECK(strstr(route_of(k, "10.57.3.0/24").skipped, "not described") != NULL);
	CHECK(strstr(route_of(k, "10.57.2.0/24").skipped, "FDB") != NULL);

	/* the unknown ones described: the routes through them follow */
	craft_nh(k, 999, "10.0.4.2", "r3", false);
	CHECK_EQ(cap_other.n, 1);
	CHECK_EQ(count_line(&cap_other, "route add 10.57.3.0/24 nexthop via 10.0.2.2 dev p1 weight 1 "
					"nexthop via 10.0.4.2 dev p2 weight 2"), 1);
	craft_nh(k, 555, NULL, "r3", false);
	CHECK_EQ(count_line(&cap_other, "route add 10.57.9.0/24 dev p2"), 1);
	CHECK_EQ(cap_other.n, 2);
	capture_clear(&cap_other);
	/* the same object said again: nothing */
	craft_nh(k, 999, "10.0.4.2", "r3", false);
	CHECK_EQ(cap_other.n, 0);
	/* a member deleted leaves the group (as the kernel does); the route naming it goes */
	nlh = craft_route(RTM_NEWROUTE, "10.57.10.0/24");
	mnl_attr_put_u32(nlh, RTA_NH_ID, 100);
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
	CHECK_EQ(count_line(&cap_other, "route add 10.57.10.0/24 via 10.0.2.2 dev p1"), 1);
	capture_clear(&cap_other);
	craft_nh_del(k, 100);
	CHECK_EQ(count_line(&cap_other, "route del 10.57.10.0/24"), 1);
	CHECK_EQ(count_line(&cap_other, "route add 10.57.3.0/24 via 10.0.4.2 dev p2"), 1);
	CHECK_EQ(cap_other.n, 2);
	capture_clear(&cap_other);
	/* an object rxpath cannot have in place of one it has: the route leaves rxpath whole */
	craft_nh(k, 999, "10.0.4.2", "r3", true);
	CHECK_EQ(count_line(&cap_other, "route del 10.57.3.0/24"), 1);
	CHECK_EQ(cap_other.n, 1);
	capture_clear(&cap_other);

	/* a full resync: none of it is in the kernel */
	CHECK_EQ(resync(k), 1);
	CHECK_EQ(count_line(&cap_other, "route del 10.57.9.0/24"), 1);
	CHECK_EQ(stats(k).routes, 0);
	CHECK_EQ(stats(k).nexthop_objects, 0);
	capture_clear(&cap_other);
	rxp_ksync_close(k);
}

/* RTA_MULTIPATH as no kernel sends it: dead, lying lengths, too many, bad gateways. */
static void test_multipath_crafted(void)
{
	struct rxp_ksync *k = open_craft();
	struct nlmsghdr *nlh;
	struct nlattr *mp;
	struct rtnexthop *last;
	char gw[64];

	if (!k) {
		CHECK(k);
		return;
	}
	/* a dead nexthop is left out */
	nlh = craft_route(RTM_NEWROUTE, "10.58.1.0/24");
	mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	craft_rtnh(nlh, "10.0.2.2", 4, "r1", 0, 4);
	craft_rtnh(nlh, "10.0.4.2", 4, "r3", RTNH_F_DEAD, 0);
	craft_rtnh(nlh, "10.0.4.3", 4, "r3", 0, 0);
	mnl_attr_nest_end(nlh, mp);
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
	CHECK_EQ(count_line(&cap_other, "route add 10.58.1.0/24 nexthop via 10.0.2.2 dev p1 weight 5 "
					"nexthop via 10.0.4.3 dev p2 weight 1"), 1);
	/* the same route with the dead one alive */
	nlh = craft_route(RTM_NEWROUTE, "10.58.1.0/24");
	mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	craft_rtnh(nlh, "10.0.4.3", 4, "r3", 0, 0);
	craft_rtnh(nlh, "10.0.4.2", 4, "r3", 0, 0);
	craft_rtnh(nlh, "10.0.2.2", 4, "r1", 0, 4);
	mnl_attr_nest_end(nlh, mp);
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
	CHECK_EQ(count_line(&cap_other, "route add 10.58.1.0/24 nexthop via 10.0.2.2 dev p1 weight 5 "
					"nexthop via 10.0.4.2 dev p2 weight 1 nexthop via 10.0.4.3 dev p2 weight 1"), 1);
	CHECK_EQ(cap_other.n, 2);
	capture_clear(&cap_other);

	/* a gateway of the wrong length is no gateway to guess at: left out */
	nlh = craft_route(RTM_NEWROUTE, "10.58.2.0/24");
	mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	craft_rtnh(nlh, "10.0.2.2", 3, "r1", 0, 0);
	craft_rtnh(nlh, "10.0.4.2", 4, "r3", 0, 0);
	mnl_attr_nest_end(nlh, mp);
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
	CHECK_EQ(count_line(&cap_other, "route add 10.58.2.0/24 via 10.0.4.2 dev p2"), 1);
	/* a nexthop whose length runs past the attribute ends the list there */
	nlh = craft_route(RTM_NEWROUTE, "10.58.3.0/24");
	mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	craft_rtnh(nlh, "10.0.2.2", 4, "r1", 0, 0);
	last = mnl_nlmsg_get_payload_tail(nlh);
	craft_rtnh(nlh, "10.0.4.2", 4, "r3", 0, 0);
	last->rtnh_len = 200;
	mnl_attr_nest_end(nlh, mp);
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
	CHECK_EQ(count_line(&cap_other, "route add 10.58.3.0/24 via 10.0.2.2 dev p1"), 1);
	CHECK_EQ(cap_other.n, 2);
	capture_clear(&cap_other);

	/* more than 64 nexthops rxpath could have: none rather than some */
	nlh = craft_route(RTM_NEWROUTE, "10.58.4.0/24");
	mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	for (unsigned i = 0; i < 65; i++) {
		snprintf(gw, sizeof(gw), "10.0.2.%u", 10 + i);
		craft_rtnh(nlh, gw, 4, "r1", 0, 0);
	}
	mnl_attr_nest_end(nlh, mp);
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
	CHECK_EQ(cap_other.n, 0);
	CHECK_EQ(stats(k).routes, 3);
	/* 64 are one line */
	nlh = craft_route(RTM_NEWROUTE, "10.58.4.0/24");
	mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	for (unsigned i = 0; i < 64; i++) {
		snprintf(gw, sizeof(gw), "10.0.2.%u", 10 + i);
		craft_rtnh(nlh, gw, 4, i % 2 ? "r1" : "r3", 0, 255);
	}
	mnl_attr_nest_end(nlh, mp);
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
	CHECK_EQ(cap_other.n, 1);
	CHECK(cap_other.n == 1 && strstr(cap_other.lines[0], "nexthop via 10.0.2.73 dev p1 weight 256") &&
	      strlen(cap_other.lines[0]) > 64 * 30);
	CHECK_EQ(stats(k).routes_multipath, 2);
	capture_clear(&cap_other);
	/* a line longer than the command language takes is not given at all (a cut one lies) */
	nlh = craft_route(RTM_NEWROUTE, "2001:db8:58::/48");
	mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	for (unsigned i = 0; i < 64; i++) {
		snprintf(gw, sizeof(gw), "2001:db8:2:1111:2222:3333:4444:%x", 0x1000 + i);
		craft_rtnh(nlh, gw, 16, "r1", 0, 255);
	}
	mnl_attr_nest_end(nlh, mp);
	ks_nl_feed(k, nlh, nlh->nlmsg_len);
	CHECK_EQ(cap_other.n, 0);
	CHECK_EQ(route_of(k, "2001:db8:58::/48").info.state, RXP_KSYNC_REFUSED);
	CHECK_EQ(route_of(k, "2001:db8:58::/48").info.error, -E2BIG);
	CHECK_EQ(route_of(k, "2001:db8:58::/48").info.n_paths, 64);

	CHECK_EQ(resync(k), 4);	/* none of it is in the kernel */
	CHECK_EQ(stats(k).routes, 0);
	CHECK_EQ(stats(k).nexthops, 0);
	capture_clear(&cap_other);
	rxp_ksync_close(k);
}

/* IPv4 keeps routes appended under one key and uses the first: so does ksync. */
static void test_route_append(void)
{
	NEED_KM();
	CHECK_EQ(sh("ip route add 10.1.2.0/24 via 10.0.2.3 && ip route append 10.1.2.0/24 via 10.0.2.2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.1.2.0/24 via 10.0.2.3 dev p1");
	CHECK_EQ(resync(km), 0);
	CHECK_EQ(sh("ip route del 10.1.2.0/24 via 10.0.2.3"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.1.2.0/24 via 10.0.2.2 dev p1");
	CHECK_EQ(sh("ip route del 10.1.2.0/24"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 10.1.2.0/24");
	CHECK_EQ(stats(km).routes, 0);
}

/* Resolved neighbours on mapped interfaces; unresolved ones leave. */
static void test_neigh(void)
{
	NEED_KM();
	CHECK_EQ(sh("ip neigh add 10.0.2.2 lladdr 02:00:00:00:00:22 dev r1 nud permanent"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "neigh add 10.0.2.2 lladdr 02:00:00:00:00:22 dev p1");
	CHECK_EQ(sh("ip neigh replace 10.0.2.2 lladdr 02:00:00:00:00:23 dev r1 nud permanent"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "neigh add 10.0.2.2 lladdr 02:00:00:00:00:23 dev p1");
	CHECK_EQ(sh("ip neigh del 10.0.2.2 dev r1"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "neigh del 10.0.2.2 dev p1");

	CHECK_EQ(sh("ip -6 neigh add 2001:db8:2::2 lladdr 02:00:00:00:00:62 dev r1 nud reachable"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "neigh add 2001:db8:2::2 lladdr 02:00:00:00:00:62 dev p1");
	/* no longer resolved: rxpath must forget it */
	CHECK_EQ(sh("ip -6 neigh replace 2001:db8:2::2 dev r1 nud noarp"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "neigh del 2001:db8:2::2 dev p1");
	CHECK_EQ(sh("ip -6 neigh del 2001:db8:2::2 dev r1"), 0);
	CHECK_NO_LINE(km, &cap_main);

	/* unmapped interface; an incomplete entry has no address to give */
	CHECK_EQ(sh("ip neigh add 10.0.3.2 lladdr 02:00:00:00:00:32 dev r2 nud permanent"), 0);
	CHECK_EQ(sh("ip neigh add 10.0.2.9 dev r1 nud incomplete"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(stats(km).neighs, 0);
	CHECK_EQ(sh("ip neigh del 10.0.3.2 dev r2 && ip neigh del 10.0.2.9 dev r1"), 0);
	CHECK_NO_LINE(km, &cap_main);
}

/* A change whose event was never read is found by the full resync. */
static void test_resync_finds_missed_changes(void)
{
	uint64_t resyncs;

	NEED_KM();
	CHECK_EQ(sh("ip route add 10.3.0.0/24 via 10.0.2.2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.3.0.0/24 via 10.0.2.2 dev p1");
	resyncs = stats(km).resyncs;
	/* changes while nobody reads the events: resync drops the queued events and dumps */
	CHECK_EQ(sh("ip route del 10.3.0.0/24 && ip route add 10.3.1.0/24 via 10.0.2.2 && "
		    "ip neigh add 10.0.2.7 lladdr 02:00:00:00:00:27 dev r1 nud permanent"), 0);
	CHECK_EQ(resync(km), 3);
	CHECK_EQ(count_line(&cap_main, "route del 10.3.0.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "route add 10.3.1.0/24 via 10.0.2.2 dev p1"), 1);
	CHECK_EQ(count_line(&cap_main, "neigh add 10.0.2.7 lladdr 02:00:00:00:00:27 dev p1"), 1);
	CHECK_EQ(cap_main.n, 3);
	CHECK_EQ(stats(km).resyncs, resyncs + 1);
	capture_clear(&cap_main);
	/* the discarded events are not replayed afterwards, and a second resync has nothing to do */
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(resync(km), 0);
	CHECK_EQ(sh("ip route del 10.3.1.0/24 && ip neigh del 10.0.2.7 dev r1"), 0);
	pump(km, 200);
	CHECK_EQ(count_line(&cap_main, "route del 10.3.1.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "neigh del 10.0.2.7 dev p1"), 1);
	CHECK_EQ(cap_main.n, 2);
	capture_clear(&cap_main);
}

struct route_seen {
	unsigned n;
	enum rxp_ksync_state state;
	int error;
	const char *port;
	uint32_t metric;
};

static int find_route_10_2(void *ctx, const struct rxp_ksync_route_info *r)
{
	struct route_seen *s = ctx;

	if (r->family == 4 && r->plen == 24 && r->prefix[0] == 10 && r->prefix[1] == 2 &&
	    r->prefix[2] == 0 && r->prefix[3] == 0) {
		s->n++;
		s->state = r->state;
		s->error = r->error;
		s->port = r->port;
		s->metric = r->metric;
	}
	return 0;
}

/* A line rxpath refuses is remembered: not re-sent on every event, retried at the resync. */
static void test_refused(void)
{
	struct route_seen seen = { 0 };
	uint64_t refused;

	NEED_KM();
	refused = stats(km).lines_refused;
	cap_main.refuse = "via 10.0.2.99";
	CHECK_EQ(sh("ip route add 10.2.0.0/24 via 10.0.2.99"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.2.0.0/24 via 10.0.2.99 dev p1");
	CHECK_EQ(stats(km).lines_refused - refused, 1);
	CHECK_EQ(stats(km).routes_refused, 1);
	CHECK_EQ(rxp_ksync_foreach_route(km, find_route_10_2, &seen), 0);
	CHECK_EQ(seen.n, 1);
	CHECK_EQ(seen.state, RXP_KSYNC_REFUSED);
	CHECK_EQ(seen.error, -ENETUNREACH);
	CHECK(seen.port && !strcmp(seen.port, "p1"));
	/* events about its prefix, or others, do not bring it back */
	CHECK_EQ(sh("ip route add 10.2.0.0/24 via 10.0.2.2 metric 50"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(sh("ip route del 10.2.0.0/24 metric 50"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(sh("ip route add 10.2.1.0/24 via 10.0.2.2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.2.1.0/24 via 10.0.2.2 dev p1");
	/* a resync tries again */
	CHECK_EQ(resync(km), 1);
	CHECK_EQ(count_line(&cap_main, "route add 10.2.0.0/24 via 10.0.2.99 dev p1"), 1);
	CHECK_EQ(cap_main.n, 1);
	capture_clear(&cap_main);
	/* once rxpath takes it, it is installed */
	cap_main.refuse = NULL;
	CHECK_EQ(resync(km), 1);
	CHECK_EQ(count_line(&cap_main, "route add 10.2.0.0/24 via 10.0.2.99 dev p1"), 1);
	capture_clear(&cap_main);
	memset(&seen, 0, sizeof(seen));
	rxp_ksync_foreach_route(km, find_route_10_2, &seen);
	CHECK_EQ(seen.state, RXP_KSYNC_INSTALLED);
	CHECK_EQ(seen.error, 0);
	CHECK_EQ(stats(km).routes_refused, 0);
	/* a refused replacement: rxpath must not keep the route the kernel replaced */
	cap_main.refuse = "via 10.0.2.98";
	CHECK_EQ(sh("ip route replace 10.2.0.0/24 via 10.0.2.98"), 0);
	CHECK(wait_line(km, &cap_main, "route del 10.2.0.0/24", 1000) >= 0);
	pump(km, 50);
	CHECK_EQ(count_line(&cap_main, "route add 10.2.0.0/24 via 10.0.2.98 dev p1"), 1);
	CHECK_EQ(cap_main.n, 2);
	CHECK(cap_main.n == 2 && strstr(cap_main.lines[0], "route add"));	/* add tried first */
	capture_clear(&cap_main);
	CHECK_EQ(sh("ip route del 10.2.0.0/24"), 0);
	CHECK_NO_LINE(km, &cap_main);
	/* a refused route under a lower metric rxpath took: when that goes, rxpath keeps nothing */
	CHECK_EQ(sh("ip route add 10.2.2.0/24 via 10.0.2.98 metric 20"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.2.2.0/24 via 10.0.2.98 dev p1");
	CHECK_EQ(sh("ip route add 10.2.2.0/24 via 10.0.2.2 metric 10"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.2.2.0/24 via 10.0.2.2 dev p1");
	CHECK_EQ(sh("ip route del 10.2.2.0/24 metric 10"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 10.2.2.0/24");
	CHECK_EQ(sh("ip route del 10.2.2.0/24 metric 20 && ip route del 10.2.1.0/24"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 10.2.1.0/24");
	cap_main.refuse = NULL;
	CHECK_EQ(stats(km).routes, 0);
	CHECK_EQ(stats(km).nexthops, 0);
}

/* When the event socket overruns, a full resync repairs the lost events. */
static void test_overrun(void)
{
	struct rxp_ksync *ks;
	struct rxp_ksync_stats st;
	FILE *f;
	double end;

	NEED_KM();
	ks = open_ksync(0, &cap_other, 1);	/* the smallest buffer the kernel gives */
	if (!ks) {
		CHECK(ks);
		return;
	}
	CHECK_EQ(resync(ks), 0);
	f = fopen("/tmp/ksync_overrun.batch", "w");
	if (!f) {
		CHECK(f);
		rxp_ksync_close(ks);
		return;
	}
	for (unsigned i = 0; i < 2000; i++)
		fprintf(f, "route add 10.%u.%u.0/24 via 10.0.2.2\n", 100 + i / 256, i % 256);
	fclose(f);
	CHECK_EQ(sh("ip -batch /tmp/ksync_overrun.batch"), 0);
	end = now_ms() + 5000;
	while (now_ms() < end && stats(ks).routes_installed < 2000)
		pump(ks, 50);
	st = stats(ks);
	CHECK(st.overruns >= 1);
	CHECK(st.resyncs >= 2);
	CHECK_EQ(st.routes_installed, 2000);
	CHECK_EQ(count_line(&cap_other, "route add 10.107.207.0/24 via 10.0.2.2 dev p1"), 1);
	rxp_ksync_close(ks);
	capture_clear(&cap_other);
	/* the main instance reads them all (its buffer is large) */
	end = now_ms() + 5000;
	while (now_ms() < end && stats(km).routes_installed < 2000)
		pump(km, 50);
	CHECK_EQ(stats(km).routes_installed, 2000);
	CHECK_EQ(stats(km).overruns, 0);
	CHECK_EQ(sh("sed 's/^route add \\([^ ]*\\) .*/route del \\1/' /tmp/ksync_overrun.batch > /tmp/ksync_overrun.del && "
		    "ip -batch /tmp/ksync_overrun.del"), 0);
	end = now_ms() + 5000;
	while (now_ms() < end && stats(km).routes)
		pump(km, 50);
	CHECK_EQ(stats(km).routes, 0);
	capture_clear(&cap_main);
	unlink("/tmp/ksync_overrun.batch");
	unlink("/tmp/ksync_overrun.del");
}

/*
 * Taking a mapped link down flushes its IPv4 routes without a word from the
 * kernel; ksync resyncs on the link event and removes them.
 */
static void test_link_down(void)
{
	NEED_KM();
	CHECK_EQ(sh("ip route add 10.9.0.0/24 via 10.0.2.2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.9.0.0/24 via 10.0.2.2 dev p1");
	CHECK_EQ(sh("ip -6 route add 2001:db8:9::/48 via 2001:db8:2::2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:9::/48 via 2001:db8:2::2 dev p1");
	CHECK_EQ(sh("ip link set r1 down"), 0);
	CHECK(wait_line(km, &cap_main, "route del 10.9.0.0/24", 3000) >= 0);
	CHECK(wait_line(km, &cap_main, "route del 2001:db8:9::/48", 1000) >= 0);
	pump(km, 100);
	CHECK_EQ(cap_main.n, 2);
	capture_clear(&cap_main);
	CHECK_EQ(stats(km).routes, 0);
	CHECK_EQ(sh("ip link set r1 up"), 0);
	pump(km, 200);
	capture_clear(&cap_main);
	/* the same when the address the gateway sat behind goes */
	CHECK_EQ(sh("ip route add 10.9.0.0/24 via 10.0.2.2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.9.0.0/24 via 10.0.2.2 dev p1");
	CHECK_EQ(sh("ip addr del 10.0.2.1/24 dev r1"), 0);
	CHECK(wait_line(km, &cap_main, "route del 10.9.0.0/24", 3000) >= 0);
	capture_clear(&cap_main);
	CHECK_EQ(sh("ip addr add 10.0.2.1/24 dev r1"), 0);
	pump(km, 100);
	CHECK_EQ(cap_main.n, 0);
	capture_clear(&cap_main);
}

static void test_bad_config(void)
{
	static const struct rxp_ksync_port_map twice[] = { { .ifname = "r1", .port = "p1" }, { .ifname = "r1", .port = "p2" } };
	struct rxp_ksync_config cfg = { .map = twice, .n_map = 2, .apply = capture_apply };
	struct rxp_ksync *k = (struct rxp_ksync *)&cfg;
	char err[256] = "";

	CHECK_EQ(rxp_ksync_open(&k, &cfg, err, sizeof(err)), -EINVAL);
	CHECK(k == NULL);
	CHECK(strstr(err, "'r1' is mapped twice") != NULL);
	cfg.n_map = 1;
	cfg.apply = NULL;
	CHECK_EQ(rxp_ksync_open(&k, &cfg, err, sizeof(err)), -EINVAL);
}

static unsigned bench_lines;

static int count_apply(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
	bench_lines++;
	return 0;
}

/*
 * A dump of many routes (RXP_KSYNC_BENCH_ROUTES, default 100000) finishes
 * in reasonable time; prints the figures. The bound is loose: the point is
 * to catch a quadratic path, not to time a shared machine.
 */
static void test_dump_many_routes(void)
{
	const char *env = getenv("RXP_KSYNC_BENCH_ROUTES");
	unsigned n = env ? (unsigned)strtoul(env, NULL, 10) : 100000;
	struct rxp_ksync_config cfg = {
		.resync_interval_ms = FOREVER_MS, .map = port_map, .n_map = N_MAP, .apply = count_apply,
	};
	struct rxp_ksync_stats st;
	struct rxp_ksync *k = NULL;
	char err[256];
	double t0, t_add, t_sync, t_again, t_withdraw;
	char batch[] = "/tmp/ksync_bench.XXXXXX";
	int fd = mkstemp(batch);	/* a name of its own: two test runs must not share it */
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f) {
		CHECK(f);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "route add %u.%u.%u.0/24 via 10.0.2.%u\n", 20 + i / 65536,
			(i / 256) % 256, i % 256, 2 + i % 4);
	fclose(f);
	t0 = now_ms();
	CHECK_EQ(sh("ip -batch %s", batch), 0);
	t_add = now_ms() - t0;
	unlink(batch);
	if (rxp_ksync_open(&k, &cfg, err, sizeof(err))) {
		printf("  rxp_ksync_open: %s\n", err);
		CHECK(k);
		return;
	}
	t0 = now_ms();
	CHECK_EQ(rxp_ksync_resync(k, err, sizeof(err)), n);
	t_sync = now_ms() - t0;
	CHECK_EQ(bench_lines, n);
	t0 = now_ms();
	CHECK_EQ(rxp_ksync_resync(k, err, sizeof(err)), 0);	/* nothing changed */
	t_again = now_ms() - t0;
	rxp_ksync_get_stats(k, &st);
	CHECK_EQ(st.routes, n);
	CHECK_EQ(st.routes_installed, n);
	CHECK_EQ(st.nexthops, 4);
	t0 = now_ms();
	CHECK_EQ(rxp_ksync_withdraw(k), n);
	t_withdraw = now_ms() - t0;
	printf("INFO ksync: %u routes: ip -batch add %.0f ms; first sync (dump + %u lines) %.0f ms; "
	       "resync with no change %.0f ms; withdraw %.0f ms; %.1f MiB held\n",
	       n, t_add, n, t_sync, t_again, t_withdraw, (double)st.memory_bytes / (1 << 20));
	CHECK(t_sync < 30000.0);
	CHECK(t_again < 30000.0);
	rxp_ksync_close(k);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("SKIP ksync: needs root to create a network namespace (run the tests as root)\n");
		return 0;
	}
	if (unshare(CLONE_NEWNET)) {
		printf("SKIP ksync: cannot create a network namespace: %s\n", strerror(errno));
		return 0;
	}
	if (system("ip -V >/dev/null 2>&1")) {
		printf("SKIP ksync: the ip command (iproute2) is not installed\n");
		return 0;
	}
	if (make_interfaces()) {
		printf("SKIP ksync: cannot create dummy or veth interfaces in a namespace\n");
		return 0;
	}
	RUN(test_bad_config);
	RUN(test_initial_sync);
	RUN(test_route_add_del);
	RUN(test_route_replace);
	RUN(test_route_ignored);
	RUN(test_route_reject_types);
	RUN(test_other_table);
	RUN(test_route_metrics);
	RUN(test_route_multipath);
	RUN(test_route_multipath_dead);
	RUN(test_route_multipath6);
	RUN(test_nexthop_objects);
	RUN(test_nexthop_link_down);
	RUN(test_nexthop_under_configured);
	RUN(test_nexthop_id_only);
	RUN(test_nexthop_crafted);
	RUN(test_multipath_crafted);
	RUN(test_route_append);
	RUN(test_neigh);
	RUN(test_resync_finds_missed_changes);
	RUN(test_refused);
	RUN(test_overrun);
	RUN(test_link_down);
	rxp_ksync_close(km);
	km = NULL;
	RUN(test_dump_many_routes);
	return tests_done();
}
