/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "ctl_server_priv.h"
#include "engine/control.h"
#include "reload.h"
#include "net/conntrack.h"

/* One entry of a config's end state: the last command about one thing. */
struct state_entry {
	char key[80];		/* what the command is about: "route 4 0a090000/16" */
	unsigned order;		/* position in the config: the later wins */
	const struct dp_cmd *cmd;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct state_entry *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

static bool is_del(const struct dp_cmd *c)
{
	return c->kind == DP_CMD_ADDR_DEL || c->kind == DP_CMD_ROUTE_DEL ||
	       c->kind == DP_CMD_NEIGH_DEL;
}

/* A set's prefixes: compared set by set as a whole (set_diff), not by key. */
static bool is_set_cmd(const struct dp_cmd *c)
{
	return c->kind == DP_CMD_SET_ADD || c->kind == DP_CMD_SET_DEL;
}

/* The filter's and NAT's rules: ordered lists, compared as a whole (rule_diff), not by key. */
static bool is_rule_cmd(const struct dp_cmd *c)
{
	return c->kind == DP_CMD_FILTER_ADD || c->kind == DP_CMD_FILTER_DEL ||
	       c->kind == DP_CMD_FILTER_FLUSH || c->kind == DP_CMD_FILTER_RESTORE ||
	       c->kind == DP_CMD_NAT_ADD || c->kind == DP_CMD_NAT_DEL || c->kind == DP_CMD_NAT_FLUSH ||
	       c->kind == DP_CMD_NAT_RESTORE;
}

#define NAT_LIST DP_CHAINS	/* the lists: each chain's, then NAT's */
#define LISTS (DP_CHAINS + 1)

/* Each list's rules at the end of @cfg: the adds, in order, that no del or flush took back. */
struct rule_lists {
	const struct dp_cmd **rules[LISTS];
	unsigned n[LISTS];
};

/* The position of the NAT rule whose text is @text in @l, or -1. */
static int nat_at(const struct rule_lists *l, const char *text)
{
	for (unsigned i = 0; i < l->n[NAT_LIST]; i++)
		if (!strcmp(l->rules[NAT_LIST][i]->nat.text, text))
			return (int)i;
	return -1;
}

/* A NAT command's change to its list (rule_lists_of). */
static void nat_list_apply(struct rule_lists *l, const struct dp_cmd *c)
{
	const struct dp_cmd **r = l->rules[NAT_LIST];
	unsigned *n = &l->n[NAT_LIST];
	int at;

	if (c->kind == DP_CMD_NAT_ADD) {
		at = c->nat.index && c->nat.index <= *n ? (int)c->nat.index - 1 : (int)*n;
		memmove(&r[at + 1], &r[at], (*n - (unsigned)at) * sizeof(*r));
		r[at] = c;
		(*n)++;
	} else if (c->kind == DP_CMD_NAT_DEL) {
		at = c->nat.index ? (int)c->nat.index - 1 : nat_at(l, c->nat.text);
		if (at < 0 || at >= (int)*n)
			return;
		memmove(&r[at], &r[at + 1], (*n - (unsigned)at - 1) * sizeof(*r));
		(*n)--;
	} else if (c->kind == DP_CMD_NAT_FLUSH) {
		*n = 0;
	}
}

static int rule_lists_of(const struct dp_config *cfg, struct rule_lists *l)
{
	memset(l, 0, sizeof(*l));
	for (unsigned k = 0; k < LISTS; k++) {
		l->rules[k] = calloc(cfg->n_cmds + 1, sizeof(*l->rules[k]));
		if (!l->rules[k])
			return -ENOMEM;
	}
	for (unsigned i = 0; i < cfg->n_cmds; i++) {
		const struct dp_cmd *c = &cfg->cmds[i];
		unsigned ch = c->filter.chain;

		if (c->kind >= DP_CMD_NAT_ADD && c->kind <= DP_CMD_NAT_RESTORE) {
			nat_list_apply(l, c);
		} else if (c->kind == DP_CMD_FILTER_ADD) {
			unsigned at = c->filter.index && c->filter.index <= l->n[ch] ? c->filter.index - 1 : l->n[ch];

			memmove(&l->rules[ch][at + 1], &l->rules[ch][at], (l->n[ch] - at) * sizeof(*l->rules[ch]));
			l->rules[ch][at] = c;
			l->n[ch]++;
		} else if (c->kind == DP_CMD_FILTER_DEL && c->filter.index >= 1 && c->filter.index <= l->n[ch]) {
			unsigned at = c->filter.index - 1;

			memmove(&l->rules[ch][at], &l->rules[ch][at + 1], (l->n[ch] - at - 1) * sizeof(*l->rules[ch]));
			l->n[ch]--;
		} else if (c->kind == DP_CMD_FILTER_FLUSH) {
			for (unsigned k = 0; k < DP_CHAINS; k++)
				if (ch == DP_CHAIN_ALL || ch == k)
					l->n[k] = 0;
		}
	}
	return 0;
}

static void rule_lists_free(struct rule_lists *l)
{
	for (unsigned k = 0; k < LISTS; k++)
		free(l->rules[k]);
}

static bool same_rule(const struct dp_cmd *a, const struct dp_cmd *b)
{
	if (a->kind == DP_CMD_NAT_ADD)
		return !strcmp(a->nat.text, b->nat.text);
	return a->filter.verdict == b->filter.verdict && !strcmp(a->filter.text, b->filter.text);
}

/*
 * Appends to @adds, for each chain whose rules differ between @old and
 * @new, a flush of it and the new file's rules in order. Returns the count
 * appended, or -ENOMEM.
 */
static long rule_diff(const struct dp_config *old, const struct dp_config *new, struct dp_cmd *adds)
{
	struct rule_lists a, b;
	long n = 0;

	if (rule_lists_of(old, &a) || rule_lists_of(new, &b)) {
		rule_lists_free(&a);
		rule_lists_free(&b);
		return -ENOMEM;
	}
	for (unsigned k = 0; k < LISTS; k++) {
		bool same = a.n[k] == b.n[k];

		for (unsigned i = 0; same && i < a.n[k]; i++)
			same = same_rule(a.rules[k][i], b.rules[k][i]);
		if (same)
			continue;
		if (k == NAT_LIST)
			adds[n] = (struct dp_cmd){ .kind = DP_CMD_NAT_FLUSH };
		else
			adds[n] = (struct dp_cmd){ .kind = DP_CMD_FILTER_FLUSH, .filter.chain = (uint8_t)k };
		snprintf(adds[n++].where, sizeof(adds[0].where), "reload (the %s rules)",
			 k == 0 ? "input chain's" : k == 1 ? "forward chain's" : k == 2 ? "output chain's" : "NAT");
		for (unsigned i = 0; i < b.n[k]; i++) {
			adds[n] = *b.rules[k][i];
			adds[n].filter.index = 0;
			adds[n++].nat.index = 0;
		}
	}
	rule_lists_free(&a);
	rule_lists_free(&b);
	return n;
}

/* Builds the end state of @cfg: one entry per thing, sorted by key. Returns the count or -ENOMEM. */
static long end_state(const struct dp_config *cfg, struct state_entry **out)
{
	struct state_entry *e = calloc(cfg->n_cmds + 1, sizeof(*e));
	unsigned n = 0;

	if (!e)
		return -ENOMEM;
	for (unsigned i = 0; i < cfg->n_cmds; i++) {
		dp_cmd_key(&cfg->cmds[i], e[i].key, sizeof(e[i].key));
		e[i].order = i;
		e[i].cmd = &cfg->cmds[i];
	}
	qsort(e, cfg->n_cmds, sizeof(*e), entry_cmp);
	for (unsigned i = 0; i < cfg->n_cmds; i++) {
		if (i + 1 < cfg->n_cmds && !strcmp(e[i].key, e[i + 1].key))
			continue;	/* a later command about the same thing wins */
		if (!is_del(e[i].cmd) && !is_rule_cmd(e[i].cmd) && !is_set_cmd(e[i].cmd))
			e[n++] = e[i];
	}
	*out = e;
	return n;
}

/* Do two route adds name the same next hops (a multipath route's), in the same order? */
static bool same_paths(const struct dp_cmd *a, const struct dp_cmd *b)
{
	const struct dp_route_paths *x = &a->paths, *y = &b->paths;

	if (a->kind != DP_CMD_ROUTE_ADD || b->kind != DP_CMD_ROUTE_ADD)
		return true;
	if (x->n != y->n)
		return false;
	for (unsigned i = 0; i < x->n; i++) {
		const struct dp_path *p = &x->path[i], *q = &y->path[i];

		if (p->has_gw != q->has_gw || memcmp(p->gw, q->gw, 16) || p->weight != q->weight ||
		    !p->dev != !q->dev || (p->dev && strcmp(x->devs[p->dev - 1], y->devs[q->dev - 1])))
			return false;
	}
	return true;
}

/* Returns true when two commands leave the same state (their source lines aside). */
static bool same_effect(const struct dp_cmd *a, const struct dp_cmd *b)
{
	if (a->kind == DP_CMD_ROUTE_ADD && b->kind == DP_CMD_ROUTE_ADD && !same_paths(a, b))
		return false;
	return a->kind == b->kind && !strcmp(a->dev, b->dev) && a->family == b->family &&
	       !strcmp(a->vrf, b->vrf) && !strcmp(a->nh_vrf, b->nh_vrf) && a->table == b->table &&
	       a->plen == b->plen && a->has_gw == b->has_gw && !memcmp(a->addr, b->addr, 16) &&
	       !memcmp(a->gw, b->gw, 16) && !memcmp(a->mac, b->mac, 6) && a->mtu == b->mtu &&
	       a->rate == b->rate && a->burst == b->burst && a->host_on == b->host_on &&
	       a->host_gro == b->host_gro && !strcmp(a->host_name, b->host_name) &&
	       a->redirects == b->redirects && a->seconds == b->seconds && a->ra_on == b->ra_on &&
	       a->source_route == b->source_route && a->route_type == b->route_type &&
	       a->seconds == b->seconds && a->filter.verdict == b->filter.verdict &&
	       a->filter.on == b->filter.on && a->nat.kind == b->nat.kind;
}

/* The undo of an add: the matching del. */
static struct dp_cmd undo(const struct dp_cmd *c)
{
	struct dp_cmd d = *c;

	d.kind = c->kind == DP_CMD_ADDR_ADD ? DP_CMD_ADDR_DEL :
		 c->kind == DP_CMD_ROUTE_ADD ? DP_CMD_ROUTE_DEL : DP_CMD_NEIGH_DEL;
	if (d.kind == DP_CMD_ROUTE_DEL)
		d.dev[0] = '\0';
	d.undo = true;
	snprintf(d.where, sizeof(d.where), "reload (was %.80s)", c->where);
	return d;
}

/* The VRF port @dev is in at the end of a config's state @e (@n entries): "" for the default. */
static const char *port_vrf_of(const struct state_entry *e, long n, const char *dev)
{
	for (long i = 0; i < n; i++)
		if (e[i].cmd->kind == DP_CMD_PORT_VRF && !strcmp(e[i].cmd->dev, dev))
			return e[i].cmd->vrf;
	return "";
}

/* A VRF gone from the file: deleted, once its ports are back in the default table (add_rank). */
static struct dp_cmd vrf_undo(const struct dp_cmd *c)
{
	struct dp_cmd d = *c;

	d.kind = DP_CMD_VRF_DEL;
	d.undo = true;
	snprintf(d.where, sizeof(d.where), "reload (was %.80s)", c->where);
	return d;
}

/*
 * A setting gone from the file (an MTU, the ICMP rate limit, a host path,
 * redirects, advertisements, ageing, source routes): its default again.
 */
static struct dp_cmd setting_default(const struct dp_cmd *c)
{
	struct dp_cmd d = *c;

	d.mtu = 0;		/* the port's default, which only the datapath knows */
	d.rate = RXP_ICMP_RATE_DEFAULT;
	d.burst = RXP_ICMP_BURST_DEFAULT;
	d.host_on = false;
	d.redirects = true;
	d.ra_on = false;
	d.source_route = true;
	d.seconds = c->kind == DP_CMD_CT_TIMEOUT ?
		    rxp_ct_timeout_default((enum rxp_ct_timeout)c->filter.timeout) :
		    c->kind == DP_CMD_NAT_TIMEOUT ? rxp_ct_nat_timeout_default((enum rxp_ct_nat_timeout)c->nat.timeout) :
		    (uint32_t)(RXP_NEIGH_REACHABLE_NS / 1000000000ull);
	d.nat.kind = 0;		/* nat filtering: address-and-port-dependent */
	d.filter.verdict = DP_VERDICT_ACCEPT;	/* a chain's policy */
	d.filter.on = c->kind == DP_CMD_CT_LOOSE;	/* tcp loose is on, liberal off */
	if (c->kind == DP_CMD_PORT_VRF)
		d.vrf[0] = '\0';	/* a port's table: the default one */
	snprintf(d.where, sizeof(d.where), "reload (was %.80s)", c->where);
	return d;
}

/* Apply order: routes go before the addresses their gateways need, and come after them. */
static int del_rank(const struct dp_cmd *c)
{
	return c->kind == DP_CMD_ROUTE_DEL ? 0 : c->kind == DP_CMD_NEIGH_DEL ? 1 :
	       c->kind == DP_CMD_SET_DEL ? 3 : 2;
}

/*
 * ... and last what cannot be taken back without a trace should a later
 * command fail (a host path's TAP made or removed, a last advertisement sent).
 */
static int add_rank(const struct dp_cmd *c)
{
	/* a VRF before the ports moved into it, and they before their addresses; a VRF gone last */
	if (c->kind == DP_CMD_VRF_ADD || c->kind == DP_CMD_PORT_VRF)
		return c->kind == DP_CMD_VRF_ADD ? -2 : -1;
	if (c->kind == DP_CMD_VRF_DEL)
		return 8;
	/* sets before the rules that name them; the rules last but for host paths and adverts */
	return c->kind == DP_CMD_MTU ? 0 : c->kind == DP_CMD_ADDR_ADD ? 1 :
	       c->kind == DP_CMD_NEIGH_ADD ? 2 : c->kind == DP_CMD_ROUTE_ADD ? 3 :
	       c->kind == DP_CMD_SET_ADD ? 4 : is_rule_cmd(c) ? 6 :
	       c->kind == DP_CMD_HOST || c->kind == DP_CMD_RA ? 7 : 5;
}

/* One prefix a set command names, in the order the config says it; family 0: the set made. */
struct set_op {
	const char *set;
	struct dp_set_prefix p;
	unsigned seq;
	bool add;
};

static int set_op_cmp(const void *x, const void *y)
{
	const struct set_op *a = x, *b = y;
	int c = strcmp(a->set, b->set);

	if (!c)
		c = (a->p.family > b->p.family) - (a->p.family < b->p.family);
	if (!c)
		c = (a->p.plen > b->p.plen) - (a->p.plen < b->p.plen);
	if (!c)
		c = memcmp(a->p.addr, b->p.addr, 16);
	return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

static bool same_prefix(const struct set_op *a, const struct set_op *b)
{
	return !strcmp(a->set, b->set) && a->p.family == b->p.family && a->p.plen == b->p.plen &&
	       !memcmp(a->p.addr, b->p.addr, 16);
}

/*
 * What @cfg's set commands leave: each set's prefixes (and a mark, family
 * 0, for each set made), sorted; the last command about a prefix decides.
 * Returns the count, or -ENOMEM.
 */
static long set_state(const struct dp_config *cfg, struct set_op **out)
{
	size_t n = 0, k = 0;
	struct set_op *v;

	for (unsigned i = 0; i < cfg->n_cmds; i++)
		if (is_set_cmd(&cfg->cmds[i]))
			n += cfg->cmds[i].filter.n_prefixes + 1u;
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (unsigned i = 0; i < cfg->n_cmds; i++) {
		const struct dp_cmd *c = &cfg->cmds[i];

		if (!is_set_cmd(c))
			continue;
		if (c->kind == DP_CMD_SET_ADD) {
			v[k] = (struct set_op){ .set = c->filter.set, .seq = (unsigned)k, .add = true };
			k++;
		}
		for (unsigned j = 0; j < c->filter.n_prefixes && j < DP_SET_PREFIXES_PER_CMD; j++) {
			v[k] = (struct set_op){ .set = c->filter.set, .p = c->filter.prefixes[j],
						.seq = (unsigned)k, .add = c->kind == DP_CMD_SET_ADD };
			k++;
		}
	}
	if (k)
		qsort(v, k, sizeof(*v), set_op_cmp);
	n = 0;
	for (size_t i = 0; i < k; i++)
		if ((i + 1 == k || !same_prefix(&v[i], &v[i + 1])) && v[i].add)
			v[n++] = v[i];
	*out = v;
	return (long)n;
}

/* Appends @op's prefix to the commands of @kind being made in @cmds (a new one when the last is full or of another set). */
static void set_emit(struct dp_cmd *cmds, long *n, enum dp_cmd_kind kind, const struct set_op *op)
{
	struct dp_cmd *c = *n ? &cmds[*n - 1] : NULL;

	if (!c || c->kind != kind || strcmp(c->filter.set, op->set) ||
	    c->filter.n_prefixes == DP_SET_PREFIXES_PER_CMD || !op->p.family) {
		c = &cmds[(*n)++];
		*c = (struct dp_cmd){ .kind = kind, .undo = kind == DP_CMD_SET_DEL };
		snprintf(c->filter.set, sizeof(c->filter.set), "%s", op->set);
		snprintf(c->where, sizeof(c->where), "reload (set %s)", op->set);
	}
	if (op->p.family)
		c->filter.prefixes[c->filter.n_prefixes++] = op->p;
}

/*
 * The set commands that take @old's sets to @new's: the prefixes new in
 * the file added, the ones gone taken out (a set itself stays, and so do
 * the rules that name it). Fills *@adds and *@dels (freed by the caller).
 * Returns 0 or -ENOMEM.
 */
static int set_diff(const struct dp_config *old, const struct dp_config *new, struct dp_cmd **adds,
		    long *n_adds, struct dp_cmd **dels, long *n_dels)
{
	struct set_op *a = NULL, *b = NULL;
	long na = set_state(old, &a), nb = set_state(new, &b);
	int ret = -ENOMEM;

	*n_adds = *n_dels = 0;
	*adds = calloc((size_t)(nb > 0 ? nb : 0) + 1, sizeof(**adds));
	*dels = calloc((size_t)(na > 0 ? na : 0) + 1, sizeof(**dels));
	if (na < 0 || nb < 0 || !*adds || !*dels)
		goto out;
	for (long i = 0, j = 0; i < na || j < nb;) {
		int c = i == na ? 1 : j == nb ? -1 : 0;

		if (!c) {
			struct set_op x = a[i], y = b[j];

			x.seq = y.seq = 0;
			c = set_op_cmp(&x, &y);
		}
		if (c < 0) {
			if (a[i].p.family)
				set_emit(*dels, n_dels, DP_CMD_SET_DEL, &a[i]);
			i++;
		} else if (c > 0) {
			set_emit(*adds, n_adds, DP_CMD_SET_ADD, &b[j++]);
		} else {
			i++, j++;
		}
	}
	ret = 0;
out:
	free(a);
	free(b);
	return ret;
}

long reload_diff(const struct dp_config *old, const struct dp_config *new, struct dp_cmd **out)
{
	struct state_entry *a = NULL, *b = NULL;
	struct dp_cmd *dels = NULL, *adds = NULL, *set_adds = NULL, *set_dels = NULL;
	long na, nb, n_dels = 0, n_adds = 0, n = -ENOMEM, n_set_adds = 0, n_set_dels = 0;

	if (set_diff(old, new, &set_adds, &n_set_adds, &set_dels, &n_set_dels))
		goto out;
	na = end_state(old, &a);
	nb = end_state(new, &b);
	dels = calloc((size_t)(na > 0 ? na : 0) + (size_t)n_set_dels + 1, sizeof(*dels));
	/* room for the new state, a default restored per old setting, and the rules (a flush per chain) */
	adds = calloc((size_t)(na > 0 ? na : 0) + (size_t)(nb > 0 ? nb : 0) + new->n_cmds + LISTS +
		      (size_t)n_set_adds + 1, sizeof(*adds));
	if (na < 0 || nb < 0 || !dels || !adds)
		goto out;
	for (long i = 0, j = 0; i < na || j < nb;) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(a[i].key, b[j].key);

		if (c < 0) {		/* gone from the file */
			if (a[i].cmd->kind == DP_CMD_ADDR_ADD || a[i].cmd->kind == DP_CMD_ROUTE_ADD ||
			    a[i].cmd->kind == DP_CMD_NEIGH_ADD)
				dels[n_dels++] = undo(a[i].cmd);
			else if (a[i].cmd->kind == DP_CMD_VRF_ADD)
				adds[n_adds++] = vrf_undo(a[i].cmd);	/* after its ports left it */
			else	/* a setting: back to its default */
				adds[n_adds++] = setting_default(a[i].cmd);
			i++;
		} else if (c > 0) {	/* new in the file */
			adds[n_adds++] = *b[j++].cmd;
		} else {		/* in both: changed? */
			const struct dp_cmd *now = b[j].cmd;

			/* an address of a port that moves to another table goes and comes back there */
			if (now->kind == DP_CMD_ADDR_ADD && same_effect(a[i].cmd, now) &&
			    strcmp(port_vrf_of(a, na, now->dev), port_vrf_of(b, nb, now->dev))) {
				dels[n_dels++] = undo(a[i].cmd);
				adds[n_adds++] = *now;
			} else if (!same_effect(a[i].cmd, b[j].cmd)) {
				/* an address with a new length goes away first; the rest replace */
				if (b[j].cmd->kind == DP_CMD_ADDR_ADD)
					dels[n_dels++] = undo(a[i].cmd);
				adds[n_adds++] = *b[j].cmd;
			}
			i++, j++;
		}
	}
	{
		long n_rules = rule_diff(old, new, adds + n_adds);

		if (n_rules < 0)
			goto out;
		n_adds += n_rules;
	}
	memcpy(adds + n_adds, set_adds, (size_t)n_set_adds * sizeof(*adds));
	n_adds += n_set_adds;
	memcpy(dels + n_dels, set_dels, (size_t)n_set_dels * sizeof(*dels));
	n_dels += n_set_dels;
	*out = calloc((size_t)(n_dels + n_adds) + 1, sizeof(**out));
	if (!*out)
		goto out;
	n = 0;
	for (int rank = 0; rank <= 3; rank++)
		for (long i = 0; i < n_dels; i++)
			if (del_rank(&dels[i]) == rank)
				(*out)[n++] = dels[i];
	for (int rank = -2; rank <= 8; rank++)
		for (long i = 0; i < n_adds; i++)
			if (add_rank(&adds[i]) == rank)
				(*out)[n++] = adds[i];
out:
	free(a);
	free(b);
	free(dels);
	free(adds);
	free(set_adds);
	free(set_dels);
	return n;
}

bool reload_same_ports(const struct dp_config *a, const struct dp_config *b)
{
	if (a->n_ports != b->n_ports || a->n_vlans != b->n_vlans)
		return false;
	for (unsigned i = 0; i < a->n_ports; i++)
		if (strcmp(a->ports[i].name, b->ports[i].name) || strcmp(a->ports[i].spec, b->ports[i].spec))
			return false;
	for (unsigned i = 0; i < a->n_vlans; i++)
		if (strcmp(a->vlans[i].name, b->vlans[i].name) ||
		    strcmp(a->vlans[i].parent, b->vlans[i].parent) || a->vlans[i].id != b->vlans[i].id)
			return false;
	return true;
}

/* ---- applying a reload (the control thread, on SIGHUP) ---- */

/*
 * Applies @diff all or nothing: at the first command that fails, the ones
 * before it are taken back in the same datapath call, so no packet sees
 * half of it. Returns true when all took; else says on stderr what failed.
 */
static bool reload_apply(struct ctl_server *s, const struct dp_cmd *diff, unsigned n,
			 unsigned *applied, struct dp_batch *undo)
{
	struct rxp_sbuf errors = { 0 }, out = { 0 };
	struct dp_batch w = { .cmds = diff, .n_cmds = n, .all_or_nothing = true,
				.want_undo = undo != NULL, .errors = &errors };
	int ret = n ? control_call(s->cfg.ctl, dp_batch_apply, &w, &out) : 0;

	*applied = w.applied;
	if (undo) {
		undo->cmds = w.undo;
		undo->n_cmds = w.n_undo;
	}
	if (ret && ret != -ESHUTDOWN) {
		fprintf(stderr, "rxpath: reload: failed: %s", errors.data ? errors.data : "(no reason given)\n");
		if (w.undo_failed)
			fprintf(stderr, "rxpath: reload: %u of the %u change%s made before could not be taken back (above)\n",
				w.undo_failed, w.applied, w.applied == 1 ? "" : "s");
		else
			fprintf(stderr, "rxpath: reload: nothing changed\n");
	}
	rxp_sbuf_free(&errors);
	rxp_sbuf_free(&out);
	return !ret;
}

/*
 * After the file's changes went in and its `sync kernel` could not start:
 * takes the changes back with @undo (what reload_apply() handed back: each
 * thing put back as it ran, ctl's changes included), so the reload changes
 * nothing, as one that does not parse. The start stopped any sync there
 * was; it is started again.
 */
static void reload_take_back(struct ctl_server *s, const struct dp_batch *undo)
{
	const struct dp_config *a = s->cfg.active;
	struct rxp_sbuf errors = { 0 }, out = { 0 };
	struct dp_batch w = { .cmds = undo->cmds, .n_cmds = undo->n_cmds, .keep_going = true,
				.errors = &errors };
	char err[512];
	bool whole = true;

	if (w.n_cmds && control_call(s->cfg.ctl, dp_batch_apply, &w, &out)) {
		fprintf(stderr, "rxpath: reload: %u of the file's %u change%s could not be taken back: %s",
			w.failed, w.n_cmds, w.n_cmds == 1 ? "" : "s",
			errors.data ? errors.data : "(no reason given)\n");
		whole = false;
	}
	rxp_sbuf_free(&errors);
	rxp_sbuf_free(&out);
	if (a->sync.on) {
		int ret = ctl_sync_start(s, a->sync.table, a->sync.interval_ms, err, sizeof(err));

		if (ret < 0) {
			fprintf(stderr, "rxpath: reload: the kernel sync that ran before did not restart: %s\n", err);
			s->cfg.active->sync.on = false;	/* the next reload tries again */
			return;
		}
	}
	if (whole)
		fprintf(stderr, "rxpath: reload: taken back; nothing changed\n");
}

void ctl_reload(struct ctl_server *s)
{
	struct dp_config fresh;
	struct dp_cmd *diff = NULL;
	char err[512], where[32];
	unsigned n_exec = 0, applied;
	struct dp_batch undo = { 0 };
	bool sync_changes;
	long n;

	dp_config_default(&fresh);
	for (unsigned i = 0; i < s->cfg.n_sources; i++) {
		const struct config_source *src = &s->cfg.sources[i];
		int ret;

		if (src->is_file) {
			ret = config_apply_file(&fresh, src->text, err, sizeof(err));
		} else {
			snprintf(where, sizeof(where), "-e %u", ++n_exec);
			ret = config_apply_line(&fresh, src->text, where, err, sizeof(err));
		}
		if (ret) {
			fprintf(stderr, "rxpath: reload: %s; nothing changed\n", err);
			goto out;
		}
	}
	if (!reload_same_ports(s->cfg.active, &fresh))
		fprintf(stderr, "rxpath: reload: ports differ from the running ones; port changes need a restart, the rest is applied\n");
	if (fresh.ct_max != s->cfg.active->ct_max)
		fprintf(stderr, "rxpath: reload: conntrack max sizes the connection table at start: the new size needs a restart, the rest is applied\n");
	n = reload_diff(s->cfg.active, &fresh, &diff);
	if (n < 0) {
		fprintf(stderr, "rxpath: reload: out of memory; nothing changed\n");
		goto out;
	}
	/* `sync kernel` added, removed or changed in the file */
	sync_changes = fresh.sync.on != s->cfg.active->sync.on ||
		       (fresh.sync.on && (fresh.sync.table != s->cfg.active->sync.table ||
					  fresh.sync.interval_ms != s->cfg.active->sync.interval_ms));
	if (sync_changes && fresh.sync.on && !ctl_sync_has_ports(s)) {
		ctl_sync_no_ports(err, sizeof(err));
		fprintf(stderr, "rxpath: reload: %s: %s; nothing changed\n", fresh.sync.where, err);
		goto out;
	}
	/* a file that cannot be applied whole changes nothing, as one that does not parse */
	if (!reload_apply(s, diff, (unsigned)n, &applied, sync_changes && fresh.sync.on ? &undo : NULL))
		goto out;
	ctl_sync_after_changes(s, diff, (unsigned)n, NULL);
	fprintf(stderr, "rxpath: reload: %u change%s applied\n", applied, applied == 1 ? "" : "s");
	if (sync_changes) {
		int ret = 0;

		if (!fresh.sync.on)
			ctl_sync_stop(s);
		else
			ret = ctl_sync_start(s, fresh.sync.table, fresh.sync.interval_ms, err, sizeof(err));
		if (!fresh.sync.on)
			fprintf(stderr, "rxpath: reload: kernel sync stopped; its routes withdrawn\n");
		else if (ret < 0)
			fprintf(stderr, "rxpath: reload: %s: %s\n", fresh.sync.where, err);
		else
			fprintf(stderr, "rxpath: reload: mirroring kernel table %u: %d change%s applied\n",
				fresh.sync.table, ret, ret == 1 ? "" : "s");
		if (ret < 0) {
			reload_take_back(s, &undo);
			goto out;
		}
		s->cfg.active->sync = fresh.sync;
	}
	fflush(stderr);
	/* the file is now what later reloads compare with */
	dp_config_free(s->cfg.active);
	s->cfg.active->cmds = fresh.cmds;
	s->cfg.active->n_cmds = fresh.n_cmds;
	s->cfg.active->cmds_cap = fresh.cmds_cap;
	fresh.cmds = NULL;
out:
	fflush(stderr);
	free((void *)undo.cmds);
	free(diff);
	dp_config_free(&fresh);
}
