/* SPDX-License-Identifier: MIT */
/* Ethernet input: length, destination MAC, VLAN tag, EtherType. */
#ifndef RXPATH_NET_ETH_H
#define RXPATH_NET_ETH_H

#include "rxpath/router.h"
#include "stage.h"

/* Finds the L3 interface of a tagged frame and steps over the tag. */
static rxp_noinline enum rxp_next rxp_eth_vlan(const struct rxp_stack *st, struct rxp_pkt *pkt,
					       const struct rxp_eth_hdr *eth)
{
	const struct rxp_router *r = st->router;
	const struct rxp_vlan_hdr *tag = (const struct rxp_vlan_hdr *)(eth + 1);
	uint16_t type, vid;
	int ifidx;

	if (!r)
		return rxp_drop_as(pkt, RXP_DROP_VLAN_UNKNOWN);
	if (pkt->len < RXP_ETH_HLEN + RXP_VLAN_HLEN)
		return rxp_drop_as(pkt, RXP_DROP_ETH_TRUNCATED);
	/* VLAN id 0 is a priority tag: the frame belongs to the port itself */
	vid = ntohs(tag->tci) & RXP_VLAN_VID_MASK;
	ifidx = vid ? rxp_router_if_of(r, pkt->port, vid) : r->port_if[pkt->port];
	if (ifidx < 0)
		return rxp_drop_as(pkt, RXP_DROP_VLAN_UNKNOWN);
	pkt->ifidx = (uint16_t)ifidx;
	pkt->vlan_tci = ntohs(tag->tci);
	pkt->l3_off = RXP_ETH_HLEN + RXP_VLAN_HLEN;
	type = ntohs(tag->type);
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
	const struct rxp_eth_hdr *eth = rxp_pkt_ceth(pkt);
	const struct rxp_router *r = st->router;
	uint16_t type;

	pkt->flags = 0;
	if (rxp_unlikely(pkt->len < RXP_ETH_HLEN))
		return rxp_drop_as(pkt, RXP_DROP_ETH_TRUNCATED);
	if (rxp_unlikely(rxp_eth_is_multicast(eth->src)))
		return rxp_drop_as(pkt, RXP_DROP_ETH_GROUP_SRC);
	/* Unicast must be ours; broadcast and multicast are taken (and remembered). */
	if (rxp_unlikely(rxp_eth_is_multicast(eth->dst)))
		pkt->flags = RXP_PKT_F_L2_MCAST;
	else if (memcmp(eth->dst, st->port_mac[pkt->port], RXP_ETH_ALEN))
		return rxp_drop_as(pkt, RXP_DROP_NOT_FOR_US);
	type = ntohs(eth->type);
	pkt->l3_off = RXP_ETH_HLEN;
	pkt->vlan_tci = 0;
	if (r) {
		int ifidx = r->port_if[pkt->port];

		if (rxp_unlikely(type == RXP_ETHERTYPE_VLAN))
			return rxp_eth_vlan(st, pkt, eth);
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
