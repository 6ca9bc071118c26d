/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include "arp.h"
#include "capture.h"
#include "eth.h"
#include "filter.h"
#include "host.h"
#include "icmp.h"
#include "ip4.h"
#include "ip4_opt.h"
#include "ip4_route.h"
#include "ip6.h"
#include "ip6_route.h"
#include "l4.h"
#include "local.h"

static const char *const drop_names[RXP_DROP_MAX] = {
#define X(id, name, help) [RXP_DROP_##id] = name,
	RXP_DROP_REASONS(X)
#undef X
};

static const char *const drop_helps[RXP_DROP_MAX] = {
#define X(id, name, help) [RXP_DROP_##id] = help,
	RXP_DROP_REASONS(X)
#undef X
};

static const char *const sink_names[RXP_SINK_MAX] = {
	[RXP_SINK_UDP4] = "udp4", [RXP_SINK_TCP4] = "tcp4", [RXP_SINK_OTHER4] = "other4",
	[RXP_SINK_UDP6] = "udp6", [RXP_SINK_TCP6] = "tcp6", [RXP_SINK_OTHER6] = "other6",
	[RXP_SINK_ECHO4] = "echo4", [RXP_SINK_ARP] = "arp", [RXP_SINK_ECHO6] = "echo6",
	[RXP_SINK_ND] = "nd",
};

const char *rxp_drop_name(enum rxp_drop_reason reason)
{
	return (unsigned)reason < RXP_DROP_MAX ? drop_names[reason] : "unknown";
}

const char *rxp_drop_help(enum rxp_drop_reason reason)
{
	return (unsigned)reason < RXP_DROP_MAX ? drop_helps[reason] : "";
}

const char *rxp_sink_name(enum rxp_sink_class c)
{
	return (unsigned)c < RXP_SINK_MAX ? sink_names[c] : "unknown";
}

struct rxp_rx_tuning rxp_rx_tuning_default(void)
{
	return (struct rxp_rx_tuning){
		.handoff = RXP_HANDOFF_LIST,
		.prefetch_lines = 2,
		.prefetch_ahead = 4,
		.copy = false,
		.copybreak = UINT16_MAX,
		.budget = RXP_BUDGET_DEFAULT,
	};
}

int rxp_stack_init(struct rxp_stack *st, const struct rxp_rx_tuning *tuning,
		   struct rxp_pool_cache *cache)
{
	if (tuning->budget == 0 || tuning->budget > RXP_BURST_MAX || tuning->prefetch_lines > 2 ||
	    tuning->prefetch_ahead > 16 || !cache)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->tuning = *tuning;
	st->cache = cache;
	st->timer_owner = true;
	st->shared = &st->own;
	rxp_ratelimit_init(&st->own.icmp_limit, RXP_ICMP_RATE_DEFAULT, RXP_ICMP_BURST_DEFAULT);
	st->own.ra_rng = (uint64_t)(uintptr_t)st ^ 0x9e3779b97f4a7c15ull;	/* nonzero, any */
	/* IPv4 identifications start anywhere, so runs after each other do not repeat them (RFC 6864) */
	if (getrandom(&st->ip_id, sizeof(st->ip_id), GRND_NONBLOCK) != sizeof(st->ip_id))
		st->ip_id = (uint16_t)getpid();
	if (getrandom(&st->frag6_id, sizeof(st->frag6_id), GRND_NONBLOCK) != sizeof(st->frag6_id))
		st->frag6_id = (uint32_t)getpid() << 16;
	return 0;
}

int rxp_stack_add_port(struct rxp_stack *st, uint16_t id, const uint8_t mac[6],
		       struct rxp_queue *txq)
{
	if (id >= RXP_STACK_PORTS_MAX)
		return -EINVAL;
	memcpy(st->port_mac[id], mac, 6);
	st->txq[id] = txq;
	return 0;
}

int rxp_stack_share(struct rxp_stack *st, struct rxp_stack *first)
{
	int ret;

	if (st == first || first->shared != &first->own)
		return -EINVAL;
	ret = rxp_ratelimit_share(&first->own.icmp_limit);
	if (ret)
		return ret;
	st->shared = &first->own;
	return 0;
}

void rxp_stack_set_router(struct rxp_stack *st, struct rxp_router *router)
{
	/* the advertisement timers are those of the interfaces of the tables set before */
	if (router != st->router)
		memset(st->own.ra, 0, sizeof(st->own.ra));
	st->router = router;
}

void rxp_stack_set_capture(struct rxp_stack *st, struct rxp_capture *cap)
{
	st->capture = cap;
}

uint64_t rxp_stack_drops_total(const struct rxp_stack_stats *s)
{
	uint64_t sum = 0;

	for (int i = 0; i < RXP_DROP_MAX; i++)
		sum += s->drops[i];
	return sum;
}

uint64_t rxp_stack_delivered_total(const struct rxp_stack_stats *s)
{
	uint64_t sum = 0;

	for (int i = 0; i < RXP_SINK_MAX; i++)
		sum += s->delivered[i];
	return sum;
}

/*
 * A drop counts against the queue of the packet's port that this worker
 * polls, whenever it happens: in the poll, at a timer or at the drain.
 */
static inline void count_rx_dropped(struct rxp_stack *st, uint16_t port, uint64_t n)
{
	if (st->txq[port])
		st->txq[port]->stats.rx_dropped += n;
}

void rxp_stack_drop(struct rxp_stack *st, struct rxp_pkt *pkt, enum rxp_drop_reason reason)
{
	if (rxp_unlikely(st->capture))
		rxp_capture_drop(st->capture, pkt, reason);
	st->stats.drops[reason]++;
	st->port_drops[pkt->port][reason]++;
	st->stats.dropped++;
	count_rx_dropped(st, pkt->port, 1);
	rxp_pool_free(st->cache, pkt);
}

void rxp_stack_take_refused(struct rxp_stack *st, struct rxp_queue *q)
{
	static const enum rxp_drop_reason reason[RXP_RX_REFUSED_MAX] = {
		[RXP_RX_REFUSED_TOO_LONG] = RXP_DROP_FRAME_TOO_LONG,
		[RXP_RX_REFUSED_CUT] = RXP_DROP_CAPTURE_CUT,
	};
	uint16_t port = q->port->id;

	for (unsigned k = 0; k < RXP_RX_REFUSED_MAX; k++) {
		uint32_t n = q->rx_refused[k];

		q->rx_refused[k] = 0;
		st->stats.in_packets += n;
		st->stats.drops[reason[k]] += n;
		st->port_drops[port][reason[k]] += n;
		st->stats.dropped += n;
		q->stats.rx_dropped += n;
	}
}

/* Counts the dropped packets of a vector by reason and frees them in one go. */
static void drop_vector(struct rxp_stack *st, struct rxp_pkt **pkts, uint16_t n)
{
	if (rxp_unlikely(st->capture) && n)
		rxp_capture_drop_vector(st->capture, pkts, n);
	for (uint16_t i = 0; i < n; i++) {
		st->stats.drops[pkts[i]->drop_reason]++;
		st->port_drops[pkts[i]->port][pkts[i]->drop_reason]++;
		count_rx_dropped(st, pkts[i]->port, 1);
	}
	st->stats.dropped += n;
	rxp_pool_free_bulk(st->cache, pkts, n);
}

/* The host sink: transport checks, then counted by class and consumed. */
static void sink_vector(struct rxp_stack *st, struct rxp_pkt **pkts, uint16_t n,
			struct rxp_pkt **drop, uint16_t *n_drop)
{
	struct rxp_stack_stats *s = &st->stats;
	uint64_t delivered_bytes = 0;
	uint16_t n_done = 0;

	for (uint16_t i = 0; i < n; i++) {
		struct rxp_pkt *pkt = pkts[i];
		enum rxp_sink_class cls;

		if (rxp_l4_input(pkt, &cls) == RXP_NEXT_DELIVER) {
			s->delivered[cls]++;
			delivered_bytes += pkt->len;
			pkts[n_done++] = pkt;	/* n_done <= i: compacts in place */
		} else {
			drop[(*n_drop)++] = pkt;
		}
	}
	s->delivered_bytes += delivered_bytes;
	rxp_pool_free_bulk(st->cache, pkts, n_done);
}

/*
 * The first 8 bytes of a frame to a port, from a station: the destination
 * MAC is the port's, and the group bit of the source MAC (the first bit on
 * the wire of byte 6) is clear. A frame passes when its first 8 bytes,
 * XORed with @value, are zero under @mask.
 */
struct mac_test {
	uint64_t value, mask;
};

static struct mac_test mac_test_of(const uint8_t mac[6])
{
	uint8_t value[8] = { 0 }, mask[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0 };
	struct mac_test t;

	memcpy(value, mac, 6);
	memcpy(&t.value, value, 8);
	memcpy(&t.mask, mask, 8);
	return t;
}

/*
 * The frames a router sees most, recognised in one pass with their fields
 * in registers: untagged, unicast to the port's address from a station
 * (@to_us), on a port with an interface (@ifidx), and then either IPv4 without options, with a
 * correct header checksum, not a fragment; or IPv6 whose payload fits the
 * frame. Sets what rxp_eth_input() and rxp_ip4_input() or rxp_ip6_input()
 * would set and returns RXP_NEXT_IP4 (with the destination in *@dst4) or
 * RXP_NEXT_IP6; anything else returns RXP_NEXT_DROP untouched and takes the
 * general path, which names the reason if it drops.
 */
static rxp_always_inline enum rxp_next ip_fast(struct rxp_pkt *pkt, struct mac_test to_us,
					       uint16_t ifidx, uint32_t *dst4)
{
	const struct rxp_eth_hdr *eth = rxp_pkt_ceth(pkt);
	const struct rxp_ip4_hdr *ip = (const struct rxp_ip4_hdr *)(eth + 1);
	const struct rxp_ip6_hdr *ip6 = (const struct rxp_ip6_hdr *)(eth + 1);
	uint32_t len = pkt->len;
	uint64_t head;
	uint16_t type, tot_len;

	if (rxp_unlikely(len < RXP_ETH_HLEN + RXP_IP4_HLEN))
		return RXP_NEXT_DROP;
	memcpy(&head, eth, 8);	/* the destination MAC, and the source's first two octets */
	type = eth->type;
	if (rxp_unlikely(((head ^ to_us.value) & to_us.mask) != 0))
		return RXP_NEXT_DROP;
	if (type == htons(RXP_ETHERTYPE_IP6)) {
		uint16_t plen;

		if (rxp_unlikely(len < RXP_ETH_HLEN + RXP_IP6_HLEN || rxp_ip6_version(ip6) != 6))
			return RXP_NEXT_DROP;
		plen = ntohs(ip6->payload_len);
		if (rxp_unlikely(RXP_IP6_HLEN + (uint32_t)plen > len - RXP_ETH_HLEN))
			return RXP_NEXT_DROP;
		pkt->flags = RXP_PKT_F_IP6;
		pkt->l3_off = RXP_ETH_HLEN;
		pkt->vlan_tci = 0;
		pkt->ifidx = ifidx;
		pkt->l3_len = (uint16_t)(RXP_IP6_HLEN + plen);
		pkt->l4_off = RXP_ETH_HLEN + RXP_IP6_HLEN;
		pkt->l4_proto = ip6->next_hdr;
		return RXP_NEXT_IP6;
	}
	if (rxp_unlikely(type != htons(RXP_ETHERTYPE_IP4) || ip->ver_ihl != RXP_IP4_VER_IHL_NO_OPTS ||
			 !rxp_ip4_csum_ok(ip, 5)))
		return RXP_NEXT_DROP;
	tot_len = ntohs(ip->tot_len);
	if (rxp_unlikely(tot_len < RXP_IP4_HLEN || tot_len > len - RXP_ETH_HLEN ||
			 (ip->frag_off & htons(RXP_IP4_MF | RXP_IP4_OFFMASK))))
		return RXP_NEXT_DROP;
	pkt->flags = 0;
	pkt->l3_off = RXP_ETH_HLEN;
	pkt->vlan_tci = 0;
	pkt->ifidx = ifidx;
	pkt->l3_len = tot_len;
	pkt->l4_off = RXP_ETH_HLEN + RXP_IP4_HLEN;
	pkt->l4_proto = ip->proto;
	*dst4 = ntohl(ip->dst);
	return RXP_NEXT_IP4;
}

/* For the router, an IPv4 header with options has them walked before it is routed. */
static inline bool ip4_options_ok(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	return !st->router || pkt->l4_off - pkt->l3_off == RXP_IP4_HLEN ||
	       rxp_ip4_options_ok(st, pkt);
}

/*
 * Every other frame: Ethernet, then the network header's validation, as
 * ip_fast() answers (RXP_NEXT_IP4 or RXP_NEXT_IP6 once it passes; ARP;
 * RXP_NEXT_DROP with the reason set). Out of line, so that the loop around
 * ip_fast() keeps its registers.
 */
static rxp_noinline enum rxp_next input_general(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	enum rxp_next next = rxp_eth_input(st, pkt);

	if (next == RXP_NEXT_IP4)
		return rxp_ip4_input(pkt) == RXP_NEXT_L4 && ip4_options_ok(st, pkt) ? RXP_NEXT_IP4
										 : RXP_NEXT_DROP;
	if (next == RXP_NEXT_IP6)
		return rxp_ip6_input(pkt) == RXP_NEXT_L4 ? RXP_NEXT_IP6 : RXP_NEXT_DROP;
	return next;
}

void rxp_stack_input_list(struct rxp_stack *st, struct rxp_pkt **pkts, uint16_t n)
{
	struct rxp_pkt *ip4[RXP_BURST_MAX], *ip6[RXP_BURST_MAX], *arp[RXP_BURST_MAX];
	struct rxp_pkt *l4[RXP_BURST_MAX], *drop[RXP_BURST_MAX];
	uint32_t dst4[RXP_BURST_MAX];
	uint16_t arp_at[RXP_BURST_MAX];	/* per ARP frame: the IPv4 packets that came before it */
	uint16_t n_ip4 = 0, n_ip6 = 0, n_arp = 0, n_l4 = 0, n_drop = 0, routed = 0;
	unsigned lines = st->tuning.prefetch_lines, ahead = st->tuning.prefetch_ahead;
	uint64_t bytes = 0;

	/* a poll's packets come from one port: its address and interface, once */
	uint16_t fast_port = n ? pkts[0]->port : 0;
	int fast_if = st->router && fast_port < RXP_PORTS_MAX ? st->router->port_if[fast_port] : -1;
	struct mac_test to_us = mac_test_of(st->port_mac[fast_port < RXP_STACK_PORTS_MAX ? fast_port : 0]);

	if (fast_if < 0)
		fast_port = UINT16_MAX;	/* no fast path: no router, or no interface */
	if (rxp_unlikely(st->capture))
		rxp_capture_rx(st->capture, pkts, n);
	rxp_filter_enter(st);	/* tracking entries are read until the poll's end */
	/*
	 * Ethernet, and IPv4 or IPv6 validated in the same pass while the
	 * header is in hand (an IPv4 destination kept for the FIB), with the
	 * headers of packet i + ahead prefetched while packet i is parsed.
	 */
	if (lines)
		for (uint16_t i = 0; i < RXP_MIN((uint16_t)ahead, n); i++)
			rxp_pkt_prefetch(pkts[i], lines);
	/* packets below this one have one to prefetch ahead of them */
	unsigned prefetch_end = lines && n > ahead ? n - ahead : 0;

	for (uint16_t i = 0; i < n; i++) {
		struct rxp_pkt *pkt = pkts[i];
		enum rxp_next next;

		if (i < prefetch_end)
			rxp_pkt_prefetch(pkts[i + ahead], lines);
		bytes += pkt->len;
		next = rxp_likely(pkt->port == fast_port) ?
		       ip_fast(pkt, to_us, (uint16_t)fast_if, &dst4[n_ip4]) : RXP_NEXT_DROP;
		if (rxp_unlikely(next == RXP_NEXT_DROP)) {
			next = input_general(st, pkt);
			if (next == RXP_NEXT_IP4)
				dst4[n_ip4] = rxp_ip4_dst(pkt);
		}
		switch (next) {
		case RXP_NEXT_IP4:	/* validated */
			ip4[n_ip4++] = pkt;
			break;
		case RXP_NEXT_IP6:	/* validated */
			ip6[n_ip6++] = pkt;
			break;
		case RXP_NEXT_ARP:
			arp_at[n_arp] = n_ip4;
			arp[n_arp++] = pkt;
			break;
		default:
			drop[n_drop++] = pkt;
			break;
		}
	}
	st->stats.in_packets += n;
	st->stats.in_bytes += bytes;

	/*
	 * ARP in arrival order: what a frame teaches applies to the IPv4
	 * packets after it, not to those before it, which are routed first.
	 */
	for (uint16_t i = 0; i < n_arp; i++) {
		if (st->router && arp_at[i] > routed) {
			rxp_ip4_route_vector(st, ip4 + routed, dst4 + routed, (uint16_t)(arp_at[i] - routed));
			routed = arp_at[i];
		}
		rxp_arp_input(st, arp[i]);
	}
	/* IPv4: route the whole vector, or what ARP left of it (or sink it, with no router). */
	if (st->router)
		rxp_ip4_route_vector(st, ip4 + routed, dst4 + routed, (uint16_t)(n_ip4 - routed));
	else
		for (uint16_t i = 0; i < n_ip4; i++)
			l4[n_l4++] = ip4[i];
	if (st->router)
		rxp_ip6_route_vector(st, ip6, n_ip6);
	else
		for (uint16_t i = 0; i < n_ip6; i++)
			l4[n_l4++] = ip6[i];
	sink_vector(st, l4, n_l4, drop, &n_drop);
	drop_vector(st, drop, n_drop);
	rxp_stack_flush(st);
	rxp_filter_leave(st);
}

void rxp_sink_one(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	enum rxp_sink_class cls = RXP_SINK_OTHER4;

	if (rxp_l4_input(pkt, &cls) != RXP_NEXT_DELIVER) {
		rxp_drop(st, pkt, (enum rxp_drop_reason)pkt->drop_reason);
		return;
	}
	rxp_count_delivered(st, pkt, cls);
	rxp_host_take(st, pkt);	/* to the port's host path (TAP), if it has one */
}

void rxp_stack_input_one(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	struct rxp_stack_stats *s = &st->stats;
	enum rxp_next next;

	if (rxp_unlikely(st->capture))
		rxp_capture_rx(st->capture, &pkt, 1);
	rxp_filter_enter(st);
	s->in_packets++;
	s->in_bytes += pkt->len;
	next = rxp_eth_input(st, pkt);
	if (next == RXP_NEXT_IP4) {
		next = rxp_ip4_input(pkt);
		if (next == RXP_NEXT_L4 && !ip4_options_ok(st, pkt))
			next = RXP_NEXT_DROP;
		if (next == RXP_NEXT_L4 && st->router) {
			rxp_ip4_route(st, pkt);
			goto out;
		}
	} else if (next == RXP_NEXT_IP6) {
		next = rxp_ip6_input(pkt);
		if (next == RXP_NEXT_L4 && st->router) {
			rxp_ip6_route(st, pkt);
			goto out;
		}
	} else if (next == RXP_NEXT_ARP) {
		rxp_arp_input(st, pkt);
		goto out;
	}
	if (next == RXP_NEXT_L4)
		rxp_sink_one(st, pkt);
	else
		rxp_stack_drop(st, pkt, (enum rxp_drop_reason)pkt->drop_reason);
out:
	/* one packet at a time all the way: it leaves before the next one comes in */
	if (st->tx_pending | st->host_pending)
		rxp_stack_flush(st);
	else if (rxp_unlikely(st->capture))
		rxp_capture_burst_end(st->capture);	/* what the flush would have done */
	rxp_filter_leave(st);
}
