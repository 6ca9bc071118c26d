/* SPDX-License-Identifier: MIT */
/* IPv6 routing (ip6_fwd.c), shared inside src/net. */
#ifndef RXPATH_NET_IP6_ROUTE_H
#define RXPATH_NET_IP6_ROUTE_H

#include "rxpath/stack.h"

/* Routes one validated IPv6 packet: local delivery (echo, ND), forward, or drop. Consumes @pkt. */
void rxp_ip6_route(struct rxp_stack *st, struct rxp_pkt *pkt);

/* The same for a vector of validated IPv6 packets. */
void rxp_ip6_route_vector(struct rxp_stack *st, struct rxp_pkt **pkts, uint16_t n);

#endif
