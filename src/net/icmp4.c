/* SPDX-License-Identifier: MIT */
/* ICMPv4 (RFC 792, RFC 1812 4.3): echo reply and the errors a router sends. */
#include <arpa/inet.h>
#include <string.h>
#include "rxpath/csum.h"
#include "host.h"
#include "icmp.h"
#include "ip4_opt.h"
#include "out.h"

/* Types that are errors (RFC 1812 4.3.2.7: never answer an error with an error). */
static bool icmp_type_is_error(uint8_t type)
{
	return type == RXP_ICMP_DEST_UNREACH || type == RXP_ICMP_SOURCE_QUENCH ||
	       type == RXP_ICMP_REDIRECT || type == RXP_ICMP_TIME_EXCEEDED ||
	       type == RXP_ICMP_PARAM_PROB;
}

/* rxp_icmp4_error(), sent from @from (network order), the way @way says (NULL: found here). */
static bool icmp4_error_from(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type,
			     uint8_t code, uint32_t rest, uint32_t from,
			     const struct rxp_reply_way *way)
{
	const struct rxp_ip4_hdr *ip = rxp_pkt_cip4(orig);
	const uint8_t *src_mac = rxp_pkt_ceth(orig)->src;
	uint32_t src = ip->src, dst = ip->dst, quote;
	unsigned ihl = rxp_ip4_ihl(ip);
	struct rxp_reply_way found;
	struct rxp_pkt *pkt;
	struct rxp_ip4_hdr *o;
	struct rxp_icmp_hdr *icmp;

	/*
	 * RFC 1812 4.3.2.7: not about ICMP errors, non-first fragments, broadcast
	 * or multicast, bad sources (one of our own addresses among them, which
	 * a packet from the wire can only have forged)
	 */
	if ((orig->flags & RXP_PKT_F_FRAG_NTH) || (orig->flags & RXP_PKT_F_L2_MCAST) ||
	    rxp_router_is_martian_src4(st->router, src) || dst == 0xffffffffu ||
	    (ntohl(dst) >> 28) == 0xe || !from || rxp_router_is_bcast4(st->router, dst))
		return false;
	/* (the type, the first octet after the header, is there when the packet is that long) */
	if (ip->proto == RXP_IPPROTO_ICMP && orig->l3_len >= ihl + 1 &&
	    icmp_type_is_error(((const struct rxp_icmp_hdr *)((const uint8_t *)ip + ihl))->type))
		return false;
	if (!rxp_ratelimit_take(&st->shared->icmp_limit, st->now_ns)) {
		st->stats.icmp_ratelimited++;
		return false;
	}
	if (!way) {
		rxp_reply_way(st, 4, (const uint8_t *)&from, (const uint8_t *)&src, orig->ifidx, &found);
		way = &found;
	}
	/*
	 * 576 bytes at most (RFC 1812 4.3.2.3), and no more than the link it
	 * leaves by carries; but never less than the header and 8 bytes (RFC
	 * 792), which the sender needs to match it: on a link narrower than
	 * that the error goes in fragments
	 */
	quote = RXP_MIN((uint32_t)orig->l3_len, (uint32_t)RXP_ICMP_QUOTE_MAX);
	quote = RXP_MIN(quote, st->router->ifs[way->out].mtu - RXP_IP4_HLEN - RXP_ICMP_HLEN);
	quote = RXP_MAX(quote, RXP_MIN((uint32_t)orig->l3_len, ihl + 8u));
	pkt = rxp_local_alloc(st, (uint16_t)(RXP_IP4_HLEN + RXP_ICMP_HLEN + quote));
	if (!pkt)
		return false;
	pkt->flags |= RXP_PKT_F_ANSWER;
	o = rxp_pkt_ip4(pkt);
	icmp = (struct rxp_icmp_hdr *)(o + 1);
	/* IP header: from the ingress interface's address, back to the sender */
	o->ver_ihl = RXP_IP4_VER_IHL_NO_OPTS;
	o->tos = 0xc0;	/* precedence "internetwork control", as routers send errors */
	o->tot_len = htons((uint16_t)(RXP_IP4_HLEN + RXP_ICMP_HLEN + quote));
	st->ip_id++;
	o->id = htons(st->ip_id);
	o->frag_off = 0;
	o->ttl = 64;
	o->proto = RXP_IPPROTO_ICMP;
	o->csum = 0;
	o->src = from;
	o->dst = src;
	o->csum = rxp_csum(o, RXP_IP4_HLEN);
	icmp->type = type;
	icmp->code = code;
	icmp->csum = 0;
	icmp->rest = htonl(rest);
	memcpy(icmp + 1, ip, quote);
	icmp->csum = rxp_csum(icmp, RXP_ICMP_HLEN + quote);
	st->stats.icmp_errors++;
	rxp_reply_send(st, pkt, 4, way, src_mac);
	return true;
}

bool rxp_icmp4_error(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code,
		     uint32_t rest)
{
	uint32_t src = rxp_pkt_cip4(orig)->src;
	struct rxp_reply_way way;

	/*
	 * From the address of the interface the error leaves by (RFC 1812
	 * 4.3.2.4): the one the packet came in on, unless the route back to
	 * its sender leaves by another
	 */
	uint32_t from;

	rxp_reply_way(st, 4, NULL, (const uint8_t *)&src, orig->ifidx, &way);
	from = rxp_l3if_source4(&st->router->ifs[way.out], src);
	if (!from)	/* an interface without an IPv4 address: the router's (its router-id) */
		from = rxp_router_any_addr4(st->router);
	return icmp4_error_from(st, orig, type, code, rest, from, &way);
}

void rxp_icmp4_error_local(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code)
{
	(void)icmp4_error_from(st, orig, type, code, 0, rxp_pkt_cip4(orig)->dst, NULL);
}

void rxp_icmp4_local(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	struct rxp_ip4_hdr *ip = rxp_pkt_ip4(pkt);
	struct rxp_icmp_hdr *icmp = rxp_pkt_l4(pkt);
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
	if (icmp_len < RXP_ICMP_HLEN || rxp_csum(icmp, icmp_len) != 0) {
		rxp_drop(st, pkt, RXP_DROP_ICMP_BAD);
		return;
	}
	if (icmp->type != RXP_ICMP_ECHO_REQUEST || (pkt->flags & RXP_PKT_F_L2_MCAST)) {
		/* other ICMP to us (errors about what we sent, echo to broadcast): the host's, if any */
		rxp_count_delivered(st, pkt, RXP_SINK_OTHER4);
		rxp_host_take(st, pkt);
		return;
	}
	if (rxp_unlikely(ip->ver_ihl != RXP_IP4_VER_IHL_NO_OPTS) && !rxp_ip4_echo_options_ok(st, pkt)) {
		rxp_drop(st, pkt, (enum rxp_drop_reason)pkt->drop_reason);
		return;
	}
	/* Echo reply in place: same id, sequence and data; code 0 (RFC 792). */
	uint16_t old_word = (uint16_t)(icmp->type << 8 | icmp->code);

	icmp->type = RXP_ICMP_ECHO_REPLY;
	icmp->code = 0;
	c = rxp_csum_update16(icmp->csum, htons(old_word), htons(RXP_ICMP_ECHO_REPLY << 8));
	if (rxp_unlikely(c == 0)) {
		/*
		 * RFC 1624 eqn. 3 cannot tell a message of all zeros (whose
		 * checksum must be 0xffff) from one summing to 0xffff: recompute.
		 */
		icmp->csum = 0;
		c = rxp_csum(icmp, icmp_len);
	}
	icmp->csum = c;
	a = ip->src;
	ip->src = ip->dst;
	ip->dst = a;
	if (rxp_unlikely(ip->ver_ihl != RXP_IP4_VER_IHL_NO_OPTS))
		rxp_ip4_echo_options(ip);	/* recorded routes, timestamps, source routes back */
	ip->ttl = 64;
	/* a datagram of our own: an identification of ours (RFC 6864 4.1) */
	st->ip_id++;
	ip->id = htons(st->ip_id);
	ip->frag_off &= htons(RXP_IP4_DF);	/* keep DF, clear MF and offset: the request was whole */
	ip->csum = 0;
	ip->csum = rxp_csum(ip, rxp_ip4_ihl(ip));
	memcpy(dst_mac, rxp_pkt_ceth(pkt)->src, 6);
	rxp_count_delivered(st, pkt, RXP_SINK_ECHO4);
	rxp_reply_output(st, pkt, 4, pkt->ifidx, dst_mac);
}
