/* SPDX-License-Identifier: MIT */
/* The IPv4 options (ip4_opt.c), shared inside src/net. */
#ifndef RXPATH_NET_IP4_OPT_H
#define RXPATH_NET_IP4_OPT_H

#include "rxpath/proto.h"
#include "rxpath/stack.h"

/*
 * For a validated IPv4 packet with options (IHL > 5): true when they are
 * well formed. Else answers Parameter Problem pointing at the octet in
 * error, sets the drop reason and returns false; @pkt is not consumed.
 */
bool rxp_ip4_options_ok(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * Writes the options a non-first fragment carries (those with the copied
 * flag, RFC 791 3.1) of the @len bytes at @opt into @out, padded to 32
 * bits. Returns their length.
 */
unsigned rxp_ip4_copied_options(const uint8_t *opt, unsigned len, uint8_t *out);

/* True when the header @ip carries a Loose or Strict Source Route option. */
bool rxp_ip4_source_routed(const struct rxp_ip4_hdr *ip);

/*
 * Whether the options of @pkt, an echo request to the router (options
 * checked), can go back in its reply. False with the drop reason set (the
 * caller drops it) for a full Timestamp whose overflow count would wrap
 * (RFC 791 calls it in error; Parameter Problem sent), and for a completed
 * source route whose way back would start at one of the router's
 * addresses, a broadcast, 0/8, 127/8 or a class D or E address: the sender
 * wrote that address, and the reply is not sent to whatever it names.
 */
bool rxp_ip4_echo_options_ok(struct rxp_stack *st, struct rxp_pkt *pkt);

/*
 * The options of the router's echo reply @ip (rxp_ip4_echo_options_ok()
 * said yes, addresses already swapped), as RFC 1812 4.3.3.6 and RFC 1122 3.2.2.6 have them: its
 * source address and the time go into Record Route and Timestamp where they
 * have room (the recorded route is the round trip's), and a source route
 * the request came by is reversed for the way back, its last hop becoming
 * the reply's destination. The caller recomputes the header checksum.
 */
void rxp_ip4_echo_options(struct rxp_ip4_hdr *ip);

/*
 * A packet addressed to the router (options checked) whose Loose or Strict
 * Source Route option has addresses left goes on to the next of them (RFC
 * 791 3.1, as RFC 1812 has routers do): the router records its address on
 * the way out in the route, makes that next address the destination and
 * routes the packet again. Returns true when it took @pkt that way, or
 * dropped it: no route to the next address, or for a strict route one not
 * on a connected network (answered with Destination Unreachable 5), or `ip
 * source-route off` (quietly, the completed routes that end here included).
 * False when there is no such option or its route is complete: the packet
 * is the router's own.
 */
bool rxp_ip4_source_route(struct rxp_stack *st, struct rxp_pkt *pkt);

#endif
