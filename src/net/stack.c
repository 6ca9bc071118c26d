/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include "eth.h"
#include "ip4.h"
#include "ip6.h"
#include "l4.h"

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
	return 0;
}

int rxp_stack_add_port(struct rxp_stack *st, uint16_t id, const uint8_t mac[6])
{
	if (id >= RXP_STACK_PORTS_MAX)
		return -EINVAL;
	memcpy(st->port_mac[id], mac, 6);
	return 0;
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

void rxp_stack_drop(struct rxp_stack *st, struct rxp_pkt *pkt, enum rxp_drop_reason reason)
{
	st->stats.drops[reason]++;
	st->stats.dropped++;
	rxp_pool_free(st->cache, pkt);
}

/* Counts the dropped packets of a vector by reason and frees them in one go. */
static void drop_vector(struct rxp_stack *st, struct rxp_pkt **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		st->stats.drops[pkts[i]->drop_reason]++;
	st->stats.dropped += n;
	rxp_pool_free_bulk(st->cache, pkts, n);
}

void rxp_stack_input_list(struct rxp_stack *st, struct rxp_pkt **pkts, uint16_t n)
{
	struct rxp_pkt *ip4[RXP_BURST_MAX], *ip6[RXP_BURST_MAX], *l4[RXP_BURST_MAX];
	struct rxp_pkt *drop[RXP_BURST_MAX];
	uint16_t n_ip4 = 0, n_ip6 = 0, n_l4 = 0, n_drop = 0, n_done = 0;
	unsigned lines = st->tuning.prefetch_lines, ahead = st->tuning.prefetch_ahead;
	struct rxp_stack_stats *s = &st->stats;
	uint64_t bytes = 0, delivered_bytes = 0;

	/* Ethernet, with the headers of packet i + ahead prefetched while packet i is parsed. */
	if (lines)
		for (uint16_t i = 0; i < RXP_MIN((uint16_t)ahead, n); i++)
			rxp_pkt_prefetch(pkts[i], lines);
	for (uint16_t i = 0; i < n; i++) {
		struct rxp_pkt *pkt = pkts[i];

		if (lines && i + ahead < n)
			rxp_pkt_prefetch(pkts[i + ahead], lines);
		bytes += pkt->len;
		switch (rxp_eth_input(st, pkt)) {
		case RXP_NEXT_IP4:
			ip4[n_ip4++] = pkt;
			break;
		case RXP_NEXT_IP6:
			ip6[n_ip6++] = pkt;
			break;
		default:
			drop[n_drop++] = pkt;
			break;
		}
	}
	s->in_packets += n;
	s->in_bytes += bytes;

	for (uint16_t i = 0; i < n_ip4; i++) {
		if (rxp_ip4_input(ip4[i]) == RXP_NEXT_L4)
			l4[n_l4++] = ip4[i];
		else
			drop[n_drop++] = ip4[i];
	}
	for (uint16_t i = 0; i < n_ip6; i++) {
		if (rxp_ip6_input(ip6[i]) == RXP_NEXT_L4)
			l4[n_l4++] = ip6[i];
		else
			drop[n_drop++] = ip6[i];
	}

	/* The sink: count by class; delivered packets are consumed here. */
	for (uint16_t i = 0; i < n_l4; i++) {
		struct rxp_pkt *pkt = l4[i];
		enum rxp_sink_class cls;

		if (rxp_l4_input(pkt, &cls) == RXP_NEXT_DELIVER) {
			s->delivered[cls]++;
			delivered_bytes += pkt->len;
			l4[n_done++] = pkt;	/* n_done <= i: compacts in place */
		} else {
			drop[n_drop++] = pkt;
		}
	}
	s->delivered_bytes += delivered_bytes;
	rxp_pool_free_bulk(st->cache, l4, n_done);
	drop_vector(st, drop, n_drop);
}

void rxp_stack_input_one(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	struct rxp_stack_stats *s = &st->stats;
	enum rxp_sink_class cls = RXP_SINK_OTHER4;
	enum rxp_next next;

	s->in_packets++;
	s->in_bytes += pkt->len;
	next = rxp_eth_input(st, pkt);
	if (next == RXP_NEXT_IP4)
		next = rxp_ip4_input(pkt);
	else if (next == RXP_NEXT_IP6)
		next = rxp_ip6_input(pkt);
	if (next == RXP_NEXT_L4)
		next = rxp_l4_input(pkt, &cls);
	if (next == RXP_NEXT_DELIVER) {
		s->delivered[cls]++;
		s->delivered_bytes += pkt->len;
		rxp_pool_free(st->cache, pkt);
	} else {
		rxp_stack_drop(st, pkt, (enum rxp_drop_reason)pkt->drop_reason);
	}
}
