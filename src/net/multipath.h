/* SPDX-License-Identifier: MIT */
/*
 * Multipath: which member of a next hop group a packet takes. A flow's
 * packets keep one member: the hash covers the addresses, the protocol and
 * the ports (the addresses and protocol alone for a fragment, so that a
 * datagram's pieces go one way), seeded per router. It is symmetric (both
 * directions of a flow hash alike), and an ICMP error is hashed on the
 * packet it quotes, so that it follows the flow it is about.
 */
#ifndef RXPATH_NET_MULTIPATH_H
#define RXPATH_NET_MULTIPATH_H

#include "rxpath/router.h"
#include "rxpath/stack.h"

/* The flow hash of the IPv4 packet @ip of @len bytes (its header checked). */
uint32_t rxp_mp_hash4(uint64_t seed, const uint8_t *ip, uint32_t len);

/* The flow hash of the IPv6 packet @ip of @len bytes (its fixed header checked). */
uint32_t rxp_mp_hash6(uint64_t seed, const uint8_t *ip, uint32_t len);

/*
 * The next hop @pkt (validated, IPv@family) takes for FIB value @nh: @nh
 * itself, or a group's member, counted for `show routes`.
 */
uint32_t rxp_mp_pick(struct rxp_stack *st, const struct rxp_pkt *pkt, uint8_t family, uint32_t nh);

/* The member rxp_mp_pick() would give, not counted: for a look ahead (the filter's). */
uint32_t rxp_mp_peek(const struct rxp_router *r, const struct rxp_pkt *pkt, uint8_t family,
		     uint32_t nh);

/* rxp_mp_pick() for each of @n IPv4 packets whose FIB values are in @nh, in place. */
void rxp_mp_resolve4(struct rxp_stack *st, struct rxp_pkt **pkts, uint32_t *nh, unsigned n);

/* True when one of @nh[0..n) may be a group (or no route): rxp_mp_resolve4() has work. */
static inline bool rxp_mp_any(const uint32_t *nh, unsigned n)
{
	uint32_t acc = 0;

	for (unsigned i = 0; i < n; i++)
		acc |= nh[i];
	return acc & RXP_NH_GROUP;
}

#endif
