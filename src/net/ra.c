/* SPDX-License-Identifier: MIT */
/*
 * Router Advertisements (RFC 4861 6.2) on the interfaces set `ra on`: the
 * router's link-local address as a default router, the interface's MTU, and
 * its IPv6 prefixes for on-link determination and, for /64s, stateless
 * address autoconfiguration (RFC 4862). Unsolicited ones at random
 * intervals, the first few sooner; answers to Router Solicitations; a last
 * one with lifetime 0 when the interface stops advertising.
 *
 * Whether an interface advertises is its configuration, in the router's
 * tables; the timers are the stacks' shared state (st->shared, the first
 * worker's), changed under the neighbour table's lock: the timer owner
 * sends the periodic ones, any worker may take a solicitation.
 */
#include <string.h>
#include "icmp.h"
#include "ip6_addr.h"
#include "nd.h"
#include "out.h"

#define ND_RA 134
#define ND_HOP_LIMIT 255
#define RA_LEN 16			/* type .. retrans timer */
#define OPT_SLLA 1
#define OPT_PREFIX 3
#define OPT_MTU 5
#define OPT_SLLA_LEN 8
#define OPT_PREFIX_LEN 32
#define OPT_MTU_LEN 8
#define PREFIX_ON_LINK 0x80		/* L */
#define PREFIX_AUTONOMOUS 0x40		/* A */

/* RFC 4861 6.2.1 defaults, and 10's constants */
#define MAX_INTERVAL_NS 600000000000ull		/* MaxRtrAdvInterval */
#define MIN_INTERVAL_NS 198000000000ull		/* MinRtrAdvInterval: 0.33 * Max */
#define ROUTER_LIFETIME_S 1800u			/* AdvDefaultLifetime: 3 * Max */
#define CUR_HOP_LIMIT 64
#define VALID_LIFETIME_S 2592000u		/* AdvValidLifetime: 30 days */
#define PREFERRED_LIFETIME_S 604800u		/* AdvPreferredLifetime: 7 days */
#define MAX_INITIAL_ADVERTS 3
#define MAX_INITIAL_INTERVAL_NS 16000000000ull
#define MIN_DELAY_BETWEEN_NS 3000000000ull
#define MAX_RA_DELAY_NS 500000000ull

static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };
static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };

/* A number in [0, @range) from the shared PRNG (timers need no more). */
static uint64_t random_below(struct rxp_stack_shared *sh, uint64_t range)
{
	uint64_t x = sh->ra_rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	sh->ra_rng = x;
	return range ? x % range : 0;
}

/* Whether address @i of @ifp brings a Prefix Information option: global, and its prefix's first. */
static bool advertised_prefix(const struct rxp_l3if *ifp, unsigned i)
{
	if (rxp_ip6_is_link_local(ifp->addr6[i]))
		return false;
	for (unsigned k = 0; k < i; k++)
		if (ifp->plen6[k] == ifp->plen6[i] && !rxp_ip6_is_link_local(ifp->addr6[k]) &&
		    rxp_prefix_eq(ifp->addr6[k], ifp->addr6[i], ifp->plen6[i]))
			return false;
	return true;
}

/* Multicasts one RA on @ifidx to all nodes; @lifetime_s 0 says "no longer a router". */
static void ra_send(struct rxp_stack *st, int ifidx, uint16_t lifetime_s)
{
	const struct rxp_l3if *ifp = &st->router->ifs[ifidx];
	/* hosts ignore an MTU below IPv6's minimum (4.6.4): not sent */
	bool mtu_ok = ifp->mtu >= RXP_IP6_MIN_MTU;
	unsigned n_prefixes = 0;
	struct rxp_pkt *pkt;
	uint8_t *ip, *ra, *o;
	uint32_t len;

	if (!ifp->n_addr6)
		return;		/* no link-local address to speak from */
	for (unsigned i = 0; i < ifp->n_addr6; i++)
		n_prefixes += advertised_prefix(ifp, i);
	len = RA_LEN + OPT_SLLA_LEN + (mtu_ok ? OPT_MTU_LEN : 0) + n_prefixes * OPT_PREFIX_LEN;
	pkt = rxp_local_alloc(st, (uint16_t)(RXP_IP6_HLEN + len));
	if (!pkt)
		return;
	ip = rxp_pkt_data(pkt) + pkt->l3_off;
	ra = ip + RXP_IP6_HLEN;
	memset(ra, 0, len);
	ra[0] = ND_RA;
	ra[4] = CUR_HOP_LIMIT;
	ra[5] = 0;			/* no DHCPv6: M and O clear */
	ra[6] = (uint8_t)(lifetime_s >> 8);
	ra[7] = (uint8_t)lifetime_s;
	/* reachable time and retrans timer 0: unspecified, the hosts keep theirs */
	o = ra + RA_LEN;
	o[0] = OPT_SLLA;
	o[1] = OPT_SLLA_LEN / 8;
	memcpy(o + 2, ifp->mac, 6);
	o += OPT_SLLA_LEN;
	if (mtu_ok) {
		o[0] = OPT_MTU;
		o[1] = OPT_MTU_LEN / 8;
		rxp_store_be32(o + 4, ifp->mtu);
		o += OPT_MTU_LEN;
	}
	for (unsigned i = 0; i < ifp->n_addr6; i++) {
		unsigned plen = ifp->plen6[i];

		if (!advertised_prefix(ifp, i))
			continue;
		o[0] = OPT_PREFIX;
		o[1] = OPT_PREFIX_LEN / 8;
		o[2] = (uint8_t)plen;
		/* addresses are made from 64-bit interface identifiers (RFC 4862 5.5.3) */
		o[3] = PREFIX_ON_LINK | (plen == 64 ? PREFIX_AUTONOMOUS : 0);
		rxp_store_be32(o + 4, VALID_LIFETIME_S);
		rxp_store_be32(o + 8, PREFERRED_LIFETIME_S);
		rxp_prefix_mask(6, ifp->addr6[i], (uint8_t)plen, o + 16);
		o += OPT_PREFIX_LEN;
	}
	rxp_icmp6_finish(ip, ifp->addr6[0], all_nodes, ND_HOP_LIMIT, len);
	pkt->port = ifp->port;
	pkt->ifidx = (uint16_t)ifidx;
	rxp_l2_prepend(pkt, ifp, all_nodes_mac, RXP_ETHERTYPE_IP6);
	st->stats.router_adverts++;
	rxp_tx_enqueue(st, pkt, true);
}

/* Sends what is due and schedules the next (RFC 4861 6.2.4). Holds the lock. */
static void ra_due(struct rxp_stack *st, int ifidx)
{
	struct rxp_stack_shared *sh = st->shared;
	struct rxp_ra_timer *t = &sh->ra[ifidx];
	uint64_t wait = MIN_INTERVAL_NS + random_below(sh, MAX_INTERVAL_NS - MIN_INTERVAL_NS);

	if (st->now_ns < t->next_ns)
		return;
	ra_send(st, ifidx, ROUTER_LIFETIME_S);
	if (t->initial < MAX_INITIAL_ADVERTS) {
		t->initial++;
		wait = RXP_MIN(wait, MAX_INITIAL_INTERVAL_NS);
	}
	t->last_ns = st->now_ns;
	t->next_ns = st->now_ns + wait;
}

void rxp_ra_tick(struct rxp_stack *st)
{
	struct rxp_router *r = st->router;

	for (unsigned i = 0; i < r->n_ifs; i++)
		if (r->ifs[i].ra)
			ra_due(st, (int)i);
}

void rxp_ra_solicited(struct rxp_stack *st, int ifidx)
{
	struct rxp_stack_shared *sh = st->shared;
	struct rxp_ra_timer *t = &sh->ra[ifidx];
	uint64_t at;

	if (!st->router->ifs[ifidx].ra)
		return;
	rxp_neigh_lock(st);
	/* 6.2.6: after a random delay, counted from 3 s after the last one when that is later */
	at = random_below(sh, MAX_RA_DELAY_NS);
	if (t->last_ns && st->now_ns < t->last_ns + MIN_DELAY_BETWEEN_NS)
		at += t->last_ns + MIN_DELAY_BETWEEN_NS;
	else
		at += st->now_ns;
	if (at < t->next_ns)
		t->next_ns = at;
	rxp_neigh_unlock(st);
}

void rxp_stack_set_ra(struct rxp_stack *st, int ifidx, bool on)
{
	struct rxp_l3if *ifp;
	struct rxp_ra_timer *t;
	bool was;

	if (!st->router || ifidx < 0 || (unsigned)ifidx >= st->router->n_ifs)
		return;
	ifp = &st->router->ifs[ifidx];
	t = &st->shared->ra[ifidx];
	rxp_neigh_lock(st);
	was = ifp->ra;
	ifp->ra = on;
	if (on && !was) {
		t->initial = 0;
		/* at the next tick, but 6.2.6's 3 s since the last one hold across off and on */
		t->next_ns = t->last_ns ? t->last_ns + MIN_DELAY_BETWEEN_NS : 0;
	}
	rxp_neigh_unlock(st);
	/* 6.2.5: hosts drop us as a default router now rather than in 30 minutes */
	if (!on && was && t->last_ns) {
		ra_send(st, ifidx, 0);
		t->last_ns = st->now_ns;
		rxp_stack_flush(st);
	}
}
