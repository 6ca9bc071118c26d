/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include "filter.h"
#include "multipath.h"
#include "nat.h"
#include "nat_rewrite.h"
#include "rxpath/lpm4.h"
#include "rxpath/proto.h"
#include "rxpath/router.h"
#include "rxpath/stack.h"
#include "stage.h"

#define HAIRPIN_POOL 0x80000000u	/* pool ids of their own (with the rule's index): hairpins' sources */

static inline uint32_t addr_of(const uint8_t a[16])
{
	uint32_t v;

	memcpy(&v, a, 4);
	return v;
}

static inline void set_addr(uint8_t a[16], uint32_t v)
{
	memcpy(a, &v, 4);
}

/* TCP and UDP have ports; an ICMP query its identifier (in both of the tuple's ports). */
static inline bool has_ids(uint8_t proto)
{
	return proto == RXP_IPPROTO_TCP || proto == RXP_IPPROTO_UDP || proto == RXP_IPPROTO_ICMP;
}

/* The next hop of @pkt's rewritten destination (host order in *@dst when asked). */
static void reroute(struct rxp_stack *st, const struct rxp_pkt *pkt, uint32_t daddr, uint32_t *dst,
		    uint32_t *nh)
{
	uint32_t d = ntohl(daddr);

	if (rxp_lpm4_lookup(rxp_router_fib4_of(st->router, pkt->ifidx), d, nh))
		*nh = RXP_LPM_NO_ROUTE;
	*nh = rxp_mp_pick(st, pkt, 4, *nh);
	if (dst)
		*dst = d;
}

static inline uint8_t *ip_of(struct rxp_pkt *pkt)
{
	return rxp_pkt_data(pkt) + pkt->l3_off;
}

/*
 * A translated connection's packet at prerouting: its destination, when
 * this direction's has one to change (an ICMP error: the outer
 * destination and the quoted packet's source, which is where it went).
 * Returns 1 when rewritten, 0 when there was nothing to change, -1 dropped.
 */
static int pre_translate(struct rxp_stack *st, struct rxp_pkt *pkt, struct rxp_ct_pkt *cp,
			  const struct rxp_ct_nat4 *tg, uint32_t *dst, uint32_t *nh)
{
	bool err = cp->icmp_error, ids = has_ids(tg->proto);
	uint32_t cur = err ? addr_of(cp->inner.src) : addr_of(cp->t.dst);
	uint16_t cur_port = err ? cp->inner.sport : cp->t.dport;
	uint32_t to = tg->dst;
	int ret;

	if (cur == to && (!ids || cur_port == tg->dport))
		return 0;
	if (err) {
		struct rxp_nat_rw outer = { .dst = true, .daddr = to };
		struct rxp_nat_rw inner = { .src = true, .saddr = to, .sport = htons(tg->dport) };

		ret = rxp_nat_rewrite4_icmp_error(ip_of(pkt), pkt->l3_len, &outer, &inner);
		if (!ret) {
			set_addr(cp->inner.src, to);
			cp->inner.sport = tg->dport;
		}
	} else {
		struct rxp_nat_rw rw = { .dst = true, .daddr = to, .dport = htons(tg->dport) };

		ret = rxp_nat_rewrite4(ip_of(pkt), pkt->l3_len, &rw);
		if (!ret && ids) {
			cp->t.dport = tg->dport;
			if (tg->proto == RXP_IPPROTO_ICMP)
				cp->t.sport = tg->dport;
		}
	}
	if (ret) {
		rxp_drop(st, pkt, RXP_DROP_NAT_MALFORMED);
		return -1;
	}
	set_addr(cp->t.dst, to);
	reroute(st, pkt, to, dst, nh);
	return 1;
}

/* A port forward (dnat) or a static mapping's inbound side that takes new packet @cp; -1: none. */
static int dnat_rule(const struct rxp_nat *nat, const struct rxp_ct_pkt *cp)
{
	uint32_t d = ntohl(addr_of(cp->t.dst));

	for (uint32_t i = 0; i < nat->n_rules; i++) {
		const struct rxp_nat_rule *r = &nat->rules[i];

		if (r->dst != d)
			continue;
		if (r->kind == RXP_NAT_STATIC)
			return (int)i;
		if (r->kind == RXP_NAT_DNAT && r->proto == cp->t.proto && !cp->frag_nth &&
		    cp->t.dport >= r->dport_lo && cp->t.dport <= r->dport_hi)
			return (int)i;
	}
	return -1;
}

/* An ICMP query to the outside address is the router's to answer: a mapping's identifier takes only answers. */
static bool icmp_request(const struct rxp_ct_pkt *cp)
{
	uint8_t t = cp->icmp_type;

	return cp->t.proto == RXP_IPPROTO_ICMP && (t == 8 || t == 13 || t == 15 || t == 17);
}

/* The source NAT rule whose pool holds @addr (host order), or -1. */
static int pool_rule(const struct rxp_nat *nat, uint32_t addr)
{
	for (uint32_t i = 0; i < nat->n_rules; i++) {
		const struct rxp_nat_rule *r = &nat->rules[i];

		if ((r->kind == RXP_NAT_MASQUERADE || r->kind == RXP_NAT_SNAT) &&
		    addr >= r->pool.addr_lo && addr <= r->pool.addr_hi)
			return (int)i;
	}
	return -1;
}

int rxp_nat_pre(struct rxp_stack *st, struct rxp_pkt *pkt, struct rxp_ct_pkt *cp, struct rxp_ct_ref *ref,
		 uint32_t *dst, uint32_t *nh, struct rxp_nat_pending *pend)
{
	const struct rxp_nat *nat = st->filter->nat;
	struct rxp_ct_nat4 tg;
	uint32_t d;
	int i;

	pend->dnat = -1;
	pend->map = -1;
	pend->hairpin = -1;
	pend->tg_ok = false;
	if (cp->t.family != 4)
		return 0;
	pend->orig_dst = addr_of(cp->t.dst);	/* a datagram's fragments are found by it */
	pend->orig_dport = cp->t.dport;
	if (ref->entry != UINT32_MAX) {
		if (!rxp_ct_nat_target(st->ct, ref, &pend->tg))
			return 0;
		pend->tg_ok = true;	/* for postrouting */
		return pre_translate(st, pkt, cp, &pend->tg, dst, nh);
	}
	if (ref->state != RXP_ACL_CT_NEW)
		return 0;
	i = dnat_rule(nat, cp);
	if (i >= 0) {
		const struct rxp_nat_rule *r = &nat->rules[i];

		memset(&tg, 0, sizeof(tg));
		tg.proto = cp->t.proto;
		tg.dst = htonl(r->kind == RXP_NAT_STATIC ? r->src : r->to_addr);
		tg.dport = r->kind == RXP_NAT_DNAT && r->to_port ?
			   (uint16_t)(r->to_port + (cp->t.dport - r->dport_lo)) : cp->t.dport;
		if (pre_translate(st, pkt, cp, &tg, dst, nh) < 0)
			return -1;
		pend->dnat = i;
		return 1;
	}
	d = ntohl(pend->orig_dst);
	i = pool_rule(nat, d);
	if (!has_ids(cp->t.proto) || cp->frag_nth || i < 0 || icmp_request(cp))
		return 0;
	/*
	 * Unsolicited, to an outside address: a mapping takes it as filtering
	 * allows (RFC 4787 5), and from inside always (hairpinning, REQ-9: it
	 * comes back to the mapping's host with the sender's own mapping as
	 * its source).
	 */
	{
		uint32_t m = rxp_nat_map_find_out(nat->map, cp->t.proto, d, cp->t.dport);
		bool hairpin = pkt->ifidx != nat->rules[i].ifidx;
		struct rxp_nat_mapping mp;

		if (m != RXP_NAT_MAP_NONE &&
		    (hairpin || nat->filtering == RXP_NAT_EIF ||
		     (nat->filtering == RXP_NAT_ADF && rxp_nat_map_permits(nat->map, m, ntohl(addr_of(cp->t.src))))) &&
		    rxp_nat_map_read(nat->map, m, &mp)) {
			memset(&tg, 0, sizeof(tg));
			tg.proto = cp->t.proto;
			tg.dst = htonl(mp.in_addr);
			tg.dport = mp.in_port;
			if (pre_translate(st, pkt, cp, &tg, dst, nh) < 0)
				return -1;
			pend->map = (int32_t)m;
			pend->hairpin = hairpin ? i : -1;
			return 1;
		}
		/* the router's own address (masquerade) with no mapping of the port: its own to answer */
		if (m == RXP_NAT_MAP_NONE && rxp_router_is_local4(st->router, pend->orig_dst))
			return 0;
	}
	rxp_drop(st, pkt, RXP_DROP_NAT_NO_MAPPING);
	return -1;
}

/* The source NAT rule for a new connection from @src (host order) leaving by @out_if; -1: none. */
static int snat_rule(const struct rxp_nat *nat, uint32_t src, int out_if)
{
	for (uint32_t i = 0; i < nat->n_rules; i++) {
		const struct rxp_nat_rule *r = &nat->rules[i];

		if (r->kind == RXP_NAT_STATIC && r->src == src)
			return (int)i;
		if ((r->kind == RXP_NAT_MASQUERADE || r->kind == RXP_NAT_SNAT) && out_if >= 0 &&
		    r->ifidx == out_if && (src & r->src_mask) == r->src)
			return (int)i;
	}
	return -1;
}

struct exclude_ctx {
	const struct rxp_nat *nat;
};

/* A port forward's outside port is never handed out as a mapping's. */
static bool excluded(void *ctx, uint8_t proto, uint32_t out_addr, uint16_t out_port)
{
	const struct rxp_nat *nat = ((const struct exclude_ctx *)ctx)->nat;

	for (uint32_t i = 0; i < nat->n_rules; i++) {
		const struct rxp_nat_rule *r = &nat->rules[i];

		if (r->kind == RXP_NAT_DNAT && r->dst == out_addr && r->proto == proto &&
		    out_port >= r->dport_lo && out_port <= r->dport_hi)
			return true;
	}
	return false;
}

/* The source NAT of a hairpinned port forward: the outside address the inside client aimed at. */
static const struct rxp_nat_pool *hairpin_pool(const struct rxp_nat *nat, const struct rxp_nat_rule *fwd,
					       struct rxp_nat_pool *own)
{
	for (uint32_t i = 0; i < nat->n_rules; i++) {
		const struct rxp_nat_rule *r = &nat->rules[i];

		if ((r->kind == RXP_NAT_MASQUERADE || r->kind == RXP_NAT_SNAT) && r->ifidx == fwd->ifidx &&
		    fwd->dst >= r->pool.addr_lo && fwd->dst <= r->pool.addr_hi)
			return &r->pool;
	}
	memset(own, 0, sizeof(*own));
	own->addr_lo = own->addr_hi = fwd->dst;
	own->default_ports = true;
	own->id = HAIRPIN_POOL | (uint32_t)(fwd - nat->rules);
	return own;
}

/*
 * A hairpinned connection's source: the sender's own mapping of the pool
 * it aimed at, as it would leave by it (RFC 4787 REQ-9a: external source
 * address and port); when that is the very mapping it sent to (a host
 * reaching its own mapping, as STUN's hairpin test does), a mapping of a
 * pool of its own, since a connection's two directions cannot have one key.
 * Returns 0 with @b's source and map2, or -EADDRNOTAVAIL / -ENOSPC.
 */
static int hairpin_source(const struct rxp_nat *nat, const struct rxp_ct_pkt *cp,
			  const struct rxp_nat_pending *pend, struct rxp_ct_nat_bind *b)
{
	const struct rxp_nat_rule *r = &nat->rules[pend->hairpin];
	struct rxp_nat_pool own = r->pool;
	struct exclude_ctx x = { nat };
	struct rxp_nat_mapping mp;
	uint32_t src = ntohl(addr_of(cp->t.src));
	int err = 0;

	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			own.id = HAIRPIN_POOL | (uint32_t)pend->hairpin;
		b->map2 = rxp_nat_map_get(nat->map, &own, cp->t.proto, src, cp->t.sport, excluded, &x, &err);
		if (b->map2 == RXP_NAT_MAP_NONE)
			return err == -ENOSPC ? -ENOSPC : -EADDRNOTAVAIL;
		if (!rxp_nat_map_read(nat->map, b->map2, &mp) ||
		    (htonl(mp.out_addr) == pend->orig_dst && mp.out_port == pend->orig_dport)) {
			rxp_nat_map_put(nat->map, b->map2);
			b->map2 = RXP_NAT_MAP_NONE;
			continue;
		}
		b->src = htonl(mp.out_addr);
		b->sport = mp.out_port;
		b->rule = (uint32_t)pend->hairpin;
		return 0;
	}
	return -EADDRNOTAVAIL;
}

static void count_hit(const struct rxp_nat_rule *r)
{
	if (r->hits)
		__atomic_fetch_add(r->hits, 1, __ATOMIC_RELAXED);
}

int rxp_nat_confirm(struct rxp_stack *st, struct rxp_pkt *pkt, const struct rxp_ct_pkt *cp,
		    struct rxp_ct_ref *ref, uint32_t nh, const struct rxp_nat_pending *pend)
{
	const struct rxp_nat *nat = st->filter->nat;
	const struct rxp_router *r = st->router;
	const struct rxp_nat_rule *fwd = pend->dnat >= 0 ? &nat->rules[pend->dnat] : NULL;
	const struct rxp_nat_rule *sn = NULL;
	const struct rxp_nat_pool *pool = NULL;
	struct rxp_nat_pool own;
	struct rxp_ct_nat_bind b;
	struct rxp_ct_pkt orig;
	/* what the router takes itself (input) leaves by no interface: no source NAT */
	int out_if = nh != RXP_NH_LOCAL && nh < RXP_NH_MAX ? (int)r->nh[nh].ifidx : -1;
	uint32_t src = ntohl(addr_of(cp->t.src));
	int ret, i;

	if (cp->t.family != 4)
		return rxp_ct_confirm(st->ct, st->worker, cp, st->now_ns, ref);
	b.src = addr_of(cp->t.src);
	b.dst = addr_of(cp->t.dst);
	b.sport = cp->t.sport;
	b.dport = cp->t.dport;
	b.map = b.map2 = RXP_NAT_MAP_NONE;
	b.remote = 0;
	b.rule = fwd ? (uint32_t)pend->dnat : UINT32_MAX;
	if (pend->map >= 0) {
		/* in by a mapping (as filtering allows, or hairpinned): the connection holds it too */
		rxp_nat_map_hold(nat->map, (uint32_t)pend->map);
		b.map = (uint32_t)pend->map;
		if (pend->hairpin >= 0) {
			ret = hairpin_source(nat, cp, pend, &b);
			if (ret) {
				rxp_nat_map_put(nat->map, b.map);
				return ret;
			}
		}
	} else if (fwd && fwd->kind == RXP_NAT_DNAT && pkt->ifidx != fwd->ifidx) {
		/* hairpin (RFC 4787 REQ-9): the inside server sees the outside address as the source */
		pool = hairpin_pool(nat, fwd, &own);
	} else if (!fwd || fwd->kind != RXP_NAT_STATIC) {
		i = snat_rule(nat, src, out_if);
		if (i >= 0) {
			sn = &nat->rules[i];
			if (sn->kind == RXP_NAT_STATIC)
				b.src = htonl(sn->dst);
			else
				pool = &sn->pool;
			b.rule = (uint32_t)i;
		}
	}
	if (pool && has_ids(cp->t.proto) && !cp->frag_nth) {
		struct exclude_ctx x = { nat };
		struct rxp_nat_mapping mp;
		int err = 0;

		b.map = rxp_nat_map_get(nat->map, pool, cp->t.proto, src, cp->t.sport, excluded, &x, &err);
		if (b.map == RXP_NAT_MAP_NONE || !rxp_nat_map_read(nat->map, b.map, &mp)) {
			if (b.map != RXP_NAT_MAP_NONE)
				rxp_nat_map_put(nat->map, b.map);
			return err == -ENOSPC ? -ENOSPC : -EADDRNOTAVAIL;
		}
		b.src = htonl(mp.out_addr);
		b.sport = mp.out_port;
		/* address-dependent filtering lets in what comes from where the mapping's connections go */
		if (nat->filtering == RXP_NAT_ADF) {
			b.remote = ntohl(b.dst);
			rxp_nat_map_permit(nat->map, b.map, b.remote, +1);
		}
		if (cp->t.proto == RXP_IPPROTO_ICMP)
			b.dport = mp.out_port;	/* a query's identifier is both of its tuple's ports */
	} else if (pool) {
		b.src = htonl(pool->addr_lo);	/* no ports to map: the address alone */
	}
	if (b.rule == UINT32_MAX && b.map == RXP_NAT_MAP_NONE && !fwd)
		return rxp_ct_confirm(st->ct, st->worker, cp, st->now_ns, ref);
	/* the entry's original key is the packet as it came, before prerouting's translation */
	if (fwd || pend->map >= 0) {
		orig = *cp;
		set_addr(orig.t.dst, pend->orig_dst);
		orig.t.dport = pend->orig_dport;
		cp = &orig;
	}
	ret = rxp_ct_confirm_nat(st->ct, st->worker, cp, st->now_ns, ref, &b);
	if (ret && b.map != RXP_NAT_MAP_NONE)
		rxp_nat_release(nat->map, b.map, b.remote);	/* not taken over */
	if (ret && b.map2 != RXP_NAT_MAP_NONE)
		rxp_nat_map_put(nat->map, b.map2);
	if (ret == -EADDRINUSE)
		return -EADDRNOTAVAIL;
	if (ret < 0)
		return ret;
	if (!ret) {
		if (fwd)
			count_hit(fwd);
		if (sn)
			count_hit(sn);
	}
	return 0;
}

bool rxp_nat_post(struct rxp_stack *st, struct rxp_pkt *pkt, const struct rxp_ct_pkt *cp,
		  const struct rxp_ct_ref *ref, const struct rxp_nat_pending *pend)
{
	struct rxp_ct_nat4 tg;
	bool err = cp->icmp_error;
	uint32_t cur, to;
	uint16_t cur_port;
	int ret;

	if (cp->t.family != 4 || ref->entry == UINT32_MAX)
		return true;
	if (pend && pend->tg_ok)
		tg = pend->tg;	/* prerouting read it */
	else if (!rxp_ct_nat_target(st->ct, ref, &tg))
		return true;
	cur = err ? addr_of(cp->inner.dst) : addr_of(cp->t.src);
	cur_port = err ? cp->inner.dport : cp->t.sport;
	to = tg.src;
	if (cur == to && (!has_ids(tg.proto) || cur_port == tg.sport))
		return true;
	if (err) {
		struct rxp_nat_rw outer = { .src = true, .saddr = to };
		struct rxp_nat_rw inner = { .dst = true, .daddr = to, .dport = htons(tg.sport) };

		ret = rxp_nat_rewrite4_icmp_error(ip_of(pkt), pkt->l3_len, &outer, &inner);
	} else {
		struct rxp_nat_rw rw = { .src = true, .saddr = to, .sport = htons(tg.sport) };

		ret = rxp_nat_rewrite4(ip_of(pkt), pkt->l3_len, &rw);
	}
	if (ret) {
		rxp_drop(st, pkt, RXP_DROP_NAT_MALFORMED);
		return false;
	}
	pkt->flags |= RXP_PKT_F_SNAT;	/* its source may now be the router's own: translated, not forged */
	return true;
}

void rxp_nat_release(void *ctx, uint32_t map, uint32_t remote)
{
	if (remote)
		rxp_nat_map_permit(ctx, map, remote, -1);
	rxp_nat_map_put(ctx, map);
}

bool rxp_nat_owns4(const struct rxp_stack *st, int ifidx, uint32_t addr)
{
	const struct rxp_nat *nat = st->filter->nat;
	const struct rxp_l3if *ifp = &st->router->ifs[ifidx];
	uint32_t a = ntohl(addr);

	if (!nat || rxp_l3if_subnet4(ifp, addr) < 0)
		return false;
	for (uint32_t i = 0; i < nat->n_rules; i++) {
		const struct rxp_nat_rule *r = &nat->rules[i];

		if (r->kind == RXP_NAT_SNAT && r->ifidx == ifidx && a >= r->pool.addr_lo && a <= r->pool.addr_hi)
			return true;
		if ((r->kind == RXP_NAT_STATIC || r->kind == RXP_NAT_DNAT) && r->dst == a &&
		    (r->kind == RXP_NAT_STATIC || r->ifidx == ifidx))
			return true;
	}
	return false;
}
