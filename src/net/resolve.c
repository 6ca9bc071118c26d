/* SPDX-License-Identifier: MIT */
/*
 * Neighbour resolution on the datapath: hold packets for a next hop that is
 * resolving (a bounded queue per neighbour), send requests, retry on a
 * timer, give up with Destination Unreachable, age learned entries.
 */
#include <errno.h>
#include <string.h>
#include "route.h"

#define TICK_NS 100000000ull	/* timers are looked at 10 times a second */

static uint16_t ethertype_of(uint8_t family)
{
	return family == 4 ? RXP_ETHERTYPE_IP4 : RXP_ETHERTYPE_IP6;
}

static void send_to(struct rxp_stack *st, struct rxp_pkt *pkt, const struct rxp_neigh *n)
{
	const struct rxp_l3if *ifp = &st->router->ifs[n->ifidx];

	if (!rxp_l2_prepend(pkt, ifp, n->mac, ethertype_of(n->family))) {
		rxp_drop(st, pkt, RXP_DROP_NO_MEMORY);
		return;
	}
	rxp_tx_enqueue(st, pkt, pkt->flags & RXP_PKT_F_LOCAL_OUT);
}

static void solicit(struct rxp_stack *st, struct rxp_neigh *n)
{
	uint32_t a;

	if (n->family == 4) {
		memcpy(&a, n->addr, 4);
		rxp_arp_request(st, n->ifidx, a);
	} else {
		rxp_nd_solicit(st, n->ifidx, n->addr);
	}
	n->probes++;
	n->deadline_ns = st->now_ns + RXP_NEIGH_RETRY_NS;
}

void rxp_neigh_output(struct rxp_stack *st, struct rxp_pkt *pkt, int ifidx, uint8_t family,
		      const uint8_t *next)
{
	struct rxp_neigh_table *t = &st->router->neigh;
	struct rxp_neigh *n = rxp_neigh_lookup(t, (uint16_t)ifidx, family, next);

	if (rxp_likely(n && (n->state == RXP_NEIGH_REACHABLE || n->state == RXP_NEIGH_STATIC))) {
		send_to(st, pkt, n);
		return;
	}
	if (n && n->state == RXP_NEIGH_FAILED) {
		if (family == 4)
			rxp_icmp4_error(st, pkt, 3, 1, 0);
		else
			rxp_icmp6_error(st, pkt, 1, 3, 0);
		rxp_drop(st, pkt, RXP_DROP_NEIGH_UNRESOLVED);
		return;
	}
	if (!n) {
		n = rxp_neigh_create(t, (uint16_t)ifidx, family, next, RXP_NEIGH_INCOMPLETE);
		if (!n) {
			rxp_drop(st, pkt, RXP_DROP_NEIGH_TABLE_FULL);
			return;
		}
		n->held[n->n_held++] = pkt;
		solicit(st, n);
		return;
	}
	if (n->n_held == RXP_NEIGH_HOLD) {
		rxp_drop(st, pkt, RXP_DROP_NEIGH_HOLD_FULL);
		return;
	}
	n->held[n->n_held++] = pkt;
}

void rxp_neigh_output_via(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t nh)
{
	struct rxp_adj *adj = &st->adj[nh];
	struct rxp_neigh_table *t = &st->router->neigh;
	const struct rxp_nexthop *nhp;
	struct rxp_neigh *n;

	if (adj->neigh && adj->gen == t->gen) {
		rxp_adj_output(st, pkt, adj);
		return;
	}
	nhp = &st->router->nh[nh];
	n = rxp_neigh_lookup(t, nhp->ifidx, nhp->family, nhp->gw);
	if (n && (n->state == RXP_NEIGH_REACHABLE || n->state == RXP_NEIGH_STATIC)) {
		const struct rxp_l3if *ifp = &st->router->ifs[n->ifidx];
		uint8_t *h;

		adj->neigh = n;
		adj->gen = t->gen;
		adj->port = ifp->port;
		adj->mtu = ifp->mtu;
		adj->hlen = ifp->vlan ? RXP_ETH_HLEN + RXP_VLAN_HLEN : RXP_ETH_HLEN;
		memset(adj->hdr, 0, sizeof(adj->hdr));
		h = adj->hdr + sizeof(adj->hdr) - adj->hlen;
		memcpy(h, n->mac, 6);
		memcpy(h + 6, ifp->mac, 6);
		if (ifp->vlan) {
			h[12] = RXP_ETHERTYPE_VLAN >> 8;
			h[13] = RXP_ETHERTYPE_VLAN & 0xff;
			h[14] = (uint8_t)(ifp->vlan >> 8);
			h[15] = (uint8_t)ifp->vlan;
		}
		h[adj->hlen - 2] = (uint8_t)(ethertype_of(n->family) >> 8);
		h[adj->hlen - 1] = (uint8_t)ethertype_of(n->family);
		rxp_adj_output(st, pkt, adj);
		return;
	}
	rxp_neigh_output(st, pkt, nhp->ifidx, nhp->family, nhp->gw);
}

void rxp_neigh_learn(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr,
		     const uint8_t mac[6], bool create)
{
	struct rxp_neigh_table *t = &st->router->neigh;
	struct rxp_neigh *n = rxp_neigh_lookup(t, (uint16_t)ifidx, family, addr);

	if (!n) {
		if (!create)
			return;
		n = rxp_neigh_create(t, (uint16_t)ifidx, family, addr, RXP_NEIGH_REACHABLE);
		if (!n)
			return;	/* full: we answer, but do not remember */
	}
	if (n->state == RXP_NEIGH_STATIC)
		return;		/* configured entries are not overridden */
	t->gen++;	/* the MAC may have changed: cached adjacencies are rebuilt */
	memcpy(n->mac, mac, 6);
	n->state = RXP_NEIGH_REACHABLE;
	n->probes = 0;
	n->deadline_ns = st->now_ns + RXP_NEIGH_REACHABLE_NS;
	for (unsigned i = 0; i < n->n_held; i++)
		send_to(st, n->held[i], n);
	n->n_held = 0;
}

int rxp_stack_neigh_set(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr,
			const uint8_t mac[6])
{
	struct rxp_neigh_table *t;
	struct rxp_neigh *n;

	if (!st->router || ifidx < 0 || (unsigned)ifidx >= st->router->n_ifs)
		return -EINVAL;
	t = &st->router->neigh;
	n = rxp_neigh_lookup(t, (uint16_t)ifidx, family, addr);
	if (!n)
		n = rxp_neigh_create(t, (uint16_t)ifidx, family, addr, RXP_NEIGH_STATIC);
	if (!n)
		return -ENOSPC;
	t->gen++;	/* the MAC may have changed: cached adjacencies are rebuilt */
	memcpy(n->mac, mac, 6);
	n->state = RXP_NEIGH_STATIC;
	n->probes = 0;
	/* what waited for this neighbour goes now */
	for (unsigned i = 0; i < n->n_held; i++)
		send_to(st, n->held[i], n);
	n->n_held = 0;
	rxp_stack_flush(st);
	return 0;
}

int rxp_stack_neigh_del(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr)
{
	struct rxp_neigh *n;

	if (!st->router || ifidx < 0 || (unsigned)ifidx >= st->router->n_ifs)
		return -EINVAL;
	n = rxp_neigh_lookup(&st->router->neigh, (uint16_t)ifidx, family, addr);
	if (!n)
		return -ENOENT;
	for (unsigned i = 0; i < n->n_held; i++)
		rxp_drop(st, n->held[i], RXP_DROP_NEIGH_UNRESOLVED);
	n->n_held = 0;
	rxp_neigh_remove(&st->router->neigh, n);
	return 0;
}

/* No answer: every held packet is dropped and its sender told. */
static void fail(struct rxp_stack *st, struct rxp_neigh *n)
{
	for (unsigned i = 0; i < n->n_held; i++) {
		struct rxp_pkt *pkt = n->held[i];

		if (n->family == 4)
			rxp_icmp4_error(st, pkt, 3, 1, 0);
		else
			rxp_icmp6_error(st, pkt, 1, 3, 0);
		rxp_drop(st, pkt, RXP_DROP_NEIGH_UNRESOLVED);
	}
	n->n_held = 0;
	n->state = RXP_NEIGH_FAILED;
	n->deadline_ns = st->now_ns + RXP_NEIGH_FAILED_NS;
}

struct walk_ctx {
	struct rxp_stack *st;
	bool give_up;		/* drain: fail everything still resolving */
	bool release_all;	/* shutdown: drop held packets quietly and empty the table */
	uint64_t dropped;
};

static void timer_one(void *arg, struct rxp_neigh *n)
{
	struct walk_ctx *c = arg;
	struct rxp_stack *st = c->st;

	if (c->release_all) {
		for (unsigned i = 0; i < n->n_held; i++)
			rxp_drop(st, n->held[i], RXP_DROP_NEIGH_UNRESOLVED);
		c->dropped += n->n_held;
		n->n_held = 0;
		rxp_neigh_remove(&st->router->neigh, n);
		return;
	}
	switch (n->state) {
	case RXP_NEIGH_INCOMPLETE:
		if (c->give_up) {
			c->dropped += n->n_held;
			fail(st, n);
		} else if (st->now_ns >= n->deadline_ns) {
			if (n->probes < RXP_NEIGH_PROBES) {
				solicit(st, n);
			} else {
				c->dropped += n->n_held;
				fail(st, n);
			}
		}
		break;
	case RXP_NEIGH_FAILED:
	case RXP_NEIGH_REACHABLE:
		if (st->now_ns >= n->deadline_ns)
			rxp_neigh_remove(&st->router->neigh, n);
		break;
	default:
		break;
	}
}

void rxp_stack_tick(struct rxp_stack *st, uint64_t now_ns)
{
	struct walk_ctx c = { .st = st };

	st->now_ns = now_ns;
	if (!st->router || now_ns < st->next_tick_ns)
		return;
	st->next_tick_ns = now_ns + TICK_NS;
	rxp_neigh_walk(&st->router->neigh, timer_one, &c);
	rxp_stack_flush(st);
}

uint64_t rxp_stack_drain(struct rxp_stack *st)
{
	struct walk_ctx c = { .st = st, .give_up = true };

	if (!st->router)
		return 0;
	rxp_neigh_walk(&st->router->neigh, timer_one, &c);
	rxp_stack_flush(st);
	return c.dropped;
}

void rxp_stack_close(struct rxp_stack *st)
{
	struct walk_ctx c = { .st = st, .release_all = true };

	rxp_stack_flush(st);
	if (st->router)
		rxp_neigh_walk(&st->router->neigh, timer_one, &c);
}
