/* SPDX-License-Identifier: MIT */
/* IPv6 input: version and payload length against the frame (RFC 8200). */
#ifndef RXPATH_NET_IP6_H
#define RXPATH_NET_IP6_H

#include "stage.h"

static inline enum rxp_next rxp_ip6_input(struct rxp_pkt *pkt)
{
	const struct rxp_ip6_hdr *ip6 = rxp_pkt_cip6(pkt);
	uint32_t avail = (uint32_t)pkt->len - pkt->l3_off;
	uint32_t plen;

	if (rxp_unlikely(avail < RXP_IP6_HLEN))
		return rxp_drop_as(pkt, RXP_DROP_IP6_TRUNCATED);
	if (rxp_unlikely(rxp_ip6_version(ip6) != 6))
		return rxp_drop_as(pkt, RXP_DROP_IP6_VERSION);
	plen = ntohs(ip6->payload_len);
	if (rxp_unlikely(RXP_IP6_HLEN + plen > avail))
		return rxp_drop_as(pkt, RXP_DROP_IP6_LEN);
	pkt->l3_len = (uint16_t)(RXP_IP6_HLEN + plen);
	pkt->l4_off = (uint16_t)(pkt->l3_off + RXP_IP6_HLEN);
	pkt->l4_proto = ip6->next_hdr;
	pkt->flags |= RXP_PKT_F_IP6;
	return RXP_NEXT_L4;
}

#endif
