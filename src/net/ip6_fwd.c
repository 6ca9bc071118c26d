/* SPDX-License-Identifier: MIT */
/*
 * IPv6 routing (RFC 8200, RFC 4291): source and destination checks, the
 * groups the router has joined, FIB lookup, local delivery, hop limit, MTU
 * (a router never fragments: Packet Too Big instead), then the neighbour.
 * Extension headers are not looked at on the way through: they go on intact.
 */
#include <limits.h>
#include <string.h>
#include "host.h"
#include "filter.h"
#include "icmp.h"
#include "ip6_addr.h"
#include "ip6_route.h"
#include "local.h"
#include "multipath.h"
#include "nd.h"
#include "out.h"
#include "reasm.h"

#define ICMP6_RS 133
#define ICMP6_NS 135

static const uint8_t zero16[16];

static bool ip6_is_unspec(const uint8_t *a)
{
	return !memcmp(a, zero16, 16);
}

static bool ip6_is_loopback(const uint8_t *a)
{
	return a[15] == 1 && !memcmp(a, zero16, 15);
}

static void local_deliver6(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(pkt);

	/* the TAP of the port it came in on has that interface's addresses only */
	if (st->host[pkt->port] && ip->dst[0] != 0xff &&
	    !rxp_l3if_has_addr6(&st->router->ifs[pkt->ifidx], ip->dst))
		pkt->flags |= RXP_PKT_F_OTHER_IF;

	if (rxp_unlikely(pkt->l4_proto == RXP_IPPROTO_FRAGMENT) && !rxp_host_wants(st, pkt) &&
	    !(pkt->flags & RXP_PKT_F_L2_MCAST) && ip->dst[0] != 0xff)
		rxp_reasm_input(st, pkt);
	else if (pkt->l4_proto == RXP_IPPROTO_ICMP6)
		rxp_icmp6_local(st, pkt);
	else
		rxp_local_l4(st, pkt);	/* UDP, TCP and the rest, as a host answers */
}

/* Multicast to the router: only what it has joined; never forwarded. */
static rxp_noinline void ip6_multicast(struct rxp_stack *st, struct rxp_pkt *pkt,
				       const struct rxp_ip6_hdr *ip)
{
	const struct rxp_l3if *ifp = &st->router->ifs[pkt->ifidx];
	/* the message right after the fixed header, when the Next Header is ICMPv6 */
	const struct rxp_icmp_hdr *icmp = (const struct rxp_icmp_hdr *)(ip + 1);
	/*
	 * A link-scope group the router is not in (OSPFv3, RIPng, DHCPv6 agents,
	 * a group-specific MLD query) is for the kernel behind the port's host
	 * path, when it has one: the kernel ignores what it has not joined
	 */
	bool for_host = !rxp_l3if_listens6(ifp, ip->dst);

	/* (a link-local group: scope 2, the low bits of its second octet, RFC 4291 2.7) */
	if (for_host && !((ip->dst[1] & 0x0f) == 2 && rxp_host_wants(st, pkt))) {
		rxp_drop(st, pkt, RXP_DROP_IP6_MCAST);
		return;
	}
	/*
	 * RFC 4291 2.5.2: the unspecified source is only for a node that has no
	 * address yet: its address probe (RFC 4862 5.4.2, a Neighbor Solicitation)
	 * and a Router Solicitation (RFC 4861 4.1).
	 */
	if (ip6_is_unspec(ip->src) &&
	    !(pkt->l4_proto == RXP_IPPROTO_ICMP6 && pkt->l3_len > RXP_IP6_HLEN &&
	      (icmp->type == ICMP6_NS || icmp->type == ICMP6_RS))) {
		rxp_drop(st, pkt, RXP_DROP_IP6_MARTIAN_SRC);
		return;
	}
	/* to the router's groups or the host path's: the input chain's (ND and MLD pass it) */
	if (rxp_unlikely(rxp_filter_on(st)) && !(pkt->flags & RXP_PKT_F_FILTERED)) {
		uint32_t nh = RXP_NH_LOCAL;

		if (!rxp_filter_routed(st, &pkt, NULL, &nh, 1))
			return;
	}
	if (for_host)
		rxp_sink_one(st, pkt);
	else
		local_deliver6(st, pkt);
}

/*
 * The FIB's next hop @nh for @dst as the filter takes it: the Subnet-Router
 * anycast address of one of the router's subnets is the router's (input).
 */
static uint32_t filter_nh6(const struct rxp_router *r, const uint8_t *dst, uint32_t nh)
{
	if (nh < RXP_NH_MAX && r->nh[nh].kind == RXP_NH_KIND_CONNECTED && !(dst[15] & 3) &&
	    rxp_l3if_anycast6(&r->ifs[r->nh[nh].ifidx], dst))
		return RXP_NH_LOCAL;
	return nh;
}

void rxp_ip6_route(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	struct rxp_router *r = st->router;
	struct rxp_ip6_hdr *ip = rxp_pkt_ip6(pkt);
	const uint8_t *src = ip->src, *dst = ip->dst, *next;
	const struct rxp_nexthop *nhp;
	const struct rxp_l3if *out;
	uint32_t nh;

	/* RFC 4291 2.7: never a multicast source; 2.5.3: ::1 never leaves a node */
	if (rxp_unlikely(src[0] == 0xff ||
			 (src[0] == 0 && (ip6_is_loopback(src) || rxp_ip6_is_v4mapped(src))))) {
		rxp_drop(st, pkt, RXP_DROP_IP6_MARTIAN_SRC);
		return;
	}
	if (rxp_unlikely(dst[0] == 0xff)) {
		ip6_multicast(st, pkt, ip);
		return;
	}
	/* below, the destination is unicast: an unspecified source is never right */
	if (rxp_unlikely(src[0] == 0 && ip6_is_unspec(src))) {
		rxp_drop(st, pkt, RXP_DROP_IP6_MARTIAN_SRC);
		return;
	}
	if (rxp_unlikely(dst[0] == 0 &&
			 (ip6_is_unspec(dst) || ip6_is_loopback(dst) || rxp_ip6_is_v4mapped(dst)))) {
		rxp_drop(st, pkt, RXP_DROP_IP6_MARTIAN_DST);
		return;
	}
	/* RFC 4291 2.5.6: link-local is for the link it came in on; no FIB lookup */
	if (rxp_unlikely(rxp_ip6_is_link_local(dst))) {
		if (rxp_l3if_has_addr6(&r->ifs[pkt->ifidx], dst)) {
			nh = RXP_NH_LOCAL;
			if (rxp_unlikely(rxp_filter_on(st)) && !(pkt->flags & RXP_PKT_F_FILTERED) &&
			    !rxp_filter_routed(st, &pkt, NULL, &nh, 1))
				return;
			local_deliver6(st, pkt);
			return;
		}
		rxp_drop(st, pkt, RXP_DROP_IP6_LINK_LOCAL);
		return;
	}
	if (rxp_lpm6_lookup(rxp_router_fib6_of(r, pkt->ifidx), dst, &nh)) {
		if (pkt->flags & RXP_PKT_F_L2_MCAST) {
			rxp_drop(st, pkt, RXP_DROP_L2_BCAST_FWD);
			return;
		}
		/* RFC 4443 3.1: no route to destination */
		rxp_icmp6_error(st, pkt, RXP_ICMP6_DEST_UNREACH, RXP_ICMP6_UNREACH_NO_ROUTE, 0);
		rxp_drop(st, pkt, RXP_DROP_NO_ROUTE);
		return;
	}
	nh = rxp_mp_pick(st, pkt, 6, nh);
	if (rxp_unlikely(rxp_filter_on(st)) && !(pkt->flags & RXP_PKT_F_FILTERED)) {
		uint32_t fnh = filter_nh6(r, dst, nh);

		if (!rxp_filter_routed(st, &pkt, NULL, &fnh, 1))
			return;
	}
	if (nh == RXP_NH_LOCAL) {
		local_deliver6(st, pkt);
		return;
	}
	nhp = &r->nh[nh];
	if (rxp_unlikely(rxp_nh_kind_rejects(nhp->kind))) {
		if (nhp->kind == RXP_NH_KIND_BLACKHOLE) {
			rxp_drop(st, pkt, RXP_DROP_BLACKHOLE);
			return;
		}
		/* RFC 4443 3.1: no route (code 0), administratively prohibited (code 1) */
		rxp_icmp6_error(st, pkt, RXP_ICMP6_DEST_UNREACH,
				nhp->kind == RXP_NH_KIND_PROHIBIT ? RXP_ICMP6_UNREACH_ADMIN :
								    RXP_ICMP6_UNREACH_NO_ROUTE, 0);
		rxp_drop(st, pkt, RXP_DROP_ROUTE_REJECT);
		return;
	}
	out = &r->ifs[nhp->ifidx];
	/* RFC 4291 2.6.1: a router answers to the Subnet-Router anycast address of its subnets */
	/* (its host bits are zero, the last two at least: no anycast on a /127 or /128) */
	if (nhp->kind == RXP_NH_KIND_CONNECTED && !(dst[15] & 3) &&
	    rxp_unlikely(rxp_l3if_anycast6(out, dst))) {
		local_deliver6(st, pkt);
		return;
	}
	if (rxp_unlikely(pkt->flags & RXP_PKT_F_L2_MCAST)) {
		rxp_drop(st, pkt, RXP_DROP_L2_BCAST_FWD);
		return;
	}
	/* RFC 4007 9: a link-local source must not leave its link (RFC 4443 3.1 code 2) */
	if (rxp_unlikely(rxp_ip6_is_link_local(src)) && nhp->ifidx != pkt->ifidx) {
		rxp_icmp6_error(st, pkt, RXP_ICMP6_DEST_UNREACH, RXP_ICMP6_UNREACH_SCOPE, 0);
		rxp_drop(st, pkt, RXP_DROP_IP6_SCOPE);
		return;
	}
	if (rxp_unlikely(ip->hop_limit <= 1)) {
		/* RFC 4443 3.3: hop limit exceeded in transit */
		rxp_icmp6_error(st, pkt, RXP_ICMP6_TIME_EXCEEDED, RXP_ICMP6_EXCEEDED_HOP_LIMIT, 0);
		rxp_drop(st, pkt, RXP_DROP_TTL_EXCEEDED);
		return;
	}
	/* RFC 8200 5: routers do not fragment; RFC 4443 3.2 tells the source the MTU */
	if (rxp_unlikely(pkt->l3_len > out->mtu)) {
		rxp_icmp6_error(st, pkt, RXP_ICMP6_PKT_TOO_BIG, 0, out->mtu);
		rxp_drop(st, pkt, RXP_DROP_PKT_TOO_BIG);
		return;
	}
	next = nhp->kind == RXP_NH_KIND_GATEWAY ? nhp->gw : dst;
	if (rxp_unlikely(nhp->ifidx == pkt->ifidx))
		rxp_nd_maybe_redirect(st, pkt, next);	/* quotes the packet as it came */
	ip->hop_limit--;	/* no header checksum in IPv6 (RFC 8200 3) */
	if (nhp->kind == RXP_NH_KIND_GATEWAY) {
		rxp_output_via(st, pkt, nh);
		return;
	}
	rxp_neigh_output(st, pkt, nhp->ifidx, 6, next);
}

/*
 * A vector of validated IPv6 packets. The common one (unicast between global
 * addresses, a gateway next hop whose untagged adjacency is cached, hop
 * limit to spare, within the MTU) is forwarded here with the router's
 * fields in registers; every other takes rxp_ip6_route(), untouched, which
 * has every check. The neighbour generation is read once per vector, as
 * for IPv4.
 */
/*
 * The filter first, for the whole vector: each packet's FIB result as
 * rxp_ip6_route() finds it (multicast and link-local not for the router
 * are no chain's here), and the survivors marked so that it does not ask
 * again.
 */
static rxp_noinline uint16_t filter_vector6(struct rxp_stack *st, struct rxp_pkt **pkts, uint16_t n)
{
	const struct rxp_router *r = st->router;
	uint32_t nh[RXP_BURST_MAX];

	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *dst = rxp_pkt_cip6(pkts[i])->dst;

		if (dst[0] == 0xff)
			nh[i] = RXP_LPM_NO_ROUTE;
		else if (rxp_ip6_is_link_local(dst))
			nh[i] = rxp_l3if_has_addr6(&r->ifs[pkts[i]->ifidx], dst) ? RXP_NH_LOCAL : RXP_LPM_NO_ROUTE;
		else if (rxp_lpm6_lookup(rxp_router_fib6_of(r, pkts[i]->ifidx), dst, &nh[i]))
			nh[i] = RXP_LPM_NO_ROUTE;
		else	/* a group's member as rxp_ip6_route() will pick it (and count it) */
			nh[i] = filter_nh6(r, dst, rxp_mp_peek(r, pkts[i], 6, nh[i]));
	}
	n = rxp_filter_routed(st, pkts, NULL, nh, n);
	/* multicast is input's once it is known to be for the router (ip6_multicast) */
	for (uint16_t i = 0; i < n; i++)
		if (rxp_pkt_cip6(pkts[i])->dst[0] != 0xff)
			pkts[i]->flags |= RXP_PKT_F_FILTERED;
	return n;
}

void rxp_ip6_route_vector(struct rxp_stack *st, struct rxp_pkt **pkts, uint16_t n)
{
	const struct rxp_router *r = st->router;
	const struct rxp_adj *adjs = st->adj;
	uint32_t gen = rxp_neigh_gen(&r->neigh);
	uint64_t forwarded = 0;
	struct rxp_txv *v = NULL;	/* the TX vector of port v_port */
	unsigned v_port = UINT_MAX;
	/* the next hop whose adjacency passed (as in rxp_ip4_route_vector); never a FIB result */
	uint32_t ok_nh = UINT32_MAX - 1;

	if (rxp_unlikely(rxp_filter_on(st)))
		n = filter_vector6(st, pkts, n);

	for (uint16_t i = 0; i < n; i++) {
		struct rxp_pkt *pkt = pkts[i];
		struct rxp_ip6_hdr *ip = rxp_pkt_ip6(pkt);
		const uint8_t *src = ip->src, *dst = ip->dst;
		const struct rxp_adj *adj;
		struct rxp_txv *txv;
		uint32_t nh;

		/*
		 * First bytes 0x00 (unspecified, loopback, ...) and 0xff
		 * (multicast), and link-local addresses, need the full checks.
		 */
		if (rxp_unlikely((uint8_t)(src[0] + 1) <= 1 || (uint8_t)(dst[0] + 1) <= 1 ||
				 rxp_ip6_is_link_local(src) || rxp_ip6_is_link_local(dst) ||
				 (pkt->flags & RXP_PKT_F_L2_MCAST) || ip->hop_limit <= 1 ||
				 rxp_lpm6_lookup(rxp_router_fib6_of(r, pkt->ifidx), dst, &nh) ||
				 nh >= RXP_STACK_NH_MAX)) {
			rxp_ip6_route(st, pkt);
			continue;
		}
		adj = &adjs[nh];
		if (nh != ok_nh) {
			if (rxp_unlikely(r->nh[nh].kind != RXP_NH_KIND_GATEWAY ||	/* local, on-link */
					 !adj->neigh || adj->gen != gen || adj->hlen != RXP_ETH_HLEN)) {
				rxp_ip6_route(st, pkt);
				continue;
			}
			ok_nh = nh;
		}
		/* leaving by the interface it came in on: rxp_ip6_route() decides on a redirect */
		if (rxp_unlikely(pkt->l3_len > adj->mtu || pkt->ifidx == adj->ifidx ||
				 !(txv = rxp_fast_txv(st, adj, &v, &v_port)))) {
			rxp_ip6_route(st, pkt);
			continue;
		}
		ip->hop_limit--;	/* no header checksum in IPv6 (RFC 8200 3) */
		rxp_fast_emit(st, pkt, ip, adj, txv);
		forwarded++;
	}
	st->stats.forwarded += forwarded;
}
