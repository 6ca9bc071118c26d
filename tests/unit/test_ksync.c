/* SPDX-License-Identifier: MIT */
/*
 * Tests of kernel sync (src/ctl/ksync.h) against a real kernel: the
 * program moves into a fresh network namespace, makes interfaces there and
 * changes routes and neighbours with `ip`, then checks the command-language
 * lines ksync hands to its apply callback. Needs root; otherwise it prints
 * a SKIP line saying why.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ctl/ksync.h"
#include "check.h"

#define MAX_LINES 4096
#define FOREVER_MS 3600000u	/* no timed resync during a test unless it asks */

/* What the apply callback was given, and what it should refuse. */
struct capture {
	char lines[MAX_LINES][RXP_KSYNC_LINE_MAX];
	unsigned n;		/* kept (at most MAX_LINES) */
	uint64_t total;		/* seen */
	const char *refuse;	/* lines containing this are refused */
	unsigned n_refused;
};

static struct capture cap_main, cap_other;
static struct rxp_ksync *km;	/* main table, ports r1 -> p1 (r2 is not mapped) */

static const struct rxp_ksync_port_map port_map[] = { { .ifname = "r1", .port = "p1" } };

static int capture_apply(void *ctx, const char *line)
{
	struct capture *c = ctx;

	c->total++;
	if (c->n < MAX_LINES)
		snprintf(c->lines[c->n++], RXP_KSYNC_LINE_MAX, "%s", line);
	if (c->refuse && strstr(line, c->refuse)) {
		c->n_refused++;
		return -ENETUNREACH;
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
		.n_map = 1,
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

/* The interfaces: r1 (mapped to p1) and r2 (not mapped), each with a peer so they have carrier. */
static int make_interfaces(void)
{
	if (system("ip link set lo up"))
		return -1;
	for (int i = 1; i <= 2; i++) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd),
			 "ip link add r%d type dummy 2>/dev/null || ip link add r%d type veth peer name r%dp && "
			 "{ ! ip link show r%dp >/dev/null 2>&1 || ip link set r%dp up; } && ip link set r%d up",
			 i, i, i, i, i, i);
		if (system(cmd))
			return -1;
	}
	return system("ip addr add 10.0.2.1/24 dev r1 && ip -6 addr add 2001:db8:2::1/64 dev r1 nodad && "
		      "ip addr add 10.0.3.1/24 dev r2 && ip -6 addr add 2001:db8:3::1/64 dev r2 nodad");
}

/* ---- the cases ---- */

/* A route that was there before sync started comes in the first sync, and nothing else: the kernel's own routes stay out. */
static void test_initial_sync(void)
{
	struct rxp_ksync_stats st;

	CHECK_EQ(sh("ip route add 10.4.0.0/24 via 10.0.2.2"), 0);
	km = open_ksync(0, &cap_main, 0);
	if (!km) {
		CHECK(km);
		return;
	}
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

	if (!km) {
		CHECK(km);
		return;
	}
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
	if (!km) {
		CHECK(km);
		return;
	}
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

	if (!km) {
		CHECK(km);
		return;
	}
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
	if (!km) {
		CHECK(km);
		return;
	}
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

	if (!km) {
		CHECK(km);
		return;
	}
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
	if (!km) {
		CHECK(km);
		return;
	}
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
 * A multipath route is mirrored through one nexthop, the lowest mapped
 * gateway (the same whichever order the kernel lists them in), and counted.
 */
static void test_route_multipath(void)
{
	uint64_t before;

	if (!km) {
		CHECK(km);
		return;
	}
	before = stats(km).skipped.multipath;
	CHECK_EQ(sh("ip route add 10.6.0.0/24 nexthop via 10.0.2.3 nexthop via 10.0.2.2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.6.0.0/24 via 10.0.2.2 dev p1");
	CHECK_EQ(stats(km).skipped.multipath - before, 1);
	CHECK_EQ(sh("ip route add 10.6.1.0/24 nexthop via 10.0.3.2 nexthop via 10.0.2.5"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 10.6.1.0/24 via 10.0.2.5 dev p1");
	CHECK_EQ(sh("ip route del 10.6.0.0/24 && ip route del 10.6.1.0/24"), 0);
	pump(km, 200);
	CHECK_EQ(count_line(&cap_main, "route del 10.6.0.0/24"), 1);
	CHECK_EQ(count_line(&cap_main, "route del 10.6.1.0/24"), 1);
	CHECK_EQ(cap_main.n, 2);
	capture_clear(&cap_main);

	/* IPv6: nexthops come and go one at a time */
	CHECK_EQ(sh("ip -6 route add 2001:db8:6::/48 nexthop via 2001:db8:2::3 nexthop via 2001:db8:2::2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:6::/48 via 2001:db8:2::2 dev p1");
	CHECK_EQ(sh("ip -6 route append 2001:db8:6::/48 via 2001:db8:2::4"), 0);
	CHECK_NO_LINE(km, &cap_main);
	CHECK_EQ(sh("ip -6 route del 2001:db8:6::/48 via 2001:db8:2::3"), 0);	/* not rxpath's */
	CHECK_NO_LINE(km, &cap_main);
	/* rxpath's one: the kernel does not say what is left; a resync finds ::4 */
	CHECK_EQ(sh("ip -6 route del 2001:db8:6::/48 via 2001:db8:2::2"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route add 2001:db8:6::/48 via 2001:db8:2::4 dev p1");
	CHECK_EQ(sh("ip -6 route del 2001:db8:6::/48"), 0);
	CHECK_ONLY_LINE(km, &cap_main, "route del 2001:db8:6::/48");
	CHECK_EQ(stats(km).routes, 0);
}

/* IPv4 keeps routes appended under one key and uses the first: so does ksync. */
static void test_route_append(void)
{
	if (!km) {
		CHECK(km);
		return;
	}
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
	if (!km) {
		CHECK(km);
		return;
	}
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

	if (!km) {
		CHECK(km);
		return;
	}
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

	if (!km) {
		CHECK(km);
		return;
	}
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

	if (!km) {
		CHECK(km);
		return;
	}
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
	if (!km) {
		CHECK(km);
		return;
	}
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
		.resync_interval_ms = FOREVER_MS, .map = port_map, .n_map = 1, .apply = count_apply,
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
