/* SPDX-License-Identifier: MIT */
/*
 * Packet metadata. It lives in the first cache line of the receive buffer
 * itself (the headroom), like an skb built around a page with build_skb():
 * a received frame is used where the device wrote it.
 *
 * Buffer layout:
 *   [ rxp_pkt: 64 B ][ headroom: 64 B ][ rx offset: 0 or 2 B ][ frame ... ]
 * With an rx offset of 2 (NET_IP_ALIGN) the IP header after a 14-byte
 * Ethernet header starts 4-byte aligned.
 */
#ifndef RXPATH_PKT_H
#define RXPATH_PKT_H

#include <stddef.h>
#include <string.h>
#include "rxpath/common.h"

#define RXP_PKT_META_SIZE 64u
#define RXP_PKT_HEADROOM  64u	/* room to push headers (VLAN tag, encapsulation) */

struct rxp_pool;

struct rxp_pkt {
	struct rxp_pool *pool;	/* owner; buffers go back to it */
	uint32_t buf_idx;	/* index of this buffer in its pool */
	uint16_t data_off;	/* frame start, from the start of the buffer */
	uint16_t len;		/* frame length in bytes (no FCS) */
	uint16_t port;		/* input port id */
	uint16_t queue;		/* input queue id */
	uint16_t l3_off;	/* network header, from the frame start */
	uint16_t l4_off;	/* transport header, from the frame start */
	uint16_t l3_len;	/* network packet length, padding trimmed */
	uint16_t vlan_tci;
	uint8_t l4_proto;	/* IPPROTO_* of the transport header */
	uint8_t drop_reason;	/* set by the stage that drops it */
	uint8_t flags;
	uint8_t pad0;
	uint16_t ifidx;		/* L3 interface it arrived on (router) */
	uint16_t out_port;	/* port it leaves by */
	uint32_t nh;		/* next hop id from the FIB */
	uint64_t user[2];	/* free for the stage that owns the packet */
};

_Static_assert(sizeof(struct rxp_pkt) <= RXP_PKT_META_SIZE,
	       "packet metadata must fit the first cache line of the buffer");

_Static_assert(offsetof(struct rxp_pkt, len) == offsetof(struct rxp_pkt, data_off) + 2 &&
	       offsetof(struct rxp_pkt, port) == offsetof(struct rxp_pkt, data_off) + 4 &&
	       offsetof(struct rxp_pkt, queue) == offsetof(struct rxp_pkt, data_off) + 6,
	       "rxp_pkt_set_rx() writes data_off, len, port and queue as one word");

/*
 * What a driver writes into every buffer it receives: data_off, port and
 * queue are the same for a whole poll, so they are packed once
 * (rxp_pkt_rx_meta) and written with each frame's length as one 8-byte store.
 */
static inline uint64_t rxp_pkt_rx_meta(uint16_t data_off, uint16_t port, uint16_t queue)
{
	const uint16_t f[4] = { data_off, 0, port, queue };
	uint64_t meta;

	memcpy(&meta, f, sizeof(meta));
	return meta;
}

static inline void rxp_pkt_set_rx(struct rxp_pkt *pkt, uint64_t meta, uint16_t len)
{
	uint16_t f[4];

	memcpy(f, &meta, sizeof(f));
	f[1] = len;
	memcpy((uint8_t *)pkt + offsetof(struct rxp_pkt, data_off), f, sizeof(f));
}

static inline uint8_t *rxp_pkt_buf(struct rxp_pkt *pkt)
{
	return (uint8_t *)pkt;
}

static inline uint8_t *rxp_pkt_data(struct rxp_pkt *pkt)
{
	return (uint8_t *)pkt + pkt->data_off;
}

static inline const uint8_t *rxp_pkt_cdata(const struct rxp_pkt *pkt)
{
	return (const uint8_t *)pkt + pkt->data_off;
}

/* Prefetch the first @lines cache lines of the frame (net_prefetch() does two). */
static inline void rxp_pkt_prefetch(const struct rxp_pkt *pkt, unsigned lines)
{
	const uint8_t *data = rxp_pkt_cdata(pkt);

	if (lines >= 1)
		rxp_prefetch(data);
	if (lines >= 2)
		rxp_prefetch(data + RXP_CACHE_LINE);
}

#endif
