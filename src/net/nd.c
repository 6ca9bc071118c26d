/* SPDX-License-Identifier: MIT */
/*
 * Neighbor Discovery (RFC 4861) on Ethernet (RFC 2464): answer
 * solicitations for the router's addresses, learn from solicitations and
 * advertisements, solicit next hops, send Redirects. Router Solicitations
 * are handed to ra.c; other routers' advertisements and Redirects are
 * validated and taken, but not acted on.
 */
#include <string.h>
#include "host.h"
#include "icmp.h"
#include "ip6_addr.h"
#include "nd.h"
#include "out.h"

#define ND_RS 133
#define ND_RA 134
#define ND_NS 135
#define ND_NA 136
#define ND_REDIRECT 137
#define ND_HOP_LIMIT 255	/* RFC 4861 6.1, 7.1, 8.1: proves the sender is on the link */
#define ND_NS_LEN 24		/* type .. target address */
#define ND_NA_LEN 24
#define ND_REDIRECT_LEN 40	/* type .. destination address */
#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2
#define ND_OPT_REDIRECTED 4	/* Redirected Header (RFC 4861 4.6.3) */
#define ND_OPT_REDIRECTED_HLEN 8
#define ND_OPT_LLA_LEN 8	/* an Ethernet address option is one 8-byte unit (RFC 2464 8) */
#define NA_F_ROUTER 0x80
#define NA_F_SOLICITED 0x40
#define NA_F_OVERRIDE 0x20

static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };
static const uint8_t zero16[16];

/* RFC 4291 2.7.1: ff02::1:ff00:0/104 */
static bool is_solicited_node(const uint8_t *a)
{
	static const uint8_t pfx[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };

	return !memcmp(a, pfx, 13);
}

/*
 * Walks the options of an ND message (RFC 4861 4.6): @len bytes, each
 * option a type, a length in 8-byte units and its data. Returns false
 * when an option has length 0 or runs past the end. Sets *lla to the
 * address in the first option of type @want, NULL when there is none.
 */
static bool nd_options(const uint8_t *opt, uint32_t len, uint8_t want, const uint8_t **lla)
{
	*lla = NULL;
	while (len) {
		uint32_t olen;

		if (len < 2)
			return false;
		olen = opt[1] * 8u;
		if (olen == 0 || olen > len)
			return false;
		/* an Ethernet link-layer address option is one unit long (RFC 2464 8) */
		if ((opt[0] == ND_OPT_SLLA || opt[0] == ND_OPT_TLLA) && olen != ND_OPT_LLA_LEN)
			return false;
		if (opt[0] == want && !*lla)
			*lla = opt + 2;	/* olen >= 8: the 6 bytes are there */
		opt += olen;
		len -= olen;
	}
	return true;
}

/* RFC 4861 7.2.4: a Neighbor Advertisement for @target, with our MAC in the TLLA option. */
static void na_send(struct rxp_stack *st, int ifidx, const uint8_t target[16],
		    const uint8_t dst[16], const uint8_t dst_mac[6], uint8_t flags)
{
	const struct rxp_l3if *ifp = &st->router->ifs[ifidx];
	struct rxp_pkt *pkt = rxp_local_alloc(st, RXP_IP6_HLEN + ND_NA_LEN + ND_OPT_LLA_LEN);
	uint8_t *ip, *na, src[16];

	if (!pkt)
		return;
	ip = rxp_pkt_data(pkt) + pkt->l3_off;
	na = ip + RXP_IP6_HLEN;
	na[0] = ND_NA;
	na[1] = 0;
	na[4] = flags;
	na[5] = 0;
	na[6] = 0;
	na[7] = 0;
	memcpy(na + 8, target, 16);
	na[24] = ND_OPT_TLLA;
	na[25] = ND_OPT_LLA_LEN / 8;
	memcpy(na + 26, ifp->mac, 6);
	/*
	 * from the target itself, an address of the interface; for an anycast
	 * target (which another router may share) from a unicast one of ours
	 */
	if (rxp_l3if_has_addr6(ifp, target))
		memcpy(src, target, 16);
	else
		rxp_icmp6_source(st->router, ifp, dst, false, src);
	rxp_icmp6_finish(ip, src, dst, ND_HOP_LIMIT, ND_NA_LEN + ND_OPT_LLA_LEN);
	pkt->port = ifp->port;
	pkt->ifidx = (uint16_t)ifidx;
	rxp_l2_prepend(pkt, ifp, dst_mac, RXP_ETHERTYPE_IP6);
	rxp_tx_enqueue(st, pkt, true);
}

/* RFC 4861 7.1.1 validation, 7.2.3 processing, 7.2.4 the answer. */
static void ns_input(struct rxp_stack *st, struct rxp_pkt *pkt, const struct rxp_ip6_hdr *ip,
		     const uint8_t *icmp, uint32_t icmp_len)
{
	const struct rxp_l3if *ifp = &st->router->ifs[pkt->ifidx];
	const uint8_t *src = ip->src, *dst = ip->dst, *target = icmp + 8, *lla;
	uint8_t mac[6], flags = NA_F_ROUTER;
	bool unspec;

	if (icmp_len < ND_NS_LEN || target[0] == 0xff ||
	    !nd_options(icmp + ND_NS_LEN, icmp_len - ND_NS_LEN, ND_OPT_SLLA, &lla)) {
		rxp_drop(st, pkt, RXP_DROP_ND_BAD);
		return;
	}
	/* an address probe (RFC 4862 5.4.2) goes to a solicited-node group and names no sender */
	unspec = !memcmp(src, zero16, 16);
	if (unspec && (!is_solicited_node(dst) || lla)) {
		rxp_drop(st, pkt, RXP_DROP_ND_BAD);
		return;
	}
	/* RFC 4861 7.2.7: for an anycast target, do not override the owner's entry */
	if (rxp_l3if_has_addr6(ifp, target)) {
		flags |= NA_F_OVERRIDE;
	} else if (!rxp_l3if_anycast6(ifp, target)) {
		rxp_drop(st, pkt, RXP_DROP_ND_NOT_FOR_US);
		return;
	}
	if (lla && !rxp_eth_is_multicast(lla))
		rxp_neigh_learn(st, pkt->ifidx, 6, src, lla, true, false);
	if (unspec) {
		/* RFC 4861 7.2.4: to all-nodes, and not marked solicited */
		rxp_ip6_mcast_mac(mac, all_nodes);
	} else {
		memcpy(mac, lla && !rxp_eth_is_multicast(lla) ? lla : rxp_pkt_ceth(pkt)->src, 6);
		flags |= NA_F_SOLICITED;
	}
	rxp_count_delivered(st, pkt, RXP_SINK_ND);
	/* the solicitation is freed after: @target and @src still point into it */
	na_send(st, pkt->ifidx, target, unspec ? all_nodes : src, mac, flags);
	rxp_pool_free(st->cache, pkt);
}

/* RFC 4861 7.1.2 validation, 7.2.5 processing (update only: we never asked otherwise). */
static void na_input(struct rxp_stack *st, struct rxp_pkt *pkt, const struct rxp_ip6_hdr *ip,
		     const uint8_t *icmp, uint32_t icmp_len)
{
	const uint8_t *target = icmp + 8, *lla;

	if (icmp_len < ND_NA_LEN || target[0] == 0xff ||
	    (ip->dst[0] == 0xff && (icmp[4] & NA_F_SOLICITED)) ||
	    !nd_options(icmp + ND_NA_LEN, icmp_len - ND_NA_LEN, ND_OPT_TLLA, &lla)) {
		rxp_drop(st, pkt, RXP_DROP_ND_BAD);
		return;
	}
	rxp_count_delivered(st, pkt, RXP_SINK_ND);
	/*
	 * Without a TLLA option there is nothing to learn for an incomplete
	 * entry, but a solicited one confirms a known entry (the answer to a
	 * unicast probe). Without Override, a known address is not replaced
	 * (the entry stays as it is until it ages out).
	 */
	if (lla && !rxp_eth_is_multicast(lla))
		rxp_neigh_learn_advert(st, pkt->ifidx, target, lla, icmp[4] & NA_F_OVERRIDE,
				       icmp[4] & NA_F_SOLICITED);
	else if (!lla && (icmp[4] & NA_F_SOLICITED))
		rxp_neigh_confirm(st, pkt->ifidx, target);
	/* the host's kernel may be resolving @target too: a copy for it */
	rxp_host_take(st, pkt);
}

void rxp_nd_input(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(pkt);
	const struct rxp_icmp_hdr *hdr = rxp_pkt_cl4(pkt);
	const uint8_t *icmp = rxp_pkt_cl4(pkt), *lla;	/* the message, ND fields at their offsets */
	uint32_t icmp_len = (uint32_t)pkt->l3_len - (uint32_t)(pkt->l4_off - pkt->l3_off);
	uint32_t fixed;

	if (ip->hop_limit != ND_HOP_LIMIT || hdr->code != 0) {
		rxp_drop(st, pkt, RXP_DROP_ND_BAD);
		return;
	}
	switch (hdr->type) {
	case ND_NS:
		ns_input(st, pkt, ip, icmp, icmp_len);
		return;
	case ND_NA:
		na_input(st, pkt, ip, icmp, icmp_len);
		return;
	case ND_RS:
		fixed = 8;
		break;
	case ND_RA:
		fixed = 16;
		break;
	default:
		fixed = 40;	/* Redirect */
		break;
	}
	/* RFC 4861 6.1.1, 6.1.2, 8.1: fixed part there, options well formed; then taken */
	if (icmp_len < fixed || !nd_options(icmp + fixed, icmp_len - fixed, ND_OPT_SLLA, &lla)) {
		rxp_drop(st, pkt, RXP_DROP_ND_BAD);
		return;
	}
	/* 6.1.1: from the unspecified address, a solicitation carries no link-layer address */
	if (hdr->type == ND_RS && lla && !memcmp(ip->src, zero16, 16)) {
		rxp_drop(st, pkt, RXP_DROP_ND_BAD);
		return;
	}
	/*
	 * 6.1.2, 8.1: advertisements and redirects come from a router's
	 * link-local address; a redirect is about a unicast destination and
	 * names a link-local router or the destination itself
	 */
	if ((hdr->type == ND_RA || hdr->type == ND_REDIRECT) && !rxp_ip6_is_link_local(ip->src)) {
		rxp_drop(st, pkt, RXP_DROP_ND_BAD);
		return;
	}
	if (hdr->type == ND_REDIRECT && (icmp[24] == 0xff ||
				       (!rxp_ip6_is_link_local(icmp + 8) && memcmp(icmp + 8, icmp + 24, 16)))) {
		rxp_drop(st, pkt, RXP_DROP_ND_BAD);
		return;
	}
	rxp_count_delivered(st, pkt, RXP_SINK_ND);
	if (hdr->type == ND_RS) {
		/* 6.2.6: a soliciting host's address is learned (not from ::, which carries none) */
		if (lla && !rxp_eth_is_multicast(lla))
			rxp_neigh_learn(st, pkt->ifidx, 6, ip->src, lla, true, false);
		rxp_ra_solicited(st, pkt->ifidx);
	}
	rxp_pool_free(st->cache, pkt);
}

/* True when @a is a neighbour on @ifp: link-local, or on one of its prefixes. */
static bool on_link6(const struct rxp_l3if *ifp, const uint8_t *a)
{
	if (rxp_ip6_is_link_local(a))
		return true;
	for (unsigned i = 0; i < ifp->n_addr6; i++)
		if (!rxp_ip6_is_link_local(ifp->addr6[i]) &&
		    rxp_prefix_eq(ifp->addr6[i], a, ifp->plen6[i]))
			return true;
	return false;
}

/*
 * The rules of RFC 4861 8.2: redirects on for the interface (the default),
 * a source that is a neighbour (link-local or on one of the interface's
 * prefixes), a unicast destination, and a target that a host may take: the
 * destination itself when it is on-link, else the next router by its
 * link-local address (8.1; a gateway configured by a global address cannot
 * be named). The Redirect goes from our link-local address with hop limit
 * 255, carries the target's link-layer address when we know it and as much
 * of the packet as keeps it within 1280 bytes (4.6.3), and takes a token of
 * the ICMP rate limit.
 */
void rxp_nd_maybe_redirect(struct rxp_stack *st, struct rxp_pkt *orig, const uint8_t next[16])
{
	const struct rxp_l3if *ifp = &st->router->ifs[orig->ifidx];
	const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(orig);
	const uint8_t *src = ip->src, *dst = ip->dst;
	uint8_t mac[6], src_mac[6];
	bool have_mac = false;
	uint32_t quote, len;
	struct rxp_pkt *pkt;
	uint8_t *o, *rd, *opt;

	if (ifp->no_redirects || !ifp->n_addr6 || dst[0] == 0xff || !on_link6(ifp, src) ||
	    rxp_l3if_has_addr6(ifp, src) ||	/* a packet with our own source: nobody to tell */
	    (memcmp(next, dst, 16) && !rxp_ip6_is_link_local(next)) || !memcmp(src, next, 16) ||
	    (orig->flags & (RXP_PKT_F_L2_MCAST | RXP_PKT_F_LOCAL_OUT)))
		return;
	if (!rxp_ratelimit_take(&st->shared->icmp_limit, st->now_ns)) {
		st->stats.icmp_ratelimited++;
		return;
	}
	rxp_neigh_lock(st);
	{
		const struct rxp_neigh *n = rxp_neigh_lookup(&st->router->neigh, orig->ifidx, 6, next);

		if (n && (n->state == RXP_NEIGH_REACHABLE || n->state == RXP_NEIGH_STATIC)) {
			memcpy(mac, n->mac, 6);
			have_mac = true;
		}
	}
	rxp_neigh_unlock(st);
	len = ND_REDIRECT_LEN + (have_mac ? ND_OPT_LLA_LEN : 0) + ND_OPT_REDIRECTED_HLEN;
	/* whole 8-byte units of the packet, as many as fit in the minimum MTU */
	quote = RXP_MIN((uint32_t)orig->l3_len, RXP_IP6_MIN_MTU - RXP_IP6_HLEN - len) & ~7u;
	len += quote;
	pkt = rxp_local_alloc(st, (uint16_t)(RXP_IP6_HLEN + len));
	if (!pkt)
		return;
	memcpy(src_mac, rxp_pkt_ceth(orig)->src, 6);
	o = rxp_pkt_data(pkt) + pkt->l3_off;
	rd = o + RXP_IP6_HLEN;
	memset(rd, 0, ND_REDIRECT_LEN);
	rd[0] = ND_REDIRECT;
	memcpy(rd + 8, next, 16);	/* target: the better first hop */
	memcpy(rd + 24, dst, 16);	/* destination: what the redirect is about */
	opt = rd + ND_REDIRECT_LEN;
	if (have_mac) {
		opt[0] = ND_OPT_TLLA;
		opt[1] = ND_OPT_LLA_LEN / 8;
		memcpy(opt + 2, mac, 6);
		opt += ND_OPT_LLA_LEN;
	}
	memset(opt, 0, ND_OPT_REDIRECTED_HLEN);
	opt[0] = ND_OPT_REDIRECTED;
	opt[1] = (uint8_t)((ND_OPT_REDIRECTED_HLEN + quote) / 8);
	memcpy(opt + ND_OPT_REDIRECTED_HLEN, ip, quote);
	/* ifp->addr6[0] is the interface's link-local address (RFC 4861 8.1 wants it) */
	rxp_icmp6_finish(o, ifp->addr6[0], src, ND_HOP_LIMIT, len);
	pkt->port = ifp->port;
	pkt->ifidx = orig->ifidx;
	rxp_l2_prepend(pkt, ifp, src_mac, RXP_ETHERTYPE_IP6);
	st->stats.icmp_errors++;
	st->stats.redirects++;
	rxp_tx_enqueue(st, pkt, true);
}

void rxp_nd_solicit(struct rxp_stack *st, int ifidx, const uint8_t target[16], const uint8_t *mac)
{
	const struct rxp_l3if *ifp = &st->router->ifs[ifidx];
	uint8_t group[16], group_mac[6], *ip, *ns;
	struct rxp_pkt *pkt;

	/* RFC 4861 7.2.2: to the target's solicited-node group, with our link-layer address */
	rxp_ip6_solicited_node(group, target);
	pkt = rxp_local_alloc(st, RXP_IP6_HLEN + ND_NS_LEN + ND_OPT_LLA_LEN);
	if (!pkt)
		return;
	ip = rxp_pkt_data(pkt) + pkt->l3_off;
	ns = ip + RXP_IP6_HLEN;
	ns[0] = ND_NS;
	ns[1] = 0;
	memset(ns + 4, 0, 4);
	memcpy(ns + 8, target, 16);
	ns[24] = ND_OPT_SLLA;
	ns[25] = ND_OPT_LLA_LEN / 8;
	memcpy(ns + 26, ifp->mac, 6);
	if (mac) {
		rxp_icmp6_finish(ip, ifp->addr6[0], target, ND_HOP_LIMIT, ND_NS_LEN + ND_OPT_LLA_LEN);
	} else {
		rxp_icmp6_finish(ip, ifp->addr6[0], group, ND_HOP_LIMIT, ND_NS_LEN + ND_OPT_LLA_LEN);
		rxp_ip6_mcast_mac(group_mac, group);
		mac = group_mac;
	}
	rxp_l2_prepend(pkt, ifp, mac, RXP_ETHERTYPE_IP6);
	pkt->port = ifp->port;
	st->stats.neigh_requests++;
	rxp_tx_enqueue(st, pkt, true);
}
