/* SPDX-License-Identifier: MIT */
/*
 * NAT44 on connection tracking, as nftables' masquerade, snat and dnat:
 * a connection's translation is decided by its first packet and kept in
 * its conntrack entry (both tuples), so every later packet of either
 * direction is translated by what tracking finds. Source NAT takes an
 * endpoint-independent mapping (src/fib/nat_map.h, RFC 4787 REQ-1 and
 * REQ-2, RFC 5382 REQ-1) that the connection holds until it ends.
 *
 * Where: the filter's stage (src/net/filter.c) calls in at nftables'
 * hooks: rxp_nat_pre() before a packet's chain is chosen (prerouting:
 * destinations, so forward sees the inside address and the route is the
 * translated one's), rxp_nat_confirm() for a new connection the chain let
 * through (its source NAT is chosen by the route's interface) and
 * rxp_nat_post() after the verdict (postrouting: sources).
 */
#ifndef RXPATH_NET_NAT_H
#define RXPATH_NET_NAT_H

#include <stdbool.h>
#include <stdint.h>
#include "conntrack.h"
#include "fib/nat_map.h"

struct rxp_stack;
struct rxp_pkt;

enum rxp_nat_kind { RXP_NAT_MASQUERADE, RXP_NAT_SNAT, RXP_NAT_DNAT, RXP_NAT_STATIC };
enum rxp_nat_filtering { RXP_NAT_APDF, RXP_NAT_ADF, RXP_NAT_EIF };	/* RFC 4787 section 5 */

#define RXP_NAT_ANY_IF 0xffffu

/* One rule, resolved (interfaces by index, masquerade's address known). Addresses in host order. */
struct rxp_nat_rule {
	uint8_t kind;			/* enum rxp_nat_kind */
	uint16_t ifidx;			/* masquerade, snat: out; dnat: in; static: RXP_NAT_ANY_IF */
	uint32_t src, src_mask;		/* masquerade, snat: the inside sources it takes; static: the inside address */
	uint32_t dst;			/* dnat: the outside address; static: the outside address */
	uint8_t proto;			/* dnat: 6 or 17 */
	uint16_t dport_lo, dport_hi;	/* dnat */
	uint32_t to_addr;		/* dnat: the inside server */
	uint16_t to_port;		/* dnat: its port (a range maps onto ports from it); 0: the same */
	struct rxp_nat_pool pool;	/* masquerade, snat: the outside addresses and ports */
	uint64_t *hits;			/* connections it translated (the engine's, kept across rebuilds) */
};

/* What the workers read: the rules, made whole by the engine and swapped in between polls. */
struct rxp_nat {
	uint32_t n_rules;
	const struct rxp_nat_rule *rules;
	struct rxp_nat_map *map;	/* shared by the workers */
	uint8_t filtering;		/* enum rxp_nat_filtering */
};

/* What prerouting decided for a new connection, for its confirm. */
struct rxp_nat_pending {
	int32_t dnat;			/* the dnat or static rule that took it, or -1 */
	int32_t map;			/* endpoint-independent filtering: the mapping it came in by, or -1 */
	uint32_t orig_dst;		/* network order: its destination before */
	uint16_t orig_dport;		/* host order */
	int32_t hairpin;		/* from inside to a mapping: the source NAT rule of its address, or -1 */
	bool tg_ok;			/* a translated connection's packet: @tg is where it goes */
	struct rxp_ct_nat4 tg;
};

/*
 * Prerouting for IPv4 packet @pkt (its tuple @cp, what tracking found
 * @ref): a translated connection's destination, or a new one's port
 * forward, rewritten (@cp too), with the next hop looked up again (@dst,
 * host order, may be NULL; @nh). Returns 1 when it rewrote, 0 when not,
 * -1 when the packet was dropped (too short to translate, an unsolicited
 * packet to an outside address: nat_no_mapping).
 */
int rxp_nat_pre(struct rxp_stack *st, struct rxp_pkt *pkt, struct rxp_ct_pkt *cp, struct rxp_ct_ref *ref,
		 uint32_t *dst, uint32_t *nh, struct rxp_nat_pending *pend);

/*
 * A new connection that the filter lets through (@ref new, no entry): its
 * source NAT chosen by the out interface of @nh, its mapping taken and the
 * entry inserted (translated or not). Returns 0, -ENOSPC (the table is
 * full: ct_table_full) or -EADDRNOTAVAIL (no outside port: nat_no_ports).
 */
int rxp_nat_confirm(struct rxp_stack *st, struct rxp_pkt *pkt, const struct rxp_ct_pkt *cp,
		    struct rxp_ct_ref *ref, uint32_t nh, const struct rxp_nat_pending *pend);

/*
 * Postrouting: a translated connection's source rewritten (@pend, its
 * prerouting's, may be NULL). Returns false when dropped (malformed).
 */
bool rxp_nat_post(struct rxp_stack *st, struct rxp_pkt *pkt, const struct rxp_ct_pkt *cp,
		  const struct rxp_ct_ref *ref, const struct rxp_nat_pending *pend);

/*
 * True when @addr (network order) is an outside address of NAT's on
 * interface @ifidx that no interface has: a pool's (on its out port), a
 * static mapping's or a port forward's dst on the subnet there. ARP
 * answers for it, as an appliance does for its NAT addresses.
 */
bool rxp_nat_owns4(const struct rxp_stack *st, int ifidx, uint32_t addr);

/* The mapping table's release callback for conntrack (its ctx: the map). */
void rxp_nat_release(void *ctx, uint32_t map, uint32_t remote);

#endif
