/* SPDX-License-Identifier: MIT */
/*
 * VRFs: routing tables of their own beside the default one, each with an
 * IPv4 and an IPv6 FIB as large as the default's. An interface is in one;
 * its connected routes and what comes in by it are that table's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "router_priv.h"

/* Tables the kernel keeps for itself: unspec, default, main (the default one's), local. */
static bool table_reserved(uint32_t table)
{
	return table == 0 || table == 253 || table == 254 || table == 255;
}

int rxp_router_vrf_by_name(const struct rxp_router *r, const char *name)
{
	if (!name[0] || !strcmp(name, "default"))
		return RXP_VRF_DEFAULT;
	for (unsigned v = 1; v < r->n_vrfs; v++)
		if (r->vrfs[v].used && !strcmp(r->vrfs[v].name, name))
			return (int)v;
	return -ENOENT;
}

int rxp_router_vrf_by_table(const struct rxp_router *r, uint32_t table)
{
	for (unsigned v = 0; v < r->n_vrfs; v++)
		if (r->vrfs[v].used && r->vrfs[v].table == table)
			return (int)v;
	return -ENOENT;
}

int rxp_router_add_vrf(struct rxp_router *r, const char *name, uint32_t table)
{
	struct rxp_vrf *v = NULL;
	unsigned i;

	if (!name[0] || !strcmp(name, "default") || strlen(name) >= sizeof(v->name) ||
	    table_reserved(table))
		return -EINVAL;
	if (rxp_router_vrf_by_name(r, name) >= 0)
		return -EEXIST;
	if (rxp_router_vrf_by_table(r, table) >= 0)
		return -EADDRINUSE;
	for (i = 1; i < r->n_vrfs && r->vrfs[i].used; i++)
		;
	if (i == RXP_VRF_MAX)
		return -ENOSPC;
	v = &r->vrfs[i];
	memset(v, 0, sizeof(*v));
	v->fib4 = rxp_lpm4_create(r->max_routes4, 1u << 17);
	v->fib6 = rxp_lpm6_create(r->max_routes6, 0);
	if (!v->fib4 || !v->fib6) {
		if (v->fib4)
			rxp_lpm4_destroy(v->fib4);
		if (v->fib6)
			rxp_lpm6_destroy(v->fib6);
		memset(v, 0, sizeof(*v));
		return -ENOMEM;
	}
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->table = table;
	v->used = true;
	if (i == r->n_vrfs)
		r->n_vrfs++;
	return (int)i;
}

int rxp_router_del_vrf(struct rxp_router *r, unsigned vrf)
{
	struct rxp_vrf *v;

	if (vrf == RXP_VRF_DEFAULT || vrf >= r->n_vrfs || !r->vrfs[vrf].used)
		return -EINVAL;
	for (unsigned i = 0; i < r->n_ifs; i++)
		if (r->ifs[i].vrf == vrf)
			return -EBUSY;
	/* its routes go with it (a slot's route moves on removal: look at the same slot again) */
	for (uint32_t i = 0; i < r->routes_size; i++) {
		const struct rxp_route *rt = &r->routes[i];

		while (rt->family && rt->vrf == vrf) {
			uint8_t prefix[16];

			memcpy(prefix, rt->prefix, 16);
			if (router_route_del(r, (uint8_t)vrf, rt->family, prefix, rt->plen))
				break;
		}
	}
	/* routes elsewhere with a next hop in it (leaked into it) keep that next hop: its interface decides */
	v = &r->vrfs[vrf];
	rxp_lpm4_destroy(v->fib4);
	rxp_lpm6_destroy(v->fib6);
	memset(v, 0, sizeof(*v));
	return 0;
}

void router_vrfs_free(struct rxp_router *r)
{
	for (unsigned v = 1; v < r->n_vrfs; v++) {
		if (!r->vrfs[v].used)
			continue;
		rxp_lpm4_destroy(r->vrfs[v].fib4);
		rxp_lpm6_destroy(r->vrfs[v].fib6);
		memset(&r->vrfs[v], 0, sizeof(r->vrfs[v]));
	}
	r->n_vrfs = 0;
}

int rxp_router_set_if_vrf(struct rxp_router *r, int ifidx, unsigned vrf)
{
	struct rxp_l3if *ifp;

	if (ifidx < 0 || (unsigned)ifidx >= r->n_ifs || vrf >= r->n_vrfs || !r->vrfs[vrf].used)
		return -EINVAL;
	ifp = &r->ifs[ifidx];
	if (ifp->vrf == vrf)
		return 0;
	/* its link-local address makes no route; any other does, in the table it is in now */
	if (ifp->n_addr4 || ifp->n_addr6 > 1)
		return -EBUSY;
	ifp->vrf = (uint8_t)vrf;
	rxp_neigh_gen_bump(&r->neigh);	/* cached adjacencies were looked up in the old table */
	return 0;
}
