/* SPDX-License-Identifier: MIT */
/*
 * Neighbour resolution on the datapath: hold packets for a next hop that is
 * resolving (a bounded queue per neighbour), send requests, retry on a
 * timer, give up with Destination Unreachable, age learned entries.
 */
#include <errno.h>
#include <string.h>
#include "filter.h"
#include "rxpath/csum.h"
#include "arp.h"
#include "icmp.h"
#include "nd.h"
#include "out.h"
#include "reasm.h"

#define EVICT_LOOK 64u	/* entries looked at for one to evict */
#define TICK_NS 100000000ull	/* timers are looked at 10 times a second */
/*
 * Packets held by all resolving neighbours together take at most 1/8 of the
 * pool: a flood to next hops that never answer must not leave the receive
 * rings without buffers (4096 entries x 4 packets would hold more than a
 * default pool has).
 */
#define HELD_POOL_SHIFT 3

static uint16_t ethertype_of(uint8_t family)
{
	return family == 4 ? RXP_ETHERTYPE_IP4 : RXP_ETHERTYPE_IP6;
}

static void too_big(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family, uint32_t mtu);

/*
 * Sends @pkt to @mac on @ifidx. An IPv4 datagram larger than the link (DF
 * clear: the forwarding path saw to that) waited for its next hop whole,
 * so that its pieces go, or fail, together: it is fragmented now. One the
 * link shrank under while it waited gets what it would have got before.
 */
static void send_mac(struct rxp_stack *st, struct rxp_pkt *pkt, uint16_t ifidx, uint8_t family,
		     const uint8_t mac[6])
{
	const struct rxp_l3if *ifp = &st->router->ifs[ifidx];

	if (rxp_unlikely(pkt->l3_len > ifp->mtu)) {
		if (family == 4 && !(rxp_pkt_cip4(pkt)->frag_off & htons(RXP_IP4_DF)))
			rxp_ip4_fragment(st, pkt, ifidx, mac);
		else
			too_big(st, pkt, family, ifp->mtu);
		return;
	}
	if (!rxp_l2_prepend(pkt, ifp, mac, ethertype_of(family))) {
		rxp_drop(st, pkt, RXP_DROP_NO_MEMORY);
		return;
	}
	rxp_tx_enqueue(st, pkt, pkt->flags & RXP_PKT_F_LOCAL_OUT);
}

static void send_to(struct rxp_stack *st, struct rxp_pkt *pkt, const struct rxp_neigh *n)
{
	send_mac(st, pkt, n->ifidx, n->family, n->mac);
}

/*
 * Queues @pkt on @n while it resolves. When @n holds enough, the oldest
 * makes room (RFC 4861 7.2.2: the new arrival replaces the oldest entry);
 * when all entries together do, @pkt is dropped.
 */
static void hold(struct rxp_stack *st, struct rxp_neigh *n, struct rxp_pkt *pkt)
{
	struct rxp_neigh_table *t = &st->router->neigh;

	if (n->n_held == RXP_NEIGH_HOLD) {
		rxp_drop(st, n->held[0], RXP_DROP_NEIGH_HOLD_FULL);
		memmove(n->held, n->held + 1, (RXP_NEIGH_HOLD - 1) * sizeof(n->held[0]));
		n->held[RXP_NEIGH_HOLD - 1] = pkt;
		return;
	}
	if (t->n_held >= (st->cache->pool->n_bufs >> HELD_POOL_SHIFT)) {
		rxp_drop(st, pkt, RXP_DROP_NEIGH_HOLD_FULL);
		return;
	}
	n->held[n->n_held++] = pkt;
	t->n_held++;
}

/* @n's held packets have been sent or dropped: forget them. */
static void held_gone(struct rxp_stack *st, struct rxp_neigh *n)
{
	st->router->neigh.n_held -= n->n_held;
	n->n_held = 0;
}

/*
 * A forwarded packet had its TTL or hop limit taken down on the way out: an
 * error about it quotes it as it came in (RFC 1812 4.3.2.3), so that is
 * undone first, checksum included.
 */
static void as_received(struct rxp_pkt *pkt, uint8_t family)
{
	struct rxp_ip4_hdr *ip;
	uint16_t old;

	if (pkt->flags & RXP_PKT_F_LOCAL_OUT)
		return;
	if (family == 6) {
		rxp_pkt_ip6(pkt)->hop_limit++;
		return;
	}
	/* the TTL and the protocol make one 16-bit word of the checksum */
	ip = rxp_pkt_ip4(pkt);
	old = htons((uint16_t)(ip->ttl << 8 | ip->proto));
	ip->ttl++;
	ip->csum = rxp_csum_update16(ip->csum, old, htons((uint16_t)(ip->ttl << 8 | ip->proto)));
}

/* Host / Address Unreachable for @pkt, whose next hop never answered, and the drop. */
static void unreachable(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family)
{
	as_received(pkt, family);
	if (family == 4)
		rxp_icmp4_error(st, pkt, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_HOST, 0);
	else
		rxp_icmp6_error(st, pkt, RXP_ICMP6_DEST_UNREACH, RXP_ICMP6_UNREACH_ADDR, 0);
	rxp_drop(st, pkt, RXP_DROP_NEIGH_UNRESOLVED);
}

/* Fragmentation Needed / Packet Too Big for @pkt, which waited while its link shrank to @mtu. */
static void too_big(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family, uint32_t mtu)
{
	as_received(pkt, family);
	if (family == 4) {
		rxp_icmp4_error(st, pkt, RXP_ICMP_DEST_UNREACH, RXP_ICMP_UNREACH_FRAG_NEEDED,
				(uint16_t)mtu);
		rxp_drop(st, pkt, RXP_DROP_FRAG_NEEDED);
	} else {
		rxp_icmp6_error(st, pkt, RXP_ICMP6_PKT_TOO_BIG, 0, mtu);
		rxp_drop(st, pkt, RXP_DROP_PKT_TOO_BIG);
	}
}

/* Asks for @n's address: broadcast / multicast, or to @mac alone. */
static void request(struct rxp_stack *st, struct rxp_neigh *n, const uint8_t *mac)
{
	uint32_t a;

	if (n->family == 4) {
		memcpy(&a, n->addr, 4);
		rxp_arp_request(st, n->ifidx, a, mac);
	} else {
		rxp_nd_solicit(st, n->ifidx, n->addr, mac);
	}
	n->probes++;
}

static void solicit(struct rxp_stack *st, struct rxp_neigh *n)
{
	request(st, n, NULL);
	n->deadline_ns = st->now_ns + RXP_NEIGH_RETRY_NS;
}

/*
 * A learned neighbour that traffic still uses is asked again, at its MAC,
 * in the last RXP_NEIGH_PROBES seconds of its life (RFC 1122 2.3.2.1's
 * unicast poll, RFC 4861 7.3.3's probe): its answer renews the entry, which
 * never goes away under the traffic, so none of it waits for a broadcast
 * request or is dropped meanwhile. One nobody uses, or that does not
 * answer, ages out.
 */
static bool refresh_due(const struct rxp_stack *st, const struct rxp_neigh *n)
{
	return n->used && n->probes < RXP_NEIGH_PROBES &&
	       st->now_ns + (RXP_NEIGH_PROBES - n->probes) * RXP_NEIGH_RETRY_NS >= n->deadline_ns;
}

/* The slot of an on-link neighbour in a worker's cache. */
static struct rxp_ncache_entry *ncache_slot(struct rxp_stack *st, int ifidx, uint8_t family,
					    const uint8_t *addr)
{
	uint32_t h = (uint32_t)ifidx * 0x9e3779b1u;

	for (unsigned i = 0; i < (family == 4 ? 4u : 16u); i++)
		h = (h ^ addr[i]) * 16777619u;
	return &st->ncache[(h ^ h >> 16) & (RXP_NCACHE_SIZE - 1)];
}

/* The worker's own copy of @next's entry, good while the table's generation has not moved; NULL if none. */
static inline const struct rxp_ncache_entry *ncache_hit(struct rxp_stack *st, int ifidx,
							uint8_t family, const uint8_t *next)
{
	const struct rxp_ncache_entry *e = ncache_slot(st, ifidx, family, next);

	return e->valid && e->gen == rxp_neigh_gen(&st->router->neigh) && e->ifidx == ifidx &&
	       e->family == family && !memcmp(e->addr, next, family == 4 ? 4 : 16) ? e : NULL;
}

/*
 * The table is full and traffic needs a new neighbour: a learned one that
 * no traffic has used since it was last confirmed (heard from, say, in a
 * sweep of ARP requests) makes room. A bounded look, from where the last
 * one stopped: a full table of busy neighbours is searched a slice at a
 * time.
 */
static void evict_unused(struct rxp_neigh_table *t)
{
	for (uint32_t k = 0; k < EVICT_LOOK; k++) {
		struct rxp_neigh *n = &t->slots[t->evict_next++ & t->mask];

		if (n->state == RXP_NEIGH_REACHABLE && !n->used) {
			rxp_neigh_remove(t, n);
			return;
		}
	}
}

static void neigh_output(struct rxp_stack *st, struct rxp_pkt *pkt, int ifidx, uint8_t family,
			 const uint8_t *next)
{
	struct rxp_neigh_table *t = &st->router->neigh;
	struct rxp_neigh *n = rxp_neigh_lookup(t, (uint16_t)ifidx, family, next);

	if (rxp_likely(n && (n->state == RXP_NEIGH_REACHABLE || n->state == RXP_NEIGH_STATIC))) {
		struct rxp_ncache_entry *e = ncache_slot(st, ifidx, family, next);

		e->gen = t->gen;	/* under the lock: no writer is changing it */
		e->family = family;
		e->ifidx = (uint16_t)ifidx;
		memcpy(e->addr, next, family == 4 ? 4 : 16);
		memcpy(e->mac, n->mac, 6);
		e->valid = true;
		n->used = true;
		send_to(st, pkt, n);
		return;
	}
	/* a port whose device went away: neither hold nor ask, there is nobody there */
	if (rxp_unlikely(st->txq[st->router->ifs[ifidx].port] &&
			 st->txq[st->router->ifs[ifidx].port]->port->down)) {
		rxp_drop(st, pkt, RXP_DROP_PORT_DOWN);
		return;
	}
	if (n && n->state == RXP_NEIGH_FAILED) {
		unreachable(st, pkt, family);
		return;
	}
	if (!n) {
		bool room = t->n_unresolved < t->max_entries >> RXP_NEIGH_UNRESOLVED_SHIFT;

		if (room && t->n_entries >= t->max_entries)
			evict_unused(t);
		if (!room ||
		    !(n = rxp_neigh_create(t, (uint16_t)ifidx, family, next, RXP_NEIGH_INCOMPLETE))) {
			rxp_drop(st, pkt, RXP_DROP_NEIGH_TABLE_FULL);
			return;
		}
		t->n_unresolved++;
		hold(st, n, pkt);
		solicit(st, n);
		return;
	}
	hold(st, n, pkt);
}

bool rxp_neigh_known(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *next,
		     uint8_t mac[6])
{
	struct rxp_neigh_table *t = &st->router->neigh;
	const struct rxp_ncache_entry *e = ncache_hit(st, ifidx, family, next);
	const struct rxp_neigh *n;
	bool known;

	/* the worker's own copy first, as rxp_neigh_output looks: the lock only on a miss */
	if (e) {
		memcpy(mac, e->mac, 6);
		return true;
	}
	rxp_neigh_lock(st);
	n = rxp_neigh_lookup(t, (uint16_t)ifidx, family, next);
	known = n && (n->state == RXP_NEIGH_REACHABLE || n->state == RXP_NEIGH_STATIC);
	if (known)
		memcpy(mac, n->mac, 6);
	rxp_neigh_unlock(st);
	return known;
}

void rxp_neigh_output(struct rxp_stack *st, struct rxp_pkt *pkt, int ifidx, uint8_t family,
		      const uint8_t *next)
{
	const struct rxp_ncache_entry *e = ncache_hit(st, ifidx, family, next);

	if (rxp_likely(e)) {
		send_mac(st, pkt, (uint16_t)ifidx, family, e->mac);
		return;
	}
	rxp_neigh_lock(st);
	neigh_output(st, pkt, ifidx, family, next);
	rxp_neigh_unlock(st);
}

void rxp_neigh_output_via(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t nh)
{
	struct rxp_adj *adj = &st->adj[nh];
	struct rxp_neigh_table *t = &st->router->neigh;
	const struct rxp_nexthop *nhp;
	struct rxp_neigh *n;

	if (adj->neigh && adj->gen == rxp_neigh_gen(t)) {
		rxp_adj_output(st, pkt, adj);
		return;
	}
	nhp = &st->router->nh[nh];
	rxp_neigh_lock(st);
	n = rxp_neigh_lookup(t, nhp->ifidx, nhp->family, nhp->gw);
	if (n && (n->state == RXP_NEIGH_REACHABLE || n->state == RXP_NEIGH_STATIC)) {
		const struct rxp_l3if *ifp = &st->router->ifs[n->ifidx];

		adj->neigh = n;
		adj->gen = t->gen;	/* under the lock: no writer is changing it */
		n->used = true;
		adj->port = ifp->port;
		adj->ifidx = n->ifidx;
		adj->mtu = ifp->mtu;
		adj->hlen = ifp->vlan ? RXP_ETH_HLEN + RXP_VLAN_HLEN : RXP_ETH_HLEN;
		memset(adj->hdr, 0, sizeof(adj->hdr));
		rxp_eth_write(adj->hdr + sizeof(adj->hdr) - adj->hlen, n->mac, ifp->mac, ifp->vlan,
			      ethertype_of(n->family));
		rxp_neigh_unlock(st);
		rxp_adj_output(st, pkt, adj);
		return;
	}
	neigh_output(st, pkt, nhp->ifidx, nhp->family, nhp->gw);
	rxp_neigh_unlock(st);
}

/* @n answered: reachable for another lifetime. */
static void confirm(struct rxp_stack *st, struct rxp_neigh *n)
{
	/*
	 * Cached adjacencies are rebuilt (the MAC may have changed), and the
	 * traffic that still goes to @n marks it used again on the way.
	 */
	rxp_neigh_gen_bump(&st->router->neigh);
	n->state = RXP_NEIGH_REACHABLE;
	n->probes = 0;
	n->used = false;
	n->deadline_ns = st->now_ns + st->router->neigh_reachable_ns;
}

static void neigh_learn(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr,
			const uint8_t mac[6], bool create, bool confirmed)
{
	struct rxp_neigh_table *t = &st->router->neigh;
	struct rxp_neigh *n = rxp_neigh_lookup(t, (uint16_t)ifidx, family, addr);

	/* no neighbour has a group's address, none of nobody's, and none ours */
	if (!rxp_eth_is_unicast(mac) ||
	    rxp_router_has_mac(st->router, mac))
		return;
	if (!n) {
		/*
		 * Heard, not needed yet: a quarter of the table stays for the
		 * neighbours traffic needs (and evict_unused() makes more).
		 */
		if (!create || t->n_entries >= t->max_entries - t->max_entries / 4)
			return;
		n = rxp_neigh_create(t, (uint16_t)ifidx, family, addr, RXP_NEIGH_INCOMPLETE);
		if (!n)
			return;	/* full: we answer, but do not remember */
	}
	if (n->state == RXP_NEIGH_STATIC)
		return;		/* configured entries are not overridden */
	/* an ARP reply confirms only when we asked: resolving, or a probe out */
	if (family == 4 && confirmed && n->state == RXP_NEIGH_REACHABLE && !n->probes)
		confirmed = false;
	if (confirmed || n->state != RXP_NEIGH_REACHABLE) {
		memcpy(n->mac, mac, 6);
		confirm(st, n);
	} else if (memcmp(n->mac, mac, 6)) {
		/* unasked, but a new MAC: used from now on, the lifetime unchanged */
		memcpy(n->mac, mac, 6);
		rxp_neigh_gen_bump(t);
	}
	for (unsigned i = 0; i < n->n_held; i++)
		send_to(st, n->held[i], n);
	held_gone(st, n);
}

void rxp_neigh_learn(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr,
		     const uint8_t mac[6], bool create, bool confirmed)
{
	rxp_neigh_lock(st);
	neigh_learn(st, ifidx, family, addr, mac, create, confirmed);
	rxp_neigh_unlock(st);
}

void rxp_neigh_learn_advert(struct rxp_stack *st, int ifidx, const uint8_t *addr,
			    const uint8_t mac[6], bool override, bool solicited)
{
	struct rxp_neigh *n;

	rxp_neigh_lock(st);
	n = rxp_neigh_lookup(&st->router->neigh, (uint16_t)ifidx, 6, addr);
	if (n && (n->state == RXP_NEIGH_INCOMPLETE || override || !memcmp(n->mac, mac, 6)))
		neigh_learn(st, ifidx, 6, addr, mac, false, solicited);
	rxp_neigh_unlock(st);
}

void rxp_neigh_confirm(struct rxp_stack *st, int ifidx, const uint8_t *addr)
{
	struct rxp_neigh *n;

	rxp_neigh_lock(st);
	n = rxp_neigh_lookup(&st->router->neigh, (uint16_t)ifidx, 6, addr);
	if (n && n->state == RXP_NEIGH_REACHABLE)
		confirm(st, n);
	rxp_neigh_unlock(st);
}

static int neigh_set(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr,
		     const uint8_t mac[6], bool kernel)
{
	struct rxp_neigh_table *t;
	struct rxp_neigh *n;

	if (!st->router || ifidx < 0 || (unsigned)ifidx >= st->router->n_ifs)
		return -EINVAL;
	t = &st->router->neigh;
	n = rxp_neigh_lookup(t, (uint16_t)ifidx, family, addr);
	if (kernel && n && n->state == RXP_NEIGH_STATIC && !n->from_kernel)
		return -EEXIST;	/* a configured neighbour wins over the kernel's */
	if (!n)
		n = rxp_neigh_create(t, (uint16_t)ifidx, family, addr, RXP_NEIGH_STATIC);
	if (!n)
		return -ENOSPC;
	rxp_neigh_gen_bump(t);	/* the MAC may have changed: cached adjacencies are rebuilt */
	memcpy(n->mac, mac, 6);
	n->state = RXP_NEIGH_STATIC;
	n->from_kernel = kernel;
	n->probes = 0;
	/* what waited for this neighbour goes now */
	for (unsigned i = 0; i < n->n_held; i++)
		send_to(st, n->held[i], n);
	held_gone(st, n);
	rxp_stack_flush(st);
	return 0;
}

int rxp_stack_neigh_set(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr,
			const uint8_t mac[6], bool kernel)
{
	int ret;

	if (!st->router)
		return -EINVAL;
	rxp_neigh_lock(st);
	ret = neigh_set(st, ifidx, family, addr, mac, kernel);
	rxp_neigh_unlock(st);
	return ret;
}

struct ageing_ctx {
	uint64_t latest;	/* no learned entry lives past this */
};

static void clamp_one(void *arg, struct rxp_neigh *n)
{
	const struct ageing_ctx *c = arg;

	if (n->state == RXP_NEIGH_REACHABLE && n->deadline_ns > c->latest)
		n->deadline_ns = c->latest;
}

void rxp_stack_neigh_set_ageing(struct rxp_stack *st, uint64_t ns)
{
	struct ageing_ctx c = { .latest = st->now_ns + ns };

	if (!st->router)
		return;
	rxp_neigh_lock(st);
	st->router->neigh_reachable_ns = ns;
	rxp_neigh_walk(&st->router->neigh, clamp_one, &c);
	rxp_neigh_unlock(st);
}

static int neigh_del(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr,
		     bool kernel)
{
	struct rxp_neigh *n;

	if (!st->router || ifidx < 0 || (unsigned)ifidx >= st->router->n_ifs)
		return -EINVAL;
	n = rxp_neigh_lookup(&st->router->neigh, (uint16_t)ifidx, family, addr);
	if (!n)
		return -ENOENT;
	if (kernel && !n->from_kernel)
		return 0;	/* configured or learned here: not the kernel's to take */
	for (unsigned i = 0; i < n->n_held; i++)
		rxp_drop(st, n->held[i], RXP_DROP_NEIGH_UNRESOLVED);
	held_gone(st, n);
	rxp_neigh_remove(&st->router->neigh, n);
	return 0;
}

int rxp_stack_neigh_del(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr,
			bool kernel)
{
	int ret;

	if (!st->router)
		return -EINVAL;
	rxp_neigh_lock(st);
	ret = neigh_del(st, ifidx, family, addr, kernel);
	rxp_neigh_unlock(st);
	return ret;
}

/* No answer: every held packet is dropped and its sender told. */
static void fail(struct rxp_stack *st, struct rxp_neigh *n)
{
	for (unsigned i = 0; i < n->n_held; i++)
		unreachable(st, n->held[i], n->family);
	held_gone(st, n);
	n->state = RXP_NEIGH_FAILED;
	n->deadline_ns = st->now_ns + RXP_NEIGH_FAILED_NS;
}

struct walk_ctx {
	struct rxp_stack *st;
	bool give_up;		/* drain: fail everything still resolving */
	bool release_all;	/* the run stops: drop held packets quietly and empty the table */
	uint64_t dropped;
	uint32_t unresolved;	/* entries left resolving or failed */
};

static void timer_one(void *arg, struct rxp_neigh *n)
{
	struct walk_ctx *c = arg;
	struct rxp_stack *st = c->st;

	if (c->release_all) {
		for (unsigned i = 0; i < n->n_held; i++)
			rxp_drop(st, n->held[i], RXP_DROP_STOPPED);
		c->dropped += n->n_held;
		held_gone(st, n);
		rxp_neigh_remove(&st->router->neigh, n);
		return;
	}
	switch (n->state) {
	case RXP_NEIGH_INCOMPLETE:
		if (c->give_up) {
			/*
			 * The inputs are done and no answer can come: what time would
			 * bring happens now, the requests left, then the failure.
			 */
			while (n->probes < RXP_NEIGH_PROBES)
				solicit(st, n);
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
	case RXP_NEIGH_REACHABLE:
		if (st->now_ns >= n->deadline_ns) {
			rxp_neigh_remove(&st->router->neigh, n);
			return;	/* another entry may have moved into @n: the walk visits it */
		}
		if (refresh_due(st, n))
			request(st, n, n->mac);
		break;
	case RXP_NEIGH_FAILED:
		if (st->now_ns >= n->deadline_ns) {
			rxp_neigh_remove(&st->router->neigh, n);
			return;
		}
		break;
	default:
		break;
	}
	if (n->state == RXP_NEIGH_INCOMPLETE || n->state == RXP_NEIGH_FAILED)
		c->unresolved++;
}

void rxp_stack_tick(struct rxp_stack *st, uint64_t now_ns)
{
	struct walk_ctx c = { .st = st };

	st->now_ns = now_ns;
	if (st->filter || st->frags)
		rxp_filter_tick(st);
	if (!st->router || now_ns < st->next_tick_ns)
		return;
	st->next_tick_ns = now_ns + TICK_NS;
	if (st->timer_owner) {	/* one worker runs the shared table's timers */
		rxp_neigh_lock(st);
		rxp_neigh_walk(&st->router->neigh, timer_one, &c);
		st->router->neigh.n_unresolved = c.unresolved;
		rxp_ra_tick(st);
		rxp_neigh_unlock(st);
	}
	rxp_reasm_expire(st, false, true, RXP_DROP_REASM_TIMEOUT);
	rxp_stack_flush(st);
}

/* Ends whatever is held for a neighbour or a datagram: answered (@give_up) or quietly. */
static uint64_t end_held(struct rxp_stack *st, bool give_up)
{
	struct walk_ctx c = { .st = st, .give_up = give_up, .release_all = !give_up };

	if (!st->router)
		return 0;
	rxp_neigh_lock(st);
	rxp_neigh_walk(&st->router->neigh, timer_one, &c);
	rxp_neigh_unlock(st);
	c.dropped += rxp_reasm_expire(st, true, give_up,
				      give_up ? RXP_DROP_REASM_TIMEOUT : RXP_DROP_STOPPED);
	rxp_stack_flush(st);
	return c.dropped;
}

uint64_t rxp_stack_drain(struct rxp_stack *st)
{
	return end_held(st, true) + rxp_filter_frags_end(st, RXP_DROP_FILTER_FRAG);
}

uint64_t rxp_stack_release(struct rxp_stack *st)
{
	return end_held(st, false) + rxp_filter_frags_end(st, RXP_DROP_STOPPED);
}

struct port_down_ctx {
	struct rxp_stack *st;
	uint16_t port;
	uint64_t dropped;
};

static void port_down_one(void *arg, struct rxp_neigh *n)
{
	struct port_down_ctx *c = arg;
	struct rxp_stack *st = c->st;

	if (st->router->ifs[n->ifidx].port != c->port || n->state == RXP_NEIGH_STATIC)
		return;
	for (unsigned i = 0; i < n->n_held; i++)
		rxp_drop(st, n->held[i], RXP_DROP_PORT_DOWN);
	c->dropped += n->n_held;
	held_gone(st, n);
	rxp_neigh_remove(&st->router->neigh, n);
}

uint64_t rxp_stack_port_down(struct rxp_stack *st, uint16_t port)
{
	struct port_down_ctx c = { .st = st, .port = port };

	if (!st->router)
		return 0;
	rxp_neigh_lock(st);
	rxp_neigh_walk(&st->router->neigh, port_down_one, &c);
	rxp_neigh_unlock(st);
	return c.dropped;
}

void rxp_stack_close(struct rxp_stack *st)
{
	rxp_stack_flush(st);
	rxp_stack_release(st);
	if (st->shared == &st->own)
		rxp_ratelimit_unshare(&st->own.icmp_limit);
}
