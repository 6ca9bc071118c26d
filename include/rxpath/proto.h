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
#define RXP_ICMP_SOURCE_QUENCH  4	/* deprecated, never sent (RFC 6633) */
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

/* ICMP codes of Destination Unreachable (RFC 792; 13: RFC 1812 5.2.7.1) */
#define RXP_ICMP_UNREACH_NET        0
#define RXP_ICMP_UNREACH_HOST       1
#define RXP_ICMP_UNREACH_PROTO      2
#define RXP_ICMP_UNREACH_PORT       3
/* and DF set: the next-hop MTU in the low 16 bits of the word after the checksum (RFC 1191 4) */
#define RXP_ICMP_UNREACH_FRAG_NEEDED 4
#define RXP_ICMP_UNREACH_SRC_ROUTE  5	/* source route failed */
#define RXP_ICMP_UNREACH_ADMIN      13	/* communication administratively prohibited */
/* of Redirect (RFC 792) */
#define RXP_ICMP_REDIRECT_HOST      1
/* of Time Exceeded (RFC 792) */
#define RXP_ICMP_EXCEEDED_TTL       0	/* time to live exceeded in transit */
#define RXP_ICMP_EXCEEDED_REASM     1	/* fragment reassembly time exceeded */
/* of Parameter Problem (RFC 792) */
#define RXP_ICMP_PARAM_POINTER      0	/* the pointer (top octet of the word after the checksum) says where */

/* ICMPv6 codes of Destination Unreachable (RFC 4443 3.1) */
#define RXP_ICMP6_UNREACH_NO_ROUTE  0
#define RXP_ICMP6_UNREACH_ADMIN     1	/* communication administratively prohibited */
#define RXP_ICMP6_UNREACH_SCOPE     2	/* beyond the scope of the source address */
#define RXP_ICMP6_UNREACH_ADDR      3	/* address unreachable */
#define RXP_ICMP6_UNREACH_PORT      4
/* of Time Exceeded (RFC 4443 3.3) */
#define RXP_ICMP6_EXCEEDED_HOP_LIMIT 0	/* hop limit exceeded in transit */
#define RXP_ICMP6_EXCEEDED_REASM    1	/* fragment reassembly time exceeded */
/* of Parameter Problem (RFC 4443 3.4; 3: RFC 7112 5) */
#define RXP_ICMP6_PARAM_HEADER      0	/* erroneous header field */
#define RXP_ICMP6_PARAM_NEXT_HDR    1	/* unrecognized Next Header type */
#define RXP_ICMP6_PARAM_OPTION      2	/* unrecognized IPv6 option */
#define RXP_ICMP6_PARAM_CHAIN       3	/* first fragment has an incomplete header chain */

#define RXP_IP4_HLEN 20
#define RXP_IP6_HLEN 40
#define RXP_IP6_MIN_MTU 1280	/* every IPv6 link carries this much (RFC 8200 5) */
#define RXP_IP6_FRAG_HLEN 8	/* the Fragment header (RFC 8200 4.5) */
#define RXP_UDP_HLEN 8
#define RXP_TCP_HLEN 20
#define RXP_ICMP_HLEN 8	/* type, code, checksum and one word, in ICMP and ICMPv6 alike */
#define RXP_ARP_LEN 28	/* an ARP packet for Ethernet and IPv4 */

#define RXP_IP4_VER_IHL_NO_OPTS 0x45	/* version 4, IHL 5: a 20-byte header, no options */
#define RXP_IP4_DF     0x4000
#define RXP_IP4_MF     0x2000
#define RXP_IP4_OFFMASK 0x1fff

#define RXP_IP6_FLOW_LABEL 0x000fffffu	/* of ver_tc_flow, in host order */
#define RXP_IP6_FRAG_OFFMASK 0xfff8	/* of the Fragment header's frag_off: the offset, in bytes */
#define RXP_IP6_FRAG_MF      0x0001	/* ... and the M flag, more fragments to come */

#define RXP_VLAN_VID_MASK 0x0fff	/* of the tag's TCI */

#define RXP_ARP_HTYPE_ETHER 1
#define RXP_ARP_OP_REQUEST 1
#define RXP_ARP_OP_REPLY   2

/* TCP flags (RFC 9293 3.1, RFC 3168 6.1) */
#define RXP_TCP_F_FIN 0x01
#define RXP_TCP_F_SYN 0x02
#define RXP_TCP_F_RST 0x04
#define RXP_TCP_F_PSH 0x08
#define RXP_TCP_F_ACK 0x10
#define RXP_TCP_F_URG 0x20
#define RXP_TCP_F_ECE 0x40
#define RXP_TCP_F_CWR 0x80

/*
 * The headers, packed: a frame may start at any 2-byte offset, so a field
 * is read and written through these as the compiler reads unaligned data
 * (never through a pointer to a field wider than a byte).
 */

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

/* ICMP (RFC 792) and ICMPv6 (RFC 4443 2.1): the same first 8 bytes */
struct rxp_icmp_hdr {
	uint8_t type;
	uint8_t code;
	uint16_t csum;
	uint32_t rest;	/* echo id and sequence, MTU, pointer, gateway, or unused (zero) */
} __attribute__((packed));

/* The IPv6 Fragment header (RFC 8200 4.5) */
struct rxp_ip6_frag_hdr {
	uint8_t next_hdr;
	uint8_t reserved;
	uint16_t frag_off;	/* offset and M flag: RXP_IP6_FRAG_OFFMASK, RXP_IP6_FRAG_MF */
	uint32_t id;
} __attribute__((packed));

/* ARP (RFC 826) for Ethernet and IPv4 */
struct rxp_arp_hdr {
	uint16_t htype;
	uint16_t ptype;
	uint8_t hlen;
	uint8_t plen;
	uint16_t op;
	uint8_t sha[RXP_ETH_ALEN];	/* sender */
	uint32_t spa;
	uint8_t tha[RXP_ETH_ALEN];	/* target */
	uint32_t tpa;
} __attribute__((packed));

_Static_assert(sizeof(struct rxp_eth_hdr) == RXP_ETH_HLEN, "Ethernet header is 14 bytes");
_Static_assert(sizeof(struct rxp_ip4_hdr) == RXP_IP4_HLEN, "IPv4 header is 20 bytes");
_Static_assert(sizeof(struct rxp_ip6_hdr) == RXP_IP6_HLEN, "IPv6 header is 40 bytes");
_Static_assert(sizeof(struct rxp_udp_hdr) == RXP_UDP_HLEN, "UDP header is 8 bytes");
_Static_assert(sizeof(struct rxp_tcp_hdr) == RXP_TCP_HLEN, "TCP header is 20 bytes");
_Static_assert(sizeof(struct rxp_vlan_hdr) == RXP_VLAN_HLEN, "VLAN tag is 4 bytes");
_Static_assert(sizeof(struct rxp_icmp_hdr) == RXP_ICMP_HLEN, "ICMP header is 8 bytes");
_Static_assert(sizeof(struct rxp_ip6_frag_hdr) == RXP_IP6_FRAG_HLEN, "Fragment header is 8 bytes");
_Static_assert(sizeof(struct rxp_arp_hdr) == RXP_ARP_LEN, "ARP for Ethernet and IPv4 is 28 bytes");

/* The IP version of an IPv4 header (4), from its first octet. */
static inline unsigned rxp_ip4_version(const struct rxp_ip4_hdr *ip)
{
	return ip->ver_ihl >> 4;
}

/* The length of an IPv4 header in bytes: IHL counts 32-bit words (RFC 791 3.1). */
static inline unsigned rxp_ip4_ihl(const struct rxp_ip4_hdr *ip)
{
	return (ip->ver_ihl & 0x0fu) * 4u;
}

/* The IP version of an IPv6 header (6): the top four bits of its first octet. */
static inline unsigned rxp_ip6_version(const struct rxp_ip6_hdr *ip)
{
	return *(const uint8_t *)ip >> 4;
}

/* The length of a TCP header in bytes: the data offset counts 32-bit words (RFC 9293 3.1). */
static inline unsigned rxp_tcp_doff(const struct rxp_tcp_hdr *tcp)
{
	return (tcp->doff_rsvd >> 4) * 4u;
}

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
