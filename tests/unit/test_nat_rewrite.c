/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of NAT44 rewriting (src/net/nat_rewrite.h). Packets are built
 * as bytes from a description (struct spec) with every checksum computed
 * from scratch by a reference sum written here, independent of csum.h; the
 * packet the module rewrote must equal, byte for byte, the description
 * rewritten and rebuilt from scratch. Refused packets must come back
 * unchanged. Each module call gets a buffer of exactly the packet's length,
 * so that AddressSanitizer sees any read past it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "net/nat_rewrite.h"
#include "rxpath/common.h"

#define P_ICMP 1
#define P_TCP 6
#define P_UDP 17
#define P_UDPLITE 136
#define L4_MAX 400
#define PKT_MAX 1024

/* A packet to build: a transport datagram behind an IPv4 header, whole or one fragment of it. */
struct spec {
	uint8_t proto, ihl, tos, ttl;	/* ihl in bytes */
	uint16_t id;
	uint32_t saddr, daddr;		/* network order */
	bool mf;			/* more fragments */
	uint16_t off;			/* fragment offset, 8-byte units: nonzero, no transport header */
	bool nocsum;			/* UDP sent without a checksum */
	uint16_t cover;			/* UDP-Lite checksum coverage, 0: all */
	unsigned l4len;			/* the transport datagram */
	unsigned cut;			/* the bytes of it this packet carries */
	uint8_t opt[40];
	uint8_t l4[L4_MAX];		/* checksum and length fields are filled in by make_pkt */
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* The reference: RFC 1071's sum, a byte at a time, big-endian 16-bit words. */
static uint32_t ref_sum(const uint8_t *p, unsigned n, uint32_t s)
{
	for (unsigned i = 0; i < n; i++)
		s += i & 1 ? p[i] : (uint32_t)p[i] << 8;
	return s;
}

static uint16_t ref_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void put_be16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static unsigned get_be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static uint32_t ref_pseudo(const uint8_t *src, const uint8_t *dst, uint8_t proto, unsigned len)
{
	uint8_t ph[12] = { [9] = proto };

	memcpy(ph, src, 4);
	memcpy(ph + 4, dst, 4);
	put_be16(ph + 10, len);
	return ref_sum(ph, 12, 0);
}

static bool icmp_has_ident(uint8_t t)
{
	return t == 0 || t == 8 || t == 13 || t == 14;
}

static bool icmp_is_error(uint8_t t)
{
	return t == 3 || t == 4 || t == 5 || t == 11 || t == 12;
}

/*
 * Fills in the length and checksum fields of @l4, @s's transport datagram,
 * from scratch. Returns the checksum computed (before UDP's 0 becomes
 * 0xffff), or -1 when there is none.
 */
static int fill_l4(const struct spec *s, uint8_t *l4)
{
	unsigned n = s->l4len;
	uint32_t ph = ref_pseudo((const uint8_t *)&s->saddr, (const uint8_t *)&s->daddr, s->proto, n);
	uint16_t c;

	if (s->off)
		return -1;
	switch (s->proto) {
	case P_TCP:
		if (n < 18)
			return -1;
		l4[16] = l4[17] = 0;
		c = ref_fold(ref_sum(l4, n, ph));
		put_be16(l4 + 16, c);
		return c;
	case P_UDP:
	case P_UDPLITE:
		if (n < 8)
			return -1;
		put_be16(l4 + 4, s->proto == P_UDP ? n : s->cover);
		l4[6] = l4[7] = 0;
		if (s->proto == P_UDP && s->nocsum)
			return -1;
		c = ref_fold(ref_sum(l4, s->proto == P_UDPLITE && s->cover ? s->cover : n, ph));
		put_be16(l4 + 6, c ? c : 0xffff);
		return c;
	case P_ICMP:
		if (n < 4)
			return -1;
		l4[2] = l4[3] = 0;
		c = ref_fold(ref_sum(l4, n, 0));
		put_be16(l4 + 2, c);
		return c;
	default:
		return -1;
	}
}

/* Builds the packet @s describes into @out. Returns its length. */
static unsigned make_pkt(const struct spec *s, uint8_t *out)
{
	uint8_t l4[L4_MAX];
	unsigned len = s->ihl + s->cut;

	memcpy(l4, s->l4, s->l4len);
	fill_l4(s, l4);
	memset(out, 0, s->ihl);
	out[0] = (uint8_t)(0x40 | s->ihl / 4);
	out[1] = s->tos;
	put_be16(out + 2, len);
	put_be16(out + 4, s->id);
	put_be16(out + 6, (s->mf ? 0x2000u : 0) | s->off);
	out[8] = s->ttl;
	out[9] = s->proto;
	memcpy(out + 12, &s->saddr, 4);
	memcpy(out + 16, &s->daddr, 4);
	memcpy(out + 20, s->opt, s->ihl - 20u);
	put_be16(out + 10, ref_fold(ref_sum(out, s->ihl, 0)));
	memcpy(out + s->ihl, l4, s->cut);
	return len;
}

/* The rules, as the reference applies them to a description. */
static void ref_apply(struct spec *s, const struct rxp_nat_rw *rw)
{
	if (rw->src)
		s->saddr = rw->saddr;
	if (rw->dst)
		s->daddr = rw->daddr;
	if (s->off)
		return;
	if (s->proto == P_TCP || s->proto == P_UDP || s->proto == P_UDPLITE) {
		if (rw->src)
			memcpy(s->l4, &rw->sport, 2);
		if (rw->dst)
			memcpy(s->l4 + 2, &rw->dport, 2);
	} else if (s->proto == P_ICMP && icmp_has_ident(s->l4[0])) {
		if (rw->src)
			memcpy(s->l4 + 4, &rw->sport, 2);
		else if (rw->dst)
			memcpy(s->l4 + 4, &rw->dport, 2);
	}
}

/* True when a packet @s with @avail transport bytes (a quote's, with @quote) is to be accepted. */
static bool ref_valid(const struct spec *s, unsigned avail, bool quote)
{
	if (s->off)
		return true;
	switch (s->proto) {
	case P_TCP:
		return avail >= (quote ? 8u : 20u);
	case P_UDP:
	case P_UDPLITE:
		return avail >= 8;
	case P_ICMP:
		return avail >= 8 && !(quote && icmp_is_error(s->l4[0]));
	default:
		return true;
	}
}

/* True when every checksum of the whole packet @p of @len bytes verifies, summed from scratch. */
static bool pkt_valid(const uint8_t *p, unsigned len)
{
	unsigned ihl = (p[0] & 15u) * 4, n = len - ihl;
	const uint8_t *l4 = p + ihl;
	uint32_t ph = ref_pseudo(p + 12, p + 16, p[9], n);

	if (ref_fold(ref_sum(p, ihl, 0)))
		return false;
	switch (p[9]) {
	case P_TCP:
		return !ref_fold(ref_sum(l4, n, ph));
	case P_UDP:
		return !get_be16(l4 + 6) || !ref_fold(ref_sum(l4, n, ph));
	case P_UDPLITE:
		return !ref_fold(ref_sum(l4, get_be16(l4 + 4) ? get_be16(l4 + 4) : n, ph));
	case P_ICMP:
		return !ref_fold(ref_sum(l4, n, 0));
	default:
		return true;
	}
}

/*
 * Rewrites @s per @rw through rxp_nat_rewrite4 into @out (may be NULL) and
 * sets *@rc. Returns true when the result is what the reference expects.
 */
static bool try_rewrite(const struct spec *s, const struct rxp_nat_rw *rw, uint8_t *out, int *rc)
{
	uint8_t before[PKT_MAX], want[PKT_MAX];
	unsigned len = make_pkt(s, before);
	uint8_t *pkt = malloc(len);
	bool ok;

	memcpy(pkt, before, len);
	*rc = rxp_nat_rewrite4(pkt, len, rw);
	if (ref_valid(s, s->cut, false)) {
		struct spec t = *s;

		ref_apply(&t, rw);
		make_pkt(&t, want);
		ok = *rc == 0 && !memcmp(pkt, want, len);
	} else {
		ok = *rc == -EINVAL && !memcmp(pkt, before, len);
	}
	if (out)
		memcpy(out, pkt, len);
	free(pkt);
	return ok;
}

/* An ICMP error to build: its outer header (@o, whose l4 starts with the ICMP header), the quoted packet. */
struct err_case {
	struct spec o, in;
	unsigned qlen;		/* bytes of the quoted packet */
	int bad_ver_ihl;	/* nonzero: the quote's first byte, made bad */
};

/* As try_rewrite, for rxp_nat_rewrite4_icmp_error. */
static bool try_error(const struct err_case *e, const struct rxp_nat_rw *ro, const struct rxp_nat_rw *ri,
		      uint8_t *out, int *rc)
{
	uint8_t qold[PKT_MAX], qnew[PKT_MAX], before[PKT_MAX], want[PKT_MAX];
	struct spec o = e->o, in2 = e->in;
	unsigned len, qihl = e->in.ihl;
	uint8_t *pkt;
	bool ok;

	make_pkt(&e->in, qold);
	memcpy(o.l4 + 8, qold, e->qlen);
	if (e->bad_ver_ihl)
		o.l4[8] = (uint8_t)e->bad_ver_ihl;
	o.l4len = o.cut = 8 + e->qlen;
	len = make_pkt(&o, before);
	pkt = malloc(len);
	memcpy(pkt, before, len);
	*rc = rxp_nat_rewrite4_icmp_error(pkt, len, ro, ri);
	if (!e->bad_ver_ihl && o.proto == P_ICMP && !o.off && icmp_is_error(o.l4[0]) && e->qlen >= qihl + 8 &&
	    ref_valid(&e->in, e->qlen - qihl, true)) {
		ref_apply(&in2, ri);
		make_pkt(&in2, qnew);
		/* a TCP checksum not quoted whole is left as it was */
		if (e->in.proto == P_TCP && !e->in.off && e->qlen < qihl + 18u)
			for (unsigned i = qihl + 16; i < e->qlen; i++)
				qnew[i] = qold[i];
		ref_apply(&o, ro);	/* an error: addresses only */
		memcpy(o.l4 + 8, qnew, e->qlen);
		make_pkt(&o, want);
		ok = *rc == 0 && !memcmp(pkt, want, len);
	} else {
		ok = *rc == -EINVAL && !memcmp(pkt, before, len);
	}
	if (out)
		memcpy(out, pkt, len);
	free(pkt);
	return ok;
}

static uint32_t addr(const char *s)
{
	uint32_t a;

	inet_pton(AF_INET, s, &a);
	return a;
}

/* A whole packet from @src to @dst of @proto, with @l4len transport bytes of a fixed pattern. */
static void spec_init(struct spec *s, uint8_t proto, const char *src, const char *dst, unsigned l4len)
{
	memset(s, 0, sizeof(*s));
	s->proto = proto;
	s->ihl = 20;
	s->ttl = 64;
	s->id = 0x1234;
	s->saddr = addr(src);
	s->daddr = addr(dst);
	s->l4len = s->cut = l4len;
	for (unsigned i = 0; i < l4len; i++)
		s->l4[i] = (uint8_t)(i * 7 + 3);
	if (proto == P_TCP)
		s->l4[12] = 0x50;	/* data offset 5 */
}

static void set_ports(struct spec *s, unsigned sport, unsigned dport)
{
	put_be16(s->l4, sport);
	put_be16(s->l4 + 2, dport);
}

static void test_tcp_src(void)
{
	struct rxp_nat_rw rw = { .src = true, .saddr = addr("203.0.113.5"), .sport = htons(40000) };
	uint8_t out[PKT_MAX];
	struct spec s;
	int rc;

	spec_init(&s, P_TCP, "192.168.1.10", "198.51.100.7", 40);
	set_ports(&s, 5000, 443);
	CHECK(try_rewrite(&s, &rw, out, &rc));
	CHECK_EQ(rc, 0);
	CHECK(pkt_valid(out, 60));
	CHECK(!memcmp(out + 12, &rw.saddr, 4));
	CHECK_EQ(get_be16(out + 20), 40000);
	CHECK_EQ(get_be16(out + 22), 443);
}

static void test_tcp_dst(void)
{
	struct rxp_nat_rw rw = { .dst = true, .daddr = addr("192.168.1.10"), .dport = htons(5000) };
	uint8_t out[PKT_MAX];
	struct spec s;
	int rc;

	spec_init(&s, P_TCP, "198.51.100.7", "203.0.113.5", 33);	/* odd length: a padded last byte */
	set_ports(&s, 443, 40000);
	CHECK(try_rewrite(&s, &rw, out, &rc));
	CHECK(pkt_valid(out, 53));
	CHECK(!memcmp(out + 16, &rw.daddr, 4));
	CHECK(!memcmp(out + 12, &s.saddr, 4));
	CHECK_EQ(get_be16(out + 20), 443);
	CHECK_EQ(get_be16(out + 22), 5000);
}

static void test_udp_both(void)
{
	struct rxp_nat_rw rw = { .src = true, .dst = true, .saddr = addr("203.0.113.5"),
				 .daddr = addr("10.9.8.7"), .sport = htons(1), .dport = htons(65535) };
	uint8_t out[PKT_MAX];
	struct spec s;
	int rc;

	spec_init(&s, P_UDP, "192.168.1.10", "198.51.100.7", 51);
	set_ports(&s, 5353, 53);
	CHECK(try_rewrite(&s, &rw, out, &rc));
	CHECK(pkt_valid(out, 71));
	CHECK(get_be16(out + 26) != 0);
	CHECK_EQ(get_be16(out + 20), 1);
	CHECK_EQ(get_be16(out + 22), 65535);
}

static void test_udp_no_csum(void)
{
	struct rxp_nat_rw rw = { .src = true, .saddr = addr("203.0.113.5"), .sport = htons(40001) };
	uint8_t out[PKT_MAX];
	struct spec s;
	int rc;

	spec_init(&s, P_UDP, "192.168.1.10", "198.51.100.7", 20);
	s.nocsum = true;
	CHECK(try_rewrite(&s, &rw, out, &rc));
	CHECK_EQ(get_be16(out + 26), 0);
	CHECK_EQ(get_be16(out + 20), 40001);
	CHECK(pkt_valid(out, 40));
}

/* Searches the source port that makes the rewritten checksum come to 0: it must be sent as 0xffff. */
static void test_udp_zero_result(void)
{
	struct rxp_nat_rw rw = { .src = true, .saddr = addr("203.0.113.5") };
	uint8_t out[PKT_MAX], l4[L4_MAX];
	struct spec s, t;
	unsigned found = 0;
	int rc;

	spec_init(&s, P_UDP, "192.168.1.10", "198.51.100.7", 24);
	set_ports(&s, 5000, 53);
	for (unsigned port = 0; port < 65536 && !found; port++) {
		t = s;
		rw.sport = htons((uint16_t)port);
		ref_apply(&t, &rw);
		memcpy(l4, t.l4, t.l4len);
		if (fill_l4(&t, l4) == 0)
			found = 1;
	}
	CHECK(found);
	CHECK(try_rewrite(&s, &rw, out, &rc));
	CHECK_EQ(rc, 0);
	CHECK_EQ(get_be16(out + 26), 0xffff);
	CHECK(pkt_valid(out, 44));
}

static void test_icmp_echo(void)
{
	struct rxp_nat_rw req = { .src = true, .saddr = addr("203.0.113.5"), .sport = htons(777),
				  .dport = htons(999) };
	struct rxp_nat_rw rep = { .dst = true, .daddr = addr("192.168.1.10"), .dport = htons(1234) };
	uint8_t out[PKT_MAX];
	struct spec s;
	int rc;

	spec_init(&s, P_ICMP, "192.168.1.10", "198.51.100.7", 64);
	s.l4[0] = 8;
	s.l4[1] = 0;
	put_be16(s.l4 + 4, 1234);
	CHECK(try_rewrite(&s, &req, out, &rc));
	CHECK(pkt_valid(out, 84));
	CHECK_EQ(get_be16(out + 24), 777);	/* src: the source port, not dport */
	CHECK(!memcmp(out + 12, &req.saddr, 4));

	spec_init(&s, P_ICMP, "198.51.100.7", "203.0.113.5", 64);
	put_be16(s.l4 + 4, 777);		/* an echo reply */
	s.l4[0] = s.l4[1] = 0;
	CHECK(try_rewrite(&s, &rep, out, &rc));
	CHECK(pkt_valid(out, 84));
	CHECK_EQ(get_be16(out + 24), 1234);
	CHECK(!memcmp(out + 16, &rep.daddr, 4));
}

/* An ICMP error handed to rxp_nat_rewrite4: the outer addresses only, the quote untouched. */
static void test_icmp_error_plain(void)
{
	struct rxp_nat_rw rw = { .src = true, .dst = true, .saddr = addr("1.2.3.4"), .daddr = addr("5.6.7.8"),
				 .sport = htons(1), .dport = htons(2) };
	uint8_t out[PKT_MAX], before[PKT_MAX];
	struct spec s;
	int rc;

	spec_init(&s, P_ICMP, "198.51.100.1", "203.0.113.5", 36);
	s.l4[0] = 3;
	s.l4[1] = 3;
	make_pkt(&s, before);
	CHECK(try_rewrite(&s, &rw, out, &rc));
	CHECK(pkt_valid(out, 56));
	CHECK(!memcmp(out + 20, before + 20, 36));
}

static void test_later_fragment(void)
{
	struct rxp_nat_rw rw = { .src = true, .dst = true, .saddr = addr("203.0.113.5"),
				 .daddr = addr("10.0.0.1"), .sport = htons(1), .dport = htons(2) };
	uint8_t out[PKT_MAX], before[PKT_MAX];
	struct spec s;
	int rc;

	spec_init(&s, P_TCP, "192.168.1.10", "198.51.100.7", 40);
	s.off = 185;	/* 1480 bytes in */
	s.mf = true;
	make_pkt(&s, before);
	CHECK(try_rewrite(&s, &rw, out, &rc));
	CHECK_EQ(rc, 0);
	CHECK(!memcmp(out + 20, before + 20, 40));	/* payload untouched */
	CHECK(!memcmp(out + 12, &rw.saddr, 4));
	CHECK(!memcmp(out + 16, &rw.daddr, 4));
	CHECK_EQ(ref_fold(ref_sum(out, 20, 0)), 0);

	s.l4len = s.cut = 3;	/* however short: nothing behind the header is read */
	CHECK(try_rewrite(&s, &rw, NULL, &rc));
	CHECK_EQ(rc, 0);
}

/* A first fragment: the checksum covers the whole datagram, checked here by putting it back together. */
static void test_first_fragment(void)
{
	static const uint8_t protos[] = { P_UDP, P_TCP, P_ICMP };
	struct rxp_nat_rw rw = { .src = true, .saddr = addr("203.0.113.5"), .sport = htons(40000) };
	uint8_t out[PKT_MAX], dgram[L4_MAX];
	struct spec s;
	int rc;

	for (unsigned k = 0; k < RXP_ARRAY_SIZE(protos); k++) {
		spec_init(&s, protos[k], "192.168.1.10", "198.51.100.7", 301);
		set_ports(&s, 5000, 53);
		if (s.proto == P_ICMP)
			s.l4[0] = 8;
		s.mf = true;
		s.cut = 48;
		CHECK(try_rewrite(&s, &rw, out, &rc));
		CHECK_EQ(rc, 0);
		CHECK_EQ(get_be16(out + 2), 68);
		memcpy(dgram, out + 20, 48);
		/* the rest as the later fragments carry it */
		memcpy(dgram + 48, s.l4 + 48, s.l4len - 48);
		if (s.proto == P_ICMP) {
			CHECK_EQ(get_be16(dgram + 4), 40000);
			CHECK_EQ(ref_fold(ref_sum(dgram, s.l4len, 0)), 0);
		} else {
			uint32_t ph = ref_pseudo(out + 12, out + 16, s.proto, s.l4len);

			CHECK_EQ(get_be16(dgram), 40000);
			CHECK_EQ(ref_fold(ref_sum(dgram, s.l4len, ph)), 0);
		}
		CHECK_EQ(ref_fold(ref_sum(out, 20, 0)), 0);
	}
}

static void test_truncated(void)
{
	struct rxp_nat_rw rw = { .src = true, .saddr = addr("203.0.113.5"), .sport = htons(40000) };
	uint8_t out[PKT_MAX], before[PKT_MAX];
	struct spec s;
	int rc;

	spec_init(&s, P_TCP, "192.168.1.10", "198.51.100.7", 19);
	make_pkt(&s, before);
	CHECK(try_rewrite(&s, &rw, out, &rc));
	CHECK_EQ(rc, -EINVAL);
	CHECK(!memcmp(out, before, 39));

	s.l4len = 60;		/* a first fragment with 12 bytes of TCP header */
	s.cut = 12;
	s.mf = true;
	CHECK(try_rewrite(&s, &rw, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);

	spec_init(&s, P_UDP, "192.168.1.10", "198.51.100.7", 7);
	CHECK(try_rewrite(&s, &rw, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);
	spec_init(&s, P_ICMP, "192.168.1.10", "198.51.100.7", 7);
	s.l4[0] = 8;
	CHECK(try_rewrite(&s, &rw, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);
	spec_init(&s, 47, "192.168.1.10", "198.51.100.7", 0);	/* GRE, empty: only addresses */
	CHECK(try_rewrite(&s, &rw, NULL, &rc));
	CHECK_EQ(rc, 0);
}

/*
 * A host behind the NAT (192.168.1.10:5000, sent as 203.0.113.5:40000) gets
 * Time Exceeded from a router (198.51.100.1) on the way to 198.51.100.7:53.
 */
static void error_case(struct err_case *e, uint8_t proto, unsigned l4len)
{
	spec_init(&e->o, P_ICMP, "198.51.100.1", "203.0.113.5", 8);
	e->o.l4[0] = 11;
	e->o.l4[1] = 0;
	memset(e->o.l4 + 4, 0, 4);
	spec_init(&e->in, proto, "203.0.113.5", "198.51.100.7", l4len);
	e->in.ttl = 1;
	if (proto == P_ICMP) {
		e->in.l4[0] = 8;
		put_be16(e->in.l4 + 4, 40000);
	} else {
		set_ports(&e->in, 40000, 53);
	}
	e->qlen = 20 + l4len;
	e->bad_ver_ihl = 0;
}

/* Back to the host: the outer destination, the quoted source. */
static struct rxp_nat_rw err_outer, err_inner;

static void error_rws(void)
{
	err_outer = (struct rxp_nat_rw){ .dst = true, .daddr = addr("192.168.1.10") };
	err_inner = (struct rxp_nat_rw){ .src = true, .saddr = addr("192.168.1.10"), .sport = htons(5000) };
}

static void test_error_udp(void)
{
	uint8_t out[PKT_MAX];
	struct err_case e;
	int rc;

	error_case(&e, P_UDP, 30);
	CHECK(try_error(&e, &err_outer, &err_inner, out, &rc));
	CHECK_EQ(rc, 0);
	CHECK(pkt_valid(out, 20 + 8 + 50));		/* outer IP and ICMP */
	CHECK(pkt_valid(out + 28, 50));			/* the quote, quoted whole */
	CHECK(!memcmp(out + 16, &err_outer.daddr, 4));
	CHECK(!memcmp(out + 28 + 12, &err_inner.saddr, 4));
	CHECK_EQ(get_be16(out + 48), 5000);
	CHECK_EQ(get_be16(out + 50), 53);

	e.in.nocsum = true;	/* a quoted UDP checksum of 0 stays 0 */
	CHECK(try_error(&e, &err_outer, &err_inner, out, &rc));
	CHECK_EQ(get_be16(out + 54), 0);
	CHECK(pkt_valid(out, 78));
}

static void test_error_tcp_8(void)
{
	uint8_t out[PKT_MAX], before[PKT_MAX];
	struct err_case e;
	int rc;

	error_case(&e, P_TCP, 40);
	e.qlen = 28;		/* RFC 792's header + 64 bits: the checksum not quoted */
	CHECK(try_error(&e, &err_outer, &err_inner, out, &rc));
	CHECK_EQ(rc, 0);
	CHECK(pkt_valid(out, 56));
	CHECK_EQ(ref_fold(ref_sum(out + 28, 20, 0)), 0);	/* the quoted header's checksum */
	CHECK_EQ(get_be16(out + 48), 5000);

	e.qlen = 37;		/* half the checksum quoted: left alone */
	make_pkt(&e.in, before);
	CHECK(try_error(&e, &err_outer, &err_inner, out, &rc));
	CHECK_EQ(rc, 0);
	CHECK_EQ(out[64], before[36]);
	CHECK(pkt_valid(out, 65));

	e.qlen = 38;		/* the checksum quoted: updated */
	CHECK(try_error(&e, &err_outer, &err_inner, out, &rc));
	CHECK_EQ(rc, 0);
	CHECK(pkt_valid(out, 66));
}

static void test_error_echo(void)
{
	uint8_t out[PKT_MAX];
	struct err_case e;
	int rc;

	error_case(&e, P_ICMP, 56);
	CHECK(try_error(&e, &err_outer, &err_inner, out, &rc));
	CHECK_EQ(rc, 0);
	CHECK(pkt_valid(out, 20 + 8 + 76));
	CHECK(pkt_valid(out + 28, 76));
	CHECK_EQ(get_be16(out + 52), 5000);	/* the identifier, from sport */
}

static void test_error_refused(void)
{
	struct err_case e;
	int rc;

	error_case(&e, P_UDP, 30);
	e.qlen = 27;		/* 7 bytes of UDP */
	CHECK(try_error(&e, &err_outer, &err_inner, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);
	e.qlen = 12;		/* not even the IP header */
	CHECK(try_error(&e, &err_outer, &err_inner, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);
	e.qlen = 0;
	CHECK(try_error(&e, &err_outer, &err_inner, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);

	error_case(&e, P_UDP, 30);
	e.in.ihl = 24;		/* an option: the 8 bytes must follow it */
	e.qlen = 31;
	CHECK(try_error(&e, &err_outer, &err_inner, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);
	e.qlen = 32;
	CHECK(try_error(&e, &err_outer, &err_inner, NULL, &rc));
	CHECK_EQ(rc, 0);

	error_case(&e, P_UDP, 30);
	e.bad_ver_ihl = 0x65;
	CHECK(try_error(&e, &err_outer, &err_inner, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);
	e.bad_ver_ihl = 0x44;
	CHECK(try_error(&e, &err_outer, &err_inner, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);
	e.bad_ver_ihl = 0x4f;	/* 60 bytes of header in a 50-byte quote */
	CHECK(try_error(&e, &err_outer, &err_inner, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);

	error_case(&e, P_ICMP, 36);
	e.in.l4[0] = 3;		/* an error about an error */
	CHECK(try_error(&e, &err_outer, &err_inner, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);

	error_case(&e, P_UDP, 30);
	e.o.l4[0] = 8;		/* not an error at all */
	CHECK(try_error(&e, &err_outer, &err_inner, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);
	error_case(&e, P_UDP, 30);
	e.o.proto = P_UDP;	/* not even ICMP */
	CHECK(try_error(&e, &err_outer, &err_inner, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);
	error_case(&e, P_UDP, 30);
	e.o.off = 3;		/* a later fragment of an error: no ICMP header in it */
	CHECK(try_error(&e, &err_outer, &err_inner, NULL, &rc));
	CHECK_EQ(rc, -EINVAL);
}

/* Headers the caller should have refused are refused here too, as are ICMP headers cut short. */
static void test_bad_header(void)
{
	uint8_t pkt[28], copy[28];
	struct spec s;

	spec_init(&s, P_ICMP, "198.51.100.1", "203.0.113.5", 8);
	s.l4[0] = 3;
	make_pkt(&s, copy);
	for (unsigned len = 0; len < 28; len++) {
		memcpy(pkt, copy, sizeof(pkt));
		CHECK_EQ(rxp_nat_rewrite4_icmp_error(pkt, len, &err_outer, &err_inner), -EINVAL);
		CHECK(!memcmp(pkt, copy, sizeof(pkt)));
	}
	for (unsigned len = 0; len < 20; len++)
		CHECK_EQ(rxp_nat_rewrite4(pkt, len, &err_outer), -EINVAL);
	pkt[0] = 0x65;
	CHECK_EQ(rxp_nat_rewrite4(pkt, 28, &err_outer), -EINVAL);
	pkt[0] = 0x44;
	CHECK_EQ(rxp_nat_rewrite4(pkt, 28, &err_outer), -EINVAL);
	pkt[0] = 0x48;		/* 32 bytes of header in 28 */
	CHECK_EQ(rxp_nat_rewrite4(pkt, 28, &err_outer), -EINVAL);
	CHECK_EQ(rxp_nat_rewrite4_icmp_error(pkt, 28, &err_outer, &err_inner), -EINVAL);
	pkt[0] = 0x45;
	CHECK(!memcmp(pkt, copy, sizeof(pkt)));
	CHECK_EQ(rxp_nat_rewrite4(pkt, 28, &err_outer), 0);
}

/* A random packet of any kind; with @shorts, some cut too short for their transport header. */
static void random_spec(struct spec *s, bool shorts)
{
	static const uint8_t protos[] = { P_TCP, P_UDP, P_UDPLITE, P_ICMP, 47, 50 };
	static const uint8_t icmp_types[] = { 0, 8, 13, 14, 3, 4, 5, 11, 12, 9, 10, 42 };
	unsigned hdr;

	memset(s, 0, sizeof(*s));
	s->proto = protos[rnd() % RXP_ARRAY_SIZE(protos)];
	s->ihl = (uint8_t)(rnd() % 4 ? 20 : 20 + 4 * (rnd() % 11));
	s->tos = (uint8_t)rnd();
	s->ttl = (uint8_t)rnd();
	s->id = (uint16_t)rnd();
	s->saddr = rnd();
	s->daddr = rnd();
	for (unsigned i = 0; i < sizeof(s->opt); i++)
		s->opt[i] = (uint8_t)rnd();
	hdr = s->proto == P_TCP ? 20 + 4 * (rnd() % 4) : 8;
	s->l4len = hdr + rnd() % 120;
	for (unsigned i = 0; i < s->l4len; i++)
		s->l4[i] = (uint8_t)rnd();
	if (s->proto == P_TCP)
		s->l4[12] = (uint8_t)((hdr / 4) << 4 | (s->l4[12] & 0x0f));
	if (s->proto == P_ICMP)
		s->l4[0] = icmp_types[rnd() % RXP_ARRAY_SIZE(icmp_types)];
	s->nocsum = rnd() % 4 == 0;
	if (s->proto == P_UDPLITE && rnd() % 2)
		s->cover = (uint16_t)(8 + rnd() % (s->l4len - 7));
	s->cut = s->l4len;
	switch (rnd() % 10) {
	case 0:		/* a first fragment */
		s->mf = true;
		s->cut = hdr + rnd() % (s->l4len - hdr + 1);
		break;
	case 1:		/* a later one */
		s->off = (uint16_t)(1 + rnd() % 0x1fff);
		s->mf = rnd() % 2;
		break;
	case 2:
		if (shorts) {
			s->cut = rnd() % hdr;
			s->l4len = rnd() % 2 ? s->cut : s->l4len;
			s->mf = s->cut != s->l4len;
		}
		break;
	}
}

/* Random new values, a quarter of them equal to the old (the skipped stores). */
static void random_rw(struct rxp_nat_rw *rw, const struct spec *s)
{
	const uint8_t *port = s->proto == P_ICMP ? s->l4 + 4 : s->l4;
	uint16_t old_sport, old_dport;

	memcpy(&old_sport, port, 2);
	memcpy(&old_dport, s->proto == P_ICMP ? port : port + 2, 2);
	rw->src = rnd() % 2;
	rw->dst = rnd() % 2;
	rw->saddr = rnd() % 4 ? rnd() : s->saddr;
	rw->daddr = rnd() % 4 ? rnd() : s->daddr;
	if (rnd() % 8 == 0)	/* half an address the same */
		rw->saddr = (rw->saddr & htonl(0xffff)) | (s->saddr & htonl(0xffff0000));
	rw->sport = rnd() % 4 ? (uint16_t)rnd() : old_sport;
	rw->dport = rnd() % 4 ? (uint16_t)rnd() : old_dport;
}

static void test_fuzz(void)
{
	unsigned bad = 0, refused = 0;

	for (int i = 0; i < 10000; i++) {
		struct rxp_nat_rw rw;
		struct spec s;
		int rc;

		random_spec(&s, i % 2 == 0);
		random_rw(&rw, &s);
		if (!try_rewrite(&s, &rw, NULL, &rc)) {
			if (!bad)
				printf("  fuzz %d: proto %u off %u cut %u/%u rc %d\n", i, s.proto, s.off,
				       s.cut, s.l4len, rc);
			bad++;
		}
		refused += rc != 0;
	}
	CHECK_EQ(bad, 0);
	CHECK(refused > 100 && refused < 2000);
}

static void test_fuzz_error(void)
{
	unsigned bad = 0, refused = 0;

	for (int i = 0; i < 10000; i++) {
		static const uint8_t err_types[] = { 3, 4, 5, 11, 12 };
		struct rxp_nat_rw ro, ri;
		unsigned full, min;
		struct err_case e;
		int rc;

		random_spec(&e.o, false);
		e.o.proto = P_ICMP;
		e.o.mf = false;
		e.o.off = 0;
		e.o.l4[0] = err_types[rnd() % RXP_ARRAY_SIZE(err_types)];
		random_spec(&e.in, false);
		full = e.in.ihl + e.in.cut;
		min = e.in.ihl + 8u;
		switch (rnd() % 8) {
		case 0:
			e.qlen = min;
			break;
		case 1:
			e.qlen = full;
			break;
		case 2:
			e.qlen = rnd() % min;	/* too short */
			break;
		default:
			e.qlen = min + rnd() % (full - min + 1);
			break;
		}
		e.qlen = e.qlen > full ? full : e.qlen;	/* a later fragment may carry under 8 bytes */
		e.bad_ver_ihl = 0;
		if (rnd() % 32 == 0)
			e.bad_ver_ihl = rnd() % 2 ? 0x44 : 0x05;
		random_rw(&ro, &e.o);
		random_rw(&ri, &e.in);
		if (!try_error(&e, &ro, &ri, NULL, &rc)) {
			if (!bad)
				printf("  fuzz %d: quoted proto %u off %u qlen %u rc %d\n", i, e.in.proto,
				       e.in.off, e.qlen, rc);
			bad++;
		}
		refused += rc != 0;
	}
	CHECK_EQ(bad, 0);
	CHECK(refused > 300 && refused < 4000);
}

int main(void)
{
	error_rws();
	RUN(test_tcp_src);
	RUN(test_tcp_dst);
	RUN(test_udp_both);
	RUN(test_udp_no_csum);
	RUN(test_udp_zero_result);
	RUN(test_icmp_echo);
	RUN(test_icmp_error_plain);
	RUN(test_later_fragment);
	RUN(test_first_fragment);
	RUN(test_truncated);
	RUN(test_error_udp);
	RUN(test_error_tcp_8);
	RUN(test_error_echo);
	RUN(test_error_refused);
	RUN(test_bad_header);
	RUN(test_fuzz);
	RUN(test_fuzz_error);
	return tests_done();
}
