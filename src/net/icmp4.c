/* SPDX-License-Identifier: MIT */
/* ICMPv4 (RFC 792, RFC 1812 4.3): echo reply and the errors a router sends. */
#include <arpa/inet.h>
#include <string.h>
#include "rxpath/csum.h"
#include "host.h"
#include "icmp.h"
#include "ip4_opt.h"
#include "out.h"

#define ICMP_HLEN 8

/* Types that are errors (RFC 1812 4.3.2.7: never answer an error with an error). */
static bool icmp_type_is_error(uint8_t type)
{
	return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}

/* rxp_icmp4_error(), sent from @from (network order), the way @way says (NULL: found here). */
static bool icmp4_error_from(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type,
			     uint8_t code, uint32_t rest, uint32_t from,
			     const struct rxp_reply_way *way)
{
	const uint8_t *ip = rxp_pkt_data(orig) + orig->l3_off;
	const uint8_t *src_mac = rxp_pkt_data(orig) + 6;
	uint32_t src, dst, quote;
	unsigned ihl = (ip[0] & 0x0fu) * 4u;
	struct rxp_reply_way found;
	struct rxp_pkt *pkt;
	uint8_t *o, *icmp;

	memcpy(&src, ip + 12, 4);
	memcpy(&dst, ip + 16, 4);
	/*
	 * RFC 1812 4.3.2.7: not about ICMP errors, non-first fragments, broadcast
	 * or multicast, bad sources (one of our own addresses among them, which
	 * a packet from the wire can only have forged)
	 */
	if ((orig->flags & RXP_PKT_F_FRAG_NTH) || (orig->flags & RXP_PKT_F_L2_MCAST) ||
	    rxp_router_is_martian_src4(st->router, src) || dst == 0xffffffffu ||
	    (ntohl(dst) >> 28) == 0xe || !from || rxp_router_is_bcast4(st->router, dst))
		return false;
	if (ip[9] == RXP_IPPROTO_ICMP && orig->l3_len >= ihl + 1 && icmp_type_is_error(ip[ihl]))
		return false;
	if (!rxp_ratelimit_take(&st->shared->icmp_limit, st->now_ns)) {
		st->stats.icmp_ratelimited++;
		return false;
	}
	if (!way) {
		rxp_reply_way(st, 4, (const uint8_t *)&from, ip + 12, orig->ifidx, &found);
		way = &found;
	}
	/*
	 * 576 bytes at most (RFC 1812 4.3.2.3), and no more than the link it
	 * leaves by carries; but never less than the header and 8 bytes (RFC
	 * 792), which the sender needs to match it: on a link narrower than
	 * that the error goes in fragments
	 */
	quote = RXP_MIN((uint32_t)orig->l3_len, (uint32_t)RXP_ICMP_QUOTE_MAX);
	quote = RXP_MIN(quote, st->router->ifs[way->out].mtu - RXP_IP4_HLEN - ICMP_HLEN);
	quote = RXP_MAX(quote, RXP_MIN((uint32_t)orig->l3_len, ihl + 8u));
	pkt = rxp_local_alloc(st, (uint16_t)(RXP_IP4_HLEN + ICMP_HLEN + quote));
	if (!pkt)
		return false;
	o = rxp_pkt_data(pkt) + pkt->l3_off;
	icmp = o + RXP_IP4_HLEN;
	/* IP header: from the ingress interface's address, back to the sender */
	o[0] = 0x45;
	o[1] = 0xc0;	/* precedence "internetwork control", as routers send errors */
	o[2] = (uint8_t)((RXP_IP4_HLEN + ICMP_HLEN + quote) >> 8);
	o[3] = (uint8_t)(RXP_IP4_HLEN + ICMP_HLEN + quote);
	st->ip_id++;
	o[4] = (uint8_t)(st->ip_id >> 8);
	o[5] = (uint8_t)st->ip_id;
	o[6] = 0;
	o[7] = 0;
	o[8] = 64;
	o[9] = RXP_IPPROTO_ICMP;
	o[10] = 0;
	o[11] = 0;
	memcpy(o + 12, &from, 4);
	memcpy(o + 16, &src, 4);
	{
		uint16_t c = rxp_csum(o, RXP_IP4_HLEN);

		memcpy(o + 10, &c, 2);
	}
	icmp[0] = type;
	icmp[1] = code;
	icmp[2] = 0;
	icmp[3] = 0;
	icmp[4] = (uint8_t)(rest >> 24);
	icmp[5] = (uint8_t)(rest >> 16);
	icmp[6] = (uint8_t)(rest >> 8);
	icmp[7] = (uint8_t)rest;
	memcpy(icmp + ICMP_HLEN, ip, quote);
	{
		uint16_t c = rxp_csum(icmp, ICMP_HLEN + quote);

		memcpy(icmp + 2, &c, 2);
	}
	st->stats.icmp_errors++;
	rxp_reply_send(st, pkt, 4, way, src_mac);
	return true;
}

bool rxp_icmp4_error(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code,
		     uint32_t rest)
{
	const uint8_t *ip = rxp_pkt_cdata(orig) + orig->l3_off;
	struct rxp_reply_way way;
	uint32_t src;

	/*
	 * From the address of the interface the error leaves by (RFC 1812
	 * 4.3.2.4): the one the packet came in on, unless the route back to
	 * its sender leaves by another
	 */
	uint32_t from;

	memcpy(&src, ip + 12, 4);
	rxp_reply_way(st, 4, NULL, ip + 12, orig->ifidx, &way);
	from = rxp_l3if_source4(&st->router->ifs[way.out], src);
	if (!from)	/* an interface without an IPv4 address: the router's (its router-id) */
		from = rxp_router_any_addr4(st->router);
	return icmp4_error_from(st, orig, type, code, rest, from, &way);
}

void rxp_icmp4_error_local(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code)
{
	const uint8_t *ip = rxp_pkt_cdata(orig) + orig->l3_off;
	uint32_t dst;

	memcpy(&dst, ip + 16, 4);
	(void)icmp4_error_from(st, orig, type, code, 0, dst, NULL);
}

void rxp_icmp4_local(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	uint8_t *ip = rxp_pkt_data(pkt) + pkt->l3_off;
	uint8_t *icmp = rxp_pkt_data(pkt) + pkt->l4_off;
	uint32_t icmp_len = (uint32_t)pkt->l3_len - (uint32_t)(pkt->l4_off - pkt->l3_off);
	uint8_t dst_mac[6];
	uint32_t a;
	uint16_t c;

	if (pkt->flags & RXP_PKT_F_FRAG) {
		/* no reassembly here: a fragmented echo is not answered, unless by the host */
		if (rxp_host_wants(st, pkt)) {
			rxp_count_delivered(st, pkt, RXP_SINK_OTHER4);
			rxp_host_take(st, pkt);
			return;
		}
		rxp_drop(st, pkt, RXP_DROP_LOCAL_UNHANDLED);
		return;
	}
	if (icmp_len < ICMP_HLEN || rxp_csum(icmp, icmp_len) != 0) {
		rxp_drop(st, pkt, RXP_DROP_ICMP_BAD);
		return;
	}
	if (icmp[0] != RXP_ICMP_ECHO_REQUEST || (pkt->flags & RXP_PKT_F_L2_MCAST)) {
		/* other ICMP to us (errors about what we sent, echo to broadcast): the host's, if any */
		rxp_count_delivered(st, pkt, RXP_SINK_OTHER4);
		rxp_host_take(st, pkt);
		return;
	}
	if (rxp_unlikely(ip[0] != 0x45) && !rxp_ip4_echo_options_ok(st, pkt)) {
		rxp_drop(st, pkt, (enum rxp_drop_reason)pkt->drop_reason);
		return;
	}
	/* Echo reply in place: same id, sequence and data; code 0 (RFC 792). */
	uint16_t old_word = (uint16_t)(icmp[0] << 8 | icmp[1]);

	icmp[0] = RXP_ICMP_ECHO_REPLY;
	icmp[1] = 0;
	memcpy(&c, icmp + 2, 2);
	c = rxp_csum_update16(c, htons(old_word), htons(RXP_ICMP_ECHO_REPLY << 8));
	if (rxp_unlikely(c == 0)) {
		/*
		 * RFC 1624 eqn. 3 cannot tell a message of all zeros (whose
		 * checksum must be 0xffff) from one summing to 0xffff: recompute.
		 */
		icmp[2] = 0;
		icmp[3] = 0;
		c = rxp_csum(icmp, icmp_len);
	}
	memcpy(icmp + 2, &c, 2);
	memcpy(&a, ip + 12, 4);
	memcpy(ip + 12, ip + 16, 4);
	memcpy(ip + 16, &a, 4);
	if (rxp_unlikely(ip[0] != 0x45))
		rxp_ip4_echo_options(ip);	/* recorded routes, timestamps, source routes back */
	ip[8] = 64;
	/* a datagram of our own: an identification of ours (RFC 6864 4.1) */
	st->ip_id++;
	ip[4] = (uint8_t)(st->ip_id >> 8);
	ip[5] = (uint8_t)st->ip_id;
	ip[6] &= 0x40;	/* keep DF, clear MF and offset: the request was whole */
	ip[7] = 0;
	ip[10] = 0;
	ip[11] = 0;
	c = rxp_csum(ip, (ip[0] & 0x0fu) * 4u);
	memcpy(ip + 10, &c, 2);
	memcpy(dst_mac, rxp_pkt_data(pkt) + 6, 6);
	rxp_count_delivered(st, pkt, RXP_SINK_ECHO4);
	rxp_reply_output(st, pkt, 4, pkt->ifidx, dst_mac);
}
