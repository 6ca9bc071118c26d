/* SPDX-License-Identifier: MIT */
/* Ethernet input: length, destination MAC, EtherType. */
#ifndef RXPATH_NET_ETH_H
#define RXPATH_NET_ETH_H

#include "stage.h"

static inline enum rxp_next rxp_eth_input(const struct rxp_stack *st, struct rxp_pkt *pkt)
{
	const uint8_t *frame = rxp_pkt_data(pkt);
	uint16_t type;

	if (rxp_unlikely(pkt->len < RXP_ETH_HLEN))
		return rxp_drop_as(pkt, RXP_DROP_ETH_TRUNCATED);
	/* Unicast must be ours; broadcast and multicast are taken. */
	if (!rxp_eth_is_multicast(frame) && memcmp(frame, st->port_mac[pkt->port], RXP_ETH_ALEN))
		return rxp_drop_as(pkt, RXP_DROP_NOT_FOR_US);
	type = rxp_load_be16(frame + 12);
	pkt->l3_off = RXP_ETH_HLEN;
	pkt->flags = 0;
	if (rxp_likely(type == RXP_ETHERTYPE_IP4))
		return RXP_NEXT_IP4;
	if (type == RXP_ETHERTYPE_IP6)
		return RXP_NEXT_IP6;
	if (type == RXP_ETHERTYPE_VLAN || type == RXP_ETHERTYPE_QINQ)
		return rxp_drop_as(pkt, RXP_DROP_VLAN_UNKNOWN);
	return rxp_drop_as(pkt, RXP_DROP_ETHERTYPE);
}

#endif
