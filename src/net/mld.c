/* SPDX-License-Identifier: MIT */
/*
 * Multicast Listener Discovery, the listener's part (RFC 3810, and RFC 2710
 * toward an MLDv1 querier): a query on a link is answered with the groups
 * the router listens to there (rxp_l3if_groups6()), so that a switch
 * snooping MLD goes on sending it the Neighbor Solicitations for its
 * addresses. The router is no querier and routes no multicast.
 *
 * A report goes at once, where a host would wait a random time up to the
 * query's Maximum Response Delay (RFC 3810 6.2): 0 is in that range, and
 * the spread is there to keep many listeners from answering together, not
 * to make one of them wait. What the delay also does, keep one listener
 * from answering a burst of general queries with a burst of reports (up to
 * one per group each), a quiet second per interface does; a group's own
 * query is answered each time, with one report. Unsolicited reports (on
 * joining) are not sent: a snooping switch floods groups it has no report
 * for until its querier asks.
 */
#include "icmp.h"
#include "ip6_addr.h"
#include "nd.h"
#include "out.h"

#define MLD_REPORT_V1	131
#define MLD_REPORT_V2	143
#define MLD_V1_LEN	24	/* an MLDv1 query, and report */
#define MLD_V2_QUERY_MIN 28	/* an MLDv2 query without sources */
#define MLD_V2_RECORD	20	/* a record before its sources */
#define MODE_IS_INCLUDE	1	/* these sources */
#define MODE_IS_EXCLUDE	2	/* all sources but these: with none, all */
#define HBH_LEN		8	/* Hop-by-Hop header with the Router Alert option */
#define QUIET_GENERAL_NS 1000000000ull

_Static_assert(RXP_IFS_MAX <= RXP_STACK_IFS_MAX, "a quiet time for every interface");

static const uint8_t all_mldv2_routers[16] = { 0xff, 0x02, [15] = 0x16 };	/* ff02::16 */

/*
 * A report of @len bytes of MLD, from the link-local address of @ifp to
 * @dst, hop limit 1, behind a Router Alert (RFC 3810 5.2.13, RFC 2710 3).
 * Returns the packet, its MLD message zeroed at *msg, or NULL.
 */
static struct rxp_pkt *report_alloc(struct rxp_stack *st, const struct rxp_l3if *ifp,
				    const uint8_t dst[16], uint32_t len, uint8_t **msg)
{
	static const uint8_t hbh[HBH_LEN] = { RXP_IPPROTO_ICMP6, 0, 5, 2, 0, 0, 1, 0 };
	struct rxp_pkt *pkt = rxp_local_alloc(st, (uint16_t)(RXP_IP6_HLEN + HBH_LEN + len));
	struct rxp_ip6_hdr *ip;

	if (!pkt)
		return NULL;
	ip = rxp_pkt_ip6(pkt);
	ip->ver_tc_flow = htonl(6u << 28);	/* version 6; traffic class and flow label 0 */
	ip->payload_len = htons((uint16_t)(HBH_LEN + len));
	ip->next_hdr = RXP_IPPROTO_HOPOPTS;
	ip->hop_limit = 1;
	memcpy(ip->src, ifp->addr6[0], 16);
	memcpy(ip->dst, dst, 16);
	memcpy(ip + 1, hbh, HBH_LEN);
	*msg = (uint8_t *)(ip + 1) + HBH_LEN;
	memset(*msg, 0, len);
	return pkt;
}

static void report_send(struct rxp_stack *st, const struct rxp_l3if *ifp, struct rxp_pkt *pkt,
			uint8_t *msg, uint32_t len)
{
	const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(pkt);
	struct rxp_icmp_hdr *icmp = (struct rxp_icmp_hdr *)msg;
	uint8_t mac[6];

	icmp->csum = rxp_icmp6_csum(ip, icmp, len);
	rxp_ip6_mcast_mac(mac, ip->dst);
	if (!rxp_l2_prepend(pkt, ifp, mac, RXP_ETHERTYPE_IP6)) {
		rxp_drop(st, pkt, RXP_DROP_NO_MEMORY);
		return;
	}
	pkt->port = ifp->port;
	rxp_tx_enqueue(st, pkt, true);
}

/* MLDv2: a report with a record per group, all sources, to all MLDv2 routers (RFC 3810 5.2) */
static void report_v2(struct rxp_stack *st, const struct rxp_l3if *ifp, uint8_t (*groups)[16],
		      unsigned n)
{
	uint32_t len = 8 + n * MLD_V2_RECORD;
	uint8_t *msg;
	struct rxp_pkt *pkt = report_alloc(st, ifp, all_mldv2_routers, len, &msg);

	if (!pkt)
		return;
	msg[0] = MLD_REPORT_V2;
	rxp_store_be16(msg + 6, (uint16_t)n);
	for (unsigned i = 0; i < n; i++) {
		uint8_t *rec = msg + 8 + i * MLD_V2_RECORD;

		rec[0] = MODE_IS_EXCLUDE;
		memcpy(rec + 4, groups[i], 16);
	}
	report_send(st, ifp, pkt, msg, len);
}

/*
 * MLDv2, a query about some sources of @group: the router takes every
 * source, so it wants all of those asked about (RFC 3810 6.3: IS_IN of
 * them). As many reports as the link's MTU needs.
 */
static void report_v2_sources(struct rxp_stack *st, const struct rxp_l3if *ifp,
			      const uint8_t group[16], const uint8_t *sources, unsigned n_src)
{
	uint32_t room = ifp->mtu > RXP_IP6_HLEN + HBH_LEN + 8 + MLD_V2_RECORD + 16 ?
			(ifp->mtu - RXP_IP6_HLEN - HBH_LEN - 8 - MLD_V2_RECORD) / 16 : 1;

	for (unsigned done = 0; done < n_src;) {
		unsigned k = RXP_MIN(n_src - done, room);
		uint32_t len = 8 + MLD_V2_RECORD + 16 * k;
		uint8_t *msg;
		struct rxp_pkt *pkt = report_alloc(st, ifp, all_mldv2_routers, len, &msg);

		if (!pkt)
			return;
		msg[0] = MLD_REPORT_V2;
		rxp_store_be16(msg + 6, 1);
		msg[8] = MODE_IS_INCLUDE;
		rxp_store_be16(msg + 10, (uint16_t)k);
		memcpy(msg + 12, group, 16);
		memcpy(msg + 8 + MLD_V2_RECORD, sources + 16 * done, 16 * k);
		report_send(st, ifp, pkt, msg, len);
		done += k;
	}
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

void rxp_mld_query(struct rxp_stack *st, const struct rxp_pkt *pkt, const uint8_t *msg,
		   uint32_t len)
{
	const struct rxp_ip6_hdr *ip = rxp_pkt_cip6(pkt);
	const struct rxp_l3if *ifp = &st->router->ifs[pkt->ifidx];
	static const uint8_t unspec[16];
	uint8_t groups[RXP_IP6_GROUPS_MAX][16];
	unsigned n, n_src = 0;
	bool general;

	/*
	 * From a router on the link, never routed (RFC 3810 5.1.14, RFC 2710
	 * 5); a length between the two versions' is neither (RFC 3810 8.1),
	 * and an MLDv2 query holds the sources it counts.
	 */
	if (!rxp_ip6_is_link_local(ip->src) || ip->hop_limit != 1 ||
	    (len != MLD_V1_LEN && len < MLD_V2_QUERY_MIN))
		return;
	general = !memcmp(msg + 8, unspec, 16);
	if (len >= MLD_V2_QUERY_MIN) {
		n_src = rxp_load_be16(msg + 26);
		if (len < MLD_V2_QUERY_MIN + 16 * n_src || (general && n_src))
			return;
	}
	if (general && st->now_ns < st->mld_quiet_until[pkt->ifidx])
		return;
	n = rxp_l3if_groups6(ifp, groups);
	/* a group's own query: answered for that group alone, if it is one of ours */
	if (!general) {
		unsigned k = 0;

		while (k < n && memcmp(groups[k], msg + 8, 16))
			k++;
		if (k == n)
			return;
		memmove(groups[0], groups[k], 16);
		n = 1;
	}
	if (general)
		st->mld_quiet_until[pkt->ifidx] = st->now_ns + QUIET_GENERAL_NS;
	if (len == MLD_V1_LEN)
		report_v1(st, ifp, groups, n);
	else if (n_src)
		report_v2_sources(st, ifp, groups[0], msg + MLD_V2_QUERY_MIN, n_src);
	else
		report_v2(st, ifp, groups, n);
}
