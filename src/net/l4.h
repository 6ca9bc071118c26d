/* SPDX-License-Identifier: MIT */
/* Transport demux into the sink: UDP and TCP header checks, then counted by class. */
#ifndef RXPATH_NET_L4_H
#define RXPATH_NET_L4_H

#include "stage.h"

/*
 * Returns RXP_NEXT_DELIVER with *cls set, or RXP_NEXT_DROP.
 * l3_len bounds the transport data, so Ethernet padding is never read as payload.
 */
static inline enum rxp_next rxp_l4_input(struct rxp_pkt *pkt, enum rxp_sink_class *cls)
{
	const uint8_t *l4 = rxp_pkt_data(pkt) + pkt->l4_off;
	uint32_t l4_len = (uint32_t)pkt->l3_len - (uint32_t)(pkt->l4_off - pkt->l3_off);
	unsigned v6 = pkt->flags & RXP_PKT_F_IP6 ? RXP_SINK_UDP6 - RXP_SINK_UDP4 : 0;

	if (rxp_unlikely(pkt->flags & RXP_PKT_F_FRAG_NTH)) {
		*cls = (enum rxp_sink_class)(RXP_SINK_OTHER4 + v6);
		return RXP_NEXT_DELIVER;
	}
	if (rxp_likely(pkt->l4_proto == RXP_IPPROTO_UDP)) {
		uint32_t ulen;

		if (rxp_unlikely(l4_len < RXP_UDP_HLEN))
			return rxp_drop_as(pkt, RXP_DROP_L4_TRUNCATED);
		ulen = ntohs(((const struct rxp_udp_hdr *)l4)->len);
		/* in a first fragment the UDP length counts the whole datagram */
		if (rxp_unlikely(ulen < RXP_UDP_HLEN ||
				 (ulen > l4_len && !(pkt->flags & RXP_PKT_F_FRAG))))
			return rxp_drop_as(pkt, RXP_DROP_UDP_LEN);
		*cls = (enum rxp_sink_class)(RXP_SINK_UDP4 + v6);
		return RXP_NEXT_DELIVER;
	}
	if (pkt->l4_proto == RXP_IPPROTO_TCP) {
		uint32_t doff;

		if (rxp_unlikely(l4_len < RXP_TCP_HLEN))
			return rxp_drop_as(pkt, RXP_DROP_L4_TRUNCATED);
		doff = rxp_tcp_doff((const struct rxp_tcp_hdr *)l4);
		if (rxp_unlikely(doff < RXP_TCP_HLEN || doff > l4_len))
			return rxp_drop_as(pkt, RXP_DROP_TCP_OFFSET);
		*cls = (enum rxp_sink_class)(RXP_SINK_TCP4 + v6);
		return RXP_NEXT_DELIVER;
	}
	*cls = (enum rxp_sink_class)(RXP_SINK_OTHER4 + v6);
	return RXP_NEXT_DELIVER;
}

#endif
