/* SPDX-License-Identifier: MIT */
/*
 * Groups of next hops for multipath routes: made, shared, laid out, freed.
 *
 * The layout is weighted rendezvous hashing (highest random weight): bucket
 * b goes to the member whose score w / -ln(u(b, member)) is highest, u a
 * uniform hash of the bucket and the member's identity. A member's scores
 * do not depend on the others, so taking one out moves only the buckets it
 * had, and putting it back takes back only those; the buckets fall to the
 * members in the proportion of their weights.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "router_priv.h"
#include "seed.h"

/* What a member is, independent of its id: gateway and interface (which follows the subnet when found). */
static uint64_t member_identity(const struct rxp_nexthop *nh)
{
	uint64_t h = 0x243f6a8885a308d3ull ^ nh->family ^ (uint64_t)nh->kind << 8 ^ (uint64_t)nh->vrf << 16;
	uint64_t w[2];

	memcpy(w, nh->gw, 16);
	h = rxp_mix64(h ^ w[0], 0x9e3779b97f4a7c15ull);
	h = rxp_mix64(h ^ w[1], 0xc2b2ae3d27d4eb4full);
	if (!nh->if_found)
		h = rxp_mix64(h ^ nh->ifidx, 0x165667b19e3779f9ull);
	return h;
}

/*
 * Is the member's next hop usable: a gateway on a subnet of ours, its
 * port's link up, and its neighbour not failed (no answer to ARP or ND)?
 */
static bool member_up(struct rxp_router *r, uint16_t id)
{
	const struct rxp_nexthop *nh = &r->nh[id];
	const struct rxp_neigh *n;

	if (nh->unreachable || r->port_down[r->ifs[nh->ifidx].port])
		return false;
	if (nh->kind != RXP_NH_KIND_GATEWAY)
		return true;
	n = rxp_neigh_lookup(&r->neigh, nh->ifidx, nh->family, nh->gw);
	return !n || n->state != RXP_NEIGH_FAILED;
}

static uint64_t up_mask(struct rxp_router *r, const struct rxp_nh_group *g)
{
	uint64_t m = 0;

	for (unsigned p = 0; p < g->n_paths; p++)
		if (member_up(r, g->nh[p]))
			m |= 1ull << p;
	/* none is up: all of them, so that the flows stay where they were */
	return m ? m : (g->n_paths == 64 ? ~0ull : (1ull << g->n_paths) - 1);
}

/* Writes the layout of the members in @up; each bucket byte is stored whole (workers read it). */
static void layout(const struct rxp_router *r, struct rxp_nh_group *g, uint64_t up)
{
	uint64_t ident[RXP_NH_PATHS_MAX];

	for (unsigned p = 0; p < g->n_paths; p++)
		ident[p] = member_identity(&r->nh[g->nh[p]]);
	for (unsigned b = 0; b < RXP_NH_BUCKETS; b++) {
		double best = -1.0;
		unsigned pick = 0;

		for (unsigned p = 0; p < g->n_paths; p++) {
			uint64_t h;
			double u, score;

			if (!((up >> p) & 1))
				continue;
			h = rxp_mix64(ident[p] ^ (b * 0x9e3779b97f4a7c15ull), 0xd6e8feb86659fd93ull);
			h = rxp_mix64(h, 0x9e3779b97f4a7c15ull);
			u = ((double)(h >> 11) + 0.5) * 0x1p-53;	/* (0, 1) */
			score = g->weight[p] / -log(u);
			if (score > best) {
				best = score;
				pick = p;
			}
		}
		__atomic_store_n(&g->bucket[b], (uint8_t)pick, __ATOMIC_RELAXED);
	}
	g->up = up;
}

static bool group_is(const struct rxp_nh_group *g, uint8_t family, const uint16_t *ids,
		     const uint16_t *weights, unsigned n)
{
	return g->refs && g->family == family && g->n_paths == n &&
	       !memcmp(g->nh, ids, n * sizeof(*ids)) && !memcmp(g->weight, weights, n * sizeof(*weights));
}

/* Makes room for the per-worker counters of every group (once, with the first group). */
static int counters_alloc(struct rxp_router *r)
{
	unsigned workers = r->n_workers ? r->n_workers : 1;

	if (r->path_pkts)
		return 0;
	r->path_pkts = calloc((size_t)workers * RXP_NH_GROUP_MAX * RXP_NH_PATHS_MAX,
			      sizeof(*r->path_pkts));
	return r->path_pkts ? 0 : -ENOMEM;
}

int64_t router_group_get(struct rxp_router *r, uint8_t family, const uint16_t *ids,
			 const uint16_t *weights, unsigned n)
{
	struct rxp_nh_group *g;
	int slot = -1;

	if (!r->groups) {
		r->groups = calloc(RXP_NH_GROUP_MAX, sizeof(*r->groups));
		if (!r->groups)
			return -ENOMEM;
	}
	if (counters_alloc(r))
		return -ENOMEM;
	for (unsigned i = 0; i < r->n_groups; i++) {
		if (group_is(&r->groups[i], family, ids, weights, n)) {
			r->groups[i].refs++;
			return RXP_NH_GROUP | i;
		}
		if (!r->groups[i].refs && slot < 0)
			slot = (int)i;
	}
	if (slot < 0) {
		if (r->n_groups == RXP_NH_GROUP_MAX)
			return -ENOSPC;
		slot = (int)r->n_groups;
	}
	g = &r->groups[slot];
	if (!g->bucket) {
		g->bucket = malloc(RXP_NH_BUCKETS);
		if (!g->bucket)
			return -ENOMEM;
	}
	if ((unsigned)slot == r->n_groups)
		r->n_groups++;
	g->family = family;
	g->n_paths = (uint8_t)n;
	memcpy(g->nh, ids, n * sizeof(*ids));
	memcpy(g->weight, weights, n * sizeof(*weights));
	for (unsigned p = 0; p < n; p++) {
		r->nh[ids[p]].refs++;
		g->pkts_base[p] = 0;
		g->pkts_base[p] = rxp_router_path_pkts(r, RXP_NH_GROUP | (uint32_t)slot, p);
	}
	layout(r, g, up_mask(r, g));
	g->refs = 1;
	return RXP_NH_GROUP | (uint32_t)slot;
}

void router_group_put(struct rxp_router *r, unsigned gi)
{
	struct rxp_nh_group *g = &r->groups[gi];

	if (--g->refs)
		return;
	for (unsigned p = 0; p < g->n_paths; p++)
		r->nh[g->nh[p]].refs--;
}

unsigned rxp_router_groups_check(struct rxp_router *r)
{
	unsigned changed = 0;

	for (unsigned i = 0; i < r->n_groups; i++) {
		struct rxp_nh_group *g = &r->groups[i];
		uint64_t up;

		if (!g->refs)
			continue;
		up = up_mask(r, g);
		if (up != g->up) {
			layout(r, g, up);
			changed++;
		}
	}
	return changed;
}

void router_groups_follow(struct rxp_router *r)
{
	rxp_router_groups_check(r);
}

bool rxp_router_set_port_down(struct rxp_router *r, uint16_t port, bool down)
{
	if (port >= RXP_PORTS_MAX || r->port_down[port] == down)
		return false;
	r->port_down[port] = down;
	return true;
}

void router_groups_free(struct rxp_router *r)
{
	for (unsigned i = 0; r->groups && i < r->n_groups; i++)
		free(r->groups[i].bucket);
	free(r->groups);
	free(r->path_pkts);
	r->groups = NULL;
	r->path_pkts = NULL;
	r->n_groups = 0;
}

uint64_t rxp_router_path_pkts(const struct rxp_router *r, uint32_t nh, unsigned path)
{
	unsigned gi = nh & (RXP_NH_GROUP - 1);
	unsigned workers = r->n_workers ? r->n_workers : 1;
	uint64_t sum = 0;

	if (!r->path_pkts || gi >= r->n_groups || path >= RXP_NH_PATHS_MAX)
		return 0;
	for (unsigned w = 0; w < workers; w++)
		sum += __atomic_load_n(&r->path_pkts[((size_t)w * RXP_NH_GROUP_MAX + gi) *
						     RXP_NH_PATHS_MAX + path], __ATOMIC_RELAXED);
	return sum - r->groups[gi].pkts_base[path];
}

bool rxp_router_path_up(const struct rxp_router *r, uint32_t nh, unsigned path)
{
	const struct rxp_nh_group *g = rxp_router_group(r, nh);

	return path < g->n_paths && ((g->up >> path) & 1);
}

/* Orders paths by next hop id, carrying their weights. */
static void sort_paths(uint16_t *ids, uint16_t *weights, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			uint16_t t = ids[j];

			ids[j] = ids[j - 1];
			ids[j - 1] = t;
			t = weights[j];
			weights[j] = weights[j - 1];
			weights[j - 1] = t;
		}
}

int rxp_router_add_route_paths(struct rxp_router *r, unsigned vrf, uint8_t family,
			       const uint8_t *prefix, uint8_t plen, const struct rxp_route_path *paths,
			       unsigned n, unsigned *bad)
{
	uint16_t ids[RXP_NH_PATHS_MAX], weights[RXP_NH_PATHS_MAX], held_ids[RXP_NH_PATHS_MAX];
	unsigned held = 0, m = 0;
	int64_t val;
	int ret;

	*bad = 0;
	if ((family != 4 && family != 6) || plen > (family == 4 ? 32 : 128) || !n || vrf >= RXP_VRF_MAX)
		return -EINVAL;
	if (n > RXP_NH_PATHS_MAX) {
		*bad = RXP_NH_PATHS_MAX;
		return -E2BIG;
	}
	ret = router_route_free(r, (uint8_t)vrf, family, prefix, plen);
	if (ret)
		return ret;
	/* each path's next hop, held by a reference meanwhile: the next one must not take its slot */
	for (; held < n; held++) {
		int id;

		if (paths[held].weight < 1 || paths[held].weight > RXP_NH_WEIGHT_MAX) {
			ret = -ERANGE;
			break;
		}
		/* a next hop in another table (route leaking): its gateway is looked for there */
		id = paths[held].vrf >= RXP_VRF_MAX ? -EINVAL :
		     router_path_nh(r, (uint8_t)(paths[held].vrf >= 0 ? (unsigned)paths[held].vrf : vrf), family,
				    paths[held].has_gw ? paths[held].gw : NULL, paths[held].ifidx);
		if (id < 0) {
			ret = id;
			break;
		}
		r->nh[id].refs++;
		held_ids[held] = ids[held] = (uint16_t)id;
		weights[held] = paths[held].weight;
	}
	if (ret) {
		*bad = held;
		goto out;
	}
	sort_paths(ids, weights, n);
	/* the same next hop said twice is one member with both weights */
	for (unsigned i = 0; i < n; i++) {
		if (m && ids[m - 1] == ids[i]) {
			weights[m - 1] = (uint16_t)(weights[m - 1] + weights[i]);
			continue;
		}
		ids[m] = ids[i];
		weights[m++] = weights[i];
	}
	if (m == 1) {
		ret = router_route_set(r, (uint8_t)vrf, family, prefix, plen, ids[0]);
		goto out;
	}
	val = router_group_get(r, family, ids, weights, m);
	if (val < 0) {
		ret = (int)val;
		goto out;
	}
	ret = router_route_set(r, (uint8_t)vrf, family, prefix, plen, (uint32_t)val);
	router_group_put(r, (unsigned)val & (RXP_NH_GROUP - 1));	/* the route holds its own */
out:
	for (unsigned i = 0; i < held; i++)
		r->nh[held_ids[i]].refs--;
	return ret;
}
