/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the neighbour and Router Advertisement timers
 * (src/net/resolve.c, nd.c, ra.c) on a virtual clock. One stack runs a
 * router with a LAN port (2001:db8:1::1/64, where the host lives) and an
 * uplink port (2001:db8:2::1/64, where traffic to the host comes from);
 * the test sets the time with rxp_stack_tick() and both ports keep every
 * frame the stack transmits with the time it left. What is checked is what
 * a capture on the wire, or the counters, would show:
 *
 *  - a neighbour learned by answering our NS is renewed only by answers to
 *    our requests (RFC 4861 7.2.5, 7.3.1): unsolicited NAs do not keep it,
 *    it is probed at its MAC in the last 3 s of its life and then ages out;
 *    a solicited NA answering a probe renews it;
 *  - an unsolicited NA with Override and a new MAC moves traffic to the new
 *    MAC at once, without renewing the entry;
 *  - an RS soon after an RA is answered 3 s after that RA plus a random
 *    delay of up to 0.5 s, one long after within 0.5 s (6.2.6); turning
 *    advertising off and on keeps the 3 s from the final RA;
 *  - traffic to many unresolved addresses resolves at most a quarter of
 *    the neighbour table (RFC 6583) and a host that speaks up is still learned.
 *
 * Every buffer is back in the pool at the end of each case.
 */
#include <stdlib.h>
#include <string.h>
#include "rxpath/csum.h"
#include "rxpath/port.h"
#include "rxpath/proto.h"
#include "rxpath/router.h"
#include "rxpath/stack.h"
#include "check.h"

#define N_BUFS 16384		/* an eighth (the held-packet share) above the scan's holds */
#define SENT_MAX 4096
#define MS 1000000ull
#define SEC 1000000000ull
#define TICK (100 * MS)		/* the stack looks at its timers this often */
#define AGEING (10 * SEC)	/* neighbour lifetime set by the tests */
#define PROBE_WINDOW (3 * SEC)	/* a used neighbour is probed in the last 3 s of its life */
#define RA_SPACING (3 * SEC)	/* MIN_DELAY_BETWEEN_RAS */
#define RA_MAX_DELAY (500 * MS)	/* MAX_RA_DELAY_TIME */
#define LAN 0			/* port and interface index */
#define UPLINK 1

#define ND_RS 133
#define ND_RA 134
#define ND_NS 135
#define ND_NA 136
#define NA_SOLICITED 0x40
#define NA_OVERRIDE 0x20

static const uint8_t lan_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t uplink_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t host_mac[6] = { 0x02, 0xaa, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t host_new_mac[6] = { 0x02, 0xbb, 0x00, 0x00, 0x00, 0x02 };	/* its new NIC */
static const uint8_t peer_mac[6] = { 0x02, 0xee, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t all_routers_mac[6] = { 0x33, 0x33, 0x00, 0x00, 0x00, 0x02 };

static const uint8_t lan6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 1 };
static const uint8_t host6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 2 };
static const uint8_t host_ll[16] = { 0xfe, 0x80, [8] = 0x00, [9] = 0xaa, [15] = 2 };
static const uint8_t uplink6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 2, [15] = 1 };
static const uint8_t peer6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 2, [15] = 2 };
static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
static const uint8_t all_routers[16] = { 0xff, 0x02, [15] = 2 };

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* ---- ports that keep what the stack transmits, with the virtual time ---- */

struct sent {
	struct rxp_pkt *pkt;
	uint64_t t;		/* the virtual time it left */
	uint16_t port;
};

static struct sent sent[SENT_MAX];
static unsigned n_sent;
static uint64_t vnow;

static uint16_t cap_tx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		CHECK(n_sent < SENT_MAX);
		if (n_sent < SENT_MAX)
			sent[n_sent++] = (struct sent){ pkts[i], vnow, q->port->id };
		else
			rxp_pool_free(q->cache, pkts[i]);
	}
	return n;
}

static uint16_t cap_rx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	(void)q, (void)pkts, (void)n;
	return 0;
}

static uint32_t cap_nothing(struct rxp_queue *q)
{
	(void)q;
	return 0;
}

static const struct rxp_port_ops cap_ops = {
	.driver = "capture",
	.rx_burst = cap_rx_burst,
	.tx_burst = cap_tx_burst,
	.refill = cap_nothing,
	.complete = cap_nothing,
};

/* ---- fixture ---- */

static struct {
	struct rxp_pool *pool;
	struct rxp_pool_cache cache;
	struct rxp_stack st;
	struct rxp_router *r;
	struct rxp_port ports[2];
	const uint8_t *lan_ll;	/* the router's link-local address on the LAN */
} fx;

static void fx_init(void)
{
	struct rxp_pool_config cfg = { .n_bufs = N_BUFS, .max_frame = 1518, .rx_offset = 2 };
	struct rxp_rx_tuning t = rxp_rx_tuning_default();
	const uint8_t *macs[2] = { lan_mac, uplink_mac };
	char err[256];

	memset(&fx, 0, sizeof(fx));
	n_sent = 0;
	vnow = 0;
	fx.pool = rxp_pool_create(&cfg, err, sizeof(err));
	CHECK(fx.pool != NULL);
	CHECK_EQ(rxp_pool_cache_init(&fx.cache, fx.pool, RXP_POOL_CACHE_MAX), 0);
	CHECK_EQ(rxp_stack_init(&fx.st, &t, &fx.cache), 0);
	for (uint16_t p = 0; p < 2; p++) {
		fx.ports[p].id = p;
		fx.ports[p].ops = &cap_ops;
		fx.ports[p].pool = fx.pool;
		fx.ports[p].n_queues = 1;
		fx.ports[p].queues[0].port = &fx.ports[p];
		fx.ports[p].queues[0].cache = &fx.cache;
		CHECK_EQ(rxp_stack_add_port(&fx.st, p, macs[p], &fx.ports[p].queues[0]), 0);
	}
	fx.r = calloc(1, sizeof(*fx.r));
	CHECK(fx.r && rxp_router_init(fx.r, 64, 64) == 0);
	CHECK_EQ(rxp_router_add_if(fx.r, "lan", LAN, 0, lan_mac, 1500), LAN);
	CHECK_EQ(rxp_router_add_if(fx.r, "uplink", UPLINK, 0, uplink_mac, 1500), UPLINK);
	CHECK_EQ(rxp_router_add_addr(fx.r, LAN, 6, lan6, 64), 0);
	CHECK_EQ(rxp_router_add_addr(fx.r, UPLINK, 6, uplink6, 64), 0);
	fx.lan_ll = fx.r->ifs[LAN].addr6[0];
	rxp_stack_set_router(&fx.st, fx.r);
}

/* Frees what was captured so far. */
static void sent_free(void)
{
	for (unsigned i = 0; i < n_sent; i++)
		rxp_pool_free(&fx.cache, sent[i].pkt);
	n_sent = 0;
}

static void fx_fini(void)
{
	struct rxp_pool_cache *caches[] = { &fx.cache };

	sent_free();
	rxp_stack_close(&fx.st);	/* packets still held for neighbours */
	CHECK_EQ(rxp_pool_audit(fx.pool, caches, 1), 0);
	rxp_pool_cache_close(&fx.cache);
	CHECK_EQ(rxp_pool_ring_count(fx.pool), N_BUFS);
	CHECK_EQ(rxp_pool_destroy(fx.pool), 0);
	rxp_router_free(fx.r);
	free(fx.r);
}

/* Sets the clock to @t and runs the timers, as the poll loop does between polls. */
static void clock_to(uint64_t t)
{
	CHECK(t >= vnow);
	vnow = t;
	rxp_stack_tick(&fx.st, t);
	rxp_stack_flush(&fx.st);
}

/* ---- frames arriving ---- */

/*
 * Hands the stack an IPv6 frame received on @port carrying @len bytes of
 * @next_hdr (ICMPv6 or UDP, whose checksum is filled in), at the current time.
 */
static void receive6(uint16_t port, const uint8_t *dst_mac, const uint8_t *src_mac,
		     const uint8_t *src, const uint8_t *dst, uint8_t hop_limit, uint8_t next_hdr,
		     const uint8_t *payload, uint16_t len)
{
	struct rxp_pkt *pkt = rxp_pool_alloc(&fx.cache);
	unsigned frame_len = RXP_ETH_HLEN + RXP_IP6_HLEN + len;
	uint8_t *d, *ip, *l4;
	uint16_t c;

	CHECK(pkt != NULL);
	if (!pkt)
		return;
	pkt->data_off = (uint16_t)fx.pool->data_off;
	d = rxp_pkt_data(pkt);
	memset(d, 0, RXP_MAX(frame_len, (unsigned)RXP_ETH_ZLEN));
	memcpy(d, dst_mac, 6);
	memcpy(d + 6, src_mac, 6);
	put16(d + 12, RXP_ETHERTYPE_IP6);
	ip = d + RXP_ETH_HLEN;
	ip[0] = 0x60;
	put16(ip + 4, len);
	ip[6] = next_hdr;
	ip[7] = hop_limit;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	l4 = ip + RXP_IP6_HLEN;
	memcpy(l4, payload, len);
	c = rxp_csum_fold(rxp_csum_partial(l4, len, rxp_csum_pseudo6(src, dst, next_hdr, len)));
	memcpy(l4 + (next_hdr == RXP_IPPROTO_UDP ? 6 : 2), &c, 2);
	pkt->len = (uint16_t)RXP_MAX(frame_len, (unsigned)RXP_ETH_ZLEN);
	pkt->port = port;
	pkt->queue = 0;
	rxp_stack_input_one(&fx.st, pkt);
	rxp_stack_flush(&fx.st);
}

/* A UDP datagram from the uplink peer to @dst, which the router forwards. */
static void udp_to(const uint8_t *dst)
{
	uint8_t udp[24] = { 0x30, 0x39, 0x00, 0x09 };

	put16(udp + 4, sizeof(udp));
	receive6(UPLINK, uplink_mac, peer_mac, peer6, dst, 64, RXP_IPPROTO_UDP, udp, sizeof(udp));
}

/* The host asks for @target (one of ours) at its solicited-node group, telling its MAC. */
static void ns_from_host(const uint8_t *target)
{
	uint8_t ns[32] = { ND_NS };
	uint8_t group[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };
	uint8_t group_mac[6] = { 0x33, 0x33, 0xff };

	memcpy(group + 13, target + 13, 3);
	memcpy(group_mac + 3, target + 13, 3);
	memcpy(ns + 8, target, 16);
	ns[24] = 1;	/* source link-layer address */
	ns[25] = 1;
	memcpy(ns + 26, host_mac, 6);
	receive6(LAN, group_mac, host_mac, host6, group, 255, RXP_IPPROTO_ICMP6, ns, sizeof(ns));
}

/*
 * The host advertises host6 to @dst with @flags, with target link-layer
 * address @tlla (NULL: none), from the MAC it has on the wire.
 */
static void na_from_host(const uint8_t *dst, const uint8_t *dst_mac, uint8_t flags,
			 const uint8_t *tlla, const uint8_t *wire_mac)
{
	uint8_t na[32] = { ND_NA };

	na[4] = flags;
	memcpy(na + 8, host6, 16);
	if (tlla) {
		na[24] = 2;	/* target link-layer address */
		na[25] = 1;
		memcpy(na + 26, tlla, 6);
	}
	receive6(LAN, dst_mac, wire_mac, host6, dst, 255, RXP_IPPROTO_ICMP6, na,
		 tlla ? 32 : 24);
}

/* The host asks for routers from its link-local address. */
static void rs_from_host(void)
{
	uint8_t rs[16] = { ND_RS };

	rs[8] = 1;	/* source link-layer address */
	rs[9] = 1;
	memcpy(rs + 10, host_mac, 6);
	receive6(LAN, all_routers_mac, host_mac, host_ll, all_routers, 255, RXP_IPPROTO_ICMP6, rs,
		 sizeof(rs));
}

/* ---- frames sent ---- */

static const uint8_t *ip_of(const struct sent *s)
{
	return rxp_pkt_cdata(s->pkt) + RXP_ETH_HLEN;
}

static bool is_icmp6(const struct sent *s, uint8_t type)
{
	const uint8_t *f = rxp_pkt_cdata(s->pkt);

	return s->pkt->len >= RXP_ETH_HLEN + RXP_IP6_HLEN + 4 &&
	       get16(f + 12) == RXP_ETHERTYPE_IP6 && f[RXP_ETH_HLEN + 6] == RXP_IPPROTO_ICMP6 &&
	       f[RXP_ETH_HLEN + RXP_IP6_HLEN] == type;
}

/* An NS for @target on the LAN to its solicited-node group: the router does not know it. */
static bool is_ns_multicast(const struct sent *s, const uint8_t *target)
{
	const uint8_t *f = rxp_pkt_cdata(s->pkt), *ip = ip_of(s);
	const uint8_t group_mac[3] = { 0x33, 0x33, 0xff };

	return s->port == LAN && is_icmp6(s, ND_NS) && !memcmp(ip + 48, target, 16) &&
	       !memcmp(f, group_mac, 3) && !memcmp(f + 3, target + 13, 3) &&
	       ip[24] == 0xff && !memcmp(ip + 37, target + 13, 3);
}

/* An NS for @target sent to it alone, at @mac: a probe of a known neighbour. */
static bool is_ns_unicast(const struct sent *s, const uint8_t *target, const uint8_t *mac)
{
	const uint8_t *ip = ip_of(s);

	return s->port == LAN && is_icmp6(s, ND_NS) && !memcmp(ip + 48, target, 16) &&
	       !memcmp(rxp_pkt_cdata(s->pkt), mac, 6) && !memcmp(ip + 24, target, 16);
}

/* An RA on the LAN to all nodes. */
static bool is_ra(const struct sent *s)
{
	return s->port == LAN && is_icmp6(s, ND_RA) &&
	       !memcmp(rxp_pkt_cdata(s->pkt), all_nodes_mac, 6) && !memcmp(ip_of(s) + 24, all_nodes, 16);
}

static uint16_t ra_lifetime(const struct sent *s)
{
	return get16(ip_of(s) + RXP_IP6_HLEN + 6);
}

/* A forwarded UDP datagram to @dst, out on the LAN to @mac. */
static bool is_udp_to(const struct sent *s, const uint8_t *dst, const uint8_t *mac)
{
	const uint8_t *f = rxp_pkt_cdata(s->pkt), *ip = ip_of(s);

	return s->port == LAN && get16(f + 12) == RXP_ETHERTYPE_IP6 && ip[6] == RXP_IPPROTO_UDP &&
	       !memcmp(ip + 24, dst, 16) && !memcmp(f, mac, 6);
}

static unsigned count_ns_for(const uint8_t *target)
{
	unsigned n = 0;

	for (unsigned i = 0; i < n_sent; i++)
		n += is_icmp6(&sent[i], ND_NS) && !memcmp(ip_of(&sent[i]) + 48, target, 16);
	return n;
}

static unsigned count_udp_to(const uint8_t *dst, const uint8_t *mac)
{
	unsigned n = 0;

	for (unsigned i = 0; i < n_sent; i++)
		n += is_udp_to(&sent[i], dst, mac);
	return n;
}

/* How many sent frames matched, and when the first and the last of them left. */
struct tally {
	unsigned n;
	uint64_t first, last;
};

static void tally_add(struct tally *t, const struct sent *s)
{
	if (!t->n++)
		t->first = s->t;
	t->last = s->t;
}

/* ---- neighbour lifetime ---- */

/*
 * Traffic to the host at @t finds it unknown: the router multicasts an NS,
 * the host answers it (S=1, O=1, with its MAC, as to any multicast NS) and
 * the held datagram goes to it.
 */
static void learn_host_by_answering_ns(uint64_t t)
{
	clock_to(t);
	udp_to(host6);
	CHECK_EQ(n_sent, 1);
	CHECK(n_sent == 1 && is_ns_multicast(&sent[0], host6));
	na_from_host(fx.lan_ll, lan_mac, NA_SOLICITED | NA_OVERRIDE, host_mac, host_mac);
	CHECK_EQ(count_udp_to(host6, host_mac), 1);
	sent_free();
}

static void test_unsolicited_na_does_not_renew_entry(void)
{
	const uint64_t learned = SEC, expires = learned + AGEING;
	struct tally probes = { 0 }, asked = { 0 }, forwarded = { 0 };

	fx_init();
	rxp_stack_neigh_set_ageing(&fx.st, AGEING);
	learn_host_by_answering_ns(learned);
	for (uint64_t t = learned + TICK; t <= expires + 5 * TICK; t += TICK) {
		clock_to(t);
		/* every 3 s the host announces itself unasked, with the same MAC */
		if ((t - learned) % (3 * SEC) == 0)
			na_from_host(all_nodes, all_nodes_mac, 0, host_mac, host_mac);
		udp_to(host6);	/* and the entry is in use all along */
	}
	for (unsigned i = 0; i < n_sent; i++) {
		if (is_ns_unicast(&sent[i], host6, host_mac))
			tally_add(&probes, &sent[i]);
		else if (is_ns_multicast(&sent[i], host6))
			tally_add(&asked, &sent[i]);
		else if (is_udp_to(&sent[i], host6, host_mac))
			tally_add(&forwarded, &sent[i]);
	}
	/* unanswered probes at its MAC, only in the last 3 s of its life */
	CHECK_EQ(probes.n, RXP_NEIGH_PROBES);
	CHECK(probes.first >= expires - PROBE_WINDOW);
	CHECK(probes.last < expires);
	/* the NAs at +3, +6 and +9 s did not renew it: it went at +10 s and is asked for again */
	CHECK_EQ(asked.n, 1);
	CHECK_EQ(asked.first, expires);
	CHECK_EQ(count_ns_for(host6), probes.n + asked.n);
	/* until then every datagram went straight to the host */
	CHECK_EQ(forwarded.n, AGEING / TICK - 1);
	CHECK(forwarded.last < expires);
	fx_fini();
}

static void test_solicited_na_answering_probe_renews_entry(void)
{
	const uint64_t learned = SEC, until = learned + 4 * AGEING;
	unsigned probes = 0, datagrams = 0;

	fx_init();
	rxp_stack_neigh_set_ageing(&fx.st, AGEING);
	learn_host_by_answering_ns(learned);
	for (uint64_t t = learned + TICK; t <= until; t += TICK) {
		unsigned from = n_sent;

		clock_to(t);
		for (unsigned i = from; i < n_sent; i++) {
			if (!is_ns_unicast(&sent[i], host6, host_mac))
				continue;
			probes++;
			/* as Linux answers a unicast NS: to its source, S=1, O=0, no TLLA */
			na_from_host(fx.lan_ll, lan_mac, NA_SOLICITED, NULL, host_mac);
		}
		udp_to(host6);
		datagrams++;
	}
	/* four lifetimes of traffic: renewed by an answer at least four times */
	CHECK(probes >= 4);
	/* and never forgotten: no multicast NS, every datagram went to the host */
	CHECK_EQ(count_ns_for(host6), probes);
	CHECK_EQ(count_udp_to(host6, host_mac), datagrams);
	fx_fini();
}

static void test_override_na_changes_mac_without_renewing(void)
{
	const uint64_t learned = SEC, changed = learned + 2 * SEC, expires = learned + AGEING;
	struct tally old_mac = { 0 }, new_mac = { 0 }, probes = { 0 }, asked = { 0 };

	fx_init();
	rxp_stack_neigh_set_ageing(&fx.st, AGEING);
	learn_host_by_answering_ns(learned);
	for (uint64_t t = learned + TICK; t <= expires + 5 * TICK; t += TICK) {
		clock_to(t);
		/* the host moved to a new NIC and says so: unsolicited, Override set */
		if (t == changed)
			na_from_host(all_nodes, all_nodes_mac, NA_OVERRIDE, host_new_mac,
				     host_new_mac);
		udp_to(host6);
	}
	for (unsigned i = 0; i < n_sent; i++) {
		if (is_udp_to(&sent[i], host6, host_mac))
			tally_add(&old_mac, &sent[i]);
		else if (is_udp_to(&sent[i], host6, host_new_mac))
			tally_add(&new_mac, &sent[i]);
		else if (is_ns_unicast(&sent[i], host6, host_new_mac))
			tally_add(&probes, &sent[i]);
		else if (is_ns_multicast(&sent[i], host6))
			tally_add(&asked, &sent[i]);
	}
	/* from the advert on, every datagram went to the new MAC */
	CHECK_EQ(old_mac.n, (changed - learned) / TICK - 1);
	CHECK(old_mac.last < changed);
	CHECK_EQ(new_mac.n, (expires - changed) / TICK);
	CHECK_EQ(new_mac.first, changed);
	CHECK(new_mac.last < expires);
	/* probed at the new MAC on the original schedule, and gone at learned + 10 s */
	CHECK_EQ(probes.n, RXP_NEIGH_PROBES);
	CHECK(probes.first >= expires - PROBE_WINDOW);
	CHECK(probes.last < expires);
	CHECK_EQ(asked.n, 1);
	CHECK_EQ(asked.first, expires);
	CHECK_EQ(count_ns_for(host6), probes.n + asked.n);
	fx_fini();
}

/* ---- unresolved entries ---- */

/*
 * A scan: datagrams to 2000 on-link addresses nobody answers for, all
 * between two timer runs. At most a quarter of the neighbour table starts
 * resolving (one multicast NS each); the rest is dropped as table full. A
 * host that then asks for our address is learned all the same, and traffic
 * to it goes straight to its MAC.
 */
static void test_unresolved_entries_capped_host_still_learned(void)
{
	const unsigned n_scan = 2000;
	uint8_t dst[16];
	unsigned cap, solicited = 0, answers = 0;

	fx_init();
	cap = fx.r->neigh.max_entries / 4;
	CHECK(cap < n_scan);
	clock_to(SEC);
	memcpy(dst, lan6, 16);
	dst[13] = 0x10;	/* 2001:db8:1::10:0 onward */
	for (unsigned i = 0; i < n_scan; i++) {
		dst[14] = (uint8_t)(i >> 8);
		dst[15] = (uint8_t)i;
		udp_to(dst);
	}
	/* one multicast NS per address that got an entry, nothing else */
	for (unsigned i = 0; i < n_sent; i++)
		solicited += is_icmp6(&sent[i], ND_NS) &&
			     is_ns_multicast(&sent[i], ip_of(&sent[i]) + RXP_IP6_HLEN + 8);
	CHECK_EQ(solicited, cap);
	CHECK_EQ(n_sent, solicited);
	CHECK_EQ(fx.st.stats.drops[RXP_DROP_NEIGH_TABLE_FULL], n_scan - cap);
	sent_free();

	/* still before the next timer run, the cap reached: the host asks for our address */
	ns_from_host(lan6);
	for (unsigned i = 0; i < n_sent; i++)
		answers += is_icmp6(&sent[i], ND_NA) && !memcmp(rxp_pkt_cdata(sent[i].pkt), host_mac, 6);
	CHECK_EQ(answers, 1);
	/* learned from its NS: traffic to it needs no NS of ours */
	udp_to(host6);
	CHECK_EQ(count_udp_to(host6, host_mac), 1);
	CHECK_EQ(count_ns_for(host6), 0);
	CHECK_EQ(fx.st.stats.drops[RXP_DROP_NEIGH_TABLE_FULL], n_scan - cap);
	fx_fini();
}

/*
 * Fills the neighbour table with learned entries on the LAN (2001:db8:1::2:0
 * onward), marked used by traffic or not.
 */
static void fill_table(bool used)
{
	struct rxp_neigh_table *t = &fx.r->neigh;
	uint8_t a[16];

	memcpy(a, lan6, 16);
	a[13] = 0x02;
	for (unsigned i = 0; t->n_entries < t->max_entries; i++) {
		struct rxp_neigh *n;

		a[14] = (uint8_t)(i >> 8);
		a[15] = (uint8_t)i;
		n = rxp_neigh_create(t, LAN, 6, a, RXP_NEIGH_REACHABLE);
		CHECK(n != NULL);
		if (!n)
			return;
		memcpy(n->mac, peer_mac, 6);
		n->used = used;
		n->deadline_ns = vnow + AGEING;
	}
}

/*
 * A table full of neighbours only heard from (a sweep): one that no
 * traffic used makes room, so a next hop traffic needs is still asked for.
 * A table full of neighbours in use has none to give: the packet is dropped.
 */
static void test_full_table_unused_entry_makes_room(void)
{
	for (int used = 0; used <= 1; used++) {
		fx_init();
		clock_to(SEC);
		fill_table(used);
		udp_to(host6);
		CHECK_EQ(count_ns_for(host6), used ? 0u : 1u);
		CHECK_EQ(fx.st.stats.drops[RXP_DROP_NEIGH_TABLE_FULL], used ? 1u : 0u);
		CHECK_EQ(fx.r->neigh.n_entries, fx.r->neigh.max_entries);
		fx_fini();
	}
}

/* ---- Router Advertisements ---- */

/*
 * Steps the clock from @from, one timer run per TICK, until an RA leaves
 * (at most @limit later); the host sends an RS at @rs_at, which may fall
 * between timer runs (0: none). Returns the RA's time, or 0.
 */
static uint64_t run_until_ra(uint64_t from, uint64_t limit, uint64_t rs_at)
{
	for (uint64_t t = from; t <= from + limit; t += TICK) {
		if (rs_at && rs_at > t - TICK && rs_at <= t) {
			clock_to(rs_at);	/* sets the time; the timers wait for t */
			rs_from_host();
		}
		clock_to(t);
		for (unsigned i = 0; i < n_sent; i++)
			if (is_ra(&sent[i]))
				return sent[i].t;
	}
	return 0;
}

/* Turns advertising on at 1 s; returns the time of the first RA. */
static uint64_t start_ra(void)
{
	uint64_t first;

	clock_to(SEC);
	rxp_stack_set_ra(&fx.st, LAN, true);
	first = run_until_ra(SEC + TICK, SEC, 0);
	CHECK(first != 0);
	sent_free();
	return first;
}

/*
 * An RS 1 s to 1.7 s after an RA: the answer waits for the 3 s spacing and
 * then a random delay (RFC 4861 6.2.6), so it leaves 3 s to 3.5 s after
 * that RA, and not always right at 3 s (as it would if the delay were
 * counted from the RS and then pushed to the spacing: at most 2.2 s).
 */
static void test_rs_soon_after_ra_waits_spacing_then_delay(void)
{
	unsigned at_spacing = 0, trials = 20;
	uint64_t last_ra;

	fx_init();
	last_ra = start_ra();
	for (unsigned k = 0; k < trials && last_ra; k++) {
		uint64_t rs_at = last_ra + SEC + k * 37 * MS, answer;

		answer = run_until_ra(last_ra + TICK, 2 * RA_SPACING, rs_at);
		CHECK(answer >= last_ra + RA_SPACING);
		CHECK(answer <= last_ra + RA_SPACING + RA_MAX_DELAY);
		CHECK_EQ(n_sent, 1);	/* the answer alone */
		CHECK(n_sent == 1 && ra_lifetime(&sent[0]) != 0);
		at_spacing += answer == last_ra + RA_SPACING;
		last_ra = answer;
		sent_free();
	}
	CHECK(at_spacing < trials);
	fx_fini();
}

/*
 * An RS more than 3 s after the last RA is answered within the random delay
 * of 0.5 s. (The RS comes at a timer run: one between runs may wait for the
 * next, up to a tick more.)
 */
static void test_rs_long_after_ra_answered_within_delay(void)
{
	uint64_t last_ra;

	fx_init();
	last_ra = start_ra();
	for (unsigned k = 0; k < 10 && last_ra; k++) {
		uint64_t rs_at = last_ra + RA_SPACING + SEC + k * TICK, answer;

		answer = run_until_ra(last_ra + TICK, 2 * RA_SPACING, rs_at);
		CHECK(answer >= rs_at);
		CHECK(answer <= rs_at + RA_MAX_DELAY);
		CHECK_EQ(n_sent, 1);
		last_ra = answer;
		sent_free();
	}
	fx_fini();
}

/*
 * Advertising off and on again within a second: the final RA (lifetime 0)
 * sent when it went off is the last one, and the next comes no sooner than
 * 3 s after it.
 */
static void test_ra_off_on_keeps_spacing_from_final_ra(void)
{
	uint64_t off_at, on_at, next;

	fx_init();
	off_at = start_ra() + 4 * TICK;
	on_at = off_at + 4 * TICK;
	clock_to(off_at);
	rxp_stack_set_ra(&fx.st, LAN, false);
	CHECK_EQ(n_sent, 1);
	CHECK(n_sent == 1 && is_ra(&sent[0]) && sent[0].t == off_at);
	CHECK(n_sent == 1 && ra_lifetime(&sent[0]) == 0);
	sent_free();
	clock_to(on_at);
	rxp_stack_set_ra(&fx.st, LAN, true);
	next = run_until_ra(on_at + TICK, 2 * RA_SPACING, 0);
	CHECK(next >= off_at + RA_SPACING);
	CHECK(next <= off_at + RA_SPACING + TICK);	/* and then at once */
	CHECK(n_sent == 1 && ra_lifetime(&sent[0]) != 0);
	fx_fini();
}

int main(void)
{
	RUN(test_unsolicited_na_does_not_renew_entry);
	RUN(test_solicited_na_answering_probe_renews_entry);
	RUN(test_override_na_changes_mac_without_renewing);
	RUN(test_unresolved_entries_capped_host_still_learned);
	RUN(test_full_table_unused_entry_makes_room);
	RUN(test_rs_soon_after_ra_waits_spacing_then_delay);
	RUN(test_rs_long_after_ra_answered_within_delay);
	RUN(test_ra_off_on_keeps_spacing_from_final_ra);
	return tests_done();
}
