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

#include <endian.h>
#include <string.h>
#include "fib/seed.h"
#include "rxpath/proto.h"
#include "rxpath/router.h"
#include "rxpath/stack.h"

#define RXP_MP_K1 0x9e3779b97f4a7c15ull
#define RXP_MP_K2 0xc2b2ae3d27d4eb4full

/* Two IPv4 addresses as one key, alike both ways round: their xor and their sum. */
static rxp_always_inline uint64_t rxp_mp_addrs4(uint32_t a, uint32_t b)
{
	return (uint64_t)(a ^ b) << 32 | (uint32_t)(a + b);
}

/* Two IPv6 addresses, each folded to 64 bits, likewise. */
static rxp_always_inline uint64_t rxp_mp_addrs6(uint64_t a, uint64_t b)
{
	return ((a ^ b) << 32 | (a ^ b) >> 32) ^ (a + b);
}

/*
 * The flow hash of the addresses' key @addrs, @proto and @ports, the first
 * 4 bytes of the transport header as they lie in memory (0 without ports).
 * The ports are combined with their copy turned by 16 bits, which gives
 * both directions one key; then one multiply-fold with the router's seed,
 * whose high half is the hash: no branch, one multiplication.
 */
static rxp_always_inline uint32_t rxp_mp_hash_key(uint64_t seed, uint64_t addrs, uint32_t ports,
						  uint8_t proto)
{
	uint32_t turned = ports << 16 | ports >> 16;
	uint64_t key = (uint64_t)(uint16_t)(ports ^ turned) << 48 | (uint64_t)proto << 32 |
		       (uint32_t)(ports + turned);

	return (uint32_t)(rxp_mix64(seed ^ addrs, (RXP_MP_K1 ^ key) | 1) >> 32);
}

/* Is @proto TCP or UDP (1), or not (0)? The IPv4 fast path's test, one load. */
extern const uint8_t rxp_mp_tcp_udp[256];

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

/* This worker's per-member packet counters, [group][member]; NULL before the first group. */
static inline uint64_t *rxp_mp_counters(const struct rxp_stack *st)
{
	const struct rxp_router *r = st->router;

	return r->path_pkts ? r->path_pkts + (size_t)st->worker * RXP_NH_GROUP_MAX * RXP_NH_PATHS_MAX :
			      NULL;
}

/*
 * rxp_mp_pick() of group value @v for the IPv4 packet @ip (its header
 * checked, @len bytes), counted in @count (rxp_mp_counters()): in line for
 * the common packet, TCP or UDP without options that is not a fragment,
 * whose fields are then read straight; the rest through rxp_mp_hash4(),
 * which gives those the same hash.
 */
static rxp_always_inline uint32_t rxp_mp_member4(const struct rxp_router *r, uint64_t *count,
						 uint32_t v, const uint8_t *ip, uint32_t len)
{
	uint64_t w;
	uint32_t src, dst, ports, h, member;
	unsigned p;

	/* version 4, no options; MF clear and offset 0 (DF may be set): one test, no branch in it */
	memcpy(&w, ip, 8);
	w = be64toh(w);
	if (rxp_likely(((w & 0xff00000000003fffull) == 0x4500000000000000ull) & rxp_mp_tcp_udp[ip[9]] &
		       (len >= RXP_IP4_HLEN + 4))) {
		memcpy(&src, ip + 12, 4);
		memcpy(&dst, ip + 16, 4);
		memcpy(&ports, ip + RXP_IP4_HLEN, 4);
		h = rxp_mp_hash_key(r->mp_seed, rxp_mp_addrs4(src, dst), ports, ip[9]);
	} else {
		h = rxp_mp_hash4(r->mp_seed, ip, len);
	}
	member = rxp_router_group_pick(r, v, h, &p);
	count[(v & (RXP_NH_GROUP - 1)) * RXP_NH_PATHS_MAX + p]++;	/* this worker's own */
	return member;
}

/* True when one of @nh[0..n) may be a group (or no route): rxp_mp_resolve4() has work. */
static inline bool rxp_mp_any(const uint32_t *nh, unsigned n)
{
	uint32_t acc = 0;

	for (unsigned i = 0; i < n; i++)
		acc |= nh[i];
	return acc & RXP_NH_GROUP;
}

#endif
