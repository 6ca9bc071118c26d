/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dp_filter.h"
#include "rxpath/proto.h"

static const char *const chain_names[DP_CHAINS] = { "input", "forward", "output" };

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void dp_filter_init(struct dp *dp, uint32_t ct_max)
{
	struct dp_filter *f = dp->filter;

	memset(f, 0, sizeof(*f));
	rxp_ct_config_default(&f->ct_cfg);
	if (ct_max)
		f->ct_cfg.max = ct_max;
	f->next_id = 1;
	f->next_snap = 1;
	dp_nat_init(&f->nat);
}

static void block_free(struct dp_filter_block *b)
{
	if (!b)
		return;
	for (unsigned c = 0; c < DP_CHAINS; c++) {
		rxp_acl_free((struct rxp_acl *)b->f.chain[c].acl);
		free(b->verdict[c]);
		free(b->flags[c]);
		free(b->ids[c]);
	}
	dp_nat_block_free(b->nat);
	free(b);
}

static void snapshot_free(struct dp_filter_snapshot *s)
{
	for (unsigned c = 0; c < DP_CHAINS; c++)
		free(s->rules[c]);
	memset(s, 0, sizeof(*s));
}

void dp_filter_free(struct dp *dp)
{
	struct dp_filter *f = dp->filter;

	if (!f)
		return;
	for (unsigned w = 0; w < dp->n_workers; w++) {
		struct rxp_stack *st = dp_stack(dp, w);

		st->filter = NULL;
		st->ct = NULL;
		rxp_filter_frags_end(st, RXP_DROP_STOPPED);	/* nothing, after the stack's close */
		free(st->frags);
		st->frags = NULL;
		for (unsigned c = 0; c < DP_CHAINS; c++) {
			free(st->rule_count[c]);
			st->rule_count[c] = NULL;
			st->rule_count_n[c] = 0;
		}
	}
	block_free(f->block);
	for (unsigned c = 0; c < DP_CHAINS; c++)
		free(f->rules[c]);
	for (unsigned i = 0; i < RXP_ACL_SETS_MAX; i++)
		rxp_pset_destroy(f->sets[i].ps);
	for (unsigned i = 0; i < DP_FILTER_SNAPSHOTS; i++)
		snapshot_free(&f->snap[i]);
	if (f->ct)
		rxp_ct_destroy(f->ct);
	dp_nat_free(&f->nat);	/* after the table: its entries hold mappings */
	memset(f, 0, sizeof(*f));
}

static int set_find(const struct dp_filter *f, const char *name)
{
	for (int i = 0; i < (int)RXP_ACL_SETS_MAX; i++)
		if (f->sets[i].name[0] && !strcmp(f->sets[i].name, name))
			return i;
	return -1;
}

/* The set called @name, made empty if there is none. Returns its id or -errno. */
static int set_make(struct dp_filter *f, const char *name)
{
	int id = set_find(f, name);

	if (id >= 0)
		return id;
	for (int i = 0; i < (int)RXP_ACL_SETS_MAX; i++) {
		if (f->sets[i].name[0])
			continue;
		f->sets[i].ps = rxp_pset_create();
		if (!f->sets[i].ps)
			return -ENOMEM;
		snprintf(f->sets[i].name, sizeof(f->sets[i].name), "%s", name);
		return i;
	}
	return -ENOSPC;
}

/* Resolves @r's names (sets, ports) into its match. Returns 0 or -errno with @err. */
static int rule_resolve(struct dp *dp, const struct dp_cmd *c, struct dp_rule *r, char *err,
			size_t errlen)
{
	struct dp_filter *f = dp->filter;
	const char *setname[2] = { c->filter.src_set, c->filter.dst_set };
	const char *ifname[2] = { c->filter.in_if, c->filter.out_if };

	r->f = c->filter;
	r->m = c->filter.rule;
	for (unsigned k = 0; k < 2; k++) {
		int id;

		if (!setname[k][0])
			continue;
		id = set_find(f, setname[k]);
		if (id < 0) {
			snprintf(err, errlen, "%s: @%s: no such set; make it first with 'filter set add %s [PREFIX...]'",
				 c->where, setname[k], setname[k]);
			return -ENOENT;
		}
		if (k == 0)
			r->m.src_set = (uint8_t)id;
		else
			r->m.dst_set = (uint8_t)id;
	}
	for (unsigned k = 0; k < 2; k++) {
		int ifidx;

		if (!ifname[k][0])
			continue;
		ifidx = rxp_router_if_by_name(dp->router, ifname[k]);
		if (ifidx < 0) {
			snprintf(err, errlen, "%s: %s %s: no such port", c->where, k ? "out" : "in", ifname[k]);
			return -ENOENT;
		}
		if (ifidx >= 63) {	/* the key's 63 stands for "none" */
			snprintf(err, errlen, "%s: %s %s: the 64th interface cannot be named in a rule",
				 c->where, k ? "out" : "in", ifname[k]);
			return -ERANGE;
		}
		if (k == 0)
			r->m.in_ifs = 1ull << ifidx;
		else
			r->m.out_ifs = 1ull << ifidx;
	}
	return 0;
}

static void set_refs(struct dp_filter *f, const struct dp_rule *r, int delta)
{
	if (r->m.src_set != RXP_ACL_NO_SET)
		f->sets[r->m.src_set].refs += (unsigned)delta;
	if (r->m.dst_set != RXP_ACL_NO_SET)
		f->sets[r->m.dst_set].refs += (unsigned)delta;
}

/* Puts @r in @chain before position @at (from 0; n: the end). Returns 0 or -ENOMEM. */
static int rule_insert(struct dp_filter *f, unsigned chain, unsigned at, const struct dp_rule *r)
{
	if (f->n[chain] == f->cap[chain]) {
		unsigned cap = f->cap[chain] ? 2 * f->cap[chain] : 16;
		struct dp_rule *more = realloc(f->rules[chain], cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		f->rules[chain] = more;
		f->cap[chain] = cap;
	}
	memmove(&f->rules[chain][at + 1], &f->rules[chain][at], (f->n[chain] - at) * sizeof(*r));
	f->rules[chain][at] = *r;
	f->n[chain]++;
	set_refs(f, r, 1);
	f->dirty = true;
	return 0;
}

static void rule_remove(struct dp_filter *f, unsigned chain, unsigned at)
{
	set_refs(f, &f->rules[chain][at], -1);
	memmove(&f->rules[chain][at], &f->rules[chain][at + 1], (f->n[chain] - at - 1) * sizeof(struct dp_rule));
	f->n[chain]--;
	f->dirty = true;
}

static int filter_add(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	struct dp_filter *f = dp->filter;
	unsigned chain = c->filter.chain, at;
	struct dp_rule r;
	int ret;

	if (f->n[chain] >= RXP_ACL_RULES_MAX) {
		snprintf(err, errlen, "%s: the %s chain has %u rules, as many as it takes", c->where,
			 chain_names[chain], f->n[chain]);
		return -ENOSPC;
	}
	ret = rule_resolve(dp, c, &r, err, errlen);
	if (ret)
		return ret;
	if (rxp_acl_rule_void(&r.m)) {
		snprintf(err, errlen, "%s: the rule can never match a packet", c->where);
		return -EINVAL;
	}
	r.id = c->undo && c->filter.rule_id ? c->filter.rule_id : f->next_id++;
	at = c->filter.index && c->filter.index <= f->n[chain] ? c->filter.index - 1 : f->n[chain];
	return rule_insert(f, chain, at, &r);
}

static int filter_del(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	struct dp_filter *f = dp->filter;
	unsigned chain = c->filter.chain;

	if (c->filter.index < 1 || c->filter.index > f->n[chain]) {
		snprintf(err, errlen, "%s: the %s chain has no rule %u (it has %u; show filter lists them)",
			 c->where, chain_names[chain], c->filter.index, f->n[chain]);
		return -ENOENT;
	}
	rule_remove(f, chain, c->filter.index - 1);
	return 0;
}

/* Keeps what a flush of @chain (or all) takes, for its take-back. Returns the snapshot's id, or 0. */
static uint32_t snapshot_take(struct dp_filter *f, unsigned chain)
{
	struct dp_filter_snapshot *s = &f->snap[f->next_snap % DP_FILTER_SNAPSHOTS];

	snapshot_free(s);
	s->id = f->next_snap++;
	for (unsigned k = 0; k < DP_CHAINS; k++) {
		if (chain != DP_CHAIN_ALL && chain != k)
			continue;
		if (!f->n[k])
			continue;
		s->rules[k] = malloc(f->n[k] * sizeof(struct dp_rule));
		if (!s->rules[k]) {
			snapshot_free(s);
			return 0;
		}
		memcpy(s->rules[k], f->rules[k], f->n[k] * sizeof(struct dp_rule));
		s->n[k] = f->n[k];
	}
	return s->id;
}

static void chain_flush(struct dp_filter *f, unsigned chain)
{
	for (unsigned k = 0; k < DP_CHAINS; k++) {
		if (chain != DP_CHAIN_ALL && chain != k)
			continue;
		while (f->n[k])
			rule_remove(f, k, f->n[k] - 1);
	}
	f->dirty = true;
}

static int filter_restore(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	struct dp_filter *f = dp->filter;
	struct dp_filter_snapshot *s = &f->snap[c->filter.snapshot % DP_FILTER_SNAPSHOTS];

	if (!c->filter.snapshot || s->id != c->filter.snapshot) {
		snprintf(err, errlen, "%s: the rules that flush took are no longer kept", c->where);
		return -ENOENT;
	}
	chain_flush(f, c->filter.chain);
	for (unsigned k = 0; k < DP_CHAINS; k++)
		for (unsigned i = 0; i < s->n[k]; i++)
			if (rule_insert(f, k, f->n[k], &s->rules[k][i]))
				return -ENOMEM;
	return 0;
}

/* A prefix as a message shows it: "10.0.0.0/8". */
static void prefix_text(const struct dp_set_prefix *p, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(p->family == 4 ? AF_INET : AF_INET6, p->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, p->plen);
}

/* Takes back the first @n prefixes of @c that @done marks (a command that failed half way). */
static void set_undo(struct rxp_pset *ps, const struct dp_cmd *c, unsigned n, uint32_t done)
{
	for (unsigned k = 0; k < n; k++) {
		const struct dp_set_prefix *p = &c->filter.prefixes[k];

		if (!(done >> k & 1))
			continue;
		if (c->kind == DP_CMD_SET_ADD)
			rxp_pset_del(ps, p->family, p->addr, p->plen);
		else
			rxp_pset_add(ps, p->family, p->addr, p->plen);
	}
}

/* A set's prefixes in or out, all of the command's or none. */
static int set_cmd(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	struct dp_filter *f = dp->filter;
	int id = c->kind == DP_CMD_SET_ADD ? set_make(f, c->filter.set) : set_find(f, c->filter.set);
	unsigned n = RXP_MIN((unsigned)c->filter.n_prefixes, DP_SET_PREFIXES_PER_CMD);
	uint32_t done = 0;	/* bit per prefix this command changed */
	struct rxp_pset *ps;
	char text[INET6_ADDRSTRLEN + 8];

	if (id == -ENOSPC) {
		snprintf(err, errlen, "%s: %u sets already, as many as there can be", c->where, RXP_ACL_SETS_MAX);
		return id;
	}
	if (id < 0 && c->kind == DP_CMD_SET_DEL) {
		snprintf(err, errlen, "%s: %s: no such set", c->where, c->filter.set);
		return -ENOENT;
	}
	if (id < 0)
		return id;
	ps = f->sets[id].ps;
	for (unsigned k = 0; k < n; k++) {
		const struct dp_set_prefix *p = &c->filter.prefixes[k];
		int ret = c->kind == DP_CMD_SET_ADD ? rxp_pset_add(ps, p->family, p->addr, p->plen) :
						      rxp_pset_del(ps, p->family, p->addr, p->plen);

		/* as nftables: adding what is there changes nothing; a take-back finds what it finds */
		if ((ret == -EEXIST && c->kind == DP_CMD_SET_ADD) || (ret == -ENOENT && c->undo))
			continue;
		if (ret) {
			set_undo(ps, c, k, done);
			prefix_text(p, text, sizeof(text));
			if (ret == -ENOSPC)
				snprintf(err, errlen, "%s: set %s holds %u IPv%u prefixes, as many as it takes",
					 c->where, c->filter.set, rxp_pset_count(ps, p->family), p->family);
			else if (ret == -ENOENT)
				snprintf(err, errlen, "%s: set %s has no prefix %s", c->where, c->filter.set, text);
			return ret;
		}
		done |= 1u << k;
	}
	if (c->kind == DP_CMD_SET_DEL && done) {
		/* between polls, every worker out of the tables: retired groups are free again */
		rxp_lpm4_reclaim(ps->v4);
		rxp_lpm6_reclaim(ps->v6);
	}
	return 0;
}

int dp_filter_apply(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	struct dp_filter *f = dp->filter;

	switch (c->kind) {
	case DP_CMD_FILTER_ADD:
		return filter_add(dp, c, err, errlen);
	case DP_CMD_FILTER_DEL:
		return filter_del(dp, c, err, errlen);
	case DP_CMD_FILTER_FLUSH:
		chain_flush(f, c->filter.chain);
		return 0;
	case DP_CMD_FILTER_RESTORE:
		return filter_restore(dp, c, err, errlen);
	case DP_CMD_FILTER_POLICY:
		f->policy[c->filter.chain] = c->filter.verdict;
		f->dirty = true;
		return 0;
	case DP_CMD_SET_ADD:
	case DP_CMD_SET_DEL:
		return set_cmd(dp, c, err, errlen);
	case DP_CMD_CT_TIMEOUT:
		f->ct_cfg.timeout[c->filter.timeout] = c->seconds;
		if (f->ct)
			rxp_ct_set_timeout(f->ct, (enum rxp_ct_timeout)c->filter.timeout, c->seconds);
		return 0;
	case DP_CMD_CT_LIBERAL:
		f->ct_cfg.tcp_liberal = c->filter.on;
		if (f->ct)
			rxp_ct_set_liberal(f->ct, c->filter.on);
		return 0;
	case DP_CMD_CT_LOOSE:
		f->ct_cfg.tcp_loose = c->filter.on;
		if (f->ct)
			rxp_ct_set_loose(f->ct, c->filter.on);
		return 0;
	default:
		return -EINVAL;
	}
}

bool dp_filter_inverse(struct dp *dp, const struct dp_cmd *c, struct dp_cmd *inv)
{
	struct dp_filter *f = dp->filter;
	unsigned chain = c->filter.chain;
	int id;

	switch (c->kind) {
	case DP_CMD_FILTER_ADD:
		inv->kind = DP_CMD_FILTER_DEL;
		inv->filter.index = c->filter.index && c->filter.index <= f->n[chain] ? c->filter.index :
										     f->n[chain] + 1;
		return true;
	case DP_CMD_FILTER_DEL:
		if (c->filter.index < 1 || c->filter.index > f->n[chain])
			return false;
		inv->kind = DP_CMD_FILTER_ADD;
		inv->filter = f->rules[chain][c->filter.index - 1].f;
		inv->filter.index = c->filter.index;
		inv->filter.rule_id = f->rules[chain][c->filter.index - 1].id;	/* its counters come back */
		return true;
	case DP_CMD_FILTER_FLUSH:
		inv->kind = DP_CMD_FILTER_RESTORE;
		inv->filter.snapshot = snapshot_take(f, chain);
		return inv->filter.snapshot != 0;
	case DP_CMD_FILTER_RESTORE:
		return false;
	case DP_CMD_FILTER_POLICY:
		inv->filter.verdict = f->policy[chain];
		return true;
	case DP_CMD_SET_ADD:
	case DP_CMD_SET_DEL:
		/* the prefixes it would change: those not there (an add), those there (a del) */
		id = set_find(f, c->filter.set);
		inv->kind = c->kind == DP_CMD_SET_ADD ? DP_CMD_SET_DEL : DP_CMD_SET_ADD;
		inv->filter.n_prefixes = 0;
		for (unsigned k = 0; k < RXP_MIN((unsigned)c->filter.n_prefixes, DP_SET_PREFIXES_PER_CMD); k++) {
			const struct dp_set_prefix *p = &c->filter.prefixes[k];
			bool there = id >= 0 && rxp_pset_has_prefix(f->sets[id].ps, p->family, p->addr, p->plen);

			if (there == (c->kind == DP_CMD_SET_DEL))
				inv->filter.prefixes[inv->filter.n_prefixes++] = *p;
		}
		return inv->filter.n_prefixes > 0;
	case DP_CMD_CT_TIMEOUT:
		inv->seconds = f->ct_cfg.timeout[c->filter.timeout];
		return true;
	case DP_CMD_CT_LIBERAL:
		inv->filter.on = f->ct_cfg.tcp_liberal;
		return true;
	case DP_CMD_CT_LOOSE:
		inv->filter.on = f->ct_cfg.tcp_loose;
		return true;
	default:
		return false;
	}
}

void dp_filter_key(const struct dp_cmd *c, char *key, size_t len)
{
	switch (c->kind) {
	case DP_CMD_FILTER_POLICY:
		snprintf(key, len, "filter policy %s", chain_names[c->filter.chain]);
		return;
	case DP_CMD_SET_ADD:
	case DP_CMD_SET_DEL:
		/* a set's prefixes: reload compares each set's as a whole (reload.c) */
		snprintf(key, len, "set %s", c->filter.set);
		return;
	case DP_CMD_CT_TIMEOUT:
		snprintf(key, len, "conntrack timeout %s", rxp_ct_timeout_name((enum rxp_ct_timeout)c->filter.timeout));
		return;
	case DP_CMD_CT_LIBERAL:
		snprintf(key, len, "conntrack liberal");
		return;
	case DP_CMD_CT_LOOSE:
		snprintf(key, len, "conntrack loose");
		return;
	default:
		/* the rules are an ordered list: reload compares the lists (reload.c), not keys */
		snprintf(key, len, "filter rules");
		return;
	}
}

/* ---- compiling and swapping in ---- */

static bool rule_names_nd(const struct rxp_acl_rule *m)
{
	return m->proto == RXP_IPPROTO_ICMP6 && m->sport_lo == m->sport_hi &&
	       ((m->sport_lo >= 130 && m->sport_lo <= 137) || m->sport_lo == 143);
}

/* Compiles @f's lists into a new block. Returns it, or NULL with @err. */
static struct dp_filter_block *block_build(struct dp *dp, struct dp_filter *f, char *err, size_t errlen)
{
	struct dp_filter_block *b = calloc(1, sizeof(*b));
	struct rxp_acl_rule *m = NULL;
	bool no_nat;

	if (!b)
		goto nomem;
	b->nat = dp_nat_block(dp, &no_nat, err, errlen);
	if (!b->nat && !no_nat)
		goto fail;
	b->f.nat = b->nat;
	b->f.track = b->nat != NULL;	/* NAT lives in the connections' entries */
	for (unsigned c = 0; c < DP_CHAINS; c++) {
		struct rxp_filter_chain *fc = &b->f.chain[c];
		unsigned n = f->n[c];

		fc->policy = f->policy[c] == DP_VERDICT_DROP ? RXP_FILTER_DROP : RXP_FILTER_ACCEPT;
		fc->n_rules = n;
		fc->on = n || fc->policy != RXP_FILTER_ACCEPT;
		if (!n)
			continue;
		b->verdict[c] = malloc(n);
		b->flags[c] = calloc(n, 1);
		b->ids[c] = malloc(n * sizeof(uint64_t));
		m = malloc(n * sizeof(*m));
		if (!b->verdict[c] || !b->flags[c] || !b->ids[c] || !m)
			goto nomem;
		for (unsigned i = 0; i < n; i++) {
			const struct dp_rule *r = &f->rules[c][i];

			m[i] = r->m;
			b->verdict[c][i] = r->f.verdict;
			b->flags[c][i] = (rule_names_nd(&r->m) ? RXP_FILTER_RULE_ND : 0) |
					 (r->m.ct_states != RXP_ACL_CT_ANY ? RXP_FILTER_RULE_STATE : 0);
			b->ids[c][i] = r->id;
			if (r->m.ct_states != RXP_ACL_CT_ANY)
				b->f.track = true;
			if (r->m.src_set != RXP_ACL_NO_SET)
				fc->src_sets |= 1ull << r->m.src_set;
			if (r->m.dst_set != RXP_ACL_NO_SET)
				fc->dst_sets |= 1ull << r->m.dst_set;
		}
		fc->acl = rxp_acl_build(m, n, err, errlen);
		free(m);
		m = NULL;
		if (!fc->acl)
			goto fail;
		fc->verdict = b->verdict[c];
		fc->flags = b->flags[c];
		b->memory += rxp_acl_memory(fc->acl);
	}
	for (unsigned i = 0; i < RXP_ACL_SETS_MAX; i++)
		b->f.sets[i] = f->sets[i].ps;
	return b;
nomem:
	snprintf(err, errlen, "out of memory compiling the filter's rules");
fail:
	free(m);
	block_free(b);
	return NULL;
}

struct id_at {
	uint64_t id;
	uint32_t at;
};

static int id_cmp(const void *a, const void *b)
{
	const struct id_at *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/*
 * Worker @st's counters for the new block @b: each rule's from the old
 * block (ids @old_ids, @old_n rules), by id; the policy's carried over.
 * Returns 0 or -ENOMEM (then nothing changed).
 */
static int counts_carry(struct rxp_stack *st, const struct dp_filter_block *b,
			const struct dp_filter_block *old, struct rxp_rule_count *fresh[DP_CHAINS])
{
	for (unsigned c = 0; c < DP_CHAINS; c++) {
		unsigned n = b->f.chain[c].n_rules, old_n = old ? old->f.chain[c].n_rules : 0;
		struct id_at *map = NULL;

		fresh[c] = calloc(n + 1, sizeof(**fresh));
		if (!fresh[c] || (old_n && !(map = malloc(old_n * sizeof(*map))))) {
			free(map);
			for (unsigned k = 0; k <= c; k++)
				free(fresh[k]);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < old_n; i++)
			map[i] = (struct id_at){ old->ids[c][i], i };
		if (old_n)
			qsort(map, old_n, sizeof(*map), id_cmp);
		for (unsigned i = 0; i < n && st->rule_count[c]; i++) {
			struct id_at key = { b->ids[c][i], 0 }, *hit;

			hit = old_n ? bsearch(&key, map, old_n, sizeof(*map), id_cmp) : NULL;
			if (hit && hit->at < st->rule_count_n[c])
				fresh[c][i] = st->rule_count[c][hit->at];
		}
		/* the policy's counter is the chain's, whatever its rules */
		if (st->rule_count[c] && st->rule_count_n[c])
			fresh[c][n] = st->rule_count[c][st->rule_count_n[c] - 1];
		free(map);
	}
	return 0;
}

int dp_filter_commit(struct dp *dp, char *err, size_t errlen)
{
	struct dp_filter *f = dp->filter;
	struct rxp_rule_count *fresh[DP_WORKERS_MAX][DP_CHAINS];
	struct dp_filter_block *b, *old;
	double t0;

	if (!f || !f->dirty)
		return 0;
	t0 = now_ms();
	b = block_build(dp, f, err, errlen);
	if (!b)
		return -ENOMEM;
	if (b->f.track && !f->ct) {
		f->ct = rxp_ct_create(&f->ct_cfg, dp->n_workers);
		if (!f->ct) {
			snprintf(err, errlen, "cannot make the connection table (%u entries): %s; lower conntrack max",
				 f->ct_cfg.max, strerror(errno));
			block_free(b);
			return -ENOMEM;
		}
		dp_nat_attach(dp, f->ct);
	}
	for (unsigned w = 0; w < dp->n_workers; w++) {
		struct rxp_stack *st = dp_stack(dp, w);

		if (!st->frags && !(st->frags = calloc(1, sizeof(*st->frags)))) {
			block_free(b);
			snprintf(err, errlen, "out of memory for the filter's fragments");
			return -ENOMEM;
		}
	}
	old = f->block;
	for (unsigned w = 0; w < dp->n_workers; w++) {
		if (counts_carry(dp_stack(dp, w), b, old, fresh[w])) {
			for (unsigned k = 0; k < w; k++)
				for (unsigned c = 0; c < DP_CHAINS; c++)
					free(fresh[k][c]);
			block_free(b);
			snprintf(err, errlen, "out of memory for the rules' counters");
			return -ENOMEM;
		}
	}
	/* every worker waits between polls (or this is the open): one swap each, no half of it seen */
	for (unsigned w = 0; w < dp->n_workers; w++) {
		struct rxp_stack *st = dp_stack(dp, w);
		bool any = false;

		for (unsigned c = 0; c < DP_CHAINS; c++) {
			free(st->rule_count[c]);
			st->rule_count[c] = fresh[w][c];
			st->rule_count_n[c] = b->f.chain[c].n_rules + 1;
			any |= b->f.chain[c].on;
		}
		st->ct = f->ct;
		st->worker = w;
		st->filter = any || b->f.track ? &b->f : NULL;
	}
	f->block = b;
	block_free(old);
	dp_nat_swapped(&f->nat);
	f->dirty = false;
	f->build_ms = now_ms() - t0;
	return 0;
}

void dp_filter_publish(struct dp *dp)
{
	char err[256];

	if (dp_filter_commit(dp, err, sizeof(err))) {
		dp_log(dp, "filter: the rules changed but %s; the ones before stay in force", err);
		dp->filter->dirty = false;	/* told once; the next change tries again */
	}
}

void dp_filter_counts(struct dp *dp, unsigned chain, unsigned i, uint64_t *packets, uint64_t *bytes)
{
	*packets = *bytes = 0;
	for (unsigned w = 0; w < dp->n_workers; w++) {
		const struct rxp_stack *st = dp_stack(dp, w);

		if (chain < DP_CHAINS && i < st->rule_count_n[chain]) {
			*packets += st->rule_count[chain][i].packets;
			*bytes += st->rule_count[chain][i].bytes;
		}
	}
}
