/* SPDX-License-Identifier: MIT */
/*
 * Connection tracking, as Linux's nf_conntrack does it: one entry per
 * connection that both directions find (its original and reply tuples),
 * a state per packet (new, established, related, invalid), TCP followed
 * through its states with sequence-window checks, the other protocols by
 * timeouts, ICMP echo by identifier, and ICMP errors related to the
 * connection they quote. The table (src/fib/ct_table.h) is sized at start:
 * no allocation per packet.
 *
 * Threads: the workers track packets at once, without a lock on the path
 * of an existing connection's packets; a new entry and the end of one take
 * the table's lock. Each worker says when it is inside a poll
 * (rxp_ct_enter/rxp_ct_leave), so that an entry is reused only once no
 * worker can still be reading it.
 */
#ifndef RXPATH_NET_CONNTRACK_H
#define RXPATH_NET_CONNTRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RXP_CT_MAX_DEFAULT 65536u	/* entries; `conntrack max N` */
#define RXP_CT_WORKERS_MAX 64

/* Timeouts, with Linux's defaults (net.netfilter.nf_conntrack_<name>_timeout...). */
#define RXP_CT_TIMEOUTS(X) \
	X(TCP_SYN_SENT,    "tcp_syn_sent",    120) \
	X(TCP_SYN_RECV,    "tcp_syn_recv",    60) \
	X(TCP_ESTABLISHED, "tcp_established", 432000) \
	X(TCP_FIN_WAIT,    "tcp_fin_wait",    120) \
	X(TCP_CLOSE_WAIT,  "tcp_close_wait",  60) \
	X(TCP_LAST_ACK,    "tcp_last_ack",    30) \
	X(TCP_TIME_WAIT,   "tcp_time_wait",   120) \
	X(TCP_CLOSE,       "tcp_close",       10) \
	X(TCP_UNACK,       "tcp_unacknowledged", 300) \
	X(TCP_RETRANS,     "tcp_max_retrans", 300) \
	X(UDP,             "udp",             30) \
	X(UDP_STREAM,      "udp_stream",      120) \
	X(ICMP,            "icmp",            30) \
	X(ICMPV6,          "icmpv6",          30) \
	X(GENERIC,         "generic",         600)

enum rxp_ct_timeout {
#define X(id, name, secs) RXP_CT_TO_##id,
	RXP_CT_TIMEOUTS(X)
#undef X
	RXP_CT_TO_MAX
};

/* A translated connection's timeouts (`nat timeout NAME S`), RFC 4787 REQ-5, RFC 5382 REQ-5, RFC 5508 REQ-1. */
#define RXP_CT_NAT_TIMEOUTS(X) \
	X(UDP,             "udp",             300) \
	X(TCP_ESTABLISHED, "tcp-established", 7440) \
	X(TCP_TRANSITORY,  "tcp-transitory",  240) \
	X(ICMP,            "icmp",            60)

enum rxp_ct_nat_timeout {
#define X(id, name, secs) RXP_CT_NAT_TO_##id,
	RXP_CT_NAT_TIMEOUTS(X)
#undef X
	RXP_CT_NAT_TO_MAX
};

/* Returns the timeout named @name ("tcp_established"), or -1. */
int rxp_ct_timeout_of(const char *name);
const char *rxp_ct_timeout_name(enum rxp_ct_timeout t);
uint32_t rxp_ct_timeout_default(enum rxp_ct_timeout t);

struct rxp_ct_config {
	uint32_t max;				/* entries */
	uint32_t timeout[RXP_CT_TO_MAX];	/* seconds */
	bool tcp_liberal;			/* no window checks (nf_conntrack_tcp_be_liberal) */
	bool tcp_loose;				/* pick up connections from their middle (nf_conntrack_tcp_loose, on) */
};

/* The defaults: RXP_CT_MAX_DEFAULT entries, Linux's timeouts, window checks on. */
void rxp_ct_config_default(struct rxp_ct_config *cfg);

/* The addresses and ports of one direction of a connection. */
struct rxp_ct_tuple {
	uint8_t src[16], dst[16];	/* network order; IPv4 in the first 4 bytes, the rest 0 */
	uint16_t sport, dport;		/* host order; ICMP echo: the identifier in both */
	uint8_t proto;
	uint8_t family;			/* 4 or 6 */
};

/* What tracking needs to know of a packet, parsed from its network header on. */
struct rxp_ct_pkt {
	struct rxp_ct_tuple t;
	uint8_t icmp_type, icmp_code;	/* ICMP or ICMPv6 */
	bool icmp_error;		/* an ICMP error: @inner is the packet it quotes */
	bool frag;			/* a fragment (first or not) */
	bool frag_nth;			/* a fragment after the first: no transport header (ports 0) */
	uint32_t frag_id;		/* IPv4 identification or IPv6 fragment identification */
	struct rxp_ct_tuple inner;	/* the quoted packet's tuple, as it was sent */
	/* TCP */
	uint8_t tcp_flags;		/* RXP_TCP_* as on the wire */
	uint8_t wscale;			/* the window scale option's shift, or 0xff: none */
	bool sack_perm;
	uint32_t seq, ack;
	uint16_t win;
	uint32_t payload_len;		/* TCP segment's data length */
	uint32_t bytes;			/* the packet's IP length, for the counters */
	uint16_t l4_off;		/* the transport header, from the network header (0: none found) */
	/* added for tracking: */
	uint32_t sack;			/* TCP: the highest SACK block's right edge, or @ack without one */
	uint8_t inner_icmp_type, inner_icmp_code;	/* the quoted packet's, when it is ICMP */
	bool malformed;			/* rxp_ct_parse() failed: tracking says invalid */
};

/*
 * Reads @p from the network header @l3 (@l3_len bytes, the IP packet's
 * length) of family @family (4 or 6): the transport header found past IPv6
 * extension headers, TCP's options, an ICMP error's quoted header. Returns
 * 0, or -EINVAL for what no connection can have (a header cut short, a
 * quoted header that is not there): such a packet is invalid (@p->malformed
 * is set, and rxp_ct_track() says so). The window scale is capped at 14
 * (RFC 7323 2.3); options are read on SYNs (scale, SACK permitted) and
 * ACKs (SACK blocks). At most 32 IPv6 extension headers are followed.
 */
int rxp_ct_parse(const uint8_t *l3, unsigned l3_len, uint8_t family, struct rxp_ct_pkt *p);

struct rxp_ct;

/* What rxp_ct_track() found, for rxp_ct_confirm() and the counters. */
struct rxp_ct_ref {
	uint32_t entry;		/* entry index, or UINT32_MAX: none */
	uint8_t dir;		/* 0: original direction, 1: reply */
	uint8_t state;		/* RXP_ACL_CT_* bit of src/fib/acl.h */
};

/*
 * Returns a table for @cfg->max entries, tracked by up to @n_workers
 * workers, or NULL with errno (EINVAL, ENOMEM).
 */
struct rxp_ct *rxp_ct_create(const struct rxp_ct_config *cfg, unsigned n_workers);
void rxp_ct_destroy(struct rxp_ct *ct);

/* Changes a timeout or the liberal switch while packets are tracked (any thread). */
void rxp_ct_set_timeout(struct rxp_ct *ct, enum rxp_ct_timeout t, uint32_t seconds);
void rxp_ct_set_liberal(struct rxp_ct *ct, bool on);
void rxp_ct_set_loose(struct rxp_ct *ct, bool on);
const struct rxp_ct_config *rxp_ct_config(const struct rxp_ct *ct);

/* Worker @w starts and ends a poll (its reads of entries happen in between). */
void rxp_ct_enter(struct rxp_ct *ct, unsigned w);
void rxp_ct_leave(struct rxp_ct *ct, unsigned w);

/*
 * Tracks @p, seen by worker @w at @now_ns: finds its connection (either
 * direction) and moves it on (TCP's state and windows, the timeout), or
 * finds it belongs to none yet (new: nothing is inserted until
 * rxp_ct_confirm()). An ICMP error quoting a tracked connection's packet
 * is related. Returns the state bit (also in @ref->state).
 */
uint8_t rxp_ct_track(struct rxp_ct *ct, unsigned w, const struct rxp_ct_pkt *p, uint64_t now_ns,
		     struct rxp_ct_ref *ref);

/*
 * rxp_ct_track() for @n packets at once (up to 256), the table's cache
 * misses overlapped (hashes first, their buckets prefetched, then the
 * entries): what the datapath calls for a vector.
 */
void rxp_ct_track_bulk(struct rxp_ct *ct, unsigned w, const struct rxp_ct_pkt *const *p, unsigned n,
		       uint64_t now_ns, struct rxp_ct_ref *refs);

/*
 * The filter let a new packet through: its connection is inserted. When the
 * table is full an entry that never saw a reply goes first (early drop).
 * Returns 0, or -ENOSPC: the table is full of answered connections (the
 * packet is dropped as ct_table_full); -EINVAL for a packet that opens no
 * connection (not a TCP SYN, an ICMP answer or error, malformed).
 */
int rxp_ct_confirm(struct rxp_ct *ct, unsigned w, const struct rxp_ct_pkt *p, uint64_t now_ns,
		   struct rxp_ct_ref *ref);

/*
 * A new connection's translation: its original direction leaves with these
 * addresses (network order) and ports (host order; an ICMP query's
 * identifier in both), and it takes over the reference @map on a NAT
 * mapping (UINT32_MAX: none), let go through the release callback when the
 * entry goes. IPv4 only.
 */
struct rxp_ct_nat_bind {
	uint32_t src, dst;
	uint16_t sport, dport;
	uint32_t map;
	uint32_t rule;			/* the NAT rule's id, for show */
	uint32_t remote;		/* host order: counted in the mapping's permits (address-dependent filtering); 0: none */
	uint32_t map2;			/* a second mapping reference (a hairpin's source), or UINT32_MAX */
};

/*
 * rxp_ct_confirm() of a translated connection: its reply direction is found
 * by the translated addresses. Returns as rxp_ct_confirm(), -EADDRINUSE
 * when another connection already has that reply key, and 1 when another
 * worker inserted the packet's connection first (the packet is then
 * tracked as that one's). Unless it returns 0, @bind->map is still the
 * caller's.
 */
int rxp_ct_confirm_nat(struct rxp_ct *ct, unsigned w, const struct rxp_ct_pkt *p, uint64_t now_ns,
		       struct rxp_ct_ref *ref, const struct rxp_ct_nat_bind *bind);

/* An IPv4 tuple as a translation wants it: addresses in network order, ports in host order. */
struct rxp_ct_nat4 {
	uint32_t src, dst;
	uint16_t sport, dport;		/* an ICMP query: its identifier in both */
	uint8_t proto;
};

/*
 * For a packet of a translated connection (@ref from tracking, its
 * direction's): the tuple it leaves with, true; false when the connection
 * is not translated. For an ICMP error (related) it is what the error's
 * outer header goes to; its quoted packet becomes the other direction's.
 */
bool rxp_ct_nat_target(const struct rxp_ct *ct, const struct rxp_ct_ref *ref, struct rxp_ct_nat4 *out);

/* The NAT rule id of translated entry @entry. */
uint32_t rxp_ct_nat_rule(const struct rxp_ct *ct, uint32_t entry);

/*
 * Called, under the table's lock, when a translated connection leaves: @map
 * is its mapping reference, @remote what its bind counted (0: nothing).
 */
void rxp_ct_set_nat_release(struct rxp_ct *ct, void (*fn)(void *ctx, uint32_t map, uint32_t remote), void *ctx);

/*
 * Ends the translated connections whose outside address is @addr (network
 * order), as Linux's masquerade does when its interface loses the
 * address. Call it while no worker tracks. Returns how many.
 */
unsigned rxp_ct_nat_forget_addr(struct rxp_ct *ct, uint32_t addr);

int rxp_ct_nat_timeout_of(const char *name);
const char *rxp_ct_nat_timeout_name(enum rxp_ct_nat_timeout t);
uint32_t rxp_ct_nat_timeout_default(enum rxp_ct_nat_timeout t);
void rxp_ct_set_nat_timeout(struct rxp_ct *ct, enum rxp_ct_nat_timeout t, uint32_t seconds);

/*
 * Worker @w's share of expiry at @now_ns: at most @budget entries looked
 * at. Call it between polls. Returns the entries that expired.
 */
unsigned rxp_ct_expire(struct rxp_ct *ct, unsigned w, uint64_t now_ns, unsigned budget);

/*
 * Removes every entry (a `conntrack flush`, the end of a run). With one
 * worker the table takes no lock: call it on that worker, or while it does
 * not track.
 */
void rxp_ct_flush(struct rxp_ct *ct);

#define RXP_CT_STATS(X) \
	X(inserted,    "rxpath_conntrack_inserted_total",    "Connections inserted.") \
	X(deleted,     "rxpath_conntrack_deleted_total",     "Connections that ended or expired.") \
	X(early_drop,  "rxpath_conntrack_early_drops_total", "Unanswered connections dropped to make room for new ones.") \
	X(invalid,     "rxpath_conntrack_invalid_total",     "Packets found invalid (impossible flags, out of window, malformed).") \
	X(table_full,  "rxpath_conntrack_table_full_total",  "New connections that found the table full of answered ones.") \
	X(searched,    "rxpath_conntrack_searched_total",    "Packets looked up.")

struct rxp_ct_stats {
	uint64_t entries, max;
#define X(field, metric, help) uint64_t field;
	RXP_CT_STATS(X)
#undef X
};

/* Sums every worker's counters (any thread). */
void rxp_ct_stats(const struct rxp_ct *ct, struct rxp_ct_stats *out);

/* TCP's states, numbered as Linux's enum tcp_conntrack (ctnetlink shows these numbers). */
#define RXP_CT_TCP_STATES(X) \
	X(NONE,        "NONE") \
	X(SYN_SENT,    "SYN_SENT") \
	X(SYN_RECV,    "SYN_RECV") \
	X(ESTABLISHED, "ESTABLISHED") \
	X(FIN_WAIT,    "FIN_WAIT") \
	X(CLOSE_WAIT,  "CLOSE_WAIT") \
	X(LAST_ACK,    "LAST_ACK") \
	X(TIME_WAIT,   "TIME_WAIT") \
	X(CLOSE,       "CLOSE") \
	X(SYN_SENT2,   "SYN_SENT2")

enum rxp_ct_tcp_state {
#define X(id, name) RXP_CT_TCP_##id,
	RXP_CT_TCP_STATES(X)
#undef X
	RXP_CT_TCP_MAX
};

/* "ESTABLISHED", ..., or "?" */
const char *rxp_ct_tcp_state_name(unsigned state);

/* One entry as `conntrack -L` shows it, for show. */
struct rxp_ct_view {
	struct rxp_ct_tuple orig, reply;
	uint8_t tcp_state;		/* RXP_CT_TCP_* (0 for other protocols) */
	bool seen_reply, assured;
	uint64_t expires_in_s;		/* seconds left */
	uint64_t packets[2], bytes[2];	/* by direction */
	/* added: */
	uint8_t icmp_type[2], icmp_code;	/* ICMP queries: the type by direction, and the code */
};

/* Bytes the table takes (entries, index, lists). */
size_t rxp_ct_memory(const struct rxp_ct *ct);

/*
 * Calls @fn for each entry (any thread, while workers track: each view is
 * of a consistent entry; entries that change meanwhile may be seen or not).
 * Stops when @fn returns nonzero and returns that.
 */
int rxp_ct_walk(struct rxp_ct *ct, uint64_t now_ns, int (*fn)(const struct rxp_ct_view *v, void *ctx),
		void *ctx);

/* Writes @v as `conntrack -L` does ("tcp      6 431999 ESTABLISHED src=... [ASSURED]"). */
int rxp_ct_view_format(const struct rxp_ct_view *v, char *buf, size_t len);

#endif
