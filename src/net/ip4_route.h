/* SPDX-License-Identifier: MIT */
/* IPv4 routing (ip4_fwd.c), shared inside src/net. */
#ifndef RXPATH_NET_IP4_ROUTE_H
#define RXPATH_NET_IP4_ROUTE_H

#include "rxpath/stack.h"

/* Routes one validated IPv4 packet: local delivery, forward, or drop. Consumes @pkt. */
void rxp_ip4_route(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * The same for a vector, with one bulk FIB lookup for all of it; @dst holds
 * each packet's destination address in host order.
 */
void rxp_ip4_route_vector(struct rxp_stack *st, struct rxp_pkt **pkts, uint32_t *dst,
			  uint16_t n);

/* Routes @pkt whose FIB lookup gave next hop @nh (RXP_LPM_NO_ROUTE: none). */
void rxp_ip4_route_nh(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t nh);

#endif
