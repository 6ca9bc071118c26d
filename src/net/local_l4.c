/* SPDX-License-Identifier: MIT */
/*
 * UDP, TCP and other transport addressed to one of the router's own
 * addresses. A port's host path (its TAP) takes what it can and the kernel
 * answers; without one, nothing here listens, so the router answers as a
 * host with no socket does: UDP gets Port Unreachable (RFC 1122 3.2.2.1,
 * RFC 4443 3.1 code 4), TCP a reset (RFC 9293 3.10.7.1), any other
 * protocol Protocol Unreachable (IPv4) or Parameter Problem, unrecognized
 * Next Header (RFC 8200 4). That is what ends a traceroute to the router and
 * refuses a connection to it at once instead of letting it time out. The
 * options of IPv6 Hop-by-Hop and Destination Options headers on the way are
 * acted on as RFC 8200 4.2 says for options the router does not know.
 *
 * The transport checksum is verified first, as a host does before it
 * answers: a corrupted segment is dropped, not answered. Replies share the
 * ICMP rate limit, resets included, so a flood to a closed port costs at
 * most the bucket's rate. Multicast and broadcast (never answered) go to
 * the sink and are counted as delivered, as before, once an IPv6 packet's
 * extension headers have been acted on; fragments are reassembled first
 * (reasm.c), which answers through rxp_local_l4_answer().
 */
#include <arpa/inet.h>
#include <stddef.h>
#include "rxpath/csum.h"
#include "host.h"
#include "icmp.h"
#include "l4.h"
#include "local.h"
#include "nd.h"
#include "out.h"
#include "reasm.h"

/* The upper layer of an IPv6 packet to us, past the extension headers it may carry. */
struct ip6_upper {
	uint32_t off;		/* its header, from the IPv6 header */
	uint32_t nh_at;		/* the Next Header byte that names it, from the IPv6 header */
	uint8_t proto;
	bool fragment;		/* a fragment header (an atomic one) was stepped over */
};

enum ip6_walk {
	IP6_UPPER_FOUND,	/* @u filled in */
	IP6_UPPER_FRAGMENT,	/* a fragment of a larger datagram: u->off is its Fragment header */
	IP6_UPPER_NOT_FOLLOWED,	/* a chain longer than any a sender has reason to build */
	IP6_UPPER_TRUNCATED,	/* a header or option runs past the packet */
	IP6_UPPER_DISCARD,	/* an unrecognized option says discard (silently) */
	IP6_UPPER_OPTION_ICMP,	/* ... and send Parameter Problem code 2, pointer in u->nh_at,
				 * even to a multicast destination (option type 10xxxxxx) */
	IP6_UPPER_OPTION_ICMP_UNICAST,	/* ... only to a unicast one (11xxxxxx) */
	IP6_UPPER_ROUTING,	/* a routing header with segments left: Parameter Problem code 0
				 * at its Routing Type, u->nh_at */
};

/*
 * The options of a Hop-by-Hop or Destination Options header at @off (RFC
 * 8200 4.2): Pad1, PadN and Router Alert are understood; any other type
 * says by its two high bits what to do with a packet that carries it:
 * skip the option (00), discard the packet (01), discard it and send
 * Parameter Problem code 2 (10), the same but not to a multicast
 * destination (11).
 */
static enum ip6_walk ip6_options(const uint8_t *ip, uint32_t off, uint32_t end,
				 struct ip6_upper *u)
{
	for (uint32_t i = off + 2; i < end;) {
		uint8_t type = ip[i];

		if (type == 0) {	/* Pad1 */
			i++;
			continue;
		}
		if (i + 2 > end || i + 2 + ip[i + 1] > end)
			return IP6_UPPER_TRUNCATED;
		if (type != 1 && type != 5 && (type >> 6) != 0) {	/* not PadN, Router Alert */
			if ((type >> 6) == 1)
				return IP6_UPPER_DISCARD;
			u->nh_at = i;
			return (type >> 6) == 2 ? IP6_UPPER_OPTION_ICMP : IP6_UPPER_OPTION_ICMP_UNICAST;
		}
		i += 2u + ip[i + 1];
	}
	return IP6_UPPER_FOUND;
}

/*
 * Walks the extension headers of a packet to us, every length checked, to
 * its upper layer (RFC 8200 4): Hop-by-Hop and Destination Options headers
 * have their options acted on; a routing header with segments left is one
 * of a type the router does not follow (4.4; type 0 is never followed, RFC
 * 5095); a fragment header that is the whole datagram (offset 0, no more
 * fragments, RFC 6946) is stepped over, and so is the first one of a
 * datagram @reassembled from fragments (@ip is its first fragment). A
 * Hop-by-Hop header anywhere but first is an unrecognized Next Header
 * (4.1): returned as upper layer 0.
 */
static enum ip6_walk ip6_upper_layer(const struct rxp_ip6_hdr *ip6, uint32_t l3_len,
				     bool reassembled, struct ip6_upper *u)
{
	const uint8_t *ip = (const uint8_t *)ip6;	/* the headers at their offsets from it */
	uint32_t off = RXP_IP6_HLEN, nh_at = offsetof(struct rxp_ip6_hdr, next_hdr);
	uint8_t nh = ip6->next_hdr;

	u->fragment = false;
	for (unsigned n = 0; n < 8; n++) {
		bool ext = nh == RXP_IPPROTO_DSTOPTS || nh == RXP_IPPROTO_ROUTING ||
			   nh == RXP_IPPROTO_FRAGMENT || (nh == RXP_IPPROTO_HOPOPTS && n == 0);
		uint32_t end;

		if (!ext) {
			u->off = off;
			u->nh_at = nh_at;
			u->proto = nh;
			return IP6_UPPER_FOUND;
		}
		if (off + 8 > l3_len)
			return IP6_UPPER_TRUNCATED;
		end = off + (nh == RXP_IPPROTO_FRAGMENT ? 8u : (ip[off + 1] + 1u) * 8u);
		if (end > l3_len)
			return IP6_UPPER_TRUNCATED;
		if (nh == RXP_IPPROTO_FRAGMENT) {
			const struct rxp_ip6_frag_hdr *fh = (const struct rxp_ip6_frag_hdr *)(ip + off);

			/* an offset, or more to come: a piece for reassembly */
			if ((ntohs(fh->frag_off) & (RXP_IP6_FRAG_OFFMASK | RXP_IP6_FRAG_MF)) &&
			    !(reassembled && !u->fragment)) {
				u->off = off;
				return IP6_UPPER_FRAGMENT;
			}
			u->fragment = true;
		} else if (nh == RXP_IPPROTO_ROUTING) {
			/* next header, length, Routing Type, Segments Left (RFC 8200 4.4) */
			if (ip[off + 3] != 0) {
				u->nh_at = off + 2;
				return IP6_UPPER_ROUTING;
			}
		} else {
			enum ip6_walk w = ip6_options(ip, off, end, u);

			if (w != IP6_UPPER_FOUND)
				return w;
		}
		nh_at = off;
		nh = ip[off];
		off = end;
	}
	return IP6_UPPER_NOT_FOLLOWED;
}

bool rxp_l4_sum_ok(const struct rxp_pkt *pkt, uint32_t len, uint64_t data_sum)
{
	const uint8_t *ip = rxp_pkt_cdata(pkt) + pkt->l3_off;
	const struct rxp_udp_hdr *udp = rxp_pkt_cl4(pkt);
	bool v6 = pkt->flags & RXP_PKT_F_IP6;

	/* a zero UDP checksum: none computed (RFC 768), invalid over IPv6 (RFC 8200 8.1) */
	if (pkt->l4_proto == RXP_IPPROTO_UDP && udp->csum == 0)
		return !v6;
	return rxp_csum_fold(rxp_csum_pseudo_ip(ip, v6, pkt->l4_proto, len) + data_sum) == 0;
}

/*
 * Answers a TCP segment to a port where nothing listens with a reset, per
 * RFC 9293 3.10.7.1: from the segment's acknowledgment number when it
 * carries one, else sequence 0 acknowledging all it occupied. @len is
 * the segment's length, header included.
 */
void rxp_tcp_reset(struct rxp_stack *st, const struct rxp_pkt *orig, uint32_t len)
{
	const struct rxp_tcp_hdr *tcp = rxp_pkt_cl4(orig);
	bool v6 = orig->flags & RXP_PKT_F_IP6;
	uint32_t ip_hlen = v6 ? RXP_IP6_HLEN : RXP_IP4_HLEN;
	uint32_t seq = 0, ack = 0;
	uint8_t flags = RXP_TCP_F_RST;
	struct rxp_pkt *pkt;
	struct rxp_tcp_hdr *t;
	uint8_t *o;
	uint64_t sum;

	if (tcp->flags & RXP_TCP_F_ACK) {
		seq = ntohl(tcp->ack);
	} else {
		uint32_t occupied = len - rxp_tcp_doff(tcp);

		occupied += !!(tcp->flags & RXP_TCP_F_SYN) + !!(tcp->flags & RXP_TCP_F_FIN);
		ack = ntohl(tcp->seq) + occupied;
		flags |= RXP_TCP_F_ACK;
	}
	if (!rxp_ratelimit_take(&st->shared->icmp_limit, st->now_ns)) {
		st->stats.icmp_ratelimited++;
		return;
	}
	pkt = rxp_local_alloc(st, (uint16_t)(ip_hlen + RXP_TCP_HLEN));
	if (!pkt)
		return;
	pkt->flags |= RXP_PKT_F_ANSWER;
	o = rxp_pkt_data(pkt) + pkt->l3_off;
	t = (struct rxp_tcp_hdr *)(o + ip_hlen);
	/* ports swapped */
	t->sport = tcp->dport;
	t->dport = tcp->sport;
	t->seq = htonl(seq);
	t->ack = htonl(ack);
	t->doff_rsvd = (RXP_TCP_HLEN / 4) << 4;
	t->flags = flags;
	t->window = 0;
	t->csum = 0;
	t->urg = 0;
	if (v6) {
		const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(orig);
		struct rxp_ip6_hdr *o6 = (struct rxp_ip6_hdr *)o;

		o6->ver_tc_flow = htonl(6u << 28);	/* version 6; traffic class and flow label 0 */
		o6->payload_len = htons(RXP_TCP_HLEN);
		o6->next_hdr = RXP_IPPROTO_TCP;
		o6->hop_limit = 64;
		memcpy(o6->src, ip->dst, 16);	/* from the address it was sent to */
		memcpy(o6->dst, ip->src, 16);
	} else {
		const struct rxp_ip4_hdr *ip = rxp_pkt_cip4(orig);
		struct rxp_ip4_hdr *o4 = (struct rxp_ip4_hdr *)o;

		o4->ver_ihl = RXP_IP4_VER_IHL_NO_OPTS;
		o4->tos = 0;
		o4->tot_len = htons(RXP_IP4_HLEN + RXP_TCP_HLEN);
		st->ip_id++;
		o4->id = htons(st->ip_id);
		o4->frag_off = 0;
		o4->ttl = 64;
		o4->proto = RXP_IPPROTO_TCP;
		o4->csum = 0;
		o4->src = ip->dst;	/* from the address it was sent to */
		o4->dst = ip->src;
		o4->csum = rxp_csum(o4, RXP_IP4_HLEN);
	}
	sum = rxp_csum_pseudo_ip(o, v6, RXP_IPPROTO_TCP, RXP_TCP_HLEN);
	t->csum = rxp_csum_fold(rxp_csum_partial(t, RXP_TCP_HLEN, sum));
	rxp_reply_output(st, pkt, v6 ? 6 : 4, orig->ifidx, rxp_pkt_ceth(orig)->src);
}

enum rxp_drop_reason rxp_local_l4_answer(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t len,
					 uint32_t nh_at)
{
	bool v6 = pkt->flags & RXP_PKT_F_IP6;

	switch (pkt->l4_proto) {
	case RXP_IPPROTO_UDP:
		if (v6)
			rxp_icmp6_error_local(st, pkt, RXP_ICMP6_DEST_UNREACH, RXP_ICMP6_UNREACH_PORT, 0);
		else
			rxp_icmp4_error_local(st, pkt, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_PORT);
		return RXP_DROP_PORT_UNREACH;
	case RXP_IPPROTO_TCP:
		/* RFC 9293 3.10.7.1: a reset is never answered */
		if (!(((const struct rxp_tcp_hdr *)rxp_pkt_cl4(pkt))->flags & RXP_TCP_F_RST))
			rxp_tcp_reset(st, pkt, len);
		return RXP_DROP_TCP_RESET;
	default:
		/* Protocol Unreachable, or Parameter Problem at the Next Header that named it */
		if (v6)
			rxp_icmp6_error_local(st, pkt, RXP_ICMP6_PARAM_PROB, RXP_ICMP6_PARAM_NEXT_HDR, nh_at);
		else
			rxp_icmp4_error_local(st, pkt, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_PROTO);
		return RXP_DROP_PROTO_UNREACH;
	}
}

/*
 * IPv6 to us: the extension headers walked and acted on (ip6_upper_layer),
 * then the upper layer taken as rxp_local_l4() takes it. Returns true when
 * the packet was consumed here. A multicast destination, or a unicast one
 * in a link-layer multicast frame, gets an error only for an option of type
 * 10xxxxxx (RFC 4443 2.4 (e.3)), and its upper layer goes to the sink.
 */
/*
 * What an IPv6 header chain's walk asks for besides finding the upper layer:
 * the Parameter Problem its options or routing header call for (about
 * @pkt), and the reason to drop it under. RXP_DROP_MAX when the walk found
 * the upper layer. @group: a multicast destination, or a unicast one in a
 * link-layer multicast frame.
 */
static enum rxp_drop_reason chain_answer(struct rxp_stack *st, struct rxp_pkt *pkt,
					 enum ip6_walk w, const struct ip6_upper *u, bool group)
{
	switch (w) {
	case IP6_UPPER_FOUND:
		break;
	case IP6_UPPER_TRUNCATED:
		return RXP_DROP_L4_TRUNCATED;
	case IP6_UPPER_OPTION_ICMP_UNICAST:
		if (group)
			return RXP_DROP_IP6_UNKNOWN_OPTION;
		/* fall through */
	case IP6_UPPER_OPTION_ICMP:
		rxp_icmp6_error_local(st, pkt, RXP_ICMP6_PARAM_PROB, RXP_ICMP6_PARAM_OPTION, u->nh_at);
		/* fall through */
	case IP6_UPPER_DISCARD:
		return RXP_DROP_IP6_UNKNOWN_OPTION;
	case IP6_UPPER_ROUTING:
		if (!group)
			rxp_icmp6_error_local(st, pkt, RXP_ICMP6_PARAM_PROB, RXP_ICMP6_PARAM_HEADER, u->nh_at);
		return RXP_DROP_IP6_ROUTING_HEADER;
	case IP6_UPPER_FRAGMENT:	/* the callers take these first */
	case IP6_UPPER_NOT_FOLLOWED:
		return RXP_DROP_LOCAL_UNHANDLED;
	}
	return RXP_DROP_MAX;
}

enum rxp_drop_reason rxp_ip6_reasm_chain(struct rxp_stack *st, struct rxp_pkt *first,
					 uint32_t *nh_at)
{
	struct ip6_upper u;
	enum ip6_walk w = ip6_upper_layer(rxp_pkt_cip6(first), first->l3_len, true, &u);
	enum rxp_drop_reason why = chain_answer(st, first, w, &u, false);

	if (why != RXP_DROP_MAX)
		return why;
	first->l4_off = (uint16_t)(first->l3_off + u.off);
	first->l4_proto = u.proto;
	*nh_at = u.nh_at;
	return RXP_DROP_MAX;
}

static bool local_ip6(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t *nh_at)
{
	const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(pkt);
	bool group = ip->dst[0] == 0xff || (pkt->flags & RXP_PKT_F_L2_MCAST);
	struct ip6_upper u;
	enum ip6_walk w = ip6_upper_layer(ip, pkt->l3_len, false, &u);
	enum rxp_drop_reason why;

	if (w == IP6_UPPER_FRAGMENT && !group) {
		/* behind other headers (RFC 8200 4.5: they are the unfragmentable part) */
		pkt->l4_off = (uint16_t)(pkt->l3_off + u.off);
		pkt->l4_proto = RXP_IPPROTO_FRAGMENT;
		rxp_reasm_input(st, pkt);
		return true;
	}
	if (w == IP6_UPPER_FRAGMENT || (w == IP6_UPPER_NOT_FOLLOWED && group)) {
		rxp_sink_one(st, pkt);	/* to a group: never reassembled, taken as it is */
		return true;
	}
	why = chain_answer(st, pkt, w, &u, group);
	if (why != RXP_DROP_MAX) {
		rxp_drop(st, pkt, why);
		return true;
	}
	pkt->l4_off = (uint16_t)(pkt->l3_off + u.off);
	pkt->l4_proto = u.proto;
	*nh_at = u.nh_at;
	/*
	 * ICMPv6 behind extension headers: an echo request is answered, and
	 * Neighbor Discovery taken as without them, save in a fragment (RFC
	 * 6980: ignored); an MLD query comes behind its Router Alert
	 */
	if (u.proto == RXP_IPPROTO_ICMP6 && u.off < pkt->l3_len) {
		const struct rxp_icmp_hdr *icmp = rxp_pkt_cl4(pkt);

		if (icmp->type == RXP_ICMP6_ECHO_REQUEST ||
		    ((icmp->type == RXP_ICMP6_MLD_QUERY ||
		      (icmp->type >= RXP_ICMP6_ND_FIRST && icmp->type <= RXP_ICMP6_REDIRECT)) &&
		     !u.fragment)) {
			rxp_icmp6_local(st, pkt);
			return true;
		}
	}
	/* the rest of ICMPv6 as before; multicast and no next header: nothing to answer */
	if (u.proto == RXP_IPPROTO_ICMP6 || u.proto == RXP_IPPROTO_NONE || group) {
		rxp_sink_one(st, pkt);
		return true;
	}
	return false;
}

/*
 * An MLD query behind its Hop-by-Hop Router Alert, on its way to a host
 * path: the router answers for its own groups first (the kernel behind the
 * TAP reports only the groups it joined itself).
 */
static void mld_before_host(struct rxp_stack *st, const struct rxp_pkt *pkt)
{
	const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(pkt);
	const uint8_t *hbh = (const uint8_t *)(ip + 1);	/* its Next Header, then its length */
	const struct rxp_icmp_hdr *msg;
	uint32_t hbh_len, len;

	if (ip->next_hdr != RXP_IPPROTO_HOPOPTS || pkt->l3_len < RXP_IP6_HLEN + 8)
		return;
	hbh_len = (hbh[1] + 1u) * 8u;
	if (hbh[0] != RXP_IPPROTO_ICMP6 || pkt->l3_len < RXP_IP6_HLEN + hbh_len + 4)
		return;
	msg = (const struct rxp_icmp_hdr *)(hbh + hbh_len);
	len = pkt->l3_len - RXP_IP6_HLEN - hbh_len;
	if (msg->type == RXP_ICMP6_MLD_QUERY && rxp_icmp6_csum(ip, msg, len) == 0)
		rxp_mld_query(st, pkt, (const uint8_t *)msg, len);
}

void rxp_local_l4(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	bool v6 = pkt->flags & RXP_PKT_F_IP6;
	enum rxp_sink_class cls;
	/* the byte naming the upper layer: IPv4's protocol; for IPv6, found by local_ip6() */
	uint32_t nh_at = offsetof(struct rxp_ip4_hdr, proto), len;

	if (rxp_host_wants(st, pkt) || (!v6 && (pkt->flags & (RXP_PKT_F_FRAG | RXP_PKT_F_L2_MCAST)))) {
		if (v6 && rxp_host_wants(st, pkt))
			mld_before_host(st, pkt);
		rxp_sink_one(st, pkt);
		return;
	}
	if (v6 && local_ip6(st, pkt, &nh_at))
		return;
	len = (uint32_t)pkt->l3_len - (uint32_t)(pkt->l4_off - pkt->l3_off);
	if (pkt->l4_proto == RXP_IPPROTO_UDP || pkt->l4_proto == RXP_IPPROTO_TCP) {
		/* lengths and offsets, as the sink checks them */
		if (rxp_l4_input(pkt, &cls) != RXP_NEXT_DELIVER) {
			rxp_drop(st, pkt, (enum rxp_drop_reason)pkt->drop_reason);
			return;
		}
		if (pkt->l4_proto == RXP_IPPROTO_UDP)
			len = ntohs(((const struct rxp_udp_hdr *)rxp_pkt_cl4(pkt))->len);
		if (!rxp_l4_sum_ok(pkt, len, rxp_csum_partial(rxp_pkt_cl4(pkt), len, 0))) {
			rxp_drop(st, pkt, RXP_DROP_L4_CSUM);
			return;
		}
	}
	rxp_drop(st, pkt, rxp_local_l4_answer(st, pkt, len, nh_at));
}
