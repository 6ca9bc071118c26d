/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the host path (src/net/host.h): GRO toward the host
 * and GSO from it. Frames go through the real stack (a router with the
 * port's addresses, local delivery, the host hook); a SOCK_SEQPACKET
 * socketpair stands in for the TAP (one frame with its vnet header per
 * message) and a test port captures what is transmitted.
 *
 * GRO: in-order segments merge (IPv4, IPv6) into one GSO frame whose bytes,
 * lengths and checksums are right; out-of-order, flags, a different flow, a
 * short segment, the 64-segment and 64 KiB limits, and a bad checksum stop
 * a merge; a bad segment goes to the kernel as it came; GRO off writes
 * every segment alone. GSO: a 64 KiB TCPv4 and a TCPv6 super-packet are cut
 * into MSS segments whose IP and TCP checksums verify and whose sequence
 * numbers, IP ids and flags are right; a partial checksum is completed;
 * malformed frames from the host are dropped and counted. Every buffer is
 * accounted for at the end of each case.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "rxpath/csum.h"
#include "net/host.h"
#include "rxpath/proto.h"
#include "rxpath/router.h"
#include "check.h"

#define MSG_MAX (70 * 1024)
#define CAPTURE_MAX 512

static const uint8_t port_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t peer_mac[6] = { 0x02, 0xee, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t our4[4] = { 10, 0, 1, 1 };
static const uint8_t peer4[4] = { 10, 0, 1, 2 };
static const uint8_t other4[4] = { 10, 0, 1, 3 };
static const uint8_t our6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 1 };
static const uint8_t peer6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 2 };

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* ---- a test port that keeps what the stack transmits ---- */

static struct rxp_pkt *captured[CAPTURE_MAX];
static unsigned n_captured;

static uint16_t cap_tx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	(void)q;
	for (uint16_t i = 0; i < n; i++) {
		CHECK(n_captured < CAPTURE_MAX);
		if (n_captured < CAPTURE_MAX)
			captured[n_captured++] = pkts[i];
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

/* ---- fixture: pool, stack, router with 10.0.1.1/24 and 2001:db8:1::1/64 on p0, host path ---- */

struct fx {
	struct rxp_pool *pool;
	struct rxp_pool_cache cache;
	struct rxp_stack st;
	struct rxp_router *r;
	struct rxp_port port;
	struct rxp_host *h;
	int peer;	/* the kernel's end of the "TAP" */
};

static void fx_init(struct fx *f, bool gro)
{
	struct rxp_pool_config cfg = { .n_bufs = 2048, .max_frame = 1518, .rx_offset = 2 };
	struct rxp_rx_tuning t = rxp_rx_tuning_default();
	char err[256];
	int sv[2];

	memset(f, 0, sizeof(*f));
	n_captured = 0;
	f->pool = rxp_pool_create(&cfg, err, sizeof(err));
	CHECK(f->pool != NULL);
	CHECK_EQ(rxp_pool_cache_init(&f->cache, f->pool, RXP_POOL_CACHE_MAX), 0);
	CHECK_EQ(rxp_stack_init(&f->st, &t, &f->cache), 0);
	f->port.ops = &cap_ops;
	f->port.pool = f->pool;
	f->port.n_queues = 1;
	f->port.queues[0].port = &f->port;
	f->port.queues[0].cache = &f->cache;
	CHECK_EQ(rxp_stack_add_port(&f->st, 0, port_mac, &f->port.queues[0]), 0);
	f->r = calloc(1, sizeof(*f->r));
	CHECK(f->r && rxp_router_init(f->r, 64, 64) == 0);
	CHECK_EQ(rxp_router_add_if(f->r, "p0", 0, 0, port_mac, 1500), 0);
	CHECK_EQ(rxp_router_add_addr(f->r, 0, 4, our4, 24), 0);
	CHECK_EQ(rxp_router_add_addr(f->r, 0, 6, our6, 64), 0);
	rxp_stack_set_router(&f->st, f->r);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	f->peer = sv[1];
	CHECK_EQ(rxp_host_open_fd(&f->h, 0, sv[0], gro), 0);
	CHECK_EQ(rxp_host_attach(&f->st, f->h), 0);
}

static void fx_fini(struct fx *f)
{
	struct rxp_pool_cache *caches[] = { &f->cache };

	for (unsigned i = 0; i < n_captured; i++)
		rxp_pool_free(&f->cache, captured[i]);
	n_captured = 0;
	rxp_host_close(&f->st, f->h);
	rxp_stack_close(&f->st);
	CHECK_EQ(rxp_pool_audit(f->pool, caches, 1), 0);
	rxp_pool_cache_close(&f->cache);
	CHECK_EQ(rxp_pool_destroy(f->pool), 0);
	rxp_router_free(f->r);
	free(f->r);
	close(f->peer);
}

/* ---- building TCP segments from the peer ---- */


struct seg {
	bool v6;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	uint16_t payload;
	bool timestamps;	/* 12 bytes of options: NOP NOP TS */
	uint32_t tsval;
	uint8_t ttl;
	bool bad_csum;
	const uint8_t *dst4;
	uint16_t ip_id;		/* IPv4 identification (0 by default: fixed, as DF allows) */
	bool no_df;		/* IPv4 without DF */
	bool ae;		/* AccECN's AE bit */
};

/* Payload byte at sequence number @seq: merged data can be checked by position. */
static uint8_t data_at(uint32_t seq)
{
	return (uint8_t)(seq * 7u + 3u);
}

static struct seg seg_default(bool v6, uint32_t seq, uint16_t payload)
{
	return (struct seg){ .v6 = v6, .sport = 40000, .dport = 5201, .seq = seq, .ack = 777,
			     .flags = 0x10, .win = 500, .payload = payload, .timestamps = true,
			     .tsval = 99, .ttl = 64, .dst4 = our4 };
}

static struct rxp_pkt *seg_frame(struct fx *f, const struct seg *s)
{
	struct rxp_pkt *pkt = rxp_pool_alloc(&f->cache);
	unsigned ip_hlen = s->v6 ? RXP_IP6_HLEN : RXP_IP4_HLEN, thl = s->timestamps ? 32u : 20u;
	unsigned tcp_len = thl + s->payload, len;
	uint8_t *d, *ip, *tcp;
	uint64_t sum;
	uint16_t c;

	CHECK(pkt != NULL);
	if (!pkt)
		return NULL;
	pkt->data_off = (uint16_t)f->pool->data_off;
	d = rxp_pkt_data(pkt);
	len = RXP_ETH_HLEN + ip_hlen + tcp_len;
	memset(d, 0, RXP_MAX(len, 60u));
	memcpy(d, port_mac, 6);
	memcpy(d + 6, peer_mac, 6);
	put16(d + 12, s->v6 ? RXP_ETHERTYPE_IP6 : RXP_ETHERTYPE_IP4);
	ip = d + RXP_ETH_HLEN;
	tcp = ip + ip_hlen;
	if (s->v6) {
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)tcp_len);
		ip[6] = RXP_IPPROTO_TCP;
		ip[7] = s->ttl;
		memcpy(ip + 8, peer6, 16);
		memcpy(ip + 24, our6, 16);
	} else {
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(ip_hlen + tcp_len));
		put16(ip + 4, s->ip_id);
		put16(ip + 6, s->no_df ? 0 : RXP_IP4_DF);
		ip[8] = s->ttl;
		ip[9] = RXP_IPPROTO_TCP;
		memcpy(ip + 12, peer4, 4);
		memcpy(ip + 16, s->dst4, 4);
		c = rxp_csum(ip, ip_hlen);
		memcpy(ip + 10, &c, 2);
	}
	put16(tcp, s->sport);
	put16(tcp + 2, s->dport);
	put32(tcp + 4, s->seq);
	put32(tcp + 8, s->ack);
	tcp[12] = (uint8_t)(thl / 4 << 4 | s->ae);
	tcp[13] = s->flags;
	put16(tcp + 14, s->win);
	if (s->timestamps) {
		tcp[20] = 1;
		tcp[21] = 1;
		tcp[22] = 8;
		tcp[23] = 10;
		put32(tcp + 24, s->tsval);
		put32(tcp + 28, 1);
	}
	for (unsigned i = 0; i < s->payload; i++)
		tcp[thl + i] = data_at(s->seq + i);
	sum = rxp_csum_pseudo_ip(ip, s->v6, RXP_IPPROTO_TCP, tcp_len);
	c = rxp_csum_fold(rxp_csum_partial(tcp, tcp_len, sum));
	if (s->bad_csum)
		c ^= 0x0101;
	memcpy(tcp + 16, &c, 2);
	pkt->len = (uint16_t)RXP_MAX(len, 60u);
	pkt->port = 0;
	pkt->queue = 0;
	return pkt;
}

/* Hands @n segments to the stack as one poll's vector. */
static void input(struct fx *f, struct seg *segs, unsigned n)
{
	struct rxp_pkt *pkts[RXP_BURST_MAX];

	for (unsigned i = 0; i < n; i++)
		pkts[i] = seg_frame(f, &segs[i]);
	rxp_stack_input_list(&f->st, pkts, (uint16_t)n);
}

/* ---- reading what the "kernel" got ---- */

struct got {
	struct rxp_vnet_hdr vh;
	uint8_t frame[MSG_MAX];
	uint32_t len;
	bool v6;
	uint8_t *ip, *tcp;
	uint32_t tcp_len, payload, thl;
};

/* Reads the next frame written to the TAP. Returns false when there is none. */
static bool next_frame(struct fx *f, struct got *g)
{
	struct iovec iov[2] = { { &g->vh, sizeof(g->vh) }, { g->frame, sizeof(g->frame) } };
	ssize_t n = readv(f->peer, iov, 2);

	if (n < (ssize_t)sizeof(g->vh))
		return false;
	g->len = (uint32_t)n - (uint32_t)sizeof(g->vh);
	g->v6 = get16(g->frame + 12) == RXP_ETHERTYPE_IP6;
	g->ip = g->frame + RXP_ETH_HLEN;
	g->tcp = g->ip + (g->v6 ? RXP_IP6_HLEN : RXP_IP4_HLEN);
	g->tcp_len = g->len - (uint32_t)(g->tcp - g->frame);
	g->thl = (g->tcp[12] >> 4) * 4u;
	g->payload = g->tcp_len - g->thl;
	return true;
}

static unsigned count_frames(struct fx *f)
{
	static struct got g;
	unsigned n = 0;

	while (next_frame(f, &g))
		n++;
	return n;
}

/* True when the TCP checksum of @tcp (@tcp_len bytes under @ip) verifies. */
static bool tcp_csum_ok(const uint8_t *ip, bool v6, const uint8_t *tcp, uint32_t tcp_len)
{
	return rxp_csum_fold(rxp_csum_partial(tcp, tcp_len, rxp_csum_pseudo_ip(ip, v6, RXP_IPPROTO_TCP, tcp_len))) == 0;
}

/*
 * Checks what the kernel would: lengths, IPv4 header checksum, and the TCP
 * checksum after completing the partial one as a NIC would. Checks the
 * payload against the sequence numbers.
 */
static void check_verified_frame(struct got *g, uint8_t gso_type, uint16_t mss, uint32_t seq,
				 uint32_t payload)
{
	uint16_t start = le16toh(g->vh.csum_start), off = le16toh(g->vh.csum_offset), c;

	CHECK_EQ(g->vh.flags, RXP_VNET_F_NEEDS_CSUM);
	CHECK_EQ(g->vh.gso_type, gso_type);
	CHECK_EQ(start, g->tcp - g->frame);
	CHECK_EQ(off, 16);
	if (gso_type != RXP_VNET_GSO_NONE) {
		CHECK_EQ(le16toh(g->vh.gso_size), mss);
		CHECK_EQ(le16toh(g->vh.hdr_len), (uint32_t)(g->tcp - g->frame) + g->thl);
	}
	if (g->v6) {
		CHECK_EQ(get16(g->ip + 4), g->tcp_len);
	} else {
		CHECK_EQ(get16(g->ip + 2), RXP_IP4_HLEN + g->tcp_len);
		CHECK_EQ(rxp_csum(g->ip, RXP_IP4_HLEN), 0);
	}
	CHECK_EQ(get32(g->tcp + 4), seq);
	CHECK_EQ(g->payload, payload);
	/* the field holds the pseudo-header sum: the full sum from csum_start finishes it */
	c = rxp_csum(g->frame + start, g->len - start);
	memcpy(g->frame + start + off, &c, 2);
	CHECK(tcp_csum_ok(g->ip, g->v6, g->tcp, g->tcp_len));
	for (uint32_t i = 0; i < g->payload && i < payload; i++)
		if (g->tcp[g->thl + i] != data_at(seq + i)) {
			CHECK(!"payload byte differs");
			break;
		}
}

/* ---- GRO ---- */

static void check_in_order_merge(bool v6)
{
	struct fx f;
	struct seg s[10];
	static struct got g;

	fx_init(&f, true);
	for (unsigned i = 0; i < 10; i++)
		s[i] = seg_default(v6, 1000 + i * 1000u, 1000);
	input(&f, s, 10);
	CHECK(next_frame(&f, &g));
	check_verified_frame(&g, v6 ? RXP_VNET_GSO_TCPV6 : RXP_VNET_GSO_TCPV4, 1000, 1000, 10000);
	CHECK(!next_frame(&f, &g));
	CHECK_EQ(f.h->stats.to_host_packets, 10);
	CHECK_EQ(f.h->stats.writes, 1);
	CHECK_EQ(f.h->stats.gro_super, 1);
	CHECK_EQ(f.h->stats.gro_merged, 9);
	CHECK_EQ(f.st.stats.delivered[v6 ? RXP_SINK_TCP6 : RXP_SINK_TCP4], 10);
	fx_fini(&f);
}

static void test_gro_merge_ip4(void)
{
	check_in_order_merge(false);
}

static void test_gro_merge_ip6(void)
{
	check_in_order_merge(true);
}

/* 0 1 3 2: [0 1] merged, then 3 and 2 alone, in that order. */
static void test_gro_out_of_order(void)
{
	struct fx f;
	struct seg s[4];
	static struct got g;
	const unsigned order[4] = { 0, 1, 3, 2 };

	fx_init(&f, true);
	for (unsigned i = 0; i < 4; i++)
		s[i] = seg_default(false, order[i] * 1000u, 1000);
	input(&f, s, 4);
	CHECK(next_frame(&f, &g));
	check_verified_frame(&g, RXP_VNET_GSO_TCPV4, 1000, 0, 2000);
	CHECK(next_frame(&f, &g));
	check_verified_frame(&g, RXP_VNET_GSO_NONE, 0, 3000, 1000);
	CHECK(next_frame(&f, &g));
	check_verified_frame(&g, RXP_VNET_GSO_NONE, 0, 2000, 1000);
	CHECK(!next_frame(&f, &g));
	CHECK_EQ(f.h->stats.gro_merged, 1);
	fx_fini(&f);
}

/* PSH ends a merge (and is on the super-packet); FIN, SYN, URG are never merged. */
static void test_gro_flags(void)
{
	struct fx f;
	struct seg s[6];
	static struct got g;

	fx_init(&f, true);
	for (unsigned i = 0; i < 6; i++)
		s[i] = seg_default(false, i * 100u, 100);
	s[1].flags |= 0x08;	/* PSH */
	s[3].flags |= 0x20;	/* URG */
	s[4].flags |= 0x01;	/* FIN */
	input(&f, s, 6);
	CHECK(next_frame(&f, &g));	/* 0 + 1(PSH) */
	check_verified_frame(&g, RXP_VNET_GSO_TCPV4, 100, 0, 200);
	CHECK(g.tcp[13] & 0x08);
	CHECK(next_frame(&f, &g));	/* 2: its flow is written before the URG segment */
	check_verified_frame(&g, RXP_VNET_GSO_NONE, 0, 200, 100);
	CHECK(next_frame(&f, &g));	/* 3 URG */
	check_verified_frame(&g, RXP_VNET_GSO_NONE, 0, 300, 100);
	CHECK(g.tcp[13] & 0x20);
	CHECK(next_frame(&f, &g));	/* 4 FIN */
	check_verified_frame(&g, RXP_VNET_GSO_NONE, 0, 400, 100);
	CHECK(next_frame(&f, &g));	/* 5 */
	check_verified_frame(&g, RXP_VNET_GSO_NONE, 0, 500, 100);
	CHECK(!next_frame(&f, &g));
	CHECK_EQ(f.h->stats.gro_super, 1);
	fx_fini(&f);
}

/*
 * Two flows interleaved merge each on its own; a different TTL, ACK,
 * timestamp, window, IPv4 ID sequence or AE bit does not merge.
 */
static void test_gro_flows(void)
{
	struct fx f;
	struct seg s[8];

	fx_init(&f, true);
	for (unsigned i = 0; i < 4; i++) {
		s[2 * i] = seg_default(false, 5000 + i * 500u, 500);
		s[2 * i + 1] = seg_default(false, 9000 + i * 500u, 500);
		s[2 * i + 1].sport = 40001;
	}
	input(&f, s, 8);
	CHECK_EQ(count_frames(&f), 2);
	CHECK_EQ(f.h->stats.gro_super, 2);
	CHECK_EQ(f.h->stats.gro_merged, 6);

	/* each pair differs in one thing the kernel's GRO compares: never merged */
	for (unsigned v = 0; v < 8; v++) {
		s[0] = seg_default(v == 4, 0, 500);
		s[1] = seg_default(v == 4, 500, 500);
		if (v == 0)
			s[1].ttl = 63;
		else if (v == 1)
			s[1].ack = 778;
		else if (v == 2)
			s[1].tsval = 100;
		else if (v == 3)
			s[1].win = 501;
		else if (v == 4)
			s[1].ttl = 1;	/* the IPv6 hop limit */
		else if (v == 5)
			s[1].ip_id = 500;	/* an ID neither fixed nor the next */
		else if (v == 6)
			s[0].no_df = s[1].no_df = true;	/* a fixed ID without DF */
		else
			s[1].ae = true;	/* AccECN's counter moved */
		input(&f, s, 2);
		CHECK_EQ(count_frames(&f), 2);
	}
	CHECK_EQ(f.h->stats.gro_super, 2);
	/* IDs one apart merge, with DF or without; a fixed run cannot turn into a counting one */
	for (unsigned i = 0; i < 3; i++) {
		s[i] = seg_default(false, i * 500u, 500);
		s[i].ip_id = (uint16_t)(0xffff + i);	/* wraps */
		s[i].no_df = true;
	}
	input(&f, s, 3);
	CHECK_EQ(count_frames(&f), 1);
	for (unsigned i = 0; i < 3; i++)
		s[i] = seg_default(false, i * 500u, 500);
	s[2].ip_id = 2;
	input(&f, s, 3);
	CHECK_EQ(count_frames(&f), 2);
	fx_fini(&f);
}

/* A short segment ends a merge; so do 64 segments, and 64 KiB. */
static void test_gro_limits(void)
{
	struct fx f;
	static struct seg s[RXP_BURST_MAX];
	static struct got g;
	unsigned n;

	fx_init(&f, true);
	s[0] = seg_default(false, 0, 1000);
	s[1] = seg_default(false, 1000, 500);
	s[2] = seg_default(false, 1500, 1000);
	input(&f, s, 3);
	CHECK(next_frame(&f, &g));
	check_verified_frame(&g, RXP_VNET_GSO_TCPV4, 1000, 0, 1500);
	CHECK(next_frame(&f, &g));
	check_verified_frame(&g, RXP_VNET_GSO_NONE, 0, 1500, 1000);

	/* 100 segments of 200 bytes: 64 + 36 */
	for (unsigned i = 0; i < 100; i++)
		s[i] = seg_default(false, i * 200u, 200);
	input(&f, s, 100);
	CHECK(next_frame(&f, &g));
	check_verified_frame(&g, RXP_VNET_GSO_TCPV4, 200, 0, 64 * 200);
	CHECK(next_frame(&f, &g));
	check_verified_frame(&g, RXP_VNET_GSO_TCPV4, 200, 64 * 200, 36 * 200);
	CHECK(!next_frame(&f, &g));

	/* 60 of 1400 bytes (and 32 of header): no more than 65535 bytes of IP each */
	for (unsigned i = 0; i < 60; i++)
		s[i] = seg_default(false, i * 1400u, 1400);
	input(&f, s, 60);
	n = (65535 - RXP_IP4_HLEN - 32) / 1400;
	CHECK(next_frame(&f, &g));
	check_verified_frame(&g, RXP_VNET_GSO_TCPV4, 1400, 0, n * 1400);
	CHECK(get16(g.ip + 2) <= 65535 && g.len - RXP_ETH_HLEN <= 65535);
	CHECK(next_frame(&f, &g));
	check_verified_frame(&g, RXP_VNET_GSO_TCPV4, 1400, n * 1400, (60 - n) * 1400);
	CHECK(!next_frame(&f, &g));
	fx_fini(&f);
}

/* A bad checksum: not merged, and handed over as it came (flags 0) for the kernel to drop. */
static void test_gro_bad_checksum(void)
{
	struct fx f;
	struct seg s[3];
	static struct got g;

	fx_init(&f, true);
	for (unsigned i = 0; i < 3; i++)
		s[i] = seg_default(false, i * 1000u, 1000);
	s[1].bad_csum = true;
	input(&f, s, 3);
	CHECK(next_frame(&f, &g));
	check_verified_frame(&g, RXP_VNET_GSO_NONE, 0, 0, 1000);
	CHECK(next_frame(&f, &g));
	CHECK_EQ(g.vh.flags, 0);
	CHECK_EQ(g.vh.gso_type, RXP_VNET_GSO_NONE);
	CHECK_EQ(get32(g.tcp + 4), 1000);
	CHECK(!tcp_csum_ok(g.ip, false, g.tcp, g.tcp_len));
	CHECK(next_frame(&f, &g));
	check_verified_frame(&g, RXP_VNET_GSO_NONE, 0, 2000, 1000);
	CHECK(!next_frame(&f, &g));
	CHECK_EQ(f.h->stats.csum_bad, 1);
	CHECK_EQ(f.h->stats.gro_merged, 0);
	fx_fini(&f);
}

/* GRO off: every segment alone, verified. */
static void test_gro_off(void)
{
	struct fx f;
	struct seg s[10];
	static struct got g;

	fx_init(&f, false);
	for (unsigned v6 = 0; v6 < 2; v6++) {
		for (unsigned i = 0; i < 10; i++)
			s[i] = seg_default(v6, i * 1000u, 1000);
		input(&f, s, 10);
		for (unsigned i = 0; i < 10; i++) {
			CHECK(next_frame(&f, &g));
			check_verified_frame(&g, RXP_VNET_GSO_NONE, 0, i * 1000u, 1000);
		}
		CHECK(!next_frame(&f, &g));
	}
	CHECK_EQ(f.h->stats.writes, 20);
	CHECK_EQ(f.h->stats.gro_merged, 0);
	fx_fini(&f);
}

/* Not for us: routed (nowhere here), not handed to the host. Pure ACKs alone. */
static void test_gro_only_ours(void)
{
	struct fx f;
	struct seg s[3];

	fx_init(&f, true);
	s[0] = seg_default(false, 0, 1000);
	s[0].dst4 = other4;
	s[1] = seg_default(false, 0, 0);
	s[2] = seg_default(false, 0, 0);
	input(&f, s, 3);
	CHECK_EQ(count_frames(&f), 2);
	CHECK_EQ(f.h->stats.to_host_packets, 2);
	fx_fini(&f);
}

/* ---- GSO ---- */

/* Writes a frame from the "kernel" and lets the host path read and send it. */
static void from_host(struct fx *f, const struct rxp_vnet_hdr *vh, const uint8_t *frame,
		      uint32_t len)
{
	struct iovec iov[2] = { { (void *)vh, sizeof(*vh) }, { (void *)frame, len } };

	CHECK(writev(f->peer, iov, 2) == (ssize_t)(sizeof(*vh) + len));
	CHECK_EQ(rxp_host_poll(&f->st, f->h, 64), 1);
	rxp_stack_flush(&f->st);
}

/* A super-packet as the kernel makes it: full lengths, partial checksum, @payload bytes. */
static uint32_t build_tso(uint8_t *d, bool v6, uint32_t payload, uint8_t flags, uint16_t mss,
			  struct rxp_vnet_hdr *vh)
{
	unsigned ip_hlen = v6 ? RXP_IP6_HLEN : RXP_IP4_HLEN, thl = 32;
	uint32_t tcp_len = thl + payload, len = RXP_ETH_HLEN + ip_hlen + tcp_len;
	uint8_t *ip = d + RXP_ETH_HLEN, *tcp = ip + ip_hlen;
	uint16_t c;

	memset(d, 0, RXP_ETH_HLEN + ip_hlen + thl);
	memcpy(d, peer_mac, 6);
	memcpy(d + 6, port_mac, 6);
	put16(d + 12, v6 ? RXP_ETHERTYPE_IP6 : RXP_ETHERTYPE_IP4);
	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)tcp_len);
		ip[6] = RXP_IPPROTO_TCP;
		ip[7] = 64;
		memcpy(ip + 8, our6, 16);
		memcpy(ip + 24, peer6, 16);
	} else {
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(ip_hlen + tcp_len));
		put16(ip + 4, 0xfff0);	/* the ids wrap around during the cut */
		put16(ip + 6, RXP_IP4_DF);
		ip[8] = 64;
		ip[9] = RXP_IPPROTO_TCP;
		memcpy(ip + 12, our4, 4);
		memcpy(ip + 16, peer4, 4);
		c = rxp_csum(ip, ip_hlen);
		memcpy(ip + 10, &c, 2);
	}
	put16(tcp, 5201);
	put16(tcp + 2, 40000);
	put32(tcp + 4, 0xfffff000u);	/* the sequence wraps too */
	put32(tcp + 8, 4242);
	tcp[12] = (uint8_t)(thl / 4 << 4);
	tcp[13] = flags;
	put16(tcp + 14, 1000);
	tcp[20] = 1;
	tcp[21] = 1;
	tcp[22] = 8;
	tcp[23] = 10;
	for (uint32_t i = 0; i < payload; i++)
		tcp[thl + i] = data_at(0xfffff000u + i);
	c = (uint16_t)~rxp_csum_fold(rxp_csum_pseudo_ip(ip, v6, RXP_IPPROTO_TCP, tcp_len));
	memcpy(tcp + 16, &c, 2);
	memset(vh, 0, sizeof(*vh));
	vh->flags = RXP_VNET_F_NEEDS_CSUM;
	vh->gso_type = (v6 ? RXP_VNET_GSO_TCPV6 : RXP_VNET_GSO_TCPV4) | RXP_VNET_GSO_ECN;
	vh->gso_size = htole16(mss);
	vh->hdr_len = htole16((uint16_t)(RXP_ETH_HLEN + ip_hlen + thl));
	vh->csum_start = htole16((uint16_t)(RXP_ETH_HLEN + ip_hlen));
	vh->csum_offset = htole16(16);
	return len;
}

static void check_tso(bool v6)
{
	static uint8_t frame[MSG_MAX];
	const uint16_t mss = v6 ? 1428 : 1448;	/* MTU 1500 less IP and TCP with timestamps */
	const uint32_t payload = 65535 - (v6 ? 0 : RXP_IP4_HLEN) - 32 - (v6 ? 40 : 0);
	uint32_t n_segs = (payload + mss - 1) / mss, len;
	struct rxp_vnet_hdr vh;
	struct fx f;

	fx_init(&f, true);
	len = build_tso(frame, v6, payload, 0x10 | 0x08 | 0x01 | 0x80, mss, &vh);	/* ACK PSH FIN CWR */
	from_host(&f, &vh, frame, len);
	CHECK_EQ(n_captured, n_segs);
	CHECK_EQ(f.h->stats.bad_frames, 0);
	CHECK_EQ(f.h->stats.read_errors, 0);
	CHECK_EQ(f.h->stats.gso_frames, 1);
	CHECK_EQ(f.h->stats.gso_segments, n_segs);
	CHECK_EQ(f.h->stats.from_host_packets, n_segs);
	CHECK_EQ(f.st.stats.local_out, n_segs);
	for (uint32_t i = 0; i < n_captured && i < n_segs; i++) {
		const uint8_t *d = rxp_pkt_cdata(captured[i]);
		const uint8_t *ip = d + RXP_ETH_HLEN, *tcp = ip + (v6 ? RXP_IP6_HLEN : RXP_IP4_HLEN);
		uint32_t chunk = RXP_MIN((uint32_t)mss, payload - i * mss), tcp_len = 32 + chunk;
		uint32_t seq = 0xfffff000u + i * mss;
		bool last = i + 1 == n_segs;

		CHECK_EQ(captured[i]->len, (uint32_t)(tcp - d) + tcp_len);
		CHECK(!memcmp(d, frame, RXP_ETH_HLEN));
		if (v6) {
			CHECK_EQ(get16(ip + 4), tcp_len);
		} else {
			CHECK_EQ(get16(ip + 2), RXP_IP4_HLEN + tcp_len);
			CHECK_EQ(get16(ip + 4), (uint16_t)(0xfff0 + i));
			CHECK_EQ(rxp_csum(ip, RXP_IP4_HLEN), 0);
		}
		CHECK_EQ(get32(tcp + 4), seq);
		CHECK_EQ(get32(tcp + 8), 4242);
		CHECK_EQ(tcp[13] & 0x10, 0x10);
		CHECK_EQ(!!(tcp[13] & 0x08), last);
		CHECK_EQ(!!(tcp[13] & 0x01), last);
		CHECK_EQ(!!(tcp[13] & 0x80), i == 0);
		CHECK(tcp_csum_ok(ip, v6, tcp, tcp_len));
		for (uint32_t b = 0; b < chunk; b++)
			if (tcp[32 + b] != data_at(seq + b)) {
				CHECK(!"segment payload differs");
				break;
			}
	}
	fx_fini(&f);
}

static void test_gso_tcp4_64k(void)
{
	check_tso(false);
}

static void test_gso_tcp6_64k(void)
{
	check_tso(true);
}

/* A frame that is not GSO with a partial UDP checksum: completed, sent as it is. */
static void test_gso_partial_checksum(void)
{
	static uint8_t frame[256];
	struct rxp_vnet_hdr vh = { .flags = RXP_VNET_F_NEEDS_CSUM };
	uint8_t *ip = frame + RXP_ETH_HLEN, *udp = ip + RXP_IP4_HLEN;
	uint32_t len = RXP_ETH_HLEN + RXP_IP4_HLEN + 8 + 100;
	struct fx f;
	uint32_t s, d;
	uint16_t c;

	fx_init(&f, true);
	memcpy(frame, peer_mac, 6);
	memcpy(frame + 6, port_mac, 6);
	put16(frame + 12, RXP_ETHERTYPE_IP4);
	ip[0] = 0x45;
	put16(ip + 2, RXP_IP4_HLEN + 108);
	ip[8] = 64;
	ip[9] = RXP_IPPROTO_UDP;
	memcpy(ip + 12, our4, 4);
	memcpy(ip + 16, peer4, 4);
	c = rxp_csum(ip, RXP_IP4_HLEN);
	memcpy(ip + 10, &c, 2);
	put16(udp, 53);
	put16(udp + 2, 5353);
	put16(udp + 4, 108);
	for (unsigned i = 0; i < 100; i++)
		udp[8 + i] = (uint8_t)i;
	memcpy(&s, ip + 12, 4);
	memcpy(&d, ip + 16, 4);
	c = (uint16_t)~rxp_csum_fold(rxp_csum_pseudo4(s, d, RXP_IPPROTO_UDP, 108));
	memcpy(udp + 6, &c, 2);
	vh.csum_start = htole16(RXP_ETH_HLEN + RXP_IP4_HLEN);
	vh.csum_offset = htole16(6);
	from_host(&f, &vh, frame, len);
	CHECK_EQ(n_captured, 1);
	if (n_captured == 1) {
		const uint8_t *o = rxp_pkt_cdata(captured[0]);

		CHECK_EQ(captured[0]->len, len);
		CHECK_EQ(rxp_csum_fold(rxp_csum_partial(o + 34, 108,
							 rxp_csum_pseudo4(s, d, RXP_IPPROTO_UDP, 108))), 0);
	}
	CHECK_EQ(f.h->stats.csum_completed, 1);
	fx_fini(&f);
}

/* Hostile frames from the host: dropped, counted, nothing sent and no buffer lost. */
static void test_gso_malformed(void)
{
	static uint8_t frame[MSG_MAX];
	struct rxp_vnet_hdr vh;
	struct fx f;
	uint32_t len;
	unsigned bad = 0;

	fx_init(&f, true);
	len = build_tso(frame, false, 5000, 0x10, 1000, &vh);
	vh.gso_size = 0;				/* no MSS */
	from_host(&f, &vh, frame, len);
	bad++;
	len = build_tso(frame, false, 5000, 0x10, 1000, &vh);
	vh.gso_size = htole16(1600);			/* segments longer than a frame */
	from_host(&f, &vh, frame, len);
	bad++;
	len = build_tso(frame, false, 5000, 0x10, 1000, &vh);
	from_host(&f, &vh, frame, RXP_ETH_HLEN + 30);	/* cut inside the TCP header */
	bad++;
	len = build_tso(frame, false, 5000, 0x10, 1000, &vh);
	frame[RXP_ETH_HLEN + RXP_IP4_HLEN + 12] = 0xf0;	/* TCP header of 60 bytes, past the frame */
	from_host(&f, &vh, frame, RXP_ETH_HLEN + RXP_IP4_HLEN + 40);
	bad++;
	len = build_tso(frame, true, 5000, 0x10, 1000, &vh);
	vh.gso_type = RXP_VNET_GSO_TCPV4;		/* says IPv4, carries IPv6 */
	from_host(&f, &vh, frame, len);
	bad++;
	len = build_tso(frame, false, 5000, 0x10, 1000, &vh);
	vh.gso_type = RXP_VNET_GSO_UDP_L4;		/* never offered */
	from_host(&f, &vh, frame, len);
	bad++;
	memset(&vh, 0, sizeof(vh));
	vh.flags = RXP_VNET_F_NEEDS_CSUM;
	vh.csum_start = htole16(100);
	vh.csum_offset = htole16(60);			/* past the frame */
	from_host(&f, &vh, frame, 120);
	bad++;
	memset(&vh, 0, sizeof(vh));
	from_host(&f, &vh, frame, 10);			/* shorter than Ethernet */
	bad++;
	memset(&vh, 0, sizeof(vh));
	from_host(&f, &vh, frame, 2000);		/* longer than the largest frame */
	bad++;
	CHECK_EQ(f.h->stats.bad_frames, bad);
	CHECK_EQ(n_captured, 0);
	CHECK_EQ(f.h->stats.from_host_frames, bad);
	fx_fini(&f);
}

/* ARP: a reply to us is copied to the host; a request is answered, not copied. */
static void test_arp_reply_copied(void)
{
	struct fx f;
	struct rxp_pkt *pkt[2];
	static struct got g;

	fx_init(&f, true);
	for (unsigned i = 0; i < 2; i++) {
		uint8_t *d, *a;

		pkt[i] = rxp_pool_alloc(&f.cache);
		pkt[i]->data_off = (uint16_t)f.pool->data_off;
		d = rxp_pkt_data(pkt[i]);
		memset(d, 0, 60);
		memcpy(d, i ? port_mac : (const uint8_t[]){ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, 6);
		memcpy(d + 6, peer_mac, 6);
		put16(d + 12, RXP_ETHERTYPE_ARP);
		a = d + RXP_ETH_HLEN;
		put16(a, 1);
		put16(a + 2, RXP_ETHERTYPE_IP4);
		a[4] = 6;
		a[5] = 4;
		put16(a + 6, i ? 2 : 1);
		memcpy(a + 8, peer_mac, 6);
		memcpy(a + 14, peer4, 4);
		memcpy(a + 18, i ? port_mac : (const uint8_t[6]){ 0 }, 6);
		memcpy(a + 24, our4, 4);
		pkt[i]->len = 60;
		pkt[i]->port = 0;
	}
	rxp_stack_input_list(&f.st, pkt, 2);
	CHECK(next_frame(&f, &g));
	CHECK_EQ(get16(g.frame + 12), RXP_ETHERTYPE_ARP);
	CHECK_EQ(get16(g.frame + RXP_ETH_HLEN + 6), 2);
	CHECK(!next_frame(&f, &g));
	CHECK_EQ(n_captured, 1);	/* the answer to the request */
	fx_fini(&f);
}

int main(void)
{
	RUN(test_gro_merge_ip4);
	RUN(test_gro_merge_ip6);
	RUN(test_gro_out_of_order);
	RUN(test_gro_flags);
	RUN(test_gro_flows);
	RUN(test_gro_limits);
	RUN(test_gro_bad_checksum);
	RUN(test_gro_off);
	RUN(test_gro_only_ours);
	RUN(test_gso_tcp4_64k);
	RUN(test_gso_tcp6_64k);
	RUN(test_gso_partial_checksum);
	RUN(test_gso_malformed);
	RUN(test_arp_reply_copied);
	return tests_done();
}
