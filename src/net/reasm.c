/* SPDX-License-Identifier: MIT */
/*
 * Reassembly of datagrams addressed to the router (RFC 791 3.2, RFC 1122
 * 3.3.2, RFC 8200 4.5), so that a large ping to it is answered, and
 * transport to it in fragments gets the answer a whole datagram gets.
 * Routers never reassemble what they forward; a port's host path takes
 * fragments as they come (its kernel reassembles).
 *
 * The fragments' buffers are held as they are, in offset order, and never
 * copied into one: checksums are summed across them (every fragment but the
 * last carries a multiple of 8 bytes, so each starts on a 16-bit boundary of
 * the datagram), and an echo is answered by turning each fragment around in
 * place, which makes a reply fragmented exactly as the request was, each
 * piece fitting the link it came in on.
 *
 * Overlapping fragments abandon their datagram, the fragments still to come
 * included (RFC 5722; RFC 8200 4.5 asks it of IPv6, and IPv4 is treated the
 * same for the same reasons) while the table has room: an abandoned
 * datagram's slot is the first to go to a new one. An exact duplicate is
 * dropped alone. A
 * datagram not complete after 30 s (IPv4, as Linux) or 60 s (IPv6, RFC 8200)
 * is given up, with Time Exceeded code 1 when its first fragment had come.
 * An IPv6 fragment alone (offset 0, no more to come) is processed in
 * isolation (RFC 6946), as the packet it is, by rxp_local_l4().
 */
#include <arpa/inet.h>
#include <stddef.h>
#include "rxpath/csum.h"
#include "icmp.h"
#include "ip4_opt.h"
#include "ip6_addr.h"
#include "local.h"
#include "out.h"
#include "reasm.h"

#define REASM_TIMEOUT4_NS (30ull * 1000000000ull)
#define REASM_TIMEOUT6_NS (60ull * 1000000000ull)

static uint32_t frag_off(const struct rxp_pkt *p)
{
	return (uint32_t)p->user[0];
}

static uint32_t frag_len(const struct rxp_pkt *p)
{
	return (uint32_t)(p->user[0] >> 32);
}

/* Drops every fragment of @r under @why. */
static void drop_all(struct rxp_stack *st, struct rxp_reasm *r, enum rxp_drop_reason why)
{
	for (unsigned i = 0; i < r->n; i++)
		rxp_drop(st, r->frags[i], why);
	r->n = 0;
}

/* Gives up on the datagram in table slot @r: its fragments dropped under @why, the slot freed. */
static void abandon(struct rxp_stack *st, struct rxp_reasm *r, enum rxp_drop_reason why)
{
	st->reasm_held -= r->n;
	drop_all(st, r, why);
	r->end = 0;
	r->deadline_ns = 0;
}

/*
 * An overlap: the datagram's fragments are dropped, and so are those still
 * to come (RFC 5722 4, RFC 8200 4.5: "including those not yet received"):
 * the slot stays, holding nothing, until the datagram's deadline, and is
 * then freed without a Time Exceeded.
 */
static void abandon_overlap(struct rxp_stack *st, struct rxp_reasm *r)
{
	uint64_t deadline = r->deadline_ns;

	abandon(st, r, RXP_DROP_REASM_OVERLAP);
	r->deadline_ns = deadline;
	r->dead = true;
}

/* The unfolded sum of the first @limit payload bytes of @r's fragments. */
static uint64_t payload_sum(const struct rxp_reasm *r, uint32_t limit)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < r->n && limit; i++) {
		const struct rxp_pkt *p = r->frags[i];
		uint32_t len = RXP_MIN(frag_len(p), limit);

		sum = rxp_csum_partial(rxp_pkt_cdata(p) + p->l4_off, len, sum);
		limit -= len;
	}
	return sum;
}

/*
 * An IPv6 echo reply carries no extension header but its Fragment header
 * (RFC 4443 4.2, as a whole request's reply; RFC 5095 3: never a type 0
 * routing header): each fragment's headers before its Fragment header go,
 * and so do the @after bytes of headers after it in the first fragment (a
 * multiple of 8), the later fragments' offsets moving back by as much.
 */
static void echo6_strip(struct rxp_reasm *r, uint32_t after)
{
	for (unsigned i = 0; i < r->n; i++) {
		struct rxp_pkt *p = r->frags[i];
		uint8_t *d = rxp_pkt_data(p);
		struct rxp_ip6_hdr *ip;
		struct rxp_ip6_frag_hdr *fh;
		uint32_t data_at = p->l4_off, skip = i == 0 ? after : 0;
		uint32_t fh_at = data_at - skip - RXP_IP6_FRAG_HLEN;
		uint32_t l3 = data_at - RXP_IP6_FRAG_HLEN - RXP_IP6_HLEN;
		uint16_t fo;

		if (l3 != p->l3_off) {
			/* the Fragment header first: the fixed header moves up behind it */
			memmove(d + l3 + RXP_IP6_HLEN, d + fh_at, RXP_IP6_FRAG_HLEN);
			memmove(d + l3, d + p->l3_off, RXP_IP6_HLEN);
			p->l3_off = (uint16_t)l3;
			p->l3_len = (uint16_t)(RXP_IP6_HLEN + RXP_IP6_FRAG_HLEN + frag_len(p));
		}
		ip = rxp_pkt_ip6(p);
		fh = (struct rxp_ip6_frag_hdr *)(ip + 1);
		ip->next_hdr = RXP_IPPROTO_FRAGMENT;
		ip->payload_len = htons((uint16_t)(RXP_IP6_FRAG_HLEN + frag_len(p)));
		fh->next_hdr = RXP_IPPROTO_ICMP6;
		fh->reserved = 0;	/* reserved fields go out zero (RFC 8200 4.5), whatever came in */
		fo = ntohs(fh->frag_off);
		fh->frag_off = htons((uint16_t)(((fo & RXP_IP6_FRAG_OFFMASK) - (i > 0 ? after : 0)) |
						(fo & RXP_IP6_FRAG_MF)));
	}
}

/*
 * Echo reply to a reassembled echo request: every fragment turned around in
 * place (addresses swapped, a fresh hop count; IPv4 gets one new
 * identification for the reply and its options filled in or reversed), the first one's type changed and the
 * checksum recomputed over the whole message, all sent back to the frame's
 * sender. RFC 792, RFC 4443 4.2.
 */
static void echo_reply(struct rxp_stack *st, struct rxp_reasm *r, uint32_t after)
{
	struct rxp_pkt *first = r->frags[0];
	struct rxp_icmp_hdr *icmp = rxp_pkt_l4(first);
	bool v6 = r->family == 6, from_own = true;
	uint8_t src6[16];
	uint16_t id, c;

	if (v6)
		echo6_strip(r, after);
	/* a piece larger than the link's MTU came in: the same piece cannot go back */
	for (unsigned i = 0; i < r->n; i++)
		if (r->frags[i]->l3_len > st->router->ifs[r->frags[i]->ifidx].mtu) {
			drop_all(st, r, RXP_DROP_LOCAL_UNHANDLED);
			return;
		}
	/* options come back as in a whole request's reply: each fragment's (a source route is in all) */
	for (unsigned i = 0; !v6 && i < r->n; i++) {
		struct rxp_pkt *p = r->frags[i];

		if (rxp_pkt_cip4(p)->ver_ihl != RXP_IP4_VER_IHL_NO_OPTS && !rxp_ip4_echo_options_ok(st, p)) {
			drop_all(st, r, (enum rxp_drop_reason)p->drop_reason);
			return;
		}
	}
	/* an anycast address answers from a unicast one of the interface (RFC 4443 2.2 (b)) */
	if (v6) {
		const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(first);

		from_own = rxp_router_has_addr6(st->router, ip->dst);
		if (!from_own)
			rxp_icmp6_source(st->router, &st->router->ifs[first->ifidx], ip->src, false, src6);
	}
	id = ++st->ip_id;
	icmp->type = v6 ? RXP_ICMP6_ECHO_REPLY : RXP_ICMP_ECHO_REPLY;
	icmp->code = 0;	/* code 0, whatever the request's */
	icmp->csum = 0;
	for (unsigned i = 0; i < r->n; i++) {
		struct rxp_pkt *p = r->frags[i];

		if (v6) {
			struct rxp_ip6_hdr *ip = rxp_pkt_ip6(p);
			uint8_t a[16];

			memcpy(a, ip->src, 16);
			memcpy(ip->src, from_own ? ip->dst : src6, 16);
			memcpy(ip->dst, a, 16);
			ip->ver_tc_flow &= htonl(~RXP_IP6_FLOW_LABEL);	/* the flow label is the sender's own */
			ip->hop_limit = 64;
		} else {
			struct rxp_ip4_hdr *ip = rxp_pkt_ip4(p);
			uint32_t a = ip->src;

			ip->src = ip->dst;
			ip->dst = a;
			if (ip->ver_ihl != RXP_IP4_VER_IHL_NO_OPTS)
				rxp_ip4_echo_options(ip);
			ip->id = htons(id);
			ip->ttl = 64;
			ip->csum = 0;
			ip->csum = rxp_csum(ip, rxp_ip4_ihl(ip));
		}
	}
	if (v6) {
		const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(first);

		c = rxp_csum_fold(rxp_csum_pseudo6(ip->src, ip->dst, RXP_IPPROTO_ICMP6, r->end) +
				  payload_sum(r, r->end));
	} else {
		c = rxp_csum_fold(payload_sum(r, r->end));
	}
	icmp->csum = c;
	for (unsigned i = 0; i < r->n; i++) {
		struct rxp_pkt *p = r->frags[i];
		uint8_t dst_mac[6];

		memcpy(dst_mac, rxp_pkt_ceth(p)->src, 6);
		rxp_count_delivered(st, p, v6 ? RXP_SINK_ECHO6 : RXP_SINK_ECHO4);
		rxp_reply_output(st, p, v6 ? 6 : 4, p->ifidx, dst_mac);
	}
	r->n = 0;
}

/* Counts every fragment of @r as delivered (@cls) and frees them. */
static void deliver_all(struct rxp_stack *st, struct rxp_reasm *r, enum rxp_sink_class cls)
{
	for (unsigned i = 0; i < r->n; i++) {
		rxp_count_delivered(st, r->frags[i], cls);
		rxp_pool_free(st->cache, r->frags[i]);
	}
	r->n = 0;
}

/*
 * A complete datagram (@r, out of the table and its fragments no longer
 * counted as held): what the router does with it as a whole; every
 * fragment is consumed. The transport header must lie in the first
 * fragment (RFC 7112 asks it of IPv6; anything else is not worth the
 * trouble).
 */
static void complete(struct rxp_stack *st, struct rxp_reasm *r)
{
	struct rxp_pkt *first = r->frags[0];
	const void *l4;
	/* the byte naming the upper layer: IPv4's protocol; for IPv6, found below */
	uint32_t head, nh_at = offsetof(struct rxp_ip4_hdr, proto), len, after = 0;
	bool v6 = r->family == 6;
	uint8_t proto = r->proto;

	if (v6) {
		uint16_t fragmentable = first->l4_off;
		enum rxp_drop_reason why = rxp_ip6_reasm_chain(st, first, &nh_at);

		if (why != RXP_DROP_MAX) {
			drop_all(st, r, why);
			return;
		}
		/*
		 * extension headers after the Fragment header (all in the first
		 * fragment, RFC 7112) are not the upper layer's: its message
		 * starts after them (a multiple of 8 bytes: sums stay aligned)
		 */
		if (first->l4_off != fragmentable) {
			after = (uint32_t)(first->l4_off - fragmentable);
			first->user[0] = frag_off(first) | (uint64_t)(frag_len(first) - after) << 32;
			r->end -= after;
		}
		proto = first->l4_proto;
		if (proto == RXP_IPPROTO_NONE) {
			deliver_all(st, r, RXP_SINK_OTHER6);
			return;
		}
	}
	/* the first fragment's header and all the data: 65535 bytes at most (a later one may carry fewer options) */
	if (!v6 && first->l4_off - first->l3_off + r->end > 65535u) {
		drop_all(st, r, RXP_DROP_REASM_BAD);
		return;
	}
	l4 = rxp_pkt_cl4(first);
	head = frag_len(first);
	len = r->end;
	first->l4_proto = proto;
	if ((!v6 && proto == RXP_IPPROTO_ICMP) || (v6 && proto == RXP_IPPROTO_ICMP6)) {
		const struct rxp_icmp_hdr *icmp = l4;
		uint64_t sum = payload_sum(r, r->end);

		if (v6) {
			const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(first);

			sum += rxp_csum_pseudo6(ip->src, ip->dst, RXP_IPPROTO_ICMP6, r->end);
		}
		if (head < RXP_ICMP_HLEN || rxp_csum_fold(sum) != 0) {
			drop_all(st, r, RXP_DROP_ICMP_BAD);
			return;
		}
		if (icmp->type == (v6 ? RXP_ICMP6_ECHO_REQUEST : RXP_ICMP_ECHO_REQUEST))
			echo_reply(st, r, after);
		else	/* other ICMP to us: taken, as whole ones are without a host path */
			deliver_all(st, r, v6 ? RXP_SINK_OTHER6 : RXP_SINK_OTHER4);
		return;
	}
	if (proto == RXP_IPPROTO_UDP) {
		const struct rxp_udp_hdr *udp = l4;

		if (head < RXP_UDP_HLEN) {
			drop_all(st, r, RXP_DROP_L4_TRUNCATED);
			return;
		}
		len = ntohs(udp->len);
		if (len < RXP_UDP_HLEN || len > r->end) {
			drop_all(st, r, RXP_DROP_UDP_LEN);
			return;
		}
	} else if (proto == RXP_IPPROTO_TCP) {
		const struct rxp_tcp_hdr *tcp = l4;

		if (head < RXP_TCP_HLEN) {
			drop_all(st, r, RXP_DROP_L4_TRUNCATED);
			return;
		}
		if (rxp_tcp_doff(tcp) < RXP_TCP_HLEN || rxp_tcp_doff(tcp) > head) {
			drop_all(st, r, RXP_DROP_TCP_OFFSET);
			return;
		}
	}
	if ((proto == RXP_IPPROTO_UDP || proto == RXP_IPPROTO_TCP) &&
	    !rxp_l4_sum_ok(first, len, payload_sum(r, len))) {
		drop_all(st, r, RXP_DROP_L4_CSUM);
		return;
	}
	drop_all(st, r, rxp_local_l4_answer(st, first, len, nh_at));
}

/* The slot of the datagram with this key, a new one if none, or NULL when all are taken. */
static struct rxp_reasm *find_slot(struct rxp_stack *st, uint8_t family, uint32_t id,
				   uint8_t proto, const uint8_t *src, const uint8_t *dst)
{
	unsigned alen = family == 6 ? 16 : 4;
	struct rxp_reasm *free_slot = NULL, *dead_slot = NULL;

	for (unsigned i = 0; i < RXP_REASM_DATAGRAMS; i++) {
		struct rxp_reasm *r = &st->reasm[i];

		if (!r->deadline_ns) {
			if (!free_slot)
				free_slot = r;
			continue;
		}
		if (r->family == family && r->id == id && r->proto == proto &&
		    !memcmp(r->src, src, alen) && !memcmp(r->dst, dst, alen))
			return r;
		if (r->dead && !dead_slot)
			dead_slot = r;
	}
	/*
	 * Full: an abandoned datagram's slot (holding nothing, kept only to
	 * drop its late fragments) makes room, so that a few overlapping
	 * fragments cannot shut reassembly for everyone for a minute
	 */
	if (!free_slot)
		free_slot = dead_slot;
	if (!free_slot)
		return NULL;
	memset(free_slot->src, 0, sizeof(free_slot->src));
	memset(free_slot->dst, 0, sizeof(free_slot->dst));
	memcpy(free_slot->src, src, alen);
	memcpy(free_slot->dst, dst, alen);
	free_slot->family = family;
	free_slot->id = id;
	free_slot->proto = proto;
	free_slot->n = 0;
	free_slot->end = 0;
	free_slot->dead = false;
	/* the poll loop's clock; never 0, which marks a free slot */
	free_slot->deadline_ns = RXP_MAX(st->now_ns, 1) +
				 (family == 6 ? REASM_TIMEOUT6_NS : REASM_TIMEOUT4_NS);
	return free_slot;
}

/*
 * Adds @pkt (@off and @len of the payload, @more to come after it) to @r.
 * Returns true when the datagram is now complete.
 */
static bool add_fragment(struct rxp_stack *st, struct rxp_reasm *r, struct rxp_pkt *pkt,
			 uint32_t off, uint32_t len, bool more)
{
	uint32_t end = off + len, covered = 0;
	unsigned at = r->n;

	if (r->dead) {
		rxp_drop(st, pkt, RXP_DROP_REASM_OVERLAP);
		return false;
	}
	for (unsigned i = 0; i < r->n; i++) {
		uint32_t o = frag_off(r->frags[i]), l = frag_len(r->frags[i]);

		if (off < o + l && o < end) {
			rxp_drop(st, pkt, RXP_DROP_REASM_OVERLAP);
			if (o != off || l != len)	/* not a duplicate: the datagram goes too */
				abandon_overlap(st, r);
			return false;
		}
		if (o > off && at == r->n)
			at = i;
	}
	/* a last fragment fixes the length: everything must fit in it, once */
	if ((!more && ((r->end && r->end != end) ||
		       (r->n && frag_off(r->frags[r->n - 1]) + frag_len(r->frags[r->n - 1]) > end))) ||
	    (more && r->end && end > r->end)) {
		rxp_drop(st, pkt, RXP_DROP_REASM_BAD);
		abandon(st, r, RXP_DROP_REASM_BAD);
		return false;
	}
	if (r->n == RXP_REASM_FRAGS || st->reasm_held >= RXP_REASM_HELD_MAX) {
		rxp_drop(st, pkt, RXP_DROP_REASM_FULL);
		if (r->n == RXP_REASM_FRAGS)
			abandon(st, r, RXP_DROP_REASM_FULL);
		else if (!r->n)
			r->deadline_ns = 0;	/* a slot taken for nothing */
		return false;
	}
	pkt->user[0] = off | (uint64_t)len << 32;
	memmove(&r->frags[at + 1], &r->frags[at], (r->n - at) * sizeof(r->frags[0]));
	r->frags[at] = pkt;
	r->n++;
	st->reasm_held++;
	if (!more)
		r->end = end;
	if (!r->end)
		return false;
	for (unsigned i = 0; i < r->n; i++) {
		if (frag_off(r->frags[i]) != covered)
			return false;
		covered += frag_len(r->frags[i]);
	}
	return covered == r->end;
}

/* The length of the upper-layer header @proto names, as far as it is known here. */
static uint32_t upper_header_len(uint8_t proto)
{
	switch (proto) {
	case RXP_IPPROTO_TCP:
		return RXP_TCP_HLEN;
	case RXP_IPPROTO_UDP:
	case RXP_IPPROTO_ICMP6:
		return 8;
	default:
		return 0;
	}
}

/*
 * RFC 8200 4.5, RFC 7112: a first fragment holds the whole header chain,
 * the extension headers after the fragment header (@nh names the first,
 * at @data, @len bytes) and the upper-layer header. True when it does.
 */
static bool first_has_chain(const uint8_t *data, uint32_t len, uint8_t nh)
{
	uint32_t off = 0;

	for (unsigned n = 0; n < 8; n++) {
		if (nh != RXP_IPPROTO_DSTOPTS && nh != RXP_IPPROTO_ROUTING)
			return off + upper_header_len(nh) <= len;
		if (off + 8 > len)
			return false;
		nh = data[off];
		off += (data[off + 1] + 1u) * 8u;
	}
	return true;	/* a chain this long is not followed anyway */
}

void rxp_reasm_input(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	bool v6 = pkt->flags & RXP_PKT_F_IP6;
	const uint8_t *src, *dst;	/* the datagram's addresses */
	uint32_t off, len, id, src4, dst4;
	uint8_t proto = 0;
	struct rxp_reasm *r;
	bool more;

	if (v6) {
		const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(pkt);
		const struct rxp_ip6_frag_hdr *fh = rxp_pkt_cl4(pkt);
		uint32_t fh_at = (uint32_t)(pkt->l4_off - pkt->l3_off);	/* where fh is, in the packet */

		if (pkt->l3_len < fh_at + RXP_IP6_FRAG_HLEN) {
			rxp_drop(st, pkt, RXP_DROP_L4_TRUNCATED);
			return;
		}
		off = ntohs(fh->frag_off) & RXP_IP6_FRAG_OFFMASK;
		more = ntohs(fh->frag_off) & RXP_IP6_FRAG_MF;
		id = ntohl(fh->id);
		len = pkt->l3_len - fh_at - RXP_IP6_FRAG_HLEN;
		pkt->l4_off = (uint16_t)(pkt->l3_off + fh_at + RXP_IP6_FRAG_HLEN);
		/*
		 * RFC 8200 4.5: Parameter Problem at the Payload Length, or at the
		 * Fragment Offset when the reassembled Payload Length (the
		 * unfragmentable headers after the fixed one included) passes 65535
		 */
		bool too_long = fh_at - RXP_IP6_HLEN + off + len > 65535;

		if ((more && (len % 8 || !len)) || too_long) {
			rxp_icmp6_error_local(st, pkt, RXP_ICMP6_PARAM_PROB, RXP_ICMP6_PARAM_HEADER,
					      too_long ? fh_at + offsetof(struct rxp_ip6_frag_hdr, frag_off) :
							 offsetof(struct rxp_ip6_hdr, payload_len));
			rxp_drop(st, pkt, RXP_DROP_REASM_BAD);
			return;
		}
		/* RFC 8200 4.5 (RFC 7112): a first fragment must hold the header chain */
		if (!off && !first_has_chain((const uint8_t *)(fh + 1), len, fh->next_hdr)) {
			rxp_icmp6_error_local(st, pkt, RXP_ICMP6_PARAM_PROB, RXP_ICMP6_PARAM_CHAIN, 0);
			rxp_drop(st, pkt, RXP_DROP_REASM_BAD);
			return;
		}
		if (!off && !more) {
			/*
			 * RFC 6946: an atomic fragment is processed alone, never with
			 * others, as the whole packet it is (its fragment header
			 * stepped over with the rest of the chain).
			 */
			rxp_local_l4(st, pkt);
			return;
		}
		src = ip->src;
		dst = ip->dst;
	} else {
		const struct rxp_ip4_hdr *ip = rxp_pkt_cip4(pkt);
		uint32_t ihl = rxp_ip4_ihl(ip), frag = ntohs(ip->frag_off);

		off = (frag & RXP_IP4_OFFMASK) * 8u;
		more = frag & RXP_IP4_MF;
		id = ntohs(ip->id);
		proto = ip->proto;
		len = pkt->l3_len - ihl;
		if (more && (len % 8 || !len)) {
			rxp_drop(st, pkt, RXP_DROP_REASM_BAD);
			return;
		}
		src4 = ip->src;
		dst4 = ip->dst;
		src = (const uint8_t *)&src4;
		dst = (const uint8_t *)&dst4;
	}
	r = find_slot(st, v6 ? 6 : 4, id, proto, src, dst);
	if (!r) {
		rxp_drop(st, pkt, RXP_DROP_REASM_FULL);
		return;
	}
	if (add_fragment(st, r, pkt, off, len, more)) {
		/* out of the table first: what complete() sends may come back here */
		struct rxp_reasm done = *r;

		r->n = 0;
		r->end = 0;
		r->deadline_ns = 0;
		st->reasm_held -= done.n;
		complete(st, &done);
	}
}

unsigned rxp_reasm_expire(struct rxp_stack *st, bool all, bool answer, enum rxp_drop_reason why)
{
	unsigned dropped = 0;

	for (unsigned i = 0; i < RXP_REASM_DATAGRAMS; i++) {
		struct rxp_reasm *r = &st->reasm[i];

		if (!r->deadline_ns || (!all && st->now_ns < r->deadline_ns))
			continue;
		/* RFC 792, RFC 8200 4.5: Time Exceeded, code 1, when the first fragment came */
		if (answer && r->n && frag_off(r->frags[0]) == 0) {
			if (r->family == 6)
				rxp_icmp6_error_local(st, r->frags[0], RXP_ICMP6_TIME_EXCEEDED,
						      RXP_ICMP6_EXCEEDED_REASM, 0);
			else
				rxp_icmp4_error_local(st, r->frags[0], RXP_ICMP_TIME_EXCEEDED,
						      RXP_ICMP_EXCEEDED_REASM);
		}
		dropped += r->n;
		abandon(st, r, why);
	}
	return dropped;
}
