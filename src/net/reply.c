/* SPDX-License-Identifier: MIT */
/*
 * Where the router's own answers go: echo replies, ICMP errors, TCP resets.
 * As any packet it sends, the way the routing table says to their
 * destination (the sender of what they answer): out another interface when
 * the route back leaves by one, resolved there as a forwarded packet is.
 * Back out the interface the packet came in on (the usual case), to the
 * neighbour the cache holds for the next hop, so that a MAC learned from
 * Neighbor Discovery or ARP, or configured, is the one used; when the
 * cache holds none, to the frame's sender itself, which handed the packet
 * over and is on that link (no resolution, nothing held; an unknown host
 * is answered at once, as a capture-driven test expects).
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

void rxp_reply_output(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family, int in_ifidx,
		      const uint8_t prev_mac[6])
{
	const struct rxp_router *r = st->router;
	const uint8_t *ip = rxp_pkt_cdata(pkt) + pkt->l3_off;
	const uint8_t *dst = family == 4 ? ip + 16 : ip + 24, *next = dst;
	int out = in_ifidx;
	uint8_t mac[6];

	/* a link-local destination is on the link the packet came from: no table says otherwise */
	if (!(family == 6 && rxp_ip6_is_link_local(dst)) && route_back(r, family, dst, &out, &next) &&
	    out != in_ifidx && pkt->l3_len <= r->ifs[out].mtu) {
		pkt->ifidx = (uint16_t)out;
		pkt->flags |= RXP_PKT_F_LOCAL_OUT;
		rxp_neigh_output(st, pkt, out, family, next);
		return;
	}
	if (out != in_ifidx) {	/* a route back that does not fit: the way it came */
		out = in_ifidx;
		next = dst;
	}
	memcpy(mac, prev_mac, 6);
	rxp_neigh_lock(st);
	{
		const struct rxp_neigh *n = rxp_neigh_lookup(&st->router->neigh, (uint16_t)out,
							     family, next);

		if (n && (n->state == RXP_NEIGH_REACHABLE || n->state == RXP_NEIGH_STATIC))
			memcpy(mac, n->mac, 6);
	}
	rxp_neigh_unlock(st);
	pkt->port = r->ifs[out].port;
	pkt->ifidx = (uint16_t)out;
	if (!rxp_l2_prepend(pkt, &r->ifs[out], mac,
			    family == 4 ? RXP_ETHERTYPE_IP4 : RXP_ETHERTYPE_IP6)) {
		rxp_drop(st, pkt, RXP_DROP_NO_MEMORY);
		return;
	}
	rxp_tx_enqueue(st, pkt, true);
}
