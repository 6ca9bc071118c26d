/* SPDX-License-Identifier: MIT */
/*
 * rxp_ct_parse(): what tracking needs of a packet, read from its network
 * header on. Packets are hostile: every length is checked before the bytes
 * it covers are read, and whatever is cut short is -EINVAL.
 */
#include <errno.h>
#include <string.h>
#include "conntrack.h"
#include "rxpath/proto.h"

#define CT_IPPROTO_UDPLITE 136
#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_WSCALE 3
#define TCPOPT_SACK_PERM 4
#define TCPOPT_SACK 5
#define TCPOPT_TIMESTAMP 8
#define MAX_WSCALE 14
#define IP6_EXT_MAX 32		/* extension headers followed before giving up */

static inline uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Sequence numbers compare modulo 2^32. */
static inline bool seq_after(uint32_t a, uint32_t b)
{
	return (int32_t)(b - a) < 0;
}

/* TCP options in @opt[0..len): the scale and SACK permitted of a SYN, the SACK blocks of an ACK. */
static void tcp_options(const uint8_t *opt, unsigned len, struct rxp_ct_pkt *p)
{
	bool syn = p->tcp_flags & RXP_TCP_F_SYN, ack = p->tcp_flags & RXP_TCP_F_ACK;
	unsigned i = 0;

	/* the common case first: a timestamp alone (NOP, NOP, TS), nothing for us */
	if (!syn && len == 12 && opt[0] == TCPOPT_NOP && opt[1] == TCPOPT_NOP && opt[2] == TCPOPT_TIMESTAMP &&
	    opt[3] == 10)
		return;
	while (i < len) {
		unsigned kind = opt[i], size;

		if (kind == TCPOPT_EOL)
			return;
		if (kind == TCPOPT_NOP) {
			i++;
			continue;
		}
		if (len - i < 2)
			return;
		size = opt[i + 1];
		if (size < 2 || size > len - i)
			return;	/* a silly or cut option ends the list, as in Linux */
		if (kind == TCPOPT_WSCALE && size == 3 && syn) {
			p->wscale = (uint8_t)RXP_MIN(opt[i + 2], MAX_WSCALE);
		} else if (kind == TCPOPT_SACK_PERM && size == 2 && syn) {
			p->sack_perm = true;
		} else if (kind == TCPOPT_SACK && ack && size >= 10 && (size - 2) % 8 == 0) {
			for (unsigned b = i + 2; b + 8 <= i + size; b += 8) {
				uint32_t right = be32(opt + b + 4);

				if (seq_after(right, p->sack))
					p->sack = right;
			}
		}
		i += size;
	}
}

static bool is_icmp_error(uint8_t family, uint8_t type)
{
	if (family == 6)
		return type < 128;	/* RFC 4443 2.1: every type below 128 is an error */
	return type == RXP_ICMP_DEST_UNREACH || type == RXP_ICMP_SOURCE_QUENCH || type == RXP_ICMP_REDIRECT ||
	       type == RXP_ICMP_TIME_EXCEEDED || type == RXP_ICMP_PARAM_PROB;
}

static bool l4_has_ports(uint8_t proto)
{
	return proto == RXP_IPPROTO_TCP || proto == RXP_IPPROTO_UDP || proto == CT_IPPROTO_UDPLITE;
}

/*
 * IPv6's extension headers from @off (the IPv6 header's Next Header @nh):
 * leaves @off at the upper-layer header and @nh its protocol. A fragment
 * after the first stops at its Fragment header (@nth). ESP and No Next
 * Header end the chain like any upper layer.
 */
static int ip6_chain(const uint8_t *pkt, unsigned len, unsigned *off, uint8_t *nh, bool *frag,
		     bool *nth, uint32_t *id)
{
	for (unsigned n = 0; n < IP6_EXT_MAX; n++) {
		unsigned hl;

		switch (*nh) {
		case RXP_IPPROTO_HOPOPTS:
		case RXP_IPPROTO_ROUTING:
		case RXP_IPPROTO_DSTOPTS:
			if (len - *off < 2)
				return -EINVAL;
			hl = (pkt[*off + 1] + 1u) * 8;
			break;
		case RXP_IPPROTO_AH:
			/* its length counts 32-bit words, less two (RFC 4302 2.2) */
			if (len - *off < 2)
				return -EINVAL;
			hl = (pkt[*off + 1] + 2u) * 4;
			break;
		case RXP_IPPROTO_FRAGMENT: {
			uint16_t fo;

			if (len - *off < RXP_IP6_FRAG_HLEN)
				return -EINVAL;
			fo = be16(pkt + *off + 2);
			if (fo & (RXP_IP6_FRAG_OFFMASK | RXP_IP6_FRAG_MF)) {
				*frag = true;
				*id = be32(pkt + *off + 4);
			}
			*nh = pkt[*off];
			*off += RXP_IP6_FRAG_HLEN;
			if (fo & RXP_IP6_FRAG_OFFMASK) {
				*nth = true;
				return 0;
			}
			continue;
		}
		default:
			return 0;
		}
		if (hl > len - *off)
			return -EINVAL;
		*nh = pkt[*off];
		*off += hl;
	}
	return -EINVAL;
}

/*
 * The packet an ICMP error quotes, @q[0..len): its IP header and the first
 * 8 bytes of its transport header (RFC 792, RFC 4443 2.4: what follows
 * may be cut). It must be of the error's own family and have a transport
 * header (no later fragment).
 */
static int parse_quoted(const uint8_t *q, unsigned len, uint8_t family, struct rxp_ct_pkt *p)
{
	struct rxp_ct_tuple *t = &p->inner;
	unsigned off;
	uint8_t proto;

	if (family == 4) {
		const struct rxp_ip4_hdr *ip = (const struct rxp_ip4_hdr *)q;

		if (len < RXP_IP4_HLEN || rxp_ip4_version(ip) != 4)
			return -EINVAL;
		off = rxp_ip4_ihl(ip);
		if (off < RXP_IP4_HLEN || off > len || (be16(q + 6) & RXP_IP4_OFFMASK))
			return -EINVAL;
		memcpy(t->src, q + 12, 4);
		memcpy(t->dst, q + 16, 4);
		proto = ip->proto;
	} else {
		bool frag = false, nth = false;
		uint32_t id;

		if (len < RXP_IP6_HLEN || q[0] >> 4 != 6)
			return -EINVAL;
		memcpy(t->src, q + 8, 16);
		memcpy(t->dst, q + 24, 16);
		off = RXP_IP6_HLEN;
		proto = q[6];
		if (ip6_chain(q, len, &off, &proto, &frag, &nth, &id) || nth)
			return -EINVAL;
	}
	t->family = family;
	t->proto = proto;
	if (l4_has_ports(proto) || (family == 4 ? proto == RXP_IPPROTO_ICMP : proto == RXP_IPPROTO_ICMP6)) {
		if (len - off < 8)
			return -EINVAL;
		if (l4_has_ports(proto)) {
			t->sport = be16(q + off);
			t->dport = be16(q + off + 2);
		} else {
			p->inner_icmp_type = q[off];
			p->inner_icmp_code = q[off + 1];
			t->sport = t->dport = be16(q + off + 4);
		}
	}
	return 0;
}

/* The transport header @l4[0..len) of protocol @proto. */
static int parse_l4(const uint8_t *l4, unsigned len, uint8_t family, struct rxp_ct_pkt *p)
{
	struct rxp_ct_tuple *t = &p->t;

	switch (t->proto) {
	case RXP_IPPROTO_TCP: {
		unsigned doff;

		if (len < RXP_TCP_HLEN)
			return -EINVAL;
		doff = (l4[12] >> 4) * 4u;
		if (doff < RXP_TCP_HLEN || doff > len)
			return -EINVAL;
		t->sport = be16(l4);
		t->dport = be16(l4 + 2);
		p->seq = be32(l4 + 4);
		p->ack = p->sack = be32(l4 + 8);
		p->tcp_flags = l4[13];
		p->win = be16(l4 + 14);
		p->payload_len = len - doff;
		if (doff > RXP_TCP_HLEN)
			tcp_options(l4 + RXP_TCP_HLEN, doff - RXP_TCP_HLEN, p);
		return 0;
	}
	case RXP_IPPROTO_UDP:
	case CT_IPPROTO_UDPLITE:
		if (len < RXP_UDP_HLEN)
			return -EINVAL;
		/* UDP's length within the packet (a first fragment's covers the whole datagram) */
		if (t->proto == RXP_IPPROTO_UDP && !p->frag &&
		    (be16(l4 + 4) < RXP_UDP_HLEN || be16(l4 + 4) > len))
			return -EINVAL;
		t->sport = be16(l4);
		t->dport = be16(l4 + 2);
		return 0;
	case RXP_IPPROTO_ICMP:
	case RXP_IPPROTO_ICMP6:
		if ((t->proto == RXP_IPPROTO_ICMP) != (family == 4))
			return 0;	/* ICMP in IPv6, ICMPv6 in IPv4: another protocol */
		if (len < RXP_ICMP_HLEN)
			return -EINVAL;
		p->icmp_type = l4[0];
		p->icmp_code = l4[1];
		if (is_icmp_error(family, p->icmp_type)) {
			p->icmp_error = true;
			return parse_quoted(l4 + RXP_ICMP_HLEN, len - RXP_ICMP_HLEN, family, p);
		}
		t->sport = t->dport = be16(l4 + 4);	/* the identifier of queries and answers */
		return 0;
	default:
		return 0;
	}
}

static int parse4(const uint8_t *l3, unsigned len, struct rxp_ct_pkt *p)
{
	const struct rxp_ip4_hdr *ip = (const struct rxp_ip4_hdr *)l3;
	unsigned ihl, tot;
	uint16_t fo;

	if (len < RXP_IP4_HLEN || rxp_ip4_version(ip) != 4)
		return -EINVAL;
	ihl = rxp_ip4_ihl(ip);
	tot = be16(l3 + 2);
	if (ihl < RXP_IP4_HLEN || ihl > len || tot < ihl || tot > len)
		return -EINVAL;
	p->t.family = 4;
	memcpy(p->t.src, l3 + 12, 4);
	memcpy(p->t.dst, l3 + 16, 4);
	p->t.proto = ip->proto;
	p->bytes = tot;
	fo = be16(l3 + 6);
	if (fo & (RXP_IP4_MF | RXP_IP4_OFFMASK)) {
		p->frag = true;
		p->frag_id = be16(l3 + 4);
		if (fo & RXP_IP4_OFFMASK) {
			p->frag_nth = true;
			return 0;
		}
	}
	p->l4_off = (uint16_t)ihl;
	return parse_l4(l3 + ihl, tot - ihl, 4, p);
}

static int parse6(const uint8_t *l3, unsigned len, struct rxp_ct_pkt *p)
{
	unsigned tot, off = RXP_IP6_HLEN;
	uint8_t nh;
	int r;

	if (len < RXP_IP6_HLEN || l3[0] >> 4 != 6)
		return -EINVAL;
	tot = RXP_IP6_HLEN + be16(l3 + 4);
	nh = l3[6];
	if (tot == RXP_IP6_HLEN && nh == RXP_IPPROTO_HOPOPTS && len > RXP_IP6_HLEN)
		tot = len;	/* a jumbogram (RFC 2675): its length is in the hop-by-hop option */
	if (tot > len)
		return -EINVAL;
	p->t.family = 6;
	memcpy(p->t.src, l3 + 8, 16);
	memcpy(p->t.dst, l3 + 24, 16);
	p->bytes = tot;
	r = ip6_chain(l3, tot, &off, &nh, &p->frag, &p->frag_nth, &p->frag_id);
	p->t.proto = nh;
	if (r || p->frag_nth)
		return r;
	if (nh != RXP_IPPROTO_NONE)
		p->l4_off = (uint16_t)off;
	return parse_l4(l3 + off, tot - off, 6, p);
}

int rxp_ct_parse(const uint8_t *l3, unsigned l3_len, uint8_t family, struct rxp_ct_pkt *p)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->wscale = 0xff;
	r = family == 4 ? parse4(l3, l3_len, p) : family == 6 ? parse6(l3, l3_len, p) : -EINVAL;
	if (r) {
		p->malformed = true;
		p->l4_off = 0;
	}
	return r;
}
