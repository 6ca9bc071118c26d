/* SPDX-License-Identifier: MIT */
/*
 * GRO on the host path. At the end of a poll the segments held for the host
 * are looked at in arrival order; in-order TCP segments of one flow that
 * the kernel's GRO would merge (same addresses and ports, TOS/TTL or flow
 * label/hop limit, ACK number, window, flags and option bytes; contiguous
 * sequence numbers; every segment but the last of the first one's size)
 * become one super-packet of up to 64 KiB. It is written with one writev():
 * the vnet header, the first segment's frame with its IP length and checksum
 * rewritten, then each further segment's payload straight from its buffer,
 * without a copy.
 *
 * Each segment's TCP checksum is verified here in software first (many NICs
 * offload neither): a segment that fails is never merged and goes to the
 * kernel alone and as it came, for the kernel to check, count
 * (TcpInCsumErrors) and drop. A verified frame carries a partial checksum
 * (the pseudo-header sum, VIRTIO_NET_HDR_F_NEEDS_CSUM): the kernel takes
 * CHECKSUM_PARTIAL on receive as verified, which is what its own GRO does.
 * (DATA_VALID would say the same, but the tun driver ignores it on write.)
 *
 * What is not merged keeps its order within its flow: a flow's open
 * super-packet is written before anything else of that flow.
 */
#include <stddef.h>
#include "offload.h"

#define GRO_FLOWS 8	/* flows coalesced at once; one more writes out the oldest */

/* What GRO looks at in one TCP segment held for the host. */
struct gro_seg {
	uint8_t *frame;
	uint8_t *ip;		/* network header: seg_ip4() or seg_ip6() */
	struct rxp_tcp_hdr *tcp;
	uint16_t l4_off;	/* TCP header, from the frame start */
	uint16_t ip_hlen, tcp_hlen;
	uint16_t payload;	/* TCP payload bytes */
	uint32_t seq;
	uint8_t flags;
	bool v6;
};

/* A super-packet being built. */
struct gro_flow {
	struct gro_seg first;
	uint16_t n_segs;	/* 0: the slot is free */
	uint16_t mss;		/* the first segment's payload: all but the last have it */
	bool closed;		/* a short segment or PSH ended it */
	bool id_fixed;		/* IPv4 with DF: every segment carries the first one's ID */
	uint8_t flags_or;	/* PSH of any segment goes on the super-packet */
	uint32_t next_seq;
	uint32_t payload;	/* bytes of all its segments */
	/* [0] the vnet header, [1] the first frame, then each further segment's payload */
	struct iovec iov[2 + RXP_HOST_SEGS_MAX];
};

/* @s's network header as what it is (packed: any alignment does) */
static struct rxp_ip4_hdr *seg_ip4(const struct gro_seg *s)
{
	return (struct rxp_ip4_hdr *)s->ip;
}

static struct rxp_ip6_hdr *seg_ip6(const struct gro_seg *s)
{
	return (struct rxp_ip6_hdr *)s->ip;
}

enum seg_kind {
	SEG_OTHER,	/* not TCP, or a fragment: written as it is */
	SEG_TCP_BAD,	/* TCP whose checksum fails */
	SEG_TCP,	/* TCP, checksum verified */
};

/* Bytes of @pkt's frame to hand over: an IP packet without the Ethernet padding. */
static uint32_t frame_len(const struct rxp_pkt *pkt)
{
	uint16_t type;

	if (pkt->len < RXP_ETH_HLEN || pkt->l3_off != RXP_ETH_HLEN)
		return pkt->len;
	type = ntohs(rxp_pkt_ceth(pkt)->type);
	if ((type == RXP_ETHERTYPE_IP4 || type == RXP_ETHERTYPE_IP6) &&
	    (uint32_t)pkt->l3_off + pkt->l3_len <= pkt->len)
		return (uint32_t)pkt->l3_off + pkt->l3_len;
	return pkt->len;
}

/*
 * Looks at @pkt (its network and transport offsets as the stack's input
 * set them) and fills @s when it is TCP. Every offset is checked against
 * the frame again: the host path takes packets from several stages.
 */
static enum seg_kind parse_seg(struct rxp_pkt *pkt, struct gro_seg *s)
{
	uint8_t *frame = rxp_pkt_data(pkt);
	uint32_t l3_end = (uint32_t)pkt->l3_off + pkt->l3_len, l4_len;
	uint16_t type;

	if (pkt->len < RXP_ETH_HLEN || pkt->l3_off != RXP_ETH_HLEN ||
	    pkt->l4_proto != RXP_IPPROTO_TCP || (pkt->flags & RXP_PKT_F_FRAG))
		return SEG_OTHER;
	type = ntohs(rxp_pkt_ceth(pkt)->type);
	s->v6 = pkt->flags & RXP_PKT_F_IP6;
	if (type != (s->v6 ? RXP_ETHERTYPE_IP6 : RXP_ETHERTYPE_IP4) || l3_end > pkt->len ||
	    pkt->l4_off < (uint32_t)pkt->l3_off + (s->v6 ? RXP_IP6_HLEN : RXP_IP4_HLEN) ||
	    (uint32_t)pkt->l4_off + RXP_TCP_HLEN > l3_end)
		return SEG_OTHER;
	s->frame = frame;
	s->ip = frame + pkt->l3_off;
	s->tcp = rxp_pkt_l4(pkt);
	s->l4_off = pkt->l4_off;
	s->ip_hlen = (uint16_t)(pkt->l4_off - pkt->l3_off);
	l4_len = l3_end - pkt->l4_off;
	s->tcp_hlen = (uint16_t)rxp_tcp_doff(s->tcp);
	if (s->tcp_hlen < RXP_TCP_HLEN || s->tcp_hlen > l4_len)
		return SEG_OTHER;
	s->payload = (uint16_t)(l4_len - s->tcp_hlen);
	s->seq = ntohl(s->tcp->seq);
	s->flags = s->tcp->flags;
	if (rxp_csum_fold(rxp_csum_partial(s->tcp, l4_len, rxp_csum_pseudo_ip(s->ip, s->v6, RXP_IPPROTO_TCP, l4_len))))
		return SEG_TCP_BAD;
	return SEG_TCP;
}

static void tap_write(struct rxp_host *h, const struct iovec *iov, int n_iov)
{
	if (rxp_unlikely(rxp_tap_writev(&h->tap, iov, n_iov)))
		h->stats.write_errors++;
	else
		h->stats.writes++;
}

/* Writes @pkt as it is, for the kernel to check. */
static void write_plain(struct rxp_host *h, struct rxp_pkt *pkt)
{
	struct rxp_vnet_hdr vh = { 0 };
	struct iovec iov[2] = { { &vh, sizeof(vh) }, { rxp_pkt_data(pkt), frame_len(pkt) } };

	tap_write(h, iov, 2);
}

/*
 * Puts the pseudo-header sum for @tcp_len bytes in the TCP checksum field
 * and fills @vh to match: the kernel treats the segment as verified.
 */
static void set_partial(const struct gro_seg *s, uint32_t tcp_len, struct rxp_vnet_hdr *vh)
{
	uint16_t c = (uint16_t)~rxp_csum_fold(rxp_csum_pseudo_ip(s->ip, s->v6, RXP_IPPROTO_TCP, tcp_len));

	s->tcp->csum = c;
	vh->flags = RXP_VNET_F_NEEDS_CSUM;
	vh->csum_start = rxp_vnet16(s->l4_off);
	vh->csum_offset = rxp_vnet16(offsetof(struct rxp_tcp_hdr, csum));
}

/* Writes one verified segment alone. */
static void write_segment(struct rxp_host *h, const struct gro_seg *s)
{
	struct rxp_vnet_hdr vh = { 0 };
	uint32_t len = (uint32_t)s->l4_off + s->tcp_hlen + s->payload;
	struct iovec iov[2] = { { &vh, sizeof(vh) }, { s->frame, len } };

	set_partial(s, (uint32_t)s->tcp_hlen + s->payload, &vh);
	tap_write(h, iov, 2);
}

/* Writes a super-packet of two segments or more as one GSO frame. */
static void write_super(struct rxp_host *h, struct gro_flow *f)
{
	const struct gro_seg *s = &f->first;
	uint32_t tcp_len = (uint32_t)s->tcp_hlen + f->payload;
	struct rxp_vnet_hdr vh = { 0 };

	if (s->v6) {
		seg_ip6(s)->payload_len = htons((uint16_t)tcp_len);
	} else {
		seg_ip4(s)->tot_len = htons((uint16_t)(s->ip_hlen + tcp_len));
		rxp_ip4_set_csum(seg_ip4(s), s->ip_hlen);
	}
	s->tcp->flags |= f->flags_or & RXP_TCP_F_PSH;
	set_partial(s, tcp_len, &vh);
	vh.gso_type = s->v6 ? RXP_VNET_GSO_TCPV6 : RXP_VNET_GSO_TCPV4;
	vh.hdr_len = rxp_vnet16((uint16_t)(s->l4_off + s->tcp_hlen));
	vh.gso_size = rxp_vnet16(f->mss);
	f->iov[0].iov_base = &vh;
	f->iov[0].iov_len = sizeof(vh);
	tap_write(h, f->iov, 1 + f->n_segs);
	h->stats.gro_super++;
	h->stats.gro_merged += f->n_segs - 1u;
}

/* Writes what @f holds and frees its slot. */
static void emit(struct rxp_host *h, struct gro_flow *f)
{
	if (f->n_segs == 1)
		write_segment(h, &f->first);
	else
		write_super(h, f);
	f->n_segs = 0;
}

/* Returns true when @a and @b belong to one connection in one direction. */
static bool same_flow(const struct gro_seg *a, const struct gro_seg *b)
{
	const struct rxp_ip4_hdr *a4 = seg_ip4(a), *b4 = seg_ip4(b);
	const struct rxp_ip6_hdr *a6 = seg_ip6(a), *b6 = seg_ip6(b);

	if (a->v6 != b->v6 || a->tcp->sport != b->tcp->sport || a->tcp->dport != b->tcp->dport)
		return false;
	if (a->v6)
		return !memcmp(a6->src, b6->src, 16) && !memcmp(a6->dst, b6->dst, 16);
	return a4->src == b4->src && a4->dst == b4->dst;
}

static struct gro_flow *find_flow(struct gro_flow *flows, const struct gro_seg *s)
{
	for (unsigned i = 0; i < GRO_FLOWS; i++)
		if (flows[i].n_segs && same_flow(&flows[i].first, s))
			return &flows[i];
	return NULL;
}

/*
 * Data with ACK (and maybe PSH) only, the reserved bits and AccECN's AE
 * (RFC 9768) clear beside them, as CWR and ECE are: a super-packet keeps
 * the first segment's flags, and a change in the ACE counter must reach the
 * host's TCP. No IPv4 options, as the kernel's GRO.
 */
static bool mergeable(const struct gro_seg *s)
{
	return s->payload && (s->flags & (uint8_t)~RXP_TCP_F_PSH) == RXP_TCP_F_ACK &&
	       !(s->tcp->doff_rsvd & 0x0f) && (s->v6 || s->ip_hlen == RXP_IP4_HLEN);
}

/*
 * The IPv4 identification of the segment that would be number @n of @f:
 * one more per segment, or (with DF, RFC 6864) the first one's throughout,
 * as the kernel's GRO accepts; the super-packet carries the first one's.
 */
static bool ip_id_follows(const struct gro_flow *f, const struct gro_seg *s)
{
	const struct rxp_ip4_hdr *ip = seg_ip4(s);
	uint16_t first = ntohs(seg_ip4(&f->first)->id), id = ntohs(ip->id);

	if (!f->id_fixed && id == (uint16_t)(first + f->n_segs))
		return true;
	return (ip->frag_off & htons(RXP_IP4_DF)) && id == first && (f->n_segs == 1 || f->id_fixed);
}

/* Returns true when @s may follow what @f holds. */
static bool can_merge(const struct gro_flow *f, const struct gro_seg *s)
{
	const struct gro_seg *a = &f->first;
	const struct rxp_ip4_hdr *s4 = seg_ip4(s), *a4 = seg_ip4(a);
	const struct rxp_ip6_hdr *s6 = seg_ip6(s), *a6 = seg_ip6(a);

	if (f->closed || f->n_segs == RXP_HOST_SEGS_MAX || s->seq != f->next_seq ||
	    s->payload > f->mss || s->tcp_hlen != a->tcp_hlen ||
	    (uint32_t)a->ip_hlen + a->tcp_hlen + f->payload + s->payload > RXP_HOST_GSO_MAX)
		return false;
	if ((s->flags ^ a->flags) & (uint8_t)~RXP_TCP_F_PSH)
		return false;
	/* ACK number, window, and the option bytes after the fixed header (of one length, above) */
	if (s->tcp->ack != a->tcp->ack || s->tcp->window != a->tcp->window ||
	    memcmp(s->tcp + 1, a->tcp + 1, s->tcp_hlen - RXP_TCP_HLEN))
		return false;
	if (s->v6)	/* version, traffic class, flow label; hop limit */
		return s6->ver_tc_flow == a6->ver_tc_flow && s6->hop_limit == a6->hop_limit;
	/* TOS, DF, TTL, identification */
	return s4->tos == a4->tos && ((s4->frag_off ^ a4->frag_off) & htons(RXP_IP4_DF)) == 0 &&
	       s4->ttl == a4->ttl && ip_id_follows(f, s);
}

static void flow_start(struct gro_flow *f, const struct gro_seg *s)
{
	f->first = *s;
	f->n_segs = 1;
	f->mss = s->payload;
	f->payload = s->payload;
	f->next_seq = s->seq + s->payload;
	f->flags_or = s->flags;
	f->closed = s->flags & RXP_TCP_F_PSH;
	f->id_fixed = false;
	f->iov[1].iov_base = s->frame;
	f->iov[1].iov_len = (size_t)s->l4_off + s->tcp_hlen + s->payload;
}

static void flow_append(struct gro_flow *f, const struct gro_seg *s)
{
	if (!s->v6 && f->n_segs == 1)	/* the second segment says how IDs go */
		f->id_fixed = seg_ip4(s)->id == seg_ip4(&f->first)->id;
	f->iov[1 + f->n_segs].iov_base = (uint8_t *)s->tcp + s->tcp_hlen;
	f->iov[1 + f->n_segs].iov_len = s->payload;
	f->n_segs++;
	f->payload += s->payload;
	f->next_seq += s->payload;
	f->flags_or |= s->flags;
	if (s->payload < f->mss || (s->flags & RXP_TCP_F_PSH))
		f->closed = true;
}

void rxp_gro_flush(struct rxp_stack *st, struct rxp_host *h)
{
	struct gro_flow flows[GRO_FLOWS];
	unsigned victim = 0;

	for (unsigned i = 0; i < GRO_FLOWS; i++)
		flows[i].n_segs = 0;
	for (unsigned i = 0; i < h->n_held; i++) {
		struct rxp_pkt *pkt = h->held[i];
		enum seg_kind kind;
		struct gro_flow *f;
		struct gro_seg s;

		kind = parse_seg(pkt, &s);
		if (kind == SEG_OTHER) {
			write_plain(h, pkt);
			continue;
		}
		f = h->gro ? find_flow(flows, &s) : NULL;
		if (kind == SEG_TCP_BAD || !h->gro || !mergeable(&s)) {
			/* alone, after what its flow holds */
			if (f)
				emit(h, f);
			if (kind == SEG_TCP_BAD) {
				h->stats.csum_bad++;
				write_plain(h, pkt);
			} else {
				write_segment(h, &s);
			}
			continue;
		}
		if (f && can_merge(f, &s)) {
			flow_append(f, &s);
			continue;
		}
		if (f) {
			emit(h, f);
		} else {
			for (unsigned j = 0; j < GRO_FLOWS && !f; j++)
				if (!flows[j].n_segs)
					f = &flows[j];
			if (!f) {
				/* every slot busy: the next in turn goes out */
				f = &flows[victim];
				victim = (victim + 1) % GRO_FLOWS;
				emit(h, f);
			}
		}
		flow_start(f, &s);
	}
	for (unsigned i = 0; i < GRO_FLOWS; i++)
		if (flows[i].n_segs)
			emit(h, &flows[i]);
	/* written (the kernel copied them) or lost: the buffers are free again */
	rxp_pool_free_bulk(st->cache, h->held, h->n_held);
	h->n_held = 0;
}
