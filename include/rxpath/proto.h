/* SPDX-License-Identifier: MIT */
/* Wire formats. All multi-byte fields are in network byte order. */
#ifndef RXPATH_PROTO_H
#define RXPATH_PROTO_H

#include <string.h>
#include "rxpath/common.h"

#define RXP_ETH_ALEN 6
#define RXP_ETH_HLEN 14
#define RXP_VLAN_HLEN 4
#define RXP_ETH_FCS_LEN 4
#define RXP_ETH_ZLEN 60		/* shortest frame without FCS */

#define RXP_ETHERTYPE_IP4  0x0800
#define RXP_ETHERTYPE_ARP  0x0806
#define RXP_ETHERTYPE_VLAN 0x8100
#define RXP_ETHERTYPE_QINQ 0x88a8
#define RXP_ETHERTYPE_IP6  0x86dd

#define RXP_IPPROTO_ICMP   1
#define RXP_IPPROTO_TCP    6
#define RXP_IPPROTO_UDP    17
#define RXP_IPPROTO_ICMP6  58

/* IPv6 extension headers (RFC 8200 4), as Next Header values */
#define RXP_IPPROTO_HOPOPTS  0
#define RXP_IPPROTO_ROUTING  43
#define RXP_IPPROTO_FRAGMENT 44
#define RXP_IPPROTO_AH       51
#define RXP_IPPROTO_NONE     59	/* No Next Header */
#define RXP_IPPROTO_DSTOPTS  60

/* ICMP (RFC 792) and ICMPv6 (RFC 4443) message types */
#define RXP_ICMP_ECHO_REPLY     0
#define RXP_ICMP_DEST_UNREACH   3
#define RXP_ICMP_REDIRECT       5
#define RXP_ICMP_ECHO_REQUEST   8
#define RXP_ICMP_TIME_EXCEEDED  11
#define RXP_ICMP_PARAM_PROB     12
#define RXP_ICMP6_DEST_UNREACH  1
#define RXP_ICMP6_PKT_TOO_BIG   2
#define RXP_ICMP6_TIME_EXCEEDED 3
#define RXP_ICMP6_PARAM_PROB    4
#define RXP_ICMP6_ECHO_REQUEST  128
#define RXP_ICMP6_ECHO_REPLY    129
#define RXP_ICMP6_MLD_QUERY     130	/* Multicast Listener Query (RFC 3810 5.1) */
#define RXP_ICMP6_ND_FIRST      133	/* Router Solicitation .. */
#define RXP_ICMP6_REDIRECT      137	/* .. Redirect: Neighbor Discovery (RFC 4861 4) */

#define RXP_IP4_HLEN 20
#define RXP_IP6_HLEN 40
#define RXP_IP6_MIN_MTU 1280	/* every IPv6 link carries this much (RFC 8200 5) */
#define RXP_IP6_FRAG_HLEN 8	/* the Fragment header (RFC 8200 4.5) */
#define RXP_UDP_HLEN 8
#define RXP_TCP_HLEN 20

#define RXP_IP4_DF     0x4000
#define RXP_IP4_MF     0x2000
#define RXP_IP4_OFFMASK 0x1fff

struct rxp_eth_hdr {
	uint8_t dst[RXP_ETH_ALEN];
	uint8_t src[RXP_ETH_ALEN];
	uint16_t type;
} __attribute__((packed));

struct rxp_vlan_hdr {
	uint16_t tci;
	uint16_t type;
} __attribute__((packed));

struct rxp_ip4_hdr {
	uint8_t ver_ihl;
	uint8_t tos;
	uint16_t tot_len;
	uint16_t id;
	uint16_t frag_off;
	uint8_t ttl;
	uint8_t proto;
	uint16_t csum;
	uint32_t src;
	uint32_t dst;
} __attribute__((packed));

struct rxp_ip6_hdr {
	uint32_t ver_tc_flow;
	uint16_t payload_len;
	uint8_t next_hdr;
	uint8_t hop_limit;
	uint8_t src[16];
	uint8_t dst[16];
} __attribute__((packed));

struct rxp_udp_hdr {
	uint16_t sport;
	uint16_t dport;
	uint16_t len;
	uint16_t csum;
} __attribute__((packed));

struct rxp_tcp_hdr {
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t doff_rsvd;	/* data offset in 32-bit words, high nibble */
	uint8_t flags;
	uint16_t window;
	uint16_t csum;
	uint16_t urg;
} __attribute__((packed));

_Static_assert(sizeof(struct rxp_eth_hdr) == RXP_ETH_HLEN, "Ethernet header is 14 bytes");
_Static_assert(sizeof(struct rxp_ip4_hdr) == RXP_IP4_HLEN, "IPv4 header is 20 bytes");
_Static_assert(sizeof(struct rxp_ip6_hdr) == RXP_IP6_HLEN, "IPv6 header is 40 bytes");
_Static_assert(sizeof(struct rxp_udp_hdr) == RXP_UDP_HLEN, "UDP header is 8 bytes");
_Static_assert(sizeof(struct rxp_tcp_hdr) == RXP_TCP_HLEN, "TCP header is 20 bytes");

static inline bool rxp_eth_is_multicast(const uint8_t *mac)
{
	return mac[0] & 1;	/* includes broadcast */
}

/* True when @mac is one station's: not a group, not all zeros. */
static inline bool rxp_eth_is_unicast(const uint8_t *mac)
{
	return !(mac[0] & 1) && (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]);
}

/* ::ffff:0:0/96, an IPv4 address in a socket's IPv6 form: never on a wire (RFC 4942 2.2, RFC 6890) */
static inline bool rxp_ip6_is_v4mapped(const uint8_t *a)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a, pfx, sizeof(pfx));
}

#endif
