/* SPDX-License-Identifier: MIT */
/*
 * Multicast Listener Discovery, the listener's part (RFC 3810, and RFC 2710
 * toward an MLDv1 querier): a query on a link is answered with the groups
 * the router listens to there, so that a switch snooping MLD goes on
 * sending it the Neighbor Solicitations for its addresses. The router is no
 * querier and routes no multicast.
 *
 * A report goes at once, where a host would wait a random time up to the
 * query's Maximum Response Delay (RFC 3810 6.2): 0 is in that range, and
 * the spread is there to keep many listeners from answering together, not
 * to make one of them wait. Unsolicited reports (on joining) are not sent:
 * a snooping switch floods groups it has no report for until its querier
 * asks.
 */
#include "rxpath/csum.h"
#include "route.h"

#define MLD_REPORT_V1	131
#define MLD_REPORT_V2	143
#define MLD_V1_LEN	24	/* an MLDv1 query, and report */
#define MLD_V2_QUERY_MIN 28
#define MLD_V2_RECORD	20	/* a record without sources */
#define MODE_IS_EXCLUDE	2	/* "all sources": a listener's current state */
#define HBH_LEN		8	/* Hop-by-Hop header with the Router Alert option */
#define GROUPS_MAX	(2 + 2 * RXP_IF_ADDRS)

/* ff02::1:ffXX:XXXX, the solicited-node group of @addr (RFC 4291 2.7.1) */
static void solicited_node(uint8_t group[16], const uint8_t addr[16])
{
	static const uint8_t pfx[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };

	memcpy(group, pfx, sizeof(pfx));
	memcpy(group + 13, addr + 13, 3);
}

static unsigned add_group(uint8_t (*groups)[16], unsigned n, const uint8_t group[16])
{
	for (unsigned i = 0; i < n; i++)
		if (!memcmp(groups[i], group, 16))
			return n;
	memcpy(groups[n], group, 16);
	return n + 1;
}

/*
 * The groups the router listens to on @ifp, as ip6_fwd.c takes them: all
 * routers of link and site scope, and the solicited-node group of each
 * address and Subnet-Router anycast address. (All-nodes is never reported,
 * RFC 3810 6.)
 */
static unsigned if_groups(const struct rxp_l3if *ifp, uint8_t (*groups)[16])
{
	static const uint8_t all_routers[16] = { 0xff, 0x02, [15] = 2 };
	static const uint8_t site_routers[16] = { 0xff, 0x05, [15] = 2 };
	uint8_t g[16], anycast[16];
	unsigned n = 0;

	n = add_group(groups, n, all_routers);
	n = add_group(groups, n, site_routers);
	for (unsigned i = 0; i < ifp->n_addr6; i++) {
		const uint8_t *a = ifp->addr6[i];

		solicited_node(g, a);
		n = add_group(groups, n, g);
		if (ifp->plen6[i] >= 127 || rxp_ip6_is_link_local(a))
			continue;
		rxp_prefix_mask(6, a, ifp->plen6[i], anycast);
		solicited_node(g, anycast);
		n = add_group(groups, n, g);
	}
	return n;
}

/*
 * A report of @len bytes of MLD, from the link-local address of @ifp to
 * @dst, hop limit 1, behind a Router Alert (RFC 3810 5.2.13, RFC 2710 3).
 * Returns the packet, its MLD message at *msg, or NULL.
 */
static struct rxp_pkt *report_alloc(struct rxp_stack *st, const struct rxp_l3if *ifp,
				    const uint8_t dst[16], uint32_t len, uint8_t **msg)
{
	static const uint8_t hbh[HBH_LEN] = { RXP_IPPROTO_ICMP6, 0, 5, 2, 0, 0, 1, 0 };
	struct rxp_pkt *pkt = rxp_local_alloc(st, (uint16_t)(RXP_IP6_HLEN + HBH_LEN + len));
	uint8_t *ip;

	if (!pkt)
		return NULL;
	ip = rxp_pkt_data(pkt) + pkt->l3_off;
	memset(ip, 0, 4);
	ip[0] = 0x60;
	ip[4] = (uint8_t)((HBH_LEN + len) >> 8);
	ip[5] = (uint8_t)(HBH_LEN + len);
	ip[6] = 0;	/* Hop-by-Hop */
	ip[7] = 1;
	memcpy(ip + 8, ifp->addr6[0], 16);
	memcpy(ip + 24, dst, 16);
	memcpy(ip + RXP_IP6_HLEN, hbh, HBH_LEN);
	*msg = ip + RXP_IP6_HLEN + HBH_LEN;
	memset(*msg, 0, len);
	return pkt;
}

static void report_send(struct rxp_stack *st, const struct rxp_l3if *ifp, struct rxp_pkt *pkt,
			const uint8_t *msg, uint32_t len)
{
	const uint8_t *ip = rxp_pkt_cdata(pkt) + pkt->l3_off;
	uint8_t mac[6] = { 0x33, 0x33 };
	uint16_t c = rxp_icmp6_csum(ip, msg, len);

	memcpy((uint8_t *)msg + 2, &c, 2);
	memcpy(mac + 2, ip + 24 + 12, 4);
	if (!rxp_l2_prepend(pkt, ifp, mac, RXP_ETHERTYPE_IP6)) {
		rxp_drop(st, pkt, RXP_DROP_NO_MEMORY);
		return;
	}
	pkt->port = ifp->port;
	rxp_tx_enqueue(st, pkt, true);
}

/* MLDv2: one report with a record per group, to all MLDv2 routers (RFC 3810 5.2) */
static void report_v2(struct rxp_stack *st, const struct rxp_l3if *ifp, uint8_t (*groups)[16],
		      unsigned n)
{
	static const uint8_t all_mldv2_routers[16] = { 0xff, 0x02, [15] = 0x16 };
	uint32_t len = 8 + n * MLD_V2_RECORD;
	uint8_t *msg;
	struct rxp_pkt *pkt = report_alloc(st, ifp, all_mldv2_routers, len, &msg);

	if (!pkt)
		return;
	msg[0] = MLD_REPORT_V2;
	msg[7] = (uint8_t)n;
	for (unsigned i = 0; i < n; i++) {
		uint8_t *rec = msg + 8 + i * MLD_V2_RECORD;

		rec[0] = MODE_IS_EXCLUDE;
		memcpy(rec + 4, groups[i], 16);
	}
	report_send(st, ifp, pkt, msg, len);
}

/* MLDv1: a report per group, each to its group (RFC 2710 4) */
static void report_v1(struct rxp_stack *st, const struct rxp_l3if *ifp, uint8_t (*groups)[16],
		      unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint8_t *msg;
		struct rxp_pkt *pkt = report_alloc(st, ifp, groups[i], MLD_V1_LEN, &msg);

		if (!pkt)
			return;
		msg[0] = MLD_REPORT_V1;
		memcpy(msg + 8, groups[i], 16);
		report_send(st, ifp, pkt, msg, MLD_V1_LEN);
	}
}

void rxp_mld_query(struct rxp_stack *st, struct rxp_pkt *pkt, const uint8_t *msg, uint32_t len)
{
	const uint8_t *ip = rxp_pkt_cdata(pkt) + pkt->l3_off;
	const struct rxp_l3if *ifp = &st->router->ifs[pkt->ifidx];
	static const uint8_t unspec[16];
	uint8_t groups[GROUPS_MAX][16];
	unsigned n;

	/*
	 * From a router on the link, never routed (RFC 3810 5.1.14, RFC 2710
	 * 5); a length between the two versions' is neither (RFC 3810 8.1).
	 * A query about some sources of a group is about leaving them: the
	 * router's groups take every source and never leave one.
	 */
	if (!rxp_ip6_is_link_local(ip + 8) || ip[7] != 1 ||
	    (len != MLD_V1_LEN && len < MLD_V2_QUERY_MIN) ||
	    (len >= MLD_V2_QUERY_MIN && rxp_load_be16(msg + 26)))
		return;
	n = if_groups(ifp, groups);
	/* a group's own query: answered for that group alone, if it is one of ours */
	if (memcmp(msg + 8, unspec, 16)) {
		unsigned k = 0;

		while (k < n && memcmp(groups[k], msg + 8, 16))
			k++;
		if (k == n)
			return;
		memmove(groups[0], groups[k], 16);
		n = 1;
	}
	if (len == MLD_V1_LEN)
		report_v1(st, ifp, groups, n);
	else
		report_v2(st, ifp, groups, n);
}
