/* SPDX-License-Identifier: MIT */
/*
 * GSO on the host path: what the kernel sends on the TAP, made fit for the
 * wire. The TAP offers TSO and checksum offload, so the kernel hands over
 * TCP super-packets of up to 64 KiB (gso_type TCPV4/TCPV6, gso_size the
 * MSS) and frames whose transport checksum holds only the pseudo-header sum
 * (NEEDS_CSUM). The port offloads nothing, so here, in software:
 *
 *  - a super-packet is cut into segments of gso_size payload bytes, each
 *    copied into a pool buffer with its own headers: IPv4 total length,
 *    identification (+1 per segment) and header checksum, or the IPv6
 *    payload length; TCP sequence number advanced, FIN and PSH on the last
 *    segment only, CWR on the first only; and the full TCP checksum over
 *    the pseudo-header, header and payload;
 *  - any other frame has its partial checksum completed at
 *    csum_start + csum_offset and is copied as it is.
 *
 * Nothing from the TAP is trusted: the vnet header's offsets and the
 * frame's headers are checked against the frame before use.
 */
#include "offload.h"
#include "filter.h"
#include "out.h"

/* Returns a pool buffer for a @len-byte frame to send on @h's port, or NULL (counted). */
static struct rxp_pkt *frame_alloc(struct rxp_stack *st, struct rxp_host *h, uint32_t len)
{
	struct rxp_pkt *pkt = rxp_pool_alloc(st->cache);

	if (rxp_unlikely(!pkt)) {
		h->stats.no_buffer++;
		return NULL;
	}
	pkt->data_off = (uint16_t)pkt->pool->data_off;
	pkt->len = (uint16_t)len;
	pkt->port = h->port;
	pkt->queue = 0;
	pkt->out_port = h->port;
	pkt->l3_off = RXP_ETH_HLEN;
	pkt->vlan_tci = 0;
	pkt->flags = 0;
	return pkt;
}

static void host_send(struct rxp_stack *st, struct rxp_host *h, struct rxp_pkt *pkt)
{
	h->stats.from_host_packets++;
	/* what the kernel behind the port sends is the router's own: the output chain's */
	if (rxp_unlikely(rxp_filter_on(st)) && st->router && pkt->len > RXP_ETH_HLEN) {
		uint16_t type = rxp_load_be16(rxp_pkt_data(pkt) + 12);
		int out_if = st->router->port_if[h->port];

		pkt->l3_len = (uint16_t)(pkt->len - RXP_ETH_HLEN);
		if ((type == RXP_ETHERTYPE_IP4 || type == RXP_ETHERTYPE_IP6) && out_if >= 0 &&
		    !rxp_filter_output(st, pkt, type == RXP_ETHERTYPE_IP4 ? 4 : 6, out_if))
			return;
	}
	rxp_tx_enqueue(st, pkt, true);
}

/* A frame that is not a super-packet: checksum completed if asked, then sent as it is. */
static void output_one(struct rxp_stack *st, struct rxp_host *h, const struct rxp_vnet_hdr *vh,
		       uint8_t *frame, uint32_t len)
{
	const struct rxp_pool *pool = st->cache->pool;
	struct rxp_pkt *pkt;

	if (len > pool->max_frame || len > pool->data_room) {
		h->stats.bad_frames++;	/* longer than the TAP's MTU allows */
		return;
	}
	if (vh->flags & RXP_VNET_F_NEEDS_CSUM) {
		uint32_t start = rxp_vnet16(vh->csum_start), at = start + rxp_vnet16(vh->csum_offset);
		uint16_t c;

		if (at + 2 > len) {
			h->stats.bad_frames++;
			return;
		}
		/* the field holds the pseudo-header sum: summing over it finishes the job */
		c = rxp_csum(frame + start, len - start);
		if (c == 0)
			c = 0xffff;	/* UDP: zero means "no checksum" (RFC 768); same sum for TCP */
		memcpy(frame + at, &c, 2);
		h->stats.csum_completed++;
	}
	pkt = frame_alloc(st, h, len);
	if (!pkt)
		return;
	memcpy(rxp_pkt_data(pkt), frame, len);
	host_send(st, h, pkt);
}

/* Cuts a TCP super-packet into gso_size segments and sends each. */
static void output_tso(struct rxp_stack *st, struct rxp_host *h, const struct rxp_vnet_hdr *vh,
		       const uint8_t *frame, uint32_t len)
{
	const struct rxp_pool *pool = st->cache->pool;
	bool v6 = (vh->gso_type & (uint8_t)~RXP_VNET_GSO_ECN) == RXP_VNET_GSO_TCPV6;
	uint32_t l3_off = RXP_ETH_HLEN, l4_off, ip_hlen, tcp_hlen, hdrs, payload, mss, seq, n_segs;
	uint16_t type = ntohs(((const struct rxp_eth_hdr *)frame)->type), ip_id = 0;
	const struct rxp_tcp_hdr *tcp;

	if (type == RXP_ETHERTYPE_VLAN && len >= RXP_ETH_HLEN + RXP_VLAN_HLEN) {
		l3_off += RXP_VLAN_HLEN;
		type = ntohs(((const struct rxp_vlan_hdr *)(frame + RXP_ETH_HLEN))->type);
	}
	if (v6) {
		const struct rxp_ip6_hdr *ip = (const struct rxp_ip6_hdr *)(frame + l3_off);

		/* TCP straight after the IPv6 header: the kernel puts no extension header on TSO */
		if (type != RXP_ETHERTYPE_IP6 || len < l3_off + RXP_IP6_HLEN || rxp_ip6_version(ip) != 6 ||
		    ip->next_hdr != RXP_IPPROTO_TCP)
			goto bad;
		ip_hlen = RXP_IP6_HLEN;
	} else {
		const struct rxp_ip4_hdr *ip = (const struct rxp_ip4_hdr *)(frame + l3_off);

		if (type != RXP_ETHERTYPE_IP4 || len < l3_off + RXP_IP4_HLEN || rxp_ip4_version(ip) != 4 ||
		    ip->proto != RXP_IPPROTO_TCP)
			goto bad;
		ip_hlen = rxp_ip4_ihl(ip);
		if (ip_hlen < RXP_IP4_HLEN)
			goto bad;
		ip_id = ntohs(ip->id);
	}
	l4_off = l3_off + ip_hlen;
	if (len < l4_off + RXP_TCP_HLEN)
		goto bad;
	tcp = (const struct rxp_tcp_hdr *)(frame + l4_off);
	tcp_hlen = rxp_tcp_doff(tcp);
	hdrs = l4_off + tcp_hlen;
	mss = rxp_vnet16(vh->gso_size);
	if (tcp_hlen < RXP_TCP_HLEN || hdrs > len || mss == 0 ||
	    hdrs + RXP_MIN(mss, len - hdrs) > RXP_MIN(pool->max_frame, pool->data_room))
		goto bad;
	payload = len - hdrs;
	n_segs = payload ? (payload + mss - 1) / mss : 1;
	seq = ntohl(tcp->seq);
	h->stats.gso_frames++;
	for (uint32_t i = 0, off = 0; i < n_segs; i++, off += mss) {
		uint32_t chunk = RXP_MIN(mss, payload - off), tcp_len = tcp_hlen + chunk;
		struct rxp_pkt *pkt = frame_alloc(st, h, hdrs + chunk);
		struct rxp_tcp_hdr *stcp;
		uint8_t *d, *sip;

		if (!pkt) {
			h->stats.no_buffer += n_segs - i - 1;	/* frame_alloc counted this one */
			return;
		}
		d = rxp_pkt_data(pkt);
		memcpy(d, frame, hdrs);
		memcpy(d + hdrs, frame + hdrs + off, chunk);
		pkt->l3_off = (uint16_t)l3_off;
		pkt->l4_off = (uint16_t)l4_off;
		pkt->l3_len = (uint16_t)(ip_hlen + tcp_len);
		sip = d + l3_off;
		stcp = (struct rxp_tcp_hdr *)(d + l4_off);
		if (v6) {
			((struct rxp_ip6_hdr *)sip)->payload_len = htons((uint16_t)tcp_len);
		} else {
			struct rxp_ip4_hdr *ip = (struct rxp_ip4_hdr *)sip;

			ip->tot_len = htons((uint16_t)(ip_hlen + tcp_len));
			ip->id = htons((uint16_t)(ip_id + i));
			rxp_ip4_set_csum(ip, ip_hlen);
		}
		stcp->seq = htonl(seq + off);
		if (i + 1 < n_segs)
			stcp->flags &= (uint8_t)~(RXP_TCP_F_FIN | RXP_TCP_F_PSH);
		if (i > 0)
			stcp->flags &= (uint8_t)~RXP_TCP_F_CWR;
		stcp->csum = 0;
		stcp->csum = rxp_csum_fold(rxp_csum_partial(stcp, tcp_len,
							    rxp_csum_pseudo_ip(sip, v6, RXP_IPPROTO_TCP, tcp_len)));
		h->stats.gso_segments++;
		host_send(st, h, pkt);
	}
	return;

bad:
	h->stats.bad_frames++;
}

void rxp_gso_output(struct rxp_stack *st, struct rxp_host *h, const struct rxp_vnet_hdr *vh,
		    uint8_t *frame, uint32_t len)
{
	uint8_t gso = vh->gso_type & (uint8_t)~RXP_VNET_GSO_ECN;

	if (len < RXP_ETH_HLEN) {
		h->stats.bad_frames++;
		return;
	}
	if (gso == RXP_VNET_GSO_NONE)
		output_one(st, h, vh, frame, len);
	else if (gso == RXP_VNET_GSO_TCPV4 || gso == RXP_VNET_GSO_TCPV6)
		output_tso(st, h, vh, frame, len);
	else
		h->stats.bad_frames++;	/* UDP GSO: not offered to the kernel (TUNSETOFFLOAD) */
}
