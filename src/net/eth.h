/* SPDX-License-Identifier: MIT */
/* Ethernet input: length, destination MAC, VLAN tag, EtherType. */
#ifndef RXPATH_NET_ETH_H
#define RXPATH_NET_ETH_H

#include "rxpath/router.h"
#include "stage.h"

/* Finds the L3 interface of a tagged frame and steps over the tag. */
static rxp_noinline enum rxp_next rxp_eth_vlan(const struct rxp_stack *st, struct rxp_pkt *pkt,
					       const uint8_t *frame)
{
	const struct rxp_router *r = st->router;
	uint16_t type, vid;
	int ifidx;

	if (!r)
		return rxp_drop_as(pkt, RXP_DROP_VLAN_UNKNOWN);
	if (pkt->len < RXP_ETH_HLEN + RXP_VLAN_HLEN)
		return rxp_drop_as(pkt, RXP_DROP_ETH_TRUNCATED);
	/* VLAN id 0 is a priority tag: the frame belongs to the port itself */
	vid = rxp_load_be16(frame + 14) & 0x0fff;
	ifidx = vid ? rxp_router_if_of(r, pkt->port, vid) : r->port_if[pkt->port];
	if (ifidx < 0)
		return rxp_drop_as(pkt, RXP_DROP_VLAN_UNKNOWN);
	pkt->ifidx = (uint16_t)ifidx;
	pkt->vlan_tci = rxp_load_be16(frame + 14);
	pkt->l3_off = RXP_ETH_HLEN + RXP_VLAN_HLEN;
	type = rxp_load_be16(frame + 16);
	if (type == RXP_ETHERTYPE_IP4)
		return RXP_NEXT_IP4;
	if (type == RXP_ETHERTYPE_IP6)
		return RXP_NEXT_IP6;
	if (type == RXP_ETHERTYPE_ARP)
		return RXP_NEXT_ARP;
	return rxp_drop_as(pkt, RXP_DROP_ETHERTYPE);
}

static inline enum rxp_next rxp_eth_input(const struct rxp_stack *st, struct rxp_pkt *pkt)
{
	const uint8_t *frame = rxp_pkt_data(pkt);
	const struct rxp_router *r = st->router;
	uint16_t type;

	pkt->flags = 0;
	if (rxp_unlikely(pkt->len < RXP_ETH_HLEN))
		return rxp_drop_as(pkt, RXP_DROP_ETH_TRUNCATED);
	if (rxp_unlikely(frame[6] & 1))
		return rxp_drop_as(pkt, RXP_DROP_ETH_GROUP_SRC);
	/* Unicast must be ours; broadcast and multicast are taken (and remembered). */
	if (rxp_unlikely(rxp_eth_is_multicast(frame)))
		pkt->flags = RXP_PKT_F_L2_MCAST;
	else if (memcmp(frame, st->port_mac[pkt->port], RXP_ETH_ALEN))
		return rxp_drop_as(pkt, RXP_DROP_NOT_FOR_US);
	type = rxp_load_be16(frame + 12);
	pkt->l3_off = RXP_ETH_HLEN;
	pkt->vlan_tci = 0;
	if (r) {
		int ifidx = r->port_if[pkt->port];

		if (rxp_unlikely(type == RXP_ETHERTYPE_VLAN))
			return rxp_eth_vlan(st, pkt, frame);
		if (rxp_unlikely(ifidx < 0))
			return rxp_drop_as(pkt, RXP_DROP_NOT_FOR_US);
		pkt->ifidx = (uint16_t)ifidx;
		if (type == RXP_ETHERTYPE_ARP)
			return RXP_NEXT_ARP;
	}
	if (rxp_likely(type == RXP_ETHERTYPE_IP4))
		return RXP_NEXT_IP4;
	if (type == RXP_ETHERTYPE_IP6)
		return RXP_NEXT_IP6;
	if (type == RXP_ETHERTYPE_VLAN || type == RXP_ETHERTYPE_QINQ)
		return rxp_drop_as(pkt, RXP_DROP_VLAN_UNKNOWN);
	return rxp_drop_as(pkt, RXP_DROP_ETHERTYPE);
}

#endif
