/* SPDX-License-Identifier: MIT */
/*
 * VRFs on the running datapath: `vrf add NAME table N`, `vrf del NAME` and
 * `port set P vrf NAME|default` (a VLAN sub-port too), each with what
 * takes it back and what it is about (cmd.c's table of kinds).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "dp_vrf.h"

static int vrf_add(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	struct rxp_router *r = dp->router;
	int v = rxp_router_vrf_by_name(r, c->vrf), ret;

	if (v > 0 && r->vrfs[v].table == c->table)
		return 0;	/* said again as it is */
	if (v >= 0) {
		snprintf(err, errlen, "%s: VRF %s exists with table %u; vrf del it first", c->where,
			 c->vrf, v ? r->vrfs[v].table : RXP_VRF_TABLE_MAIN);
		return -EEXIST;
	}
	ret = rxp_router_add_vrf(r, c->vrf, c->table);
	if (ret == -EADDRINUSE) {
		v = rxp_router_vrf_by_table(r, c->table);
		snprintf(err, errlen, "%s: table %u is %s's already; a table has one VRF", c->where,
			 c->table, v > 0 ? r->vrfs[v].name : "the default table");
	} else if (ret == -EINVAL) {
		snprintf(err, errlen, "%s: table %u is the kernel's own (0, 253, 254 main, 255 local); choose another",
			 c->where, c->table);
	} else if (ret == -ENOSPC) {
		snprintf(err, errlen, "%s: %u VRFs at most", c->where, RXP_VRF_MAX - 1);
	}
	return ret < 0 ? ret : 0;
}

static int vrf_del(struct dp *dp, const struct dp_cmd *c, char *err, size_t errlen)
{
	struct rxp_router *r = dp->router;
	int v = rxp_router_vrf_by_name(r, c->vrf), ret;

	if (v <= 0) {
		if (v < 0 && c->undo)
			return 0;	/* a reload's take-back of what ctl took already */
		snprintf(err, errlen, "%s: %s", c->where, v ? "no such VRF" : "the default table stays");
		return v ? v : -EINVAL;
	}
	ret = rxp_router_del_vrf(r, (unsigned)v);
	if (ret == -EBUSY) {
		for (unsigned i = 0; i < r->n_ifs; i++)
			if (r->ifs[i].vrf == v) {
				snprintf(err, errlen, "%s: port %s is in VRF %s; move it out first (port set %s vrf default)",
					 c->where, r->ifs[i].name, c->vrf, r->ifs[i].name);
				break;
			}
	}
	return ret;
}

static int port_vrf(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	struct rxp_router *r = dp->router;
	int v = rxp_router_vrf_by_name(r, c->vrf), ret;

	if (v < 0) {
		snprintf(err, errlen, "%s: VRF '%s': no such VRF (vrf add NAME table N)", c->where, c->vrf);
		return v;
	}
	ret = rxp_router_set_if_vrf(r, ifidx, (unsigned)v);
	if (ret == -EBUSY)
		snprintf(err, errlen, "%s: %s has addresses, whose routes are in the table it is in; addr del them first, then move it",
			 c->where, r->ifs[ifidx].name);
	return ret;
}

int dp_vrf_apply(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen)
{
	switch (c->kind) {
	case DP_CMD_VRF_ADD:
		return vrf_add(dp, c, err, errlen);
	case DP_CMD_VRF_DEL:
		return vrf_del(dp, c, err, errlen);
	default:
		return port_vrf(dp, c, ifidx, err, errlen);
	}
}

bool dp_vrf_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx, struct dp_cmd *inv)
{
	const struct rxp_router *r = dp->router;
	int v = rxp_router_vrf_by_name(r, c->vrf);

	switch (c->kind) {
	case DP_CMD_VRF_ADD:
		inv->kind = DP_CMD_VRF_DEL;
		return v < 0;
	case DP_CMD_VRF_DEL:
		/* back with its table; the routes it had are not (a ctl batch that fails after it) */
		if (v <= 0)
			return false;
		inv->kind = DP_CMD_VRF_ADD;
		inv->table = r->vrfs[v].table;
		return true;
	default:
		if (ifidx < 0)
			return false;
		snprintf(inv->vrf, sizeof(inv->vrf), "%s", r->vrfs[r->ifs[ifidx].vrf].name);
		return true;
	}
}

void dp_vrf_key(const struct dp_cmd *c, char *key, size_t len)
{
	if (c->kind == DP_CMD_PORT_VRF)
		snprintf(key, len, "port %s vrf", c->dev);
	else
		snprintf(key, len, "vrf %s", c->vrf);
}
