/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dp_filter.h"
#include "dp_nat.h"
#include "rxpath/router.h"

void dp_nat_init(struct dp_nat *nat)
{
	memset(nat, 0, sizeof(*nat));
	nat->filtering = RXP_NAT_APDF;	/* as Linux: a mapping takes only what its connections allow */
	for (unsigned t = 0; t < RXP_CT_NAT_TO_MAX; t++)
		nat->timeout[t] = rxp_ct_nat_timeout_default((enum rxp_ct_nat_timeout)t);
	nat->next_id = 1;
}

static void rules_free(struct dp_nat_rule *r, unsigned n)
{
	for (unsigned i = 0; r && i < n; i++)
		free(r[i].hits);
	free(r);
}

void dp_nat_swapped(struct dp_nat *nat)
{
	for (unsigned i = 0; i < nat->n_dead; i++)
		free(nat->dead[i]);
	nat->n_dead = 0;
}

void dp_nat_free(struct dp_nat *nat)
{
	dp_nat_swapped(nat);
	rules_free(nat->rules, nat->n);
	rules_free(nat->flushed, nat->n_flushed);
	rxp_nat_map_destroy(nat->map);
	memset(nat, 0, sizeof(*nat));
}

static struct dp_nat *nat_of(struct dp *dp)
{
	return &dp->filter->nat;
}

static void ipstr(uint32_t host, char *buf, size_t len)
{
	uint32_t a = htonl(host);

	inet_ntop(AF_INET, &a, buf, (socklen_t)len);
}

/* A port forward's outside address: its dst, else its in port's first address (host order, 0: none yet). */
static uint32_t forward_addr(struct dp *dp, const struct dp_nat_cmd *c)
{
	int ifidx = rxp_router_if_by_name(dp->router, c->port);

	if (c->dst)
		return c->dst;
	return ifidx >= 0 && dp->router->ifs[ifidx].n_addr4 ? ntohl(dp->router->ifs[ifidx].addr4[0]) : 0;
}

/* Do two rules claim the same outside endpoint or inside address? Names the clash in @why. */
static bool clashes(struct dp *dp, const struct dp_nat_cmd *a, const struct dp_nat_cmd *b, char *why, size_t len)
{
	if (a->kind == RXP_NAT_DNAT && b->kind == RXP_NAT_DNAT && a->proto == b->proto &&
	    a->dport_lo <= b->dport_hi && b->dport_lo <= a->dport_hi &&
	    (forward_addr(dp, a) == forward_addr(dp, b) || (!a->dst && !b->dst && !strcmp(a->port, b->port)))) {
		snprintf(why, len, "its outside port%s already forwarded by '%s'",
			 a->dport_lo == a->dport_hi ? " is" : "s are", b->text);
		return true;
	}
	if (a->kind == RXP_NAT_STATIC && b->kind == RXP_NAT_STATIC && (a->src == b->src || a->dst == b->dst)) {
		snprintf(why, len, "its %s address is already mapped by '%s'", a->src == b->src ? "inside" : "outside",
			 b->text);
		return true;
	}
	return false;
}

/* A pool may not take a router address that serves another port. */
static int pool_check(struct dp *dp, const char *where, const struct dp_nat_cmd *c, char *err, size_t errlen)
{
	const struct rxp_router *r = dp->router;
	int own = rxp_router_if_by_name(r, c->port);

	for (unsigned i = 0; i < r->n_ifs; i++) {
		const struct rxp_l3if *ifp = &r->ifs[i];

		for (unsigned k = 0; k < ifp->n_addr4; k++) {
			uint32_t a = ntohl(ifp->addr4[k]);
			char s[INET_ADDRSTRLEN];

			if ((int)i == own || a < c->to_lo || a > c->to_hi)
				continue;
			ipstr(a, s, sizeof(s));
			snprintf(err, errlen, "%s: %s: the pool holds %s, an address of port %s: a mapping would take "
				 "its connections' ports; leave it out of the pool", where, c->text, s, ifp->name);
			return -EADDRINUSE;
		}
	}
	return 0;
}

static int rule_check(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	const struct dp_nat_cmd *n = &c->nat;
	struct dp_nat *nat = nat_of(dp);
	char why[DP_RULE_TEXT_MAX + 64];
	int ifidx = -1;

	if (!dp->router) {
		snprintf(err, errlen, "%s: nat needs the router: add an address to a port first", c->where);
		return -EINVAL;
	}
	if (n->port[0]) {
		ifidx = rxp_router_if_by_name(dp->router, n->port);
		if (ifidx < 0) {
			snprintf(err, errlen, "%s: %s: no such port", c->where, n->port);
			return -ENOENT;
		}
	}
	/* as nftables' masquerade, the address is the port's when a packet leaves, not when the rule is made */
	if ((n->kind == RXP_NAT_MASQUERADE || (n->kind == RXP_NAT_DNAT && !n->dst)) &&
	    !dp->router->ifs[ifidx].n_addr4)
		dp_log(dp, "%s: note: port %s has no IPv4 address yet: '%s' takes nothing until it has one",
		       c->where, n->port, n->text);
	if (n->kind == RXP_NAT_SNAT && pool_check(dp, c->where, n, err, errlen))
		return -EADDRINUSE;
	for (unsigned i = 0; i < nat->n; i++) {
		if (clashes(dp, n, &nat->rules[i].c, why, sizeof(why))) {
			snprintf(err, errlen, "%s: %s: %s", c->where, n->text, why);
			return -EEXIST;
		}
	}
	return 0;
}

/* The rule whose text is @text, from 0, or -1. */
static int rule_by_text(const struct dp_nat *nat, const char *text)
{
	for (unsigned i = 0; i < nat->n; i++)
		if (!strcmp(nat->rules[i].c.text, text))
			return (int)i;
	return -1;
}

static int rule_insert(struct dp_nat *nat, unsigned at, const struct dp_nat_cmd *c, uint64_t id)
{
	struct dp_nat_rule r = { .c = *c, .id = id };

	if (nat->n == nat->cap) {
		unsigned cap = nat->cap ? nat->cap * 2 : 8;
		struct dp_nat_rule *p = realloc(nat->rules, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		nat->rules = p;
		nat->cap = cap;
	}
	r.hits = calloc(1, sizeof(*r.hits));
	if (!r.hits)
		return -ENOMEM;
	memmove(&nat->rules[at + 1], &nat->rules[at], (nat->n - at) * sizeof(*nat->rules));
	nat->rules[at] = r;
	nat->n++;
	return 0;
}

static int map_make(struct dp *dp, char *err, size_t errlen)
{
	struct dp_nat *nat = nat_of(dp);
	uint32_t max = RXP_MAX(dp->filter->ct_cfg.max, DP_NAT_MAPPINGS_DEFAULT);

	if (nat->map)
		return 0;
	nat->map = rxp_nat_map_create(max, dp->n_workers > 1);
	if (!nat->map) {
		snprintf(err, errlen, "cannot make the NAT mapping table (%u mappings); lower conntrack max", max);
		return -ENOMEM;
	}
	if (dp->filter->ct)
		dp_nat_attach(dp, dp->filter->ct);
	return 0;
}

int dp_nat_apply(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	struct dp_nat *nat = nat_of(dp);
	unsigned at;
	int ret;

	switch (c->kind) {
	case DP_CMD_NAT_ADD:
		ret = rule_check(dp, c, err, errlen);
		if (ret || (ret = map_make(dp, err, errlen)))
			return ret;
		at = c->nat.index && c->nat.index <= nat->n ? c->nat.index - 1 : nat->n;
		if (rule_insert(nat, at, &c->nat, c->nat.rule_id ? c->nat.rule_id : nat->next_id++)) {
			snprintf(err, errlen, "%s: out of memory for the NAT rule", c->where);
			return -ENOMEM;
		}
		break;
	case DP_CMD_NAT_DEL:
		if (!c->nat.index && rule_by_text(nat, c->nat.text) < 0) {
			snprintf(err, errlen, "%s: nat del %s: no such NAT rule (show nat)", c->where, c->nat.text);
			return -ENOENT;
		}
		if (!c->nat.index) {
			struct dp_cmd by_n = *c;

			by_n.nat.index = (uint32_t)rule_by_text(nat, c->nat.text) + 1;
			return dp_nat_apply(dp, &by_n, err, errlen);
		}
		if (c->nat.index < 1 || c->nat.index > nat->n) {
			snprintf(err, errlen, "%s: nat del %u: there %s %u NAT rule%s (show nat)", c->where,
				 c->nat.index, nat->n == 1 ? "is" : "are", nat->n, nat->n == 1 ? "" : "s");
			return -ENOENT;
		}
		at = c->nat.index - 1;
		/* the block the workers read counts into it until the next one is in */
		if (nat->n_dead < DP_NAT_DEAD_MAX)
			nat->dead[nat->n_dead++] = nat->rules[at].hits;
		else
			free(nat->rules[at].hits);	/* so many in one batch: its commit swaps before a poll */
		memmove(&nat->rules[at], &nat->rules[at + 1], (nat->n - at - 1) * sizeof(*nat->rules));
		nat->n--;
		break;
	case DP_CMD_NAT_FLUSH:
		rules_free(nat->flushed, nat->n_flushed);
		nat->flushed = nat->rules;
		nat->n_flushed = nat->n;
		nat->rules = NULL;
		nat->n = nat->cap = 0;
		break;
	case DP_CMD_NAT_RESTORE:
		if (c->nat.snapshot != nat->flush_id || nat->n) {
			snprintf(err, errlen, "%s: the flushed NAT rules are gone", c->where);
			return -ENOENT;
		}
		rules_free(nat->rules, nat->n);
		nat->rules = nat->flushed;
		nat->n = nat->cap = nat->n_flushed;
		nat->flushed = NULL;
		nat->n_flushed = 0;
		break;
	case DP_CMD_NAT_FILTERING:
		nat->filtering = c->nat.kind;
		break;
	case DP_CMD_NAT_TIMEOUT:
		nat->timeout[c->nat.timeout] = c->seconds;
		if (dp->filter->ct)
			rxp_ct_set_nat_timeout(dp->filter->ct, (enum rxp_ct_nat_timeout)c->nat.timeout, c->seconds);
		return 0;	/* read by tracking at once: no new block */
	default:
		return -EINVAL;
	}
	dp->filter->dirty = true;
	return 0;
}

bool dp_nat_inverse(struct dp *dp, const struct dp_cmd *c, struct dp_cmd *inv)
{
	struct dp_nat *nat = nat_of(dp);

	switch (c->kind) {
	case DP_CMD_NAT_ADD:
		inv->kind = DP_CMD_NAT_DEL;
		inv->nat.index = c->nat.index && c->nat.index <= nat->n ? c->nat.index : nat->n + 1;
		return true;
	case DP_CMD_NAT_DEL: {
		int at = c->nat.index ? (int)c->nat.index - 1 : rule_by_text(nat, c->nat.text);

		if (at < 0 || at >= (int)nat->n)
			return false;
		inv->kind = DP_CMD_NAT_ADD;
		inv->nat = nat->rules[at].c;
		inv->nat.index = (uint32_t)at + 1;
		inv->nat.rule_id = nat->rules[at].id;
		return true;
	}
	case DP_CMD_NAT_FLUSH:
		inv->kind = DP_CMD_NAT_RESTORE;
		inv->nat.snapshot = ++nat->flush_id;
		return true;
	case DP_CMD_NAT_FILTERING:
		inv->nat.kind = nat->filtering;
		return true;
	case DP_CMD_NAT_TIMEOUT:
		inv->seconds = nat->timeout[c->nat.timeout];
		return true;
	default:
		return false;
	}
}

void dp_nat_key(const struct dp_cmd *c, char *key, size_t len)
{
	switch (c->kind) {
	case DP_CMD_NAT_FILTERING:
		snprintf(key, len, "nat filtering");
		break;
	case DP_CMD_NAT_TIMEOUT:
		snprintf(key, len, "nat timeout %s", rxp_ct_nat_timeout_name((enum rxp_ct_nat_timeout)c->nat.timeout));
		break;
	default:
		snprintf(key, len, "nat %s", c->nat.text);
		break;
	}
}

/* The first IPv4 address of interface @ifidx, host order, or 0. */
static uint32_t if_addr(const struct rxp_router *r, int ifidx)
{
	return ifidx >= 0 && r->ifs[ifidx].n_addr4 ? ntohl(r->ifs[ifidx].addr4[0]) : 0;
}

struct rxp_nat *dp_nat_block(struct dp *dp, bool *none, char *err, size_t errlen)
{
	struct dp_nat *nat = nat_of(dp);
	struct rxp_nat *b;
	struct rxp_nat_rule *rules;
	unsigned n = 0;

	*none = !nat->n;
	if (!nat->n)
		return NULL;
	b = calloc(1, sizeof(*b));
	rules = calloc(nat->n, sizeof(*rules));
	if (!b || !rules) {
		free(b);
		free(rules);
		snprintf(err, errlen, "out of memory building the NAT rules");
		return NULL;
	}
	for (unsigned i = 0; i < nat->n; i++) {
		const struct dp_nat_cmd *c = &nat->rules[i].c;
		struct rxp_nat_rule *r = &rules[n];
		int ifidx = c->port[0] ? rxp_router_if_by_name(dp->router, c->port) : -1;

		r->kind = c->kind;
		r->ifidx = ifidx >= 0 ? (uint16_t)ifidx : RXP_NAT_ANY_IF;
		r->hits = nat->rules[i].hits;
		r->src = c->src;
		r->src_mask = c->src_mask;
		r->pool.id = (uint32_t)nat->rules[i].id;
		switch (c->kind) {
		case RXP_NAT_MASQUERADE:
			r->pool.addr_lo = r->pool.addr_hi = if_addr(dp->router, ifidx);
			r->pool.default_ports = true;
			if (!r->pool.addr_lo)
				continue;	/* its port lost its address: it takes nothing until one comes */
			break;
		case RXP_NAT_SNAT:
			r->pool.addr_lo = c->to_lo;
			r->pool.addr_hi = c->to_hi;
			r->pool.port_lo = c->port_lo;
			r->pool.port_hi = c->port_hi;
			r->pool.default_ports = !c->port_lo;
			break;
		case RXP_NAT_DNAT:
			r->dst = c->dst ? c->dst : if_addr(dp->router, ifidx);
			r->proto = c->proto;
			r->dport_lo = c->dport_lo;
			r->dport_hi = c->dport_hi;
			r->to_addr = c->to_lo;
			r->to_port = c->port_lo;
			if (!r->dst)
				continue;
			break;
		case RXP_NAT_STATIC:
			r->dst = c->dst;
			r->src_mask = ~0u;
			break;
		}
		n++;
	}
	b->rules = rules;
	b->n_rules = n;
	b->map = nat->map;
	b->filtering = nat->filtering;
	return b;
}

void dp_nat_block_free(struct rxp_nat *b)
{
	if (!b)
		return;
	free((void *)b->rules);
	free(b);
}

void dp_nat_attach(struct dp *dp, struct rxp_ct *ct)
{
	struct dp_nat *nat = nat_of(dp);

	for (unsigned t = 0; t < RXP_CT_NAT_TO_MAX; t++)
		rxp_ct_set_nat_timeout(ct, (enum rxp_ct_nat_timeout)t, nat->timeout[t]);
	if (nat->map)
		rxp_ct_set_nat_release(ct, rxp_nat_release, nat->map);
}

void dp_nat_addr_changed(struct dp *dp, const uint8_t *gone)
{
	const struct dp_nat *nat;
	uint32_t a;

	if (!dp->filter)
		return;
	nat = nat_of(dp);
	if (gone && dp->filter->ct) {
		/* what went out by it cannot come back: its connections end (a new one takes the new address) */
		memcpy(&a, gone, 4);
		rxp_ct_nat_forget_addr(dp->filter->ct, a);
	}
	/* masquerade and a port forward without dst take their port's address when the block is built */
	for (unsigned i = 0; i < nat->n; i++)
		if (nat->rules[i].c.kind == RXP_NAT_MASQUERADE || (nat->rules[i].c.kind == RXP_NAT_DNAT &&
								   !nat->rules[i].c.dst))
			dp->filter->dirty = true;
}
