/* SPDX-License-Identifier: MIT */
/*
 * TCP connection tracking on one entry: the state machine of Linux's
 * nf_conntrack_proto_tcp.c and its window checks (Guido van Rooij's "Real
 * Stateful TCP Packet Filtering in IP Filter"; RFC 9293, RFC 7323, RFC
 * 5961), for conntrack.c.
 */
#ifndef RXPATH_NET_CT_TCP_H
#define RXPATH_NET_CT_TCP_H

#include <stdbool.h>
#include <stdint.h>
#include "conntrack.h"
#include "fib/ct_table.h"
#include "rxpath/proto.h"

/* The settings a packet is tracked under: timeouts in ticks, the liberal switch (read relaxed). */
struct ct_params {
	uint32_t to[RXP_CT_TO_MAX];
	uint8_t liberal;
	uint8_t loose;		/* a connection may be picked up from its middle (nf_conntrack_tcp_loose) */
};

/* What tracking did with a packet of a connection. */
enum ct_verdict {
	CT_ACCEPT,	/* in window: the entry moved on (counted, timer set) */
	CT_IGNORE,	/* let through, the entry left as it was (Linux's "ignored" packets) */
	CT_INVALID,	/* impossible here or out of window: nothing changed */
	CT_KILL,	/* let through, and the connection is over (a RST before any reply) */
	CT_REOPEN,	/* a SYN for a closed connection: the entry goes, the packet is new */
	CT_GONE,	/* the entry was removed meanwhile */
};

/* Bit f: flag byte f (FIN SYN RST ACK URG; PSH, ECE and CWR taken out) is a combination TCP allows (tcp_error's table). */
#define CT_TCP_VALID(f) (1ull << (f))
#define CT_TCP_VALID_FLAGS \
	(CT_TCP_VALID(RXP_TCP_F_SYN) | CT_TCP_VALID(RXP_TCP_F_SYN | RXP_TCP_F_URG) | \
	 CT_TCP_VALID(RXP_TCP_F_SYN | RXP_TCP_F_ACK) | CT_TCP_VALID(RXP_TCP_F_RST) | \
	 CT_TCP_VALID(RXP_TCP_F_RST | RXP_TCP_F_ACK) | CT_TCP_VALID(RXP_TCP_F_FIN | RXP_TCP_F_ACK) | \
	 CT_TCP_VALID(RXP_TCP_F_FIN | RXP_TCP_F_ACK | RXP_TCP_F_URG) | CT_TCP_VALID(RXP_TCP_F_ACK) | \
	 CT_TCP_VALID(RXP_TCP_F_ACK | RXP_TCP_F_URG))

/* The flags are a combination TCP allows: SYN+FIN, SYN+RST, none at all, FIN without ACK are not. */
static inline bool ct_tcp_flags_valid(uint8_t flags)
{
	return CT_TCP_VALID_FLAGS >> (flags & ~(RXP_TCP_F_PSH | RXP_TCP_F_ECE | RXP_TCP_F_CWR)) & 1;
}

/* The packet could open a connection: a SYN without ACK, RST or FIN. */
bool ct_tcp_can_open(const struct rxp_ct_pkt *p, const struct ct_params *par);

/*
 * The first packet of a new connection, on an entry not yet in the index
 * (its seqlock held by the caller): the state and windows as Linux's
 * tcp_new() and a first pass of the state machine leave them, and the
 * timer. Returns false when the packet cannot open one.
 */
bool ct_tcp_first(struct rxp_ct_entry *e, const struct rxp_ct_pkt *p, const struct ct_params *par,
		  uint32_t now);

/*
 * A packet of a tracked connection in direction @dir. A segment of an
 * established connection that changes no state (ACK and data) takes no
 * lock: its windows and timer are updated with relaxed atomics, racing
 * benignly with the other direction's worker (a window bound a packet
 * behind, the unacknowledged bits, the retransmission count; expiry cuts a
 * timer longer than the state allows). Anything else holds the entry's
 * seqlock.
 */
enum ct_verdict ct_tcp_packet(struct rxp_ct_entry *e, unsigned dir, const struct rxp_ct_pkt *p,
			      const struct ct_params *par, uint32_t now);

/* The timeout (an RXP_CT_TO_*) of TCP state @state. */
enum rxp_ct_timeout ct_tcp_timeout_of(unsigned state);

#endif
