/* SPDX-License-Identifier: MIT */
/*
 * Delivery to the router itself, shared inside src/net: the host sink
 * (stack.c) and transport addressed to the router (local_l4.c).
 */
#ifndef RXPATH_NET_LOCAL_H
#define RXPATH_NET_LOCAL_H

#include "rxpath/stack.h"

/* ---- stack.c ---- */

/* The host sink for one packet: transport checks, counted by class, consumed. */
void rxp_sink_one(struct rxp_stack *st, struct rxp_pkt *pkt);

/* ---- local_l4.c ---- */

/*
 * Transport addressed to the router itself (not ICMP): to the port's host
 * path or the sink where something takes it, else answered as a host with
 * nothing listening answers. Consumes @pkt.
 */
void rxp_local_l4(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * True when the UDP or TCP checksum of @pkt verifies: @data_sum is the
 * unfolded sum (rxp_csum_partial) of its @len transport bytes, which may
 * lie in several fragments.
 */
bool rxp_l4_sum_ok(const struct rxp_pkt *pkt, uint32_t len, uint64_t data_sum);

/*
 * Answers transport @pkt to the router (checks passed; its transport header
 * at l4_off, @len bytes of it in all) as a host with nothing listening:
 * Port Unreachable, a reset, or for another protocol Protocol Unreachable
 * (IPv4) or Parameter Problem pointing at offset @nh_at (IPv6). Returns the
 * drop reason the packet is counted under; @pkt is not consumed.
 */
/*
 * Answers the TCP segment @orig (its header at l4_off, @len bytes with it)
 * with a reset from the address it was sent to, per RFC 9293 3.10.7.1
 * (rate-limited as ICMP errors are). @orig is not consumed.
 */
void rxp_tcp_reset(struct rxp_stack *st, const struct rxp_pkt *orig, uint32_t len);

enum rxp_drop_reason rxp_local_l4_answer(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t len,
					 uint32_t nh_at);

/*
 * The header chain of an IPv6 datagram reassembled from @first, its first
 * fragment, walked past the Fragment header as a whole packet's is: options
 * acted on, a routing header with segments left refused. Returns
 * RXP_DROP_MAX with @first's l4_off and l4_proto at the upper layer and
 * *@nh_at at the Next Header byte naming it; else the reason to drop the
 * datagram under (any Parameter Problem it calls for sent, about @first).
 */
enum rxp_drop_reason rxp_ip6_reasm_chain(struct rxp_stack *st, struct rxp_pkt *first,
					 uint32_t *nh_at);

#endif
