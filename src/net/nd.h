/* SPDX-License-Identifier: MIT */
/*
 * IPv6 on the link, shared inside src/net: Neighbor Discovery (nd.c),
 * Router Advertisements (ra.c) and the answers to MLD queries (mld.c).
 */
#ifndef RXPATH_NET_ND_H
#define RXPATH_NET_ND_H

#include "rxpath/stack.h"

/* ---- nd.c ---- */

/*
 * Sends a Neighbor Solicitation for @target on interface @ifidx: to its
 * solicited-node group, or to @target itself at @mac when @mac is not NULL
 * (a unicast probe of a known neighbour, RFC 4861 7.3.3).
 */
void rxp_nd_solicit(struct rxp_stack *st, int ifidx, const uint8_t target[16], const uint8_t *mac);

/*
 * RFC 4861 8.2: @orig, a packet being forwarded out of the interface it
 * came in on toward next hop @next (its gateway, or its destination when
 * on-link), may earn its source a Redirect. Sends one when the rules allow:
 * see nd.c. @orig is not consumed nor changed.
 */
void rxp_nd_maybe_redirect(struct rxp_stack *st, struct rxp_pkt *orig, const uint8_t next[16]);

/* Handles one Neighbor Discovery message (types 133-137, checksum verified). Consumes @pkt. */
void rxp_nd_input(struct rxp_stack *st, struct rxp_pkt *pkt);

/* ---- ra.c: Router Advertisements on the interfaces set `ra on` ---- */

/* Sends the unsolicited ones that are due. The timer owner calls it, with the neighbour lock held. */
void rxp_ra_tick(struct rxp_stack *st);

/* A valid Router Solicitation came in on @ifidx: an advertisement soon, if it sends them. */
void rxp_ra_solicited(struct rxp_stack *st, int ifidx);

/* ---- mld.c ---- */

/*
 * Answers an MLD query (@msg, @len bytes, checksum verified) that came in
 * on @pkt's interface with a report of the router's groups there
 * (src/net/mld.c). @pkt stays the caller's.
 */
void rxp_mld_query(struct rxp_stack *st, const struct rxp_pkt *pkt, const uint8_t *msg,
		   uint32_t len);

#endif
