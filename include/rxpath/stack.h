/* SPDX-License-Identifier: MIT */
/*
 * The receive stack: Ethernet, IPv4/IPv6 validation, transport demux and a
 * UDP/TCP sink. It takes a whole poll's packets at once (vector handoff,
 * like netif_receive_skb_list()) or one at a time (per-packet handoff,
 * like netif_receive_skb()). Every packet it does not deliver is counted
 * under a named drop reason and its buffer is freed.
 */
#ifndef RXPATH_STACK_H
#define RXPATH_STACK_H

#include "rxpath/common.h"
#include "rxpath/pool.h"
#include "rxpath/port.h"

#define RXP_BURST_MAX 256u	/* largest poll budget */
#define RXP_BUDGET_DEFAULT 64u	/* NAPI's weight */

#define RXP_DROP_REASONS(X) \
	X(ETH_TRUNCATED,  "eth_truncated",     "frame shorter than an Ethernet header") \
	X(NOT_FOR_US,     "eth_not_for_us",    "destination MAC is not the port's, broadcast or multicast") \
	X(ETHERTYPE,      "eth_unknown_type",  "EtherType the stack does not handle") \
	X(VLAN_UNKNOWN,   "vlan_unknown",      "VLAN-tagged frame for a VLAN with no sub-port") \
	X(IP4_TRUNCATED,  "ip4_truncated",     "frame too short for an IPv4 header") \
	X(IP4_VERSION,    "ip4_bad_version",   "IPv4 EtherType but version is not 4") \
	X(IP4_IHL,        "ip4_bad_ihl",       "IPv4 header length below 20 bytes or past the frame") \
	X(IP4_CSUM,       "ip4_bad_checksum",  "IPv4 header checksum does not verify") \
	X(IP4_LEN,        "ip4_bad_length",    "IPv4 total length below the header or past the frame") \
	X(IP6_TRUNCATED,  "ip6_truncated",     "frame too short for an IPv6 header") \
	X(IP6_VERSION,    "ip6_bad_version",   "IPv6 EtherType but version is not 6") \
	X(IP6_LEN,        "ip6_bad_length",    "IPv6 payload length past the frame") \
	X(L4_TRUNCATED,   "l4_truncated",      "packet ends inside its UDP or TCP header") \
	X(UDP_LEN,        "udp_bad_length",    "UDP length below 8 or past the IP payload") \
	X(TCP_OFFSET,     "tcp_bad_offset",    "TCP data offset below 5 words or past the IP payload") \
	X(NO_BUFFER,      "no_buffer",         "no free buffer to copy the frame into (copy mode)")

enum rxp_drop_reason {
#define X(id, name, help) RXP_DROP_##id,
	RXP_DROP_REASONS(X)
#undef X
	RXP_DROP_MAX
};

/* Returns the stable name of @reason ("ip4_bad_checksum"). */
const char *rxp_drop_name(enum rxp_drop_reason reason);
/* Returns one line saying what @reason means. */
const char *rxp_drop_help(enum rxp_drop_reason reason);

enum rxp_sink_class {
	RXP_SINK_UDP4,
	RXP_SINK_TCP4,
	RXP_SINK_OTHER4,	/* other protocols and non-first fragments */
	RXP_SINK_UDP6,
	RXP_SINK_TCP6,
	RXP_SINK_OTHER6,
	RXP_SINK_MAX
};

const char *rxp_sink_name(enum rxp_sink_class c);

/* Counters of one stack context (one worker): written only by its thread. */
struct rxp_stack_stats {
	uint64_t in_packets;	/* handed to the stack */
	uint64_t in_bytes;
	uint64_t delivered[RXP_SINK_MAX];
	uint64_t delivered_bytes;
	uint64_t drops[RXP_DROP_MAX];
	uint64_t dropped;	/* sum of drops[] */
	uint64_t polls;		/* polls that handed packets over */
};

enum rxp_handoff {
	RXP_HANDOFF_LIST,	/* the whole poll goes through each stage in turn */
	RXP_HANDOFF_PACKET,	/* each packet goes through every stage before the next */
};

/* Receive-path techniques, each switchable so its worth can be measured. */
struct rxp_rx_tuning {
	enum rxp_handoff handoff;
	uint8_t prefetch_lines;	/* frame header lines prefetched ahead: 0, 1 or 2 */
	uint8_t prefetch_ahead;	/* how many packets ahead */
	bool copy;		/* copy each frame into a fresh buffer (pre-zero-copy drivers) */
	uint16_t copybreak;	/* in copy mode, frames longer than this stay zero-copy */
	uint16_t budget;	/* packets per poll at most (NAPI weight) */
};

/* Returns the tuning with every technique on (list, zero-copy, 2-line prefetch, budget 64). */
struct rxp_rx_tuning rxp_rx_tuning_default(void);

#define RXP_STACK_PORTS_MAX RXP_PORTS_MAX

struct rxp_stack {
	struct rxp_rx_tuning tuning;
	struct rxp_pool_cache *cache;	/* where freed buffers go */
	uint8_t port_mac[RXP_STACK_PORTS_MAX][6];
	struct rxp_stack_stats stats;
};

/* Prepares a stack context owned by one worker. Returns 0 or -EINVAL. */
int rxp_stack_init(struct rxp_stack *st, const struct rxp_rx_tuning *tuning,
		   struct rxp_pool_cache *cache);

/* Tells the stack the MAC of port @id. Returns 0 or -EINVAL. */
int rxp_stack_add_port(struct rxp_stack *st, uint16_t id, const uint8_t mac[6]);

/* Vector handoff: every packet is consumed (delivered or dropped). */
void rxp_stack_input_list(struct rxp_stack *st, struct rxp_pkt **pkts, uint16_t n);

/* Per-packet handoff: @pkt is consumed. */
void rxp_stack_input_one(struct rxp_stack *st, struct rxp_pkt *pkt);

/* Counts @pkt under @reason and frees it. */
void rxp_stack_drop(struct rxp_stack *st, struct rxp_pkt *pkt, enum rxp_drop_reason reason);

/* Sum of all drop counters. */
uint64_t rxp_stack_drops_total(const struct rxp_stack_stats *s);
uint64_t rxp_stack_delivered_total(const struct rxp_stack_stats *s);

/*
 * NAPI-style poll of one queue: receive at most the tuning's budget,
 * (copy mode: copy), hand the packets to the stack, refill the RX ring
 * and reap TX completions. Returns the number of packets received.
 */
uint16_t rxp_napi_poll(struct rxp_queue *q, struct rxp_stack *st);

#endif
