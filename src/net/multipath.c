/* SPDX-License-Identifier: MIT */
/* The multipath flow hash and the pick of a group's member (see multipath.h). */
#include "multipath.h"
#include "stage.h"

/* Is ICMP type @type (IPv4) an error that quotes a packet? */
static bool icmp4_is_error(uint8_t type)
{
	return type == RXP_ICMP_DEST_UNREACH || type == RXP_ICMP_SOURCE_QUENCH ||
	       type == RXP_ICMP_REDIRECT || type == RXP_ICMP_TIME_EXCEEDED ||
	       type == RXP_ICMP_PARAM_PROB;
}

const uint8_t rxp_mp_tcp_udp[256] = { [RXP_IPPROTO_TCP] = 1, [RXP_IPPROTO_UDP] = 1 };

/* Do the first 4 bytes of @proto's header hold its source and destination ports? */
static bool has_ports(uint8_t proto)
{
	return proto == RXP_IPPROTO_TCP || proto == RXP_IPPROTO_UDP || proto == 132 /* SCTP */ ||
	       proto == 136 /* UDP-Lite */;
}

/* @quoted: @ip is inside an ICMP error, whose own quote is not looked into (RFC 1122 3.2.2). */
static rxp_noinline uint32_t hash4(uint64_t seed, const uint8_t *ip, uint32_t len, bool quoted)
{
	uint32_t ihl = (ip[0] & 0xfu) * 4u, src, dst;
	uint16_t frag = (uint16_t)(ip[6] << 8 | ip[7]);
	uint32_t ports = 0;
	uint8_t proto = ip[9];

	memcpy(&src, ip + 12, 4);
	memcpy(&dst, ip + 16, 4);
	if (rxp_unlikely(frag & (RXP_IP4_MF | RXP_IP4_OFFMASK) || ihl > len))
		return rxp_mp_hash_key(seed, rxp_mp_addrs4(src, dst), 0, proto);
	if (rxp_unlikely(proto == RXP_IPPROTO_ICMP) && !quoted && len >= ihl + 8 + RXP_IP4_HLEN &&
	    icmp4_is_error(ip[ihl])) {
		const uint8_t *in = ip + ihl + 8;
		uint32_t in_len = len - ihl - 8;
		uint32_t in_ihl = (in[0] & 0xfu) * 4u;

		/* the quoted packet, if it is one: its flow, whose direction the hash does not see */
		if ((in[0] >> 4) == 4 && in_ihl >= RXP_IP4_HLEN)
			return hash4(seed, in, in_len, true);
	}
	if (rxp_likely(has_ports(proto) && len >= ihl + 4))
		memcpy(&ports, ip + ihl, 4);
	return rxp_mp_hash_key(seed, rxp_mp_addrs4(src, dst), ports, proto);
}

uint32_t rxp_mp_hash4(uint64_t seed, const uint8_t *ip, uint32_t len)
{
	return hash4(seed, ip, len, false);
}

/* An IPv6 address folded to 64 bits, order-preserving enough to pick a direction. */
static uint64_t fold6(const uint8_t *a)
{
	uint64_t hi, lo;

	memcpy(&hi, a, 8);
	memcpy(&lo, a + 8, 8);
	return rxp_mix64(hi ^ RXP_MP_K2, RXP_MP_K1) ^ lo;
}

static uint32_t hash6(uint64_t seed, const uint8_t *ip, uint32_t len, bool quoted)
{
	uint64_t src = fold6(ip + 8), dst = fold6(ip + 24);
	uint8_t next = ip[6];
	uint32_t ports = 0;

	if (next == RXP_IPPROTO_ICMP6 && !quoted && len >= RXP_IP6_HLEN + 8 + RXP_IP6_HLEN &&
	    ip[RXP_IP6_HLEN] < 128 && (ip[RXP_IP6_HLEN + 8] >> 4) == 6)
		return hash6(seed, ip + RXP_IP6_HLEN + 8, len - RXP_IP6_HLEN - 8, true);
	/* a fragment header (or any other) first: the addresses and that header's type */
	if (has_ports(next) && len >= RXP_IP6_HLEN + 4)
		memcpy(&ports, ip + RXP_IP6_HLEN, 4);
	return rxp_mp_hash_key(seed, rxp_mp_addrs6(src, dst), ports, next);
}

uint32_t rxp_mp_hash6(uint64_t seed, const uint8_t *ip, uint32_t len)
{
	return hash6(seed, ip, len, false);
}

/* Counts a packet of group @nh's member @path on this worker. */
static inline void path_count(struct rxp_stack *st, const struct rxp_router *r, uint32_t nh,
			      unsigned path)
{
	size_t at = ((size_t)st->worker * RXP_NH_GROUP_MAX + (nh & (RXP_NH_GROUP - 1))) *
		    RXP_NH_PATHS_MAX + path;

	__atomic_store_n(&r->path_pkts[at], r->path_pkts[at] + 1, __ATOMIC_RELAXED);
}

static uint32_t pkt_hash(const struct rxp_router *r, const struct rxp_pkt *pkt, uint8_t family)
{
	return family == 4 ? rxp_mp_hash4(r->mp_seed, (const uint8_t *)rxp_pkt_cip4(pkt), pkt->l3_len) :
			     rxp_mp_hash6(r->mp_seed, (const uint8_t *)rxp_pkt_cip6(pkt), pkt->l3_len);
}

uint32_t rxp_mp_pick(struct rxp_stack *st, const struct rxp_pkt *pkt, uint8_t family, uint32_t nh)
{
	const struct rxp_router *r = st->router;
	uint32_t member;
	unsigned path;

	if (!rxp_nh_is_group(nh))
		return nh;
	member = rxp_router_group_pick(r, nh, pkt_hash(r, pkt, family), &path);
	path_count(st, r, nh, path);
	return member;
}

uint32_t rxp_mp_peek(const struct rxp_router *r, const struct rxp_pkt *pkt, uint8_t family,
		     uint32_t nh)
{
	unsigned path;

	return rxp_nh_is_group(nh) ? rxp_router_group_pick(r, nh, pkt_hash(r, pkt, family), &path) : nh;
}

void rxp_mp_resolve4(struct rxp_stack *st, struct rxp_pkt **pkts, uint32_t *nh, unsigned n)
{
	uint64_t *count = rxp_mp_counters(st);

	for (unsigned i = 0; i < n; i++)
		if (rxp_nh_is_group(nh[i]))
			nh[i] = rxp_mp_member4(st->router, count, nh[i],
					       (const uint8_t *)rxp_pkt_cip4(pkts[i]), pkts[i]->l3_len);
}
