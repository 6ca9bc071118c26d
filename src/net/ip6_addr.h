/* SPDX-License-Identifier: MIT */
/*
 * The router's IPv6 addresses and groups on an interface, and tests of
 * addresses and prefixes, shared inside src/net (the functions not inline: icmp6.c).
 */
#ifndef RXPATH_NET_IP6_ADDR_H
#define RXPATH_NET_IP6_ADDR_H

#include <string.h>
#include "rxpath/router.h"

/* Returns true when @addr is the Subnet-Router anycast address of one of @ifp's prefixes. */
bool rxp_l3if_anycast6(const struct rxp_l3if *ifp, const uint8_t addr[16]);

/* The groups of rxp_l3if_groups6() at most: two all-routers, two per address */
#define RXP_IP6_GROUPS_MAX (2 + 2 * RXP_IF_ADDRS)

/*
 * Writes to @groups the IPv6 groups the router listens to on @ifp besides
 * all-nodes (RFC 4291 2.7.1, 2.8, RFC 4861 7.2.1): all-routers of link and
 * site scope, and the solicited-node group of each of its addresses and
 * Subnet-Router anycast addresses, each once. Returns how many.
 */
unsigned rxp_l3if_groups6(const struct rxp_l3if *ifp, uint8_t (*groups)[16]);

/* True when the router listens to @group on @ifp: all-nodes, or one of rxp_l3if_groups6(). */
bool rxp_l3if_listens6(const struct rxp_l3if *ifp, const uint8_t group[16]);

/* ff02::1:ffXX:XXXX, the solicited-node group of @addr (RFC 4291 2.7.1) */
static inline void rxp_ip6_solicited_node(uint8_t group[16], const uint8_t addr[16])
{
	static const uint8_t pfx[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };

	memcpy(group, pfx, sizeof(pfx));
	memcpy(group + 13, addr + 13, 3);
}

/* RFC 2464 7: IPv6 multicast goes to Ethernet 33:33 and the group's low 32 bits. */
static inline void rxp_ip6_mcast_mac(uint8_t mac[6], const uint8_t group[16])
{
	mac[0] = 0x33;
	mac[1] = 0x33;
	memcpy(mac + 2, group + 12, 4);
}

/* Returns true when @addr is one of @ifp's IPv6 addresses. */
static inline bool rxp_l3if_has_addr6(const struct rxp_l3if *ifp, const uint8_t addr[16])
{
	for (unsigned i = 0; i < ifp->n_addr6; i++)
		if (!memcmp(ifp->addr6[i], addr, 16))
			return true;
	return false;
}

/* Returns true when @addr is one of the router's own IPv6 addresses (on any interface). */
static inline bool rxp_router_has_addr6(const struct rxp_router *r, const uint8_t addr[16])
{
	for (unsigned f = 0; f < r->n_ifs; f++)
		if (rxp_l3if_has_addr6(&r->ifs[f], addr))
			return true;
	return false;
}

/* True when the first @plen bits of @a and @b are the same. */
static inline bool rxp_prefix_eq(const uint8_t *a, const uint8_t *b, unsigned plen)
{
	unsigned bytes = plen / 8, bits = plen % 8;

	return !memcmp(a, b, bytes) &&
	       (!bits || !((a[bytes] ^ b[bytes]) & (uint8_t)(0xff00u >> bits)));
}

/* True for an IPv6 link-local address, fe80::/10 (RFC 4291 2.5.6). */
static inline bool rxp_ip6_is_link_local(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

#endif
