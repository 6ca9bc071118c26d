/* SPDX-License-Identifier: MIT */
/* Egress: packets gathered per port during a poll, sent with one tx_burst each. */
#include <string.h>
#include "capture.h"
#include "host.h"
#include "out.h"

static void flush_port(struct rxp_stack *st, unsigned port)
{
	struct rxp_txv *v = &st->txv[port];
	struct rxp_queue *q = st->txq[port];
	uint16_t sent = 0;

	if (q) {
		/* before: once handed over, the buffers are the driver's */
		if (rxp_unlikely(st->capture))
			rxp_capture_tx(st->capture, (uint16_t)port, v->pkts, v->n);
		sent = rxp_tx_burst(q, v->pkts, v->n);
	}
	/* What the ring did not take is still ours: count and free it. */
	for (uint16_t i = sent; i < v->n; i++) {
		struct rxp_pkt *pkt = v->pkts[i];

		if (pkt->flags & RXP_PKT_F_LOCAL_OUT) {
			st->stats.local_out--;
			st->stats.local_out_dropped++;
			rxp_pool_free(st->cache, pkt);
		} else {
			st->stats.forwarded--;
			rxp_stack_drop(st, pkt, q && q->port->down ? RXP_DROP_PORT_DOWN :
						 RXP_DROP_TX_FULL);
		}
	}
	v->n = 0;
	st->tx_pending &= ~(1ull << port);
}

void rxp_stack_flush(struct rxp_stack *st)
{
	/* the host paths first: their writes end the poll like a transmit */
	if (st->host_pending)
		rxp_host_flush(st);
	while (st->tx_pending) {
		unsigned port = (unsigned)__builtin_ctzll(st->tx_pending);

		flush_port(st, port);
	}
	/* a flush ends a burst: the next capture reads the clock again */
	if (rxp_unlikely(st->capture))
		rxp_capture_burst_end(st->capture);
}

void rxp_tx_enqueue(struct rxp_stack *st, struct rxp_pkt *pkt, bool local)
{
	unsigned port = pkt->out_port;
	struct rxp_txv *v = &st->txv[port];

	if (local) {
		pkt->flags |= RXP_PKT_F_LOCAL_OUT;
		st->stats.local_out++;
	} else {
		pkt->flags &= (uint8_t)~RXP_PKT_F_LOCAL_OUT;
		st->stats.forwarded++;
	}
	if (rxp_unlikely(v->n == RXP_TXV_MAX))
		flush_port(st, port);
	v->pkts[v->n++] = pkt;
	st->tx_pending |= 1ull << port;
}

bool rxp_l2_prepend(struct rxp_pkt *pkt, const struct rxp_l3if *ifp, const uint8_t dst[6],
		    uint16_t ethertype)
{
	unsigned hlen = RXP_ETH_HLEN + (ifp->vlan ? RXP_VLAN_HLEN : 0u);
	unsigned l3 = pkt->data_off + pkt->l3_off;	/* network header, from the buffer start */

	if (l3 < RXP_PKT_META_SIZE + hlen)
		return false;
	rxp_eth_write(rxp_pkt_buf(pkt) + l3 - hlen, dst, ifp->mac, ifp->vlan, ethertype);
	pkt->data_off = (uint16_t)(l3 - hlen);
	pkt->len = (uint16_t)(hlen + pkt->l3_len);
	pkt->l3_off = (uint16_t)hlen;
	pkt->out_port = ifp->port;
	return true;
}

struct rxp_pkt *rxp_local_alloc(struct rxp_stack *st, uint16_t l3_len)
{
	struct rxp_pkt *pkt = rxp_pool_alloc(st->cache);

	if (!pkt) {
		st->stats.local_out_dropped++;
		return NULL;
	}
	if (RXP_ETH_HLEN + RXP_VLAN_HLEN + (uint32_t)l3_len > pkt->pool->data_room) {
		rxp_pool_free(st->cache, pkt);
		st->stats.local_out_dropped++;
		return NULL;
	}
	/* room for Ethernet + VLAN in front, as for a received frame */
	pkt->data_off = (uint16_t)pkt->pool->data_off;
	pkt->l3_off = RXP_ETH_HLEN + RXP_VLAN_HLEN;
	pkt->l3_len = l3_len;
	pkt->len = (uint16_t)(pkt->l3_off + l3_len);
	pkt->flags = 0;
	pkt->port = 0;
	return pkt;
}
