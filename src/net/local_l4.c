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
#include "rxpath/csum.h"
#include "host.h"
#include "icmp.h"
#include "l4.h"
#include "local.h"
#include "nd.h"
#include "out.h"
#include "reasm.h"

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_ACK 0x10

/* codes of Destination Unreachable and Parameter Problem */
#define ICMP4_PROTO_UNREACH 2
#define ICMP4_PORT_UNREACH 3
#define ICMP6_PORT_UNREACH 4
#define ICMP6_BAD_HEADER 0
#define ICMP6_UNKNOWN_NEXT_HDR 1
#define ICMP6_UNKNOWN_OPTION 2

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
static enum ip6_walk ip6_upper_layer(const uint8_t *ip, uint32_t l3_len, bool reassembled,
				     struct ip6_upper *u)
{
	uint32_t off = RXP_IP6_HLEN, nh_at = 6;
	uint8_t nh = ip[6];

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
			/* an offset, or more to come: a piece for reassembly */
			if ((rxp_load_be16(ip + off + 2) & 0xfff9u) && !(reassembled && !u->fragment)) {
				u->off = off;
				return IP6_UPPER_FRAGMENT;
			}
			u->fragment = true;
		} else if (nh == RXP_IPPROTO_ROUTING) {
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
	const uint8_t *l4 = rxp_pkt_cdata(pkt) + pkt->l4_off;
	bool v6 = pkt->flags & RXP_PKT_F_IP6;

	/* a zero UDP checksum: none computed (RFC 768), invalid over IPv6 (RFC 8200 8.1) */
	if (pkt->l4_proto == RXP_IPPROTO_UDP && rxp_load_be16(l4 + 6) == 0)
		return !v6;
	return rxp_csum_fold(rxp_csum_pseudo_ip(ip, v6, pkt->l4_proto, len) + data_sum) == 0;
}

/*
 * Answers a TCP segment to a port where nothing listens with a reset, per
 * RFC 9293 3.10.7.1: from the segment's acknowledgment number when it
 * carries one, else sequence 0 acknowledging all it occupied. @len is
 * the segment's length, header included.
 */
static void tcp_reset(struct rxp_stack *st, const struct rxp_pkt *orig, uint32_t len)
{
	const uint8_t *ip = rxp_pkt_cdata(orig) + orig->l3_off;
	const uint8_t *tcp = rxp_pkt_cdata(orig) + orig->l4_off;
	bool v6 = orig->flags & RXP_PKT_F_IP6;
	uint32_t ip_hlen = v6 ? RXP_IP6_HLEN : RXP_IP4_HLEN;
	uint32_t seq = 0, ack = 0;
	uint8_t flags = TCP_RST;
	struct rxp_pkt *pkt;
	uint8_t *o, *t;
	uint64_t sum;
	uint16_t c;

	if (tcp[13] & TCP_ACK) {
		seq = rxp_load_be32(tcp + 8);
	} else {
		uint32_t occupied = len - (tcp[12] >> 4) * 4u;

		occupied += !!(tcp[13] & TCP_SYN) + !!(tcp[13] & TCP_FIN);
		ack = rxp_load_be32(tcp + 4) + occupied;
		flags |= TCP_ACK;
	}
	if (!rxp_ratelimit_take(&st->shared->icmp_limit, st->now_ns)) {
		st->stats.icmp_ratelimited++;
		return;
	}
	pkt = rxp_local_alloc(st, (uint16_t)(ip_hlen + RXP_TCP_HLEN));
	if (!pkt)
		return;
	o = rxp_pkt_data(pkt) + pkt->l3_off;
	t = o + ip_hlen;
	/* ports swapped */
	memcpy(t, tcp + 2, 2);
	memcpy(t + 2, tcp, 2);
	seq = htonl(seq);
	ack = htonl(ack);
	memcpy(t + 4, &seq, 4);
	memcpy(t + 8, &ack, 4);
	t[12] = (RXP_TCP_HLEN / 4) << 4;
	t[13] = flags;
	memset(t + 14, 0, 6);	/* window, checksum, urgent pointer */
	if (v6) {
		o[0] = 0x60;
		o[1] = o[2] = o[3] = 0;
		o[4] = 0;
		o[5] = RXP_TCP_HLEN;
		o[6] = RXP_IPPROTO_TCP;
		o[7] = 64;
		memcpy(o + 8, ip + 24, 16);	/* from the address it was sent to */
		memcpy(o + 24, ip + 8, 16);
	} else {
		uint32_t src, dst;

		memcpy(&src, ip + 12, 4);
		memcpy(&dst, ip + 16, 4);
		o[0] = 0x45;
		o[1] = 0;
		o[2] = 0;
		o[3] = RXP_IP4_HLEN + RXP_TCP_HLEN;
		st->ip_id++;
		o[4] = (uint8_t)(st->ip_id >> 8);
		o[5] = (uint8_t)st->ip_id;
		o[6] = o[7] = 0;
		o[8] = 64;
		o[9] = RXP_IPPROTO_TCP;
		o[10] = o[11] = 0;
		memcpy(o + 12, &dst, 4);
		memcpy(o + 16, &src, 4);
		c = rxp_csum(o, RXP_IP4_HLEN);
		memcpy(o + 10, &c, 2);
	}
	sum = rxp_csum_pseudo_ip(o, v6, RXP_IPPROTO_TCP, RXP_TCP_HLEN);
	c = rxp_csum_fold(rxp_csum_partial(t, RXP_TCP_HLEN, sum));
	memcpy(t + 16, &c, 2);
	rxp_reply_output(st, pkt, v6 ? 6 : 4, orig->ifidx, rxp_pkt_cdata(orig) + 6);
}

enum rxp_drop_reason rxp_local_l4_answer(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t len,
					 uint32_t nh_at)
{
	bool v6 = pkt->flags & RXP_PKT_F_IP6;

	switch (pkt->l4_proto) {
	case RXP_IPPROTO_UDP:
		if (v6)
			rxp_icmp6_error_local(st, pkt, RXP_ICMP6_DEST_UNREACH, ICMP6_PORT_UNREACH, 0);
		else
			rxp_icmp4_error_local(st, pkt, RXP_ICMP_DEST_UNREACH, ICMP4_PORT_UNREACH);
		return RXP_DROP_PORT_UNREACH;
	case RXP_IPPROTO_TCP:
		/* RFC 9293 3.10.7.1: a reset is never answered */
		if (!(rxp_pkt_cdata(pkt)[pkt->l4_off + 13] & TCP_RST))
			tcp_reset(st, pkt, len);
		return RXP_DROP_TCP_RESET;
	default:
		/* Protocol Unreachable, or Parameter Problem at the Next Header that named it */
		if (v6)
			rxp_icmp6_error_local(st, pkt, RXP_ICMP6_PARAM_PROB, ICMP6_UNKNOWN_NEXT_HDR, nh_at);
		else
			rxp_icmp4_error_local(st, pkt, RXP_ICMP_DEST_UNREACH, ICMP4_PROTO_UNREACH);
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
		rxp_icmp6_error_local(st, pkt, RXP_ICMP6_PARAM_PROB, ICMP6_UNKNOWN_OPTION, u->nh_at);
		/* fall through */
	case IP6_UPPER_DISCARD:
		return RXP_DROP_IP6_UNKNOWN_OPTION;
	case IP6_UPPER_ROUTING:
		if (!group)
			rxp_icmp6_error_local(st, pkt, RXP_ICMP6_PARAM_PROB, ICMP6_BAD_HEADER, u->nh_at);
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
	const uint8_t *ip = rxp_pkt_cdata(first) + first->l3_off;
	struct ip6_upper u;
	enum ip6_walk w = ip6_upper_layer(ip, first->l3_len, true, &u);
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
	const uint8_t *ip = rxp_pkt_cdata(pkt) + pkt->l3_off;
	bool group = ip[24] == 0xff || (pkt->flags & RXP_PKT_F_L2_MCAST);
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
	if (u.proto == RXP_IPPROTO_ICMP6 && u.off < pkt->l3_len &&
	    (ip[u.off] == RXP_ICMP6_ECHO_REQUEST ||
	     ((ip[u.off] == RXP_ICMP6_MLD_QUERY ||
	       (ip[u.off] >= RXP_ICMP6_ND_FIRST && ip[u.off] <= RXP_ICMP6_REDIRECT)) && !u.fragment))) {
		rxp_icmp6_local(st, pkt);
		return true;
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
	const uint8_t *ip = rxp_pkt_cdata(pkt) + pkt->l3_off;
	const uint8_t *msg;
	uint32_t hbh, len;

	if (ip[6] != 0 || pkt->l3_len < RXP_IP6_HLEN + 8)
		return;
	hbh = (ip[RXP_IP6_HLEN + 1] + 1u) * 8u;
	if (ip[RXP_IP6_HLEN] != RXP_IPPROTO_ICMP6 || pkt->l3_len < RXP_IP6_HLEN + hbh + 4)
		return;
	msg = ip + RXP_IP6_HLEN + hbh;
	len = pkt->l3_len - RXP_IP6_HLEN - hbh;
	if (msg[0] == RXP_ICMP6_MLD_QUERY && rxp_icmp6_csum(ip, msg, len) == 0)
		rxp_mld_query(st, pkt, msg, len);
}

void rxp_local_l4(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	bool v6 = pkt->flags & RXP_PKT_F_IP6;
	enum rxp_sink_class cls;
	uint32_t nh_at = 9, len;

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
			len = rxp_load_be16(rxp_pkt_cdata(pkt) + pkt->l4_off + 4);
		if (!rxp_l4_sum_ok(pkt, len,
				   rxp_csum_partial(rxp_pkt_cdata(pkt) + pkt->l4_off, len, 0))) {
			rxp_drop(st, pkt, RXP_DROP_L4_CSUM);
			return;
		}
	}
	rxp_drop(st, pkt, rxp_local_l4_answer(st, pkt, len, nh_at));
}
