/* SPDX-License-Identifier: MIT */
/*
 * NAT's state on the datapath (dp_nat.c): the rules in order, the
 * filtering behaviour, the timeouts and the mapping table. Commands change
 * the list (datapath thread, between polls); the filter's commit
 * (dp_filter.c) then builds the rules into the block the workers read,
 * NAT being a part of the filter's stage.
 */
#ifndef RXPATH_ENGINE_DP_NAT_H
#define RXPATH_ENGINE_DP_NAT_H

#include "dataplane.h"
#include "net/nat.h"

struct dp_nat_rule {
	struct dp_nat_cmd c;		/* as given */
	uint64_t id;
	uint64_t *hits;			/* connections it translated: the workers add to it */
};

#define DP_NAT_MAPPINGS_DEFAULT 65536u	/* mappings; grows with `conntrack max` */
#define DP_NAT_DEAD_MAX 1024u		/* rules deleted between two commits */

struct dp_nat {
	struct dp_nat_rule *rules;
	unsigned n, cap;
	uint8_t filtering;		/* enum rxp_nat_filtering */
	uint32_t timeout[RXP_CT_NAT_TO_MAX];	/* seconds */
	struct rxp_nat_map *map;	/* made with the first rule */
	uint64_t next_id;
	struct dp_nat_rule *flushed;	/* the last flush's rules, for its inverse */
	unsigned n_flushed;
	uint32_t flush_id;
	uint64_t *dead[DP_NAT_DEAD_MAX];	/* deleted rules' counters, freed once the block without them is in */
	unsigned n_dead;
};

void dp_nat_init(struct dp_nat *nat);
/* A new block is in: what only the old one read goes. */
void dp_nat_swapped(struct dp_nat *nat);
void dp_nat_free(struct dp_nat *nat);

/* Command kinds (cmd.c's table): apply, inverse, key, as the others. */
int dp_nat_apply(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen);
bool dp_nat_inverse(struct dp *dp, const struct dp_cmd *c, struct dp_cmd *inv);
void dp_nat_key(const struct dp_cmd *c, char *key, size_t len);

/*
 * The rules resolved for the workers (interfaces by index, masquerade's
 * address as it is now): a block to free with dp_nat_block_free(), NULL
 * with *@none when there are no rules, or NULL with @err.
 */
struct rxp_nat *dp_nat_block(struct dp *dp, bool *none, char *err, size_t errlen);
void dp_nat_block_free(struct rxp_nat *b);

/*
 * An IPv4 address came or went (@gone, network order, or NULL): the rules
 * that take a port's address are built again, and the connections
 * translated to a gone address end.
 */
void dp_nat_addr_changed(struct dp *dp, const uint8_t *gone);

/* Tells a connection table just made about NAT: its timeouts, the mappings' release. */
void dp_nat_attach(struct dp *dp, struct rxp_ct *ct);

#endif
