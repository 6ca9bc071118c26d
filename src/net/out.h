/* SPDX-License-Identifier: MIT */
/*
 * The way out, shared inside src/net: the transmit vectors and the Ethernet
 * header (tx.c), fragmenting what does not fit the link (ip4_fwd.c,
 * reply.c), the way the router's own answers go (reply.c), and neighbour
 * resolution with its cached adjacencies, the forwarding fast path's last
 * step (resolve.c).
 */
#ifndef RXPATH_NET_OUT_H
#define RXPATH_NET_OUT_H

#include "rxpath/router.h"
#include "stage.h"

/* ---- tx.c ---- */

/*
 * Writes an Ethernet header at @at, to @dst from @src, with an 802.1Q tag
 * when @vlan is not 0, @ethertype naming what follows.
 */
static inline void rxp_eth_write(uint8_t *at, const uint8_t dst[6], const uint8_t src[6],
				 uint16_t vlan, uint16_t ethertype)
{
	struct rxp_eth_hdr *eth = (struct rxp_eth_hdr *)at;

	memcpy(eth->dst, dst, RXP_ETH_ALEN);
	memcpy(eth->src, src, RXP_ETH_ALEN);
	if (vlan) {
		struct rxp_vlan_hdr *tag = (struct rxp_vlan_hdr *)(eth + 1);

		eth->type = htons(RXP_ETHERTYPE_VLAN);
		tag->tci = htons(vlan);
		tag->type = htons(ethertype);
	} else {
		eth->type = htons(ethertype);
	}
}

/*
 * Gathers @pkt (Ethernet frame complete, pkt->out_port set) for transmit.
 * @local: the router made it (not a received packet being forwarded).
 */
void rxp_tx_enqueue(struct rxp_stack *st, struct rxp_pkt *pkt, bool local);

/*
 * Writes an Ethernet header (with an 802.1Q tag for a VLAN interface) just
 * in front of the network header at pkt->l3_off, to @dst from @ifp, and
 * makes the frame start there; sets pkt->out_port. Returns false when the
 * headroom is too small.
 */
bool rxp_l2_prepend(struct rxp_pkt *pkt, const struct rxp_l3if *ifp, const uint8_t dst[6],
		    uint16_t ethertype);

/*
 * Returns a fresh buffer laid out for a packet the router makes (network
 * header at l3_off), or NULL, counted in local_out_dropped, when the pool
 * is empty or @l3_len does not fit.
 */
struct rxp_pkt *rxp_local_alloc(struct rxp_stack *st, uint16_t l3_len);

/* ---- fragmenting (ip4_fwd.c, reply.c) ---- */

/*
 * Splits the IPv4 datagram @pkt (TTL already decremented, DF clear) into
 * fragments that fit @ifidx's MTU (RFC 791 3.2, options copied as their
 * copy bit says) and sends each to @mac there. The original is consumed.
 */
void rxp_ip4_fragment(struct rxp_stack *st, struct rxp_pkt *pkt, uint16_t ifidx, const uint8_t mac[6]);

/*
 * Splits @pkt, an IPv6 packet the router made (an answer: its header, then
 * the upper layer or a Fragment header), into fragments that fit @ifidx's
 * MTU (RFC 8200 4.5: the source fragments, routers never) and sends each to
 * @mac there (src/net/reply.c). The original is consumed.
 */
void rxp_ip6_fragment_local(struct rxp_stack *st, struct rxp_pkt *pkt, uint16_t ifidx,
			    const uint8_t mac[6]);

/* ---- reply.c ---- */

/* The way an answer the router makes leaves: the interface, and the MAC when the table knows it. */
struct rxp_reply_way {
	int out;
	bool known;
	uint8_t mac[6];
};

/*
 * Finds the way an answer from @src (NULL: not chosen yet) to @dst goes,
 * for a packet that came in on @in_ifidx: by the route back to @dst when
 * that leaves by another interface whose next hop is known, else out
 * @in_ifidx to the neighbour the table holds for the next hop, if any.
 * Link-local addresses stay on their link. Never resolves or holds; may be
 * called with the neighbour lock held.
 */
void rxp_reply_way(struct rxp_stack *st, uint8_t family, const uint8_t *src, const uint8_t *dst,
		   int in_ifidx, struct rxp_reply_way *way);

/*
 * Sends @pkt, an answer the router made (network header ready, family
 * @family), the way @way says, to @prev_mac (the frame's sender) when the
 * way knows no MAC. Consumes @pkt.
 */
void rxp_reply_send(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family,
		    const struct rxp_reply_way *way, const uint8_t prev_mac[6]);

/* rxp_reply_way() for @pkt's own addresses, then rxp_reply_send(). */
void rxp_reply_output(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family, int in_ifidx,
		      const uint8_t prev_mac[6]);

/* ---- resolve.c ---- */

/*
 * Several workers share the neighbour table: its slow paths take the
 * router's lock. A worker may take it again while it holds it (an error
 * about a held packet looks up where to send it): only the outermost
 * takes and gives it.
 */
static inline void rxp_neigh_lock(struct rxp_stack *st)
{
	if (st->router->shared && st->neigh_lock_depth++ == 0)
		pthread_spin_lock(&st->router->neigh_lock);
}

static inline void rxp_neigh_unlock(struct rxp_stack *st)
{
	if (st->router->shared && --st->neigh_lock_depth == 0)
		pthread_spin_unlock(&st->router->neigh_lock);
}

/*
 * Sends @pkt (network header at l3_off, ready to go) to the neighbour
 * @next (family 4 or 6, network order) on @ifidx: now if it is known, held
 * while it resolves (a request goes out), dropped if resolution failed.
 */
void rxp_neigh_output(struct rxp_stack *st, struct rxp_pkt *pkt, int ifidx, uint8_t family,
		      const uint8_t *next);

/*
 * Copies to @mac the MAC the neighbour table holds for @next on @ifidx when
 * it holds a usable one (the worker's cache first). Returns whether it did.
 */
bool rxp_neigh_known(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *next,
		     uint8_t mac[6]);

/*
 * The same for a packet going via gateway next hop @nh: its neighbour is
 * remembered per next hop, so the common case is one comparison.
 */
void rxp_neigh_output_via(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t nh);

/* Gathers a forwarded packet for transmit on pkt->out_port (fast path of rxp_tx_enqueue). */
static inline void rxp_tx_forward(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	unsigned port = pkt->out_port;
	struct rxp_txv *v = &st->txv[port];

	if (rxp_unlikely(v->n == RXP_TXV_MAX)) {
		rxp_tx_enqueue(st, pkt, false);
		return;
	}
	v->pkts[v->n++] = pkt;
	st->tx_pending |= 1ull << port;
	st->stats.forwarded++;
}

/*
 * Writes the cached Ethernet header in front of the network header and
 * gathers the packet for transmit. Received frames always have room: the
 * 18 bytes before the network header are in the buffer's headroom. Exactly
 * the header is written, so an untagged frame touches no line before it.
 */
static inline void rxp_adj_output(struct rxp_stack *st, struct rxp_pkt *pkt,
				  const struct rxp_adj *adj)
{
	unsigned l3 = pkt->data_off + pkt->l3_off;

	if (rxp_likely(adj->hlen == RXP_ETH_HLEN))
		memcpy(rxp_pkt_buf(pkt) + l3 - RXP_ETH_HLEN,
		       adj->hdr + sizeof(adj->hdr) - RXP_ETH_HLEN, RXP_ETH_HLEN);
	else
		memcpy(rxp_pkt_buf(pkt) + l3 - sizeof(adj->hdr), adj->hdr, sizeof(adj->hdr));
	pkt->data_off = (uint16_t)(l3 - adj->hlen);
	pkt->l3_off = adj->hlen;
	pkt->len = (uint16_t)(adj->hlen + pkt->l3_len);
	pkt->out_port = adj->port;
	if (rxp_unlikely(pkt->flags & RXP_PKT_F_LOCAL_OUT))
		rxp_tx_enqueue(st, pkt, true);
	else
		rxp_tx_forward(st, pkt);
}

/*
 * For the vector fast paths: the TX vector of @adj's port, looked up only
 * when the port changes (*@v and *@v_port carry it from packet to packet),
 * or NULL when that vector is full and the packet must take the full path.
 */
static rxp_always_inline struct rxp_txv *rxp_fast_txv(struct rxp_stack *st,
						      const struct rxp_adj *adj,
						      struct rxp_txv **v, unsigned *v_port)
{
	if (adj->port != *v_port) {
		*v = &st->txv[adj->port];
		*v_port = adj->port;
	}
	return rxp_likely((*v)->n < RXP_TXV_MAX) ? *v : NULL;
}

/*
 * rxp_adj_output() then rxp_tx_forward() for a received packet and an
 * untagged adjacency, with the network header at @l3_hdr and room on @v,
 * the adjacency port's vector. The caller counts it forwarded.
 */
static rxp_always_inline void rxp_fast_emit(struct rxp_stack *st, struct rxp_pkt *pkt, void *l3_hdr,
					    const struct rxp_adj *adj, struct rxp_txv *v)
{
	uint8_t *l3 = l3_hdr;
	uint16_t l3_len = pkt->l3_len;

	memcpy(l3 - RXP_ETH_HLEN, adj->hdr + sizeof(adj->hdr) - RXP_ETH_HLEN, RXP_ETH_HLEN);
	pkt->data_off = (uint16_t)(l3 - RXP_ETH_HLEN - rxp_pkt_buf(pkt));
	pkt->l3_off = RXP_ETH_HLEN;
	pkt->len = (uint16_t)(RXP_ETH_HLEN + l3_len);
	pkt->out_port = adj->port;
	v->pkts[v->n++] = pkt;
	st->tx_pending |= 1ull << adj->port;
}

/* The fast path of rxp_neigh_output_via, inline: a cached adjacency. */
static inline void rxp_output_via(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t nh)
{
	const struct rxp_adj *adj = &st->adj[nh];

	if (rxp_likely(adj->neigh && adj->gen == rxp_neigh_gen(&st->router->neigh)))
		rxp_adj_output(st, pkt, adj);
	else
		rxp_neigh_output_via(st, pkt, nh);
}

/*
 * Records what a neighbour said (@mac for @addr on @ifidx); with @create, a
 * new entry is made when there is none. Releases packets held for it. Only
 * an answer to the router's own request (@confirmed: an ARP reply, a
 * solicited Neighbor Advertisement) renews a known entry's lifetime; what a
 * neighbour says unasked (a request, an unsolicited advertisement) updates
 * its MAC and leaves the lifetime as it was (RFC 4861 7.2.3, 7.2.5, 7.3.1).
 */
void rxp_neigh_learn(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr,
		     const uint8_t mac[6], bool create, bool confirmed);

/*
 * What a Neighbor Advertisement for @addr says (RFC 4861 7.2.5): learned for
 * an incomplete entry, with Override, or when the MAC is the same; a
 * @solicited one confirms the entry.
 */
void rxp_neigh_learn_advert(struct rxp_stack *st, int ifidx, const uint8_t *addr,
			    const uint8_t mac[6], bool override, bool solicited);

/*
 * A solicited Neighbor Advertisement for @addr without a link-layer address
 * (as Linux answers a unicast solicitation): it confirms a known entry, as
 * RFC 4861 7.2.5 says, and changes nothing else.
 */
void rxp_neigh_confirm(struct rxp_stack *st, int ifidx, const uint8_t *addr);

#endif
