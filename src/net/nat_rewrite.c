/* SPDX-License-Identifier: MIT */
/*
 * NAT44 header rewriting (RFC 3022 4.1): the addresses and the TCP/UDP
 * ports or ICMP query identifier of an IPv4 packet are replaced in place,
 * and every checksum that covers them is updated incrementally (RFC 1624
 * eqn. 3) instead of being recomputed: a rewrite changes a few words, while
 * a transport checksum covers the whole datagram, part of which may be in
 * fragments this router never sees together.
 *
 * An ICMP error about a translated packet has the packet it quotes
 * translated back as well: the quoted addresses with the quoted header's
 * checksum, the quoted ports or identifier with the quoted transport
 * checksum when it was quoted, and the ICMP checksum, which covers all of
 * those bytes.
 *
 * Packets come from the wire, so every field is located and bounds-checked
 * before the first write: a packet refused is left exactly as it came.
 *
 * UDP-Lite (RFC 3828) is rewritten as UDP is (ports at 0/2, checksum at 6):
 * its coverage always includes the header and the pseudo-header (3.1), but
 * its checksum is never optional, so a stored 0 is updated like any value.
 */
#include <errno.h>
#include <string.h>
#include "rxpath/csum.h"
#include "rxpath/proto.h"
#include "nat_rewrite.h"

#define NAT_IPPROTO_UDPLITE 136

/* The fields a rewrite touches behind the IPv4 header, found before anything is written. */
struct l4_at {
	uint8_t *ports;		/* source and destination port, or NULL */
	uint8_t *ident;		/* an ICMP query's identifier, or NULL */
	uint8_t *csum;		/* the checksum over them, or NULL: none sent, or not quoted */
	bool pseudo;		/* @csum covers the addresses too (the pseudo-header) */
	bool udp;		/* UDP's or UDP-Lite's: a computed 0 is sent as 0xffff (RFC 768, 3828 3.1) */
};

static uint16_t ld16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static void st16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

/*
 * Stores @nv (as stored) in the 16-bit field @f, and follows the change in
 * the checksums @a and @b covering it (either NULL) and in @outer (or NULL),
 * which covers @f, @a and @b alike: an ICMP error's checksum over its quote.
 */
static void set16(uint8_t *f, uint16_t nv, uint8_t *a, uint8_t *b, uint8_t *outer)
{
	uint16_t ov = ld16(f);

	if (ov == nv)
		return;
	st16(f, nv);
	if (a)
		set16(a, rxp_csum_update16(ld16(a), ov, nv), NULL, NULL, outer);
	if (b)
		set16(b, rxp_csum_update16(ld16(b), ov, nv), NULL, NULL, outer);
	if (outer)
		st16(outer, rxp_csum_update16(ld16(outer), ov, nv));
}

/* The same for an address, as two 16-bit halves: all offsets are even, so the sums see them as words. */
static void set32(uint8_t *f, uint32_t nv, uint8_t *a, uint8_t *b, uint8_t *outer)
{
	uint8_t n[4];

	memcpy(n, &nv, 4);
	set16(f, ld16(n), a, b, outer);
	set16(f + 2, ld16(n + 2), a, b, outer);
}

/* A fragment but the first: it carries no transport header (RFC 791 3.2). */
static bool later_frag(const uint8_t *ip)
{
	return ntohs(ld16(ip + 6)) & RXP_IP4_OFFMASK;
}

static bool icmp_is_error(uint8_t type)
{
	return type == RXP_ICMP_DEST_UNREACH || type == RXP_ICMP_SOURCE_QUENCH ||
	       type == RXP_ICMP_REDIRECT || type == RXP_ICMP_TIME_EXCEEDED || type == RXP_ICMP_PARAM_PROB;
}

/* Echo (RFC 792) and timestamp: the queries that carry an identifier at offset 4. */
static bool icmp_has_ident(uint8_t type)
{
	return type == RXP_ICMP_ECHO_REQUEST || type == RXP_ICMP_ECHO_REPLY || type == 13 || type == 14;
}

/*
 * Checks that @len bytes at @ip start with an IPv4 header and sets *@ihl to
 * its length. Returns 0 or -EINVAL.
 */
static int ip4_hdr(const uint8_t *ip, unsigned len, unsigned *ihl)
{
	if (len < RXP_IP4_HLEN || ip[0] >> 4 != 4)
		return -EINVAL;
	*ihl = (ip[0] & 0x0fu) * 4u;
	return *ihl < RXP_IP4_HLEN || *ihl > len ? -EINVAL : 0;
}

/*
 * Finds the transport fields of the packet at @ip (@ihl header bytes, @avail
 * bytes after them): in a packet of its own every header changed must be
 * whole; in a quote (@quote) 8 bytes are (RFC 792), and a checksum not
 * quoted whole is left alone. Returns 0 or -EINVAL.
 */
static int find_l4(uint8_t *ip, unsigned ihl, unsigned avail, bool quote, struct l4_at *at)
{
	uint8_t *l4 = ip + ihl;

	memset(at, 0, sizeof(*at));
	if (later_frag(ip))
		return 0;	/* payload only: just the addresses change */
	switch (ip[9]) {
	case RXP_IPPROTO_TCP:
		if (avail < (quote ? 8u : RXP_TCP_HLEN))
			return -EINVAL;
		at->ports = l4;
		at->csum = avail >= 18 ? l4 + 16 : NULL;
		at->pseudo = true;
		return 0;
	case RXP_IPPROTO_UDP:
	case NAT_IPPROTO_UDPLITE:
		if (avail < RXP_UDP_HLEN)
			return -EINVAL;
		at->ports = l4;
		/* UDP's 0 is "no checksum" and stays so (RFC 768); UDP-Lite has no such value */
		at->csum = ip[9] == RXP_IPPROTO_UDP && !ld16(l4 + 6) ? NULL : l4 + 6;
		at->pseudo = at->udp = true;
		return 0;
	case RXP_IPPROTO_ICMP:
		if (avail < RXP_ICMP_HLEN)
			return -EINVAL;	/* every ICMP message has these 8 bytes, whatever its type */
		/* no error is sent about an error (RFC 1122 3.2.2): such a quote is forged */
		if (quote && icmp_is_error(l4[0]))
			return -EINVAL;
		if (icmp_has_ident(l4[0])) {
			at->ident = l4 + 4;
			at->csum = l4 + 2;	/* no pseudo-header in ICMP */
		}
		return 0;
	default:
		return 0;	/* addresses only */
	}
}

/*
 * Rewrites the addresses of the header at @ip per @rw, with its checksum,
 * @l4cs (a transport checksum over a pseudo-header, or NULL) and @outer as
 * in set16().
 */
static void rewrite_addrs(uint8_t *ip, const struct rxp_nat_rw *rw, uint8_t *l4cs, uint8_t *outer)
{
	if (rw->src)
		set32(ip + 12, rw->saddr, ip + 10, l4cs, outer);
	if (rw->dst)
		set32(ip + 16, rw->daddr, ip + 10, l4cs, outer);
}

/* Rewrites the ports or identifier found in @at per @rw, after the addresses (for UDP's 0 below). */
static void rewrite_l4(const struct l4_at *at, const struct rxp_nat_rw *rw, uint8_t *outer)
{
	if (at->ports) {
		if (rw->src)
			set16(at->ports, rw->sport, at->csum, NULL, outer);
		if (rw->dst)
			set16(at->ports + 2, rw->dport, at->csum, NULL, outer);
	} else if (at->ident) {
		/* a request is translated at its source, its reply at its destination */
		if (rw->src)
			set16(at->ident, rw->sport, at->csum, NULL, outer);
		else if (rw->dst)
			set16(at->ident, rw->dport, at->csum, NULL, outer);
	}
	/* 0 and 0xffff are the same sum; a UDP checksum that comes to 0 is sent as 0xffff (RFC 768) */
	if (at->udp && at->csum && !ld16(at->csum))
		set16(at->csum, 0xffff, NULL, NULL, outer);
}

/* Stores @nv in the 16-bit field @f and adds the change to *@d (RFC 1624 eqn. 3: ~m + m'). */
static inline void put16(uint8_t *f, uint16_t nv, uint32_t *d)
{
	uint16_t ov = ld16(f);

	st16(f, nv);
	*d += (uint16_t)~ov + (uint32_t)nv;
}

/* @cs updated by the summed change @d: HC' = ~(~HC + sum(~m + m')). */
static inline void apply(uint8_t *cs, uint32_t d)
{
	uint32_t sum = (uint16_t)~ld16(cs) + d;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	st16(cs, (uint16_t)~sum);
}

int rxp_nat_rewrite4(uint8_t *ip, unsigned len, const struct rxp_nat_rw *rw)
{
	uint32_t d_ip = 0, d_l4;
	struct l4_at at;
	unsigned ihl;
	uint8_t n[4];

	if (ip4_hdr(ip, len, &ihl) || find_l4(ip, ihl, len - ihl, false, &at))
		return -EINVAL;
	/* each checksum updated once, by the sum of the words' changes (a packet's own: no outer sum) */
	if (rw->src) {
		memcpy(n, &rw->saddr, 4);
		put16(ip + 12, ld16(n), &d_ip);
		put16(ip + 14, ld16(n + 2), &d_ip);
	}
	if (rw->dst) {
		memcpy(n, &rw->daddr, 4);
		put16(ip + 16, ld16(n), &d_ip);
		put16(ip + 18, ld16(n + 2), &d_ip);
	}
	d_l4 = at.pseudo ? d_ip : 0;
	if (at.ports) {
		if (rw->src)
			put16(at.ports, rw->sport, &d_l4);
		if (rw->dst)
			put16(at.ports + 2, rw->dport, &d_l4);
	} else if (at.ident) {
		/* a request is translated at its source, its reply at its destination */
		if (rw->src)
			put16(at.ident, rw->sport, &d_l4);
		else if (rw->dst)
			put16(at.ident, rw->dport, &d_l4);
	}
	apply(ip + 10, d_ip);
	if (at.csum) {
		apply(at.csum, d_l4);
		/* 0 and 0xffff are the same sum; a UDP checksum that comes to 0 is sent as 0xffff (RFC 768) */
		if (at.udp && !ld16(at.csum))
			st16(at.csum, 0xffff);
	}
	return 0;
}

int rxp_nat_rewrite4_icmp_error(uint8_t *ip, unsigned len, const struct rxp_nat_rw *outer,
				const struct rxp_nat_rw *inner)
{
	unsigned ihl, qihl, qlen;
	uint8_t *icmp, *q;
	struct l4_at at;

	/* the outer header, then the ICMP header of an error, whole */
	if (ip4_hdr(ip, len, &ihl) || ip[9] != RXP_IPPROTO_ICMP || later_frag(ip) ||
	    len - ihl < RXP_ICMP_HLEN || !icmp_is_error(ip[ihl]))
		return -EINVAL;
	icmp = ip + ihl;
	q = icmp + RXP_ICMP_HLEN;
	qlen = len - ihl - RXP_ICMP_HLEN;
	/* the quote: an IPv4 header and at least 8 bytes of what followed it (RFC 792) */
	if (ip4_hdr(q, qlen, &qihl) || qlen - qihl < 8 || find_l4(q, qihl, qlen - qihl, true, &at))
		return -EINVAL;

	/* the ICMP checksum has no pseudo-header: the outer addresses touch the IP checksum only */
	rewrite_addrs(ip, outer, NULL, NULL);
	rewrite_addrs(q, inner, at.pseudo ? at.csum : NULL, icmp + 2);
	rewrite_l4(&at, inner, icmp + 2);
	return 0;
}
