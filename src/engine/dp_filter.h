/* SPDX-License-Identifier: MIT */
/*
 * The filter's state on the datapath (dp_filter.c): each chain's rules in
 * order and its policy, the prefix sets, connection tracking. Commands
 * change the lists (datapath thread, between polls); dp_filter_commit()
 * then compiles them into one block and swaps it in for every worker at
 * once, their rule counters carried over by rule.
 */
#ifndef RXPATH_ENGINE_DP_FILTER_H
#define RXPATH_ENGINE_DP_FILTER_H

#include "dataplane.h"
#include "dp_nat.h"
#include "net/conntrack.h"
#include "net/filter.h"

struct dp_rule {
	struct dp_filter_cmd f;		/* as given: names of sets and ports, the text */
	struct rxp_acl_rule m;		/* resolved: set ids, interface bits */
	uint64_t id;			/* stays with the rule: its counters follow it */
};

struct dp_fset {
	char name[DP_SET_NAME_MAX];	/* empty: a free slot */
	struct rxp_pset *ps;
	unsigned refs;			/* rules that name it */
};

#define DP_FILTER_SNAPSHOTS 4	/* flushes whose rules can still be put back (a reload's take-back) */

struct dp_filter_snapshot {
	uint32_t id;			/* 0: empty */
	struct dp_rule *rules[DP_CHAINS];
	unsigned n[DP_CHAINS];
};

/* The compiled block and what belongs to it, beside the struct the workers read. */
struct dp_filter_block {
	struct rxp_filter f;
	uint8_t *verdict[DP_CHAINS], *flags[DP_CHAINS];
	uint64_t *ids[DP_CHAINS];
	struct rxp_nat *nat;		/* the NAT rules, resolved (dp_nat.h) */
	size_t memory;
};

struct dp_filter {
	struct dp_rule *rules[DP_CHAINS];
	unsigned n[DP_CHAINS], cap[DP_CHAINS];
	uint8_t policy[DP_CHAINS];	/* DP_VERDICT_ACCEPT or DP_VERDICT_DROP */
	struct dp_fset sets[RXP_ACL_SETS_MAX];
	uint64_t next_id;
	bool dirty;			/* changed since the last commit */
	struct dp_filter_block *block;	/* what the workers read; NULL: nothing filters */
	struct rxp_ct *ct;		/* made when a rule first asks for a state */
	struct rxp_ct_config ct_cfg;
	struct dp_filter_snapshot snap[DP_FILTER_SNAPSHOTS];
	uint32_t next_snap;
	double build_ms;		/* the last compile's time */
	struct dp_nat nat;		/* NAT44 (dp_nat.h): a part of the filter's stage */
};

/* Prepares @dp's filter (nothing filters), with the table size @ct_max (0: the default). */
void dp_filter_init(struct dp *dp, uint32_t ct_max);
void dp_filter_free(struct dp *dp);

/* Command kinds (cmd.c's table): apply, inverse, key, as the others. */
int dp_filter_apply(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen);
bool dp_filter_inverse(struct dp *dp, const struct dp_cmd *c, struct dp_cmd *inv);
void dp_filter_key(const struct dp_cmd *c, char *key, size_t len);

/*
 * Compiles the rules changed since the last call and swaps the block in
 * for every worker (datapath thread, the others waiting between polls).
 * Returns 0, or -errno with @err (the old block stays).
 */
int dp_filter_commit(struct dp *dp, char *err, size_t errlen);

/* dp_filter_commit() where nobody waits for its answer: a failure is logged (dp_log). */
void dp_filter_publish(struct dp *dp);

/* Rule @i (from 0; n: the policy) of @chain's packets and bytes over every worker. */
void dp_filter_counts(struct dp *dp, unsigned chain, unsigned i, uint64_t *packets, uint64_t *bytes);

#endif
