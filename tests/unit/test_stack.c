/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the receive stack (include/rxpath/stack.h): every drop
 * reason hit by a hand-built frame in both handoff modes, delivery by sink
 * class, padding, IPv4 options and fragments, copy mode and copybreak,
 * conservation of packets and buffers, the generator's malformed frames,
 * the poll budget; and the Internet checksum helpers (include/rxpath/csum.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "rxpath/csum.h"
#include "rxpath/port.h"
#include "rxpath/proto.h"
#include "port/sim.h"
#include "rxpath/stack.h"
#include "check.h"

#define ERR_LEN 256
#define FRAME_MAX 1536

static const uint8_t port_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };	/* sim port id 0 */
static const uint8_t peer_mac[6] = { 0x02, 0xee, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t mcast_mac[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
static const uint8_t other_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x99 };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* ---- frame builders ---- */

struct frame {
	uint8_t b[FRAME_MAX];
	uint16_t len;
};

static void eth(struct frame *f, const uint8_t *dst, uint16_t type)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->b, dst, 6);
	memcpy(f->b + 6, peer_mac, 6);
	put16(f->b + 12, type);
	f->len = RXP_ETH_HLEN;
}

/* Writes the transport header (UDP length or TCP data offset as given) and a payload. */
static void l4(uint8_t *p, uint8_t proto, uint16_t l4_len)
{
	for (uint16_t i = 0; i < l4_len; i++)
		p[i] = (uint8_t)(0xa0 + i);
	if (proto == RXP_IPPROTO_UDP && l4_len >= RXP_UDP_HLEN) {
		put16(p, 1234);
		put16(p + 2, 9);
		put16(p + 4, l4_len);
		put16(p + 6, 0);
	} else if (proto == RXP_IPPROTO_TCP && l4_len >= RXP_TCP_HLEN) {
		put16(p, 1234);
		put16(p + 2, 5201);
		p[12] = 5 << 4;
		p[13] = 0x10;
	}
}

static void ip4_fix_csum(struct frame *f)
{
	uint8_t *ip = f->b + RXP_ETH_HLEN;
	unsigned ihl = (ip[0] & 15) * 4u;
	uint16_t c;

	ip[10] = ip[11] = 0;
	c = rxp_csum(ip, ihl);
	memcpy(ip + 10, &c, 2);
}

/* IPv4 to @dst with @opt_words of options and @l4_len bytes of transport, padded to 60. */
static void ip4(struct frame *f, const uint8_t *dst, uint8_t proto, uint16_t l4_len,
		unsigned opt_words)
{
	uint8_t *ip;
	unsigned ihl = RXP_IP4_HLEN + opt_words * 4;

	eth(f, dst, RXP_ETHERTYPE_IP4);
	ip = f->b + RXP_ETH_HLEN;
	ip[0] = (uint8_t)(0x40 | (ihl / 4));
	put16(ip + 2, (uint16_t)(ihl + l4_len));
	put16(ip + 4, 0x1234);
	put16(ip + 6, RXP_IP4_DF);
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, (const uint8_t[]){ 198, 18, 0, 1 }, 4);
	memcpy(ip + 16, (const uint8_t[]){ 198, 19, 0, 1 }, 4);
	for (unsigned i = 0; i < opt_words * 4; i++)
		ip[RXP_IP4_HLEN + i] = 1;	/* NOP */
	l4(ip + ihl, proto, l4_len);
	f->len = (uint16_t)RXP_MAX(RXP_ETH_HLEN + ihl + l4_len, (unsigned)RXP_ETH_ZLEN);
	ip4_fix_csum(f);
}

static void ip6(struct frame *f, const uint8_t *dst, uint8_t next_hdr, uint16_t l4_len)
{
	uint8_t *ip;

	eth(f, dst, RXP_ETHERTYPE_IP6);
	ip = f->b + RXP_ETH_HLEN;
	ip[0] = 0x60;
	put16(ip + 4, l4_len);
	ip[6] = next_hdr;
	ip[7] = 64;
	inet_pton(AF_INET6, "2001:db8:1::1", ip + 8);
	inet_pton(AF_INET6, "2001:db8:2::1", ip + 24);
	l4(ip + RXP_IP6_HLEN, next_hdr, l4_len);
	f->len = (uint16_t)RXP_MAX((unsigned)(RXP_ETH_HLEN + RXP_IP6_HLEN + l4_len), (unsigned)RXP_ETH_ZLEN);
}

#define IP4(f) ((f)->b + RXP_ETH_HLEN)
#define L4_4(f) ((f)->b + RXP_ETH_HLEN + RXP_IP4_HLEN)
#define L4_6(f) ((f)->b + RXP_ETH_HLEN + RXP_IP6_HLEN)

/* ---- the malformed frames: at least one per drop reason ---- */

struct bad_case {
	const char *what;
	enum rxp_drop_reason reason;
	struct frame f;
};

static unsigned build_bad_cases(struct bad_case *c)
{
	unsigned n = 0;

#define ADD(desc, r) (c[n].what = (desc), c[n].reason = (r), &c[n++].f)
	struct frame *f;

	f = ADD("runt of 13 bytes", RXP_DROP_ETH_TRUNCATED);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 8, 0);
	f->len = 13;
	f = ADD("empty frame", RXP_DROP_ETH_TRUNCATED);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 8, 0);
	f->len = 0;

	f = ADD("unicast to another MAC", RXP_DROP_NOT_FOR_US);
	ip4(f, other_mac, RXP_IPPROTO_UDP, 26, 0);
	f = ADD("unicast differing in the first byte", RXP_DROP_NOT_FOR_US);
	ip4(f, (const uint8_t[]){ 0x04, 0, 0, 0, 0, 1 }, RXP_IPPROTO_UDP, 26, 0);

	f = ADD("from a multicast source MAC", RXP_DROP_ETH_GROUP_SRC);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	f->b[6] |= 1;
	f = ADD("broadcast from the broadcast MAC", RXP_DROP_ETH_GROUP_SRC);
	ip4(f, (const uint8_t[]){ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, RXP_IPPROTO_UDP, 26, 0);
	memset(f->b + 6, 0xff, 6);

	f = ADD("EtherType 0x88b5", RXP_DROP_ETHERTYPE);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	put16(f->b + 12, 0x88b5);
	f = ADD("802.3 length field", RXP_DROP_ETHERTYPE);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	put16(f->b + 12, 46);

	f = ADD("802.1Q tag", RXP_DROP_VLAN_UNKNOWN);
	eth(f, port_mac, RXP_ETHERTYPE_VLAN);
	put16(f->b + 14, 100);
	put16(f->b + 16, RXP_ETHERTYPE_IP4);
	f->len = 64;
	f = ADD("802.1ad tag", RXP_DROP_VLAN_UNKNOWN);
	eth(f, port_mac, RXP_ETHERTYPE_QINQ);
	put16(f->b + 14, 100);
	put16(f->b + 16, RXP_ETHERTYPE_VLAN);
	f->len = 64;

	f = ADD("19 bytes of IPv4", RXP_DROP_IP4_TRUNCATED);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 8, 0);
	f->len = RXP_ETH_HLEN + 19;
	f = ADD("IPv4 EtherType, nothing after", RXP_DROP_IP4_TRUNCATED);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 8, 0);
	f->len = RXP_ETH_HLEN;

	f = ADD("IPv4 EtherType, version 6", RXP_DROP_IP4_VERSION);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	IP4(f)[0] = 0x65;
	ip4_fix_csum(f);
	f = ADD("IPv4 version 0", RXP_DROP_IP4_VERSION);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	IP4(f)[0] = 0x05;

	f = ADD("IHL 4", RXP_DROP_IP4_IHL);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	IP4(f)[0] = 0x44;
	f = ADD("IHL 0", RXP_DROP_IP4_IHL);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	IP4(f)[0] = 0x40;
	f = ADD("IHL 15 in a 60-byte frame", RXP_DROP_IP4_IHL);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	IP4(f)[0] = 0x4f;

	f = ADD("checksum off by one bit", RXP_DROP_IP4_CSUM);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	IP4(f)[11] ^= 1;
	f = ADD("TTL changed, checksum not updated", RXP_DROP_IP4_CSUM);
	ip4(f, port_mac, RXP_IPPROTO_TCP, 26, 0);
	IP4(f)[8]--;
	f = ADD("option byte changed, checksum not updated", RXP_DROP_IP4_CSUM);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 8, 1);
	IP4(f)[RXP_IP4_HLEN] = 0;

	f = ADD("total length past the frame", RXP_DROP_IP4_LEN);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	put16(IP4(f) + 2, 47);
	ip4_fix_csum(f);
	f = ADD("total length below the header", RXP_DROP_IP4_LEN);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	put16(IP4(f) + 2, 19);
	ip4_fix_csum(f);
	f = ADD("total length below the header with options", RXP_DROP_IP4_LEN);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 8, 2);
	put16(IP4(f) + 2, 24);
	ip4_fix_csum(f);

	f = ADD("39 bytes of IPv6", RXP_DROP_IP6_TRUNCATED);
	ip6(f, port_mac, RXP_IPPROTO_UDP, 8);
	f->len = RXP_ETH_HLEN + 39;

	f = ADD("IPv6 EtherType, version 4", RXP_DROP_IP6_VERSION);
	ip6(f, port_mac, RXP_IPPROTO_UDP, 8);
	L4_6(f)[-40] = 0x45;

	f = ADD("IPv6 payload length past the frame", RXP_DROP_IP6_LEN);
	ip6(f, port_mac, RXP_IPPROTO_UDP, 20);
	put16(IP4(f) + 4, 21);

	f = ADD("IPv4 UDP with 7 bytes of transport", RXP_DROP_L4_TRUNCATED);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 7, 0);
	f = ADD("IPv4 TCP with 19 bytes of transport", RXP_DROP_L4_TRUNCATED);
	ip4(f, port_mac, RXP_IPPROTO_TCP, 19, 0);
	f = ADD("IPv6 TCP with 10 bytes of transport", RXP_DROP_L4_TRUNCATED);
	ip6(f, port_mac, RXP_IPPROTO_TCP, 10);
	f = ADD("IPv6 UDP with no transport", RXP_DROP_L4_TRUNCATED);
	ip6(f, port_mac, RXP_IPPROTO_UDP, 0);

	f = ADD("UDP length 7", RXP_DROP_UDP_LEN);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	put16(L4_4(f) + 4, 7);
	f = ADD("UDP length past the IP payload", RXP_DROP_UDP_LEN);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	put16(L4_4(f) + 4, 27);
	f = ADD("UDP length covering the Ethernet padding", RXP_DROP_UDP_LEN);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 8, 0);	/* 28-byte packet in a 60-byte frame */
	put16(L4_4(f) + 4, 60 - 14 - 20);
	f = ADD("IPv6 UDP length 0", RXP_DROP_UDP_LEN);
	ip6(f, port_mac, RXP_IPPROTO_UDP, 16);
	put16(L4_6(f) + 4, 0);

	f = ADD("TCP data offset 4", RXP_DROP_TCP_OFFSET);
	ip4(f, port_mac, RXP_IPPROTO_TCP, 26, 0);
	L4_4(f)[12] = 4 << 4;
	f = ADD("TCP data offset 15 in 26 bytes", RXP_DROP_TCP_OFFSET);
	ip4(f, port_mac, RXP_IPPROTO_TCP, 26, 0);
	L4_4(f)[12] = 15 << 4;
	f = ADD("IPv6 TCP data offset 6 in 20 bytes", RXP_DROP_TCP_OFFSET);
	ip6(f, port_mac, RXP_IPPROTO_TCP, 20);
	L4_6(f)[12] = 6 << 4;
#undef ADD
	return n;
}

/* ---- frames that must be delivered ---- */

struct good_case {
	const char *what;
	enum rxp_sink_class cls;
	uint16_t l3_len;
	uint16_t l4_off;
	struct frame f;
};

static unsigned build_good_cases(struct good_case *c)
{
	unsigned n = 0;

#define ADD(desc, k, l3, l4o) \
	(c[n].what = (desc), c[n].cls = (k), c[n].l3_len = (l3), c[n].l4_off = (l4o), &c[n++].f)
	struct frame *f;

	f = ADD("UDP over IPv4", RXP_SINK_UDP4, 46, 34);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	f = ADD("TCP over IPv4", RXP_SINK_TCP4, 60, 34);
	ip4(f, port_mac, RXP_IPPROTO_TCP, 40, 0);
	f = ADD("UDP over IPv6", RXP_SINK_UDP6, 48, 54);
	ip6(f, port_mac, RXP_IPPROTO_UDP, 8);
	f = ADD("TCP over IPv6", RXP_SINK_TCP6, 100, 54);
	ip6(f, port_mac, RXP_IPPROTO_TCP, 60);
	f = ADD("TCP with options (data offset 8)", RXP_SINK_TCP4, 60, 34);
	ip4(f, port_mac, RXP_IPPROTO_TCP, 40, 0);
	L4_4(f)[12] = 8 << 4;
	f = ADD("TCP data offset 15 with 60 bytes", RXP_SINK_TCP6, 100, 54);
	ip6(f, port_mac, RXP_IPPROTO_TCP, 60);
	L4_6(f)[12] = 15 << 4;
	f = ADD("broadcast", RXP_SINK_UDP4, 46, 34);
	ip4(f, bcast_mac, RXP_IPPROTO_UDP, 26, 0);
	f = ADD("IPv4 multicast MAC", RXP_SINK_UDP4, 46, 34);
	ip4(f, mcast_mac, RXP_IPPROTO_UDP, 26, 0);
	f = ADD("IPv6 multicast MAC", RXP_SINK_UDP6, 48, 54);
	ip6(f, (const uint8_t[]){ 0x33, 0x33, 0, 0, 0, 1 }, RXP_IPPROTO_UDP, 8);
	f = ADD("28-byte IPv4/UDP in a padded 60-byte frame", RXP_SINK_UDP4, 28, 34);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 8, 0);
	f = ADD("IPv6 with trailing padding", RXP_SINK_UDP6, 48, 54);
	ip6(f, port_mac, RXP_IPPROTO_UDP, 8);
	f->len = 80;
	f = ADD("IPv4 options: IHL 6", RXP_SINK_UDP4, 24 + 26, 14 + 24);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 1);
	f = ADD("IPv4 options: IHL 15", RXP_SINK_TCP4, 60 + 20, 14 + 60);
	ip4(f, port_mac, RXP_IPPROTO_TCP, 20, 10);
	f = ADD("non-first fragment", RXP_SINK_OTHER4, 46, 34);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	put16(IP4(f) + 6, 185);	/* offset 1480 bytes */
	ip4_fix_csum(f);
	f = ADD("non-first fragment, too short for a UDP header", RXP_SINK_OTHER4, 24, 34);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 4, 0);
	put16(IP4(f) + 6, RXP_IP4_MF | 3);
	ip4_fix_csum(f);
	f = ADD("last fragment of a TCP segment", RXP_SINK_OTHER4, 30, 34);
	ip4(f, port_mac, RXP_IPPROTO_TCP, 10, 0);
	put16(IP4(f) + 6, 1);
	ip4_fix_csum(f);
	f = ADD("ICMP over IPv4", RXP_SINK_OTHER4, 28, 34);
	ip4(f, port_mac, RXP_IPPROTO_ICMP, 8, 0);
	f = ADD("ICMPv6", RXP_SINK_OTHER6, 48, 54);
	ip6(f, port_mac, RXP_IPPROTO_ICMP6, 8);
	f = ADD("UDP length shorter than the IP payload", RXP_SINK_UDP4, 46, 34);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 26, 0);
	put16(L4_4(f) + 4, 8);
	f = ADD("IPv4 total length 1500 in a 1514-byte frame", RXP_SINK_UDP4, 1500, 34);
	ip4(f, port_mac, RXP_IPPROTO_UDP, 1480, 0);
	f = ADD("IPv6 payload length 1460 in a 1514-byte frame", RXP_SINK_TCP6, 1500, 54);
	ip6(f, port_mac, RXP_IPPROTO_TCP, 1460);
#undef ADD
	return n;
}

/* ---- fixtures ---- */

struct fx {
	struct rxp_pool *pool;
	struct rxp_pool_cache cache;
	struct rxp_stack st;
};

static void fx_init(struct fx *f, uint32_t n_bufs, const struct rxp_rx_tuning *tuning)
{
	struct rxp_pool_config cfg = { .n_bufs = n_bufs, .max_frame = 1518, .rx_offset = 2 };
	struct rxp_rx_tuning t = tuning ? *tuning : rxp_rx_tuning_default();
	char err[ERR_LEN];

	memset(f, 0, sizeof(*f));
	f->pool = rxp_pool_create(&cfg, err, sizeof(err));
	CHECK(f->pool != NULL);
	CHECK_EQ(rxp_pool_cache_init(&f->cache, f->pool, 256), 0);
	CHECK_EQ(rxp_stack_init(&f->st, &t, &f->cache), 0);
	CHECK_EQ(rxp_stack_add_port(&f->st, 0, port_mac, NULL), 0);
}

static void fx_fini(struct fx *f)
{
	struct rxp_pool_cache *caches[] = { &f->cache };

	CHECK_EQ(rxp_pool_audit(f->pool, caches, 1), 0);
	rxp_pool_cache_close(&f->cache);
	CHECK_EQ(rxp_pool_destroy(f->pool), 0);
}

/* Copies @bytes into a fresh buffer, as a driver would have received it on port 0. */
static struct rxp_pkt *rx_frame(struct fx *f, const uint8_t *bytes, uint16_t len)
{
	struct rxp_pkt *pkt = rxp_pool_alloc(&f->cache);

	CHECK(pkt != NULL);
	if (!pkt)
		return NULL;
	memcpy(rxp_pkt_data(pkt), bytes, len);
	pkt->len = len;
	pkt->port = 0;
	pkt->queue = 0;
	return pkt;
}

enum mode { MODE_LIST, MODE_ONE };
static const char *const mode_name[] = { "list", "per-packet" };

static void input(struct fx *f, enum mode m, struct rxp_pkt **pkts, uint16_t n)
{
	if (m == MODE_LIST) {
		rxp_stack_input_list(&f->st, pkts, n);
	} else {
		for (uint16_t i = 0; i < n; i++)
			rxp_stack_input_one(&f->st, pkts[i]);
	}
}

static void dump_stats(const struct rxp_stack_stats *s)
{
	for (int r = 0; r < RXP_DROP_MAX; r++)
		if (s->drops[r])
			printf("    drop %s: %" PRIu64 "\n", rxp_drop_name((enum rxp_drop_reason)r),
			       s->drops[r]);
	for (int c = 0; c < RXP_SINK_MAX; c++)
		if (s->delivered[c])
			printf("    delivered %s: %" PRIu64 "\n",
			       rxp_sink_name((enum rxp_sink_class)c), s->delivered[c]);
}

/* ---- tests: names ---- */

static void test_names(void)
{
	for (int r = 0; r < RXP_DROP_MAX; r++) {
		const char *name = rxp_drop_name((enum rxp_drop_reason)r);

		CHECK(name && name[0]);
		CHECK(rxp_drop_help((enum rxp_drop_reason)r)[0] != '\0');
		for (int s = 0; s < r; s++)
			CHECK(strcmp(name, rxp_drop_name((enum rxp_drop_reason)s)) != 0);
	}
	CHECK(!strcmp(rxp_drop_name(RXP_DROP_IP4_CSUM), "ip4_bad_checksum"));
	CHECK(!strcmp(rxp_drop_name(RXP_DROP_NO_BUFFER), "no_buffer"));
	CHECK(!strcmp(rxp_drop_name(RXP_DROP_MAX), "unknown"));
	CHECK(!strcmp(rxp_sink_name(RXP_SINK_UDP4), "udp4"));
	CHECK(!strcmp(rxp_sink_name(RXP_SINK_OTHER6), "other6"));
	CHECK(!strcmp(rxp_sink_name(RXP_SINK_MAX), "unknown"));
	/* the generator's malformed kinds are the drop reasons, one for one */
	CHECK_EQ(RXP_GEN_BAD_KINDS, RXP_DROP_NO_BUFFER);
}

/*
 * rxp_gen_bad_name(k) is meant to name the drop reason kind k hits, so a
 * report can line up "sent 100 of X" with "dropped 100 as X".
 */
static void test_gen_bad_names_match_drop_names(void)
{
	for (int k = 0; k < RXP_GEN_BAD_KINDS; k++) {
		const char *g = rxp_gen_bad_name((enum rxp_gen_bad)k);
		const char *d = rxp_drop_name((enum rxp_drop_reason)k);

		if (strcmp(g, d)) {
			printf("  generator kind %d is '%s' but drop reason %d is '%s'\n", k, g, k, d);
			check_failures++;
		}
	}
	CHECK(!strcmp(rxp_gen_bad_name(RXP_GEN_BAD_KINDS), "?"));
}

static void test_stack_init_invalid(void)
{
	struct fx f;
	struct rxp_stack st;
	struct rxp_rx_tuning t;

	fx_init(&f, 64, NULL);
	t = rxp_rx_tuning_default();
	CHECK_EQ(t.handoff, RXP_HANDOFF_LIST);
	CHECK_EQ(t.budget, 64);
	CHECK_EQ(t.prefetch_lines, 2);
	CHECK(!t.copy);
	CHECK_EQ(rxp_stack_init(&st, &t, NULL), -EINVAL);
	t.budget = 0;
	CHECK_EQ(rxp_stack_init(&st, &t, &f.cache), -EINVAL);
	t.budget = RXP_BURST_MAX + 1;
	CHECK_EQ(rxp_stack_init(&st, &t, &f.cache), -EINVAL);
	t.budget = RXP_BURST_MAX;
	CHECK_EQ(rxp_stack_init(&st, &t, &f.cache), 0);
	t.prefetch_lines = 3;
	CHECK_EQ(rxp_stack_init(&st, &t, &f.cache), -EINVAL);
	t.prefetch_lines = 0;
	t.prefetch_ahead = 17;
	CHECK_EQ(rxp_stack_init(&st, &t, &f.cache), -EINVAL);
	CHECK_EQ(rxp_stack_add_port(&st, RXP_STACK_PORTS_MAX, port_mac, NULL), -EINVAL);
	CHECK_EQ(rxp_stack_add_port(&st, RXP_STACK_PORTS_MAX - 1, port_mac, NULL), 0);
	fx_fini(&f);
}

/* ---- tests: drop reasons ---- */

static void check_drop_cases(enum mode m, const struct rxp_rx_tuning *tuning)
{
	static struct bad_case cases[64];
	unsigned n = build_bad_cases(cases);
	bool reason_hit[RXP_DROP_MAX] = { false };
	struct fx f;

	fx_init(&f, 256, tuning);
	/* one at a time: exactly that reason's counter moves */
	for (unsigned i = 0; i < n; i++) {
		struct rxp_pkt *pkt = rx_frame(&f, cases[i].f.b, cases[i].f.len);
		struct rxp_stack_stats before = f.st.stats;
		const struct rxp_stack_stats *s = &f.st.stats;
		bool ok = true;

		input(&f, m, &pkt, 1);
		for (int r = 0; r < RXP_DROP_MAX; r++)
			ok &= s->drops[r] - before.drops[r] == (r == (int)cases[i].reason);
		ok &= s->dropped - before.dropped == 1;
		ok &= rxp_stack_delivered_total(s) == rxp_stack_delivered_total(&before);
		ok &= s->in_packets - before.in_packets == 1;
		ok &= s->in_bytes - before.in_bytes == cases[i].f.len;
		if (!ok) {
			printf("  %s: '%s' should count as %s, counted:\n", mode_name[m],
			       cases[i].what, rxp_drop_name(cases[i].reason));
			struct rxp_stack_stats d = *s;

			for (int r = 0; r < RXP_DROP_MAX; r++)
				d.drops[r] -= before.drops[r];
			for (int c = 0; c < RXP_SINK_MAX; c++)
				d.delivered[c] -= before.delivered[c];
			dump_stats(&d);
			check_failures++;
		}
		reason_hit[cases[i].reason] = true;
	}
	/*
	 * every receive-path reason but no_buffer (copy mode only) has a frame;
	 * the reasons after no_buffer belong to the router and its conformance tests
	 */
	for (int r = 0; r < RXP_DROP_NO_BUFFER; r++)
		if (r != RXP_DROP_NO_BUFFER && !reason_hit[r]) {
			printf("  no frame for drop reason %s\n", rxp_drop_name((enum rxp_drop_reason)r));
			check_failures++;
		}
	CHECK_EQ(f.st.stats.dropped, n);
	CHECK_EQ(rxp_stack_drops_total(&f.st.stats), n);
	fx_fini(&f);

	/* all at once, mixed with good frames, in one vector */
	static struct good_case good[64];
	unsigned n_good = build_good_cases(good);
	struct rxp_pkt *pkts[RXP_BURST_MAX];
	uint16_t k = 0;
	uint64_t want[RXP_DROP_MAX] = { 0 };

	fx_init(&f, 512, tuning);
	for (unsigned rep = 0; rep < 3; rep++) {
		for (unsigned i = 0; i < n; i++) {
			pkts[k++] = rx_frame(&f, cases[i].f.b, cases[i].f.len);
			want[cases[i].reason]++;
			if (i < n_good)
				pkts[k++] = rx_frame(&f, good[i].f.b, good[i].f.len);
		}
	}
	input(&f, m, pkts, k);
	for (int r = 0; r < RXP_DROP_MAX; r++)
		CHECK_EQ(f.st.stats.drops[r], want[r]);
	CHECK_EQ(rxp_stack_delivered_total(&f.st.stats), 3 * RXP_MIN(n, n_good));
	CHECK_EQ(f.st.stats.in_packets, k);
	fx_fini(&f);
}

static void test_drop_reasons_list(void)
{
	check_drop_cases(MODE_LIST, NULL);
}

static void test_drop_reasons_per_packet(void)
{
	check_drop_cases(MODE_ONE, NULL);
}

static void test_drop_reasons_no_prefetch(void)
{
	struct rxp_rx_tuning t = rxp_rx_tuning_default();

	t.prefetch_lines = 0;
	check_drop_cases(MODE_LIST, &t);
	t.prefetch_lines = 1;
	t.prefetch_ahead = 16;
	check_drop_cases(MODE_LIST, &t);
}

/* ---- tests: delivery ---- */

static void check_good_cases(enum mode m)
{
	static struct good_case cases[64];
	unsigned n = build_good_cases(cases);
	struct fx f;

	fx_init(&f, 256, NULL);
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *bytes = cases[i].f.b;
		uint16_t len = cases[i].f.len;
		struct rxp_stack_stats before = f.st.stats;
		const struct rxp_stack_stats *s = &f.st.stats;
		struct rxp_pkt *pkt;
		bool ok = true;

		pkt = rx_frame(&f, bytes, len);
		input(&f, m, &pkt, 1);
		for (int c = 0; c < RXP_SINK_MAX; c++)
			ok &= s->delivered[c] - before.delivered[c] == (c == (int)cases[i].cls);
		ok &= s->dropped == before.dropped;
		ok &= s->delivered_bytes - before.delivered_bytes == len;
		/* the buffer is back on top of the cache; its metadata says how it was parsed */
		ok &= pkt->l3_off == RXP_ETH_HLEN;
		ok &= pkt->l3_len == cases[i].l3_len;
		ok &= pkt->l4_off == cases[i].l4_off;
		ok &= f.cache.count > 0 && f.cache.objs[f.cache.count - 1] == pkt;
		if (!ok) {
			printf("  %s: '%s' should be delivered as %s with l3_len %u, l4_off %u; got l3_len %u, l4_off %u, counted:\n",
			       mode_name[m], cases[i].what, rxp_sink_name(cases[i].cls),
			       cases[i].l3_len, cases[i].l4_off, pkt->l3_len, pkt->l4_off);
			struct rxp_stack_stats d = *s;

			for (int r = 0; r < RXP_DROP_MAX; r++)
				d.drops[r] -= before.drops[r];
			for (int c = 0; c < RXP_SINK_MAX; c++)
				d.delivered[c] -= before.delivered[c];
			dump_stats(&d);
			check_failures++;
		}
	}
	CHECK_EQ(rxp_stack_delivered_total(&f.st.stats), n);
	CHECK_EQ(f.st.stats.dropped, 0);
	fx_fini(&f);
}

static void test_delivery_list(void)
{
	check_good_cases(MODE_LIST);
}

static void test_delivery_per_packet(void)
{
	check_good_cases(MODE_ONE);
}

/* The stack takes each port's own MAC: a frame for port 1 is foreign on port 0. */
static void test_per_port_mac(void)
{
	static const uint8_t mac1[6] = { 0x02, 0, 0, 0, 0, 0x42 };
	struct fx f;
	struct frame fr;
	struct rxp_pkt *pkt;

	fx_init(&f, 64, NULL);
	CHECK_EQ(rxp_stack_add_port(&f.st, 1, mac1, NULL), 0);
	ip4(&fr, mac1, RXP_IPPROTO_UDP, 26, 0);
	pkt = rx_frame(&f, fr.b, fr.len);
	pkt->port = 1;
	rxp_stack_input_one(&f.st, pkt);
	CHECK_EQ(f.st.stats.delivered[RXP_SINK_UDP4], 1);
	pkt = rx_frame(&f, fr.b, fr.len);
	pkt->port = 0;
	rxp_stack_input_one(&f.st, pkt);
	CHECK_EQ(f.st.stats.drops[RXP_DROP_NOT_FOR_US], 1);
	fx_fini(&f);
}

/*
 * The first fragment of a fragmented UDP datagram carries the UDP header,
 * whose length field gives the whole datagram: it is longer than this
 * fragment's payload. Before reassembly that is normal, not a malformed
 * packet, so it must not be dropped as udp_bad_length.
 */
static void test_first_fragment_not_dropped(void)
{
	static struct frame fr;
	struct fx f;

	for (int m = 0; m < 2; m++) {
		struct rxp_pkt *pkt;

		fx_init(&f, 64, NULL);
		/* a 2980-byte UDP datagram; the first fragment carries 1480 bytes of it */
		ip4(&fr, port_mac, RXP_IPPROTO_UDP, 1480, 0);
		put16(IP4(&fr) + 6, RXP_IP4_MF);
		put16(L4_4(&fr) + 4, 2980);
		ip4_fix_csum(&fr);
		pkt = rx_frame(&f, fr.b, fr.len);
		input(&f, (enum mode)m, &pkt, 1);
		if (f.st.stats.dropped) {
			printf("  %s: first fragment (MF, offset 0, UDP length 2980, IP payload 1480) dropped as:\n",
			       mode_name[m]);
			dump_stats(&f.st.stats);
		}
		CHECK_EQ(f.st.stats.dropped, 0);
		CHECK_EQ(f.st.stats.delivered[RXP_SINK_UDP4] + f.st.stats.delivered[RXP_SINK_OTHER4], 1);
		fx_fini(&f);
	}
}

/* ---- through a port: rxp_napi_poll ---- */

static void pcap_path(char *path, size_t len, const char *what)
{
	snprintf(path, len, "/tmp/rxp_test_stack_%d_%s.pcap", (int)getpid(), what);
}

static int write_pcap(const char *path, const struct frame *const *frames, unsigned n)
{
	pcap_t *pd = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *dump = pd ? pcap_dump_open(pd, path) : NULL;

	if (!dump) {
		if (pd)
			pcap_close(pd);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		struct pcap_pkthdr hdr = { .caplen = frames[i]->len, .len = frames[i]->len };

		pcap_dump((u_char *)dump, &hdr, frames[i]->b);
	}
	pcap_dump_close(dump);
	pcap_close(pd);
	return 0;
}

struct port_fx {
	struct rxp_pool *pool;
	struct rxp_pool_cache cache;
	struct rxp_port port;
	struct rxp_stack st;
	char err[ERR_LEN];
};

static int pfx_open(struct port_fx *p, const char *spec, uint32_t n_bufs,
		    const struct rxp_rx_tuning *tuning)
{
	struct rxp_pool_config cfg = { .n_bufs = n_bufs, .max_frame = 1518, .rx_offset = 2 };
	struct rxp_rx_tuning t = tuning ? *tuning : rxp_rx_tuning_default();
	int ret;

	memset(p, 0, sizeof(*p));
	p->pool = rxp_pool_create(&cfg, p->err, sizeof(p->err));
	CHECK(p->pool != NULL);
	if (!p->pool)
		return -ENOMEM;
	CHECK_EQ(rxp_pool_cache_init(&p->cache, p->pool, 256), 0);
	ret = rxp_port_open(&p->port, 0, "sim0", spec, p->pool, p->err, sizeof(p->err));
	if (!ret)
		ret = rxp_port_start(&p->port, &p->cache, p->err, sizeof(p->err));
	if (ret) {
		printf("  %s: %s\n", spec, p->err);
		return ret;
	}
	CHECK_EQ(rxp_stack_init(&p->st, &t, &p->cache), 0);
	CHECK_EQ(rxp_stack_add_port(&p->st, p->port.id, p->port.mac, &p->port.queues[0]), 0);
	return 0;
}

/* Polls until the finite source is done (or @timeout_s). Returns packets received. */
static uint64_t pfx_run(struct port_fx *p, double timeout_s)
{
	struct rxp_queue *q = &p->port.queues[0];
	double t_end = now_s() + timeout_s;
	uint64_t total = 0;

	while (now_s() < t_end) {
		uint16_t n = rxp_napi_poll(q, &p->st);

		total += n;
		if (!n && p->port.ops->rx_finished(q))
			break;
	}
	return total;
}

/* Closes the port; checks that packets and buffers are all accounted for. */
static void pfx_close(struct port_fx *p, struct rxp_pool_cache *const *more, unsigned n_more)
{
	struct rxp_pool_cache *caches[4] = { &p->cache };
	struct rxp_queue_stats qs;
	const struct rxp_stack_stats *s = &p->st.stats;

	rxp_port_stats(&p->port, &qs);
	CHECK_EQ(qs.rx_packets, rxp_stack_delivered_total(s) + s->dropped);
	CHECK_EQ(qs.rx_dropped, s->dropped);
	CHECK_EQ(s->dropped, rxp_stack_drops_total(s));
	rxp_port_close(&p->port);
	for (unsigned i = 0; i < n_more; i++)
		caches[1 + i] = more[i];
	CHECK_EQ(rxp_pool_audit(p->pool, caches, 1 + n_more), 0);
	for (unsigned i = 0; i < n_more; i++)
		rxp_pool_cache_close(more[i]);
	rxp_pool_cache_close(&p->cache);
	CHECK_EQ(rxp_pool_destroy(p->pool), 0);
}

/* Every malformed frame, replayed by a sim port and polled with NAPI, in both handoffs. */
static void test_napi_drop_reasons(void)
{
	static struct bad_case cases[64];
	static struct good_case good[64];
	const struct frame *frames[128];
	unsigned n = build_bad_cases(cases), n_good = build_good_cases(good), k = 0;
	uint64_t want_drops[RXP_DROP_MAX] = { 0 }, want_cls[RXP_SINK_MAX] = { 0 };
	char path[128], spec[200];

	for (unsigned i = 0; i < n; i++) {
		frames[k++] = &cases[i].f;
		want_drops[cases[i].reason] += 10;
	}
	for (unsigned i = 0; i < n_good; i++) {
		frames[k++] = &good[i].f;
		want_cls[good[i].cls] += 10;
	}
	pcap_path(path, sizeof(path), "drops");
	CHECK_EQ(write_pcap(path, frames, k), 0);
	snprintf(spec, sizeof(spec), "sim:pcap=%s,loop=10", path);

	for (int h = 0; h < 2; h++) {
		struct port_fx p;
		struct rxp_rx_tuning t = rxp_rx_tuning_default();

		t.handoff = h ? RXP_HANDOFF_PACKET : RXP_HANDOFF_LIST;
		if (pfx_open(&p, spec, 2048, &t))
			continue;
		CHECK_EQ(pfx_run(&p, 2.0), 10 * k);
		for (int r = 0; r < RXP_DROP_MAX; r++) {
			if (p.st.stats.drops[r] != want_drops[r]) {
				printf("  %s handoff: %s: %" PRIu64 " drops, want %" PRIu64 "\n",
				       h ? "per-packet" : "list", rxp_drop_name((enum rxp_drop_reason)r),
				       p.st.stats.drops[r], want_drops[r]);
				check_failures++;
			}
		}
		for (int c = 0; c < RXP_SINK_MAX; c++)
			CHECK_EQ(p.st.stats.delivered[c], want_cls[c]);
		CHECK_EQ(p.st.stats.in_packets, 10 * k);
		pfx_close(&p, NULL, 0);
	}
	unlink(path);
}

/* Conservation with the generator's mix, both handoffs: nothing lost, nothing leaked. */
static void test_napi_conservation(void)
{
	for (int h = 0; h < 2; h++) {
		struct port_fx p;
		struct rxp_rx_tuning t = rxp_rx_tuning_default();

		t.handoff = h ? RXP_HANDOFF_PACKET : RXP_HANDOFF_LIST;
		if (pfx_open(&p, "sim:proto=udp4+tcp4+udp6+tcp6,bad=5,count=30000,size=128",
			     4096, &t))
			continue;
		CHECK_EQ(pfx_run(&p, 2.0), 30000);
		CHECK_EQ(p.st.stats.in_packets, 30000);
		/* zero-copy: the stack sees every byte the driver received */
		CHECK_EQ(p.st.stats.in_bytes, p.port.queues[0].stats.rx_bytes);
		CHECK(p.st.stats.delivered_bytes < p.st.stats.in_bytes);
		CHECK(p.st.stats.delivered[RXP_SINK_UDP4] > 0);
		CHECK(p.st.stats.delivered[RXP_SINK_TCP4] > 0);
		CHECK(p.st.stats.delivered[RXP_SINK_UDP6] > 0);
		CHECK(p.st.stats.delivered[RXP_SINK_TCP6] > 0);
		CHECK_EQ(p.st.stats.delivered[RXP_SINK_OTHER4] + p.st.stats.delivered[RXP_SINK_OTHER6], 0);
		CHECK(p.st.stats.polls > 0);
		pfx_close(&p, NULL, 0);
	}
}

/* bad=10: each of the 15 malformed kinds lands under its own drop reason. */
static void test_gen_bad_share(void)
{
	for (int h = 0; h < 2; h++) {
		struct port_fx p;
		struct rxp_rx_tuning t = rxp_rx_tuning_default();
		const struct rxp_gen *gen;
		uint64_t n_bad = 0;

		t.handoff = h ? RXP_HANDOFF_PACKET : RXP_HANDOFF_LIST;
		if (pfx_open(&p, "sim:bad=10,count=20000", 4096, &t))
			continue;
		CHECK_EQ(pfx_run(&p, 2.0), 20000);
		gen = rxp_sim_gen(&p.port, 0);
		CHECK(gen != NULL);
		for (int k = 0; k < RXP_GEN_BAD_KINDS; k++) {
			/* kind k is built to hit drop reason k */
			if (!gen->n_bad_kind[k] || gen->n_bad_kind[k] != p.st.stats.drops[k]) {
				printf("  kind %s: generated %" PRIu64 ", dropped as %s: %" PRIu64 "\n",
				       rxp_gen_bad_name((enum rxp_gen_bad)k), gen->n_bad_kind[k],
				       rxp_drop_name((enum rxp_drop_reason)k), p.st.stats.drops[k]);
				check_failures++;
			}
			n_bad += gen->n_bad_kind[k];
		}
		CHECK_EQ(gen->n_bad, n_bad);
		CHECK_EQ(p.st.stats.drops[RXP_DROP_NO_BUFFER], 0);
		CHECK_EQ(p.st.stats.dropped, n_bad);
		/* about 10% */
		CHECK(n_bad >= 1900 && n_bad <= 2100);
		CHECK_EQ(rxp_stack_delivered_total(&p.st.stats) + p.st.stats.dropped, 20000);
		CHECK_EQ(p.st.stats.delivered[RXP_SINK_UDP4], 20000 - n_bad);
		pfx_close(&p, NULL, 0);
	}
}

/* ---- budget, copy mode (a shim over the driver sees what the poll does) ---- */

static const struct rxp_port_ops *shim_real;
static struct rxp_port_ops shim_ops;
static struct rxp_pkt *shim_last[RXP_BURST_MAX];
static uint16_t shim_last_n, shim_max_ask;

static uint16_t shim_rx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	uint16_t got = shim_real->rx_burst(q, pkts, n);

	shim_max_ask = RXP_MAX(shim_max_ask, n);
	memcpy(shim_last, pkts, got * sizeof(pkts[0]));
	shim_last_n = got;
	return got;
}

static void shim_install(struct rxp_port *port)
{
	shim_real = port->ops;
	shim_ops = *port->ops;
	shim_ops.rx_burst = shim_rx_burst;
	port->ops = &shim_ops;
	shim_last_n = 0;
	shim_max_ask = 0;
}

static void shim_remove(struct rxp_port *port)
{
	port->ops = shim_real;
}

static void test_budget(void)
{
	static const uint16_t budgets[] = { 1, 7, 64, 256 };

	for (size_t b = 0; b < RXP_ARRAY_SIZE(budgets); b++) {
		for (int h = 0; h < 2; h++) {
			struct port_fx p;
			struct rxp_rx_tuning t = rxp_rx_tuning_default();
			uint16_t most = 0, n;
			uint64_t total = 0;

			t.budget = budgets[b];
			t.handoff = h ? RXP_HANDOFF_PACKET : RXP_HANDOFF_LIST;
			if (pfx_open(&p, "sim:", 4096, &t))	/* endless source: always more */
				continue;
			shim_install(&p.port);
			for (int i = 0; i < 300; i++) {
				n = rxp_napi_poll(&p.port.queues[0], &p.st);
				most = RXP_MAX(most, n);
				total += n;
			}
			CHECK(most <= budgets[b]);
			CHECK_EQ(most, budgets[b]);	/* a full ring fills the budget */
			CHECK_EQ(shim_max_ask, budgets[b]);
			CHECK_EQ(p.st.stats.polls, 300);
			CHECK_EQ(p.st.stats.in_packets, total);
			shim_remove(&p.port);
			pfx_close(&p, NULL, 0);
		}
	}
}

/* Copy mode counts what zero-copy counts: it only moves the bytes. */
static void test_copy_same_counts(void)
{
	static const char *const specs[] = {
		"sim:proto=udp4+tcp4+udp6+tcp6,bad=10,count=20000",
		"sim:proto=udp4+tcp6,bad=3,size=700,count=5000",
	};

	for (size_t s = 0; s < RXP_ARRAY_SIZE(specs); s++) {
		struct rxp_stack_stats res[4];
		static const struct { bool copy; uint16_t copybreak; enum rxp_handoff h; } v[4] = {
			{ false, UINT16_MAX, RXP_HANDOFF_LIST },
			{ true, UINT16_MAX, RXP_HANDOFF_LIST },
			{ true, 256, RXP_HANDOFF_PACKET },
			{ true, 0, RXP_HANDOFF_LIST },
		};

		for (int i = 0; i < 4; i++) {
			struct port_fx p;
			struct rxp_rx_tuning t = rxp_rx_tuning_default();

			t.copy = v[i].copy;
			t.copybreak = v[i].copybreak;
			t.handoff = v[i].h;
			memset(&res[i], 0, sizeof(res[i]));
			if (pfx_open(&p, specs[s], 4096, &t))
				continue;
			pfx_run(&p, 2.0);
			res[i] = p.st.stats;
			pfx_close(&p, NULL, 0);
		}
		for (int i = 1; i < 4; i++) {
			CHECK_EQ(res[i].in_packets, res[0].in_packets);
			CHECK_EQ(res[i].in_bytes, res[0].in_bytes);
			CHECK_EQ(res[i].delivered_bytes, res[0].delivered_bytes);
			CHECK_EQ(res[i].dropped, res[0].dropped);
			for (int c = 0; c < RXP_SINK_MAX; c++)
				CHECK_EQ(res[i].delivered[c], res[0].delivered[c]);
			for (int r = 0; r < RXP_DROP_MAX; r++)
				CHECK_EQ(res[i].drops[r], res[0].drops[r]);
		}
		CHECK(res[0].dropped > 0);
		CHECK(rxp_stack_delivered_total(&res[0]) > 0);
	}
}

/*
 * Which buffer reaches the stack: with copy on, a frame up to copybreak is
 * delivered in a new buffer and the receive buffer is recycled; a longer
 * frame is delivered in place. The stack frees into its own cache here, so
 * the last buffer it freed (what rxp_pool_alloc hands out next) is the
 * delivered one.
 */
static void test_copybreak_buffers(void)
{
	static struct frame small, large;
	const struct frame *frames[2] = { &small, &large };
	char path[128], spec[200];

	ip4(&small, port_mac, RXP_IPPROTO_UDP, 26, 0);		/* 60 bytes */
	ip4(&large, port_mac, RXP_IPPROTO_UDP, 186, 0);	/* 220 bytes */
	pcap_path(path, sizeof(path), "copybreak");
	CHECK_EQ(write_pcap(path, frames, 2), 0);
	snprintf(spec, sizeof(spec), "sim:pcap=%s,loop=50", path);

	for (int mode = 0; mode < 3; mode++) {
		struct port_fx p;
		struct rxp_pool_cache stcache;
		struct rxp_pool_cache *more[] = { &stcache };
		struct rxp_rx_tuning t = rxp_rx_tuning_default();
		unsigned polls = 0, wrong = 0, copied = 0, bad_bytes = 0;

		t.budget = 1;
		t.copy = mode != 0;
		t.copybreak = mode == 2 ? 60 : UINT16_MAX;
		if (pfx_open(&p, spec, 2048, &t))
			continue;
		CHECK_EQ(rxp_pool_cache_init(&stcache, p.pool, 256), 0);
		/* the stack frees into a cache of its own, apart from the driver's refills */
		CHECK_EQ(rxp_stack_init(&p.st, &t, &stcache), 0);
		CHECK_EQ(rxp_stack_add_port(&p.st, p.port.id, p.port.mac, NULL), 0);
		shim_install(&p.port);
		while (rxp_napi_poll(&p.port.queues[0], &p.st)) {
			struct rxp_pkt *rx = shim_last[0];
			struct rxp_pkt *delivered = rxp_pool_alloc(&stcache);
			const struct frame *want = polls % 2 ? &large : &small;
			bool expect_copy = t.copy && want->len <= t.copybreak;

			CHECK_EQ(shim_last_n, 1);
			copied += delivered != rx;
			wrong += (delivered != rx) != expect_copy;
			bad_bytes += delivered->len != want->len ||
				     memcmp(rxp_pkt_cdata(delivered), want->b, want->len) != 0;
			rxp_pool_free(&stcache, delivered);
			polls++;
		}
		CHECK_EQ(polls, 100);
		CHECK_EQ(wrong, 0);
		CHECK_EQ(bad_bytes, 0);
		CHECK_EQ(copied, mode == 0 ? 0 : mode == 1 ? 100 : 50);
		CHECK_EQ(rxp_stack_delivered_total(&p.st.stats), 100);
		shim_remove(&p.port);
		pfx_close(&p, more, 1);
	}
	unlink(path);
}

/* Copy mode with no buffer to copy into: the frame is dropped as no_buffer, nothing leaks. */
static void test_copy_no_buffer(void)
{
	for (int h = 0; h < 2; h++) {
		struct port_fx p;
		struct rxp_pool_cache hold;
		struct rxp_pool_cache *more[] = { &hold };
		struct rxp_rx_tuning t = rxp_rx_tuning_default();
		static struct rxp_pkt *held[4096];
		uint32_t n_held = 0;
		struct rxp_pkt *b;
		uint16_t n;

		t.copy = true;
		t.handoff = h ? RXP_HANDOFF_PACKET : RXP_HANDOFF_LIST;
		if (pfx_open(&p, "sim:rxring=64,count=1000", 1024, &t))
			continue;
		/* someone else holds every free buffer */
		CHECK_EQ(rxp_pool_cache_init(&hold, p.pool, 256), 0);
		while ((b = rxp_pool_alloc(&p.cache)) != NULL)
			held[n_held++] = b;
		CHECK_EQ(n_held, 1024 - 64);
		n = rxp_napi_poll(&p.port.queues[0], &p.st);
		CHECK_EQ(n, 64);
		CHECK(p.st.stats.drops[RXP_DROP_NO_BUFFER] >= 1);
		CHECK_EQ(rxp_stack_delivered_total(&p.st.stats) + p.st.stats.dropped, 64);
		CHECK_EQ(p.port.queues[0].stats.rx_dropped, p.st.stats.dropped);
		/* the rest of the source still arrives once buffers are back */
		rxp_pool_free_bulk(&hold, held, n_held);
		CHECK_EQ(pfx_run(&p, 2.0) + n, 1000);
		pfx_close(&p, more, 1);
	}
}

/* ---- checksums ---- */

/* RFC 1071 section 3 numerical example. */
static void test_csum_rfc1071(void)
{
	static const uint8_t bytes[8] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	uint16_t c = rxp_csum(bytes, sizeof(bytes));
	uint8_t out[2];

	/* the sum is 0xddf2; the checksum stored in memory is its complement, 22 0d */
	memcpy(out, &c, 2);
	CHECK_EQ(out[0], 0x22);
	CHECK_EQ(out[1], 0x0d);
	CHECK_EQ(rxp_csum_fold(rxp_csum_partial(bytes, 8, 0)), c);

	/* data followed by its checksum sums to zero */
	uint8_t with[10];

	memcpy(with, bytes, 8);
	memcpy(with + 8, &c, 2);
	CHECK_EQ(rxp_csum(with, 10), 0);

	/* an odd byte is padded with zero: 01 02 03 -> 0x0102 + 0x0300 = 0x0402 -> fb fd */
	static const uint8_t odd[3] = { 1, 2, 3 };

	c = rxp_csum(odd, 3);
	memcpy(out, &c, 2);
	CHECK_EQ(out[0], 0xfb);
	CHECK_EQ(out[1], 0xfd);
	/* nothing at all */
	c = rxp_csum(odd, 0);
	CHECK_EQ(c, 0xffff);
}

/* Reference: big-endian 16-bit words, end-around carry, bit-by-bit simple. */
static uint16_t ref_csum_be(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < len; i += 2) {
		sum += (uint32_t)p[i] << 8 | (i + 1 < len ? p[i + 1] : 0);
		sum = (sum & 0xffff) + (sum >> 16);
	}
	return (uint16_t)~sum;
}

static void test_csum_random_against_reference(void)
{
	static uint8_t buf[2048 + 8];
	unsigned seed = 1071;
	unsigned wrong = 0;

	for (int iter = 0; iter < 20000; iter++) {
		size_t len = (size_t)rand_r(&seed) % (iter < 19000 ? 200 : 2048);
		size_t align = (size_t)rand_r(&seed) % 8;
		uint8_t *p = buf + align;
		uint16_t c, want;
		uint8_t out[2];
		int fill = rand_r(&seed) % 4;

		for (size_t i = 0; i < len; i++)
			p[i] = fill == 0 ? 0xff : fill == 1 ? 0 : (uint8_t)rand_r(&seed);
		c = rxp_csum(p, len);
		want = ref_csum_be(p, len);
		memcpy(out, &c, 2);
		/* all-zero data checksums to 0xffff either way; compare bytes in memory */
		if (out[0] != (want >> 8) || out[1] != (uint8_t)want) {
			if (wrong++ < 3)
				printf("  len %zu align %zu: got %02x%02x want %04x\n", len, align,
				       out[0], out[1], want);
		}
		/* partial sums chain at even split points */
		if (len >= 4) {
			size_t cut = ((size_t)rand_r(&seed) % len) & ~(size_t)1;
			uint64_t s = rxp_csum_partial(p, cut, 0);

			s = rxp_csum_partial(p + cut, len - cut, s);
			if (rxp_csum_fold(s) != c && wrong++ < 3)
				printf("  len %zu split at %zu differs\n", len, cut);
		}
	}
	CHECK_EQ(wrong, 0);
}

/* The header from RFC 1071-style worked examples: 192.168.0.1 -> 192.168.0.199, UDP. */
static const uint8_t known_hdr[20] = {
	0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
};

static void test_ip4_csum_verify(void)
{
	uint8_t h[60];
	uint16_t c;

	memcpy(h, known_hdr, 20);
	CHECK_EQ(rxp_ip4_csum_verify(h, 5), 0);
	CHECK_EQ(rxp_csum(h, 20), 0);
	/* recomputing gives the stored b8 61 */
	h[10] = h[11] = 0;
	c = rxp_csum(h, 20);
	memcpy(h + 10, &c, 2);
	CHECK_EQ(h[10], 0xb8);
	CHECK_EQ(h[11], 0x61);
	/* any single flipped bit is caught */
	int missed = 0;

	for (int bit = 0; bit < 160; bit++) {
		h[bit / 8] ^= (uint8_t)(1 << (bit % 8));
		missed += rxp_ip4_csum_verify(h, 5) == 0;
		h[bit / 8] ^= (uint8_t)(1 << (bit % 8));
	}
	CHECK_EQ(missed, 0);
	/* options are covered: IHL 15 */
	h[0] = 0x4f;
	for (int i = 20; i < 60; i++)
		h[i] = (uint8_t)(i * 13);
	h[10] = h[11] = 0;
	c = rxp_csum(h, 60);
	memcpy(h + 10, &c, 2);
	CHECK_EQ(rxp_ip4_csum_verify(h, 15), 0);
	h[59] ^= 0x80;
	CHECK(rxp_ip4_csum_verify(h, 15) != 0);
	/* unaligned header */
	uint8_t un[21];

	memcpy(un + 1, known_hdr, 20);
	CHECK_EQ(rxp_ip4_csum_verify(un + 1, 5), 0);
}

static uint16_t load16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint16_t recompute(uint8_t *h)
{
	h[10] = h[11] = 0;
	return rxp_csum(h, 20);
}

/* RFC 1624: incremental update equals recomputation, TTL and addresses, many values. */
static void test_csum_update_rfc1624(void)
{
	unsigned seed = 1624, wrong16 = 0, wrong32 = 0, zero_seen = 0;
	uint8_t h[20];

	/* the example of RFC 1624 section 3: eqn. 3 gives 0x0000, as recomputation does */
	CHECK_EQ(rxp_csum_update16(0xdd2f, 0x5555, 0x3285), 0x0000);
	/* and a change that does nothing changes nothing */
	CHECK_EQ(rxp_csum_update16(0x1234, 0xabcd, 0xabcd), 0x1234);

	for (int iter = 0; iter < 200000; iter++) {
		uint16_t c, old16, want, got;
		uint32_t old32;

		memcpy(h, known_hdr, 20);
		for (int i = 1; i < 20; i++)
			if (i != 10 && i != 11)
				h[i] = (uint8_t)rand_r(&seed);
		c = recompute(h);
		memcpy(h + 10, &c, 2);

		/* forwarding: TTL - 1 (the 16-bit word TTL|protocol) */
		old16 = load16(h + 8);
		h[8]--;
		got = rxp_csum_update16(c, old16, load16(h + 8));
		want = recompute(h);
		wrong16 += got != want;
		memcpy(h + 10, &got, 2);
		wrong16 += rxp_ip4_csum_verify(h, 5) != 0;

		/* NAT: a new source address */
		c = got;
		old32 = load32(h + 12);
		for (int i = 12; i < 16; i++)
			h[i] = (uint8_t)rand_r(&seed);
		got = rxp_csum_update32(c, old32, load32(h + 12));
		want = recompute(h);
		wrong32 += got != want;
		zero_seen += want == 0;
	}
	CHECK_EQ(wrong16, 0);
	CHECK_EQ(wrong32, 0);

	/*
	 * Every value of one field, so the sums that end in 0xffff / 0x0000 (the
	 * case of RFC 1624 section 3 where eqn. 2 goes wrong) are all visited.
	 */
	for (int hdr = 0; hdr < 4; hdr++) {
		uint16_t c;

		memcpy(h, known_hdr, 20);
		for (int i = 12; i < 20; i++)
			h[i] = (uint8_t)rand_r(&seed);
		c = recompute(h);
		memcpy(h + 10, &c, 2);
		for (uint32_t v = 0; v <= 0xffff; v++) {
			uint16_t old = load16(h + 4), nv = (uint16_t)v, got, want;

			got = rxp_csum_update16(c, old, nv);
			memcpy(h + 4, &nv, 2);
			want = recompute(h);
			memcpy(h + 10, &c, 2);
			memcpy(h + 4, &old, 2);
			if (got != want && wrong16++ < 3)
				printf("  id %04x -> %04x: update gives %04x, recomputation %04x\n",
				       old, nv, got, want);
			zero_seen += want == 0;
		}
	}
	CHECK_EQ(wrong16, 0);
	CHECK(zero_seen > 0);	/* the corner was reached */
}

int main(void)
{
	RUN(test_names);
	RUN(test_gen_bad_names_match_drop_names);
	RUN(test_stack_init_invalid);
	RUN(test_drop_reasons_list);
	RUN(test_drop_reasons_per_packet);
	RUN(test_drop_reasons_no_prefetch);
	RUN(test_delivery_list);
	RUN(test_delivery_per_packet);
	RUN(test_per_port_mac);
	RUN(test_first_fragment_not_dropped);
	RUN(test_napi_drop_reasons);
	RUN(test_napi_conservation);
	RUN(test_gen_bad_share);
	RUN(test_budget);
	RUN(test_copy_same_counts);
	RUN(test_copybreak_buffers);
	RUN(test_copy_no_buffer);
	RUN(test_csum_rfc1071);
	RUN(test_csum_random_against_reference);
	RUN(test_ip4_csum_verify);
	RUN(test_csum_update_rfc1624);
	return tests_done();
}
