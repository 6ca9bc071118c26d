/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of multipath routes: the router's next hop groups
 * (src/fib/nh_group.c) and the flow hash that picks a member
 * (src/net/multipath.c). Flows are IPv4 and IPv6 packets built as bytes
 * here; each is looked up in the FIB and given its member as the stack
 * does, and what a user checks is counted: how evenly flows spread, that a
 * flow keeps its next hop, how many move when the group changes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "net/multipath.h"
#include "rxpath/proto.h"
#include "rxpath/router.h"

#define FLOWS 10000

static struct rxp_router *rt;

/* A router with port 0 on 10.0.0.1/24 and 2001:db8::1/64, port 1 on 10.1.0.1/24. */
static void setup(void)
{
	static const uint8_t mac0[6] = { 2, 0, 0, 0, 0, 1 }, mac1[6] = { 2, 0, 0, 0, 0, 2 };
	uint8_t a[16];

	rt = malloc(sizeof(*rt));
	CHECK(rt && rxp_router_init(rt, 1024, 1024) == 0);
	CHECK_EQ(rxp_router_add_if(rt, "p0", 0, 0, mac0, 1500), 0);
	CHECK_EQ(rxp_router_add_if(rt, "p1", 1, 0, mac1, 1500), 1);
	inet_pton(AF_INET, "10.0.0.1", a);
	CHECK_EQ(rxp_router_add_addr(rt, 0, 4, a, 24), 0);
	inet_pton(AF_INET, "10.1.0.1", a);
	CHECK_EQ(rxp_router_add_addr(rt, 1, 4, a, 24), 0);
	inet_pton(AF_INET6, "2001:db8::1", a);
	CHECK_EQ(rxp_router_add_addr(rt, 0, 6, a, 64), 0);
}

static void teardown(void)
{
	rxp_router_free(rt);
	free(rt);
}

/* Path @i via 10.0.0.(2 + i), or via 10.1.0.(2 + i) with @other_port. */
static struct rxp_route_path path4(unsigned i, uint16_t weight, bool other_port)
{
	struct rxp_route_path p = { .has_gw = true, .ifidx = -1, .vrf = -1, .weight = weight };
	uint32_t gw = htonl((other_port ? 0x0a010002u : 0x0a000002u) + i);

	memcpy(p.gw, &gw, 4);
	return p;
}

static int add4(const char *prefix, uint8_t plen, const struct rxp_route_path *paths, unsigned n)
{
	uint8_t a[16] = { 0 };
	unsigned bad;

	inet_pton(AF_INET, prefix, a);
	return rxp_router_add_route_paths(rt, RXP_VRF_DEFAULT, 4, a, plen, paths, n, &bad);
}

/* An IPv4 packet of flow @f (addresses in 10.9/16 from 192.168/16, UDP or TCP ports). */
static unsigned flow4(uint8_t *ip, uint64_t f)
{
	uint32_t src = htonl(0xc0a80000u | (uint32_t)(f & 0xffff));
	uint32_t dst = htonl(0x0a090000u | (uint32_t)((f >> 16) & 0xffff));
	uint16_t sport = htons((uint16_t)(f >> 32)), dport = htons((uint16_t)(f >> 48));

	memset(ip, 0, 28);
	ip[0] = 0x45;
	ip[2] = 0;
	ip[3] = 28;
	ip[8] = 64;
	ip[9] = f & 1 ? RXP_IPPROTO_TCP : RXP_IPPROTO_UDP;
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	memcpy(ip + 20, &sport, 2);
	memcpy(ip + 22, &dport, 2);
	return 28;
}

/* The next hop id the route to @ip's destination gives it, as the stack picks it. */
static uint32_t member4(const uint8_t *ip, unsigned len)
{
	uint32_t dst, nh, h;
	unsigned path;

	memcpy(&dst, ip + 16, 4);
	if (rxp_lpm4_lookup(rt->fib4, ntohl(dst), &nh))
		return UINT32_MAX;
	if (!rxp_nh_is_group(nh))
		return nh;
	h = rxp_mp_hash4(rt->mp_seed, ip, len);
	return rxp_router_group_pick(rt, nh, h, &path);
}

/* The gateway's last byte of next hop @nh. */
static unsigned gw_last(uint32_t nh)
{
	return nh < RXP_NH_MAX ? rt->nh[nh].gw[3] : 0;
}

/* FLOWS flows over the route to 10.9/16: how many each gateway (by last byte) takes; members in @m. */
static void spread(unsigned count[256], uint32_t *m)
{
	uint64_t s = 0x12345678abcdefull;
	uint8_t ip[64];

	memset(count, 0, 256 * sizeof(*count));
	for (unsigned i = 0; i < FLOWS; i++) {
		unsigned len = flow4(ip, check_xorshift(&s));
		uint32_t nh = member4(ip, len);

		count[gw_last(nh)]++;
		if (m)
			m[i] = nh;
	}
}

/* 2, 3 and 4 equal next hops: each within 10% of its even share. */
static void test_even(void)
{
	unsigned count[256];

	setup();
	for (unsigned k = 2; k <= 4; k++) {
		struct rxp_route_path p[4];
		unsigned even = FLOWS / k;

		for (unsigned i = 0; i < k; i++)
			p[i] = path4(i, 1, false);
		CHECK_EQ(add4("10.9.0.0", 16, p, k), 0);
		spread(count, NULL);
		for (unsigned i = 0; i < k; i++) {
			CHECK(count[2 + i] * 10 >= even * 9 && count[2 + i] * 10 <= even * 11);
			if (count[2 + i] * 10 < even * 9 || count[2 + i] * 10 > even * 11)
				printf("  %u paths: gateway %u has %u of %u flows\n", k, i, count[2 + i], FLOWS);
		}
	}
	teardown();
}

/* Weights 1:2:3 and 1:4: flows in their proportion, within 10% of each share. */
static void test_weighted(void)
{
	static const uint16_t sets[2][3] = { { 1, 2, 3 }, { 10, 40, 0 } };
	unsigned count[256];

	setup();
	for (unsigned s = 0; s < 2; s++) {
		struct rxp_route_path p[3];
		unsigned n = sets[s][2] ? 3 : 2, total = 0;

		for (unsigned i = 0; i < n; i++) {
			p[i] = path4(i, sets[s][i], false);
			total += sets[s][i];
		}
		CHECK_EQ(add4("10.9.0.0", 16, p, n), 0);
		spread(count, NULL);
		for (unsigned i = 0; i < n; i++) {
			unsigned want = FLOWS * sets[s][i] / total;

			CHECK(count[2 + i] * 10 >= want * 9 && count[2 + i] * 10 <= want * 11);
		}
	}
	teardown();
}

/* A flow keeps its next hop while the group is unchanged: the same pick every time, and after other routes change. */
static void test_flow_keeps(void)
{
	static uint32_t a[FLOWS], b[FLOWS];
	struct rxp_route_path p[4];
	unsigned count[256];

	setup();
	for (unsigned i = 0; i < 4; i++)
		p[i] = path4(i, 1, false);
	CHECK_EQ(add4("10.9.0.0", 16, p, 4), 0);
	spread(count, a);
	/* another route with other next hops comes and goes */
	CHECK_EQ(add4("10.10.0.0", 16, p + 1, 3), 0);
	CHECK_EQ(add4("10.10.0.0", 16, p + 2, 2), 0);
	spread(count, b);
	CHECK(!memcmp(a, b, sizeof(a)));
	teardown();
}

/* Removing one of four moves only its quarter; adding it back moves back just those. */
static void test_remove_one(void)
{
	static uint32_t before[FLOWS], after[FLOWS], again[FLOWS];
	struct rxp_route_path p[4];
	unsigned count[256], moved = 0, had = 0;

	setup();
	for (unsigned i = 0; i < 4; i++)
		p[i] = path4(i, 1, false);
	CHECK_EQ(add4("10.9.0.0", 16, p, 4), 0);
	spread(count, before);
	/* the route changed to three: the one via .5 went */
	CHECK_EQ(add4("10.9.0.0", 16, p, 3), 0);
	spread(count, after);
	CHECK_EQ(count[5], 0);
	for (unsigned i = 0; i < FLOWS; i++) {
		if (gw_last(before[i]) == 5) {
			had++;
			continue;
		}
		moved += before[i] != after[i];
	}
	CHECK_EQ(moved, 0);
	CHECK(had * 10 >= FLOWS / 4 * 9 && had * 10 <= FLOWS / 4 * 11);
	/* back to four: the flows that went come back, and no other moves */
	CHECK_EQ(add4("10.9.0.0", 16, p, 4), 0);
	spread(count, again);
	CHECK(!memcmp(before, again, sizeof(before)));
	teardown();
}

/* The router with 10.9/16 over 10.0.0.2-.4 (port 0) and 10.1.0.5 (port 1); its flows' members in @before. */
static void setup_four(uint32_t *before)
{
	struct rxp_route_path p[4];
	unsigned count[256];

	setup();
	for (unsigned i = 0; i < 3; i++)
		p[i] = path4(i, 1, false);
	p[3] = path4(3, 1, true);
	CHECK_EQ(add4("10.9.0.0", 16, p, 4), 0);
	spread(count, before);
	CHECK(count[5] > FLOWS / 5);
}

/* The flows that changed members between @before and @after, of those not on the gateway ending in @gone. */
static unsigned moved_but(const uint32_t *before, const uint32_t *after, unsigned gone)
{
	unsigned moved = 0;

	for (unsigned i = 0; i < FLOWS; i++)
		if (gw_last(before[i]) != gone)
			moved += before[i] != after[i];
	return moved;
}

/*
 * A member whose gateway no subnet reaches any more (its port's address
 * went) is down: only its flows move, and when the address comes back
 * they go back to it.
 */
static void test_member_down(void)
{
	static uint32_t before[FLOWS], during[FLOWS], again[FLOWS];
	unsigned count[256];
	uint8_t a[16];

	setup_four(before);
	inet_pton(AF_INET, "10.1.0.1", a);
	CHECK_EQ(rxp_router_del_addr(rt, 1, 4, a), 0);
	spread(count, during);
	CHECK_EQ(count[5], 0);
	CHECK_EQ(moved_but(before, during, 5), 0);
	CHECK_EQ(rxp_router_add_addr(rt, 1, 4, a, 24), 0);
	spread(count, again);
	CHECK(!memcmp(before, again, sizeof(before)));
	teardown();
}

/*
 * A port without its link, or a neighbour that failed, takes its members
 * out when the groups are checked: only their flows move, and back after.
 */
static void test_port_and_neigh_down(void)
{
	static uint32_t before[FLOWS], during[FLOWS], again[FLOWS];
	unsigned count[256];
	struct rxp_neigh *n;

	setup_four(before);
	CHECK_EQ(rxp_router_groups_check(rt), 0);	/* nothing changed */
	CHECK(rxp_router_set_port_down(rt, 1, true));
	CHECK(!rxp_router_set_port_down(rt, 1, true));	/* said again: no change */
	CHECK_EQ(rxp_router_groups_check(rt), 1);
	spread(count, during);
	CHECK_EQ(count[5], 0);
	CHECK_EQ(moved_but(before, during, 5), 0);
	CHECK(rxp_router_set_port_down(rt, 1, false));
	CHECK_EQ(rxp_router_groups_check(rt), 1);
	spread(count, again);
	CHECK(!memcmp(before, again, sizeof(before)));
	/* 10.0.0.3's neighbour failed to answer: its flows go to the others */
	n = rxp_neigh_create(&rt->neigh, 0, 4, (const uint8_t *)"\x0a\x00\x00\x03", RXP_NEIGH_FAILED);
	CHECK(n != NULL);
	CHECK_EQ(rxp_router_groups_check(rt), 1);
	spread(count, during);
	CHECK_EQ(count[3], 0);
	CHECK_EQ(moved_but(before, during, 3), 0);
	n->state = RXP_NEIGH_REACHABLE;	/* it answered after all */
	CHECK_EQ(rxp_router_groups_check(rt), 1);
	spread(count, again);
	CHECK(!memcmp(before, again, sizeof(before)));
	teardown();
}

/* Both directions of a flow hash alike; an ICMP error hashes as the packet it quotes; fragments by addresses. */
static void test_hash_keys(void)
{
	uint8_t ip[64], rev[64], err[128], frag1[64], frag2[64];
	uint64_t seed = 0x5eed;
	unsigned len = flow4(ip, 0x1111222233334444ull);

	/* the reverse direction */
	memcpy(rev, ip, len);
	memcpy(rev + 12, ip + 16, 4);
	memcpy(rev + 16, ip + 12, 4);
	memcpy(rev + 20, ip + 22, 2);
	memcpy(rev + 22, ip + 20, 2);
	CHECK_EQ(rxp_mp_hash4(seed, rev, len), rxp_mp_hash4(seed, ip, len));
	/* ports count: another source port, another hash (almost surely) */
	rev[21] ^= 1;
	CHECK(rxp_mp_hash4(seed, rev, len) != rxp_mp_hash4(seed, ip, len));
	/* a Time Exceeded from a router on the way back, quoting the packet */
	memset(err, 0, sizeof(err));
	err[0] = 0x45;
	err[9] = RXP_IPPROTO_ICMP;
	memcpy(err + 12, "\x0a\x63\x00\x01", 4);	/* from 10.99.0.1 */
	memcpy(err + 16, ip + 12, 4);			/* to the packet's source */
	err[20] = RXP_ICMP_TIME_EXCEEDED;
	memcpy(err + 28, ip, len);
	CHECK_EQ(rxp_mp_hash4(seed, err, 28 + len), rxp_mp_hash4(seed, ip, len));
	/* quoting only 8 bytes of the transport header is enough, and so is the header alone */
	CHECK_EQ(rxp_mp_hash4(seed, err, 28 + 28), rxp_mp_hash4(seed, ip, len));
	/* an echo request is no error: its own addresses */
	err[20] = 8;
	CHECK(rxp_mp_hash4(seed, err, 28 + len) != rxp_mp_hash4(seed, ip, len));
	/* a datagram's fragments: the first (ports there) and a later one hash alike */
	memcpy(frag1, ip, len);
	frag1[6] = 0x20;	/* MF */
	memcpy(frag2, ip, len);
	frag2[7] = 3;		/* offset 24 */
	memset(frag2 + 20, 0xee, 8);
	CHECK_EQ(rxp_mp_hash4(seed, frag1, len), rxp_mp_hash4(seed, frag2, len));
	/* the seed is per router: another seed, another hash */
	CHECK(rxp_mp_hash4(seed + 1, ip, len) != rxp_mp_hash4(seed, ip, len));
	/* truncated: no read past the end (the sanitizers see it), the addresses still count */
	CHECK_EQ(rxp_mp_hash4(seed, frag1, 20), rxp_mp_hash4(seed, frag2, 20));
}

/* IPv6: the same rules; ICMPv6 errors by the packet they quote. */
static void test_hash6(void)
{
	uint8_t ip[48] = { 0x60 }, rev[48], err[128] = { 0x60 };
	uint64_t seed = 7;

	ip[6] = RXP_IPPROTO_UDP;
	inet_pton(AF_INET6, "2001:db8:1::10", ip + 8);
	inet_pton(AF_INET6, "2001:db8:9::20", ip + 24);
	memcpy(ip + 40, "\x30\x39\x00\x35", 4);
	memcpy(rev, ip, 48);
	memcpy(rev + 8, ip + 24, 16);
	memcpy(rev + 24, ip + 8, 16);
	memcpy(rev + 40, "\x00\x35\x30\x39", 4);
	CHECK_EQ(rxp_mp_hash6(seed, rev, 48), rxp_mp_hash6(seed, ip, 48));
	err[6] = RXP_IPPROTO_ICMP6;
	inet_pton(AF_INET6, "2001:db8:99::1", err + 8);
	memcpy(err + 24, ip + 8, 16);
	err[40] = RXP_ICMP6_PKT_TOO_BIG;
	memcpy(err + 48, ip, 48);
	CHECK_EQ(rxp_mp_hash6(seed, err, 96), rxp_mp_hash6(seed, ip, 48));
	err[40] = RXP_ICMP6_ECHO_REQUEST;
	CHECK(rxp_mp_hash6(seed, err, 96) != rxp_mp_hash6(seed, ip, 48));
}

/* What is refused names the next hop at fault and changes nothing. */
static void test_refused(void)
{
	struct rxp_route_path p[RXP_NH_PATHS_MAX + 1];
	uint8_t a[16] = { 10, 9, 0, 0 };
	unsigned bad = 99;

	setup();
	for (unsigned i = 0; i <= RXP_NH_PATHS_MAX; i++)
		p[i] = path4(i, 1, false);
	CHECK_EQ(rxp_router_add_route_paths(rt, RXP_VRF_DEFAULT, 4, a, 16, p, RXP_NH_PATHS_MAX + 1, &bad), -E2BIG);
	p[1].weight = 0;
	CHECK_EQ(rxp_router_add_route_paths(rt, RXP_VRF_DEFAULT, 4, a, 16, p, 3, &bad), -ERANGE);
	CHECK_EQ(bad, 1);
	p[1].weight = RXP_NH_WEIGHT_MAX + 1;
	CHECK_EQ(rxp_router_add_route_paths(rt, RXP_VRF_DEFAULT, 4, a, 16, p, 3, &bad), -ERANGE);
	p[1].weight = RXP_NH_WEIGHT_MAX;
	memcpy(p[2].gw, "\x0a\x05\x00\x01", 4);	/* on no subnet */
	CHECK_EQ(rxp_router_add_route_paths(rt, RXP_VRF_DEFAULT, 4, a, 16, p, 3, &bad), -ENETUNREACH);
	CHECK_EQ(bad, 2);
	memcpy(p[2].gw, "\x0a\x00\x00\x01", 4);	/* the router's own address */
	CHECK_EQ(rxp_router_add_route_paths(rt, RXP_VRF_DEFAULT, 4, a, 16, p, 3, &bad), -ENXIO);
	CHECK(rxp_router_route(rt, RXP_VRF_DEFAULT, 4, a, 16) == NULL);
	/* the prefix of an address's subnet is its own */
	p[2] = path4(2, 1, false);
	memcpy(a, "\x0a\x00\x00\x00", 4);
	CHECK_EQ(rxp_router_add_route_paths(rt, RXP_VRF_DEFAULT, 4, a, 24, p, 3, &bad), -EISCONN);
	CHECK_EQ(rt->n_groups, 0);
	teardown();
}

/* Routes with one set share a group; the last route gone frees it and its next hops. */
static void test_sharing(void)
{
	struct rxp_route_path p[3];
	uint8_t a[16] = { 10, 20, 0, 0 }, b[16] = { 10, 21, 0, 0 };
	const struct rxp_route *ra, *rb;

	setup();
	for (unsigned i = 0; i < 3; i++)
		p[i] = path4(i, 1, false);
	CHECK_EQ(add4("10.20.0.0", 16, p, 3), 0);
	/* the same next hops in another order, one said twice: the same group, with that one's weight doubled */
	{
		struct rxp_route_path q[3] = { p[2], p[1], p[0] };

		CHECK_EQ(add4("10.21.0.0", 16, q, 3), 0);
	}
	ra = rxp_router_route(rt, RXP_VRF_DEFAULT, 4, a, 16);
	rb = rxp_router_route(rt, RXP_VRF_DEFAULT, 4, b, 16);
	CHECK(ra && rb && rxp_nh_is_group(ra->nh) && ra->nh == rb->nh);
	CHECK_EQ(rxp_router_group(rt, ra->nh)->refs, 2);
	{
		struct rxp_route_path q[4] = { p[0], p[1], p[2], p[2] };

		CHECK_EQ(add4("10.21.0.0", 16, q, 4), 0);
		rb = rxp_router_route(rt, RXP_VRF_DEFAULT, 4, b, 16);
		CHECK(rb->nh != ra->nh && rxp_router_group(rt, rb->nh)->weight[2] == 2);
	}
	/* one next hop is an ordinary route */
	CHECK_EQ(add4("10.22.0.0", 16, p, 1), 0);
	CHECK(!rxp_nh_is_group(rxp_router_route(rt, RXP_VRF_DEFAULT, 4, (uint8_t[16]){ 10, 22 }, 16)->nh));
	CHECK_EQ(rxp_router_del_route(rt, RXP_VRF_DEFAULT, 4, a, 16), 0);
	CHECK_EQ(rxp_router_del_route(rt, RXP_VRF_DEFAULT, 4, b, 16), 0);
	CHECK_EQ(rxp_router_del_route(rt, RXP_VRF_DEFAULT, 4, (uint8_t[16]){ 10, 22 }, 16), 0);
	for (unsigned g = 0; g < rt->n_groups; g++)
		CHECK_EQ(rt->groups[g].refs, 0);
	for (unsigned i = 1; i < rt->n_nh; i++)
		if (rt->nh[i].kind == RXP_NH_KIND_GATEWAY)
			CHECK_EQ(rt->nh[i].refs, 0);
	teardown();
}

int main(void)
{
	RUN(test_even);
	RUN(test_weighted);
	RUN(test_flow_keeps);
	RUN(test_remove_one);
	RUN(test_member_down);
	RUN(test_port_and_neigh_down);
	RUN(test_hash_keys);
	RUN(test_hash6);
	RUN(test_refused);
	RUN(test_sharing);
	return tests_done();
}
