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
#include "route.h"

/*
 * The interface and next hop the route to @dst (family @family) takes;
 * false when there is none to follow (no route, a local or rejecting one).
 */
static bool route_back(const struct rxp_router *r, uint8_t family, const uint8_t *dst,
		       int *ifidx, const uint8_t **next)
{
	const struct rxp_nexthop *nhp;
	uint32_t nh;

	if (family == 4 ? rxp_lpm4_lookup(r->fib4, rxp_load_be32(dst), &nh) :
			  rxp_lpm6_lookup(r->fib6, dst, &nh))
		return false;
	if (nh == RXP_NH_LOCAL || nh >= r->n_nh)
		return false;
	nhp = &r->nh[nh];
	if (nhp->kind != RXP_NH_KIND_GATEWAY && nhp->kind != RXP_NH_KIND_CONNECTED)
		return false;
	*ifidx = nhp->ifidx;
	*next = nhp->kind == RXP_NH_KIND_GATEWAY ? nhp->gw : dst;
	return true;
}

/* Copies to @mac the MAC the table holds for @next on @ifidx, if it holds a usable one. */
static bool known_mac(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *next,
		      uint8_t mac[6])
{
	const struct rxp_neigh *n;
	bool known;

	rxp_neigh_lock(st);
	n = rxp_neigh_lookup(&st->router->neigh, (uint16_t)ifidx, family, next);
	known = n && (n->state == RXP_NEIGH_REACHABLE || n->state == RXP_NEIGH_STATIC);
	if (known)
		memcpy(mac, n->mac, 6);
	rxp_neigh_unlock(st);
	return known;
}

void rxp_reply_output(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family, int in_ifidx,
		      const uint8_t prev_mac[6])
{
	const struct rxp_router *r = st->router;
	const uint8_t *ip = rxp_pkt_cdata(pkt) + pkt->l3_off;
	const uint8_t *dst = family == 4 ? ip + 16 : ip + 24, *next = dst;
	int out = in_ifidx;
	uint8_t mac[6];

	/*
	 * A link-local destination is on the link the packet came from: no
	 * table says otherwise. An answer is never held for resolution (it may
	 * be made while the neighbour table is walked, and nobody may be left
	 * to answer): a route back by another interface is taken when its next
	 * hop is known, else the way the packet came.
	 */
	if (family == 6 && rxp_ip6_is_link_local(dst))
		out = in_ifidx;
	else if (!route_back(r, family, dst, &out, &next) ||
		 (out != in_ifidx && (pkt->l3_len > r->ifs[out].mtu ||
				      !known_mac(st, out, family, next, mac)))) {
		out = in_ifidx;
		next = dst;
	}
	if (out == in_ifidx && !known_mac(st, out, family, next, mac))
		memcpy(mac, prev_mac, 6);
	pkt->port = r->ifs[out].port;
	pkt->ifidx = (uint16_t)out;
	/*
	 * An IPv4 answer larger than the link (an echo reply to a request that
	 * came over a wider one) goes in fragments, its DF ours to clear
	 */
	if (rxp_unlikely(family == 4 && pkt->l3_len > r->ifs[out].mtu)) {
		rxp_pkt_data(pkt)[pkt->l3_off + 6] &= (uint8_t)~(RXP_IP4_DF >> 8);
		pkt->flags |= RXP_PKT_F_LOCAL_OUT;
		rxp_ip4_fragment(st, pkt, (uint16_t)out, mac);
		return;
	}
	if (!rxp_l2_prepend(pkt, &r->ifs[out], mac,
			    family == 4 ? RXP_ETHERTYPE_IP4 : RXP_ETHERTYPE_IP6)) {
		rxp_drop(st, pkt, RXP_DROP_NO_MEMORY);
		return;
	}
	rxp_tx_enqueue(st, pkt, true);
}
