/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of connection tracking (src/net/conntrack.h, src/fib/ct_table.h):
 * packets built as bytes go through rxp_ct_parse, rxp_ct_track and, when
 * new, rxp_ct_confirm (as the filter does when it lets them through), with
 * the clock driven by hand. TCP's states, windows, resets and closes; UDP's
 * and ICMP's timers; ICMP errors related to what they quote, in IPv4 and
 * IPv6; IPv6 extension headers and fragments; a full table; bounded
 * expiry; two workers on the two directions of many connections; the
 * `conntrack -L` lines.
 *
 * RXP_CT_BENCH=1 also measures throughput (not a test: figures only).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "check.h"
#include "fib/acl.h"
#include "net/conntrack.h"
#include "rxpath/proto.h"

#define NEW RXP_ACL_CT_NEW
#define EST RXP_ACL_CT_ESTABLISHED
#define REL RXP_ACL_CT_RELATED
#define INV RXP_ACL_CT_INVALID
#define UNT RXP_ACL_CT_UNTRACKED
#define NONE UINT32_MAX
#define S_NS 1000000000ull

#define SYN RXP_TCP_F_SYN
#define ACK RXP_TCP_F_ACK
#define FIN RXP_TCP_F_FIN
#define RST RXP_TCP_F_RST
#define PSH RXP_TCP_F_PSH

static struct rxp_ct *ct;
static uint64_t now_ns;
static int last_confirm;	/* what the last feed's confirm returned (1: none was asked) */

static struct rxp_ct *new_ct(uint32_t max, unsigned workers)
{
	struct rxp_ct_config cfg;
	struct rxp_ct *c;

	rxp_ct_config_default(&cfg);
	cfg.max = max;
	c = rxp_ct_create(&cfg, workers);
	if (!c) {
		perror("rxp_ct_create");
		exit(1);
	}
	return c;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

/* ---- packets as bytes ---- */

struct flow {
	uint8_t fam, proto;
	uint8_t a[16], b[16];	/* a opens */
	uint16_t ap, bp;
};

static uint32_t ip(unsigned a, unsigned b, unsigned c, unsigned d)
{
	return (uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d;
}

static struct flow flow4(uint8_t proto, uint32_t a, uint32_t b, uint16_t ap, uint16_t bp)
{
	struct flow f = { .fam = 4, .proto = proto, .ap = ap, .bp = bp };

	put32(f.a, a);
	put32(f.b, b);
	return f;
}

static struct flow flow6(uint8_t proto, const char *a, const char *b, uint16_t ap, uint16_t bp)
{
	struct flow f = { .fam = 6, .proto = proto, .ap = ap, .bp = bp };

	inet_pton(AF_INET6, a, f.a);
	inet_pton(AF_INET6, b, f.b);
	return f;
}

static unsigned ip4_hdr(uint8_t *p, const uint8_t *s, const uint8_t *d, uint8_t proto, unsigned l4len,
			uint16_t id, uint16_t frag)
{
	memset(p, 0, RXP_IP4_HLEN);
	p[0] = 0x45;
	put16(p + 2, RXP_IP4_HLEN + l4len);
	put16(p + 4, id);
	put16(p + 6, frag);
	p[8] = 64;
	p[9] = proto;
	memcpy(p + 12, s, 4);
	memcpy(p + 16, d, 4);
	return RXP_IP4_HLEN;
}

static unsigned ip6_hdr(uint8_t *p, const uint8_t *s, const uint8_t *d, uint8_t nh, unsigned plen)
{
	memset(p, 0, RXP_IP6_HLEN);
	p[0] = 0x60;
	put16(p + 4, plen);
	p[6] = nh;
	p[7] = 64;
	memcpy(p + 8, s, 16);
	memcpy(p + 24, d, 16);
	return RXP_IP6_HLEN;
}

/* The IP header of @f's direction @dir (0: a to b) before @l4len bytes of @proto. */
static unsigned ip_hdr(uint8_t *p, const struct flow *f, int dir, uint8_t proto, unsigned l4len)
{
	const uint8_t *s = dir ? f->b : f->a, *d = dir ? f->a : f->b;

	return f->fam == 4 ? ip4_hdr(p, s, d, proto, l4len, 1, 0) : ip6_hdr(p, s, d, proto, l4len);
}

static unsigned tcp_hdr(uint8_t *p, uint16_t sp, uint16_t dp, uint32_t seq, uint32_t ack, uint8_t flags,
			uint16_t win, const uint8_t *opt, unsigned olen, unsigned len)
{
	memset(p, 0, RXP_TCP_HLEN);
	put16(p, sp);
	put16(p + 2, dp);
	put32(p + 4, seq);
	put32(p + 8, ack);
	p[12] = (uint8_t)(((RXP_TCP_HLEN + olen) / 4) << 4);
	p[13] = flags;
	put16(p + 14, win);
	if (olen)
		memcpy(p + RXP_TCP_HLEN, opt, olen);
	memset(p + RXP_TCP_HLEN + olen, 0xab, len);
	return RXP_TCP_HLEN + olen + len;
}

static unsigned tcp_pkt(uint8_t *p, const struct flow *f, int dir, uint32_t seq, uint32_t ack, uint8_t flags,
			uint16_t win, unsigned len, const uint8_t *opt, unsigned olen)
{
	unsigned h = ip_hdr(p, f, dir, RXP_IPPROTO_TCP, RXP_TCP_HLEN + olen + len);

	return h + tcp_hdr(p + h, dir ? f->bp : f->ap, dir ? f->ap : f->bp, seq, ack, flags, win, opt, olen, len);
}

static unsigned udp_pkt(uint8_t *p, const struct flow *f, int dir, unsigned len)
{
	unsigned h = ip_hdr(p, f, dir, RXP_IPPROTO_UDP, RXP_UDP_HLEN + len);

	put16(p + h, dir ? f->bp : f->ap);
	put16(p + h + 2, dir ? f->ap : f->bp);
	put16(p + h + 4, RXP_UDP_HLEN + len);
	put16(p + h + 6, 0);
	memset(p + h + RXP_UDP_HLEN, 0x11, len);
	return h + RXP_UDP_HLEN + len;
}

/* An ICMP (or ICMPv6, for an IPv6 flow) query or answer: id in the flow's ap. */
static unsigned icmp_pkt(uint8_t *p, const struct flow *f, int dir, uint8_t type, uint16_t id)
{
	uint8_t proto = f->fam == 4 ? RXP_IPPROTO_ICMP : RXP_IPPROTO_ICMP6;
	unsigned h = ip_hdr(p, f, dir, proto, RXP_ICMP_HLEN);

	memset(p + h, 0, RXP_ICMP_HLEN);
	p[h] = type;
	put16(p + h + 4, id);
	put16(p + h + 6, 1);
	return h + RXP_ICMP_HLEN;
}

/* An ICMP error from @from to @to quoting @q[0..qlen) (cut to what is given). */
static unsigned icmp_err(uint8_t *p, uint8_t fam, const uint8_t *from, const uint8_t *to, uint8_t type,
			 uint8_t code, const uint8_t *q, unsigned qlen)
{
	unsigned h = fam == 4 ? ip4_hdr(p, from, to, RXP_IPPROTO_ICMP, RXP_ICMP_HLEN + qlen, 9, 0)
			      : ip6_hdr(p, from, to, RXP_IPPROTO_ICMP6, RXP_ICMP_HLEN + qlen);

	memset(p + h, 0, RXP_ICMP_HLEN);
	p[h] = type;
	p[h + 1] = code;
	memcpy(p + h + RXP_ICMP_HLEN, q, qlen);
	return h + RXP_ICMP_HLEN + qlen;
}

/* ---- feeding the tracker ---- */

/* Parses, tracks and, when the packet starts a connection, confirms it (the filter accepts all). */
static uint8_t feed_w(unsigned w, const uint8_t *b, unsigned len, uint8_t fam, struct rxp_ct_ref *out)
{
	struct rxp_ct_pkt p;
	struct rxp_ct_ref r;
	uint8_t s;

	rxp_ct_parse(b, len, fam, &p);
	rxp_ct_enter(ct, w);
	s = rxp_ct_track(ct, w, &p, now_ns, &r);
	last_confirm = 1;
	if (s == NEW && r.entry == NONE)
		last_confirm = rxp_ct_confirm(ct, w, &p, now_ns, &r);
	rxp_ct_leave(ct, w);
	if (out)
		*out = r;
	return s;
}

static uint8_t feed(const uint8_t *b, unsigned len, uint8_t fam, struct rxp_ct_ref *out)
{
	return feed_w(0, b, len, fam, out);
}

/* Tracks without confirming. */
static uint8_t peek(const uint8_t *b, unsigned len, uint8_t fam, struct rxp_ct_ref *out)
{
	struct rxp_ct_pkt p;
	struct rxp_ct_ref r;
	uint8_t s;

	rxp_ct_parse(b, len, fam, &p);
	rxp_ct_enter(ct, 0);
	s = rxp_ct_track(ct, 0, &p, now_ns, &r);
	rxp_ct_leave(ct, 0);
	if (out)
		*out = r;
	return s;
}

/* A TCP connection: its flow and the next sequence number of each side. */
struct tc {
	struct flow f;
	uint32_t nxt[2];
	uint16_t win;		/* what its segments advertise */
};

/* MSS 1460, NOP, window scale 7, SACK permitted, NOP, NOP */
static const uint8_t syn_opts[] = { 2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2, 1, 1 };

static uint8_t tc_send(struct tc *c, int dir, uint8_t flags, unsigned len)
{
	uint8_t b[2048];
	bool syn = flags & SYN;
	unsigned n = tcp_pkt(b, &c->f, dir, c->nxt[dir], (flags & ACK) ? c->nxt[!dir] : 0, flags, c->win, len,
			     syn ? syn_opts : NULL, syn ? sizeof(syn_opts) : 0);
	uint8_t s = feed(b, n, c->f.fam, NULL);

	if (s != INV)
		c->nxt[dir] += len + syn + !!(flags & FIN);
	return s;
}

static struct tc tc4(uint32_t a, uint32_t b, uint16_t ap, uint16_t bp)
{
	struct tc c = { .f = flow4(RXP_IPPROTO_TCP, a, b, ap, bp), .nxt = { 1000000, 7000000 }, .win = 65535 };

	return c;
}

struct find {
	const struct flow *f;
	struct rxp_ct_view v;
	int n;
};

static bool same(const struct rxp_ct_tuple *t, uint8_t fam, uint8_t proto, const uint8_t *s, const uint8_t *d,
		 uint16_t sp, uint16_t dp)
{
	unsigned alen = fam == 4 ? 4 : 16;

	return t->family == fam && t->proto == proto && !memcmp(t->src, s, alen) && !memcmp(t->dst, d, alen) &&
	       t->sport == sp && t->dport == dp;
}

static int find_cb(const struct rxp_ct_view *v, void *arg)
{
	struct find *x = arg;
	const struct flow *f = x->f;

	if (same(&v->orig, f->fam, f->proto, f->a, f->b, f->ap, f->bp) ||
	    same(&v->orig, f->fam, f->proto, f->b, f->a, f->bp, f->ap)) {
		x->v = *v;
		x->n++;
	}
	return 0;
}

/* How many entries @f has (both orientations); the last one's view in @v. */
static int find_view(const struct flow *f, struct rxp_ct_view *v)
{
	struct find x = { .f = f };

	rxp_ct_walk(ct, now_ns, find_cb, &x);
	if (v)
		*v = x.v;
	return x.n;
}

static int tcp_state(const struct flow *f)
{
	struct rxp_ct_view v;

	return find_view(f, &v) == 1 ? v.tcp_state : -1;
}

static struct rxp_ct_stats stats(void)
{
	struct rxp_ct_stats s;

	rxp_ct_stats(ct, &s);
	return s;
}

static void tc_open(struct tc *c)
{
	CHECK_EQ(tc_send(c, 0, SYN, 0), NEW);
	CHECK_EQ(last_confirm, 0);
	CHECK_EQ(tc_send(c, 1, SYN | ACK, 0), EST);
	CHECK_EQ(tc_send(c, 0, ACK, 0), EST);
	CHECK_EQ(tcp_state(&c->f), RXP_CT_TCP_ESTABLISHED);
}

static void begin(uint32_t max, unsigned workers)
{
	ct = new_ct(max, workers);
	now_ns = 1000 * S_NS;
}

static void end(void)
{
	rxp_ct_destroy(ct);
	ct = NULL;
}

/* ---- parsing ---- */

static void test_parse_ip4(void)
{
	struct flow f = flow4(RXP_IPPROTO_TCP, ip(10, 0, 0, 1), ip(10, 0, 0, 2), 1234, 80);
	uint8_t b[256];
	struct rxp_ct_pkt p;
	unsigned n;

	/* options in the IP header: the transport header after them */
	n = tcp_pkt(b + 4, &f, 0, 5, 0, SYN, 1000, 0, NULL, 0);
	memmove(b, b + 4, RXP_IP4_HLEN);
	memset(b + RXP_IP4_HLEN, 1, 4);	/* four NOP options */
	b[0] = 0x46;
	put16(b + 2, n + 4);
	CHECK_EQ(rxp_ct_parse(b, n + 4, 4, &p), 0);
	CHECK_EQ(p.l4_off, 24);
	CHECK_EQ(p.t.sport, 1234);
	CHECK_EQ(p.t.dport, 80);
	CHECK_EQ(p.seq, 5);
	CHECK_EQ(p.bytes, n + 4);
	/* Ethernet padding past the total length is not the packet's */
	n = tcp_pkt(b, &f, 0, 5, 0, SYN, 1000, 0, NULL, 0);
	CHECK_EQ(rxp_ct_parse(b, n + 6, 4, &p), 0);
	CHECK_EQ(p.bytes, n);
	CHECK_EQ(p.payload_len, 0);
	/* cut short, or lying about its lengths */
	CHECK_EQ(rxp_ct_parse(b, 19, 4, &p), -EINVAL);
	CHECK(p.malformed);
	CHECK_EQ(rxp_ct_parse(b, n - 1, 4, &p), -EINVAL);	/* total length past the data */
	b[0] = 0x44;
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), -EINVAL);	/* IHL 4 */
	b[0] = 0x4f;
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), -EINVAL);	/* IHL 15: past the total length */
	b[0] = 0x65;
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), -EINVAL);	/* version 6 */
	b[0] = 0x45;
	put16(b + 2, 12);
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), -EINVAL);	/* total length below the header */
	/* a TCP header cut, a data offset too small or too large */
	n = ip4_hdr(b, f.a, f.b, RXP_IPPROTO_TCP, 12, 1, 0);
	CHECK_EQ(rxp_ct_parse(b, n + 12, 4, &p), -EINVAL);
	n = tcp_pkt(b, &f, 0, 5, 0, SYN, 1000, 0, NULL, 0);
	b[RXP_IP4_HLEN + 12] = 4 << 4;
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), -EINVAL);
	b[RXP_IP4_HLEN + 12] = 15 << 4;
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), -EINVAL);
	/* UDP: its length field must fit */
	f.proto = RXP_IPPROTO_UDP;
	n = udp_pkt(b, &f, 0, 10);
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), 0);
	put16(b + RXP_IP4_HLEN + 4, 100);
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), -EINVAL);
	put16(b + RXP_IP4_HLEN + 4, 4);
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), -EINVAL);
	/* ICMP shorter than its 8 bytes */
	n = ip4_hdr(b, f.a, f.b, RXP_IPPROTO_ICMP, 7, 1, 0);
	CHECK_EQ(rxp_ct_parse(b, n + 7, 4, &p), -EINVAL);
	/* a family that is neither */
	CHECK_EQ(rxp_ct_parse(b, n + 7, 5, &p), -EINVAL);
}

static void test_parse_fragments(void)
{
	struct flow f = flow4(RXP_IPPROTO_UDP, ip(10, 0, 0, 1), ip(10, 0, 0, 2), 1234, 53);
	uint8_t b[256];
	struct rxp_ct_pkt p;
	unsigned n;

	/* the first fragment: ports, and its UDP length may cover more than it carries */
	n = udp_pkt(b, &f, 0, 32);
	put16(b + 4, 0x4242);
	put16(b + 6, RXP_IP4_MF);
	put16(b + RXP_IP4_HLEN + 4, 1000);
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), 0);
	CHECK(p.frag);
	CHECK(!p.frag_nth);
	CHECK_EQ(p.frag_id, 0x4242);
	CHECK_EQ(p.t.sport, 1234);
	CHECK_EQ(p.t.dport, 53);
	/* a later one: no transport header at all, even if its bytes look like one */
	put16(b + 6, 185);
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), 0);
	CHECK(p.frag && p.frag_nth);
	CHECK_EQ(p.t.sport, 0);
	CHECK_EQ(p.t.dport, 0);
	CHECK_EQ(p.l4_off, 0);
	CHECK_EQ(p.t.proto, RXP_IPPROTO_UDP);
	/* tracking leaves later fragments to their first (the filter holds them): invalid alone */
	begin(64, 1);
	CHECK_EQ(peek(b, n, 4, NULL), INV);
	/* the last fragment (offset, no MF) too */
	put16(b + 6, 370);
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), 0);
	CHECK(p.frag_nth);
	/* a first fragment is tracked as its datagram */
	n = udp_pkt(b, &f, 0, 32);
	put16(b + 6, RXP_IP4_MF);
	CHECK_EQ(feed(b, n, 4, NULL), NEW);
	CHECK_EQ(last_confirm, 0);
	CHECK_EQ(find_view(&f, NULL), 1);
	end();
}

static void test_parse_tcp_options(void)
{
	struct flow f = flow4(RXP_IPPROTO_TCP, ip(10, 0, 0, 1), ip(10, 0, 0, 2), 1234, 80);
	uint8_t b[1024];
	struct rxp_ct_pkt p;
	unsigned n;
	/* window scale 20 (capped at 14), SACK permitted, timestamps */
	static const uint8_t big[] = { 3, 3, 20, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1 };
	/* NOP, NOP, SACK with two blocks: right edges 5000 and 9000 */
	static const uint8_t sack[] = { 1, 1, 5, 18, 0, 0, 0x0f, 0xa0, 0, 0, 0x13, 0x88,
					0, 0, 0x1f, 0x40, 0, 0, 0x23, 0x28 };
	/* an option whose size runs past the header: the list ends there */
	static const uint8_t cut[] = { 4, 2, 3, 9, 7, 0, 0, 0 };
	static const uint8_t silly[] = { 3, 1, 7, 0 };

	n = tcp_pkt(b, &f, 0, 1, 0, SYN, 100, 0, syn_opts, sizeof(syn_opts));
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), 0);
	CHECK_EQ(p.wscale, 7);
	CHECK(p.sack_perm);
	n = tcp_pkt(b, &f, 0, 1, 0, SYN, 100, 0, big, sizeof(big));
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), 0);
	CHECK_EQ(p.wscale, 14);
	CHECK(p.sack_perm);
	/* the same options on a segment that is no SYN mean nothing to tracking */
	n = tcp_pkt(b, &f, 0, 1, 1, ACK, 100, 0, big, sizeof(big));
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), 0);
	CHECK_EQ(p.wscale, 0xff);
	CHECK(!p.sack_perm);
	n = tcp_pkt(b, &f, 0, 1, 4000, ACK, 100, 0, sack, sizeof(sack));
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), 0);
	CHECK_EQ(p.ack, 4000);
	CHECK_EQ(p.sack, 9000);
	n = tcp_pkt(b, &f, 0, 1, 0, SYN, 100, 0, cut, sizeof(cut));
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), 0);
	CHECK(p.sack_perm);
	CHECK_EQ(p.wscale, 0xff);
	n = tcp_pkt(b, &f, 0, 1, 0, SYN, 100, 0, silly, sizeof(silly));
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), 0);
	CHECK_EQ(p.wscale, 0xff);
	/* data after the options */
	n = tcp_pkt(b, &f, 0, 1, 1, ACK | PSH, 100, 333, sack, sizeof(sack));
	CHECK_EQ(rxp_ct_parse(b, n, 4, &p), 0);
	CHECK_EQ(p.payload_len, 333);
	CHECK_EQ(p.l4_off, RXP_IP4_HLEN);
}

/* IPv6 with extension headers: @ext holds them (their Next Header fields set), before @proto's header. */
static unsigned ip6_with(uint8_t *b, const struct flow *f, int dir, uint8_t first, const uint8_t *ext,
			 unsigned elen, const uint8_t *l4, unsigned l4len)
{
	unsigned h = ip6_hdr(b, dir ? f->b : f->a, dir ? f->a : f->b, first, elen + l4len);

	if (elen)
		memcpy(b + h, ext, elen);
	if (l4len)
		memcpy(b + h + elen, l4, l4len);
	return h + elen + l4len;
}

static void test_parse_ipv6(void)
{
	struct flow f = flow6(RXP_IPPROTO_TCP, "2001:db8::1", "2001:db8::2", 1111, 443);
	uint8_t b[1024], seg[64], ext[600];
	struct rxp_ct_pkt p;
	unsigned n, sl = tcp_hdr(seg, 1111, 443, 77, 0, SYN, 5000, syn_opts, sizeof(syn_opts), 0);

	/* hop-by-hop (8), destination options (16), routing (8), AH (24) before TCP */
	memset(ext, 0, sizeof(ext));
	ext[0] = RXP_IPPROTO_DSTOPTS; ext[1] = 0;
	ext[8] = RXP_IPPROTO_ROUTING; ext[9] = 1;
	ext[24] = RXP_IPPROTO_AH; ext[25] = 0;
	ext[32] = RXP_IPPROTO_TCP; ext[33] = 4;
	n = ip6_with(b, &f, 0, RXP_IPPROTO_HOPOPTS, ext, 56, seg, sl);
	CHECK_EQ(rxp_ct_parse(b, n, 6, &p), 0);
	CHECK_EQ(p.t.proto, RXP_IPPROTO_TCP);
	CHECK_EQ(p.l4_off, RXP_IP6_HLEN + 56);
	CHECK_EQ(p.t.sport, 1111);
	CHECK_EQ(p.t.dport, 443);
	CHECK_EQ(p.seq, 77);
	CHECK_EQ(p.wscale, 7);
	CHECK_EQ(p.bytes, n);
	/* an extension header running past the packet */
	CHECK_EQ(rxp_ct_parse(b, RXP_IP6_HLEN + 30, 6, &p), -EINVAL);	/* payload length says more */
	put16(b + 4, 30);
	CHECK_EQ(rxp_ct_parse(b, RXP_IP6_HLEN + 30, 6, &p), -EINVAL);	/* AH cut */
	/* a first fragment: ports; a later one: none */
	memset(ext, 0, 8);
	ext[0] = RXP_IPPROTO_TCP;
	put16(ext + 2, RXP_IP6_FRAG_MF);
	put32(ext + 4, 0xdeadbeef);
	n = ip6_with(b, &f, 0, RXP_IPPROTO_FRAGMENT, ext, 8, seg, sl);
	CHECK_EQ(rxp_ct_parse(b, n, 6, &p), 0);
	CHECK(p.frag && !p.frag_nth);
	CHECK_EQ(p.frag_id, 0xdeadbeef);
	CHECK_EQ(p.t.sport, 1111);
	put16(ext + 2, 1448);
	n = ip6_with(b, &f, 0, RXP_IPPROTO_FRAGMENT, ext, 8, seg, sl);
	CHECK_EQ(rxp_ct_parse(b, n, 6, &p), 0);
	CHECK(p.frag && p.frag_nth);
	CHECK_EQ(p.t.proto, RXP_IPPROTO_TCP);
	CHECK_EQ(p.t.sport, 0);
	CHECK_EQ(p.l4_off, 0);
	/* an atomic fragment (offset 0, no M) is a whole packet */
	put16(ext + 2, 0);
	n = ip6_with(b, &f, 0, RXP_IPPROTO_FRAGMENT, ext, 8, seg, sl);
	CHECK_EQ(rxp_ct_parse(b, n, 6, &p), 0);
	CHECK(!p.frag);
	CHECK_EQ(p.t.sport, 1111);
	/* ESP and No Next Header end the chain */
	n = ip6_with(b, &f, 0, 50, seg, 16, NULL, 0);
	CHECK_EQ(rxp_ct_parse(b, n, 6, &p), 0);
	CHECK_EQ(p.t.proto, 50);
	CHECK_EQ(p.l4_off, RXP_IP6_HLEN);
	memset(ext, 0, 8);
	ext[0] = RXP_IPPROTO_NONE;
	n = ip6_with(b, &f, 0, RXP_IPPROTO_DSTOPTS, ext, 8, NULL, 0);
	CHECK_EQ(rxp_ct_parse(b, n, 6, &p), 0);
	CHECK_EQ(p.t.proto, RXP_IPPROTO_NONE);
	CHECK_EQ(p.l4_off, 0);
	/* a chain too long to follow */
	memset(ext, 0, sizeof(ext));
	for (unsigned i = 0; i < 40; i++)
		ext[i * 8] = i == 39 ? RXP_IPPROTO_TCP : RXP_IPPROTO_DSTOPTS;
	n = ip6_with(b, &f, 0, RXP_IPPROTO_DSTOPTS, ext, 320, seg, sl);
	CHECK_EQ(rxp_ct_parse(b, n, 6, &p), -EINVAL);
	/* cut short, wrong version */
	CHECK_EQ(rxp_ct_parse(b, 39, 6, &p), -EINVAL);
	n = ip6_with(b, &f, 0, RXP_IPPROTO_TCP, NULL, 0, seg, sl);
	b[0] = 0x40;
	CHECK_EQ(rxp_ct_parse(b, n, 6, &p), -EINVAL);
}

/* ---- TCP ---- */

static void test_tcp_handshake(void)
{
	struct tc c = tc4(ip(10, 0, 0, 2), ip(10, 0, 1, 2), 40000, 80);
	struct rxp_ct_view v;
	struct rxp_ct_ref r;
	uint8_t b[256];
	unsigned n;

	begin(64, 1);
	CHECK_EQ(tc_send(&c, 0, SYN, 0), NEW);
	CHECK_EQ(last_confirm, 0);
	CHECK_EQ(find_view(&c.f, &v), 1);
	CHECK_EQ(v.tcp_state, RXP_CT_TCP_SYN_SENT);
	CHECK(!v.seen_reply && !v.assured);
	CHECK_EQ(v.expires_in_s, 119);
	/* a retransmitted SYN: still new, same entry, its timer not renewed */
	now_ns += 5 * S_NS;
	n = tcp_pkt(b, &c.f, 0, c.nxt[0] - 1, 0, SYN, 65535, 0, syn_opts, sizeof(syn_opts));
	CHECK_EQ(feed(b, n, 4, &r), NEW);
	CHECK(r.entry != NONE);
	CHECK_EQ(last_confirm, 1);
	CHECK_EQ(find_view(&c.f, &v), 1);
	CHECK_EQ(v.tcp_state, RXP_CT_TCP_SYN_SENT);
	CHECK_EQ(v.expires_in_s, 114);
	CHECK_EQ(v.packets[0], 2);
	/* SYN/ACK: established for the filter (a reply), SYN_RECV for TCP */
	CHECK_EQ(tc_send(&c, 1, SYN | ACK, 0), EST);
	CHECK_EQ(find_view(&c.f, &v), 1);
	CHECK_EQ(v.tcp_state, RXP_CT_TCP_SYN_RECV);
	CHECK(v.seen_reply && !v.assured);
	CHECK_EQ(v.expires_in_s, 59);
	/* the third packet establishes and assures */
	CHECK_EQ(tc_send(&c, 0, ACK, 0), EST);
	CHECK_EQ(find_view(&c.f, &v), 1);
	CHECK_EQ(v.tcp_state, RXP_CT_TCP_ESTABLISHED);
	CHECK(v.assured);
	CHECK_EQ(v.expires_in_s, 431999);
	/* data both ways; unacknowledged data holds the timer at tcp_unacknowledged */
	CHECK_EQ(tc_send(&c, 0, ACK | PSH, 1000), EST);
	CHECK_EQ(find_view(&c.f, &v), 1);
	CHECK_EQ(v.expires_in_s, 299);
	CHECK_EQ(tc_send(&c, 1, ACK, 0), EST);
	CHECK_EQ(find_view(&c.f, &v), 1);
	CHECK_EQ(v.expires_in_s, 431999);
	CHECK_EQ(tc_send(&c, 1, ACK | PSH, 500), EST);
	CHECK_EQ(tc_send(&c, 0, ACK, 0), EST);
	CHECK_EQ(tc_send(&c, 0, ACK | PSH, 1460), EST);
	CHECK_EQ(tc_send(&c, 1, ACK, 0), EST);
	CHECK_EQ(find_view(&c.f, &v), 1);
	CHECK_EQ(v.tcp_state, RXP_CT_TCP_ESTABLISHED);
	CHECK_EQ(v.packets[0], 6);
	CHECK_EQ(v.packets[1], 4);
	CHECK_EQ(v.bytes[1], 52 + 40 + 540 + 40);
	CHECK_EQ(stats().inserted, 1);
	CHECK_EQ(stats().invalid, 0);
	CHECK_EQ(stats().entries, 1);
	/* the opener's ACK before any reply is invalid: SYN_SENT wants a SYN/ACK */
	{
		struct tc d = tc4(ip(10, 0, 0, 3), ip(10, 0, 1, 2), 40001, 80);

		CHECK_EQ(tc_send(&d, 0, SYN, 0), NEW);
		CHECK_EQ(tc_send(&d, 0, ACK, 0), INV);
		CHECK_EQ(tcp_state(&d.f), RXP_CT_TCP_SYN_SENT);
	}
	end();
}

static void test_tcp_retransmissions(void)
{
	struct tc c = tc4(ip(10, 0, 0, 2), ip(10, 0, 1, 2), 40000, 80);
	struct rxp_ct_view v;
	uint8_t b[2048];
	unsigned n;

	begin(64, 1);
	rxp_ct_set_timeout(ct, RXP_CT_TO_TCP_UNACK, 200);
	rxp_ct_set_timeout(ct, RXP_CT_TO_TCP_RETRANS, 100);
	CHECK_EQ(rxp_ct_config(ct)->timeout[RXP_CT_TO_TCP_RETRANS], 100);
	tc_open(&c);
	/* the same segment four times, never acknowledged: the fourth is the third retransmission */
	n = tcp_pkt(b, &c.f, 0, c.nxt[0], c.nxt[1], ACK | PSH, 65535, 1000, NULL, 0);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(feed(b, n, 4, NULL), EST);
		CHECK_EQ(find_view(&c.f, &v), 1);
		CHECK_EQ(v.expires_in_s, i < 3 ? 199 : 99);
	}
	/* its ACK at last: days again */
	c.nxt[0] += 1000;
	CHECK_EQ(tc_send(&c, 1, ACK, 0), EST);
	CHECK_EQ(find_view(&c.f, &v), 1);
	CHECK_EQ(v.expires_in_s, 431999);
	/* a zero window: tcp_max_retrans */
	c.win = 0;
	CHECK_EQ(tc_send(&c, 1, ACK, 0), EST);
	CHECK_EQ(find_view(&c.f, &v), 1);
	CHECK_EQ(v.expires_in_s, 99);
	end();
}

static void test_tcp_simultaneous_open(void)
{
	struct flow f = flow4(RXP_IPPROTO_TCP, ip(10, 0, 0, 1), ip(10, 0, 0, 9), 1111, 2222);
	uint8_t b[256];
	unsigned n;

	begin(64, 1);
	n = tcp_pkt(b, &f, 0, 100, 0, SYN, 65535, 0, syn_opts, sizeof(syn_opts));
	CHECK_EQ(feed(b, n, 4, NULL), NEW);
	CHECK_EQ(tcp_state(&f), RXP_CT_TCP_SYN_SENT);
	/* the other end's SYN crosses ours */
	n = tcp_pkt(b, &f, 1, 900, 0, SYN, 65535, 0, syn_opts, sizeof(syn_opts));
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	CHECK_EQ(tcp_state(&f), RXP_CT_TCP_SYN_SENT2);
	/* each answers the other's SYN */
	n = tcp_pkt(b, &f, 0, 100, 901, SYN | ACK, 65535, 0, syn_opts, sizeof(syn_opts));
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	CHECK_EQ(tcp_state(&f), RXP_CT_TCP_SYN_RECV);
	n = tcp_pkt(b, &f, 1, 900, 101, SYN | ACK, 65535, 0, syn_opts, sizeof(syn_opts));
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	CHECK_EQ(tcp_state(&f), RXP_CT_TCP_SYN_RECV);
	/* the reply side's ACK establishes it (Linux marks the simultaneous open for this) */
	n = tcp_pkt(b, &f, 1, 901, 101, ACK, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	CHECK_EQ(tcp_state(&f), RXP_CT_TCP_ESTABLISHED);
	n = tcp_pkt(b, &f, 0, 101, 901, ACK, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	CHECK_EQ(tcp_state(&f), RXP_CT_TCP_ESTABLISHED);
	n = tcp_pkt(b, &f, 0, 101, 901, ACK | PSH, 65535, 100, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	n = tcp_pkt(b, &f, 1, 901, 201, ACK, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	CHECK_EQ(stats().invalid, 0);
	CHECK_EQ(stats().entries, 1);
	end();
}

static void test_tcp_window(void)
{
	struct tc c = tc4(ip(10, 0, 0, 2), ip(10, 0, 1, 2), 40000, 80);
	struct rxp_ct_view v;
	uint8_t b[2048];
	unsigned n;
	uint64_t inv;

	begin(64, 1);
	tc_open(&c);
	CHECK_EQ(tc_send(&c, 0, ACK | PSH, 1000), EST);
	CHECK_EQ(tc_send(&c, 1, ACK | PSH, 1000), EST);
	inv = stats().invalid;
	/* far past the receiver's window (64 KiB << 7 = 8 MiB) */
	n = tcp_pkt(b, &c.f, 0, c.nxt[0] + 100000000, c.nxt[1], ACK | PSH, 65535, 100, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	CHECK_EQ(stats().invalid, inv + 1);
	/* acknowledging data the other side never sent */
	n = tcp_pkt(b, &c.f, 0, c.nxt[0], c.nxt[1] + 5000, ACK, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	CHECK_EQ(tcp_state(&c.f), RXP_CT_TCP_ESTABLISHED);
	/* liberal: the same segments go through */
	rxp_ct_set_liberal(ct, true);
	CHECK(rxp_ct_config(ct)->tcp_liberal);
	n = tcp_pkt(b, &c.f, 0, c.nxt[0] + 100000000, c.nxt[1], ACK | PSH, 65535, 100, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	n = tcp_pkt(b, &c.f, 0, c.nxt[0], c.nxt[1] + 5000, ACK, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	rxp_ct_set_liberal(ct, false);
	n = tcp_pkt(b, &c.f, 0, c.nxt[0] + 100000000, c.nxt[1], ACK | PSH, 65535, 100, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	/* data acknowledged long ago, sent again: let through, learnt from nothing */
	find_view(&c.f, &v);
	n = tcp_pkt(b, &c.f, 0, c.nxt[0] - 50000000, c.nxt[1], ACK | PSH, 65535, 100, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	{
		struct rxp_ct_view w;

		find_view(&c.f, &w);
		CHECK_EQ(w.packets[0], v.packets[0]);
	}
	/* in the window, the connection goes on */
	CHECK_EQ(tc_send(&c, 0, ACK | PSH, 1400), EST);
	CHECK_EQ(tc_send(&c, 1, ACK, 0), EST);
	CHECK_EQ(tcp_state(&c.f), RXP_CT_TCP_ESTABLISHED);
	end();
}

static void test_tcp_rst(void)
{
	struct tc c = tc4(ip(10, 0, 0, 2), ip(10, 0, 1, 2), 40000, 80);
	struct tc d = tc4(ip(10, 0, 0, 3), ip(10, 0, 1, 2), 40000, 80);
	struct tc e = tc4(ip(10, 0, 0, 4), ip(10, 0, 1, 2), 40000, 80);
	struct rxp_ct_view v;
	struct rxp_ct_ref r;
	uint8_t b[256];
	unsigned n;
	uint64_t deleted;

	begin(64, 1);
	tc_open(&c);
	CHECK_EQ(tc_send(&c, 0, ACK | PSH, 100), EST);
	CHECK_EQ(tc_send(&c, 1, ACK | PSH, 100), EST);
	CHECK_EQ(tc_send(&c, 0, ACK, 0), EST);
	/* a RST just where the other end expects it: closed, tcp_close */
	CHECK_EQ(tc_send(&c, 1, RST | ACK, 0), EST);
	CHECK_EQ(find_view(&c.f, &v), 1);
	CHECK_EQ(v.tcp_state, RXP_CT_TCP_CLOSE);
	CHECK_EQ(v.expires_in_s, 9);
	now_ns += 11 * S_NS;
	CHECK_EQ(rxp_ct_expire(ct, 0, now_ns, 1000), 1);
	CHECK_EQ(find_view(&c.f, NULL), 0);

	/* out of the window: invalid, the connection untouched */
	tc_open(&d);
	n = tcp_pkt(b, &d.f, 0, d.nxt[0] - 100000, 0, RST, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	CHECK_EQ(tcp_state(&d.f), RXP_CT_TCP_ESTABLISHED);
	/* in the window but not the expected sequence: kept open for a challenge ACK (RFC 5961) */
	n = tcp_pkt(b, &d.f, 0, d.nxt[0] + 100, 0, RST, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	CHECK_EQ(tcp_state(&d.f), RXP_CT_TCP_ESTABLISHED);
	/* the exact one closes */
	n = tcp_pkt(b, &d.f, 0, d.nxt[0], 0, RST, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	CHECK_EQ(tcp_state(&d.f), RXP_CT_TCP_CLOSE);

	/* the only answer to a SYN a RST: the entry goes at once */
	deleted = stats().deleted;
	CHECK_EQ(tc_send(&e, 0, SYN, 0), NEW);
	n = tcp_pkt(b, &e.f, 1, 0, e.nxt[0], RST | ACK, 0, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, &r), EST);
	CHECK_EQ(find_view(&e.f, NULL), 0);
	CHECK_EQ(stats().deleted, deleted + 1);
	end();
}

static void test_tcp_close(void)
{
	struct tc c = tc4(ip(10, 0, 0, 2), ip(10, 0, 1, 2), 40000, 80);
	struct tc d = tc4(ip(10, 0, 0, 5), ip(10, 0, 1, 2), 40000, 80);
	struct rxp_ct_view v;

	begin(64, 1);
	tc_open(&c);
	CHECK_EQ(tc_send(&c, 0, ACK | PSH, 10), EST);
	CHECK_EQ(tc_send(&c, 0, FIN | ACK, 0), EST);
	CHECK_EQ(tcp_state(&c.f), RXP_CT_TCP_FIN_WAIT);
	CHECK_EQ(tc_send(&c, 1, ACK, 0), EST);
	CHECK_EQ(tcp_state(&c.f), RXP_CT_TCP_CLOSE_WAIT);
	CHECK_EQ(tc_send(&c, 1, FIN | ACK, 0), EST);
	CHECK_EQ(tcp_state(&c.f), RXP_CT_TCP_LAST_ACK);
	CHECK_EQ(tc_send(&c, 0, ACK, 0), EST);
	CHECK_EQ(find_view(&c.f, &v), 1);
	CHECK_EQ(v.tcp_state, RXP_CT_TCP_TIME_WAIT);
	CHECK_EQ(v.expires_in_s, 119);
	/* tcp_time_wait later it is gone, not before */
	now_ns += 119 * S_NS;
	CHECK_EQ(rxp_ct_expire(ct, 0, now_ns, 1000), 0);
	CHECK_EQ(find_view(&c.f, NULL), 1);
	now_ns += 2 * S_NS;
	CHECK_EQ(rxp_ct_expire(ct, 0, now_ns, 1000), 1);
	CHECK_EQ(find_view(&c.f, NULL), 0);
	CHECK_EQ(stats().entries, 0);

	/* a new SYN on TIME_WAIT reopens: the old entry goes, the SYN is new */
	tc_open(&d);
	CHECK_EQ(tc_send(&d, 0, FIN | ACK, 0), EST);
	CHECK_EQ(tc_send(&d, 1, FIN | ACK, 0), EST);
	CHECK_EQ(tc_send(&d, 0, ACK, 0), EST);
	CHECK_EQ(tcp_state(&d.f), RXP_CT_TCP_TIME_WAIT);
	d.nxt[0] += 1000000;
	CHECK_EQ(tc_send(&d, 0, SYN, 0), NEW);
	CHECK_EQ(last_confirm, 0);
	CHECK_EQ(find_view(&d.f, &v), 1);
	CHECK_EQ(v.tcp_state, RXP_CT_TCP_SYN_SENT);
	CHECK(!v.seen_reply);
	CHECK_EQ(v.packets[0], 1);
	CHECK_EQ(tc_send(&d, 1, SYN | ACK, 0), EST);
	CHECK_EQ(tc_send(&d, 0, ACK, 0), EST);
	CHECK_EQ(tcp_state(&d.f), RXP_CT_TCP_ESTABLISHED);
	/* a FIN crossing the other's FIN: both FIN_WAIT then LAST_ACK, both ACKs: TIME_WAIT */
	CHECK_EQ(tc_send(&d, 0, FIN | ACK, 0), EST);
	CHECK_EQ(tc_send(&d, 1, FIN | ACK, 0), EST);
	CHECK_EQ(tcp_state(&d.f), RXP_CT_TCP_LAST_ACK);
	CHECK_EQ(tc_send(&d, 1, ACK, 0), EST);
	CHECK_EQ(tcp_state(&d.f), RXP_CT_TCP_TIME_WAIT);
	end();
}

static void test_tcp_bad_flags(void)
{
	struct tc c = tc4(ip(10, 0, 0, 2), ip(10, 0, 1, 2), 40000, 80);
	struct tc mid = tc4(ip(10, 0, 0, 3), ip(10, 0, 1, 2), 40001, 80);
	static const uint8_t bad[] = { SYN | FIN, SYN | RST, 0, FIN, FIN | RST | ACK, SYN | FIN | PSH | 0x20, PSH };
	struct rxp_ct_pkt p;
	struct rxp_ct_ref r;
	uint8_t b[256];
	unsigned n;

	begin(64, 1);
	/* without an entry */
	for (unsigned i = 0; i < sizeof(bad); i++) {
		n = tcp_pkt(b, &c.f, 0, 1, 0, bad[i], 65535, 0, NULL, 0);
		CHECK_EQ(feed(b, n, 4, NULL), INV);
	}
	/* a segment of a connection we never saw open: with tcp loose off, not picked up mid-stream */
	rxp_ct_set_loose(ct, false);
	n = tcp_pkt(b, &c.f, 0, 1, 1, ACK, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	n = tcp_pkt(b, &c.f, 0, 1, 1, ACK | PSH, 65535, 100, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	n = tcp_pkt(b, &c.f, 0, 1, 1, SYN | ACK, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	rxp_ct_parse(b, n, 4, &p);
	CHECK_EQ(rxp_ct_confirm(ct, 0, &p, now_ns, &r), -EINVAL);
	CHECK_EQ(r.state, INV);
	CHECK_EQ(stats().entries, 0);
	CHECK_EQ(stats().invalid, sizeof(bad) + 3);
	/* loose (Linux's default): an ACK from the middle of a connection is new, and opens it */
	rxp_ct_set_loose(ct, true);
	n = tcp_pkt(b, &mid.f, 0, 1, 1, ACK | PSH, 65535, 100, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), NEW);
	CHECK_EQ(stats().entries, 1);
	n = tcp_pkt(b, &mid.f, 1, 1, 101, ACK, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	/* the flags no segment can carry stay invalid, loose or not */
	n = tcp_pkt(b, &mid.f, 0, 1, 0, SYN | FIN, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	rxp_ct_flush(ct);
	/* nor do they change an established connection */
	tc_open(&c);
	for (unsigned i = 0; i < sizeof(bad); i++) {
		n = tcp_pkt(b, &c.f, i & 1, c.nxt[i & 1], c.nxt[!(i & 1)], bad[i], 65535, 0, NULL, 0);
		CHECK_EQ(feed(b, n, 4, NULL), INV);
		CHECK_EQ(tcp_state(&c.f), RXP_CT_TCP_ESTABLISHED);
	}
	/* a SYN on an open connection: let through, nothing learnt (Linux ignores it) */
	n = tcp_pkt(b, &c.f, 0, c.nxt[0] + 5, 0, SYN, 65535, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	CHECK_EQ(tcp_state(&c.f), RXP_CT_TCP_ESTABLISHED);
	CHECK_EQ(tc_send(&c, 0, ACK | PSH, 10), EST);
	end();
}

/* ---- UDP, ICMP, others ---- */

static void test_udp(void)
{
	struct flow f = flow4(RXP_IPPROTO_UDP, ip(10, 0, 0, 2), ip(8, 8, 8, 8), 5353, 53);
	struct rxp_ct_view v;
	struct rxp_ct_ref r;
	uint8_t b[256];
	unsigned n0, n1;
	uint8_t b1[256];

	begin(64, 1);
	n0 = udp_pkt(b, &f, 0, 8);
	n1 = udp_pkt(b1, &f, 1, 20);
	CHECK_EQ(feed(b, n0, 4, &r), NEW);
	CHECK_EQ(last_confirm, 0);
	CHECK(r.entry != NONE);
	CHECK_EQ(find_view(&f, &v), 1);
	CHECK(!v.seen_reply);
	CHECK_EQ(v.expires_in_s, 29);
	/* still new in its own direction until a reply comes */
	now_ns += 10 * S_NS;
	CHECK_EQ(feed(b, n0, 4, &r), NEW);
	CHECK(r.entry != NONE);
	CHECK_EQ(last_confirm, 1);
	/* 30 s without a packet: gone, even before expiry reaps it */
	now_ns += 31 * S_NS;
	CHECK_EQ(peek(b, n0, 4, &r), NEW);
	CHECK_EQ(r.entry, NONE);
	CHECK_EQ(peek(b1, n1, 4, &r), NEW);	/* the reply alone opens its own */
	CHECK_EQ(rxp_ct_expire(ct, 0, now_ns, 100), 1);
	CHECK_EQ(find_view(&f, NULL), 0);
	/* again: the reply within 30 s makes it established, not yet a stream */
	CHECK_EQ(feed(b, n0, 4, NULL), NEW);
	now_ns += 1 * S_NS;
	CHECK_EQ(feed(b1, n1, 4, NULL), EST);
	CHECK_EQ(feed(b, n0, 4, NULL), EST);
	CHECK_EQ(find_view(&f, &v), 1);
	CHECK(v.seen_reply && !v.assured);
	CHECK_EQ(v.expires_in_s, 29);
	/* still going 2 s after it began: a stream, assured, udp_stream */
	now_ns += 2 * S_NS;
	CHECK_EQ(feed(b1, n1, 4, NULL), EST);
	CHECK_EQ(find_view(&f, &v), 1);
	CHECK(v.assured);
	CHECK_EQ(v.expires_in_s, 119);
	CHECK_EQ(v.packets[0], 2);
	CHECK_EQ(v.packets[1], 2);
	CHECK_EQ(v.bytes[1], 2 * (20 + 8 + 20));
	now_ns += 100 * S_NS;
	CHECK_EQ(rxp_ct_expire(ct, 0, now_ns, 100), 0);
	CHECK_EQ(feed(b, n0, 4, NULL), EST);
	now_ns += 121 * S_NS;
	CHECK_EQ(rxp_ct_expire(ct, 0, now_ns, 100), 1);
	CHECK_EQ(stats().entries, 0);
	/* another protocol: by addresses, generic timeout */
	{
		struct flow g = flow4(47, ip(10, 0, 0, 2), ip(10, 9, 9, 9), 0, 0);
		unsigned n = ip_hdr(b, &g, 0, 47, 16);

		memset(b + n, 0, 16);
		CHECK_EQ(feed(b, n + 16, 4, NULL), NEW);
		CHECK_EQ(find_view(&g, &v), 1);
		CHECK_EQ(v.expires_in_s, 599);
		n = ip_hdr(b, &g, 1, 47, 16);
		CHECK_EQ(feed(b, n + 16, 4, NULL), EST);
	}
	end();
}

static void test_icmp_echo(void)
{
	struct flow f = flow4(RXP_IPPROTO_ICMP, ip(10, 0, 0, 1), ip(10, 0, 0, 2), 7, 7);
	struct flow f8 = flow4(RXP_IPPROTO_ICMP, ip(10, 0, 0, 1), ip(10, 0, 0, 2), 8, 8);
	struct flow g = flow6(RXP_IPPROTO_ICMP6, "2001:db8::1", "2001:db8::2", 3, 3);
	struct rxp_ct_view v;
	struct rxp_ct_ref r;
	uint8_t b[256];
	unsigned n;

	begin(64, 1);
	n = icmp_pkt(b, &f, 0, RXP_ICMP_ECHO_REQUEST, 7);
	CHECK_EQ(feed(b, n, 4, &r), NEW);
	CHECK_EQ(last_confirm, 0);
	CHECK_EQ(find_view(&f, &v), 1);
	CHECK_EQ(v.expires_in_s, 29);
	CHECK_EQ(v.icmp_type[0], 8);
	CHECK_EQ(v.icmp_type[1], 0);
	n = icmp_pkt(b, &f, 1, RXP_ICMP_ECHO_REPLY, 7);
	CHECK_EQ(feed(b, n, 4, &r), EST);
	CHECK_EQ(r.dir, 1);
	/* another identifier is another connection: an answer alone opens none */
	n = icmp_pkt(b, &f, 1, RXP_ICMP_ECHO_REPLY, 8);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	n = icmp_pkt(b, &f8, 0, RXP_ICMP_ECHO_REQUEST, 8);
	CHECK_EQ(feed(b, n, 4, NULL), NEW);
	CHECK_EQ(last_confirm, 0);
	CHECK_EQ(stats().entries, 2);
	/* a timestamp request with the same identifier is not the echo */
	n = icmp_pkt(b, &f, 0, 13, 7);
	CHECK_EQ(feed(b, n, 4, NULL), NEW);
	CHECK_EQ(last_confirm, 0);
	n = icmp_pkt(b, &f, 1, 14, 7);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	CHECK_EQ(stats().entries, 3);
	/* messages that are neither query nor error: no connection */
	n = icmp_pkt(b, &f, 0, 9, 0);	/* router advertisement */
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	n = icmp_pkt(b, &f, 0, 40, 0);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	/* ICMPv6 echo; Neighbor Discovery and MLD are not tracked at all */
	n = icmp_pkt(b, &g, 0, RXP_ICMP6_ECHO_REQUEST, 3);
	CHECK_EQ(feed(b, n, 6, NULL), NEW);
	n = icmp_pkt(b, &g, 1, RXP_ICMP6_ECHO_REPLY, 3);
	CHECK_EQ(feed(b, n, 6, NULL), EST);
	CHECK_EQ(find_view(&g, &v), 1);
	CHECK_EQ(v.expires_in_s, 29);
	for (uint8_t t = 130; t <= 136; t++) {
		n = icmp_pkt(b, &g, 0, t, 0);
		CHECK_EQ(feed(b, n, 6, NULL), UNT);
	}
	n = icmp_pkt(b, &g, 0, 143, 0);
	CHECK_EQ(feed(b, n, 6, NULL), UNT);
	n = icmp_pkt(b, &g, 0, 200, 0);
	CHECK_EQ(feed(b, n, 6, NULL), INV);
	CHECK_EQ(stats().entries, 4);
	now_ns += 31 * S_NS;
	CHECK_EQ(rxp_ct_expire(ct, 0, now_ns, 100), 4);
	end();
}

static void test_icmp_related(void)
{
	struct flow u = flow4(RXP_IPPROTO_UDP, ip(10, 0, 0, 2), ip(10, 0, 1, 2), 5000, 53);
	struct flow u2 = flow4(RXP_IPPROTO_UDP, ip(10, 0, 0, 2), ip(10, 0, 1, 2), 5000, 54);
	struct flow e = flow4(RXP_IPPROTO_ICMP, ip(10, 0, 0, 2), ip(10, 0, 1, 2), 9, 9);
	struct tc t = tc4(ip(10, 0, 0, 2), ip(10, 0, 1, 2), 40000, 80);
	uint8_t router[4], other[4], b[4096], q[2048];
	struct rxp_ct_ref r;
	unsigned n, qn;

	put32(router, ip(10, 0, 5, 5));
	put32(other, ip(10, 9, 9, 9));
	begin(64, 1);
	n = udp_pkt(b, &u, 0, 20);
	CHECK_EQ(feed(b, n, 4, NULL), NEW);
	n = udp_pkt(b, &u, 1, 20);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	/* port unreachable from b for a's datagram: related, travelling in the reply direction */
	qn = udp_pkt(q, &u, 0, 20);
	n = icmp_err(b, 4, u.b, u.a, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_PORT, q, qn);
	CHECK_EQ(feed(b, n, 4, &r), REL);
	CHECK_EQ(r.dir, 1);
	CHECK(r.entry != NONE);
	/* time exceeded from a router on the way, quoting only the IP header and 8 bytes */
	n = icmp_err(b, 4, router, u.a, RXP_ICMP_TIME_EXCEEDED, 0, q, RXP_IP4_HLEN + 8);
	CHECK_EQ(feed(b, n, 4, &r), REL);
	CHECK_EQ(r.dir, 1);
	/* about b's answer, to b: related in the original direction */
	qn = udp_pkt(q, &u, 1, 20);
	n = icmp_err(b, 4, router, u.b, RXP_ICMP_TIME_EXCEEDED, 0, q, qn);
	CHECK_EQ(feed(b, n, 4, &r), REL);
	CHECK_EQ(r.dir, 0);
	/* sent to someone who never sent what it quotes */
	qn = udp_pkt(q, &u, 0, 20);
	n = icmp_err(b, 4, router, other, RXP_ICMP_TIME_EXCEEDED, 0, q, qn);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	/* quoting nothing tracked */
	qn = udp_pkt(q, &u2, 0, 20);
	n = icmp_err(b, 4, u2.b, u2.a, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_PORT, q, qn);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	/* quoting less than 8 bytes of the transport header, or a later fragment */
	qn = udp_pkt(q, &u, 0, 20);
	n = icmp_err(b, 4, u.b, u.a, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_PORT, q, RXP_IP4_HLEN + 4);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	put16(q + 6, 100);
	n = icmp_err(b, 4, u.b, u.a, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_PORT, q, qn);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	CHECK_EQ(stats().entries, 1);
	/* TCP: the quoted segment's header, cut after 8 bytes */
	tc_open(&t);
	qn = tcp_pkt(q, &t.f, 0, t.nxt[0], t.nxt[1], ACK | PSH, 65535, 1000, NULL, 0);
	n = icmp_err(b, 4, router, t.f.a, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_FRAG_NEEDED, q, RXP_IP4_HLEN + 8);
	CHECK_EQ(feed(b, n, 4, &r), REL);
	CHECK_EQ(tcp_state(&t.f), RXP_CT_TCP_ESTABLISHED);
	/* an error about an echo request */
	n = icmp_pkt(b, &e, 0, RXP_ICMP_ECHO_REQUEST, 9);
	CHECK_EQ(feed(b, n, 4, NULL), NEW);
	qn = icmp_pkt(q, &e, 0, RXP_ICMP_ECHO_REQUEST, 9);
	n = icmp_err(b, 4, router, e.a, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_HOST, q, qn);
	CHECK_EQ(feed(b, n, 4, &r), REL);
	/* ... and about another identifier */
	qn = icmp_pkt(q, &e, 0, RXP_ICMP_ECHO_REQUEST, 10);
	n = icmp_err(b, 4, router, e.a, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_HOST, q, qn);
	CHECK_EQ(feed(b, n, 4, NULL), INV);
	end();
}

static void test_icmp6_related(void)
{
	struct flow f = flow6(RXP_IPPROTO_TCP, "2001:db8:1::2", "2001:db8:2::2", 40000, 443);
	struct flow g = flow6(RXP_IPPROTO_TCP, "2001:db8:1::2", "2001:db8:2::2", 40001, 443);
	struct flow u = flow6(RXP_IPPROTO_UDP, "2001:db8:1::2", "2001:db8:2::2", 5000, 53);
	struct tc c = { .f = f, .nxt = { 10, 20 }, .win = 65535 };
	uint8_t router[16], b[4096], q[2048], ext[8];
	struct rxp_ct_ref r;
	unsigned n, qn;

	inet_pton(AF_INET6, "2001:db8:ff::1", router);
	begin(64, 1);
	tc_open(&c);
	/* time exceeded from a router, for a's segment */
	qn = tcp_pkt(q, &f, 0, c.nxt[0], c.nxt[1], ACK, 65535, 100, NULL, 0);
	n = icmp_err(b, 6, router, f.a, RXP_ICMP6_TIME_EXCEEDED, 0, q, qn);
	CHECK_EQ(feed(b, n, 6, &r), REL);
	CHECK_EQ(r.dir, 1);
	/* port unreachable from b, quoting 8 bytes of the header only */
	n = icmp_err(b, 6, f.b, f.a, RXP_ICMP6_DEST_UNREACH, RXP_ICMP6_UNREACH_PORT, q, RXP_IP6_HLEN + 8);
	CHECK_EQ(feed(b, n, 6, &r), REL);
	/* packet too big for b's segment, to b */
	qn = tcp_pkt(q, &f, 1, c.nxt[1], c.nxt[0], ACK, 65535, 1400, NULL, 0);
	n = icmp_err(b, 6, router, f.b, RXP_ICMP6_PKT_TOO_BIG, 0, q, 200);
	CHECK_EQ(feed(b, n, 6, &r), REL);
	CHECK_EQ(r.dir, 0);
	/* the quoted packet's extension headers are followed */
	n = udp_pkt(b, &u, 0, 10);
	CHECK_EQ(feed(b, n, 6, NULL), NEW);
	memset(ext, 0, sizeof(ext));
	ext[0] = RXP_IPPROTO_UDP;
	{
		uint8_t l4[18];

		put16(l4, 5000);
		put16(l4 + 2, 53);
		put16(l4 + 4, 18);
		put16(l4 + 6, 0);
		memset(l4 + 8, 0, 10);
		qn = ip6_with(q, &u, 0, RXP_IPPROTO_DSTOPTS, ext, 8, l4, 18);
	}
	n = icmp_err(b, 6, router, u.a, RXP_ICMP6_PARAM_PROB, RXP_ICMP6_PARAM_OPTION, q, qn);
	CHECK_EQ(feed(b, n, 6, &r), REL);
	/* nothing tracked quoted */
	qn = tcp_pkt(q, &g, 0, 1, 1, ACK, 65535, 0, NULL, 0);
	n = icmp_err(b, 6, router, g.a, RXP_ICMP6_TIME_EXCEEDED, 0, q, qn);
	CHECK_EQ(feed(b, n, 6, NULL), INV);
	/* a quoted header cut inside the IPv6 header */
	n = icmp_err(b, 6, router, f.a, RXP_ICMP6_TIME_EXCEEDED, 0, q, 30);
	CHECK_EQ(feed(b, n, 6, NULL), INV);
	end();
}

static void test_ipv6_tcp(void)
{
	struct flow f = flow6(RXP_IPPROTO_TCP, "2001:db8::1", "2001:db8::2", 1111, 443);
	uint8_t b[1024], seg[2048], ext[16];
	uint32_t nxt[2] = { 5, 9 };
	unsigned n, sl;

	begin(64, 1);
	memset(ext, 0, sizeof(ext));
	ext[0] = RXP_IPPROTO_DSTOPTS;
	ext[8] = RXP_IPPROTO_TCP;
	/* a whole connection behind hop-by-hop and destination options */
	sl = tcp_hdr(seg, 1111, 443, nxt[0], 0, SYN, 8000, syn_opts, sizeof(syn_opts), 0);
	n = ip6_with(b, &f, 0, RXP_IPPROTO_HOPOPTS, ext, 16, seg, sl);
	CHECK_EQ(feed(b, n, 6, NULL), NEW);
	CHECK_EQ(last_confirm, 0);
	sl = tcp_hdr(seg, 443, 1111, nxt[1], nxt[0] + 1, SYN | ACK, 8000, syn_opts, sizeof(syn_opts), 0);
	n = ip6_with(b, &f, 1, RXP_IPPROTO_HOPOPTS, ext, 16, seg, sl);
	CHECK_EQ(feed(b, n, 6, NULL), EST);
	sl = tcp_hdr(seg, 1111, 443, nxt[0] + 1, nxt[1] + 1, ACK, 8000, NULL, 0, 0);
	n = ip6_with(b, &f, 0, RXP_IPPROTO_HOPOPTS, ext, 16, seg, sl);
	CHECK_EQ(feed(b, n, 6, NULL), EST);
	CHECK_EQ(tcp_state(&f), RXP_CT_TCP_ESTABLISHED);
	sl = tcp_hdr(seg, 1111, 443, nxt[0] + 1, nxt[1] + 1, ACK | PSH, 8000, NULL, 0, 700);
	n = ip6_with(b, &f, 0, RXP_IPPROTO_HOPOPTS, ext, 16, seg, sl);
	CHECK_EQ(feed(b, n, 6, NULL), EST);
	/* ESP: by addresses; No Next Header: nothing Linux can track */
	n = ip6_with(b, &f, 0, 50, seg, 16, NULL, 0);
	CHECK_EQ(feed(b, n, 6, NULL), NEW);
	n = ip6_with(b, &f, 1, 50, seg, 16, NULL, 0);
	CHECK_EQ(feed(b, n, 6, NULL), EST);
	n = ip6_with(b, &f, 0, RXP_IPPROTO_NONE, NULL, 0, NULL, 0);
	CHECK_EQ(feed(b, n, 6, NULL), INV);
	CHECK_EQ(stats().entries, 2);
	CHECK_EQ(stats().invalid, 1);
	end();
}

/* ---- the table ---- */

static void test_table_full(void)
{
	struct flow f[80];
	uint8_t b[256];
	struct rxp_ct_stats s;
	unsigned n, live = 0;

	begin(64, 1);
	for (unsigned i = 0; i < 80; i++)
		f[i] = flow4(RXP_IPPROTO_UDP, ip(10, 1, i / 256, i % 256), ip(10, 2, 0, 1), 1000, 53);
	for (unsigned i = 0; i < 64; i++) {
		n = udp_pkt(b, &f[i], 0, 4);
		CHECK_EQ(feed(b, n, 4, NULL), NEW);
		CHECK_EQ(last_confirm, 0);
	}
	CHECK_EQ(stats().entries, 64);
	/* full of unanswered ones: one goes for each new one */
	for (unsigned i = 64; i < 70; i++) {
		n = udp_pkt(b, &f[i], 0, 4);
		CHECK_EQ(feed(b, n, 4, NULL), NEW);
		CHECK_EQ(last_confirm, 0);
	}
	s = stats();
	CHECK_EQ(s.entries, 64);
	CHECK_EQ(s.max, 64);
	CHECK_EQ(s.early_drop, 6);
	CHECK_EQ(s.inserted, 70);
	CHECK_EQ(s.deleted, 6);
	CHECK_EQ(find_view(&f[69], NULL), 1);
	/* answered and still going 2 s later: assured, none may go */
	for (unsigned i = 0; i < 70; i++) {
		if (find_view(&f[i], NULL) != 1)
			continue;
		live++;
		n = udp_pkt(b, &f[i], 1, 4);
		CHECK_EQ(feed(b, n, 4, NULL), EST);
	}
	CHECK_EQ(live, 64);
	now_ns += 3 * S_NS;
	for (unsigned i = 0; i < 70; i++) {
		if (find_view(&f[i], NULL) != 1)
			continue;
		n = udp_pkt(b, &f[i], 0, 4);
		CHECK_EQ(feed(b, n, 4, NULL), EST);
	}
	n = udp_pkt(b, &f[75], 0, 4);
	CHECK_EQ(feed(b, n, 4, NULL), NEW);
	CHECK_EQ(last_confirm, -ENOSPC);
	s = stats();
	CHECK_EQ(s.table_full, 1);
	CHECK_EQ(s.entries, 64);
	CHECK_EQ(s.early_drop, 6);
	/* the connections there go on */
	n = udp_pkt(b, &f[69], 1, 4);
	CHECK_EQ(feed(b, n, 4, NULL), EST);
	/* an expired one makes room again, without an early drop */
	now_ns += 200 * S_NS;
	CHECK_EQ(feed(b, n, 4, NULL), NEW);
	CHECK_EQ(last_confirm, 0);
	CHECK_EQ(stats().early_drop, 6);
	end();
}

static void test_expiry_budget(void)
{
	struct flow f;
	uint8_t b[256];
	struct rxp_ct_ref r;
	unsigned n, total = 0;

	begin(4096, 1);
	for (unsigned i = 0; i < 1000; i++) {
		f = flow4(RXP_IPPROTO_UDP, ip(10, 1, i / 256, i % 256), ip(10, 2, 0, 1), 1000, 53);
		n = udp_pkt(b, &f, 0, 4);
		CHECK_EQ(feed(b, n, 4, NULL), NEW);
	}
	CHECK_EQ(stats().entries, 1000);
	now_ns += 31 * S_NS;
	/* expired but not reaped: absent to a lookup */
	f = flow4(RXP_IPPROTO_UDP, ip(10, 1, 0, 0), ip(10, 2, 0, 1), 1000, 53);
	n = udp_pkt(b, &f, 0, 4);
	CHECK_EQ(peek(b, n, 4, &r), NEW);
	CHECK_EQ(r.entry, NONE);
	CHECK_EQ(stats().entries, 1000);
	/* at most the budget per call */
	for (int i = 0; i < 10; i++) {
		unsigned got = rxp_ct_expire(ct, 0, now_ns, 100);

		CHECK_EQ(got, 100);
		total += got;
		CHECK_EQ(stats().entries, 1000 - total);
	}
	CHECK_EQ(rxp_ct_expire(ct, 0, now_ns, 100), 0);
	CHECK_EQ(stats().deleted, 1000);
	/* the entries are reused */
	for (unsigned i = 0; i < 1000; i++) {
		f = flow4(RXP_IPPROTO_UDP, ip(10, 3, i / 256, i % 256), ip(10, 2, 0, 1), 1000, 53);
		n = udp_pkt(b, &f, 0, 4);
		CHECK_EQ(feed(b, n, 4, NULL), NEW);
		CHECK_EQ(last_confirm, 0);
	}
	CHECK_EQ(stats().entries, 1000);
	rxp_ct_flush(ct);
	CHECK_EQ(stats().entries, 0);
	CHECK_EQ(find_view(&f, NULL), 0);
	end();
}

/* rxp_ct_track_bulk against one at a time, over a mix of everything. */
static void test_bulk(void)
{
	enum { N = 300 };
	static uint8_t bufs[N][256];
	static struct rxp_ct_pkt pk[N];
	const struct rxp_ct_pkt *pp[N];
	struct rxp_ct_ref refs[N], one;
	static struct tc c[N];
	unsigned n;

	begin(1024, 1);
	for (unsigned i = 0; i < N; i++) {
		c[i] = tc4(ip(10, 4, i / 256, i % 256), ip(10, 5, 0, 1), 4000, 80);
		if (i % 3)
			tc_open(&c[i]);
	}
	/* data from both sides, and every third one never opened (new: tcp loose picks it up) */
	for (unsigned i = 0; i < N; i++) {
		int dir = i & 1;

		n = tcp_pkt(bufs[i], &c[i].f, dir, c[i].nxt[dir], c[i].nxt[!dir], ACK | PSH, 65535, 10, NULL, 0);
		rxp_ct_parse(bufs[i], n, 4, &pk[i]);
		pp[i] = &pk[i];
	}
	rxp_ct_enter(ct, 0);
	rxp_ct_track_bulk(ct, 0, pp, N, now_ns, refs);
	rxp_ct_leave(ct, 0);
	for (unsigned i = 0; i < N; i++) {
		CHECK_EQ(refs[i].state, i % 3 ? EST : NEW);
		CHECK_EQ(refs[i].entry == NONE, !(i % 3));
		if (i % 3)
			CHECK_EQ(refs[i].dir, i & 1);
	}
	/* the same packets again one at a time: the same answers (in window: resent data) */
	for (unsigned i = 0; i < N; i++) {
		rxp_ct_track(ct, 0, pp[i], now_ns, &one);
		CHECK_EQ(one.state, refs[i].state);
		CHECK_EQ(one.entry, refs[i].entry);
	}
	end();
}

/* ---- two workers ---- */

#define TN 6000		/* connections */
#define TROUNDS 12	/* segments per direction */

static struct tc tconns[TN];
static uint32_t tack[TN][2];	/* what each side acknowledges: the other's sequence when both began */
static uint64_t tbad[2];

struct worker_arg {
	unsigned w;
};

/* Worker @w sends direction @w's data of every connection, 64 at a time. */
static void *data_worker(void *arg)
{
	unsigned w = ((struct worker_arg *)arg)->w;
	static struct rxp_ct_pkt pk[2][64];
	const struct rxp_ct_pkt *pp[64];
	struct rxp_ct_ref refs[64];
	uint8_t b[256];

	for (unsigned round = 0; round < TROUNDS; round++) {
		for (unsigned base = 0; base < TN; base += 64) {
			unsigned m = RXP_MIN(64u, TN - base);

			for (unsigned k = 0; k < m; k++) {
				struct tc *c = &tconns[base + k];
				unsigned n = tcp_pkt(b, &c->f, (int)w, c->nxt[w], tack[base + k][!w], ACK | PSH, 65535,
						     100, NULL, 0);

				rxp_ct_parse(b, n, 4, &pk[w][k]);
				pp[k] = &pk[w][k];
				c->nxt[w] += 100;
			}
			rxp_ct_enter(ct, w);
			rxp_ct_track_bulk(ct, w, pp, m, now_ns, refs);
			rxp_ct_leave(ct, w);
			for (unsigned k = 0; k < m; k++)
				tbad[w] += refs[k].state != EST;
			if (w == 1 && base % 1024 == 0)
				rxp_ct_expire(ct, w, now_ns, 512);
		}
	}
	return NULL;
}

/* Worker 0 closes every connection while worker 1 still sends data the other way. */
static void *close_worker(void *arg)
{
	unsigned w = ((struct worker_arg *)arg)->w;
	uint8_t b[256];

	for (unsigned round = 0; round < (w ? 4u : 1u); round++) {
		for (unsigned i = 0; i < TN; i++) {
			struct tc *c = &tconns[i];
			struct rxp_ct_pkt p;
			struct rxp_ct_ref r;
			unsigned n = w ? tcp_pkt(b, &c->f, 1, c->nxt[1], tack[i][0], ACK | PSH, 65535, 100, NULL, 0)
				       : tcp_pkt(b, &c->f, 0, c->nxt[0], tack[i][1], FIN | ACK, 65535, 0, NULL, 0);

			c->nxt[w] += w ? 100 : 1;
			rxp_ct_parse(b, n, 4, &p);
			rxp_ct_enter(ct, w);
			tbad[w] += rxp_ct_track(ct, w, &p, now_ns, &r) != EST;
			rxp_ct_leave(ct, w);
		}
	}
	return NULL;
}

struct timer_check {
	unsigned bad;
};

static int timer_cb(const struct rxp_ct_view *v, void *arg)
{
	struct timer_check *x = arg;
	uint32_t limit = v->tcp_state == RXP_CT_TCP_FIN_WAIT ? 120 : v->tcp_state == RXP_CT_TCP_CLOSE_WAIT ? 60 : 0;

	x->bad += !limit || v->expires_in_s > limit;
	return 0;
}

#define UN 4000		/* UDP flows both sides open at once */

static void *race_worker(void *arg)
{
	unsigned w = ((struct worker_arg *)arg)->w;
	uint8_t b[256];

	for (unsigned i = 0; i < UN; i++) {
		struct flow f = flow4(RXP_IPPROTO_UDP, ip(10, 6, i / 256, i % 256), ip(10, 7, 0, 1), 7000, 53);
		struct rxp_ct_pkt p;
		struct rxp_ct_ref r;
		unsigned n = udp_pkt(b, &f, (int)w, 8);

		rxp_ct_parse(b, n, 4, &p);
		rxp_ct_enter(ct, w);
		if (rxp_ct_track(ct, w, &p, now_ns, &r) == NEW && r.entry == NONE &&
		    rxp_ct_confirm(ct, w, &p, now_ns, &r))
			tbad[w]++;
		rxp_ct_leave(ct, w);
	}
	return NULL;
}

static uint64_t churn_now;
static int churn_done;

/* Worker 0 opens short flows as time goes on; worker 1 tracks old ones and expires. */
static void *churn_worker(void *arg)
{
	unsigned w = ((struct worker_arg *)arg)->w;
	uint8_t b[256];

	for (unsigned i = 0; w == 0 && i < 60000; i++) {
		struct flow f = flow4(RXP_IPPROTO_UDP, ip(10, 8, (i >> 8) & 255, i & 255), ip(10, 9, 0, 1),
				      (uint16_t)(1024 + (i >> 16)), 53);
		uint64_t now = __atomic_add_fetch(&churn_now, 50000, __ATOMIC_RELAXED);	/* 50 us a flow */
		struct rxp_ct_pkt p;
		struct rxp_ct_ref r;
		unsigned n = udp_pkt(b, &f, (int)(i & 1), 8);

		rxp_ct_parse(b, n, 4, &p);
		rxp_ct_enter(ct, w);
		if (rxp_ct_track(ct, w, &p, now, &r) == NEW && r.entry == NONE)
			rxp_ct_confirm(ct, w, &p, now, &r);
		rxp_ct_leave(ct, w);
		if (i % 128 == 0)
			rxp_ct_expire(ct, w, now, 64);
	}
	if (w == 0)
		__atomic_store_n(&churn_done, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; w == 1 && !__atomic_load_n(&churn_done, __ATOMIC_ACQUIRE); i++) {
		uint64_t now = __atomic_load_n(&churn_now, __ATOMIC_RELAXED);
		struct flow f = flow4(RXP_IPPROTO_UDP, ip(10, 8, (i >> 8) & 255, i & 255), ip(10, 9, 0, 1), 1024, 53);
		struct rxp_ct_pkt p;
		struct rxp_ct_ref r;
		unsigned n = udp_pkt(b, &f, 1, 8);

		rxp_ct_parse(b, n, 4, &p);
		rxp_ct_enter(ct, w);
		rxp_ct_track(ct, w, &p, now, &r);
		rxp_ct_leave(ct, w);
		rxp_ct_expire(ct, w, now, 32);
	}
	return NULL;
}

static void run_two(void *(*fn)(void *))
{
	pthread_t th[2];
	struct worker_arg a[2] = { { 0 }, { 1 } };

	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, fn, &a[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
}

static int count_cb(const struct rxp_ct_view *v, void *arg)
{
	(void)v;
	(*(unsigned *)arg)++;
	return 0;
}

static void test_two_workers(void)
{
	struct rxp_ct_stats s;
	unsigned walked = 0, bad_state = 0, bad_count = 0;
	uint64_t inv;

	begin(16384, 2);
	for (unsigned i = 0; i < TN; i++) {
		tconns[i] = tc4(ip(10, 10, i / 256, i % 256), ip(10, 11, 0, 1), (uint16_t)(2000 + i % 7), 80);
		tc_open(&tconns[i]);
		tack[i][0] = tconns[i].nxt[0];
		tack[i][1] = tconns[i].nxt[1];
	}
	inv = stats().invalid;
	CHECK_EQ(inv, 0);
	/* the two directions at once, each on its own worker */
	tbad[0] = tbad[1] = 0;
	run_two(data_worker);
	CHECK_EQ(tbad[0], 0);
	CHECK_EQ(tbad[1], 0);
	for (unsigned i = 0; i < TN; i++) {
		struct rxp_ct_view v;

		if (find_view(&tconns[i].f, &v) != 1) {
			bad_count++;
			continue;
		}
		bad_state += v.tcp_state != RXP_CT_TCP_ESTABLISHED;
		bad_count += v.packets[0] != 2 + TROUNDS || v.packets[1] != 1 + TROUNDS;
	}
	CHECK_EQ(bad_state, 0);
	CHECK_EQ(bad_count, 0);
	CHECK_EQ(stats().invalid, 0);
	/* FINs one way (locked), data the other (lock-free), at once */
	tbad[0] = tbad[1] = 0;
	run_two(close_worker);
	CHECK_EQ(tbad[0], 0);
	CHECK_EQ(tbad[1], 0);
	CHECK_EQ(stats().invalid, 0);
	bad_state = 0;
	for (unsigned i = 0; i < TN; i++) {
		int st = tcp_state(&tconns[i].f);

		bad_state += st != RXP_CT_TCP_FIN_WAIT && st != RXP_CT_TCP_CLOSE_WAIT;
	}
	CHECK_EQ(bad_state, 0);
	{
		/* a timer a lock-free update left longer than the state allows is cut by expiry */
		struct timer_check x = { 0 };

		CHECK_EQ(rxp_ct_expire(ct, 0, now_ns, 1u << 20), 0);
		rxp_ct_walk(ct, now_ns, timer_cb, &x);
		CHECK_EQ(x.bad, 0);
	}
	/* both ends open the same flows at the same time: one entry each */
	tbad[0] = tbad[1] = 0;
	run_two(race_worker);
	CHECK_EQ(tbad[0] + tbad[1], 0);
	s = stats();
	CHECK_EQ(s.entries, TN + UN);
	rxp_ct_walk(ct, now_ns, count_cb, &walked);
	CHECK_EQ(walked, TN + UN);
	/* churn: flows come and go (1 s timeout) while the other worker reads and expires */
	rxp_ct_flush(ct);
	CHECK_EQ(stats().entries, 0);
	rxp_ct_set_timeout(ct, RXP_CT_TO_UDP, 1);
	churn_now = now_ns;
	run_two(churn_worker);
	s = stats();
	CHECK(s.entries <= s.max);
	CHECK_EQ(s.inserted - s.deleted, s.entries);
	walked = 0;
	rxp_ct_walk(ct, churn_now, count_cb, &walked);
	CHECK(walked <= s.entries);
	now_ns = churn_now + 10 * S_NS;
	for (int i = 0; i < 100 && stats().entries; i++)
		rxp_ct_expire(ct, 0, now_ns, 4096);
	CHECK_EQ(stats().entries, 0);
	end();
}

/* ---- conntrack -L ---- */

static char line[512];

static int line_cb(const struct rxp_ct_view *v, void *arg)
{
	(void)arg;
	rxp_ct_view_format(v, line, sizeof(line));
	return 1;
}

/* The one entry's line. */
static const char *the_line(void)
{
	line[0] = '\0';
	rxp_ct_walk(ct, now_ns, line_cb, NULL);
	return line;
}

#define CHECK_LINE(want) do { \
	const char *_got = the_line(); \
	if (strcmp(_got, (want))) { \
		printf("  got:  %s\n  want: %s\n", _got, (want)); \
		CHECK(0); \
	} \
} while (0)

static void test_format(void)
{
	struct tc c = tc4(ip(10, 0, 0, 2), ip(10, 0, 1, 2), 40000, 80);
	struct flow u = flow4(RXP_IPPROTO_UDP, ip(10, 0, 0, 2), ip(8, 8, 8, 8), 5353, 53);
	struct flow e = flow4(RXP_IPPROTO_ICMP, ip(10, 0, 0, 1), ip(10, 0, 0, 2), 7, 7);
	struct flow g = flow6(RXP_IPPROTO_ICMP6, "2001:db8::1", "2001:db8::2", 3, 3);
	struct tc t6 = { .f = flow6(RXP_IPPROTO_TCP, "2001:db8::1", "2001:db8:0:1::2", 1, 2), .nxt = { 1, 2 }, .win = 65535 };
	struct flow o = flow4(99, ip(192, 168, 1, 1), ip(192, 168, 1, 2), 0, 0);
	struct rxp_ct_view v;
	uint8_t b[256];
	char small[16];
	unsigned n;
	int len;

	begin(64, 1);
	tc_open(&c);
	CHECK_LINE("tcp      6 431999 ESTABLISHED src=10.0.0.2 dst=10.0.1.2 sport=40000 dport=80 packets=2 bytes=92 "
		   "src=10.0.1.2 dst=10.0.0.2 sport=80 dport=40000 packets=1 bytes=52 [ASSURED]");
	/* cut to the buffer, the whole length said */
	find_view(&c.f, &v);
	len = rxp_ct_view_format(&v, small, sizeof(small));
	CHECK_EQ(len, strlen(line));
	CHECK(!strcmp(small, "tcp      6 4319"));
	rxp_ct_flush(ct);

	n = udp_pkt(b, &u, 0, 8);
	feed(b, n, 4, NULL);
	CHECK_LINE("udp      17 29 src=10.0.0.2 dst=8.8.8.8 sport=5353 dport=53 packets=1 bytes=36 [UNREPLIED] "
		   "src=8.8.8.8 dst=10.0.0.2 sport=53 dport=5353 packets=0 bytes=0");
	rxp_ct_flush(ct);

	n = icmp_pkt(b, &e, 0, RXP_ICMP_ECHO_REQUEST, 7);
	feed(b, n, 4, NULL);
	n = icmp_pkt(b, &e, 1, RXP_ICMP_ECHO_REPLY, 7);
	feed(b, n, 4, NULL);
	CHECK_LINE("icmp     1 29 src=10.0.0.1 dst=10.0.0.2 type=8 code=0 id=7 packets=1 bytes=28 "
		   "src=10.0.0.2 dst=10.0.0.1 type=0 code=0 id=7 packets=1 bytes=28");
	rxp_ct_flush(ct);

	n = icmp_pkt(b, &g, 0, RXP_ICMP6_ECHO_REQUEST, 3);
	feed(b, n, 6, NULL);
	CHECK_LINE("icmpv6   58 29 src=2001:db8::1 dst=2001:db8::2 type=128 code=0 id=3 packets=1 bytes=48 [UNREPLIED] "
		   "src=2001:db8::2 dst=2001:db8::1 type=129 code=0 id=3 packets=0 bytes=0");
	rxp_ct_flush(ct);

	tc_send(&t6, 0, SYN, 0);
	CHECK_LINE("tcp      6 119 SYN_SENT src=2001:db8::1 dst=2001:db8:0:1::2 sport=1 dport=2 packets=1 bytes=72 "
		   "[UNREPLIED] src=2001:db8:0:1::2 dst=2001:db8::1 sport=2 dport=1 packets=0 bytes=0");
	rxp_ct_flush(ct);

	n = ip_hdr(b, &o, 0, 99, 12);
	memset(b + n, 0, 12);
	feed(b, n + 12, 4, NULL);
	CHECK_LINE("unknown  99 599 src=192.168.1.1 dst=192.168.1.2 packets=1 bytes=32 [UNREPLIED] "
		   "src=192.168.1.2 dst=192.168.1.1 packets=0 bytes=0");
	end();
	CHECK(!strcmp(rxp_ct_tcp_state_name(RXP_CT_TCP_SYN_SENT2), "SYN_SENT2"));
	CHECK(!strcmp(rxp_ct_tcp_state_name(99), "?"));
}

static void test_config(void)
{
	struct rxp_ct_config cfg;

	rxp_ct_config_default(&cfg);
	CHECK_EQ(cfg.max, RXP_CT_MAX_DEFAULT);
	CHECK_EQ(cfg.timeout[RXP_CT_TO_TCP_ESTABLISHED], 432000);
	CHECK_EQ(cfg.timeout[RXP_CT_TO_UDP_STREAM], 120);
	CHECK(!cfg.tcp_liberal);
	CHECK_EQ(rxp_ct_timeout_of("tcp_established"), RXP_CT_TO_TCP_ESTABLISHED);
	CHECK_EQ(rxp_ct_timeout_of("tcp_unacknowledged"), RXP_CT_TO_TCP_UNACK);
	CHECK_EQ(rxp_ct_timeout_of("nope"), -1);
	CHECK(!strcmp(rxp_ct_timeout_name(RXP_CT_TO_GENERIC), "generic"));
	CHECK_EQ(rxp_ct_timeout_default(RXP_CT_TO_ICMPV6), 30);
	errno = 0;
	cfg.max = 0;
	CHECK(!rxp_ct_create(&cfg, 1));
	CHECK_EQ(errno, EINVAL);
	cfg.max = 16;
	CHECK(!rxp_ct_create(&cfg, 0));
	CHECK(!rxp_ct_create(&cfg, RXP_CT_WORKERS_MAX + 1));
	/* the default table is small */
	rxp_ct_config_default(&cfg);
	ct = rxp_ct_create(&cfg, 1);
	CHECK(ct != NULL);
	CHECK(rxp_ct_memory(ct) < 12u << 20);
	end();
}

/* ---- throughput (RXP_CT_BENCH=1): figures, not a test ---- */

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rs = 88172645463325252ull;

static uint64_t xrand(void)
{
	return check_xorshift(&rs);
}

/* Connection @i's packet in direction @dir, as parse would leave it. */
static void bench_pkt(struct rxp_ct_pkt *p, uint8_t proto, uint32_t i, int dir, uint8_t flags, uint32_t seq,
		      uint32_t ack, uint16_t win, uint32_t len)
{
	uint8_t a[4], b[4];

	memset(p, 0, sizeof(*p));
	put32(a, 0x0a000000u | i);
	put32(b, ip(172, 16, 0, 1));
	p->t.family = 4;
	p->t.proto = proto;
	memcpy(p->t.src, dir ? b : a, 4);
	memcpy(p->t.dst, dir ? a : b, 4);
	p->t.sport = dir ? 80 : 40000;
	p->t.dport = dir ? 40000 : 80;
	p->tcp_flags = flags;
	p->seq = seq;
	p->ack = p->sack = ack;
	p->win = win;
	p->payload_len = len;
	p->bytes = 40 + len;
	p->wscale = (flags & SYN) ? 7 : 0xff;
	p->sack_perm = flags & SYN;
}

static void bench_established(uint8_t proto, uint32_t n_conn)
{
	enum { V = 256 };
	static struct rxp_ct_pkt pk[V];
	const struct rxp_ct_pkt *pp[V];
	struct rxp_ct_ref refs[V];
	struct rxp_ct_config cfg;
	uint64_t total = 20000000, sum = 0, bad = 0;
	double t0, t_build = 0, t_track = 0;

	rxp_ct_config_default(&cfg);
	cfg.max = n_conn + n_conn / 8;
	ct = rxp_ct_create(&cfg, 1);
	now_ns = 1000 * S_NS;
	t0 = mono();
	for (uint32_t i = 0; i < n_conn; i++) {
		struct rxp_ct_pkt p;
		struct rxp_ct_ref r;

		if (proto == RXP_IPPROTO_TCP) {
			bench_pkt(&p, proto, i, 0, SYN, 100, 0, 65535, 0);
			rxp_ct_track(ct, 0, &p, now_ns, &r);
			rxp_ct_confirm(ct, 0, &p, now_ns, &r);
			bench_pkt(&p, proto, i, 1, SYN | ACK, 900, 101, 65535, 0);
			rxp_ct_track(ct, 0, &p, now_ns, &r);
			bench_pkt(&p, proto, i, 0, ACK, 101, 901, 65535, 0);
			rxp_ct_track(ct, 0, &p, now_ns, &r);
		} else {
			bench_pkt(&p, proto, i, 0, 0, 0, 0, 0, 0);
			rxp_ct_track(ct, 0, &p, now_ns, &r);
			rxp_ct_confirm(ct, 0, &p, now_ns, &r);
			bench_pkt(&p, proto, i, 1, 0, 0, 0, 0, 0);
			rxp_ct_track(ct, 0, &p, now_ns, &r);
		}
	}
	printf("  %s: %u connections set up in %.2f s (%.2f MB table)\n", proto == RXP_IPPROTO_TCP ? "tcp" : "udp",
	       n_conn, mono() - t0, (double)rxp_ct_memory(ct) / 1e6);
	/* building the vectors alone, then building and tracking: the difference is tracking */
	for (int pass = 0; pass < 2; pass++) {
		rs = 88172645463325252ull;
		t0 = mono();
		for (uint64_t done = 0; done < total; done += V) {
			for (unsigned k = 0; k < V; k++) {
				uint64_t x = xrand();
				uint32_t i = (uint32_t)((x >> 32) % n_conn);
				int dir = x & 1;

				/* pure ACKs whose window changes: in window, not retransmissions */
				bench_pkt(&pk[k], proto, i, dir, proto == RXP_IPPROTO_TCP ? ACK : 0, dir ? 901 : 101,
					  dir ? 101 : 901, (uint16_t)(60000 + (x >> 8 & 1023)), 0);
				pp[k] = &pk[k];
			}
			if (pass) {
				rxp_ct_enter(ct, 0);
				rxp_ct_track_bulk(ct, 0, pp, V, now_ns, refs);
				rxp_ct_leave(ct, 0);
				for (unsigned k = 0; k < V; k++)
					bad += refs[k].state != EST;
			} else {
				for (unsigned k = 0; k < V; k++)
					sum += pk[k].win;
			}
		}
		if (pass)
			t_track = mono() - t0;
		else
			t_build = mono() - t0;
	}
	printf("  %s: rxp_ct_track_bulk over %u established connections, random order: %.1f ns/packet "
	       "(%.1f with building the vectors; %" PRIu64 " not established)%s\n",
	       proto == RXP_IPPROTO_TCP ? "tcp" : "udp", n_conn, (t_track - t_build) * 1e9 / (double)total,
	       t_track * 1e9 / (double)total, bad, sum ? "" : " ");
	end();
}

static void bench_new(uint32_t max, int early_drop, unsigned workers)
{
	struct rxp_ct_config cfg;
	struct rxp_ct_stats s;
	uint32_t n = 4000000;
	double t0, dt;

	rxp_ct_config_default(&cfg);
	cfg.max = max;
	cfg.timeout[RXP_CT_TO_UDP] = 1;
	ct = rxp_ct_create(&cfg, workers);
	now_ns = 1000 * S_NS;
	t0 = mono();
	/* as the filter does it: a vector tracked, the new ones confirmed, expiry between polls */
	for (uint32_t base = 0; base < n; base += 64) {
		static struct rxp_ct_pkt p[64];
		const struct rxp_ct_pkt *pp[64];
		struct rxp_ct_ref r[64];

		for (unsigned k = 0; k < 64; k++) {
			uint32_t i = base + k;

			bench_pkt(&p[k], RXP_IPPROTO_UDP, i & 0xffffff, 0, 0, 0, 0, 0, 0);
			p[k].t.sport = (uint16_t)(1024 + (i >> 24));
			pp[k] = &p[k];
		}
		if (!early_drop)
			now_ns += 64 * 2000;	/* 500,000 a second, 1 s each: about 500,000 live */
		rxp_ct_enter(ct, 0);
		rxp_ct_track_bulk(ct, 0, pp, 64, now_ns, r);
		for (unsigned k = 0; k < 64; k++)
			if (r[k].state == NEW && r[k].entry == UINT32_MAX)
				rxp_ct_confirm(ct, 0, pp[k], now_ns, &r[k]);
		rxp_ct_leave(ct, 0);
		if (!early_drop)
			rxp_ct_expire(ct, 0, now_ns, 128);
	}
	dt = mono() - t0;
	rxp_ct_stats(ct, &s);
	printf("  new connections, %s, %u-entry table, %u worker%s: %.2f M/s (%.0f ns each; "
	       "inserted %" PRIu64 ", early drops %" PRIu64 ", expired %" PRIu64 ", full %" PRIu64 ")\n",
	       early_drop ? "full table, early drop each" : "1 s timeout and expiry", max, workers,
	       workers > 1 ? "s (locked)" : "", n / dt / 1e6, dt * 1e9 / n, s.inserted, s.early_drop,
	       s.deleted - s.early_drop, s.table_full);
	end();
}

static void bench(void)
{
	printf("conntrack throughput (figures, not checks)\n");
	bench_established(RXP_IPPROTO_TCP, 1000000);
	bench_established(RXP_IPPROTO_UDP, 1000000);
	bench_established(RXP_IPPROTO_TCP, 50000);
	bench_new(1u << 20, 0, 1);
	bench_new(RXP_CT_MAX_DEFAULT, 1, 1);
	bench_new(1u << 20, 0, 2);
}

int main(void)
{
	RUN(test_config);
	RUN(test_parse_ip4);
	RUN(test_parse_fragments);
	RUN(test_parse_tcp_options);
	RUN(test_parse_ipv6);
	RUN(test_tcp_handshake);
	RUN(test_tcp_retransmissions);
	RUN(test_tcp_simultaneous_open);
	RUN(test_tcp_window);
	RUN(test_tcp_rst);
	RUN(test_tcp_close);
	RUN(test_tcp_bad_flags);
	RUN(test_udp);
	RUN(test_icmp_echo);
	RUN(test_icmp_related);
	RUN(test_icmp6_related);
	RUN(test_ipv6_tcp);
	RUN(test_table_full);
	RUN(test_expiry_budget);
	RUN(test_bulk);
	RUN(test_two_workers);
	RUN(test_format);
	if (getenv("RXP_CT_BENCH"))
		bench();
	return tests_done();
}
