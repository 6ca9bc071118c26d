/* SPDX-License-Identifier: MIT */
/*
 * Kernel sync's nexthop objects (ksync_priv.h; the design is told in
 * ksync.c). FRR, and `ip nexthop`, give a route a kernel nexthop object
 * (RTA_NH_ID) in place of its gateways: a single nexthop (gateway,
 * interface), a blackhole, or a group of single ones with weights
 * (hash-threshold or resilient). This file keeps the kernel's objects by
 * id, resolves a route's object into the set of paths rxpath is given, and
 * follows an object's changes into the routes through it, since the kernel
 * does not always announce those routes again: IPv4 routes through a
 * deleted object go without a word, and with nexthop_compat_mode off no
 * route is announced when its object is replaced.
 *
 * Records hold the set they resolved to (an id of the nexthop pool) and
 * the object's id (rec.r.kid); an object counts the records naming it,
 * so a change costs a scan of the records only when some route uses it,
 * and the scan runs once per batch of events (ks_kobj_refresh).
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "ksync_priv.h"

#define KOBJ_MIN_SLOTS 64u

/* ---- the table: open addressing by id ---- */

static uint32_t id_hash(uint32_t id)
{
	return (uint32_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 32);
}

static struct kobj *kobj_find(const struct rxp_ksync *k, uint32_t id)
{
	for (uint32_t i = id_hash(id) & k->kobj_mask; k->kobjs[i].id; i = (i + 1) & k->kobj_mask)
		if (k->kobjs[i].id == id)
			return &k->kobjs[i];
	return NULL;
}

static struct kobj *kobj_free_slot(struct rxp_ksync *k, uint32_t id)
{
	uint32_t i = id_hash(id) & k->kobj_mask;

	while (k->kobjs[i].id)
		i = (i + 1) & k->kobj_mask;
	return &k->kobjs[i];
}

int ks_kobj_init(struct rxp_ksync *k)
{
	k->kobjs = calloc(KOBJ_MIN_SLOTS, sizeof(*k->kobjs));
	k->kobj_mask = KOBJ_MIN_SLOTS - 1;
	k->n_kobjs = 0;
	return k->kobjs ? 0 : -ENOMEM;
}

void ks_kobj_free_all(struct rxp_ksync *k)
{
	if (!k->kobjs)
		return;
	for (uint32_t i = 0; i <= k->kobj_mask; i++)
		if (k->kobjs[i].id)
			free(k->kobjs[i].members);
	free(k->kobjs);
	k->kobjs = NULL;
}

/* Returns a new object @id (a placeholder), or NULL when out of room. Moves no other object. */
static struct kobj *kobj_insert(struct rxp_ksync *k, uint32_t id)
{
	struct kobj *o;

	if (k->n_kobjs >= k->max_entries)
		return NULL;
	/* at most half full: ids come in runs (1, 2, 3...), probing stays short */
	if ((k->n_kobjs + 1) * 2 > k->kobj_mask + 1) {
		uint32_t old_size = k->kobj_mask + 1;
		struct kobj *old = k->kobjs;

		k->kobjs = calloc((size_t)old_size * 2, sizeof(*k->kobjs));
		if (!k->kobjs) {
			k->kobjs = old;
			return NULL;
		}
		k->kobj_mask = old_size * 2 - 1;
		for (uint32_t i = 0; i < old_size; i++)
			if (old[i].id)
				*kobj_free_slot(k, old[i].id) = old[i];
		free(old);
	}
	o = kobj_free_slot(k, id);
	memset(o, 0, sizeof(*o));
	o->id = id;
	k->n_kobjs++;
	return o;
}

/* Frees @o's slot; later objects of its cluster may move into it. */
static void kobj_remove(struct rxp_ksync *k, struct kobj *o)
{
	uint32_t i = (uint32_t)(o - k->kobjs), j, mask = k->kobj_mask;

	free(o->members);
	memset(o, 0, sizeof(*o));
	for (j = (i + 1) & mask; k->kobjs[j].id; j = (j + 1) & mask) {
		uint32_t home = id_hash(k->kobjs[j].id) & mask;

		if (j > i ? (home <= i || home > j) : (home <= i && home > j)) {
			k->kobjs[i] = k->kobjs[j];
			memset(&k->kobjs[j], 0, sizeof(k->kobjs[j]));
			i = j;
		}
	}
	k->n_kobjs--;
}

/* Makes @o a placeholder: what routes name, the kernel no longer describes. */
static void kobj_undescribe(struct kobj *o)
{
	free(o->members);
	o->members = NULL;
	o->n_members = 0;
	o->kind = KOBJ_NONE;
	o->family = 0;
	o->has_gw = 0;
	o->oif = 0;
	memset(o->gw, 0, sizeof(o->gw));
	o->flags &= (uint8_t)~KO_DEAD;
}

int ks_kobj_route_ref(struct rxp_ksync *k, uint32_t id)
{
	struct kobj *o = kobj_find(k, id);

	if (!o)
		o = kobj_insert(k, id);
	if (!o)
		return -ENOMEM;
	o->routes++;
	return 0;
}

void ks_kobj_route_put(struct rxp_ksync *k, uint32_t id)
{
	struct kobj *o = kobj_find(k, id);

	if (!o || !o->routes)
		return;
	if (!--o->routes && o->kind == KOBJ_NONE)
		kobj_remove(k, o);
}

/* ---- messages ---- */

static bool has_member(const struct kobj *g, uint32_t id)
{
	for (uint32_t m = 0; m < g->n_members; m++)
		if (g->members[m].id == id)
			return true;
	return false;
}

/* Object @id changed: the routes through it, directly or in a group, are to be resolved again. */
static void kobj_changed(struct rxp_ksync *k, uint32_t id)
{
	struct kobj *o = kobj_find(k, id);

	if (o && o->routes) {
		o->flags |= KO_DIRTY;
		k->kobj_dirty = true;
	}
	for (uint32_t i = 0; i <= k->kobj_mask; i++) {
		struct kobj *g = &k->kobjs[i];

		if (g->id && g->routes && g->kind == KOBJ_GROUP && has_member(g, id)) {
			g->flags |= KO_DIRTY;
			k->kobj_dirty = true;
		}
	}
}

/* The kernel deleted object @id: it leaves every group, and the routes through it go. */
static void kobj_delete(struct rxp_ksync *k, uint32_t id)
{
	struct kobj *o = kobj_find(k, id);

	if (!o || o->kind == KOBJ_NONE)
		return;
	for (uint32_t i = 0; i <= k->kobj_mask; i++) {
		struct kobj *g = &k->kobjs[i];
		uint32_t kept = 0;

		if (!g->id || g->kind != KOBJ_GROUP)
			continue;
		for (uint32_t m = 0; m < g->n_members; m++)
			if (g->members[m].id != id)
				g->members[kept++] = g->members[m];
		if (kept == g->n_members)
			continue;
		g->n_members = kept;	/* an empty one resolves to nothing until the kernel deletes it too */
		if (g->routes) {
			g->flags |= KO_DIRTY;
			k->kobj_dirty = true;
		}
	}
	if (o->routes) {
		for (uint32_t i = 0; i <= k->mask; i++) {
			struct rec *r = &k->slots[i];

			if (r->kind == KIND_ROUTE && r->r.kid == id)
				r->flags |= F_DEAD;
		}
		ks_forget_marked(k);	/* drops their references: the object stays, described, till here */
		o = kobj_find(k, id);
	}
	if (o)
		kobj_remove(k, o);
}

/* Do @a and @b say the same (kind, gateway, interface, state, members)? */
static bool same_content(const struct kobj *a, const struct kobj *b)
{
	return a->kind == b->kind && a->family == b->family && a->has_gw == b->has_gw &&
	       a->oif == b->oif && (a->flags & KO_DEAD) == (b->flags & KO_DEAD) &&
	       !memcmp(a->gw, b->gw, 16) && a->n_members == b->n_members &&
	       (!a->n_members || !memcmp(a->members, b->members, a->n_members * sizeof(*a->members)));
}

/* Parses NHA_GROUP into @nw. Returns false when rxpath cannot follow it (length, type, FDB). */
static bool parse_group(const struct nlattr *const *tb, struct kobj *nw)
{
	const uint8_t *p = mnl_attr_get_payload(tb[NHA_GROUP]);
	uint16_t len = mnl_attr_get_payload_len(tb[NHA_GROUP]);
	uint16_t type = NEXTHOP_GRP_TYPE_MPATH;
	uint32_t n = len / sizeof(struct nexthop_grp);

	if (!n || len % sizeof(struct nexthop_grp) || tb[NHA_FDB])
		return false;
	if (tb[NHA_GROUP_TYPE]) {
		if (mnl_attr_get_payload_len(tb[NHA_GROUP_TYPE]) < sizeof(type))
			return false;
		type = mnl_attr_get_u16(tb[NHA_GROUP_TYPE]);
	}
	/* both spread flows by weight; rxpath's own layout keeps them in place as a resilient one does */
	if (type != NEXTHOP_GRP_TYPE_MPATH && type != NEXTHOP_GRP_TYPE_RES)
		return false;
	nw->members = calloc(n, sizeof(*nw->members));
	if (!nw->members)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		struct nexthop_grp g;

		memcpy(&g, p + i * sizeof(g), sizeof(g));
		if (!g.id)
			return false;
		nw->members[i].id = g.id;
		/* resvd1 is the weight's high byte (weight_high) in newer kernels, zero in older ones */
		nw->members[i].weight = ((uint32_t)g.resvd1 << 8 | g.weight) + 1;
	}
	nw->n_members = n;
	nw->kind = KOBJ_GROUP;
	return true;
}

/* Parses a single nexthop into @nw. Returns false when rxpath cannot have it. */
static bool parse_single(const struct nhmsg *nhm, const struct nlattr *const *tb, struct kobj *nw)
{
	uint32_t oif;
	unsigned alen;

	if (tb[NHA_FDB] || tb[NHA_ENCAP] || tb[NHA_ENCAP_TYPE] ||
	    (nhm->nh_family != AF_INET && nhm->nh_family != AF_INET6) ||
	    !ks_attr_u32(tb[NHA_OIF], &oif) || !oif || oif > INT32_MAX)
		return false;
	alen = nhm->nh_family == AF_INET ? 4 : 16;
	if (tb[NHA_GATEWAY]) {
		if (!ks_attr_addr(tb[NHA_GATEWAY], alen, nw->gw))
			return false;
		nw->has_gw = 1;
	}
	nw->family = alen == 4 ? 4 : 6;
	nw->oif = (int32_t)oif;
	nw->kind = KOBJ_SINGLE;
	if (nhm->nh_flags & RTNH_F_DEAD)
		nw->flags |= KO_DEAD;
	return true;
}

void ks_kobj_msg(struct rxp_ksync *k, const struct nlmsghdr *nlh, bool from_dump)
{
	const struct nhmsg *nhm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[NHA_MAX + 1] = { 0 };
	struct kobj nw = { 0 }, *o;
	uint32_t id;
	bool ok;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*nhm) ||
	    !ks_attrs(nlh, sizeof(*nhm), tb, NHA_MAX) || !ks_attr_u32(tb[NHA_ID], &id) || !id)
		return;
	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		kobj_delete(k, id);
		return;
	}
	if (tb[NHA_GROUP]) {
		ok = parse_group(tb, &nw);
	} else if (tb[NHA_BLACKHOLE]) {
		nw.kind = KOBJ_BLACKHOLE;
		ok = true;
	} else {
		ok = parse_single(nhm, tb, &nw);
	}
	if (!ok) {
		/* known, so that the routes through it are skipped as such, not as unknown */
		free(nw.members);
		memset(&nw, 0, sizeof(nw));
		nw.kind = KOBJ_UNSUPPORTED;
	}
	o = kobj_find(k, id);
	if (!o)
		o = kobj_insert(k, id);
	if (!o) {
		free(nw.members);
		k->st.skipped.full++;
		if (from_dump)
			k->dump_skips.full++;
		return;
	}
	if (from_dump)
		o->flags |= KO_SEEN;
	if (same_content(o, &nw)) {
		free(nw.members);
		return;
	}
	free(o->members);
	o->kind = nw.kind;
	o->family = nw.family;
	o->has_gw = nw.has_gw;
	o->oif = nw.oif;
	memcpy(o->gw, nw.gw, 16);
	o->n_members = nw.n_members;
	o->members = nw.members;
	o->flags = (uint8_t)((o->flags & ~KO_DEAD) | (nw.flags & KO_DEAD));
	/* a dump resolves every route again anyway, after the objects */
	if (!from_dump)
		kobj_changed(k, id);
}

/* ---- dumps ---- */

void ks_kobj_dump_begin(struct rxp_ksync *k)
{
	for (uint32_t i = 0; i <= k->kobj_mask; i++)
		k->kobjs[i].flags &= (uint8_t)~KO_SEEN;
}

void ks_kobj_dump_end(struct rxp_ksync *k)
{
	for (uint32_t i = 0; i <= k->kobj_mask;) {
		struct kobj *o = &k->kobjs[i];

		if (!o->id || (o->flags & KO_SEEN) || o->kind == KOBJ_NONE) {
			i++;
		} else if (o->routes) {
			kobj_undescribe(o);	/* the route dump to come drops the routes through it */
			i++;
		} else {
			kobj_remove(k, o);	/* a later object may now sit in slot i: look again */
		}
	}
}

void ks_kobj_clean(struct rxp_ksync *k)
{
	for (uint32_t i = 0; i <= k->kobj_mask; i++)
		k->kobjs[i].flags &= (uint8_t)~KO_DIRTY;
	k->kobj_dirty = false;
}

/* ---- resolving ---- */

/* The path of single nexthop @o at @weight for a route of @family; WHY_OK or why not. */
static enum ks_why single_path(struct rxp_ksync *k, const struct kobj *o, uint8_t family,
			       uint32_t weight, struct ks_path *p)
{
	int port;

	if (o->flags & KO_DEAD)
		return WHY_DEAD;
	if (o->has_gw && o->family != family)	/* IPv4 via an IPv6 gateway */
		return WHY_UNSUPPORTED;
	port = ks_port_of_ifindex(k, o->oif);
	if (port < 0)
		return WHY_UNMAPPED;
	memset(p, 0, sizeof(*p));
	memcpy(p->gw, o->gw, 16);
	p->has_gw = o->has_gw;
	p->port = (uint16_t)port;
	p->weight = (uint16_t)weight;
	return WHY_OK;
}

static void blackhole_path(struct ks_path *p)
{
	memset(p, 0, sizeof(*p));
	p->port = NH_PORT_REJECT | REJECT_BLACKHOLE;
	p->weight = 1;
}

/*
 * A group's members, flattened: its dead members, and those rxpath has no
 * port for, are left out (as the nexthops of RTA_MULTIPATH are); a member
 * rxpath cannot know or have at all makes the whole group unusable, never
 * half installed.
 */
static enum ks_why group_paths(struct rxp_ksync *k, const struct kobj *g, uint8_t family,
			       struct ks_path *paths, unsigned *n)
{
	bool unmapped = false, unsupported = false;

	for (uint32_t m = 0; m < g->n_members; m++) {
		const struct kobj *o = kobj_find(k, g->members[m].id);
		enum ks_why why;

		if (!o || o->kind == KOBJ_NONE)
			return WHY_UNKNOWN;
		if (o->kind == KOBJ_BLACKHOLE && g->n_members == 1) {
			blackhole_path(&paths[0]);
			*n = 1;
			return WHY_OK;
		}
		if (o->kind != KOBJ_SINGLE || g->members[m].weight > KS_WEIGHT_MAX)
			return WHY_UNSUPPORTED;
		if (*n == KS_PATHS_MAX)
			return WHY_UNSUPPORTED;
		why = single_path(k, o, family, g->members[m].weight, &paths[*n]);
		unmapped |= why == WHY_UNMAPPED;
		unsupported |= why == WHY_UNSUPPORTED;
		*n += why == WHY_OK;
	}
	if (*n)
		return WHY_OK;
	return unmapped ? WHY_UNMAPPED : unsupported ? WHY_UNSUPPORTED : WHY_DEAD;
}

enum ks_why ks_kobj_resolve(struct rxp_ksync *k, uint32_t id, uint8_t family,
			    struct ks_path *paths, unsigned *n)
{
	const struct kobj *o = kobj_find(k, id);
	enum ks_why why;

	*n = 0;
	if (!o || o->kind == KOBJ_NONE)
		return WHY_UNKNOWN;
	switch (o->kind) {
	case KOBJ_BLACKHOLE:
		blackhole_path(&paths[0]);
		*n = 1;
		return WHY_OK;
	case KOBJ_SINGLE:
		why = single_path(k, o, family, 1, &paths[0]);
		*n = why == WHY_OK;
		return why;
	case KOBJ_GROUP:
		why = group_paths(k, o, family, paths, n);
		if (why != WHY_OK)
			*n = 0;
		ks_paths_sort(paths, *n);
		return why;
	default:
		return WHY_UNSUPPORTED;
	}
}

void ks_kobj_refresh(struct rxp_ksync *k)
{
	struct ks_path paths[KS_PATHS_MAX];

	if (!k->kobj_dirty)
		return;
	for (uint32_t i = 0; i <= k->mask; i++) {
		struct rec *r = &k->slots[i];
		const struct kobj *o;
		struct key key;
		enum ks_why why;
		uint32_t nh = 0;
		unsigned n;

		if (r->kind != KIND_ROUTE || !r->r.kid)
			continue;
		o = kobj_find(k, r->r.kid);
		if (!o || !(o->flags & KO_DIRTY))
			continue;
		why = ks_kobj_resolve(k, r->r.kid, r->family, paths, &n);
		if (why == WHY_OK) {
			nh = ks_nh_get(k, r->family, paths, n);
			if (!nh) {
				why = WHY_FULL;
				k->st.skipped.full++;
			}
		}
		if (!ks_route_set_nh(k, r, nh, why))
			continue;
		ks_count_why(&k->st.skipped, why);
		/* reconciling never moves records: the scan goes on from here */
		key = ks_key_of(r);
		ks_reconcile(k, r, false);
		ks_clear_done(k, &key);
	}
	ks_kobj_clean(k);
}
