/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reload.h"

/* One entry of a config's end state: the last command about one thing. */
struct state_entry {
	char key[80];		/* what the command is about: "route 4 0a090000/16" */
	unsigned order;		/* position in the config: the later wins */
	const struct dp_cmd *cmd;
};

/* Writes what @c is about. Commands about the same thing share a key. */
static void cmd_key(const struct dp_cmd *c, char *key, size_t len)
{
	char hex[33];

	for (unsigned i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", c->addr[i]);
	switch (c->kind) {
	case DP_CMD_ADDR_ADD:
	case DP_CMD_ADDR_DEL:
		snprintf(key, len, "addr %s %s", c->dev, hex);
		break;
	case DP_CMD_ROUTE_ADD:
	case DP_CMD_ROUTE_DEL:
		snprintf(key, len, "route %u %s/%u", c->family, hex, c->plen);
		break;
	case DP_CMD_NEIGH_ADD:
	case DP_CMD_NEIGH_DEL:
		snprintf(key, len, "neigh %s %s", c->dev, hex);
		break;
	case DP_CMD_MTU:
		snprintf(key, len, "mtu %s", c->dev);
		break;
	case DP_CMD_ICMP_RATE:
		snprintf(key, len, "icmp");
		break;
	case DP_CMD_HOST:
		snprintf(key, len, "host %s", c->dev);
		break;
	case DP_CMD_REDIRECTS:
		snprintf(key, len, "redirects %s", c->dev);
		break;
	case DP_CMD_NEIGH_AGEING:
		snprintf(key, len, "neigh ageing");
		break;
	case DP_CMD_RA:
		snprintf(key, len, "ra %s", c->dev);
		break;
	case DP_CMD_SOURCE_ROUTE:
		snprintf(key, len, "source-route");
		break;
	}
}

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

/* Builds the end state of @cfg: one entry per thing, sorted by key. Returns the count or -ENOMEM. */
static long end_state(const struct dp_config *cfg, struct state_entry **out)
{
	struct state_entry *e = calloc(cfg->n_cmds + 1, sizeof(*e));
	unsigned n = 0;

	if (!e)
		return -ENOMEM;
	for (unsigned i = 0; i < cfg->n_cmds; i++) {
		cmd_key(&cfg->cmds[i], e[i].key, sizeof(e[i].key));
		e[i].order = i;
		e[i].cmd = &cfg->cmds[i];
	}
	qsort(e, cfg->n_cmds, sizeof(*e), entry_cmp);
	for (unsigned i = 0; i < cfg->n_cmds; i++) {
		if (i + 1 < cfg->n_cmds && !strcmp(e[i].key, e[i + 1].key))
			continue;	/* a later command about the same thing wins */
		if (!is_del(e[i].cmd))
			e[n++] = e[i];
	}
	*out = e;
	return n;
}

/* Returns true when two commands leave the same state (their source lines aside). */
static bool same_effect(const struct dp_cmd *a, const struct dp_cmd *b)
{
	return a->kind == b->kind && !strcmp(a->dev, b->dev) && a->family == b->family &&
	       a->plen == b->plen && a->has_gw == b->has_gw && !memcmp(a->addr, b->addr, 16) &&
	       !memcmp(a->gw, b->gw, 16) && !memcmp(a->mac, b->mac, 6) && a->mtu == b->mtu &&
	       a->rate == b->rate && a->burst == b->burst && a->host_on == b->host_on &&
	       a->host_gro == b->host_gro && !strcmp(a->host_name, b->host_name) &&
	       a->redirects == b->redirects && a->seconds == b->seconds && a->ra_on == b->ra_on &&
	       a->source_route == b->source_route && a->route_type == b->route_type;
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
	d.seconds = (uint32_t)(RXP_NEIGH_REACHABLE_NS / 1000000000ull);
	snprintf(d.where, sizeof(d.where), "reload (was %.80s)", c->where);
	return d;
}

/* Apply order: routes go before the addresses their gateways need, and come after them. */
static int del_rank(const struct dp_cmd *c)
{
	return c->kind == DP_CMD_ROUTE_DEL ? 0 : c->kind == DP_CMD_NEIGH_DEL ? 1 : 2;
}

/*
 * ... and last what cannot be taken back without a trace should a later
 * command fail (a host path's TAP made or removed, a last advertisement sent).
 */
static int add_rank(const struct dp_cmd *c)
{
	return c->kind == DP_CMD_MTU ? 0 : c->kind == DP_CMD_ADDR_ADD ? 1 :
	       c->kind == DP_CMD_NEIGH_ADD ? 2 : c->kind == DP_CMD_ROUTE_ADD ? 3 :
	       c->kind == DP_CMD_HOST || c->kind == DP_CMD_RA ? 5 : 4;
}

long reload_diff(const struct dp_config *old, const struct dp_config *new, struct dp_cmd **out)
{
	struct state_entry *a = NULL, *b = NULL;
	struct dp_cmd *dels = NULL, *adds = NULL;
	long na, nb, n_dels = 0, n_adds = 0, n = -ENOMEM;

	na = end_state(old, &a);
	nb = end_state(new, &b);
	dels = calloc((size_t)(na > 0 ? na : 0) + 1, sizeof(*dels));
	/* room for the new state and for a default restored per old setting */
	adds = calloc((size_t)(na > 0 ? na : 0) + (size_t)(nb > 0 ? nb : 0) + 1, sizeof(*adds));
	if (na < 0 || nb < 0 || !dels || !adds)
		goto out;
	for (long i = 0, j = 0; i < na || j < nb;) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(a[i].key, b[j].key);

		if (c < 0) {		/* gone from the file */
			if (a[i].cmd->kind == DP_CMD_ADDR_ADD || a[i].cmd->kind == DP_CMD_ROUTE_ADD ||
			    a[i].cmd->kind == DP_CMD_NEIGH_ADD)
				dels[n_dels++] = undo(a[i].cmd);
			else	/* a setting: back to its default */
				adds[n_adds++] = setting_default(a[i].cmd);
			i++;
		} else if (c > 0) {	/* new in the file */
			adds[n_adds++] = *b[j++].cmd;
		} else {		/* in both: changed? */
			if (!same_effect(a[i].cmd, b[j].cmd)) {
				/* an address with a new length goes away first; the rest replace */
				if (b[j].cmd->kind == DP_CMD_ADDR_ADD)
					dels[n_dels++] = undo(a[i].cmd);
				adds[n_adds++] = *b[j].cmd;
			}
			i++, j++;
		}
	}
	*out = calloc((size_t)(n_dels + n_adds) + 1, sizeof(**out));
	if (!*out)
		goto out;
	n = 0;
	for (int rank = 0; rank <= 2; rank++)
		for (long i = 0; i < n_dels; i++)
			if (del_rank(&dels[i]) == rank)
				(*out)[n++] = dels[i];
	for (int rank = 0; rank <= 5; rank++)
		for (long i = 0; i < n_adds; i++)
			if (add_rank(&adds[i]) == rank)
				(*out)[n++] = adds[i];
out:
	free(a);
	free(b);
	free(dels);
	free(adds);
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
