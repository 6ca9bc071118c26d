/* SPDX-License-Identifier: MIT */
/*
 * What the per-packet stage functions share. Each stage looks at one packet
 * and says where it goes next; a stage that drops writes the reason into the
 * packet. The vector and per-packet handoffs call the same stage functions.
 * Also the base of src/net's other private headers: the packet flags,
 * dropping and counting what is delivered, big-endian loads and stores.
 */
#ifndef RXPATH_NET_STAGE_H
#define RXPATH_NET_STAGE_H

#include <arpa/inet.h>
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
#define RXP_PKT_F_LOCAL_OUT 0x08	/* made by the router (reply, error, request) */
#define RXP_PKT_F_L2_MCAST  0x10	/* arrived in a link-layer broadcast/multicast frame */
#define RXP_PKT_F_FILTERED  0x20	/* the filter let it through already (net/filter.c) */
#define RXP_PKT_F_ANSWER    0x40	/* the router's answer about a packet it got (an ICMP error, a reset): related to its connection */
#define RXP_PKT_F_SNAT      0x80	/* source NAT gave it one of the router's addresses: no martian source (net/nat.c) */

static inline enum rxp_next rxp_drop_as(struct rxp_pkt *pkt, enum rxp_drop_reason reason)
{
	pkt->drop_reason = (uint8_t)reason;
	return RXP_NEXT_DROP;
}

/*
 * Drops @pkt under @reason, counted against the port it came in on; a
 * packet the router made itself (a fragment, a reply) counts as lost output.
 */
static inline void rxp_drop(struct rxp_stack *st, struct rxp_pkt *pkt, enum rxp_drop_reason reason)
{
	if (rxp_unlikely(pkt->flags & RXP_PKT_F_LOCAL_OUT)) {
		st->stats.local_out_dropped++;
		rxp_pool_free(st->cache, pkt);
		return;
	}
	rxp_stack_drop(st, pkt, reason);
}

/* Counts @pkt, taken by the stack, as delivered under @cls (its frame's bytes too). */
static inline void rxp_count_delivered(struct rxp_stack *st, const struct rxp_pkt *pkt,
				       enum rxp_sink_class cls)
{
	st->stats.delivered[cls]++;
	st->stats.delivered_bytes += pkt->len;
}

/* The Ethernet header at the start of @pkt's frame (its source: who handed a received packet over). */
static inline const struct rxp_eth_hdr *rxp_pkt_ceth(const struct rxp_pkt *pkt)
{
	return (const struct rxp_eth_hdr *)rxp_pkt_cdata(pkt);
}

/* @pkt's network header, at l3_off, as IPv4 or IPv6 (packed structs: any alignment does). */
static inline struct rxp_ip4_hdr *rxp_pkt_ip4(struct rxp_pkt *pkt)
{
	return (struct rxp_ip4_hdr *)(rxp_pkt_data(pkt) + pkt->l3_off);
}

static inline const struct rxp_ip4_hdr *rxp_pkt_cip4(const struct rxp_pkt *pkt)
{
	return (const struct rxp_ip4_hdr *)(rxp_pkt_cdata(pkt) + pkt->l3_off);
}

static inline struct rxp_ip6_hdr *rxp_pkt_ip6(struct rxp_pkt *pkt)
{
	return (struct rxp_ip6_hdr *)(rxp_pkt_data(pkt) + pkt->l3_off);
}

static inline const struct rxp_ip6_hdr *rxp_pkt_cip6(const struct rxp_pkt *pkt)
{
	return (const struct rxp_ip6_hdr *)(rxp_pkt_cdata(pkt) + pkt->l3_off);
}

/* @pkt's transport header, at l4_off: a struct rxp_udp_hdr, rxp_tcp_hdr or rxp_icmp_hdr. */
static inline void *rxp_pkt_l4(struct rxp_pkt *pkt)
{
	return rxp_pkt_data(pkt) + pkt->l4_off;
}

static inline const void *rxp_pkt_cl4(const struct rxp_pkt *pkt)
{
	return rxp_pkt_cdata(pkt) + pkt->l4_off;
}

static inline uint16_t rxp_load_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t rxp_load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
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
