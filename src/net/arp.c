/* SPDX-License-Identifier: MIT */
/* ARP (RFC 826) for Ethernet and IPv4: answer for our addresses, learn, resolve. */
#include <arpa/inet.h>
#include <string.h>
#include "arp.h"
#include "filter.h"
#include "host.h"
#include "nat.h"
#include "out.h"

/* Returns the interface address to speak from toward @target: one on its subnet, else the first. */
static bool if_source4(const struct rxp_l3if *ifp, uint32_t target, uint32_t *src)
{
	if (!ifp->n_addr4)
		return false;
	*src = rxp_l3if_source4(ifp, target);
	return true;
}

static void arp_fill(struct rxp_arp_hdr *a, uint16_t op, const uint8_t sha[6], uint32_t spa,
		     const uint8_t tha[6], uint32_t tpa)
{
	a->htype = htons(RXP_ARP_HTYPE_ETHER);
	a->ptype = htons(RXP_ETHERTYPE_IP4);
	a->hlen = RXP_ETH_ALEN;
	a->plen = 4;
	a->op = htons(op);
	memcpy(a->sha, sha, RXP_ETH_ALEN);
	a->spa = spa;
	memcpy(a->tha, tha, RXP_ETH_ALEN);
	a->tpa = tpa;
}

void rxp_arp_request(struct rxp_stack *st, int ifidx, uint32_t target, const uint8_t *mac)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zero[6];
	const struct rxp_l3if *ifp = &st->router->ifs[ifidx];
	struct rxp_pkt *pkt;
	uint32_t src;

	if (!if_source4(ifp, target, &src))
		return;
	pkt = rxp_local_alloc(st, RXP_ARP_LEN);
	if (!pkt)
		return;
	arp_fill((struct rxp_arp_hdr *)(rxp_pkt_data(pkt) + pkt->l3_off), RXP_ARP_OP_REQUEST,
		 ifp->mac, src, zero, target);
	rxp_l2_prepend(pkt, ifp, mac ? mac : bcast, RXP_ETHERTYPE_ARP);
	pkt->port = ifp->port;
	st->stats.neigh_requests++;
	rxp_tx_enqueue(st, pkt, true);
}

void rxp_arp_input(struct rxp_stack *st, struct rxp_pkt *pkt)
{
	struct rxp_router *r = st->router;
	struct rxp_arp_hdr *a = (struct rxp_arp_hdr *)(rxp_pkt_data(pkt) + pkt->l3_off);
	const struct rxp_l3if *ifp;
	uint32_t spa, tpa;
	uint16_t op;
	uint8_t sha[6];

	if ((uint32_t)pkt->len - pkt->l3_off < RXP_ARP_LEN || ntohs(a->htype) != RXP_ARP_HTYPE_ETHER ||
	    ntohs(a->ptype) != RXP_ETHERTYPE_IP4 || a->hlen != RXP_ETH_ALEN || a->plen != 4) {
		rxp_drop(st, pkt, RXP_DROP_ARP_BAD);
		return;
	}
	op = ntohs(a->op);
	memcpy(sha, a->sha, RXP_ETH_ALEN);
	spa = a->spa;
	tpa = a->tpa;
	/* a sender is one station, not a group, nobody or this router (RFC 1812 3.3.2) */
	if ((op != RXP_ARP_OP_REQUEST && op != RXP_ARP_OP_REPLY) || !rxp_eth_is_unicast(sha) ||
	    rxp_router_has_mac(r, sha)) {
		rxp_drop(st, pkt, RXP_DROP_ARP_BAD);
		return;
	}
	ifp = &r->ifs[pkt->ifidx];
	/* a sender no host can be (RFC 1812 5.3.7): neither learned nor answered */
	if (spa != 0 && rxp_router_is_martian_src4(r, spa) && !rxp_router_is_local4(r, spa)) {
		rxp_drop(st, pkt, RXP_DROP_ARP_MARTIAN);
		return;
	}
	/*
	 * RFC 826: update the sender's entry if we have one; add it when the
	 * packet is for us and the sender is on-link. A sender of 0.0.0.0 (an
	 * address probe, RFC 5227) is answered but not learned, nor one that
	 * claims an address of ours (a conflict, RFC 5227 2.4: it is not a
	 * neighbour). A reply to us answers our request and renews the entry;
	 * a request does not.
	 */
	if (spa != 0 && !rxp_router_is_local4(r, spa))
		rxp_neigh_learn(st, pkt->ifidx, 4, (const uint8_t *)&spa, sha,
				rxp_l3if_has_addr4(ifp, tpa) && rxp_l3if_subnet4(ifp, spa) >= 0,
				op == RXP_ARP_OP_REPLY && rxp_l3if_has_addr4(ifp, tpa));
	/* a NAT's outside address that is no interface's is answered for too (a pool, a static mapping) */
	if (!rxp_l3if_has_addr4(ifp, tpa) &&
	    !(op == RXP_ARP_OP_REQUEST && rxp_unlikely(rxp_filter_on(st)) && rxp_nat_owns4(st, pkt->ifidx, tpa))) {
		rxp_drop(st, pkt, RXP_DROP_ARP_NOT_FOR_US);
		return;
	}
	rxp_count_delivered(st, pkt, RXP_SINK_ARP);
	if (op == RXP_ARP_OP_REPLY) {
		/* the host's kernel asked too, maybe: it resolves its peers through us */
		rxp_host_take(st, pkt);
		return;
	}
	/* Answer in place: the request becomes the reply. */
	arp_fill(a, RXP_ARP_OP_REPLY, ifp->mac, tpa, sha, spa);
	pkt->l3_len = RXP_ARP_LEN;
	rxp_l2_prepend(pkt, ifp, sha, RXP_ETHERTYPE_ARP);
	rxp_tx_enqueue(st, pkt, true);
}
