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
#include "route.h"

#define IP4_OPT_EOL 0
#define IP4_OPT_NOP 1
#define IP4_OPT_COPIED 0x80
#define IP4_OPT_RR 7		/* Record Route */
#define IP4_OPT_TS 68		/* Timestamp */
#define IP4_OPT_LSRR 131	/* Loose Source and Record Route */
#define IP4_OPT_SSRR 137	/* Strict Source and Record Route */

/*
 * Returns 0 when the options of @ip (IHL @ihl bytes) are well formed, else
 * the offset in the header of the octet at fault (RFC 791 3.1): an option
 * whose length is below 2 or runs past the header (the option's type
 * octet), a route option shorter than 3 or a timestamp shorter than 4 (its
 * length octet), a pointer below the first slot (its pointer octet).
 * Options are not acted on (they are forwarded intact), only walked.
 */
static unsigned options_fault(const uint8_t *ip, unsigned ihl)
{
	for (unsigned i = RXP_IP4_HLEN; i < ihl;) {
		uint8_t type = ip[i];
		unsigned olen, min_len = 2, min_ptr = 0;

		if (type == IP4_OPT_EOL)
			return 0;
		if (type == IP4_OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= ihl || ip[i + 1] < 2 || i + ip[i + 1] > ihl)
			return i;
		olen = ip[i + 1];
		if (type == IP4_OPT_RR || type == IP4_OPT_LSRR || type == IP4_OPT_SSRR) {
			min_len = 3;
			min_ptr = 4;
		} else if (type == IP4_OPT_TS) {
			min_len = 4;
			min_ptr = 5;
		}
		if (olen < min_len)
			return i + 1;
		if (min_ptr && ip[i + 2] < min_ptr)
			return i + 2;
		i += olen;
	}
	return 0;
}

bool rxp_ip4_options_ok(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	const uint8_t *ip = rxp_pkt_cdata(pkt) + pkt->l3_off;
	unsigned fault = options_fault(ip, (ip[0] & 0x0fu) * 4u);

	if (rxp_likely(!fault))
		return true;
	/* RFC 1812 4.3.3.5: Parameter Problem, the pointer at the octet in error */
	rxp_icmp4_error(st, pkt, RXP_ICMP_PARAM_PROB, 0, (uint32_t)fault << 24);
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

bool rxp_ip4_source_routed(const uint8_t *ip)
{
	unsigned ihl = (ip[0] & 0x0fu) * 4u, olen;

	for (unsigned i = RXP_IP4_HLEN; (olen = option_len(ip, ihl, i)); i += olen)
		if (ip[i] == IP4_OPT_LSRR || ip[i] == IP4_OPT_SSRR)
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

/* One Timestamp option at @o (@olen bytes, pointer and flags checked on the way in). */
static void record_ts(uint8_t *o, unsigned olen, uint32_t self)
{
	unsigned ptr = o[2], flag = o[3] & 0x0fu, room = flag == 0 ? 4u : 8u;
	uint8_t *slot = o + ptr - 1;

	if (flag != 0 && flag != 1 && flag != 3)
		return;			/* a format we do not know: untouched */
	if (ptr + room - 1 > olen) {
		/* full: count it, up to what the 4-bit overflow field holds */
		if ((o[3] >> 4) < 15)
			o[3] = (uint8_t)(o[3] + 0x10);
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
 * The completed source route at @o (@olen bytes) of a request from @src
 * turned into the way back (RFC 1122 3.2.1.8, 3.2.2.6): the route came
 * through G1 .. Gn, so the reply goes to Gn first, then Gn-1 .. G1, and
 * ends at @src. Returns the reply's first destination (network order), or
 * @src when the route is empty.
 */
static uint32_t reverse_route(uint8_t *o, unsigned olen, uint32_t src)
{
	unsigned n = (olen - 3) / 4;
	uint8_t *slot = o + 3;
	uint32_t first;

	if (n == 0)
		return src;
	memcpy(&first, slot + 4 * (n - 1), 4);
	/* G1 .. Gn-1 reversed in place, then @src where Gn was */
	for (unsigned a = 0; 2 * a + 2 < n; a++) {
		unsigned b = n - 2 - a;
		uint8_t t[4];

		memcpy(t, slot + 4 * a, 4);
		memcpy(slot + 4 * a, slot + 4 * b, 4);
		memcpy(slot + 4 * b, t, 4);
	}
	memcpy(slot + 4 * (n - 1), &src, 4);
	o[2] = 4;
	return first;
}

void rxp_ip4_echo_options(uint8_t *ip)
{
	unsigned ihl = (ip[0] & 0x0fu) * 4u, olen;
	uint32_t self, src, dst;

	memcpy(&self, ip + 12, 4);	/* the reply's addresses, already swapped */
	memcpy(&src, ip + 16, 4);
	dst = src;
	for (unsigned i = RXP_IP4_HLEN; (olen = option_len(ip, ihl, i)); i += olen) {
		uint8_t *o = ip + i;

		if ((o[0] == IP4_OPT_LSRR || o[0] == IP4_OPT_SSRR) && olen >= 3 && dst == src) {
			dst = reverse_route(o, olen, src);	/* one source route: the first */
		} else if (o[0] == IP4_OPT_RR && olen >= 3 && o[2] >= 4 && o[2] + 3u <= olen) {
			memcpy(o + o[2] - 1, &self, 4);
			o[2] = (uint8_t)(o[2] + 4);
		} else if (o[0] == IP4_OPT_TS && olen >= 4 && o[2] >= 5) {
			record_ts(o, olen, self);
		}
	}
	memcpy(ip + 16, &dst, 4);
}

bool rxp_ip4_source_route(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	const struct rxp_router *r = st->router;
	uint8_t *ip = rxp_pkt_data(pkt) + pkt->l3_off;
	unsigned ihl = (ip[0] & 0x0fu) * 4u, olen;

	for (unsigned i = RXP_IP4_HLEN; (olen = option_len(ip, ihl, i)); i += olen) {
		uint8_t *o = ip + i;
		uint32_t next, nh, self;
		uint16_t c;

		if (o[0] != IP4_OPT_LSRR && o[0] != IP4_OPT_SSRR)
			continue;
		if (olen < 3 || o[2] < 4 || o[2] + 3u > olen)
			return false;	/* the route is complete: here is its end */
		if (r->no_source_route) {
			rxp_drop(st, pkt, RXP_DROP_SOURCE_ROUTE);	/* quietly (RFC 7126 4.3, 4.4) */
			return true;
		}
		memcpy(&next, o + o[2] - 1, 4);
		if (rxp_lpm4_lookup(r->fib4, ntohl(next), &nh))
			nh = RXP_LPM_NO_ROUTE;
		/* a strict route names each hop: the next must be a neighbour (or us again) */
		if (nh == RXP_LPM_NO_ROUTE ||
		    (o[0] == IP4_OPT_SSRR && nh != RXP_NH_LOCAL &&
		     r->nh[nh].kind != RXP_NH_KIND_CONNECTED)) {
			rxp_icmp4_error(st, pkt, RXP_ICMP_DEST_UNREACH, 5, 0);
			rxp_drop(st, pkt, RXP_DROP_SOURCE_ROUTE);
			return true;
		}
		/* our address on the way out takes the next address's place */
		self = nh == RXP_NH_LOCAL ? next : rxp_l3if_source4(&r->ifs[r->nh[nh].ifidx], next);
		memcpy(o + o[2] - 1, &self, 4);
		o[2] = (uint8_t)(o[2] + 4);
		memcpy(ip + 16, &next, 4);
		ip[10] = 0;
		ip[11] = 0;
		c = rxp_csum(ip, ihl);
		memcpy(ip + 10, &c, 2);
		rxp_ip4_route_nh(st, pkt, nh);
		return true;
	}
	return false;
}
