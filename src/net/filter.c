/* SPDX-License-Identifier: MIT */
/*
 * The filter's stage, nftables' semantics: a routed packet goes through
 * input (to the router) or forward (through it), a packet the router
 * makes through output; the first rule that matches decides, else the
 * chain's policy. With tracking on, each packet's connection state is
 * found first (a whole vector at once), and a new connection a chain
 * lets through is inserted then (conntrack's confirm).
 */
#include <errno.h>
#include <string.h>
#include "capture.h"
#include "filter.h"
#include "icmp.h"
#include "ip4_route.h"
#include "ip6_route.h"
#include "local.h"
#include "nat.h"
#include "nat_rewrite.h"

/* Which chain a routed packet with FIB result @nh goes through, or -1: none (no route, a reject route). */
static rxp_always_inline int chain_of(const struct rxp_router *r, uint32_t nh)
{
	if (nh == RXP_NH_LOCAL)
		return RXP_FILTER_INPUT;
	if (nh >= RXP_NH_MAX || rxp_nh_kind_rejects(r->nh[nh].kind))
		return -1;
	return RXP_FILTER_FORWARD;
}

/*
 * A packet to forward whose hop limit runs out, or that does not fit its
 * link and may not be fragmented, gets its error before the forward chain
 * (as Linux's ip_forward() and ip6_forward() do): neither the chain nor
 * tracking sees it; its error goes through output.
 */
static bool dies_before_forward(const struct rxp_router *r, const struct rxp_pkt *pkt, uint32_t nh)
{
	uint32_t mtu = r->ifs[r->nh[nh].ifidx].mtu;
	const struct rxp_ip4_hdr *ip;

	if (pkt->flags & RXP_PKT_F_IP6)
		return rxp_pkt_cip6(pkt)->hop_limit <= 1 || pkt->l3_len > mtu;
	ip = rxp_pkt_cip4(pkt);
	/*
	 * Nor is a broadcast or multicast forward's: the link's own are for the
	 * kernel behind a host path (input, link_scoped4), the rest are dropped
	 */
	return ip->ttl <= 1 || (pkt->l3_len > mtu && (ip->frag_off & htons(RXP_IP4_DF))) ||
	       (ntohl(ip->dst) >> 28) >= 0xe ||
	       (r->nh[nh].kind == RXP_NH_KIND_CONNECTED && rxp_router_is_bcast4(r, ip->dst));
}

/* The packet's key, from what tracking parsed (or, for what did not parse, its addresses only). */
static void key_of(struct rxp_acl_key *k, const struct rxp_ct_pkt *cp, int in_if, int out_if)
{
	memcpy(k->src, cp->t.src, 16);
	memcpy(k->dst, cp->t.dst, 16);
	k->family = cp->t.family;
	k->proto = cp->t.proto;
	if (cp->t.proto == RXP_IPPROTO_ICMP || cp->t.proto == RXP_IPPROTO_ICMP6) {
		k->sport = cp->icmp_type;
		k->dport = cp->icmp_code;
	} else {
		k->sport = cp->t.sport;
		k->dport = cp->t.dport;
	}
	k->in_if = (uint8_t)(in_if >= 0 ? in_if : 63);
	k->out_if = (uint8_t)(out_if >= 0 ? out_if : 63);
	k->src_sets = k->dst_sets = 0;
}

/*
 * The header fields of an IPv4 key (addresses, protocol, ports, or ICMP's
 * type and code) from the header @ip of a packet without options whose
 * transport header is there; the rest of @k zeroed.
 */
static rxp_always_inline void key4_of_header(struct rxp_acl_key *k, const struct rxp_ip4_hdr *ip)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->src, &ip->src, 4);
	memcpy(k->dst, &ip->dst, 4);
	k->family = 4;
	k->proto = ip->proto;
	rxp_filter_ports4((const uint8_t *)(ip + 1), ip->proto, &k->sport, &k->dport);
}

/*
 * The key of an IPv4 packet without options that is not a fragment, read
 * straight from its headers when nothing asks for tracking: what
 * rxp_ct_parse() gives the classifier, for a fraction of its work, and
 * the few fields of @cp the verdict reads (a reject's). Returns false for
 * anything else, which takes the full parse.
 */
static rxp_always_inline bool key_fast4(struct rxp_acl_key *k, struct rxp_ct_pkt *cp,
					const struct rxp_pkt *pkt, int in_if, int out_if)
{
	const struct rxp_ip4_hdr *ip = rxp_pkt_cip4(pkt);
	const uint8_t *l4 = (const uint8_t *)(ip + 1);
	uint8_t proto = ip->proto;

	if ((pkt->flags & RXP_PKT_F_IP6) || ip->ver_ihl != RXP_IP4_VER_IHL_NO_OPTS ||
	    (ip->frag_off & htons(RXP_IP4_MF | RXP_IP4_OFFMASK)) ||
	    pkt->l3_len < RXP_IP4_HLEN + (proto == RXP_IPPROTO_TCP ? RXP_TCP_HLEN : 8u))
		return false;
	key4_of_header(k, ip);
	k->in_if = (uint8_t)(in_if >= 0 ? in_if : 63);
	k->out_if = (uint8_t)(out_if >= 0 ? out_if : 63);
	k->ct_state = RXP_ACL_CT_UNTRACKED;
	cp->t.family = 4;
	cp->t.proto = proto;
	cp->frag = cp->frag_nth = false;
	cp->l4_off = RXP_IP4_HLEN;
	cp->tcp_flags = proto == RXP_IPPROTO_TCP ? l4[13] : 0;
	cp->icmp_type = proto == RXP_IPPROTO_ICMP ? l4[0] : 0;
	return true;
}

/* The addresses and protocol of a packet whose transport header did not parse. */
static void tuple_of_header(struct rxp_ct_pkt *cp, const struct rxp_pkt *pkt, uint8_t family)
{
	memset(cp, 0, sizeof(*cp));
	if (family == 6) {
		const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(pkt);

		cp->t.family = 6;
		memcpy(cp->t.src, ip->src, 16);
		memcpy(cp->t.dst, ip->dst, 16);
		cp->t.proto = ip->next_hdr;
	} else {
		const struct rxp_ip4_hdr *ip = rxp_pkt_cip4(pkt);

		cp->t.family = 4;
		memcpy(cp->t.src, &ip->src, 4);
		memcpy(cp->t.dst, &ip->dst, 4);
		cp->t.proto = ip->proto;
	}
	cp->bytes = pkt->l3_len;
}

/* Which of the chain's sets hold the key's addresses. */
static void sets_of(const struct rxp_filter *f, const struct rxp_filter_chain *c, struct rxp_acl_key *k)
{
	for (uint64_t m = c->src_sets | c->dst_sets; m; m &= m - 1) {
		unsigned id = (unsigned)__builtin_ctzll(m);
		const struct rxp_pset *s = f->sets[id];

		if (!s)
			continue;
		if ((c->src_sets >> id & 1) &&
		    (k->family == 4 ? rxp_pset_has4(s, rxp_load_be32(k->src)) : rxp_pset_has6(s, k->src)))
			k->src_sets |= 1ull << id;
		if ((c->dst_sets >> id & 1) &&
		    (k->family == 4 ? rxp_pset_has4(s, rxp_load_be32(k->dst)) : rxp_pset_has6(s, k->dst)))
			k->dst_sets |= 1ull << id;
	}
}

/* Neighbor Discovery and MLD, which the router needs: input filters them only by rules that name them. */
static bool is_nd(const struct rxp_ct_pkt *cp)
{
	return cp->t.proto == RXP_IPPROTO_ICMP6 &&
	       ((cp->icmp_type >= 130 && cp->icmp_type <= 137) || cp->icmp_type == 143);
}

/* Answers a rejected packet: a TCP reset, else ICMP administratively prohibited. */
static void reject(struct rxp_stack *st, struct rxp_pkt *pkt, const struct rxp_ct_pkt *cp, int chain)
{
	bool v6 = pkt->flags & RXP_PKT_F_IP6;

	if (cp->t.proto == RXP_IPPROTO_TCP && !cp->frag_nth && cp->l4_off &&
	    pkt->l3_len >= cp->l4_off + RXP_TCP_HLEN) {
		if (!(cp->tcp_flags & RXP_TCP_F_RST)) {
			pkt->l4_off = (uint16_t)(pkt->l3_off + cp->l4_off);
			rxp_tcp_reset(st, pkt, pkt->l3_len - cp->l4_off);
		}
		return;
	}
	if (chain == RXP_FILTER_INPUT) {
		if (v6)
			rxp_icmp6_error_local(st, pkt, RXP_ICMP6_DEST_UNREACH, RXP_ICMP6_UNREACH_ADMIN, 0);
		else
			rxp_icmp4_error_local(st, pkt, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_ADMIN);
	} else if (v6) {
		rxp_icmp6_error(st, pkt, RXP_ICMP6_DEST_UNREACH, RXP_ICMP6_UNREACH_ADMIN, 0);
	} else {
		rxp_icmp4_error(st, pkt, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_ADMIN, 0);
	}
}

/* Counts @pkt against rule @rule of @chain (n_rules: the policy) in this worker. */
static inline void count_rule(struct rxp_stack *st, int chain, uint32_t rule, const struct rxp_pkt *pkt)
{
	if (rule < st->rule_count_n[chain]) {
		st->rule_count[chain][rule].packets++;
		st->rule_count[chain][rule].bytes += pkt->l3_len;
	}
}

/* A packet the chain does not let through (@v: drop or reject), or that finds no room to be tracked. */
static rxp_noinline bool refuse(struct rxp_stack *st, struct rxp_pkt *pkt, int chain, uint32_t rule, uint8_t v,
				const struct rxp_ct_pkt *cp, const struct rxp_ct_ref *ref, enum rxp_drop_reason *why)
{
	const struct rxp_filter_chain *c = &st->filter->chain[chain];

	pkt->user[1] = RXP_CAPTURE_RULE(chain, rule == RXP_ACL_NO_MATCH ? 0 : rule + 1);
	if (v == RXP_FILTER_ACCEPT) {
		*why = RXP_DROP_CT_TABLE_FULL;
		pkt->user[1] = 0;
	} else if (v == RXP_FILTER_REJECT) {
		reject(st, pkt, cp, chain);
		*why = RXP_DROP_FILTER_REJECT;
	} else {
		/* invalid, and dropped for it: by the policy, or by a rule about states */
		*why = ref && ref->state == RXP_ACL_CT_INVALID &&
		       (rule == RXP_ACL_NO_MATCH || (c->flags[rule] & RXP_FILTER_RULE_STATE)) ?
		       RXP_DROP_CT_INVALID : RXP_DROP_FILTER_DROP;
	}
	rxp_drop(st, pkt, *why);
	return false;
}

/*
 * Applies what the chain decided for one packet: true when it goes on.
 * @rule: the rule that matched, or RXP_ACL_NO_MATCH (the policy). A new
 * connection let through is inserted (conntrack's confirm).
 */
static rxp_always_inline bool decide(struct rxp_stack *st, struct rxp_pkt *pkt, int chain, uint32_t rule,
				     const struct rxp_ct_pkt *cp, struct rxp_ct_ref *ref, uint32_t nh,
				     const struct rxp_nat_pending *pend, enum rxp_drop_reason *why)
{
	const struct rxp_filter_chain *c = &st->filter->chain[chain];
	uint8_t v = rule == RXP_ACL_NO_MATCH ? c->policy : c->verdict[rule];
	int ret;

	count_rule(st, chain, rule == RXP_ACL_NO_MATCH ? c->n_rules : rule, pkt);
	if (rxp_likely(v == RXP_FILTER_ACCEPT)) {
		if (!ref || ref->state != RXP_ACL_CT_NEW || ref->entry != UINT32_MAX)
			return true;
		/* a new connection let through: inserted, translated when NAT says so */
		ret = pend ? rxp_nat_confirm(st, pkt, cp, ref, nh, pend) :
			     rxp_ct_confirm(st->ct, st->worker, cp, st->now_ns, ref);
		if (rxp_likely(ret != -ENOSPC && ret != -EADDRNOTAVAIL))
			return true;
		if (ret == -EADDRNOTAVAIL) {
			*why = RXP_DROP_NAT_NO_PORTS;
			rxp_drop(st, pkt, *why);
			return false;
		}
	}
	return refuse(st, pkt, chain, rule, v, cp, ref, why);
}

/* ---- fragments: a datagram decided by its first ---- */

static bool frag_is(const struct rxp_filter_frag *d, const struct rxp_ct_pkt *cp)
{
	unsigned alen = cp->t.family == 4 ? 4 : 16;

	/* IPv4's key has the protocol (RFC 791); IPv6's is the addresses and the identification */
	return d->deadline_ns && d->id == cp->frag_id && d->family == cp->t.family &&
	       (cp->t.family == 6 || d->proto == cp->t.proto) && !memcmp(d->src, cp->t.src, alen) &&
	       !memcmp(d->dst, cp->t.dst, alen);
}

static struct rxp_filter_frag *frag_find(struct rxp_stack *st, const struct rxp_ct_pkt *cp)
{
	for (unsigned i = 0; i < RXP_FILTER_FRAG_DATAGRAMS; i++)
		if (frag_is(&st->frags->d[i], cp))
			return &st->frags->d[i];
	return NULL;
}

/* A slot for @cp's datagram: a free one, else the oldest decided one. NULL: all wait for a first fragment. */
static struct rxp_filter_frag *frag_new(struct rxp_stack *st, const struct rxp_ct_pkt *cp)
{
	struct rxp_filter_frag *best = NULL;

	for (unsigned i = 0; i < RXP_FILTER_FRAG_DATAGRAMS; i++) {
		struct rxp_filter_frag *d = &st->frags->d[i];

		if (!d->deadline_ns) {
			best = d;
			break;
		}
		if (d->decided && (!best || d->deadline_ns < best->deadline_ns))
			best = d;
	}
	if (!best)
		return NULL;
	memset(best, 0, sizeof(*best));
	best->deadline_ns = st->now_ns + RXP_FILTER_FRAG_NS;
	best->id = cp->frag_id;
	best->family = cp->t.family;
	best->proto = cp->t.proto;
	memcpy(best->src, cp->t.src, 16);
	memcpy(best->dst, cp->t.dst, 16);
	return best;
}

/* A later fragment of a translated datagram: its first's addresses (only they: it has no ports). */
static bool frag_translate(struct rxp_stack *st, struct rxp_pkt *pkt, const struct rxp_filter_frag *d)
{
	struct rxp_nat_rw rw = { .src = true, .dst = true, .saddr = d->nat_src, .daddr = d->nat_dst };

	if (rxp_nat_rewrite4(rxp_pkt_data(pkt) + pkt->l3_off, pkt->l3_len, &rw)) {
		rxp_drop(st, pkt, RXP_DROP_NAT_MALFORMED);
		return false;
	}
	pkt->flags |= RXP_PKT_F_SNAT;
	return true;
}

/* Sends on a held fragment whose datagram's first one went through. */
static void frag_send(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t nh)
{
	if (pkt->flags & RXP_PKT_F_IP6) {
		pkt->flags |= RXP_PKT_F_FILTERED;
		rxp_ip6_route(st, pkt);
	} else {
		rxp_ip4_route_nh(st, pkt, nh);
	}
}

/*
 * The first fragment of @cp's datagram was decided (@go; else dropped under
 * @why, rule @mark): the held ones follow it, later ones will.
 */
static void frag_decided(struct rxp_stack *st, const struct rxp_ct_pkt *cp, bool go,
			 enum rxp_drop_reason why, uint32_t mark, const struct rxp_filter_frag *nat)
{
	struct rxp_filter_frag *d = frag_find(st, cp);

	if (!d)
		d = frag_new(st, cp);
	if (!d)
		return;	/* every slot waits: its later fragments are held as if it had not come */
	d->decided = go ? 1 : 2;
	d->drop_reason = (uint8_t)why;
	d->rule_mark = mark;
	d->nat = go && nat;
	if (d->nat) {
		d->nat_src = nat->nat_src;
		d->nat_dst = nat->nat_dst;
		d->nat_nh = nat->nat_nh;
	}
	for (unsigned k = 0; k < d->n_held; k++) {
		if (go) {
			/* (back through the filter: frag_later() translates it, as a later one) */
			frag_send(st, d->held[k], d->held_nh[k]);
		} else {
			d->held[k]->user[1] = mark;
			rxp_drop(st, d->held[k], why);
		}
	}
	d->n_held = 0;
}

/*
 * A fragment after the first: as its datagram was decided, or held until
 * that is. Returns true when it goes on now (kept in the vector).
 */
static bool frag_later(struct rxp_stack *st, struct rxp_pkt *pkt, const struct rxp_ct_pkt *cp, uint32_t *nh,
		       uint32_t *dst)
{
	struct rxp_filter_frag *d = frag_find(st, cp);

	if (d && d->decided == 1) {
		if (!d->nat)
			return true;
		if (!frag_translate(st, pkt, d))
			return false;
		*nh = d->nat_nh;
		if (dst)
			*dst = ntohl(d->nat_dst);
		return true;
	}
	if (d && d->decided == 2) {
		pkt->user[1] = d->rule_mark;
		rxp_drop(st, pkt, (enum rxp_drop_reason)d->drop_reason);
		return false;
	}
	if (!d)
		d = frag_new(st, cp);
	if (!d || d->n_held == RXP_FILTER_FRAG_HELD) {
		rxp_drop(st, pkt, RXP_DROP_FILTER_FRAG);
		return false;
	}
	d->held[d->n_held] = pkt;
	d->held_nh[d->n_held++] = *nh;
	return false;
}

/*
 * A first fragment decided: its datagram is found by the addresses it came
 * with, and when NAT translated it the later ones take its addresses and
 * next hop.
 */
static rxp_noinline void frag_first(struct rxp_stack *st, const struct rxp_pkt *pkt, const struct rxp_ct_pkt *cp,
				    bool go, enum rxp_drop_reason why, const struct rxp_nat_pending *pend,
				    uint32_t nh, uint32_t mark)
{
	const struct rxp_ip4_hdr *ip = rxp_pkt_cip4(pkt);
	struct rxp_filter_frag nat;
	struct rxp_ct_pkt key;
	uint32_t src;

	if (!pend || cp->t.family != 4) {
		frag_decided(st, cp, go, why, mark, NULL);
		return;
	}
	key = *cp;
	memcpy(key.t.dst, &pend->orig_dst, 4);
	memcpy(&src, cp->t.src, 4);
	nat.nat_src = ip->src;
	nat.nat_dst = ip->dst;
	nat.nat_nh = nh;
	frag_decided(st, &key, go, why, mark, go && (ip->src != src || ip->dst != pend->orig_dst) ? &nat : NULL);
}

/* Datagrams past their time: what they hold is dropped. */
static void frags_expire(struct rxp_stack *st)
{
	for (unsigned i = 0; i < RXP_FILTER_FRAG_DATAGRAMS; i++) {
		struct rxp_filter_frag *d = &st->frags->d[i];

		if (!d->deadline_ns || d->deadline_ns > st->now_ns)
			continue;
		for (unsigned k = 0; k < d->n_held; k++)
			rxp_drop(st, d->held[k], RXP_DROP_FILTER_FRAG);
		memset(d, 0, sizeof(*d));
	}
}

uint64_t rxp_filter_frags_end(struct rxp_stack *st, enum rxp_drop_reason reason)
{
	uint64_t n = 0;

	if (!st->frags)
		return 0;
	for (unsigned i = 0; i < RXP_FILTER_FRAG_DATAGRAMS; i++) {
		struct rxp_filter_frag *d = &st->frags->d[i];

		for (unsigned k = 0; k < d->n_held; k++, n++)
			rxp_drop(st, d->held[k], reason);
		memset(d, 0, sizeof(*d));
	}
	return n;
}

#define CHAIN_NONE -1		/* no chain asks: it goes on */
#define CHAIN_CONSUMED -2	/* a fragment held or dropped for its datagram */


/*
 * NAT's prerouting over the tracked packets of a chunk: destinations
 * translated before the chain is chosen, so a packet's chain, next hop and
 * the fields the rules see are the translated ones' (as nftables'
 * prerouting dnat runs before the route and the forward hook). Returns
 * @only, or -2 when a packet's chain changed.
 */
static rxp_noinline int nat_prerouting(struct rxp_stack *st, struct rxp_pkt **pkts, uint32_t *dst, uint32_t *nh,
				       struct rxp_ct_pkt *cp, struct rxp_acl_key *keys, struct rxp_ct_ref *refs,
				       struct rxp_nat_pending *pend, int8_t *chain_at, const uint16_t *idx,
				       uint16_t n_track, int only)
{
	const struct rxp_router *r = st->router;

	for (uint16_t k = 0; k < n_track; k++) {
		uint16_t i = idx[k];
		struct rxp_pkt *pkt = pkts[i];
		int ret = rxp_nat_pre(st, pkt, &cp[i], &refs[i], dst ? &dst[i] : NULL, &nh[i], &pend[i]);
		int chain;

		if (ret < 0) {
			chain_at[i] = CHAIN_CONSUMED;
			only = -2;
			continue;
		}
		if (!ret)
			continue;
		chain = chain_of(r, nh[i]);
		if (chain < 0 || (chain == RXP_FILTER_FORWARD && dies_before_forward(r, pkt, nh[i])))
			chain = CHAIN_NONE;
		if (chain != chain_at[i])
			only = -2;
		chain_at[i] = (int8_t)chain;
		key_of(&keys[i], &cp[i], pkt->ifidx, chain == RXP_FILTER_FORWARD ? r->nh[nh[i]].ifidx : -1);
	}
	return only;
}

/*
 * Packets are decided FILTER_CHUNK at a time: the per-packet arrays then
 * fit in a few pages of stack, where 256 of each would be 68 KiB that every
 * call, a single packet's too, must walk into (a stack probe and a TLB
 * entry per page).
 */
#define FILTER_CHUNK 64u

/* What refuse() reads of a packet the stateless way drops: parsed now, as few are. */
rxp_noinline void rxp_filter_refuse4(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t rule, uint8_t verdict)
{
	struct rxp_ct_pkt cp;
	enum rxp_drop_reason why;

	if (rxp_ct_parse(rxp_pkt_cdata(pkt) + pkt->l3_off, pkt->l3_len, 4, &cp))
		tuple_of_header(&cp, pkt, 4);
	refuse(st, pkt, RXP_FILTER_FORWARD, rule, verdict, &cp, NULL, &why);
}

bool rxp_filter_classify4(struct rxp_stack *st, const struct rxp_acl_rows4 *rows, uint16_t n,
			  struct rxp_filter_pass *fp)
{
	const struct rxp_filter_chain *c = &st->filter->chain[RXP_FILTER_FORWARD];

	if (!c->on)
		return false;	/* only input filters */
	fp->c = c;
	fp->count = st->rule_count[RXP_FILTER_FORWARD];
	fp->n_count = st->rule_count_n[RXP_FILTER_FORWARD];
	_Static_assert(RXP_ACL_NO_MATCH == UINT32_MAX, "no match is all ones");
	if (c->acl)
		rxp_acl_classify4(c->acl, rows, fp->match, n);
	else
		memset(fp->match, 0xff, RXP_MIN(n, RXP_ACL_BURST) * sizeof(*fp->match));
	return true;
}

/*
 * filter_chunk() for a stateless filter (rxp_filter_stateless4()) when
 * every packet of the chunk is IPv4 to forward (a gateway or an on-link
 * neighbour) with a key rxp_filter_key4() reads, and none of what
 * dies_before_forward() catches (tested here on what is loaded already; a
 * packet too large for its link takes the general way, which decides on
 * fragmenting it). The same decisions, counters and drops, for a fraction
 * of the work. Returns how many are kept, or -1 to take the general way
 * (nothing changed).
 */
static rxp_noinline int stateless_chunk(struct rxp_stack *st, struct rxp_pkt **pkts, uint32_t *dst, uint32_t *nh,
					uint16_t n)
{
	const struct rxp_router *r = st->router;
	struct rxp_filter_run run = rxp_filter_run_start();
	struct rxp_filter_pass fp;
	struct rxp_acl_rows4 rows;
	uint16_t kept = 0;

	_Static_assert(FILTER_CHUNK == RXP_ACL_BURST, "a chunk's keys are one burst of rows");
	for (uint16_t i = 0; i < n; i++) {
		const struct rxp_pkt *pkt = pkts[i];
		const struct rxp_ip4_hdr *ip = rxp_pkt_cip4(pkt);
		const struct rxp_nexthop *nhp;

		if (rxp_unlikely(nh[i] == RXP_NH_LOCAL || nh[i] >= RXP_NH_MAX || (pkt->flags & RXP_PKT_F_IP6)))
			return -1;
		nhp = &r->nh[nh[i]];
		if (rxp_unlikely(ip->ttl <= 1 || pkt->l3_len > r->ifs[nhp->ifidx].mtu ||
				 (ntohl(ip->dst) >> 28) >= 0xe ||
				 (nhp->kind != RXP_NH_KIND_GATEWAY &&
				  (nhp->kind != RXP_NH_KIND_CONNECTED || rxp_router_is_bcast4(r, ip->dst))) ||
				 !rxp_filter_key4(&rows, i, pkt, ip, nhp->ifidx)))
			return -1;
	}
	if (!rxp_filter_classify4(st, &rows, n, &fp))
		return n;
	for (uint16_t i = 0; i < n; i++) {
		if (!rxp_filter_accept4(st, &fp, &run, pkts[i], i))
			continue;
		pkts[kept] = pkts[i];
		if (dst)
			dst[kept] = dst[i];
		nh[kept++] = nh[i];
	}
	rxp_filter_run_end(&fp, &run);
	return kept;
}

static rxp_noinline uint16_t filter_chunk(struct rxp_stack *st, struct rxp_pkt **pkts, uint32_t *dst, uint32_t *nh,
			     uint16_t n)
{
	const struct rxp_filter *f = st->filter;
	const struct rxp_router *r = st->router;
	struct rxp_ct_pkt cp[FILTER_CHUNK];
	struct rxp_acl_key keys[FILTER_CHUNK];
	struct rxp_ct_ref refs[FILTER_CHUNK];
	const struct rxp_ct_pkt *track[FILTER_CHUNK];
	uint32_t match[FILTER_CHUNK];
	int8_t chain_at[FILTER_CHUNK];
	uint16_t idx[FILTER_CHUNK], n_track = 0, kept = 0;
	int only = -1;		/* the one chain every packet goes through, if so; -2: several */
	struct rxp_acl_key gathered[FILTER_CHUNK];	/* a chain's keys, when several chains share the vector */
	uint32_t got[FILTER_CHUNK];
	struct rxp_nat_pending pend[FILTER_CHUNK];	/* NAT: what prerouting decided for new connections */

	/* what each packet is: its chain, its fields, whether tracking is asked */
	for (uint16_t i = 0; i < n; i++) {
		struct rxp_pkt *pkt = pkts[i];
		int chain = chain_of(r, nh[i]);
		uint8_t family = pkt->flags & RXP_PKT_F_IP6 ? 6 : 4;

		match[i] = RXP_ACL_NO_MATCH;
		/* with NAT, a packet with no route yet is tracked too: prerouting may give it one */
		if ((chain < 0 && !(f->nat && family == 4)) || (chain >= 0 && !(f->chain[chain].on || f->track)) ||
		    (chain == RXP_FILTER_FORWARD && rxp_unlikely(dies_before_forward(r, pkt, nh[i])))) {
			chain_at[i] = CHAIN_NONE;
			only = -2;
			continue;
		}
		chain_at[i] = (int8_t)(chain < 0 ? CHAIN_NONE : chain);
		only = chain >= 0 && (only == -1 || only == chain) ? chain : -2;
		if (!f->track && key_fast4(&keys[i], &cp[i], pkt, pkt->ifidx,
					   chain == RXP_FILTER_FORWARD ? r->nh[nh[i]].ifidx : -1)) {
			refs[i] = (struct rxp_ct_ref){ .entry = UINT32_MAX, .state = RXP_ACL_CT_UNTRACKED };
			continue;
		}
		if (rxp_ct_parse(rxp_pkt_cdata(pkt) + pkt->l3_off, pkt->l3_len, family, &cp[i])) {
			tuple_of_header(&cp[i], pkt, family);
			refs[i] = (struct rxp_ct_ref){ .entry = UINT32_MAX, .state = RXP_ACL_CT_INVALID };
		} else if (rxp_unlikely(cp[i].frag_nth) && st->frags) {
			/* its datagram's first fragment decides; the chain is not asked */
			chain_at[i] = frag_later(st, pkt, &cp[i], &nh[i], dst ? &dst[i] : NULL) ? CHAIN_NONE :
											   CHAIN_CONSUMED;
			only = -2;
			continue;
		} else if (f->track) {
			track[n_track] = &cp[i];
			idx[n_track++] = i;
		} else {
			refs[i] = (struct rxp_ct_ref){ .entry = UINT32_MAX, .state = RXP_ACL_CT_UNTRACKED };
		}
		key_of(&keys[i], &cp[i], pkt->ifidx, chain == RXP_FILTER_FORWARD ? r->nh[nh[i]].ifidx : -1);
	}
	if (n_track) {
		struct rxp_ct_ref tracked[FILTER_CHUNK];

		rxp_ct_track_bulk(st->ct, st->worker, track, n_track, st->now_ns, tracked);
		for (uint16_t k = 0; k < n_track; k++)
			refs[idx[k]] = tracked[k];
		if (f->nat)
			only = nat_prerouting(st, pkts, dst, nh, cp, keys, refs, pend, chain_at, idx, n_track, only);
	}
	/* each chain's packets classified together; in place when they all go through one */
	for (int chain = 0; chain < RXP_FILTER_OUTPUT; chain++) {
		const struct rxp_filter_chain *c = &f->chain[chain];
		uint16_t m = 0;

		if (!c->acl || (only >= 0 && only != chain))
			continue;
		/* one chain, no state and no set to add to the keys: they are ready */
		if (only == chain && !f->track && !(c->src_sets | c->dst_sets)) {
			rxp_acl_classify(c->acl, keys, match, n);
			continue;
		}
		for (uint16_t i = 0; i < n; i++) {
			if (chain_at[i] != chain)
				continue;
			keys[i].ct_state = refs[i].state;
			if (c->src_sets | c->dst_sets)
				sets_of(f, c, &keys[i]);
			if (only != chain) {
				gathered[m] = keys[i];
				idx[m] = i;
			}
			m++;
		}
		if (only == chain) {
			rxp_acl_classify(c->acl, keys, match, n);
		} else if (m) {
			rxp_acl_classify(c->acl, gathered, got, m);
			for (uint16_t k = 0; k < m; k++)
				match[idx[k]] = got[k];
		}
	}
	/* the verdicts, in order: what goes on stays in the arrays */
	for (uint16_t i = 0; i < n; i++) {
		struct rxp_pkt *pkt = pkts[i];
		int chain = chain_at[i];

		if (chain == CHAIN_CONSUMED)
			continue;
		if (chain >= 0) {
			const struct rxp_filter_chain *c = &f->chain[chain];
			uint32_t rule = c->acl ? match[i] : RXP_ACL_NO_MATCH;
			enum rxp_drop_reason why = RXP_DROP_FILTER_DROP;
			bool go;

			/*
			 * Neighbor Discovery and MLD to the router pass input, its
			 * policy included, unless the rule that matched names them
			 */
			if (rxp_unlikely(chain == RXP_FILTER_INPUT) && is_nd(&cp[i]) &&
			    (rule == RXP_ACL_NO_MATCH || !(c->flags[rule] & RXP_FILTER_RULE_ND))) {
				count_rule(st, chain, c->n_rules, pkt);
				go = true;
			} else {
				go = decide(st, pkt, chain, rule, &cp[i], f->track ? &refs[i] : NULL, nh[i],
					    f->nat ? &pend[i] : NULL, &why);
				/* postrouting: a translated connection's source */
				if (go && f->nat && !rxp_nat_post(st, pkt, &cp[i], &refs[i], &pend[i])) {
					go = false;
					why = RXP_DROP_NAT_MALFORMED;
				}
				if (rxp_unlikely(cp[i].frag) && st->frags)
					frag_first(st, pkt, &cp[i], go, why, f->nat ? &pend[i] : NULL, nh[i],
						   RXP_CAPTURE_RULE(chain, rule == RXP_ACL_NO_MATCH ? 0 : rule + 1));
			}
			if (!go)
				continue;
		}
		pkts[kept] = pkt;
		if (dst)
			dst[kept] = dst[i];
		nh[kept++] = nh[i];
	}
	return kept;
}

uint16_t rxp_filter_routed(struct rxp_stack *st, struct rxp_pkt **pkts, uint32_t *dst, uint32_t *nh,
			   uint16_t n)
{
	bool stateless = rxp_filter_stateless4(st);
	uint16_t kept = 0;

	for (uint16_t done = 0; done < n; done = (uint16_t)(done + FILTER_CHUNK)) {
		uint16_t len = (uint16_t)RXP_MIN((unsigned)(n - done), FILTER_CHUNK);
		int k = stateless ? stateless_chunk(st, pkts + done, dst ? dst + done : NULL, nh + done, len) : -1;

		if (k < 0)
			k = filter_chunk(st, pkts + done, dst ? dst + done : NULL, nh + done, len);

		/* what the chunk kept is at its front: after what the chunks before kept */
		if (kept != done) {
			memmove(pkts + kept, pkts + done, (size_t)k * sizeof(*pkts));
			memmove(nh + kept, nh + done, (size_t)k * sizeof(*nh));
			if (dst)
				memmove(dst + kept, dst + done, (size_t)k * sizeof(*dst));
		}
		kept = (uint16_t)(kept + k);
	}
	return kept;
}

/* The router's own packet about a translated one (an ICMP error): translated as it would have been. */
static rxp_noinline bool nat_output(struct rxp_stack *st, struct rxp_pkt *pkt, struct rxp_ct_pkt *cp,
				    struct rxp_ct_ref *ref)
{
	struct rxp_nat_pending pend;
	uint32_t nh = RXP_NH_LOCAL;

	return rxp_nat_pre(st, pkt, cp, ref, NULL, &nh, &pend) >= 0 && rxp_nat_post(st, pkt, cp, ref, &pend);
}

/* Output's decision, with the tracking entries it reads held (see rxp_filter_output). */
static bool output_decide(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family, int out_if)
{
	const struct rxp_filter *f = st->filter;
	const struct rxp_filter_chain *c = &f->chain[RXP_FILTER_OUTPUT];
	struct rxp_ct_ref ref = { .entry = UINT32_MAX, .state = RXP_ACL_CT_UNTRACKED };
	uint32_t rule = RXP_ACL_NO_MATCH;
	uint8_t flags = pkt->flags;
	struct rxp_acl_key key;
	enum rxp_drop_reason why;
	struct rxp_ct_pkt cp;
	bool go;

	if (rxp_ct_parse(rxp_pkt_cdata(pkt) + pkt->l3_off, pkt->l3_len, family, &cp)) {
		tuple_of_header(&cp, pkt, family);
		ref.state = RXP_ACL_CT_INVALID;
	} else if (f->track && (pkt->flags & RXP_PKT_F_ANSWER)) {
		/* as Linux attaches the packet's connection to its reset or error (nf_ct_attach) */
		ref.state = RXP_ACL_CT_RELATED;
		/* NAT translates an error about a translated packet back: its connection is needed */
		if (f->nat && family == 4 && cp.icmp_error &&
		    rxp_ct_track(st->ct, st->worker, &cp, st->now_ns, &ref) != RXP_ACL_CT_RELATED)
			ref = (struct rxp_ct_ref){ .entry = UINT32_MAX, .state = RXP_ACL_CT_RELATED };
	} else if (f->track) {
		rxp_ct_track(st->ct, st->worker, &cp, st->now_ns, &ref);
	}
	/* ND and MLD the router sends are its own business, as ARP is */
	if (is_nd(&cp))
		return true;
	if (c->acl) {
		key_of(&key, &cp, -1, out_if);
		key.ct_state = ref.state;
		if (c->src_sets | c->dst_sets)
			sets_of(f, c, &key);
		rule = rxp_acl_classify_one(c->acl, &key);
	}
	/* its drops count under the filter's reasons, on the port it was to leave by */
	pkt->flags &= (uint8_t)~RXP_PKT_F_LOCAL_OUT;
	/* what the router makes is never answered with another packet: a reject drops it */
	if (rule != RXP_ACL_NO_MATCH && c->verdict[rule] == RXP_FILTER_REJECT) {
		count_rule(st, RXP_FILTER_OUTPUT, rule, pkt);
		pkt->user[1] = RXP_CAPTURE_RULE(RXP_FILTER_OUTPUT, rule + 1);
		rxp_drop(st, pkt, RXP_DROP_FILTER_REJECT);
		return false;
	}
	go = decide(st, pkt, RXP_FILTER_OUTPUT, rule, &cp, f->track ? &ref : NULL, RXP_NH_LOCAL, NULL, &why);
	if (go)
		pkt->flags = flags;
	if (go && f->nat && ref.entry != UINT32_MAX && family == 4)
		go = nat_output(st, pkt, &cp, &ref);
	return go;
}

bool rxp_filter_output(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family, int out_if)
{
	const struct rxp_filter *f = st->filter;
	bool go;

	if (!f->chain[RXP_FILTER_OUTPUT].on && !f->track)
		return true;
	rxp_filter_enter(st);	/* the timers' answers come outside a poll */
	go = output_decide(st, pkt, family, out_if);
	rxp_filter_leave(st);
	return go;
}

/* Entries looked at per call (every 64 rounds of the poll loop) for expiry. */
#define EXPIRE_BUDGET 256u

void rxp_filter_tick(struct rxp_stack *st)
{
	if (st->frags)
		frags_expire(st);
	if (!st->ct)
		return;
	rxp_filter_enter(st);
	rxp_ct_expire(st->ct, st->worker, st->now_ns, EXPIRE_BUDGET);
	rxp_filter_leave(st);
}
