/* SPDX-License-Identifier: MIT */
/* NAT44 rewriting of one IPv4 packet in place, checksums updated incrementally (nat_rewrite.c). */
#ifndef RXPATH_NET_NAT_REWRITE_H
#define RXPATH_NET_NAT_REWRITE_H

#include <stdbool.h>
#include <stdint.h>

/* What to rewrite: each field as stored in the packet (network order). */
struct rxp_nat_rw {
	bool src, dst;		/* rewrite the source, the destination */
	uint32_t saddr, daddr;	/* new addresses, network order */
	uint16_t sport, dport;	/* new ports, network order; an ICMP query's id: src ? sport : dport */
};

/*
 * Rewrites the IPv4 packet @ip of @len bytes (its header already validated:
 * version 4, IHL >= 5, IHL*4 <= len, total length == len): addresses, and
 * in a whole packet or first fragment the TCP, UDP or UDP-Lite ports or
 * the ICMP query identifier. An ICMP error gets its outer addresses only.
 * Returns 0, or -EINVAL when the transport header to change (or any ICMP
 * header) is cut short; the packet is then left unchanged.
 */
int rxp_nat_rewrite4(uint8_t *ip, unsigned len, const struct rxp_nat_rw *rw);

/*
 * Rewrites the ICMP error (type 3, 4, 5, 11, 12) @ip of @len bytes about a
 * translated packet: @outer the outer header's addresses (its ports
 * ignored), @inner the quoted packet's addresses and ports or identifier,
 * with every checksum in the quote and the ICMP checksum. Returns 0, or
 * -EINVAL when @ip is no ICMP error or the quote is malformed (shorter
 * than its IP header + 8 bytes, bad version or IHL, itself an ICMP error);
 * the packet is then left unchanged.
 */
int rxp_nat_rewrite4_icmp_error(uint8_t *ip, unsigned len, const struct rxp_nat_rw *outer,
				const struct rxp_nat_rw *inner);

#endif
