/* SPDX-License-Identifier: MIT */
/*
 * Where the router's own answers go: echo replies, ICMP errors, TCP resets.
 * As any packet it sends, the way the routing table says to their
 * destination (the sender of what they answer): out another interface when
 * the route back leaves by one and its next hop is known there. Back out
 * the interface the packet came in on (the usual case), to the neighbour
 * the table holds for the next hop, so that a MAC learned from Neighbor
 * Discovery or ARP, or configured, is the one used; when it holds none, to
 * the frame's sender itself, which handed the packet over and is on that
 * link (no resolution, nothing held; an unknown host is answered at once,
 * as a capture-driven test expects).
 */
#include <string.h>
#include "filter.h"
#include "ip6_addr.h"
#include "out.h"

/*
 * The interface and next hop the route to @dst (family @family) takes, in
 * the table of interface *@ifidx (-1: the default one); false when there
 * is none to follow (no route, a local or rejecting one).
 */
static bool route_back(const struct rxp_router *r, uint8_t family, const uint8_t *dst,
		       int *ifidx, const uint8_t **next)
{
	const struct rxp_vrf *v = &r->vrfs[*ifidx >= 0 ? r->ifs[*ifidx].vrf : RXP_VRF_DEFAULT];
	const struct rxp_nexthop *nhp;
	uint32_t nh = 0;

	/* in the table of the interface the packet came in by */
	if (family == 4 ? rxp_lpm4_lookup(v->fib4, rxp_load_be32(dst), &nh) :
			  rxp_lpm6_lookup(v->fib6, dst, &nh))
		return false;
	/* a multipath route: the first member in its layout, for what the router says itself */
	for (unsigned p = 0; rxp_nh_is_group(nh) && p < rxp_router_group(r, nh)->n_paths; p++)
		if (rxp_router_path_up(r, nh, p))
			nh = rxp_router_group(r, nh)->nh[p];
	if (nh == RXP_NH_LOCAL || nh >= r->n_nh)
		return false;
	nhp = &r->nh[nh];
	if (nhp->kind != RXP_NH_KIND_GATEWAY && nhp->kind != RXP_NH_KIND_CONNECTED)
		return false;
	*ifidx = nhp->ifidx;
	*next = nhp->kind == RXP_NH_KIND_GATEWAY ? nhp->gw : dst;
	return true;
}

/* A link-local address (RFC 4291 2.5.6, RFC 3927): valid on its own link only. */
static bool link_scoped(uint8_t family, const uint8_t *a)
{
	return family == 6 ? rxp_ip6_is_link_local(a) : (a[0] == 169 && a[1] == 254);
}

void rxp_reply_way(struct rxp_stack *st, uint8_t family, const uint8_t *src, const uint8_t *dst,
		   int in_ifidx, struct rxp_reply_way *way)
{
	const uint8_t *route_next = dst, *next;
	int route_if = in_ifidx;
	/*
	 * Link-local addresses stay on the link the packet came from: no table
	 * says otherwise. An answer is never held for resolution (it may be
	 * made while the neighbour table is walked, and nobody may be left to
	 * answer): a route back by another interface is taken when its next
	 * hop is known, else the way the packet came.
	 */
	bool routed = !(src && link_scoped(family, src)) && !link_scoped(family, dst) &&
		      route_back(st->router, family, dst, &route_if, &route_next);

	if (routed && route_if != in_ifidx &&
	    rxp_neigh_known(st, route_if, family, route_next, way->mac)) {
		way->out = route_if;
		way->known = true;
		return;
	}
	next = routed && route_if == in_ifidx ? route_next : dst;
	way->out = in_ifidx;
	way->known = rxp_neigh_known(st, in_ifidx, family, next, way->mac);
}

/*
 * A fragment of the router's own (an echo reply turned around from a
 * fragmented request) is cut again within its datagram: same identification,
 * offsets from its own, More Fragments kept on the last piece if it had it.
 */
void rxp_ip6_fragment_local(struct rxp_stack *st, struct rxp_pkt *pkt, uint16_t ifidx,
			    const uint8_t mac[6])
{
	const struct rxp_l3if *ifp = &st->router->ifs[ifidx];
	const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(pkt);
	bool refrag = ip->next_hdr == RXP_IPPROTO_FRAGMENT;
	unsigned head = RXP_IP6_HLEN + (refrag ? RXP_IP6_FRAG_HLEN : 0);	/* before the data */
	/* every piece but the last carries a multiple of 8 bytes */
	unsigned max_chunk = ifp->mtu > RXP_IP6_HLEN + RXP_IP6_FRAG_HLEN + 8 ?
			     (ifp->mtu - RXP_IP6_HLEN - RXP_IP6_FRAG_HLEN) & ~7u : 8u;
	unsigned data_len, base_off = 0, n_frags = 0;
	bool more_after = false;
	uint8_t next = ip->next_hdr;
	uint32_t id;	/* network order */

	/* the answers the router makes carry no other extension header */
	if (!refrag && next != RXP_IPPROTO_ICMP6 && next != RXP_IPPROTO_TCP && next != RXP_IPPROTO_UDP) {
		rxp_drop(st, pkt, RXP_DROP_LOCAL_UNHANDLED);
		return;
	}
	if (pkt->l3_len < head) {
		rxp_drop(st, pkt, RXP_DROP_LOCAL_UNHANDLED);
		return;
	}
	if (refrag) {
		const struct rxp_ip6_frag_hdr *ofh = (const struct rxp_ip6_frag_hdr *)(ip + 1);
		uint16_t fo = ntohs(ofh->frag_off);

		next = ofh->next_hdr;
		base_off = fo & RXP_IP6_FRAG_OFFMASK;
		more_after = fo & RXP_IP6_FRAG_MF;
		id = ofh->id;
	} else {
		id = htonl(++st->frag6_id);
	}
	data_len = pkt->l3_len - head;
	for (unsigned off = 0; off < data_len;) {
		unsigned chunk = RXP_MIN(max_chunk, data_len - off);
		bool last = off + chunk == data_len;
		struct rxp_pkt *f = rxp_local_alloc(st, (uint16_t)(RXP_IP6_HLEN + RXP_IP6_FRAG_HLEN + chunk));
		struct rxp_ip6_hdr *fip;
		struct rxp_ip6_frag_hdr *fh;

		if (!f) {
			/* the pieces sent cannot make the packet whole */
			st->stats.fragments += n_frags;
			rxp_drop(st, pkt, RXP_DROP_NO_MEMORY);
			return;
		}
		fip = rxp_pkt_ip6(f);
		fh = (struct rxp_ip6_frag_hdr *)(fip + 1);
		memcpy(fip, ip, RXP_IP6_HLEN);
		fip->payload_len = htons((uint16_t)(RXP_IP6_FRAG_HLEN + chunk));
		fip->next_hdr = RXP_IPPROTO_FRAGMENT;
		fh->next_hdr = next;
		fh->reserved = 0;
		fh->frag_off = htons((uint16_t)((base_off + off) |
						(!last || more_after ? RXP_IP6_FRAG_MF : 0)));
		fh->id = id;
		memcpy(fh + 1, (const uint8_t *)ip + head + off, chunk);
		f->port = pkt->port;
		f->ifidx = ifidx;
		f->flags = RXP_PKT_F_LOCAL_OUT;
		if (!rxp_l2_prepend(f, ifp, mac, RXP_ETHERTYPE_IP6)) {
			st->stats.fragments += n_frags;
			rxp_drop(st, f, RXP_DROP_NO_MEMORY);
			rxp_drop(st, pkt, RXP_DROP_NO_MEMORY);
			return;
		}
		rxp_tx_enqueue(st, f, true);
		n_frags++;
		off += chunk;
	}
	st->stats.fragments += n_frags;
	rxp_pool_free(st->cache, pkt);
}

void rxp_reply_send(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family,
		    const struct rxp_reply_way *way, const uint8_t prev_mac[6])
{
	const struct rxp_l3if *ifp = &st->router->ifs[way->out];
	uint8_t mac[6];

	memcpy(mac, way->known ? way->mac : prev_mac, 6);
	pkt->port = ifp->port;
	pkt->ifidx = (uint16_t)way->out;
	if (rxp_unlikely(rxp_filter_on(st)) && !rxp_filter_output(st, pkt, family, way->out))
		return;
	/*
	 * An answer larger than the link (an echo reply to a request that came
	 * over a wider one) goes in fragments: IPv4's DF is ours to clear, and
	 * IPv6 lets the source fragment
	 */
	if (rxp_unlikely(family == 4 && pkt->l3_len > ifp->mtu)) {
		rxp_pkt_ip4(pkt)->frag_off &= htons((uint16_t)~RXP_IP4_DF);
		pkt->flags |= RXP_PKT_F_LOCAL_OUT;
		rxp_ip4_fragment(st, pkt, (uint16_t)way->out, mac);
		return;
	}
	if (rxp_unlikely(family == 6 && pkt->l3_len > ifp->mtu)) {
		pkt->flags |= RXP_PKT_F_LOCAL_OUT;
		rxp_ip6_fragment_local(st, pkt, (uint16_t)way->out, mac);
		return;
	}
	if (!rxp_l2_prepend(pkt, ifp, mac, family == 4 ? RXP_ETHERTYPE_IP4 : RXP_ETHERTYPE_IP6)) {
		rxp_drop(st, pkt, RXP_DROP_NO_MEMORY);
		return;
	}
	rxp_tx_enqueue(st, pkt, true);
}

void rxp_reply_output(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family, int in_ifidx,
		      const uint8_t prev_mac[6])
{
	struct rxp_reply_way way;

	if (family == 4) {
		uint32_t src = rxp_pkt_cip4(pkt)->src, dst = rxp_pkt_cip4(pkt)->dst;

		rxp_reply_way(st, 4, (const uint8_t *)&src, (const uint8_t *)&dst, in_ifidx, &way);
	} else {
		rxp_reply_way(st, 6, rxp_pkt_cip6(pkt)->src, rxp_pkt_cip6(pkt)->dst, in_ifidx, &way);
	}
	rxp_reply_send(st, pkt, family, &way, prev_mac);
}
