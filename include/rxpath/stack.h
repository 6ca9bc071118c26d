/* SPDX-License-Identifier: MIT */
/*
 * The receive stack: Ethernet, IPv4/IPv6 validation, transport demux and a
 * UDP/TCP sink. It takes a whole poll's packets at once (vector handoff,
 * like netif_receive_skb_list()) or one at a time (per-packet handoff,
 * like netif_receive_skb()). Every packet it does not deliver is counted
 * under a named drop reason and its buffer is freed.
 */
#ifndef RXPATH_STACK_H
#define RXPATH_STACK_H

#include <pthread.h>
#include "rxpath/common.h"
#include "rxpath/pool.h"
#include "rxpath/port.h"
#include "rxpath/router.h"

#define RXP_BURST_MAX 256u	/* largest poll budget */
#define RXP_BUDGET_DEFAULT 64u	/* NAPI's weight */

#define RXP_DROP_REASONS(X) \
	X(ETH_TRUNCATED,  "eth_truncated",     "frame shorter than an Ethernet header") \
	X(NOT_FOR_US,     "eth_not_for_us",    "destination MAC is not the port's, broadcast or multicast") \
	X(ETHERTYPE,      "eth_unknown_type",  "EtherType the stack does not handle") \
	X(VLAN_UNKNOWN,   "vlan_unknown",      "VLAN-tagged frame for a VLAN with no sub-port") \
	X(IP4_TRUNCATED,  "ip4_truncated",     "frame too short for an IPv4 header") \
	X(IP4_VERSION,    "ip4_bad_version",   "IPv4 EtherType but version is not 4") \
	X(IP4_IHL,        "ip4_bad_ihl",       "IPv4 header length below 20 bytes or past the frame") \
	X(IP4_CSUM,       "ip4_bad_checksum",  "IPv4 header checksum does not verify") \
	X(IP4_LEN,        "ip4_bad_length",    "IPv4 total length below the header or past the frame") \
	X(IP6_TRUNCATED,  "ip6_truncated",     "frame too short for an IPv6 header") \
	X(IP6_VERSION,    "ip6_bad_version",   "IPv6 EtherType but version is not 6") \
	X(IP6_LEN,        "ip6_bad_length",    "IPv6 payload length past the frame") \
	X(L4_TRUNCATED,   "l4_truncated",      "packet ends inside its UDP or TCP header, or (to the router) inside an IPv6 extension header or one of its options") \
	X(UDP_LEN,        "udp_bad_length",    "UDP length below 8 or past the IP payload") \
	X(TCP_OFFSET,     "tcp_bad_offset",    "TCP data offset below 5 words or past the IP payload") \
	X(NO_BUFFER,      "no_buffer",         "no free buffer to copy the frame into (copy mode)") \
	X(FRAME_TOO_LONG, "frame_too_long",    "frame longer than the pool's maximum frame (--max-frame): the driver could not take it into a buffer") \
	X(CAPTURE_CUT,    "capture_truncated", "a pcap input record shorter than the frame it was captured from (the capture's snap length): the frame is not all there") \
	X(ETH_GROUP_SRC,  "eth_group_source",  "source MAC is a broadcast or multicast address, which no station has (IEEE 802): nothing could be sent back to it") \
	X(L2_BCAST_FWD,   "l2_broadcast_forward", "unicast IP in a link-layer broadcast or multicast frame is not forwarded (RFC 1812 5.3.4)") \
	X(IP4_MARTIAN_SRC, "ip4_martian_source", "source is 0/8, 127/8, multicast or broadcast, or one of the router's own addresses") \
	X(IP4_MARTIAN_DST, "ip4_martian_destination", "destination is 0/8 or 127/8") \
	X(IP4_BCAST,      "ip4_broadcast",     "limited or directed broadcast, or a connected subnet's own number (its obsolete form, RFC 1812 4.2.3.1): not forwarded; the link's own go to the port's host path when it has one, else nothing here takes them") \
	X(IP4_LINK_LOCAL, "ip4_link_local",    "IPv4 link-local (169.254/16) source or destination: not forwarded, whatever the routes say (RFC 3927 2.7)") \
	X(IP4_MCAST,      "ip4_multicast",     "multicast is not forwarded; link-local groups (224.0.0.0/24) go to the port's host path when it has one") \
	X(TTL_EXCEEDED,   "ttl_exceeded",      "TTL or hop limit would reach 0 (Time Exceeded sent)") \
	X(NO_ROUTE,       "no_route",          "no route to the destination (Destination Unreachable sent)") \
	X(FRAG_NEEDED,    "frag_needed",       "larger than the egress MTU with DF set (Fragmentation Needed sent)") \
	X(NEIGH_UNRESOLVED, "neigh_unresolved", "next hop did not answer ARP/ND (Destination Unreachable sent)") \
	X(NEIGH_HOLD_FULL, "neigh_hold_full",  "too many packets already waiting for this next hop (the oldest makes room for the new one), or for all of them (1/8 of the pool)") \
	X(NEIGH_TABLE_FULL, "neigh_table_full", "neighbour table full, or a quarter of it already resolving or failed (a scan); cannot resolve a new next hop") \
	X(ARP_BAD,        "arp_malformed",     "ARP packet too short, not Ethernet/IPv4, or from a group, zero or own MAC") \
	X(ARP_NOT_FOR_US, "arp_not_for_us",    "ARP for an address that is not the interface's own (learned from if known)") \
	X(ARP_MARTIAN,    "arp_martian_sender", "ARP whose sender address no host can have: 0/8 (but 0.0.0.0, an address probe), 127/8, multicast, class E, a broadcast (RFC 1812 5.3.7): neither learned nor answered") \
	X(ICMP_BAD,       "icmp_malformed",    "ICMP to us too short or with a bad checksum") \
	X(LOCAL_UNHANDLED, "local_unhandled",  "addressed to us, but nothing here takes it") \
	X(TX_FULL,        "tx_full",           "the egress ring was full") \
	X(PORT_DOWN,      "port_down",         "the egress port is down: its interface went away") \
	X(NO_MEMORY,      "no_memory",         "no free buffer to build a reply or fragment") \
	X(IP6_MARTIAN_SRC, "ip6_martian_source", "IPv6 source is multicast, loopback, or unspecified outside address probes") \
	X(IP6_MARTIAN_DST, "ip6_martian_destination", "IPv6 destination is unspecified or loopback") \
	X(IP6_MCAST,      "ip6_multicast",     "IPv6 multicast the router has not joined is not forwarded; link-scope groups go to the port's host path when it has one") \
	X(IP6_LINK_LOCAL, "ip6_link_local",    "link-local destination that is not ours is not forwarded (RFC 4291 2.5.6)") \
	X(IP6_SCOPE,      "ip6_beyond_scope",  "link-local source would leave its link (Destination Unreachable sent)") \
	X(PKT_TOO_BIG,    "packet_too_big",    "IPv6 packet larger than the egress MTU (Packet Too Big sent)") \
	X(ND_BAD,         "nd_malformed",      "Neighbor Discovery message that fails RFC 4861 validation") \
	X(ND_NOT_FOR_US,  "nd_not_for_us",     "Neighbor Solicitation for an address that is not ours") \
	X(L4_CSUM,        "l4_bad_checksum",   "UDP or TCP to the router whose checksum does not verify") \
	X(PORT_UNREACH,   "port_unreachable",  "UDP to the router's own address that nothing takes (Port Unreachable sent)") \
	X(TCP_RESET,      "tcp_reset",         "TCP to the router's own address that nothing takes (reset sent, unless it was one)") \
	X(PROTO_UNREACH,  "protocol_unreachable", "to the router's own address in a protocol it does not serve (Protocol Unreachable, or Parameter Problem for IPv6, sent)") \
	X(IP4_BAD_OPTION, "ip4_bad_option",    "IPv4 option whose length or pointer is out of bounds, with room for part of an entry only, a timestamp of no known format, or (to the router) a full timestamp whose overflow count would wrap (Parameter Problem sent)") \
	X(IP6_UNKNOWN_OPTION, "ip6_unknown_option", "IPv6 option to the router that it does not know and whose type says discard (RFC 8200 4.2; Parameter Problem sent when it asks)") \
	X(IP6_ROUTING_HEADER, "ip6_routing_header", "IPv6 to the router with a routing header that has segments left: no routing type is followed (RFC 8200 4.4, RFC 5095; Parameter Problem sent)") \
	X(REASM_TIMEOUT,  "reasm_timeout",     "fragments to the router whose datagram did not complete in time (Time Exceeded sent when the first had come)") \
	X(REASM_OVERLAP,  "reasm_overlap",     "fragment overlapping another of its datagram: the whole datagram dropped (RFC 5722), or an exact duplicate") \
	X(REASM_BAD,      "reasm_bad_fragment", "fragment to the router not a multiple of 8 bytes with more to come, past 65535 bytes, or (IPv6) a first one without its whole header chain, upper layer included (RFC 7112; Parameter Problem sent)") \
	X(REASM_FULL,     "reasm_full",        "no room to hold another fragment or datagram being reassembled") \
	X(BLACKHOLE,      "blackhole",         "to a blackhole route: dropped without an answer") \
	X(ROUTE_REJECT,   "route_reject",      "to an unreachable or prohibit route (Destination Unreachable sent: host unreachable or no route, administratively prohibited)") \
	X(SOURCE_ROUTE,   "ip4_source_route",  "source-routed through the router to a next address it has no route to, or (strict) not on a connected network (Destination Unreachable 5 sent), or with ip source-route off, or an echo request whose recorded route would send the reply to one of the router's addresses, a broadcast or a martian") \
	X(FILTER_DROP,    "filter_drop",       "dropped by a filter rule or a chain's drop policy (show filter; a capture's comment names the rule)") \
	X(FILTER_REJECT,  "filter_reject",     "rejected by a filter rule: answered with a TCP reset, or ICMP administratively prohibited (rate-limited)") \
	X(CT_INVALID,     "ct_invalid",        "connection tracking found it invalid (impossible TCP flags, out of the window, an ICMP error about no known connection, malformed) and a rule or policy dropped it") \
	X(CT_TABLE_FULL,  "ct_table_full",     "a new connection the filter let through found the connection table full of answered connections (conntrack max N)") \
	X(NAT_NO_PORTS,   "nat_no_ports",      "a new connection that source NAT found no free outside port for (its pool's range exhausted on the paired address, or the mapping table full): a live mapping is never reused") \
	X(NAT_NO_MAPPING, "nat_no_mapping",    "an unsolicited packet to a NAT pool's outside address that no mapping (as nat filtering allows) and no port forward takes") \
	X(NAT_MALFORMED,  "nat_malformed",     "a packet of a translated connection too short to translate, or an ICMP error whose quoted packet is malformed: not translated") \
	X(FILTER_FRAG,    "filter_fragment",   "a fragment the filter held for its datagram's first one (whose ports decide), which did not come in time, or with no room left to hold it") \
	X(STOPPED,        "stopped",           "still waiting for a neighbour or for the rest of its datagram when the run stopped (--duration, a signal): dropped without an answer")

enum rxp_drop_reason {
#define X(id, name, help) RXP_DROP_##id,
	RXP_DROP_REASONS(X)
#undef X
	RXP_DROP_MAX
};

/* Returns the stable name of @reason ("ip4_bad_checksum"). */
const char *rxp_drop_name(enum rxp_drop_reason reason);
/* Returns one line saying what @reason means. */
const char *rxp_drop_help(enum rxp_drop_reason reason);

enum rxp_sink_class {
	RXP_SINK_UDP4,
	RXP_SINK_TCP4,
	RXP_SINK_OTHER4,	/* other protocols and non-first fragments */
	RXP_SINK_UDP6,
	RXP_SINK_TCP6,
	RXP_SINK_OTHER6,
	RXP_SINK_ECHO4,		/* ICMP echo requests answered */
	RXP_SINK_ARP,		/* ARP taken: requests answered, replies learned */
	RXP_SINK_ECHO6,
	RXP_SINK_ND,		/* neighbor discovery taken */
	RXP_SINK_MAX
};

const char *rxp_sink_name(enum rxp_sink_class c);

/*
 * Counters of one stack context (one worker), written only by its thread:
 * besides the per-class and per-reason arrays, one entry each: field,
 * Prometheus name (NULL: not a metric of its own), help. The struct, `show
 * stats`, the metrics and the run's JSON summary read them.
 */
#define RXP_STACK_COUNTERS(X) \
	X(in_packets, "rxpath_stack_in_packets_total", "Packets handed to the stack.") \
	X(in_bytes, "rxpath_stack_in_bytes_total", "Bytes handed to the stack.") \
	X(delivered_bytes, "rxpath_delivered_bytes_total", "Bytes of the packets delivered locally.") \
	X(dropped, NULL, "Packets dropped, every reason (rxpath_drops_total has them by reason).") \
	X(polls, "rxpath_polls_total", "Polls that handed packets to the stack.") \
	X(forwarded, "rxpath_forwarded_packets_total", "Received packets the router sent on.") \
	X(fragments, "rxpath_fragments_total", "Fragments made from forwarded packets.") \
	X(local_out, "rxpath_local_out_packets_total", \
	  "Packets the router made: replies, ICMP errors, neighbour requests.") \
	X(local_out_dropped, "rxpath_local_out_dropped_total", \
	  "Packets the router made that were lost to a full ring or a missing queue.") \
	X(icmp_errors, "rxpath_icmp_errors_total", "ICMP errors sent.") \
	X(icmp_ratelimited, "rxpath_icmp_ratelimited_total", "ICMP errors held back by the rate limit.") \
	X(redirects, "rxpath_redirects_total", \
	  "ICMP and ND Redirects sent (also in rxpath_icmp_errors_total).") \
	X(router_adverts, "rxpath_router_adverts_total", "Router Advertisements sent.") \
	X(neigh_requests, "rxpath_neigh_requests_total", "ARP requests and neighbour solicitations sent.")

struct rxp_stack_stats {
#define RXP_X(field, metric, help) uint64_t field;
	RXP_STACK_COUNTERS(RXP_X)
#undef RXP_X
	uint64_t delivered[RXP_SINK_MAX];	/* packets delivered locally, by class */
	uint64_t drops[RXP_DROP_MAX];		/* by reason; their sum is dropped */
};

enum rxp_handoff {
	RXP_HANDOFF_LIST,	/* the whole poll goes through each stage in turn */
	RXP_HANDOFF_PACKET,	/* each packet goes through every stage before the next */
};

/* Receive-path techniques, each switchable so its worth can be measured. */
struct rxp_rx_tuning {
	enum rxp_handoff handoff;
	uint8_t prefetch_lines;	/* frame header lines prefetched ahead: 0, 1 or 2 */
	uint8_t prefetch_ahead;	/* how many packets ahead */
	bool copy;		/* copy each frame into a fresh buffer (pre-zero-copy drivers) */
	uint16_t copybreak;	/* in copy mode, frames longer than this stay zero-copy */
	uint16_t budget;	/* packets per poll at most (NAPI weight) */
};

/* Returns the tuning with every technique on (list, zero-copy, 2-line prefetch, budget 64). */
struct rxp_rx_tuning rxp_rx_tuning_default(void);

#define RXP_STACK_PORTS_MAX RXP_PORTS_MAX
#define RXP_STACK_IFS_MAX RXP_IFS_MAX	/* interfaces (ports and VLAN sub-ports) */
#define RXP_TXV_MAX 128		/* packets gathered per egress port before a tx_burst */
#define RXP_STACK_NH_MAX RXP_NH_MAX	/* next hops with a cached neighbour: all of the router's */
_Static_assert(!(RXP_STACK_NH_MAX & (RXP_STACK_NH_MAX - 1)), "ip4_fwd.c masks next hop ids");

#define RXP_ICMP_RATE_DEFAULT 1000.0	/* ICMP errors per second */
#define RXP_ICMP_BURST_DEFAULT 50.0

struct rxp_neigh;
struct rxp_capture;
struct rxp_host;
struct rxp_filter;
struct rxp_ct;
struct rxp_rule_count;
struct rxp_filter_frags;

/*
 * A next hop's resolved neighbour (an adjacency), cached so that forwarding
 * skips the hash lookup: the Ethernet header to write, ready made.
 */
struct rxp_adj {
	const struct rxp_neigh *neigh;	/* NULL: nothing cached */
	uint32_t gen;		/* the neighbour table's generation when cached */
	uint16_t port;		/* egress port */
	uint16_t ifidx;		/* egress L3 interface: the ingress one means a redirect */
	uint32_t mtu;		/* egress interface MTU */
	uint8_t hlen;		/* 14, or 18 with a VLAN tag */
	uint8_t hdr[18];	/* the header, right-aligned: it ends where the IP header starts */
};

/*
 * A resolved on-link neighbour, cached per worker so that traffic to a
 * connected subnet skips the shared table (and, with several workers, its lock).
 */
#define RXP_NCACHE_SIZE 256	/* direct-mapped */
struct rxp_ncache_entry {
	uint32_t gen;		/* the neighbour table's generation when cached */
	bool valid;
	uint8_t family;
	uint16_t ifidx;
	uint8_t addr[16];
	uint8_t mac[6];
};

/*
 * A datagram addressed to the router that arrives in fragments: the
 * fragments' own buffers are held, in offset order, until every byte is in
 * (no copy into a bigger buffer). Each fragment's offset and length in the
 * datagram's payload are in its user[0]; its payload starts at l4_off.
 */
#define RXP_REASM_DATAGRAMS 16	/* being reassembled at once, per worker */
#define RXP_REASM_FRAGS 64	/* fragments one datagram may take (64 KiB over a 1280 MTU is 54) */
#define RXP_REASM_HELD_MAX 512	/* fragment buffers held in all, per worker */
struct rxp_reasm {
	uint64_t deadline_ns;	/* when it is given up; 0: a free slot */
	uint32_t id;		/* IPv4 identification or IPv6 fragment identification */
	uint32_t end;		/* payload length of the whole datagram, once its last fragment came */
	uint8_t family;		/* 4 or 6 */
	uint8_t proto;		/* IPv4 protocol (part of the key) */
	uint8_t n;		/* fragments held */
	bool dead;		/* abandoned on an overlap: later fragments go too, until the deadline */
	uint8_t src[16], dst[16];
	struct rxp_pkt *frags[RXP_REASM_FRAGS];
};

/* ICMP error rate limit: a token bucket shared by all interfaces (net/ratelimit.c). */
struct rxp_ratelimit {
	double rate;		/* tokens per second */
	double burst;		/* bucket size */
	double tokens;
	uint64_t last_ns;
	pthread_spinlock_t lock;	/* taken only when several workers' stacks share it */
	bool shared;
};

/* The Router Advertisement timers of one interface (net/ra.c). */
struct rxp_ra_timer {
	uint8_t initial;	/* of the first, quicker ones, sent so far */
	uint64_t next_ns, last_ns;	/* the next one due; the last one sent (0: none) */
};

/*
 * What the stacks of all workers share, as they share the router's tables:
 * the first worker's stack holds it, the others point to it
 * (rxp_stack_share()). Only slow paths touch it: the ICMP error limiter
 * under its own lock, the advertisement timers under the neighbour lock.
 */
struct rxp_stack_shared {
	struct rxp_ratelimit icmp_limit;
	uint64_t ra_rng;	/* PRNG state for the Router Advertisement intervals */
	struct rxp_ra_timer ra[RXP_STACK_IFS_MAX];	/* by interface index */
};

/* Packets gathered for one egress port during a poll. */
struct rxp_txv {
	uint16_t n;
	struct rxp_pkt *pkts[RXP_TXV_MAX];
};

struct rxp_stack {
	struct rxp_rx_tuning tuning;
	struct rxp_pool_cache *cache;	/* where freed buffers go */
	struct rxp_router *router;	/* NULL: a host sink that takes every valid packet */
	struct rxp_capture *capture;	/* packet capture (src/net/capture.h); NULL: off */
	const struct rxp_filter *filter;	/* the filter (src/net/filter.h); NULL: nothing filters */
	struct rxp_ct *ct;		/* connection tracking, shared by the workers; NULL: off */
	unsigned worker;		/* this stack's worker, for the tracking's bookkeeping */
	unsigned ct_depth;		/* nesting of rxp_filter_enter() (net/filter.h) */
	struct rxp_rule_count *rule_count[3];	/* per chain: this worker's rule counters (policy last) */
	uint32_t rule_count_n[3];
	struct rxp_filter_frags *frags;	/* fragments the filter holds or has decided (net/filter.h) */
	bool timer_owner;		/* runs the neighbour timers (one worker of several does) */
	unsigned neigh_lock_depth;	/* this worker's nesting of the neighbour lock (net/out.h) */
	uint64_t now_ns;		/* the poll loop's clock, updated between polls */
	uint64_t next_tick_ns;
	uint64_t tx_pending;		/* bit per port with packets in txv */
	uint64_t host_ports;		/* bit per port with a host path (src/net/host.h) */
	uint64_t host_pending;		/* bit per port whose host path holds packets to write */
	struct rxp_host *host[RXP_STACK_PORTS_MAX];	/* host path (TAP) per port; NULL: none */
	uint16_t ip_id;			/* identification of IPv4 packets the router makes */
	uint32_t frag6_id;		/* identification of the IPv6 packets it fragments */
	uint64_t mld_quiet_until[RXP_STACK_IFS_MAX];	/* per interface: no general MLD report before (mld.c) */
	uint8_t port_mac[RXP_STACK_PORTS_MAX][6];
	struct rxp_queue *txq[RXP_STACK_PORTS_MAX];	/* this worker's queue per port: TX, and rx_dropped */
	struct rxp_stack_stats stats;
	uint64_t port_drops[RXP_STACK_PORTS_MAX][RXP_DROP_MAX];
	struct rxp_txv txv[RXP_STACK_PORTS_MAX];
	struct rxp_adj adj[RXP_STACK_NH_MAX];	/* by next hop id */
	struct rxp_ncache_entry ncache[RXP_NCACHE_SIZE];	/* on-link neighbours */
	struct rxp_reasm reasm[RXP_REASM_DATAGRAMS];	/* fragments to the router (net/reasm.c) */
	uint32_t reasm_held;		/* fragment buffers those hold */
	/* slow paths only, after what the fast path reads: */
	struct rxp_stack_shared *shared;	/* &own, or the first worker's (rxp_stack_share) */
	struct rxp_stack_shared own;		/* what shared points to in the first worker */
};

/* Prepares a stack context owned by one worker. Returns 0 or -EINVAL. */
int rxp_stack_init(struct rxp_stack *st, const struct rxp_rx_tuning *tuning,
		   struct rxp_pool_cache *cache);

/* Tells the stack the MAC of port @id and the queue to transmit on. Returns 0 or -EINVAL. */
int rxp_stack_add_port(struct rxp_stack *st, uint16_t id, const uint8_t mac[6],
		       struct rxp_queue *txq);

/*
 * Makes @st, another worker's stack, share @first's ICMP error limiter and
 * advertisement timers (which then takes a lock on the error path), until
 * rxp_stack_close(@first). Call it before either runs. Returns 0, -EINVAL
 * (@first shares another's) or -errno.
 */
int rxp_stack_share(struct rxp_stack *st, struct rxp_stack *first);

/* Makes the stack a router over @router's tables (NULL: a host sink). */
void rxp_stack_set_router(struct rxp_stack *st, struct rxp_router *router);

/*
 * Sets the ICMP error rate limit (shared by all workers' stacks): @rate
 * errors per second, in bursts of up to @burst; the bucket starts full.
 */
void rxp_stack_set_icmp_rate(struct rxp_stack *st, double rate, double burst);

/* Writes the ICMP error rate limit to *@rate and *@burst. */
void rxp_stack_icmp_rate(const struct rxp_stack *st, double *rate, double *burst);

/*
 * Turns packet capture on (@cap) or off (NULL). Call it from the thread that
 * runs the stack, between polls; the caller keeps @cap alive while it is set.
 */
void rxp_stack_set_capture(struct rxp_stack *st, struct rxp_capture *cap);

/*
 * Runs the timers (neighbour retries, failures, ageing) at time @now_ns and
 * sends what they produce. Call it between polls, not per packet.
 */
void rxp_stack_tick(struct rxp_stack *st, uint64_t now_ns);

/*
 * Gives up on every neighbour still resolving: their held packets are
 * dropped and answered with Destination Unreachable, now; and on every
 * datagram to the router still missing fragments (Time Exceeded). For the
 * end of a finite input. Returns the number of packets dropped.
 */
uint64_t rxp_stack_drain(struct rxp_stack *st);

/*
 * Drops, without an answer and under the reason "stopped", every packet
 * still held for a neighbour or a datagram, and empties the neighbour
 * table: for a run that stops before its input ends. Returns the number of
 * packets dropped.
 */
uint64_t rxp_stack_release(struct rxp_stack *st);

/*
 * Sets a static neighbour (configured while running, or mirrored from the
 * kernel's table with @kernel): packets waiting for it are sent. The
 * kernel's does not replace a configured one. Returns 0, -EINVAL (no router
 * or no such interface), -EEXIST (@kernel, and a configured one is there)
 * or -ENOSPC.
 */
int rxp_stack_neigh_set(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr,
			const uint8_t mac[6], bool kernel);

/*
 * Starts or stops Router Advertisements on interface @ifidx (the first at
 * the next tick). An interface that stops after advertising sends a last
 * one with Router Lifetime 0, so that hosts drop the router at once.
 */
void rxp_stack_set_ra(struct rxp_stack *st, int ifidx, bool on);

/*
 * Sets how long a learned neighbour lasts without being confirmed (used ones
 * are asked again before then). Entries that would now outlive it are cut
 * short to it.
 */
void rxp_stack_neigh_set_ageing(struct rxp_stack *st, uint64_t ns);

/*
 * Removes a neighbour; packets waiting for it are dropped (neigh_unresolved).
 * With @kernel (the kernel's table lost it), only one mirrored from there
 * goes. Returns 0, -EINVAL or -ENOENT.
 */
int rxp_stack_neigh_del(struct rxp_stack *st, int ifidx, uint8_t family, const uint8_t *addr,
			bool kernel);

/*
 * The device behind port @port went away: what waits for a neighbour there
 * is dropped (port_down) and the neighbours learned there are forgotten (a
 * device that comes back may face new peers); configured ones stay.
 * Returns the number of packets dropped.
 */
uint64_t rxp_stack_port_down(struct rxp_stack *st, uint16_t port);

/* Sends what the stack has gathered for transmit. */
void rxp_stack_flush(struct rxp_stack *st);

/* Releases the packets the stack still holds (neighbour queues) at shutdown. */
void rxp_stack_close(struct rxp_stack *st);

/* Vector handoff: every packet is consumed (delivered or dropped). */
void rxp_stack_input_list(struct rxp_stack *st, struct rxp_pkt **pkts, uint16_t n);

/* Per-packet handoff: @pkt is consumed. */
void rxp_stack_input_one(struct rxp_stack *st, struct rxp_pkt *pkt);

/* Counts @pkt under @reason and frees it. */
void rxp_stack_drop(struct rxp_stack *st, struct rxp_pkt *pkt, enum rxp_drop_reason reason);

/* Counts the frames @q's driver received but could not hand over as drops by reason, and clears them. */
void rxp_stack_take_refused(struct rxp_stack *st, struct rxp_queue *q);

/* Sum of all drop counters. */
uint64_t rxp_stack_drops_total(const struct rxp_stack_stats *s);
uint64_t rxp_stack_delivered_total(const struct rxp_stack_stats *s);

/*
 * NAPI-style poll of one queue: receive at most the tuning's budget,
 * (copy mode: copy), hand the packets to the stack, refill the RX ring
 * and reap TX completions. Returns the number of packets received.
 */
uint16_t rxp_napi_poll(struct rxp_queue *q, struct rxp_stack *st);

#endif
