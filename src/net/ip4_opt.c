/* SPDX-License-Identifier: MIT */
/*
 * IPv4 options (RFC 791 3.1): checked on the way in, copied into
 * fragments, looked for (source routes) before a redirect, followed when a
 * source route goes through the router, and filled in (Record Route,
 * Timestamp) in the router's echo replies. Packets forwarded to another
 * destination keep theirs intact.
 */
#include <arpa/inet.h>
#include <string.h>
#include <time.h>
#include "rxpath/csum.h"
#include "icmp.h"
#include "ip4_opt.h"
#include "ip4_route.h"
#include "multipath.h"

#define IP4_OPT_EOL 0
#define IP4_OPT_NOP 1
#define IP4_OPT_COPIED 0x80
#define IP4_OPT_RR 7		/* Record Route */
#define IP4_OPT_TS 68		/* Timestamp */
#define IP4_OPT_LSRR 131	/* Loose Source and Record Route */
#define IP4_OPT_SSRR 137	/* Strict Source and Record Route */
#define IP4_OPT_SECURITY 130
#define IP4_OPT_STREAM 136	/* Stream Identifier */

/*
 * Returns 0 when the options of @ip (IHL @ihl bytes) are well formed, else
 * the offset in the header of the octet at fault (RFC 791 3.1): an option
 * whose length is below 2 or runs past the header (the option's type
 * octet), a route option shorter than 3 or a timestamp shorter than 4 (its
 * length octet), a pointer below the first slot or at a slot with some
 * room but not enough for a whole entry (its pointer octet: RFC 791 calls
 * such a datagram in error), a timestamp of a format RFC 791 does not
 * define (its flags octet), a second Record Route, Timestamp, source
 * route, Security or Stream Identifier (its type octet: each "appears at
 * most once", and a loose and a strict route are two routes). Options are
 * not acted on here, only walked.
 */
static unsigned options_fault(const uint8_t *ip, unsigned ihl)
{
	bool rr = false, ts = false, route = false, security = false, stream = false;

	for (unsigned i = RXP_IP4_HLEN; i < ihl;) {
		uint8_t type = ip[i];
		unsigned olen, min_len = 2, min_ptr = 0, entry = 0;
		bool *seen = type == IP4_OPT_RR ? &rr : type == IP4_OPT_TS ? &ts :
			     type == IP4_OPT_LSRR || type == IP4_OPT_SSRR ? &route :
			     type == IP4_OPT_SECURITY ? &security : type == IP4_OPT_STREAM ? &stream : NULL;

		if (type == IP4_OPT_EOL)
			return 0;
		if (type == IP4_OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= ihl || ip[i + 1] < 2 || i + ip[i + 1] > ihl)
			return i;
		if (seen && *seen)
			return i;
		if (seen)
			*seen = true;
		olen = ip[i + 1];
		if (type == IP4_OPT_RR || type == IP4_OPT_LSRR || type == IP4_OPT_SSRR) {
			min_len = 3;
			min_ptr = 4;
			entry = 4;	/* an address */
		} else if (type == IP4_OPT_TS) {
			min_len = 4;
			min_ptr = 5;
		}
		if (olen < min_len)
			return i + 1;
		if (min_ptr && ip[i + 2] < min_ptr)
			return i + 2;
		if (type == IP4_OPT_TS) {
			unsigned flag = ip[i + 3] & 0x0fu;

			if (flag != 0 && flag != 1 && flag != 3)
				return i + 3;
			entry = flag == 0 ? 4 : 8;	/* a time, or an address and a time */
		}
		/* not full (the pointer past the end), yet no room for a whole entry */
		if (entry && ip[i + 2] <= olen && ip[i + 2] + entry - 1 > olen)
			return i + 2;
		i += olen;
	}
	return 0;
}

bool rxp_ip4_options_ok(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	const struct rxp_ip4_hdr *ip = rxp_pkt_cip4(pkt);
	unsigned fault = options_fault((const uint8_t *)ip, rxp_ip4_ihl(ip));

	if (rxp_likely(!fault))
		return true;
	/* RFC 1812 4.3.3.5: Parameter Problem, the pointer at the octet in error */
	rxp_icmp4_error(st, pkt, RXP_ICMP_PARAM_PROB, RXP_ICMP_PARAM_POINTER, (uint32_t)fault << 24);
	rxp_drop_as(pkt, RXP_DROP_IP4_BAD_OPTION);
	return false;
}

/*
 * The length of the option at @i of the @len option bytes at @opt: 1 for a
 * No Operation, 0 at the End of Option List, at the end of the bytes, or at
 * a malformed option (rxp_ip4_options_ok() drops those on the way in; a
 * walk stops there, keeping what came before).
 */
static unsigned option_len(const uint8_t *opt, unsigned len, unsigned i)
{
	if (i >= len || opt[i] == IP4_OPT_EOL)
		return 0;
	if (opt[i] == IP4_OPT_NOP)
		return 1;
	if (i + 1 >= len || opt[i + 1] < 2 || i + opt[i + 1] > len)
		return 0;
	return opt[i + 1];
}

unsigned rxp_ip4_copied_options(const uint8_t *opt, unsigned len, uint8_t *out)
{
	unsigned o = 0, olen;

	for (unsigned i = 0; (olen = option_len(opt, len, i)); i += olen) {
		if (opt[i] & IP4_OPT_COPIED) {
			memcpy(out + o, opt + i, olen);
			o += olen;
		}
	}
	while (o % 4)
		out[o++] = IP4_OPT_EOL;
	return o;
}

bool rxp_ip4_source_routed(const struct rxp_ip4_hdr *ip)
{
	const uint8_t *hdr = (const uint8_t *)ip;	/* options at their offsets in the header */
	unsigned ihl = rxp_ip4_ihl(ip), olen;

	for (unsigned i = RXP_IP4_HLEN; (olen = option_len(hdr, ihl, i)); i += olen)
		if (hdr[i] == IP4_OPT_LSRR || hdr[i] == IP4_OPT_SSRR)
			return true;
	return false;
}

/* Milliseconds since midnight UT, the standard value of a timestamp (RFC 791). */
static uint32_t ms_since_midnight_ut(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint32_t)((ts.tv_sec % 86400) * 1000 + ts.tv_nsec / 1000000);
}

/* One Timestamp option at @o (@olen bytes, checked on the way in and by rxp_ip4_echo_options_ok()). */
static void record_ts(uint8_t *o, unsigned olen, uint32_t self)
{
	unsigned ptr = o[2], flag = o[3] & 0x0fu, room = flag == 0 ? 4u : 8u;
	uint8_t *slot = o + ptr - 1;

	if (ptr > olen) {
		o[3] = (uint8_t)(o[3] + 0x10);	/* full: counted (below 15, checked before) */
		return;
	}
	if (flag == 3 && memcmp(slot, &self, 4))
		return;			/* prespecified, and not us next */
	if (flag != 0) {
		memcpy(slot, &self, 4);
		slot += 4;
	}
	rxp_store_be32(slot, ms_since_midnight_ut());
	o[2] = (uint8_t)(ptr + room);
}

/*
 * Whether the completed source route at @o (@olen bytes) of a request from
 * @src begins with @src itself: a sender may record its own address first
 * (RFC 1122 3.2.1.8, case (B)), and the way back must name it only once.
 */
static bool route_starts_at_source(const uint8_t *o, unsigned olen, uint32_t src)
{
	return olen >= 7 && !memcmp(o + 3, &src, 4);
}

/* Where the reply to a request from @src with the completed source route at @o goes first. */
static uint32_t reverse_route_first(const uint8_t *o, unsigned olen, uint32_t src)
{
	unsigned n = (olen - 3) / 4;
	uint32_t last;

	if (n == 0 || (n == 1 && route_starts_at_source(o, olen, src)))
		return src;
	memcpy(&last, o + 3 + 4 * (n - 1), 4);
	return last;
}

/*
 * The completed source route at @o (@olen bytes) of a request from @src
 * turned into the way back (RFC 1122 3.2.1.8, 3.2.2.6): the route came
 * through G1 .. Gn, so the reply goes to Gn first, then Gn-1 .. G1, and
 * ends at @src. A route that recorded @src before G1 loses that slot: the
 * option shrinks by 4 and No Operations fill the bytes it leaves. Returns
 * the reply's first destination (network order), or @src when the route
 * is empty.
 */
static uint32_t reverse_route(uint8_t *o, unsigned olen, uint32_t src)
{
	uint32_t first = reverse_route_first(o, olen, src);
	uint8_t *slot = o + 3;
	unsigned n;

	if (route_starts_at_source(o, olen, src)) {
		memmove(slot, slot + 4, olen - 7);
		memset(o + olen - 4, IP4_OPT_NOP, 4);
		olen -= 4;
		o[1] = (uint8_t)olen;
	}
	o[2] = 4;
	n = (olen - 3) / 4;
	if (n == 0)
		return src;
	/* G1 .. Gn-1 reversed in place, then @src where Gn was */
	for (unsigned a = 0; 2 * a + 2 < n; a++) {
		unsigned b = n - 2 - a;
		uint8_t t[4];

		memcpy(t, slot + 4 * a, 4);
		memcpy(slot + 4 * a, slot + 4 * b, 4);
		memcpy(slot + 4 * b, t, 4);
	}
	memcpy(slot + 4 * (n - 1), &src, 4);
	return first;
}

bool rxp_ip4_echo_options_ok(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	const struct rxp_router *r = st->router;
	const struct rxp_ip4_hdr *ip = rxp_pkt_cip4(pkt);
	const uint8_t *hdr = (const uint8_t *)ip;	/* options at their offsets in the header */
	unsigned ihl = rxp_ip4_ihl(ip), olen;
	bool routed = false;
	uint32_t src = ip->src;

	for (unsigned i = RXP_IP4_HLEN; (olen = option_len(hdr, ihl, i)); i += olen) {
		const uint8_t *o = hdr + i;

		/* RFC 791: a full timestamp whose overflow count would wrap is in error */
		if (o[0] == IP4_OPT_TS && olen >= 4 && o[2] > olen && (o[3] >> 4) == 15) {
			rxp_icmp4_error(st, pkt, RXP_ICMP_PARAM_PROB, RXP_ICMP_PARAM_POINTER,
					(i + 3u) << 24);
			rxp_drop_as(pkt, RXP_DROP_IP4_BAD_OPTION);
			return false;
		}
		if ((o[0] == IP4_OPT_LSRR || o[0] == IP4_OPT_SSRR) && olen >= 3 && !routed) {
			uint32_t first = reverse_route_first(o, olen, src);

			routed = true;	/* one source route: the first */
			/* the sender wrote that address: no reply to ours, a broadcast, 0/8, 127/8, class D or E */
			if (first != src && rxp_router_is_martian_src4(r, first)) {
				rxp_drop_as(pkt, RXP_DROP_SOURCE_ROUTE);
				return false;
			}
		}
	}
	return true;
}

void rxp_ip4_echo_options(struct rxp_ip4_hdr *ip)
{
	uint8_t *hdr = (uint8_t *)ip;	/* options at their offsets in the header */
	unsigned ihl = rxp_ip4_ihl(ip), olen;
	uint32_t self = ip->src, src = ip->dst;	/* the reply's addresses, already swapped */
	uint32_t dst = src;
	bool routed = false;

	/* olen is each option's length before it is touched: a shrunk route leaves NOPs behind it */
	for (unsigned i = RXP_IP4_HLEN; (olen = option_len(hdr, ihl, i)); i += olen) {
		uint8_t *o = hdr + i;

		if ((o[0] == IP4_OPT_LSRR || o[0] == IP4_OPT_SSRR) && olen >= 3 && !routed) {
			dst = reverse_route(o, olen, src);	/* one source route: the first */
			routed = true;
		} else if (o[0] == IP4_OPT_RR && olen >= 3 && o[2] >= 4 && o[2] + 3u <= olen) {
			memcpy(o + o[2] - 1, &self, 4);
			o[2] = (uint8_t)(o[2] + 4);
		} else if (o[0] == IP4_OPT_TS && olen >= 4 && o[2] >= 5) {
			record_ts(o, olen, self);
		}
	}
	ip->dst = dst;
}

bool rxp_ip4_source_route(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	const struct rxp_router *r = st->router;
	struct rxp_ip4_hdr *ip = rxp_pkt_ip4(pkt);
	uint8_t *hdr = (uint8_t *)ip;	/* options at their offsets in the header */
	unsigned ihl = rxp_ip4_ihl(ip), olen;

	for (unsigned i = RXP_IP4_HLEN; (olen = option_len(hdr, ihl, i)); i += olen) {
		uint8_t *o = hdr + i;
		uint32_t next, nh, self;

		if (o[0] != IP4_OPT_LSRR && o[0] != IP4_OPT_SSRR)
			continue;
		/* quietly (RFC 7126 4.3, 4.4), at the route's end too: no reply goes back along it */
		if (r->no_source_route) {
			rxp_drop(st, pkt, RXP_DROP_SOURCE_ROUTE);
			return true;
		}
		if (olen < 3 || o[2] < 4 || o[2] + 3u > olen)
			return false;	/* the route is complete: here is its end */
		memcpy(&next, o + o[2] - 1, 4);
		if (rxp_lpm4_lookup(rxp_router_fib4_of(r, pkt->ifidx), ntohl(next), &nh))
			nh = RXP_LPM_NO_ROUTE;
		nh = rxp_mp_pick(st, pkt, 4, nh);	/* a multipath route's member for this flow */
		/* a strict route names each hop: the next must be a neighbour (or us again) */
		if (nh == RXP_LPM_NO_ROUTE ||
		    (o[0] == IP4_OPT_SSRR && nh != RXP_NH_LOCAL &&
		     r->nh[nh].kind != RXP_NH_KIND_CONNECTED)) {
			rxp_icmp4_error(st, pkt, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_SRC_ROUTE, 0);
			rxp_drop(st, pkt, RXP_DROP_SOURCE_ROUTE);
			return true;
		}
		/* one that will not live past us is answered about as it came (RFC 1812 4.3.2.3) */
		if (nh != RXP_NH_LOCAL && ip->ttl <= 1) {
			rxp_icmp4_error(st, pkt, RXP_ICMP_TIME_EXCEEDED, RXP_ICMP_EXCEEDED_TTL, 0);
			rxp_drop(st, pkt, RXP_DROP_TTL_EXCEEDED);
			return true;
		}
		/* our address on the way out takes the next address's place */
		self = nh == RXP_NH_LOCAL ? next : rxp_l3if_source4(&r->ifs[r->nh[nh].ifidx], next);
		if (!self)	/* a way out without an IPv4 address: the router's (its router-id) */
			self = rxp_router_any_addr4(r);
		memcpy(o + o[2] - 1, &self, 4);
		o[2] = (uint8_t)(o[2] + 4);
		ip->dst = next;
		ip->csum = 0;
		ip->csum = rxp_csum(ip, ihl);
		rxp_ip4_route_nh(st, pkt, nh);
		return true;
	}
	return false;
}
