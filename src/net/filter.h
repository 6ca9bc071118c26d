/* SPDX-License-Identifier: MIT */
/*
 * The filter's stage: nftables' input, forward and output hooks with
 * connection tracking. What the workers read is one block (struct
 * rxp_filter) made whole by the engine and swapped in between polls; the
 * rule counters are each worker's own.
 */
#ifndef RXPATH_NET_FILTER_H
#define RXPATH_NET_FILTER_H

#include "conntrack.h"
#include "fib/acl.h"
#include "fib/prefix_set.h"
#include "stage.h"

struct rxp_nat;

enum rxp_filter_chain_id { RXP_FILTER_INPUT, RXP_FILTER_FORWARD, RXP_FILTER_OUTPUT, RXP_FILTER_CHAINS };
enum rxp_filter_verdict { RXP_FILTER_ACCEPT, RXP_FILTER_DROP, RXP_FILTER_REJECT };

#define RXP_FILTER_RULE_ND 0x01	/* the rule names a Neighbor Discovery or MLD type (input sees those only for such rules) */
#define RXP_FILTER_RULE_STATE 0x02	/* the rule asks for connection states: an invalid packet it drops is ct_invalid */

struct rxp_filter_chain {
	const struct rxp_acl *acl;	/* NULL: no rules */
	const uint8_t *verdict;		/* per rule: enum rxp_filter_verdict */
	const uint8_t *flags;		/* per rule: RXP_FILTER_RULE_* */
	uint32_t n_rules;
	uint8_t policy;			/* RXP_FILTER_ACCEPT or RXP_FILTER_DROP */
	bool on;			/* rules, or a drop policy: the chain is asked */
	uint64_t src_sets, dst_sets;	/* sets its rules name, as source and destination */
};

struct rxp_filter {
	struct rxp_filter_chain chain[RXP_FILTER_CHAINS];
	bool track;			/* a rule asks for a connection's state, or NAT is on */
	const struct rxp_nat *nat;	/* NAT44 rules (src/net/nat.h); NULL: none */
	struct rxp_pset *sets[RXP_ACL_SETS_MAX];	/* by id; changed in place by the engine */
};

/*
 * A fragmented datagram is decided as a whole, by its first fragment (the
 * one with the ports): later fragments follow that decision, and those
 * that come before it are held until it comes (as Linux's defragmentation
 * before conntrack decides a whole datagram), then sent on as they came.
 */
#define RXP_FILTER_FRAG_DATAGRAMS 64	/* per worker */
#define RXP_FILTER_FRAG_HELD 16		/* fragments held for one datagram's first */
#define RXP_FILTER_FRAG_NS (30ull * 1000000000ull)	/* as net.ipv4.ipfrag_time */

struct rxp_filter_frag {
	uint64_t deadline_ns;		/* 0: a free slot */
	uint32_t id;
	uint8_t family, proto;
	uint8_t decided;		/* 0: waiting for the first fragment; 1: go; 2: dropped */
	uint8_t drop_reason;		/* decided 2: the first fragment's */
	uint32_t rule_mark;		/* its RXP_CAPTURE_RULE */
	uint8_t src[16], dst[16];
	bool nat;			/* decided 1, translated: the later fragments take its addresses and next hop */
	uint32_t nat_src, nat_dst;	/* network order */
	uint32_t nat_nh;
	uint8_t n_held;
	struct rxp_pkt *held[RXP_FILTER_FRAG_HELD];
	uint32_t held_nh[RXP_FILTER_FRAG_HELD];
};

struct rxp_filter_frags {
	struct rxp_filter_frag d[RXP_FILTER_FRAG_DATAGRAMS];
};

/* Drops every held fragment under @reason and forgets the decisions. Returns the count dropped. */
uint64_t rxp_filter_frags_end(struct rxp_stack *st, enum rxp_drop_reason reason);

/* One rule's counters in one worker; a chain's policy has the one past its rules. */
struct rxp_rule_count {
	uint64_t packets, bytes;
};

/*
 * Routed IPv4 or IPv6 packets @pkts[0..@n) with their FIB results @nh
 * (and, IPv4, their destinations @dst, or NULL): those to the router go
 * through input, those it forwards through forward; what the chains drop or
 * reject is consumed and taken out of the arrays, the rest kept in order.
 * Returns how many are kept.
 */
uint16_t rxp_filter_routed(struct rxp_stack *st, struct rxp_pkt **pkts, uint32_t *dst, uint32_t *nh,
			   uint16_t n);

/*
 * A packet the router made (of @family), about to leave by interface
 * @out_if: output decides. Returns true when it goes on; else it is
 * consumed, counted under the filter's drop reasons.
 */
bool rxp_filter_output(struct rxp_stack *st, struct rxp_pkt *pkt, uint8_t family, int out_if);

/*
 * Marks the stretch in which this worker reads tracking entries (a poll,
 * the timers, an answer the router makes): entries freed meanwhile wait.
 * Nests; only the outermost tells the table.
 */
static inline void rxp_filter_enter(struct rxp_stack *st)
{
	if (st->ct && st->ct_depth++ == 0)
		rxp_ct_enter(st->ct, st->worker);
}

static inline void rxp_filter_leave(struct rxp_stack *st)
{
	if (st->ct && --st->ct_depth == 0)
		rxp_ct_leave(st->ct, st->worker);
}

/* Connection tracking's expiry, its bounded share each call: the timers call it between polls. */
void rxp_filter_tick(struct rxp_stack *st);

/*
 * True when the forward chain decides IPv4 packets the stateless way:
 * nothing tracked, no NAT, no sets in forward. The router then gives it
 * the keys of a vector that takes its fast path whole (rxp_filter_key4()),
 * and forwards what the chain's pass (struct rxp_filter_pass) lets through.
 */
static inline bool rxp_filter_stateless4(const struct rxp_stack *st)
{
	const struct rxp_filter *f = st->filter;

	return !f->track && !f->nat && !(f->chain[RXP_FILTER_FORWARD].src_sets | f->chain[RXP_FILTER_FORWARD].dst_sets);
}

/*
 * A key's ports from the IPv4 transport header @l4 of protocol @proto (at
 * least 4 bytes there): TCP's and UDP's, ICMP's type and code, else 0.
 */
static rxp_always_inline void rxp_filter_ports4(const uint8_t *l4, uint8_t proto, uint16_t *sport, uint16_t *dport)
{
	bool ports = proto == RXP_IPPROTO_TCP || proto == RXP_IPPROTO_UDP;

	*sport = ports ? rxp_load_be16(l4) : proto == RXP_IPPROTO_ICMP ? l4[0] : 0;
	*dport = ports ? rxp_load_be16(l4 + 2) : proto == RXP_IPPROTO_ICMP ? l4[1] : 0;
}

/*
 * Writes entry @i of @rows: the key of the IPv4 packet @pkt (its header @ip,
 * checked) that is to leave by interface @out_if, when it is the common
 * one: no options, no fragment, its transport header there (TCP's whole;
 * 8 bytes of the rest). Returns false for anything else, which only the
 * general way decides.
 */
static rxp_always_inline bool rxp_filter_key4(struct rxp_acl_rows4 *rows, unsigned i, const struct rxp_pkt *pkt,
					      const struct rxp_ip4_hdr *ip, uint16_t out_if)
{
	uint8_t proto = ip->proto;
	uint16_t sport, dport;

	if (rxp_unlikely(ip->ver_ihl != RXP_IP4_VER_IHL_NO_OPTS ||
			 (ip->frag_off & htons(RXP_IP4_MF | RXP_IP4_OFFMASK)) ||
			 pkt->l3_len < RXP_IP4_HLEN + (proto == RXP_IPPROTO_TCP ? RXP_TCP_HLEN : 8u)))
		return false;
	rows->src[i] = ntohl(ip->src);
	rows->dst[i] = ntohl(ip->dst);
	rows->proto[i] = proto;
	rxp_filter_ports4((const uint8_t *)(ip + 1), proto, &sport, &dport);
	rows->sport[i] = sport;
	rows->dport[i] = dport;
	rows->ct_state[i] = RXP_ACL_CT_UNTRACKED;
	rows->in_if[i] = (uint8_t)pkt->ifidx;
	rows->out_if[i] = (uint8_t)out_if;
	rows->src_sets[i] = rows->dst_sets[i] = 0;
	return true;
}

/*
 * The stateless forward chain's pass over a vector of IPv4 packets (at most
 * RXP_ACL_BURST): rxp_filter_classify4() finds each packet's rule, then
 * rxp_filter_accept4() applies it packet by packet, where the caller sends
 * what goes on, and rxp_filter_run_end() counts the last run. A run of
 * packets to one rule (most of a vector, often) is counted once: a counter
 * stored and loaded again for every packet would chain them one after the
 * other.
 */
struct rxp_filter_pass {
	const struct rxp_filter_chain *c;
	struct rxp_rule_count *count;	/* the worker's, of forward */
	uint32_t n_count;
	uint32_t match[RXP_ACL_BURST];
};

/* The run being counted: the caller's local (rxp_filter_run_start()), which the compiler keeps in registers. */
struct rxp_filter_run {
	uint32_t at;			/* the rule (or the policy) */
	uint64_t pkts, bytes;
};

static inline struct rxp_filter_run rxp_filter_run_start(void)
{
	return (struct rxp_filter_run){ .at = UINT32_MAX };
}

/* Finds the rules of @n packets by their keys @rows. Returns false when forward asks nothing: all go on. */
bool rxp_filter_classify4(struct rxp_stack *st, const struct rxp_acl_rows4 *rows, uint16_t n,
			  struct rxp_filter_pass *fp);

/* Drops or rejects @pkt, the stateless way's, as rule @rule (or the policy) says with @verdict. */
void rxp_filter_refuse4(struct rxp_stack *st, struct rxp_pkt *pkt, uint32_t rule, uint8_t verdict);

/* Adds @run to its rule's counters (as count_rule()). */
static inline void rxp_filter_run_end(const struct rxp_filter_pass *fp, const struct rxp_filter_run *run)
{
	if (run->at < fp->n_count) {
		fp->count[run->at].packets += run->pkts;
		fp->count[run->at].bytes += run->bytes;
	}
}

/* Packet @i of the pass, @pkt: counted in @run, and true when it goes on; else consumed. */
static rxp_always_inline bool rxp_filter_accept4(struct rxp_stack *st, const struct rxp_filter_pass *fp,
						 struct rxp_filter_run *run, struct rxp_pkt *pkt, unsigned i)
{
	const struct rxp_filter_chain *c = fp->c;
	uint32_t rule = fp->match[i];
	uint8_t v = rule == RXP_ACL_NO_MATCH ? c->policy : c->verdict[rule];
	uint32_t at = rule == RXP_ACL_NO_MATCH ? c->n_rules : rule;

	if (at != run->at) {
		rxp_filter_run_end(fp, run);
		*run = (struct rxp_filter_run){ .at = at };
	}
	run->pkts++;
	run->bytes += pkt->l3_len;
	if (rxp_likely(v == RXP_FILTER_ACCEPT))
		return true;
	rxp_filter_refuse4(st, pkt, rule, v);
	return false;
}

/* True when @st has something to filter or track (the stage's cheap test). */
static inline bool rxp_filter_on(const struct rxp_stack *st)
{
	return st->filter != NULL;
}

#endif
