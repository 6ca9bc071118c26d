/* SPDX-License-Identifier: MIT */
/*
 * What the per-packet stage functions share. Each stage looks at one packet
 * and says where it goes next; a stage that drops writes the reason into the
 * packet. The vector and per-packet handoffs call the same stage functions.
 */
#ifndef RXPATH_NET_STAGE_H
#define RXPATH_NET_STAGE_H

#include <string.h>
#include "rxpath/proto.h"
#include "rxpath/stack.h"

enum rxp_next {
	RXP_NEXT_DROP,
	RXP_NEXT_IP4,
	RXP_NEXT_IP6,
	RXP_NEXT_ARP,
	RXP_NEXT_L4,
	RXP_NEXT_DELIVER,
	RXP_NEXT_MAX
};

#define RXP_PKT_F_IP6      0x01	/* network header is IPv6 */
#define RXP_PKT_F_FRAG_NTH 0x02	/* a non-first fragment: no transport header */
#define RXP_PKT_F_FRAG     0x04	/* any fragment: transport lengths cover the whole datagram */

static inline enum rxp_next rxp_drop_as(struct rxp_pkt *pkt, enum rxp_drop_reason reason)
{
	pkt->drop_reason = (uint8_t)reason;
	return RXP_NEXT_DROP;
}

static inline uint16_t rxp_load_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void rxp_store_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void rxp_store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

#endif
