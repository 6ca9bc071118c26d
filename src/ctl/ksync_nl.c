/* SPDX-License-Identifier: MIT */
/*
 * Kernel sync's rtnetlink side (ksync_priv.h; the design is told in
 * ksync.c): parses route, neighbour, link and address messages, applies
 * them to the table and hands each change to ks_reconcile(); passes
 * nexthop objects to ksync_nexthop.c; runs the dumps and reads the event
 * socket.
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "ksync_priv.h"
#include "rxpath/proto.h"

#define EVENT_BUDGET 1024		/* event messages per rxp_ksync_run */
#define RESYNC_GAP_NS 1000000000ull	/* least time between two event-triggered resyncs */
#define DUMP_TIMEOUT_S 10

/* Asks for a full resync soon, but not sooner than RESYNC_GAP_NS after the last one ended. */
static void resync_soon(struct rxp_ksync *k)
{
	uint64_t at = k->last_resync_end_ns + RESYNC_GAP_NS;

	if (at < k->next_resync_ns)
		k->next_resync_ns = at;
}

/* ---- parsing rtnetlink messages ---- */

/* Clears the bits of @addr past @plen. */
static void mask_prefix(uint8_t addr[16], unsigned plen)
{
	for (unsigned i = 0; i < 16; i++) {
		if (plen >= 8) {
			plen -= 8;
		} else {
			addr[i] &= (uint8_t)(0xff00u >> plen);
			plen = 0;
		}
	}
}

struct attr_set {
	const struct nlattr **tb;
	uint16_t max;
};

static int attr_collect(const struct nlattr *a, void *data)
{
	struct attr_set *set = data;
	uint16_t type = mnl_attr_get_type(a);

	if (type <= set->max)
		set->tb[type] = a;
	return MNL_CB_OK;
}

bool ks_attrs(const struct nlmsghdr *nlh, size_t hdr_len, const struct nlattr **tb, uint16_t max)
{
	struct attr_set set = { tb, max };

	return mnl_attr_parse(nlh, (unsigned)hdr_len, attr_collect, &set) >= 0;
}

bool ks_attr_u32(const struct nlattr *a, uint32_t *out)
{
	if (!a || mnl_attr_get_payload_len(a) < 4)
		return false;
	*out = mnl_attr_get_u32(a);
	return true;
}

/* Copies an address attribute of @alen bytes into a zeroed 16-byte buffer. */
bool ks_attr_addr(const struct nlattr *a, unsigned alen, uint8_t out[16])
{
	memset(out, 0, 16);
	if (!a || mnl_attr_get_payload_len(a) != alen)
		return false;
	memcpy(out, mnl_attr_get_payload(a), alen);
	return true;
}

int ks_port_of_ifindex(struct rxp_ksync *k, int ifindex)
{
	if (ifindex <= 0)
		return -1;
	if (k->last_map_hit < k->n_map && k->map[k->last_map_hit].ifindex == ifindex)
		return (int)k->last_map_hit;
	for (unsigned i = 0; i < k->n_map; i++)
		if (k->map[i].ifindex == ifindex) {
			k->last_map_hit = i;
			return (int)i;
		}
	return -1;
}

enum verdict {
	V_OTHER,	/* not about our table or families: leave everything alone */
	V_SKIP,		/* a key of ours, but nothing to mirror: counts as a delete of the key */
	V_MIRROR,	/* a record: with paths, or (a nexthop object's route) why it has none */
};

struct kroute {
	struct key key;
	uint32_t metric;
	uint32_t kid;		/* RTA_NH_ID, or 0 */
	enum ks_why why;	/* WHY_OK, or why n_paths is 0 */
	unsigned n_hops;	/* nexthops the message listed */
	bool multipath;		/* it came as RTA_MULTIPATH */
	unsigned n_paths;	/* the set rxpath gets, sorted */
	struct ks_path paths[KS_PATHS_MAX];	/* last: only the head is cleared per message */
};

/*
 * One nexthop of a route message into @paths[*@n]. WHY_OK when added; else
 * why it is left out (a gateway of another family, no interface, an
 * interface not mapped, a bad gateway).
 */
static enum ks_why add_path(struct rxp_ksync *k, struct ks_path *paths, unsigned *n, int oif,
			    const struct nlattr *gw_attr, bool via, unsigned alen, unsigned weight)
{
	struct ks_path p = { .has_gw = gw_attr != NULL, .weight = (uint16_t)weight };
	int port;

	if (via || oif <= 0)	/* RTA_VIA: IPv4 via IPv6; no interface: nothing rxpath can name */
		return WHY_UNSUPPORTED;
	port = ks_port_of_ifindex(k, oif);
	if (port < 0)
		return WHY_UNMAPPED;
	if (gw_attr && !ks_attr_addr(gw_attr, alen, p.gw))
		return WHY_UNSUPPORTED;
	if (*n == KS_PATHS_MAX)	/* more than rxpath holds: none rather than some */
		return WHY_FULL;
	p.port = (uint16_t)port;
	paths[(*n)++] = p;
	return WHY_OK;
}

/*
 * The live, mapped nexthops of RTA_MULTIPATH, weight rtnh_hops + 1. Returns
 * WHY_OK when some are left, else why none: an unmapped one is the reason
 * first, then one rxpath has no words for, then none alive.
 */
static enum ks_why multipath_paths(struct rxp_ksync *k, const struct nlattr *mp, unsigned alen,
				   struct kroute *out)
{
	const struct rtnexthop *nh = mnl_attr_get_payload(mp);
	int left = mnl_attr_get_payload_len(mp);
	bool unmapped = false, unsupported = false;

	while (left >= (int)sizeof(*nh) && nh->rtnh_len >= sizeof(*nh) && nh->rtnh_len <= left) {
		const struct nlattr *tb[RTA_MAX + 1] = { 0 };
		struct attr_set set = { tb, RTA_MAX };

		out->n_hops++;
		if (!(nh->rtnh_flags & RTNH_F_DEAD)) {
			enum ks_why why = WHY_UNSUPPORTED;

			if (mnl_attr_parse_payload(RTNH_DATA(nh), nh->rtnh_len - RTNH_LENGTH(0),
						   attr_collect, &set) >= 0)
				why = add_path(k, out->paths, &out->n_paths, nh->rtnh_ifindex,
					       tb[RTA_GATEWAY], tb[RTA_VIA] != NULL, alen,
					       nh->rtnh_hops + 1u);
			if (why == WHY_FULL)
				return WHY_UNSUPPORTED;
			unmapped |= why == WHY_UNMAPPED;
			unsupported |= why == WHY_UNSUPPORTED;
		}
		left -= RTNH_ALIGN(nh->rtnh_len);
		nh = RTNH_NEXT(nh);
	}
	if (out->n_paths)
		return WHY_OK;
	return unmapped ? WHY_UNMAPPED : unsupported ? WHY_UNSUPPORTED : WHY_DEAD;
}

void ks_count_why(struct rxp_ksync_skips *skips, enum ks_why why)
{
	if (why == WHY_UNMAPPED)
		skips->unmapped++;
	else if (why != WHY_OK && why != WHY_FULL)	/* "full" is counted where it happens */
		skips->unsupported++;
}

/*
 * Classifies a route message and fills @out. Skips are counted in @skips
 * when it is given (not for deletions: the route was counted when it came).
 */
static enum verdict route_parse(struct rxp_ksync *k, const struct nlmsghdr *nlh,
				struct kroute *out, struct rxp_ksync_skips *skips)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[RTA_MAX + 1] = { 0 };
	struct rxp_ksync_skips none = { 0 };
	uint32_t table, u32;
	enum ks_why why;
	unsigned alen, vrf;

	if (!skips)
		skips = &none;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm) ||
	    (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6))
		return V_OTHER;
	alen = rtm->rtm_family == AF_INET ? 4 : 16;
	if (rtm->rtm_dst_len > alen * 8 || !ks_attrs(nlh, sizeof(*rtm), tb, RTA_MAX))
		return V_OTHER;
	table = rtm->rtm_table;
	vrf = 0;
	if (ks_attr_u32(tb[RTA_TABLE], &u32))	/* tables above 255 only say so here */
		table = u32;
	/* a cloned (cache) entry is no FIB route: it neither adds nor replaces one */
	if (rtm->rtm_flags & RTM_F_CLONED)
		return V_OTHER;
	if (table != k->table) {
		for (vrf = 0; vrf < k->n_vrfs && k->vrf_table[vrf] != table; vrf++)
			;
		if (vrf++ == k->n_vrfs)
			return V_OTHER;
	}

	memset(out, 0, offsetof(struct kroute, paths));
	out->key.kind = KIND_ROUTE;
	out->key.port = (uint16_t)vrf;	/* a VRF's table: its records are apart from the main table's */
	out->key.family = alen == 4 ? 4 : 6;
	out->key.plen = rtm->rtm_dst_len;
	if (tb[RTA_DST] && !ks_attr_addr(tb[RTA_DST], alen, out->key.addr))
		return V_OTHER;
	mask_prefix(out->key.addr, out->key.plen);
	if (!ks_attr_u32(tb[RTA_PRIORITY], &out->metric))
		out->metric = 0;

	/* rxpath makes its own connected, local and link-local routes from its addresses */
	if (rtm->rtm_protocol == RTPROT_KERNEL ||
	    (alen == 16 && (out->key.addr[0] == 0xff ||
			    (out->key.addr[0] == 0xfe && (out->key.addr[1] & 0xc0) == 0x80)))) {
		skips->kernel++;
		return V_SKIP;
	}
	/*
	 * A nexthop object decides (the compat RTA_GATEWAY/RTA_MULTIPATH may be
	 * missing): the route is held even when the object gives nothing to
	 * mirror, since the object can change without a word about the route.
	 * The kernel types a route through a blackhole object blackhole.
	 */
	if (ks_attr_u32(tb[RTA_NH_ID], &out->kid) && out->kid &&
	    (rtm->rtm_type == RTN_UNICAST || rtm->rtm_type == RTN_BLACKHOLE) &&
	    !rtm->rtm_src_len && !rtm->rtm_tos) {
		out->n_hops = 1;
		out->why = ks_kobj_resolve(k, out->kid, out->key.family, out->paths, &out->n_paths);
		ks_count_why(skips, out->why);
		return V_MIRROR;
	}
	out->kid = 0;
	/* the types that lead nowhere have no nexthop: rxpath has the same three */
	if ((rtm->rtm_type == RTN_BLACKHOLE || rtm->rtm_type == RTN_UNREACHABLE ||
	     rtm->rtm_type == RTN_PROHIBIT) && !rtm->rtm_src_len && !rtm->rtm_tos) {
		struct ks_path *p = &out->paths[0];

		memset(p, 0, sizeof(*p));
		p->port = (uint16_t)(NH_PORT_REJECT |
				     (rtm->rtm_type == RTN_BLACKHOLE ? REJECT_BLACKHOLE :
				      rtm->rtm_type == RTN_UNREACHABLE ? REJECT_UNREACHABLE :
				      REJECT_PROHIBIT));
		p->weight = 1;
		out->n_hops = out->n_paths = 1;
		return V_MIRROR;
	}
	if (rtm->rtm_type != RTN_UNICAST || rtm->rtm_src_len || rtm->rtm_tos ||
	    (rtm->rtm_flags & RTNH_F_DEAD)) {
		skips->unsupported++;
		return V_SKIP;
	}
	if (tb[RTA_MULTIPATH]) {
		out->multipath = true;
		why = multipath_paths(k, tb[RTA_MULTIPATH], alen, out);
		/* the kernel lists IPv6 nexthops in one order in dumps, another in events */
		ks_paths_sort(out->paths, out->n_paths);
	} else {
		out->n_hops = 1;
		why = add_path(k, out->paths, &out->n_paths,
			       ks_attr_u32(tb[RTA_OIF], &u32) ? (int)u32 : 0, tb[RTA_GATEWAY],
			       tb[RTA_VIA] != NULL, alen, 1);
	}
	if (why != WHY_OK) {
		ks_count_why(skips, why);
		return V_SKIP;
	}
	return V_MIRROR;
}

struct kneigh {
	struct key key;
	uint8_t mac[6];
};

static enum verdict neigh_parse(struct rxp_ksync *k, const struct nlmsghdr *nlh,
				struct kneigh *out, struct rxp_ksync_skips *skips)
{
	const uint16_t resolved = NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT;
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[NDA_MAX + 1] = { 0 };
	const uint8_t *mac;
	bool mirrorable;
	unsigned alen;
	int port;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ndm) ||
	    (ndm->ndm_family != AF_INET && ndm->ndm_family != AF_INET6) ||
	    (ndm->ndm_flags & NTF_PROXY))
		return V_OTHER;
	alen = ndm->ndm_family == AF_INET ? 4 : 16;
	if (!ks_attrs(nlh, sizeof(*ndm), tb, NDA_MAX))
		return V_OTHER;
	memset(out, 0, sizeof(*out));
	if (!ks_attr_addr(tb[NDA_DST], alen, out->key.addr))
		return V_OTHER;
	mirrorable = (ndm->ndm_state & resolved) && tb[NDA_LLADDR] &&
		     mnl_attr_get_payload_len(tb[NDA_LLADDR]) == 6;
	if (mirrorable) {
		mac = mnl_attr_get_payload(tb[NDA_LLADDR]);
		mirrorable = rxp_eth_is_unicast(mac);
		memcpy(out->mac, mac, 6);
	}
	port = ks_port_of_ifindex(k, ndm->ndm_ifindex);
	if (port < 0 || k->map[port].routes_only) {
		if (skips && mirrorable)
			skips->unmapped++;
		return V_OTHER;	/* no record can have this key */
	}
	out->key.kind = KIND_NEIGH;
	out->key.family = alen == 4 ? 4 : 6;
	out->key.plen = (uint8_t)(alen * 8);
	out->key.port = (uint16_t)port;
	return mirrorable ? V_MIRROR : V_SKIP;
}

/* ---- applying messages ---- */

/* Records a mirrorable route. @from_dump marks it seen. Returns the record, or NULL when full. */
static struct rec *route_upsert(struct rxp_ksync *k, const struct kroute *kr, bool from_dump)
{
	uint32_t nh = 0;
	struct rec *r;

	if (kr->n_paths) {
		nh = ks_nh_get(k, kr->key.family, kr->paths, kr->n_paths);
		if (!nh)
			goto full;
	}
	r = ks_rec_find(k, &kr->key, kr->metric);
	if (r) {
		/* IPv4 keeps appended duplicates of a key; the first one dumped is the one used */
		if (from_dump && (r->flags & F_SEEN)) {
			ks_nh_put(k, nh);
			r->flags |= F_DUP;
			return r;
		}
		if (r->r.kid != kr->kid) {
			if (kr->kid && ks_kobj_route_ref(k, kr->kid)) {
				ks_nh_put(k, nh);
				goto full;
			}
			if (r->r.kid)
				ks_kobj_route_put(k, r->r.kid);
			r->r.kid = kr->kid;
		}
		ks_route_set_nh(k, r, nh, kr->why);
		r->flags &= (uint8_t)~F_DEAD;
	} else {
		if (kr->kid && ks_kobj_route_ref(k, kr->kid)) {
			ks_nh_put(k, nh);
			goto full;
		}
		r = ks_rec_insert(k, &kr->key, kr->metric);
		if (!r) {
			ks_nh_put(k, nh);
			if (kr->kid)
				ks_kobj_route_put(k, kr->kid);
			goto full;
		}
		r->r.nh = nh;
		r->r.kid = kr->kid;
		r->why = nh ? WHY_OK : (uint8_t)kr->why;
	}
	r->flags = (uint8_t)((r->flags & ~F_MULTI) | (kr->n_hops > 1 ? F_MULTI : 0));
	if (from_dump)
		r->flags |= F_SEEN;
	return r;
full:
	k->st.skipped.full++;
	if (from_dump)
		k->dump_skips.full++;
	return NULL;
}

static struct rec *neigh_upsert(struct rxp_ksync *k, const struct kneigh *kn, bool from_dump)
{
	struct rec *r = ks_rec_find(k, &kn->key, 0);

	if (!r) {
		r = ks_rec_insert(k, &kn->key, 0);
		if (!r) {
			k->st.skipped.full++;
			if (from_dump)
				k->dump_skips.full++;
			return NULL;
		}
	}
	if (memcmp(r->n.mac, kn->mac, 6)) {
		memcpy(r->n.mac, kn->mac, 6);
		r->flags &= (uint8_t)~F_REFUSED;
		r->err = 0;
	}
	r->flags &= (uint8_t)~F_DEAD;
	if (from_dump)
		r->flags |= F_SEEN;
	return r;
}

void ks_add_skips(struct rxp_ksync_skips *to, const struct rxp_ksync_skips *from)
{
	to->unmapped += from->unmapped;
	to->kernel += from->kernel;
	to->unsupported += from->unsupported;
}

/* Reconciles @r's prefix after a change from an event. */
static void route_changed(struct rxp_ksync *k, struct rec *r)
{
	struct key key = ks_key_of(r);

	ks_reconcile(k, r, false);
	ks_clear_done(k, &key);
}

/*
 * One nexthop (@gone, its weight unsaid) of IPv6 multipath route @r went:
 * the kernel announces the one, not the rest; the rest is what @r has
 * without it. One rxpath did not have (unmapped, dead) changes nothing.
 */
static void route_drop_path(struct rxp_ksync *k, struct rec *r, const struct ks_path *gone)
{
	struct ks_path paths[KS_PATHS_MAX];
	const struct nexthop *set = &k->nhs[r->r.nh];
	const struct ks_path *p = ks_nh_paths(set);
	unsigned n = 0, n_set = set->n_paths;
	bool found = false;
	uint32_t nh;

	for (unsigned i = 0; i < n_set; i++) {
		if (!found && p[i].port == gone->port && p[i].has_gw == gone->has_gw &&
		    !memcmp(p[i].gw, gone->gw, 16))
			found = true;
		else
			paths[n++] = p[i];
	}
	if (!found)
		return;
	if (!n) {
		struct key key = ks_key_of(r);

		ks_rec_forget(k, &key, r->metric);
		return;
	}
	nh = ks_nh_get(k, r->family, paths, n);	/* a sorted set less one is sorted */
	if (!nh) {
		resync_soon(k);
		return;
	}
	if (ks_route_set_nh(k, r, nh, WHY_OK))
		route_changed(k, r);
}

/* An event about a route. */
static void route_event(struct rxp_ksync *k, const struct nlmsghdr *nlh)
{
	bool is_new = nlh->nlmsg_type == RTM_NEWROUTE;
	struct rxp_ksync_skips skips = { 0 };
	enum verdict v;
	struct kroute kr;
	struct rec *r;

	v = route_parse(k, nlh, &kr, is_new ? &skips : NULL);
	ks_add_skips(&k->st.skipped, &skips);
	if (v == V_OTHER)
		return;
	r = ks_rec_find(k, &kr.key, kr.metric);
	/*
	 * IPv6 adds and deletes the nexthops of a multipath route one at a
	 * time. An addition is announced with the whole set (RTA_MULTIPATH)
	 * since Linux 4.16 and is applied as it comes; a deletion names the
	 * one that went, and a single appended one (older kernels) says
	 * nothing of the rest: a dump does.
	 */
	if (r && kr.key.family == 6 && !kr.multipath && !kr.kid && !r->r.kid) {
		if (!is_new && (r->flags & F_MULTI)) {
			if (v == V_MIRROR && r->r.nh)
				route_drop_path(k, r, &kr.paths[0]);
			return;
		}
		if (is_new && (nlh->nlmsg_flags & NLM_F_APPEND)) {
			resync_soon(k);
			return;
		}
	}
	if (r && kr.key.family == 4 && !is_new && (r->flags & F_DUP)) {
		resync_soon(k);	/* which of the appended routes is used now, only a dump says */
		return;
	}
	if (r && kr.key.family == 4 && is_new && (nlh->nlmsg_flags & NLM_F_APPEND)) {
		r->flags |= F_DUP;	/* appended behind ours: the kernel keeps using the first */
		return;
	}
	if (v == V_SKIP || !is_new) {
		ks_rec_forget(k, &kr.key, kr.metric);
		return;
	}
	r = route_upsert(k, &kr, false);
	if (r)
		route_changed(k, r);
}

static void neigh_event(struct rxp_ksync *k, const struct nlmsghdr *nlh)
{
	bool is_new = nlh->nlmsg_type == RTM_NEWNEIGH;
	struct rxp_ksync_skips skips = { 0 };
	enum verdict v;
	struct kneigh kn;
	struct rec *r;

	v = neigh_parse(k, nlh, &kn, is_new ? &skips : NULL);
	ks_add_skips(&k->st.skipped, &skips);
	if (v == V_OTHER)
		return;
	if (v == V_SKIP || !is_new) {
		ks_rec_forget(k, &kn.key, 0);
		return;
	}
	r = neigh_upsert(k, &kn, false);
	if (r) {
		ks_reconcile(k, r, false);
		ks_clear_done(k, &kn.key);
	}
}

/*
 * A link appeared, changed or went away: keep the port map's ifindexes. A
 * mapped link going down or away, or renumbered, loses IPv4 routes without
 * a word from the kernel, and its nexthop objects (the routes through them
 * with them) when it loses its carrier too: resync soon.
 */
static void link_msg(struct rxp_ksync *k, const struct nlmsghdr *nlh)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[IFLA_MAX + 1] = { 0 };
	const char *name = NULL;
	bool gone = nlh->nlmsg_type == RTM_DELLINK;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi) || !ks_attrs(nlh, sizeof(*ifi), tb, IFLA_MAX))
		return;
	if (tb[IFLA_IFNAME] && mnl_attr_validate(tb[IFLA_IFNAME], MNL_TYPE_NUL_STRING) == 0)
		name = mnl_attr_get_str(tb[IFLA_IFNAME]);
	for (unsigned i = 0; i < k->n_map; i++) {
		struct map_entry *m = &k->map[i];
		bool named = !gone && name && !strcmp(name, m->ifname);

		if (named) {
			bool up = ifi->ifi_flags & IFF_UP, running = ifi->ifi_flags & IFF_RUNNING;
			bool same = m->ifindex == ifi->ifi_index;

			if (m->ifindex && !same)
				resync_soon(k);
			/* up again, its dead IPv4 multipath nexthops revive as silently */
			if (same && m->up != up)
				resync_soon(k);
			if (same && m->running && !running && k->n_kobjs)
				resync_soon(k);
			m->ifindex = ifi->ifi_index;
			m->up = up;
			m->running = running;
		} else if (m->ifindex == ifi->ifi_index) {	/* deleted or renamed away */
			m->ifindex = 0;
			m->up = m->running = false;
			resync_soon(k);
		}
	}
}

/* Deleting an IPv4 address also drops, silently, the routes through its subnet. */
static void addr_event(struct rxp_ksync *k, const struct nlmsghdr *nlh)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(*ifa) && ifa->ifa_family == AF_INET &&
	    ks_port_of_ifindex(k, (int)ifa->ifa_index) >= 0)
		resync_soon(k);
}

static int event_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rxp_ksync *k = data;

	k->st.events++;
	switch (nlh->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		route_event(k, nlh);
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		neigh_event(k, nlh);
		break;
	case RTM_NEWLINK:
	case RTM_DELLINK:
		link_msg(k, nlh);
		break;
	case RTM_DELADDR:
		addr_event(k, nlh);
		break;
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		ks_kobj_msg(k, nlh, false);
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rxp_ksync *k = data;
	struct kroute kr;
	struct kneigh kn;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		k->dump_intr = true;
	switch (nlh->nlmsg_type) {
	case RTM_NEWROUTE:
		if (route_parse(k, nlh, &kr, &k->dump_skips) == V_MIRROR)
			route_upsert(k, &kr, true);
		break;
	case RTM_NEWNEIGH:
		if (neigh_parse(k, nlh, &kn, &k->dump_skips) == V_MIRROR)
			neigh_upsert(k, &kn, true);
		break;
	case RTM_NEWLINK:
		link_msg(k, nlh);
		break;
	case RTM_NEWNEXTHOP:
		ks_kobj_msg(k, nlh, true);
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

/* NLMSG_DONE carries the dump's error, if any (libmnl 1.0.4 does not look). */
static int done_cb(const struct nlmsghdr *nlh, void *data)
{
	int code = 0;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		((struct rxp_ksync *)data)->dump_intr = true;
	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(code))
		memcpy(&code, mnl_nlmsg_get_payload(nlh), sizeof(code));
	if (code < 0) {
		errno = -code;
		return MNL_CB_ERROR;
	}
	return MNL_CB_STOP;
}

/* ---- dumps ---- */

/* Runs one dump request to the end. Returns 0 or -errno with @err. */
static int dump(struct rxp_ksync *k, uint16_t type, uint8_t family, const char *what, char *err,
		size_t errlen)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = { 0 };
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(k->buf);
	uint32_t seq = ++k->seq;
	ssize_t n;
	int ret;

	ctl[NLMSG_DONE] = done_cb;
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	if (type == RTM_GETROUTE) {
		struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));

		rtm->rtm_family = family;
		/* with strict checking on, the kernel dumps only this table (all of them for VRFs) */
		if (!k->n_vrfs)
			mnl_attr_put_u32(nlh, RTA_TABLE, k->table);
	} else if (type == RTM_GETNEIGH) {
		struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));

		ndm->ndm_family = family;
	} else if (type == RTM_GETNEXTHOP) {
		struct nhmsg *nhm = mnl_nlmsg_put_extra_header(nlh, sizeof(*nhm));

		nhm->nh_family = family;	/* the rest zero, as strict checking wants */
	} else {
		struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

		ifi->ifi_family = family;
	}
	if (mnl_socket_sendto(k->dumps, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
		snprintf(err, errlen, "netlink: cannot ask the kernel for its %s: %s", what,
			 strerror(-ret));
		return ret;
	}
	for (;;) {
		n = mnl_socket_recvfrom(k->dumps, k->buf, sizeof(k->buf));
		if (n < 0) {
			ret = -errno;
			if (ret == -EINTR)
				continue;
			if (ret == -EAGAIN)
				snprintf(err, errlen, "netlink: the kernel did not finish the %s dump within %d s",
					 what, DUMP_TIMEOUT_S);
			else
				snprintf(err, errlen, "netlink: reading the %s dump: %s", what,
					 strerror(-ret));
			return ret;
		}
		ret = mnl_cb_run2(k->buf, (size_t)n, seq, k->dump_portid, dump_cb, k, ctl,
				  NLMSG_MIN_TYPE);
		if (ret == MNL_CB_STOP)
			return 0;
		if (ret < 0) {
			ret = -errno;
			/* a table that does not exist (yet) is an empty one */
			if (type == RTM_GETROUTE && ret == -ENOENT)
				return 0;
			/* a kernel before 5.3 has no nexthop objects, so no route names one */
			if (type == RTM_GETNEXTHOP && ret == -EOPNOTSUPP)
				return 0;
			snprintf(err, errlen, "netlink: the kernel's %s dump failed: %s", what,
				 strerror(-ret));
			return ret;
		}
	}
}

static int dumps_open(struct rxp_ksync *k, char *err, size_t errlen);

int ks_dump_all(struct rxp_ksync *k, char *err, size_t errlen)
{
	int ret;

	if (!k->dumps) {	/* a failed dump closed it */
		ret = dumps_open(k, err, errlen);
		if (ret)
			return ret;
	}
	for (unsigned i = 0; i < k->n_map; i++) {
		k->map[i].ifindex = 0;
		k->map[i].up = k->map[i].running = false;
	}
	k->last_map_hit = 0;
	ret = dump(k, RTM_GETLINK, AF_UNSPEC, "link", err, errlen);
	/* the objects before the routes that name them */
	if (!ret) {
		ks_kobj_dump_begin(k);
		ret = dump(k, RTM_GETNEXTHOP, AF_UNSPEC, "nexthop", err, errlen);
		if (!ret)
			ks_kobj_dump_end(k);
	}
	if (!ret)
		ret = dump(k, RTM_GETROUTE, AF_INET, "IPv4 route", err, errlen);
	if (!ret)
		ret = dump(k, RTM_GETROUTE, AF_INET6, "IPv6 route", err, errlen);
	if (!ret)
		ret = dump(k, RTM_GETNEIGH, AF_INET, "IPv4 neighbour", err, errlen);
	if (!ret)
		ret = dump(k, RTM_GETNEIGH, AF_INET6, "IPv6 neighbour", err, errlen);
	if (ret) {
		/* the next dump gets a fresh socket, free of this one's rest */
		mnl_socket_close(k->dumps);
		k->dumps = NULL;
	}
	return ret;
}

/* ---- sockets ---- */

static int dumps_open(struct rxp_ksync *k, char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = DUMP_TIMEOUT_S };
	int one = 1, ret;

	k->dumps = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!k->dumps) {
		ret = -errno;
		snprintf(err, errlen, "netlink: cannot open a route socket: %s", strerror(-ret));
		return ret;
	}
	if (mnl_socket_bind(k->dumps, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		snprintf(err, errlen, "netlink: cannot bind the route socket: %s", strerror(-ret));
		goto fail;
	}
	k->dump_portid = mnl_socket_get_portid(k->dumps);
	/* a dump must not hang the control thread forever */
	setsockopt(mnl_socket_get_fd(k->dumps), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/* strict checking lets the kernel filter route dumps by table (Linux 4.20+); optional */
	mnl_socket_setsockopt(k->dumps, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	return 0;
fail:
	mnl_socket_close(k->dumps);
	k->dumps = NULL;
	return ret;
}

static int events_open(struct rxp_ksync *k, uint32_t buffer_bytes, char *err, size_t errlen)
{
	const unsigned groups = RTMGRP_LINK | RTMGRP_NEIGH | RTMGRP_IPV4_IFADDR |
				RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
	int fd, size = (int)ks_count_int(buffer_bytes), ret, group;

	k->events = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!k->events) {
		ret = -errno;
		snprintf(err, errlen, "netlink: cannot open a route socket: %s%s", strerror(-ret),
			 ret == -EMFILE || ret == -ENFILE ? " (too many open files: raise ulimit -n)" : "");
		return ret;
	}
	if (mnl_socket_bind(k->events, groups, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		snprintf(err, errlen, "netlink: cannot subscribe to route and neighbour changes: %s%s",
			 strerror(-ret),
			 ret == -EPERM || ret == -EACCES ? " (a security policy forbids it; run as root)" : "");
		goto fail;
	}
	/* nexthop objects (FRR's): no RTMGRP_ bit names their group, joined by number */
	group = RTNLGRP_NEXTHOP;
	if (mnl_socket_setsockopt(k->events, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) &&
	    errno != EINVAL) {	/* EINVAL: a kernel before 5.3, without them */
		ret = -errno;
		snprintf(err, errlen, "netlink: cannot subscribe to nexthop changes: %s", strerror(-ret));
		goto fail;
	}
	/* a routing daemon can push a million routes at once: room, so overruns stay rare */
	fd = mnl_socket_get_fd(k->events);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	return 0;
fail:
	mnl_socket_close(k->events);
	k->events = NULL;
	return ret;
}

int ks_nl_open(struct rxp_ksync *k, uint32_t event_buffer_bytes, char *err, size_t errlen)
{
	int ret;

	/* subscribe first: a change between the dump and the subscription would be lost */
	ret = events_open(k, event_buffer_bytes, err, errlen);
	if (ret)
		return ret;
	ret = dumps_open(k, err, errlen);
	if (ret)
		return ret;
	/* know the mapped interfaces before the first event comes */
	return dump(k, RTM_GETLINK, AF_UNSPEC, "link", err, errlen);
}

void ks_nl_close(struct rxp_ksync *k)
{
	if (k->events)
		mnl_socket_close(k->events);
	if (k->dumps)
		mnl_socket_close(k->dumps);
}

int ks_events_fd(const struct rxp_ksync *k)
{
	return mnl_socket_get_fd(k->events);
}

/* ---- the event socket ---- */

/* Discards the events queued before a full dump: the dump supersedes them. */
void ks_events_discard(struct rxp_ksync *k)
{
	/* bounded: under a storm, what arrives during the dump is read by the next run */
	for (unsigned i = 0; i < 16 * EVENT_BUDGET; i++)
		if (mnl_socket_recvfrom(k->events, k->buf, sizeof(k->buf)) < 0 && errno != ENOBUFS &&
		    errno != EINTR && errno != ENOSPC)
			break;
}

int ks_events_read(struct rxp_ksync *k, char *err, size_t errlen)
{
	int ret;

	for (unsigned i = 0; i < EVENT_BUDGET; i++) {
		ssize_t n = mnl_socket_recvfrom(k->events, k->buf, sizeof(k->buf));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == ENOBUFS || errno == ENOSPC) {
				/* the kernel dropped events for us: only a full dump can tell what changed */
				k->st.overruns++;
				k->next_resync_ns = 0;
				break;
			}
			ret = -errno;
			snprintf(err, errlen, "netlink: reading kernel route events: %s",
				 strerror(-ret));
			return ret;
		}
		mnl_cb_run(k->buf, (size_t)n, 0, 0, event_cb, k);
	}
	ks_kobj_refresh(k);	/* once per batch: a storm of nexthop changes costs one scan */
	return 0;
}

void ks_nl_feed(struct rxp_ksync *k, const void *buf, size_t len)
{
	mnl_cb_run(buf, len, 0, 0, event_cb, k);
	ks_kobj_refresh(k);
}
