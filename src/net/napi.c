/* SPDX-License-Identifier: MIT */
#include <string.h>
#include "rxpath/stack.h"

/*
 * Copy mode, as drivers worked before zero-copy receive: each frame up to
 * copybreak bytes is copied into a freshly allocated buffer and the receive
 * buffer goes straight back to the pool. Returns the packets that remain.
 */
static uint16_t copy_frames(struct rxp_stack *st, struct rxp_pkt **pkts, uint16_t n)
{
	uint16_t kept = 0;

	for (uint16_t i = 0; i < n; i++) {
		struct rxp_pkt *rx = pkts[i];
		struct rxp_pkt *copy;

		if (rx->len > st->tuning.copybreak) {
			pkts[kept++] = rx;
			continue;
		}
		copy = rxp_pool_alloc(st->cache);
		if (rxp_unlikely(!copy)) {
			rxp_stack_drop(st, rx, RXP_DROP_NO_BUFFER);
			continue;
		}
		copy->len = rx->len;
		copy->port = rx->port;
		copy->queue = rx->queue;
		copy->data_off = (uint16_t)rx->pool->data_off;
		memcpy(rxp_pkt_data(copy), rxp_pkt_data(rx), rx->len);
		rxp_pool_free(st->cache, rx);
		pkts[kept++] = copy;
	}
	return kept;
}

uint16_t rxp_napi_poll(struct rxp_queue *q, struct rxp_stack *st)
{
	const struct rxp_rx_tuning *t = &st->tuning;
	const struct rxp_port_ops *ops = q->port->ops;
	struct rxp_pkt *pkts[RXP_BURST_MAX];
	uint16_t n = ops->rx_burst(q, pkts, t->budget);
	uint16_t n_rx = n;

	if (rxp_unlikely(q->rx_refused[RXP_RX_REFUSED_TOO_LONG] | q->rx_refused[RXP_RX_REFUSED_CUT]))
		rxp_stack_take_refused(st, q);

	if (n) {
		st->stats.polls++;
		if (t->copy)
			n = copy_frames(st, pkts, n);
		if (t->handoff == RXP_HANDOFF_LIST) {
			rxp_stack_input_list(st, pkts, n);
		} else {
			unsigned lines = t->prefetch_lines, ahead = t->prefetch_ahead;

			if (lines)
				for (uint16_t i = 0; i < RXP_MIN((uint16_t)ahead, n); i++)
					rxp_pkt_prefetch(pkts[i], lines);
			for (uint16_t i = 0; i < n; i++) {
				if (lines && i + ahead < n)
					rxp_pkt_prefetch(pkts[i + ahead], lines);
				rxp_stack_input_one(st, pkts[i]);
			}
		}
	}
	ops->refill(q);
	ops->complete(q);
	return n_rx;
}
