/* SPDX-License-Identifier: MIT */
/*
 * What the router's two files share (router.c: interfaces, addresses,
 * routes, next hops; nh_group.c: the groups of next hops multipath routes
 * lead to). Not for use outside src/fib.
 */
#ifndef RXPATH_FIB_ROUTER_PRIV_H
#define RXPATH_FIB_ROUTER_PRIV_H

#include "rxpath/router.h"

/* Returns an existing identical next hop or a new one (refs 0 until used), or -ENOSPC. */
int router_nh_get(struct rxp_router *r, uint8_t kind, uint8_t family, uint8_t vrf, uint16_t ifidx,
		  const uint8_t *gw, bool if_found);

/*
 * The next hop a route's path names, checked as a route's gateway is:
 * its id, or -errno (the errors of rxp_router_add_route).
 */
int router_path_nh(struct rxp_router *r, uint8_t vrf, uint8_t family, const uint8_t *gw, int ifidx);

/* Adds @delta (+1 or -1) to the routes using FIB value @nh: a next hop or a group. */
void router_nh_ref(struct rxp_router *r, uint32_t nh, int delta);

/* Installs @prefix/@plen -> FIB value @nh (a next hop or a group) and its route record. */
int router_route_set(struct rxp_router *r, uint8_t vrf, uint8_t family, const uint8_t *prefix,
		     uint8_t plen, uint32_t nh);

/* Deletes @vrf's route @prefix/@plen, an address's own too. Returns 0 or -ENOENT. */
int router_route_del(struct rxp_router *r, uint8_t vrf, uint8_t family, const uint8_t *prefix,
		     uint8_t plen);

/* Checks that @prefix/@plen may take a configured route in @vrf: 0, -EADDRINUSE, -EISCONN, -EINVAL. */
int router_route_free(struct rxp_router *r, uint8_t vrf, uint8_t family, const uint8_t *prefix,
		      uint8_t plen);

/* Frees the VRFs' FIBs (not the default table's). */
void router_vrfs_free(struct rxp_router *r);

/*
 * Returns the group value (RXP_NH_GROUP | index) for next hops @ids with
 * @weights, one reference taken, made if no group has that set; -ENOSPC
 * or -ENOMEM.
 */
int64_t router_group_get(struct rxp_router *r, uint8_t family, const uint16_t *ids,
			 const uint16_t *weights, unsigned n);

/* Drops a reference to group @g (its index); the last one frees it and its members' references. */
void router_group_put(struct rxp_router *r, unsigned g);

/* Lays out again the groups whose members went up or down. */
void router_groups_follow(struct rxp_router *r);

/* Frees the groups' memory. */
void router_groups_free(struct rxp_router *r);

#endif
