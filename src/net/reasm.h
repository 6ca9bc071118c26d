/* SPDX-License-Identifier: MIT */
/* Reassembly of the datagrams addressed to the router (reasm.c), shared inside src/net. */
#ifndef RXPATH_NET_REASM_H
#define RXPATH_NET_REASM_H

#include "rxpath/stack.h"

/*
 * Takes a fragment addressed to the router (not multicast, no host path
 * wanting it; IPv6 with l4_off at its Fragment header, after the fixed
 * header or behind the unfragmentable part's extension headers): held until
 * its datagram is complete, then answered as a whole. Consumes @pkt.
 */
void rxp_reasm_input(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * Gives up on the datagrams past their deadline at st->now_ns, or on all of
 * them (@all); with @answer, Time Exceeded goes to the sender of those whose
 * first fragment came. The fragments are dropped under @why. Returns the
 * number of fragments dropped.
 */
unsigned rxp_reasm_expire(struct rxp_stack *st, bool all, bool answer, enum rxp_drop_reason why);

#endif
