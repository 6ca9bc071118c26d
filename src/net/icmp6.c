/* SPDX-License-Identifier: MIT */
/* ICMPv6 (RFC 4443): echo reply, the errors a router sends, and the demux to ND. */
#include <string.h>
#include "rxpath/csum.h"
#include "host.h"
#include "icmp.h"
#include "ip6_addr.h"
#include "nd.h"
#include "out.h"

static const uint8_t zero16[16];

uint16_t rxp_icmp6_csum(const void *ip, const void *icmp, uint32_t len)
{
	const struct rxp_ip6_hdr *ip6 = ip;
	uint64_t sum = rxp_csum_pseudo6(ip6->src, ip6->dst, RXP_IPPROTO_ICMP6, len);

	return rxp_csum_fold(rxp_csum_partial(icmp, len, sum));
}

void rxp_icmp6_finish(void *ip, const uint8_t src[16], const uint8_t dst[16], uint8_t hop_limit,
		      uint32_t len)
{
	struct rxp_ip6_hdr *ip6 = ip;
	struct rxp_icmp_hdr *icmp = (struct rxp_icmp_hdr *)(ip6 + 1);

	ip6->ver_tc_flow = htonl(6u << 28);	/* version 6; traffic class and flow label 0 */
	ip6->payload_len = htons((uint16_t)len);
	ip6->next_hdr = RXP_IPPROTO_ICMP6;
	ip6->hop_limit = hop_limit;
	memcpy(ip6->src, src, 16);
	memcpy(ip6->dst, dst, 16);
	icmp->csum = 0;
	icmp->csum = rxp_icmp6_csum(ip6, icmp, len);
}

static bool ip6_is_global(const uint8_t *a)
{
	return a[0] != 0xff && !rxp_ip6_is_link_local(a);
}

bool rxp_l3if_anycast6(const struct rxp_l3if *ifp, const uint8_t addr[16])
{
	for (unsigned i = 0; i < ifp->n_addr6; i++) {
		unsigned plen = ifp->plen6[i];
		uint8_t host = 0;

		/* RFC 6164: no Subnet-Router anycast on /127 (or /128) */
		if (plen >= 127 || !ip6_is_global(ifp->addr6[i]) ||
		    !rxp_prefix_eq(ifp->addr6[i], addr, plen))
			continue;
		if (plen % 8)
			host = addr[plen / 8] & (uint8_t)(0xffu >> (plen % 8));
		for (unsigned k = (plen + 7) / 8; k < 16; k++)
			host |= addr[k];
		if (!host)
			return true;
	}
	return false;
}

static unsigned add_group(uint8_t (*groups)[16], unsigned n, const uint8_t group[16])
{
	for (unsigned i = 0; i < n; i++)
		if (!memcmp(groups[i], group, 16))
			return n;
	memcpy(groups[n], group, 16);
	return n + 1;
}

static const uint8_t all_routers[16] = { 0xff, 0x02, [15] = 2 };
static const uint8_t site_routers[16] = { 0xff, 0x05, [15] = 2 };

/*
 * Writes the solicited-node groups of @ifp's address @i to @g: its own, and
 * its Subnet-Router anycast address's when it has one (as
 * rxp_l3if_anycast6() finds them). Returns how many, 1 or 2.
 */
static unsigned addr_groups(const struct rxp_l3if *ifp, unsigned i, uint8_t g[2][16])
{
	const uint8_t *a = ifp->addr6[i];
	uint8_t anycast[16];

	rxp_ip6_solicited_node(g[0], a);
	if (ifp->plen6[i] >= 127 || !ip6_is_global(a))
		return 1;
	rxp_prefix_mask(6, a, ifp->plen6[i], anycast);
	rxp_ip6_solicited_node(g[1], anycast);
	return 2;
}

unsigned rxp_l3if_groups6(const struct rxp_l3if *ifp, uint8_t (*groups)[16])
{
	uint8_t g[2][16];
	unsigned n = 0;

	n = add_group(groups, n, all_routers);
	n = add_group(groups, n, site_routers);
	for (unsigned i = 0; i < ifp->n_addr6; i++)
		for (unsigned k = 0, m = addr_groups(ifp, i, g); k < m; k++)
			n = add_group(groups, n, g[k]);
	return n;
}

bool rxp_l3if_listens6(const struct rxp_l3if *ifp, const uint8_t group[16])
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
	uint8_t g[2][16];

	if (!memcmp(group, all_nodes, 16) || !memcmp(group, all_routers, 16) ||
	    !memcmp(group, site_routers, 16))
		return true;
	for (unsigned i = 0; i < ifp->n_addr6; i++)
		for (unsigned k = 0, m = addr_groups(ifp, i, g); k < m; k++)
			if (!memcmp(g[k], group, 16))
				return true;
	return false;
}

void rxp_icmp6_source(const struct rxp_router *r, const struct rxp_l3if *ifp,
			 const uint8_t *peer, bool other_ifs, uint8_t out[16])
{
	const uint8_t *best = NULL;

	memcpy(out, ifp->addr6[0], 16);
	if (rxp_ip6_is_link_local(peer))
		return;
	for (unsigned i = 0; i < ifp->n_addr6; i++) {
		if (!ip6_is_global(ifp->addr6[i]))
			continue;
		if (rxp_prefix_eq(ifp->addr6[i], peer, ifp->plen6[i])) {
			best = ifp->addr6[i];
			break;
		}
		if (!best)
			best = ifp->addr6[i];
	}
	for (unsigned f = 0; other_ifs && !best && f < r->n_ifs; f++)
		for (unsigned i = 0; !best && i < r->ifs[f].n_addr6; i++)
			if (ip6_is_global(r->ifs[f].addr6[i]))
				best = r->ifs[f].addr6[i];
	if (best)
		memcpy(out, best, 16);
}

/* Returns true when @addr is a unicast address of one of the router's interfaces. */
/* Returns true when @addr is the Subnet-Router anycast address of one of the router's prefixes. */
static bool router_anycast6(const struct rxp_router *r, const uint8_t *addr)
{
	for (unsigned f = 0; f < r->n_ifs; f++)
		if (rxp_l3if_anycast6(&r->ifs[f], addr))
			return true;
	return false;
}

/*
 * RFC 4443 2.4 (e.1, e.2): true when @ip carries an ICMPv6 error or a
 * Redirect, or may (a later fragment of ICMPv6, a chain we cannot follow).
 * Steps over extension headers (RFC 8200 4) with every length checked.
 */
static bool carries_icmp6_error(const struct rxp_ip6_hdr *ip6, uint32_t l3_len)
{
	const uint8_t *ip = (const uint8_t *)ip6;	/* the headers at their offsets from it */
	uint32_t off = RXP_IP6_HLEN;
	uint8_t nh = ip6->next_hdr;

	for (unsigned n = 0; n < 8; n++) {
		switch (nh) {
		case RXP_IPPROTO_ICMP6:
			if (off >= l3_len)
				return true;
			/* the type: below 128 for the errors (RFC 4443 2.1) */
			return ip[off] < 128 || ip[off] == RXP_ICMP6_REDIRECT;
		case RXP_IPPROTO_HOPOPTS:
		case RXP_IPPROTO_ROUTING:
		case RXP_IPPROTO_DSTOPTS:
			if (off + 2 > l3_len)
				return true;
			nh = ip[off];
			off += (ip[off + 1] + 1u) * 8u;
			break;
		case RXP_IPPROTO_AH:
			if (off + 2 > l3_len)
				return true;
			nh = ip[off];
			off += (ip[off + 1] + 2u) * 4u;
			break;
		case RXP_IPPROTO_FRAGMENT: {
			const struct rxp_ip6_frag_hdr *fh;

			if (off + RXP_IP6_FRAG_HLEN > l3_len)
				return true;
			fh = (const struct rxp_ip6_frag_hdr *)(ip + off);
			nh = fh->next_hdr;
			/* a later fragment hides its message type: assume the worst for ICMPv6 */
			if (ntohs(fh->frag_off) & RXP_IP6_FRAG_OFFMASK)
				return nh == RXP_IPPROTO_ICMP6;
			off += RXP_IP6_FRAG_HLEN;
			break;
		}
		default:
			return false;	/* another upper layer, or no next header */
		}
	}
	return true;
}

/* rxp_icmp6_error(), sent from @from, or from the address rxp_icmp6_source() picks when NULL. */
static void icmp6_error_from(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type,
			     uint8_t code, uint32_t param, const uint8_t *from)
{
	const struct rxp_router *r = st->router;
	const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(orig);
	const uint8_t *osrc = ip->src, *odst = ip->dst;
	const struct rxp_l3if *ifp = &r->ifs[orig->ifidx];
	bool to_group_ok = type == RXP_ICMP6_PKT_TOO_BIG ||
			   (type == RXP_ICMP6_PARAM_PROB && code == RXP_ICMP6_PARAM_OPTION);
	struct rxp_reply_way way = { .out = orig->ifidx };
	uint8_t src_mac[6], src[16];
	struct rxp_pkt *pkt;
	uint32_t quote;
	struct rxp_ip6_hdr *o;
	struct rxp_icmp_hdr *icmp;

	/* a packet the router made has no sender to tell */
	if (orig->flags & RXP_PKT_F_LOCAL_OUT)
		return;
	/* RFC 4443 2.4 (e.3, e.4): not about multicast, save Packet Too Big and option code 2 */
	if (!to_group_ok && (odst[0] == 0xff || (orig->flags & RXP_PKT_F_L2_MCAST)))
		return;
	/*
	 * (e.6): only to a source that names one node: not ::, ::1, multicast or
	 * an anycast we know; nor to our own, which a packet from the wire forged
	 */
	if (osrc[0] == 0xff || (osrc[0] == 0 && !memcmp(osrc, zero16, 15) && osrc[15] <= 1) ||
	    router_anycast6(r, osrc) || rxp_router_has_addr6(r, osrc))
		return;
	if (carries_icmp6_error(ip, orig->l3_len))
		return;
	/* (f): rate limited */
	if (!rxp_ratelimit_take(&st->shared->icmp_limit, st->now_ns)) {
		st->stats.icmp_ratelimited++;
		return;
	}
	/* (c): as much of the packet as fits in the minimum MTU */
	quote = RXP_MIN((uint32_t)orig->l3_len, RXP_IP6_MIN_MTU - RXP_IP6_HLEN - RXP_ICMP_HLEN);
	pkt = rxp_local_alloc(st, (uint16_t)(RXP_IP6_HLEN + RXP_ICMP_HLEN + quote));
	if (!pkt)
		return;
	pkt->flags |= RXP_PKT_F_ANSWER;
	memcpy(src_mac, rxp_pkt_ceth(orig)->src, 6);
	if (from) {
		memcpy(src, from, 16);
	} else {
		/* from the interface it leaves by (RFC 4443 2.2), save a link-local one of another link */
		rxp_reply_way(st, 6, NULL, osrc, orig->ifidx, &way);
		rxp_icmp6_source(r, &r->ifs[way.out], osrc, true, src);
		if (way.out != orig->ifidx && rxp_ip6_is_link_local(src))
			rxp_icmp6_source(r, ifp, osrc, true, src);
	}
	o = rxp_pkt_ip6(pkt);
	icmp = (struct rxp_icmp_hdr *)(o + 1);
	icmp->type = type;
	icmp->code = code;
	icmp->rest = htonl(param);	/* MTU, pointer, or unused (zero) */
	memcpy(icmp + 1, ip, quote);
	rxp_icmp6_finish(o, src, osrc, 64, RXP_ICMP_HLEN + quote);
	st->stats.icmp_errors++;
	/* the way found above holds unless the source chosen is one that must stay on its link */
	if (!from && !rxp_ip6_is_link_local(src))
		rxp_reply_send(st, pkt, 6, &way, src_mac);
	else
		rxp_reply_output(st, pkt, 6, orig->ifidx, src_mac);
}

void rxp_icmp6_error(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code,
		     uint32_t param)
{
	icmp6_error_from(st, orig, type, code, param, NULL);
}

void rxp_icmp6_error_local(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code,
			   uint32_t param)
{
	const struct rxp_router *r = st->router;
	const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(orig);
	uint8_t from[16];

	/*
	 * From the address the packet was sent to; when that is a group or an
	 * anycast address, from a unicast one of the interface it came in on
	 * (RFC 4443 2.2 (b)), not of the one the error leaves by.
	 */
	if (rxp_router_has_addr6(r, ip->dst)) {
		memcpy(from, ip->dst, 16);
	} else {
		rxp_icmp6_source(r, &r->ifs[orig->ifidx], ip->src, false, from);
		/* that interface has a link-local address only: one of the way out reaches further */
		if (rxp_ip6_is_link_local(from) && !rxp_ip6_is_link_local(ip->src)) {
			icmp6_error_from(st, orig, type, code, param, NULL);
			return;
		}
	}
	icmp6_error_from(st, orig, type, code, param, from);
}

/* RFC 4443 4.2: the request becomes the reply, same identifier, sequence and data. */
static void echo_reply(struct rxp_stack *st, struct rxp_pkt *pkt, struct rxp_ip6_hdr *ip,
		       struct rxp_icmp_hdr *icmp, uint32_t icmp_len)
{
	const struct rxp_router *r = st->router;
	const struct rxp_l3if *ifp = &r->ifs[pkt->ifidx];
	uint8_t src[16], dst_mac[6];

	if (icmp_len < RXP_ICMP_HLEN) {
		rxp_drop(st, pkt, RXP_DROP_ICMP_BAD);
		return;
	}
	/* the reply is the IPv6 header and the message: the request's extension headers stay */
	if (icmp != (struct rxp_icmp_hdr *)(ip + 1)) {
		memmove(ip + 1, icmp, icmp_len);
		icmp = (struct rxp_icmp_hdr *)(ip + 1);
		ip->next_hdr = RXP_IPPROTO_ICMP6;
		pkt->l4_off = (uint16_t)(pkt->l3_off + RXP_IP6_HLEN);
		pkt->l3_len = (uint16_t)(RXP_IP6_HLEN + icmp_len);
	}
	ip->payload_len = htons((uint16_t)icmp_len);
	/* from the address asked; for a group or anycast, one of the interface's (RFC 4443 4.2) */
	if (ip->dst[0] != 0xff && rxp_router_has_addr6(r, ip->dst))
		memcpy(src, ip->dst, 16);
	else
		rxp_icmp6_source(r, ifp, ip->src, false, src);
	memcpy(ip->dst, ip->src, 16);
	memcpy(ip->src, src, 16);
	/* keep the traffic class; the flow label is the sender's own */
	ip->ver_tc_flow &= htonl(~RXP_IP6_FLOW_LABEL);
	ip->hop_limit = 64;
	icmp->type = RXP_ICMP6_ECHO_REPLY;
	icmp->code = 0;	/* code 0 (RFC 4443 4.2), whatever the request's */
	icmp->csum = 0;
	icmp->csum = rxp_icmp6_csum(ip, icmp, icmp_len);
	memcpy(dst_mac, rxp_pkt_ceth(pkt)->src, 6);
	rxp_count_delivered(st, pkt, RXP_SINK_ECHO6);
	rxp_reply_output(st, pkt, 6, pkt->ifidx, dst_mac);
}

void rxp_icmp6_local(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	struct rxp_ip6_hdr *ip = rxp_pkt_ip6(pkt);
	struct rxp_icmp_hdr *icmp = rxp_pkt_l4(pkt);
	uint32_t icmp_len = (uint32_t)pkt->l3_len - (uint32_t)(pkt->l4_off - pkt->l3_off);

	/* RFC 4443 2.3: the checksum covers a pseudo-header and the message, of 4 bytes at least (type, code, checksum) */
	if (icmp_len < 4 || rxp_icmp6_csum(ip, icmp, icmp_len) != 0) {
		rxp_drop(st, pkt, RXP_DROP_ICMP_BAD);
		return;
	}
	if (icmp->type == RXP_ICMP6_ECHO_REQUEST) {
		echo_reply(st, pkt, ip, icmp, icmp_len);
		return;
	}
	if (icmp->type >= RXP_ICMP6_ND_FIRST && icmp->type <= RXP_ICMP6_REDIRECT) {
		rxp_nd_input(st, pkt);
		return;
	}
	if (icmp->type == RXP_ICMP6_MLD_QUERY)
		rxp_mld_query(st, pkt, (const uint8_t *)icmp, icmp_len);
	/* errors about what we sent, echo replies, MLD, unknown types (RFC 4443 2.4 b): taken, for the host if any */
	rxp_count_delivered(st, pkt, RXP_SINK_OTHER6);
	rxp_host_take(st, pkt);
}
