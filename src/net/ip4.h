/* SPDX-License-Identifier: MIT */
/* IPv4 input: RFC 1812 5.2.2 header checks, checksum in software, padding trimmed. */
#ifndef RXPATH_NET_IP4_H
#define RXPATH_NET_IP4_H

#include "rxpath/csum.h"
#include "stage.h"

static rxp_always_inline enum rxp_next rxp_ip4_input(struct rxp_pkt *pkt)
{
	const struct rxp_ip4_hdr *ip = rxp_pkt_cip4(pkt);
	uint32_t avail = (uint32_t)pkt->len - pkt->l3_off;
	uint32_t ihl, tot_len, frag;

	if (rxp_unlikely(avail < RXP_IP4_HLEN))
		return rxp_drop_as(pkt, RXP_DROP_IP4_TRUNCATED);
	if (rxp_likely(ip->ver_ihl == RXP_IP4_VER_IHL_NO_OPTS)) {
		/* no options, the usual case: the header's size is known */
		ihl = RXP_IP4_HLEN;
		if (rxp_unlikely(!rxp_ip4_csum_ok(ip, 5)))
			return rxp_drop_as(pkt, RXP_DROP_IP4_CSUM);
	} else {
		if (rxp_unlikely(rxp_ip4_version(ip) != 4))
			return rxp_drop_as(pkt, RXP_DROP_IP4_VERSION);
		ihl = rxp_ip4_ihl(ip);
		if (rxp_unlikely(ihl < RXP_IP4_HLEN || ihl > avail))
			return rxp_drop_as(pkt, RXP_DROP_IP4_IHL);
		if (rxp_unlikely(!rxp_ip4_csum_ok(ip, ihl / 4u)))
			return rxp_drop_as(pkt, RXP_DROP_IP4_CSUM);
	}
	tot_len = ntohs(ip->tot_len);
	if (rxp_unlikely(tot_len < ihl || tot_len > avail))
		return rxp_drop_as(pkt, RXP_DROP_IP4_LEN);
	/* Ethernet padding after the IP packet is not part of it. */
	pkt->l3_len = (uint16_t)tot_len;
	pkt->l4_off = (uint16_t)(pkt->l3_off + ihl);
	pkt->l4_proto = ip->proto;
	frag = ntohs(ip->frag_off);
	if (rxp_unlikely(frag & (RXP_IP4_MF | RXP_IP4_OFFMASK))) {
		/* a fragment whose datagram would pass 65535 bytes, its header counted (RFC 791 3.1) */
		if ((frag & RXP_IP4_OFFMASK) * 8u + tot_len > 65535u)
			return rxp_drop_as(pkt, RXP_DROP_IP4_LEN);
		pkt->flags |= frag & RXP_IP4_OFFMASK ? RXP_PKT_F_FRAG | RXP_PKT_F_FRAG_NTH
						     : RXP_PKT_F_FRAG;
	}
	return RXP_NEXT_L4;
}

/* The destination address of a validated IPv4 packet, in host order. */
static inline uint32_t rxp_ip4_dst(const struct rxp_pkt *pkt)
{
	return ntohl(rxp_pkt_cip4(pkt)->dst);
}

#endif
