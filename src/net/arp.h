/* SPDX-License-Identifier: MIT */
/* ARP (arp.c), shared inside src/net. */
#ifndef RXPATH_NET_ARP_H
#define RXPATH_NET_ARP_H

#include "rxpath/stack.h"

/* Handles one ARP packet (pkt->ifidx set): answer, learn, or drop. Consumes @pkt. */
void rxp_arp_input(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * Sends an ARP request for @target (network order) on interface @ifidx:
 * broadcast, or to @mac alone when it is not NULL (a unicast poll of a
 * known neighbour, RFC 1122 2.3.2.1).
 */
void rxp_arp_request(struct rxp_stack *st, int ifidx, uint32_t target, const uint8_t *mac);

#endif
