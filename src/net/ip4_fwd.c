/* SPDX-License-Identifier: MIT */
/*
 * IPv4 routing (RFC 1812 5.2-5.3): martian filtering, FIB lookup, local
 * delivery, TTL with incremental checksum update (RFC 1624), MTU and
 * fragmentation (RFC 791), then the neighbour.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <string.h>
#include "rxpath/csum.h"
#include "host.h"
#include "icmp.h"
#include "ip4_opt.h"
#include "ip4_route.h"
#include "local.h"
#include "multipath.h"
#include "out.h"
#include "filter.h"
#include "reasm.h"

static void local_deliver4(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	/* the TAP of the port it came in on has that interface's addresses only */
	if (st->host[pkt->port] && !(pkt->flags & RXP_PKT_F_L2_MCAST) &&
	    !rxp_l3if_has_addr4(&st->router->ifs[pkt->ifidx], rxp_pkt_cip4(pkt)->dst))
		pkt->flags |= RXP_PKT_F_OTHER_IF;
	if (rxp_unlikely(pkt->flags & RXP_PKT_F_FRAG) && !rxp_host_wants(st, pkt) &&
	    !(pkt->flags & RXP_PKT_F_L2_MCAST))
		rxp_reasm_input(st, pkt);
	else if (pkt->l4_proto == RXP_IPPROTO_ICMP)
		rxp_icmp4_local(st, pkt);
	else
		rxp_local_l4(st, pkt);	/* UDP, TCP and the rest, as a host answers */
}

/*
 * Broadcast and link-local multicast (224.0.0.0/24) are for the hosts on
 * the link, never forwarded nor answered: with a host path on the port they
 * came in on, the kernel behind it takes them (DHCP, RIP, OSPF, VRRP, IGMP;
 * it ignores the groups it has not joined); else they are dropped under @why.
 */
static void link_scoped4(struct rxp_stack *st, struct rxp_pkt *pkt, enum rxp_drop_reason why)
{
	uint32_t nh = RXP_NH_LOCAL;

	if (!rxp_host_wants(st, pkt)) {
		rxp_drop(st, pkt, why);
		return;
	}
	/* for the kernel behind the port (DHCP, OSPF, VRRP): the input chain's */
	if (rxp_unlikely(rxp_filter_on(st)) && !rxp_filter_routed(st, &pkt, NULL, &nh, 1))
		return;
	rxp_sink_one(st, pkt);
}

void rxp_ip4_fragment(struct rxp_stack *st, struct rxp_pkt *pkt, uint16_t ifidx, const uint8_t mac[6])
{
	const struct rxp_l3if *ifp = &st->router->ifs[ifidx];
	uint32_t mtu = ifp->mtu;
	const struct rxp_ip4_hdr *ip = rxp_pkt_cip4(pkt);
	const uint8_t *opts = (const uint8_t *)(ip + 1);
	unsigned ihl = rxp_ip4_ihl(ip);
	const uint8_t *data = (const uint8_t *)ip + ihl;
	unsigned data_len = pkt->l3_len - ihl;
	uint16_t frag = ntohs(ip->frag_off);
	unsigned base_off = (frag & RXP_IP4_OFFMASK) * 8u;
	bool more_after = frag & RXP_IP4_MF;
	uint8_t nf_opts[40];
	unsigned nf_len = rxp_ip4_copied_options(opts, ihl - RXP_IP4_HLEN, nf_opts);
	unsigned n_frags = 0;
	bool out_of_buffers = false;

	for (unsigned off = 0; off < data_len;) {
		unsigned hlen = off == 0 ? ihl : RXP_IP4_HLEN + nf_len;
		unsigned chunk = RXP_MIN((mtu - hlen) & ~7u, data_len - off);
		bool last = off + chunk == data_len;
		struct rxp_pkt *f = rxp_local_alloc(st, (uint16_t)(hlen + chunk));
		struct rxp_ip4_hdr *fip;

		if (!f) {
			out_of_buffers = true;
			break;
		}
		fip = rxp_pkt_ip4(f);
		memcpy(fip, ip, RXP_IP4_HLEN);
		if (off == 0)
			memcpy(fip + 1, opts, ihl - RXP_IP4_HLEN);
		else
			memcpy(fip + 1, nf_opts, nf_len);
		memcpy((uint8_t *)fip + hlen, data + off, chunk);
		fip->ver_ihl = (uint8_t)(0x40 | hlen / 4);
		fip->tot_len = htons((uint16_t)(hlen + chunk));
		fip->frag_off = htons((uint16_t)(((base_off + off) / 8) |
						 (!last || more_after ? RXP_IP4_MF : 0)));
		fip->csum = 0;
		fip->csum = rxp_csum(fip, hlen);
		f->port = pkt->port;
		f->ifidx = pkt->ifidx;
		f->flags = RXP_PKT_F_LOCAL_OUT;
		if (!rxp_l2_prepend(f, ifp, mac, RXP_ETHERTYPE_IP4)) {
			rxp_drop(st, f, RXP_DROP_NO_MEMORY);
			out_of_buffers = true;
			break;
		}
		rxp_tx_enqueue(st, f, true);
		n_frags++;
		off += chunk;
	}
	st->stats.fragments += n_frags;
	/* the pool ran dry on the way: the pieces sent cannot make the datagram whole */
	if (rxp_unlikely(out_of_buffers)) {
		rxp_drop(st, pkt, RXP_DROP_NO_MEMORY);
		return;
	}
	if (!(pkt->flags & RXP_PKT_F_LOCAL_OUT))
		st->stats.forwarded++;
	rxp_pool_free(st->cache, pkt);
}

/*
 * First octets that need a closer look, as a source or as a destination:
 * 0/8, 127/8, 169/8 (for 169.254/16, link-local), 224/4 (multicast) and
 * 240/4 (reserved, and the broadcast). A byte each: two loads test a
 * source and a destination.
 */
static const uint8_t special_first_octet[256] = {
	[0] = 1, [127] = 1, [169] = 1,
	[224] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	[240] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/*
 * RFC 1812 4.3.3.2 and 5.2.7.2: a packet about to leave by the interface it
 * came in on, from a source on the same subnet as its next hop @next
 * (network order), earns the source a Redirect for Host (5/1) naming that
 * next hop; the packet is forwarded all the same. Never about a
 * source-routed packet, and not on an interface set `redirects off`. The
 * ICMP error rules and the rate limit apply as to any error.
 */
static rxp_noinline void maybe_redirect4(struct rxp_stack *st, struct rxp_pkt *pkt,
					 const struct rxp_ip4_hdr *ip, uint32_t next)
{
	const struct rxp_l3if *ifp = &st->router->ifs[pkt->ifidx];
	uint32_t src = ip->src;
	int i;

	if (ifp->no_redirects)
		return;
	i = rxp_l3if_subnet4(ifp, src);
	if (i < 0 || src == next || rxp_l3if_subnet4(ifp, next) != i || rxp_ip4_source_routed(ip))
		return;
	if (rxp_icmp4_error(st, pkt, RXP_ICMP_REDIRECT, RXP_ICMP_REDIRECT_HOST, ntohl(next)))
		st->stats.redirects++;
}

/* A route that leads nowhere: dropped, answered as its kind says (as Linux's route types). */
static rxp_noinline void reject4(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t kind)
{
	if (kind == RXP_NH_KIND_BLACKHOLE) {
		rxp_drop(st, pkt, RXP_DROP_BLACKHOLE);
		return;
	}
	/* host unreachable (3/1), or communication administratively prohibited (3/13, RFC 1812 5.2.7.1) */
	rxp_icmp4_error(st, pkt, RXP_ICMP_DEST_UNREACH,
			kind == RXP_NH_KIND_PROHIBIT ? RXP_ICMP_UNREACH_ADMIN : RXP_ICMP_UNREACH_HOST, 0);
	rxp_drop(st, pkt, RXP_DROP_ROUTE_REJECT);
}

/* True when @adj, the cached adjacency of a next hop, holds a neighbour cached in generation @gen. */
static rxp_always_inline bool adj_ok(const struct rxp_adj *adj, uint32_t gen)
{
	return adj->neigh && adj->gen == gen;
}

/*
 * True when the packet can take the fast path through @adj (which passed
 * adj_ok): nothing unusual about the packet, addresses that need no closer
 * look, and a source @src (network order) that is no broadcast address or
 * address of ours. (A gateway route never covers a connected subnet's broadcast: only
 * the source is checked.) A packet leaving by the interface it came in on
 * takes the full path, which decides on a redirect.
 */
static rxp_always_inline bool pkt_ok(const struct rxp_router *r, const struct rxp_adj *adj,
				     const struct rxp_pkt *pkt, const struct rxp_ip4_hdr *ip,
				     uint32_t src, uint32_t dst_host)
{
	return !(pkt->flags & RXP_PKT_F_L2_MCAST) && ip->ttl > 1 && pkt->l3_len <= adj->mtu &&
	       pkt->ifidx != adj->ifidx &&
	       !(special_first_octet[ntohl(src) >> 24] | special_first_octet[dst_host >> 24]) &&
	       !(rxp_router_is_bad_src4(r, src) && !(pkt->flags & RXP_PKT_F_SNAT));
}

/* TTL - 1, and the checksum updated for it, not recomputed (RFC 1624) */
static rxp_always_inline void ttl_dec(struct rxp_ip4_hdr *ip)
{
	ip->ttl--;
	ip->csum = rxp_csum_ttl_dec(ip->csum);
}

/*
 * The fast path of forwarding: a gateway whose neighbour is cached, and
 * nothing unusual about the packet. Returns false to take the full path.
 */
static rxp_always_inline bool forward_fast(struct rxp_stack *st, struct rxp_pkt *pkt,
					   struct rxp_ip4_hdr *ip, uint32_t nh)
{
	const struct rxp_adj *adj;
	uint32_t src;

	if (rxp_unlikely(nh >= RXP_STACK_NH_MAX))
		return false;
	adj = &st->adj[nh];
	src = ip->src;
	if (rxp_unlikely(!adj_ok(adj, rxp_neigh_gen(&st->router->neigh)) ||
			 !pkt_ok(st->router, adj, pkt, ip, src, ntohl(ip->dst))))
		return false;
	ttl_dec(ip);
	rxp_adj_output(st, pkt, adj);
	return true;
}

static rxp_always_inline void route_nh(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t nh)
{
	struct rxp_router *r = st->router;
	struct rxp_ip4_hdr *ip = rxp_pkt_ip4(pkt);
	const struct rxp_nexthop *nhp;
	const struct rxp_l3if *out;
	uint32_t src, dst, d, next;

	if (rxp_likely(forward_fast(st, pkt, ip, nh)))
		return;
	src = ip->src;
	dst = ip->dst;
	d = ntohl(dst);
	/* RFC 1812 5.3.7; 0.0.0.0 only as a host with no address yet broadcasts (a DHCP discover) */
	if (rxp_router_is_martian_src4(r, src) && !(src == 0 && d == 0xffffffffu) &&
	    !(pkt->flags & RXP_PKT_F_SNAT)) {
		rxp_drop(st, pkt, RXP_DROP_IP4_MARTIAN_SRC);
		return;
	}
	if (rxp_unlikely(d == 0xffffffffu)) {
		link_scoped4(st, pkt, src ? RXP_DROP_IP4_BCAST : RXP_DROP_IP4_MARTIAN_SRC);
		return;
	}
	if (rxp_unlikely((d >> 28) == 0xe)) {
		if ((d >> 8) == 0xe00000)	/* 224.0.0.0/24: link-local */
			link_scoped4(st, pkt, RXP_DROP_IP4_MCAST);
		else
			rxp_drop(st, pkt, RXP_DROP_IP4_MCAST);
		return;
	}
	if (rxp_unlikely((d >> 24) == 0 || (d >> 24) == 127 || (d >> 28) == 0xf)) {
		rxp_drop(st, pkt, RXP_DROP_IP4_MARTIAN_DST);
		return;
	}
	/* IPv4 link-local stays on its link, whatever the routes say (RFC 3927 2.7) */
	if (rxp_unlikely(((d >> 16) == 0xa9fe || (ntohl(src) >> 16) == 0xa9fe) && nh != RXP_NH_LOCAL)) {
		rxp_drop(st, pkt, RXP_DROP_IP4_LINK_LOCAL);
		return;
	}
	if (nh == RXP_LPM_NO_ROUTE) {
		if (pkt->flags & RXP_PKT_F_L2_MCAST) {
			rxp_drop(st, pkt, RXP_DROP_L2_BCAST_FWD);
			return;
		}
		rxp_icmp4_error(st, pkt, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_NET, 0);
		rxp_drop(st, pkt, RXP_DROP_NO_ROUTE);
		return;
	}
	if (nh == RXP_NH_LOCAL) {
		/* a source route through the router goes on; one that ends here is ours */
		if (rxp_unlikely(ip->ver_ihl != RXP_IP4_VER_IHL_NO_OPTS) && rxp_ip4_source_route(st, pkt))
			return;
		local_deliver4(st, pkt);
		return;
	}
	if (rxp_unlikely(rxp_nh_kind_rejects(r->nh[nh].kind))) {
		reject4(st, pkt, r->nh[nh].kind);
		return;
	}
	/*
	 * A connected subnet's broadcast: nothing here receives it, and
	 * directed broadcasts are not forwarded (RFC 2644); no error either
	 * (RFC 1812 4.3.2.7).
	 */
	if (rxp_unlikely(r->nh[nh].kind == RXP_NH_KIND_CONNECTED && rxp_router_is_bcast4(r, dst))) {
		/* the broadcast of the subnet it came in on is for the hosts there, the router's too */
		if (r->nh[nh].ifidx == pkt->ifidx)
			link_scoped4(st, pkt, RXP_DROP_IP4_BCAST);
		else
			rxp_drop(st, pkt, RXP_DROP_IP4_BCAST);
		return;
	}
	if (rxp_unlikely(pkt->flags & RXP_PKT_F_L2_MCAST)) {
		rxp_drop(st, pkt, RXP_DROP_L2_BCAST_FWD);
		return;
	}
	if (rxp_unlikely(ip->ttl <= 1)) {
		rxp_icmp4_error(st, pkt, RXP_ICMP_TIME_EXCEEDED, RXP_ICMP_EXCEEDED_TTL, 0);
		rxp_drop(st, pkt, RXP_DROP_TTL_EXCEEDED);
		return;
	}
	nhp = &r->nh[nh];
	out = &r->ifs[nhp->ifidx];
	if (rxp_unlikely(pkt->l3_len > out->mtu) && (ip->frag_off & htons(RXP_IP4_DF))) {
		rxp_icmp4_error(st, pkt, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_FRAG_NEEDED,
				(uint16_t)out->mtu);
		rxp_drop(st, pkt, RXP_DROP_FRAG_NEEDED);
		return;
	}
	next = dst;
	if (nhp->kind == RXP_NH_KIND_GATEWAY)
		memcpy(&next, nhp->gw, 4);
	if (rxp_unlikely(nhp->ifidx == pkt->ifidx))
		maybe_redirect4(st, pkt, ip, next);	/* quotes the header as it came */
	ttl_dec(ip);
	/*
	 * Larger than the link, DF clear: it waits for its next hop whole (its
	 * pieces then go, or fail with one error, together) and is fragmented
	 * on its way out (rxp_ip4_fragment).
	 */
	if (rxp_unlikely(pkt->l3_len > out->mtu)) {
		rxp_neigh_output(st, pkt, nhp->ifidx, 4, (const uint8_t *)&next);
		return;
	}
	if (nhp->kind == RXP_NH_KIND_GATEWAY)
		rxp_output_via(st, pkt, nh);
	else
		rxp_neigh_output(st, pkt, nhp->ifidx, 4, (const uint8_t *)&next);
}

void rxp_ip4_route(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	uint32_t nh;

	if (rxp_lpm4_lookup(rxp_router_fib4_of(st->router, pkt->ifidx), ntohl(rxp_pkt_cip4(pkt)->dst), &nh))
		nh = RXP_LPM_NO_ROUTE;
	nh = rxp_mp_pick(st, pkt, 4, nh);
	if (rxp_unlikely(rxp_filter_on(st)) && !rxp_filter_routed(st, &pkt, NULL, &nh, 1))
		return;
	route_nh(st, pkt, nh);
}

/*
 * The vector's lookups when there are VRFs: in bulk in the one table of
 * them all when they came in by interfaces of one, else each in its own.
 */
static rxp_noinline void lookup_vrfs(const struct rxp_router *r, struct rxp_pkt **pkts,
				     const uint32_t *dst, uint32_t *nh, uint16_t n)
{
	uint8_t vrf = r->ifs[pkts[0]->ifidx].vrf;
	bool one = true;

	for (uint16_t i = 1; i < n && one; i++)
		one = r->ifs[pkts[i]->ifidx].vrf == vrf;
	if (one) {
		rxp_lpm4_lookup_bulk(r->vrfs[vrf].fib4, dst, nh, n);
		return;
	}
	for (uint16_t i = 0; i < n; i++)
		if (rxp_lpm4_lookup(rxp_router_fib4_of(r, pkts[i]->ifidx), dst[i], &nh[i]))
			nh[i] = RXP_LPM_NO_ROUTE;
}

/* Out of line, so that the vector loop keeps its registers. */
static rxp_noinline void route_slow(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t nh)
{
	route_nh(st, pkt, nh);
}

/*
 * A vector through a stateless forward chain (rxp_filter_stateless4()),
 * when every packet of it takes the fast path: the pass that tests them
 * also reads their keys, the chain decides them all at once, and a second
 * pass sends what it lets through. Returns false, with nothing done, when
 * a packet does not take the fast path: the vector then goes the general
 * way (the filter's stage, then the loop of rxp_ip4_route_vector()), so
 * that no packet overtakes another.
 */
static rxp_noinline bool route_filtered4(struct rxp_stack *st, struct rxp_pkt **pkts, const uint32_t *dst,
					 const uint32_t *nh, uint16_t n, uint32_t gen)
{
	const struct rxp_router *r = st->router;
	const struct rxp_adj *adjs = st->adj;
	struct rxp_txv *v = NULL;
	unsigned v_port = UINT_MAX;
	struct rxp_filter_run run = rxp_filter_run_start();
	struct rxp_filter_pass fp;
	struct rxp_acl_rows4 rows;
	uint64_t forwarded = 0;
	bool filtered;

	uint32_t ok_nh = UINT32_MAX;	/* the last next hop whose adjacency passed */

	if (n > RXP_ACL_BURST)
		return false;
	for (uint16_t i = 0; i < n; i++) {
		const struct rxp_pkt *pkt = pkts[i];
		const struct rxp_ip4_hdr *ip = rxp_pkt_cip4(pkt);
		const struct rxp_adj *adj = &adjs[nh[i] & (RXP_STACK_NH_MAX - 1)];

		if (nh[i] != ok_nh) {
			if (rxp_unlikely(nh[i] >= RXP_STACK_NH_MAX || adj->hlen != RXP_ETH_HLEN || !adj_ok(adj, gen)))
				return false;
			ok_nh = nh[i];
		}
		if (rxp_unlikely(!pkt_ok(r, adj, pkt, ip, ip->src, dst[i]) ||
				 !rxp_filter_key4(&rows, i, pkt, ip, adj->ifidx)))
			return false;
	}
	filtered = rxp_filter_classify4(st, &rows, n, &fp);
	for (uint16_t i = 0; i < n; i++) {
		struct rxp_pkt *pkt = pkts[i];
		struct rxp_ip4_hdr *ip = rxp_pkt_ip4(pkt);
		const struct rxp_adj *adj = &adjs[nh[i]];
		struct rxp_txv *txv;

		if (filtered && !rxp_filter_accept4(st, &fp, &run, pkt, i))
			continue;
		txv = rxp_fast_txv(st, adj, &v, &v_port);
		if (rxp_unlikely(!txv)) {
			route_slow(st, pkt, nh[i]);	/* its transmit flushes the full vector */
			continue;
		}
		ttl_dec(ip);
		rxp_fast_emit(st, pkt, ip, adj, txv);
		forwarded++;
	}
	if (filtered)
		rxp_filter_run_end(&fp, &run);
	st->stats.forwarded += forwarded;
	return true;
}

/*
 * The vector's fast path: forward_fast() with everything it reads about the
 * router held in locals. The packet writes (its header's fields, the MAC
 * copies) may alias any memory as far as the compiler knows; what sits in a
 * register it does not load again for every packet.
 *
 * The neighbour generation is read once per vector: an entry another worker
 * changes in the meantime is seen from the next vector on (the adjacency
 * holds a copy of the header, so a stale one is never unsafe). For the same
 * reason an adjacency checked once holds for the rest of the vector: a run
 * of packets to one next hop checks it once.
 */
void rxp_ip4_route_vector(struct rxp_stack *st, struct rxp_pkt **pkts, uint32_t *dst, uint16_t n)
{
	const struct rxp_router *r = st->router;
	const struct rxp_adj *adjs = st->adj;
	uint32_t gen = rxp_neigh_gen(&r->neigh);
	uint32_t nh[RXP_BURST_MAX];
	uint64_t forwarded = 0;
	struct rxp_txv *v = NULL;	/* the TX vector of port v_port */
	unsigned v_port = UINT_MAX;
	/*
	 * The next hops whose adjacency passed, by their low 4 bits (a multipath
	 * route's members alternate); at first each slot holds a value whose low
	 * bits are not its own, which no next hop matches.
	 */
	static const uint32_t none_ok[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0 };
	uint32_t ok_nh[16];
	uint64_t *mp_count = rxp_mp_counters(st);

	if (!n)
		return;
	memcpy(ok_nh, none_ok, sizeof(ok_nh));
	/* one lookup for the whole vector: the table's cache misses overlap */
	if (rxp_likely(r->n_vrfs <= 1))
		rxp_lpm4_lookup_bulk(r->fib4, dst, nh, n);
	else
		lookup_vrfs(r, pkts, dst, nh, n);
	/*
	 * The filter takes out what it drops, before anything is forwarded; it
	 * sees each packet's member of a multipath route's group. Without it the
	 * member is picked in the loop below, where the packet's header is at hand.
	 */
	if (rxp_unlikely(rxp_filter_on(st))) {
		if (rxp_mp_any(nh, n))
			rxp_mp_resolve4(st, pkts, nh, n);
		if (rxp_filter_stateless4(st) && route_filtered4(st, pkts, dst, nh, n, gen))
			return;
		n = rxp_filter_routed(st, pkts, dst, nh, n);
	}
	for (uint16_t i = 0; i < n; i++) {
		struct rxp_pkt *pkt = pkts[i];
		struct rxp_ip4_hdr *ip = rxp_pkt_ip4(pkt);
		uint32_t hop = nh[i];
		const struct rxp_adj *adj;
		struct rxp_txv *txv;
		uint32_t src = ip->src;

		if (rxp_unlikely(rxp_nh_is_group(hop)))
			hop = rxp_mp_member4(r, mp_count, hop, (const uint8_t *)ip, pkt->l3_len);
		adj = &adjs[hop & (RXP_STACK_NH_MAX - 1)];
		/* as forward_fast(), for an untagged header only */
		if (ok_nh[hop & 15] != hop) {
			if (rxp_unlikely(hop >= RXP_STACK_NH_MAX || adj->hlen != RXP_ETH_HLEN ||
					 !adj_ok(adj, gen))) {
				route_slow(st, pkt, hop);
				continue;
			}
			ok_nh[hop & 15] = hop;
		}
		if (rxp_unlikely(!pkt_ok(r, adj, pkt, ip, src, dst[i]))) {
			route_slow(st, pkt, hop);
			continue;
		}
		txv = rxp_fast_txv(st, adj, &v, &v_port);
		if (rxp_unlikely(!txv)) {
			route_slow(st, pkt, hop);	/* its transmit flushes the full vector */
			continue;
		}
		ttl_dec(ip);
		rxp_fast_emit(st, pkt, ip, adj, txv);
		forwarded++;
	}
	st->stats.forwarded += forwarded;
}

void rxp_ip4_route_nh(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t nh)
{
	nh = rxp_mp_pick(st, pkt, 4, nh);
	/* a source route leading on is forwarded: forward's (a fragment held for its first is let through there) */
	if (rxp_unlikely(rxp_filter_on(st)) && !rxp_filter_routed(st, &pkt, NULL, &nh, 1))
		return;
	route_nh(st, pkt, nh);
}
