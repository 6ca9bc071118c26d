/* SPDX-License-Identifier: MIT */
/*
 * ICMP, shared inside src/net: the errors the router sends and their rate
 * limit (ratelimit.c), what is addressed to the router (echo), and the
 * pieces of the ICMPv6 messages it makes (icmp4.c, icmp6.c).
 */
#ifndef RXPATH_NET_ICMP_H
#define RXPATH_NET_ICMP_H

#include "rxpath/router.h"
#include "stage.h"

#define RXP_ICMP_QUOTE_MAX 548	/* RFC 1812 4.3.2.3: the error may be 576 bytes in all */

/* ---- ratelimit.c ---- */

/* Makes @rl a full bucket of @burst tokens, refilled at @rate per second, for one stack alone. */
void rxp_ratelimit_init(struct rxp_ratelimit *rl, double rate, double burst);

/* Makes @rl safe for several workers' stacks (a lock on each take). Returns 0 or -errno. */
int rxp_ratelimit_share(struct rxp_ratelimit *rl);

/* Undoes rxp_ratelimit_share(), once no other stack takes from @rl. */
void rxp_ratelimit_unshare(struct rxp_ratelimit *rl);

/* Takes one token from the ICMP limiter at time @now_ns. Returns true when allowed. */
bool rxp_ratelimit_take(struct rxp_ratelimit *rl, uint64_t now_ns);

/* ---- icmp4.c ---- */

/*
 * Sends an ICMPv4 error about @orig (its IP header at l3_off, as received)
 * back out of the interface it came in on, unless RFC 1812 4.3.2.7 forbids
 * it or the rate limit says no. @rest is the word after the checksum: 0,
 * the next-hop MTU (Fragmentation Needed), the pointer in its top octet
 * (Parameter Problem) or the gateway (Redirect). @orig is not consumed.
 * Returns true when the error went out.
 */
bool rxp_icmp4_error(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code,
		     uint32_t rest);

/*
 * The same about a packet addressed to the router itself, sent from the
 * address it was sent to, as a host answers (traceroute to the router
 * expects its last reply from there).
 */
void rxp_icmp4_error_local(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code);

/* Handles ICMP addressed to the router (echo). Consumes @pkt. */
void rxp_icmp4_local(struct rxp_stack *st, struct rxp_pkt *pkt);

/* ---- icmp6.c ---- */

/* Sends an ICMPv6 error about @orig back where it came from (RFC 4443 2.4 rules). */
void rxp_icmp6_error(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code,
		     uint32_t param);

/* The same about a packet to one of the router's unicast addresses, sent from it (RFC 4443 2.2). */
void rxp_icmp6_error_local(struct rxp_stack *st, struct rxp_pkt *orig, uint8_t type, uint8_t code,
			   uint32_t param);

/* Handles ICMPv6 to the router (its header at l4_off). Consumes @pkt. */
void rxp_icmp6_local(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * Returns the ICMPv6 checksum of the @len-byte message at @icmp under the
 * IPv6 header at @ip (a struct rxp_ip6_hdr): the value to store when the
 * field is zero, 0 when a received message verifies.
 */
uint16_t rxp_icmp6_csum(const void *ip, const void *icmp, uint32_t len);

/*
 * Picks the source of a message the router sends to @peer out of @ifp
 * (RFC 4443 2.2): the link-local address for a link-local peer; else a
 * global address of @ifp, one on the peer's prefix first; else, with
 * @other_ifs, any global address of the router; else the link-local one.
 */
void rxp_icmp6_source(const struct rxp_router *r, const struct rxp_l3if *ifp, const uint8_t *peer,
		      bool other_ifs, uint8_t out[16]);

/*
 * Writes an IPv6 header at @ip (a struct rxp_ip6_hdr) for the @len-byte
 * ICMPv6 message that follows it, and that message's checksum.
 */
void rxp_icmp6_finish(void *ip, const uint8_t src[16], const uint8_t dst[16], uint8_t hop_limit,
		      uint32_t len);

#endif
