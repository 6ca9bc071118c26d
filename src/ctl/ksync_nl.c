/* SPDX-License-Identifier: MIT */
/*
 * Kernel sync's rtnetlink side (ksync_priv.h; the design is told in
 * ksync.c): parses route, neighbour, link and address messages, applies
 * them to the table and hands each change to ks_reconcile(); runs the dumps
 * and reads the event socket.
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
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

static bool attr_u32(const struct nlattr *a, uint32_t *out)
{
	if (!a || mnl_attr_get_payload_len(a) < 4)
		return false;
	*out = mnl_attr_get_u32(a);
	return true;
}

/* Copies an address attribute of @alen bytes into a zeroed 16-byte buffer. */
static bool attr_addr(const struct nlattr *a, unsigned alen, uint8_t out[16])
{
	memset(out, 0, 16);
	if (!a || mnl_attr_get_payload_len(a) != alen)
		return false;
	memcpy(out, mnl_attr_get_payload(a), alen);
	return true;
}

/* Returns the port-map index of kernel interface @ifindex, or -1. */
static int port_of_ifindex(struct rxp_ksync *k, int ifindex)
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
	V_MIRROR,
};

struct kroute {
	struct key key;
	uint32_t metric;
	uint16_t port;
	bool has_gw;
	uint8_t gw[16];
	unsigned n_hops;	/* nexthops the message listed */
	bool multipath;		/* it came as RTA_MULTIPATH */
};

/* Why no nexthop could be chosen, for the counters. */
enum nh_pick { PICK_OK, PICK_UNMAPPED, PICK_UNSUPPORTED };

/*
 * Considers one nexthop for @out: the lowest (gateway, interface) of the live,
 * mapped ones wins. Not "the first": the kernel lists the nexthops of an
 * IPv6 route in one order in dumps and another in events, and the choice
 * must not flip between the two.
 */
static enum nh_pick consider_nexthop(struct rxp_ksync *k, struct kroute *out, bool *chosen,
				     int *chosen_oif, int oif, const struct nlattr *gw_attr,
				     bool via, unsigned alen)
{
	uint8_t gw[16];
	bool has_gw;
	int port;

	if (via || oif <= 0)	/* a gateway of another family; a nexthop object without compat info */
		return PICK_UNSUPPORTED;
	port = port_of_ifindex(k, oif);
	if (port < 0)
		return PICK_UNMAPPED;
	has_gw = attr_addr(gw_attr, alen, gw);
	if (*chosen) {
		int order = memcmp(gw, out->gw, 16);

		if (order > 0 || (order == 0 && oif >= *chosen_oif))
			return PICK_OK;
	}
	*chosen = true;
	*chosen_oif = oif;
	out->has_gw = has_gw;
	memcpy(out->gw, gw, 16);
	out->port = (uint16_t)port;
	return PICK_OK;
}

/* Chooses among the nexthops of RTA_MULTIPATH (rxpath has one per route). */
static enum nh_pick pick_multipath(struct rxp_ksync *k, const struct nlattr *mp, unsigned alen,
				   struct kroute *out)
{
	const struct rtnexthop *nh = mnl_attr_get_payload(mp);
	int left = mnl_attr_get_payload_len(mp), chosen_oif = 0;
	enum nh_pick why = PICK_UNSUPPORTED;
	bool chosen = false;

	while (left >= (int)sizeof(*nh) && nh->rtnh_len >= sizeof(*nh) && nh->rtnh_len <= left) {
		const struct nlattr *tb[RTA_MAX + 1] = { 0 };
		struct attr_set set = { tb, RTA_MAX };

		out->n_hops++;
		if (!(nh->rtnh_flags & RTNH_F_DEAD) &&
		    mnl_attr_parse_payload(RTNH_DATA(nh), nh->rtnh_len - RTNH_LENGTH(0),
					   attr_collect, &set) >= 0) {
			enum nh_pick p = consider_nexthop(k, out, &chosen, &chosen_oif,
							  nh->rtnh_ifindex, tb[RTA_GATEWAY],
							  tb[RTA_VIA] != NULL, alen);

			if (p == PICK_UNMAPPED)
				why = p;
		}
		left -= RTNH_ALIGN(nh->rtnh_len);
		nh = RTNH_NEXT(nh);
	}
	return chosen ? PICK_OK : why;
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
	struct attr_set set = { tb, RTA_MAX };
	struct rxp_ksync_skips none = { 0 };
	enum nh_pick pick;
	uint32_t table, u32;
	unsigned alen;

	if (!skips)
		skips = &none;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm) ||
	    (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6))
		return V_OTHER;
	alen = rtm->rtm_family == AF_INET ? 4 : 16;
	if (rtm->rtm_dst_len > alen * 8 || mnl_attr_parse(nlh, sizeof(*rtm), attr_collect, &set) < 0)
		return V_OTHER;
	table = rtm->rtm_table;
	if (attr_u32(tb[RTA_TABLE], &u32))	/* tables above 255 only say so here */
		table = u32;
	/* a cloned (cache) entry is no FIB route: it neither adds nor replaces one */
	if (table != k->table || (rtm->rtm_flags & RTM_F_CLONED))
		return V_OTHER;

	memset(out, 0, sizeof(*out));
	out->key.kind = KIND_ROUTE;
	out->key.family = alen == 4 ? 4 : 6;
	out->key.plen = rtm->rtm_dst_len;
	if (tb[RTA_DST] && !attr_addr(tb[RTA_DST], alen, out->key.addr))
		return V_OTHER;
	mask_prefix(out->key.addr, out->key.plen);
	if (!attr_u32(tb[RTA_PRIORITY], &out->metric))
		out->metric = 0;

	/* rxpath makes its own connected, local and link-local routes from its addresses */
	if (rtm->rtm_protocol == RTPROT_KERNEL ||
	    (alen == 16 && (out->key.addr[0] == 0xff ||
			    (out->key.addr[0] == 0xfe && (out->key.addr[1] & 0xc0) == 0x80)))) {
		skips->kernel++;
		return V_SKIP;
	}
	/* the types that lead nowhere have no nexthop: rxpath has the same three */
	if ((rtm->rtm_type == RTN_BLACKHOLE || rtm->rtm_type == RTN_UNREACHABLE ||
	     rtm->rtm_type == RTN_PROHIBIT) && !rtm->rtm_src_len && !rtm->rtm_tos) {
		out->n_hops = 1;
		out->has_gw = false;
		memset(out->gw, 0, sizeof(out->gw));
		out->port = (uint16_t)(NH_PORT_REJECT |
				       (rtm->rtm_type == RTN_BLACKHOLE ? REJECT_BLACKHOLE :
					rtm->rtm_type == RTN_UNREACHABLE ? REJECT_UNREACHABLE :
					REJECT_PROHIBIT));
		return V_MIRROR;
	}
	if (rtm->rtm_type != RTN_UNICAST || rtm->rtm_src_len || rtm->rtm_tos ||
	    (rtm->rtm_flags & RTNH_F_DEAD)) {
		skips->unsupported++;
		return V_SKIP;
	}
	if (tb[RTA_MULTIPATH]) {
		out->multipath = true;
		pick = pick_multipath(k, tb[RTA_MULTIPATH], alen, out);
	} else {
		bool chosen = false;
		int chosen_oif = 0;

		out->n_hops = 1;
		pick = consider_nexthop(k, out, &chosen, &chosen_oif,
					attr_u32(tb[RTA_OIF], &u32) ? (int)u32 : 0, tb[RTA_GATEWAY],
					tb[RTA_VIA] != NULL, alen);
	}
	if (pick != PICK_OK) {
		if (pick == PICK_UNMAPPED)
			skips->unmapped++;
		else
			skips->unsupported++;
		return V_SKIP;
	}
	skips->multipath += out->n_hops > 1;
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
	struct attr_set set = { tb, NDA_MAX };
	const uint8_t *mac;
	bool mirrorable;
	unsigned alen;
	int port;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ndm) ||
	    (ndm->ndm_family != AF_INET && ndm->ndm_family != AF_INET6) ||
	    (ndm->ndm_flags & NTF_PROXY))
		return V_OTHER;
	alen = ndm->ndm_family == AF_INET ? 4 : 16;
	if (mnl_attr_parse(nlh, sizeof(*ndm), attr_collect, &set) < 0)
		return V_OTHER;
	memset(out, 0, sizeof(*out));
	if (!attr_addr(tb[NDA_DST], alen, out->key.addr))
		return V_OTHER;
	mirrorable = (ndm->ndm_state & resolved) && tb[NDA_LLADDR] &&
		     mnl_attr_get_payload_len(tb[NDA_LLADDR]) == 6;
	if (mirrorable) {
		mac = mnl_attr_get_payload(tb[NDA_LLADDR]);
		mirrorable = rxp_eth_is_unicast(mac);
		memcpy(out->mac, mac, 6);
	}
	port = port_of_ifindex(k, ndm->ndm_ifindex);
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
	uint32_t nh = ks_nh_get(k, kr->key.family, kr->has_gw, kr->port, kr->gw);
	struct rec *r;

	if (!nh)
		goto full;
	r = ks_rec_find(k, &kr->key, kr->metric);
	if (r) {
		/* IPv4 keeps appended duplicates of a key; the first one dumped is the one used */
		if (from_dump && (r->flags & F_SEEN)) {
			ks_nh_put(k, nh);
			r->flags |= F_DUP;
			return r;
		}
		if (r->r.nh != nh) {
			ks_nh_put(k, r->r.nh);
			r->r.nh = nh;
			r->flags &= (uint8_t)~F_REFUSED;	/* new content: worth a try */
			r->err = 0;
		} else {
			ks_nh_put(k, nh);
		}
		r->flags &= (uint8_t)~F_DEAD;
	} else {
		r = ks_rec_insert(k, &kr->key, kr->metric);
		if (!r) {
			ks_nh_put(k, nh);
			goto full;
		}
		r->r.nh = nh;
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
	to->multipath += from->multipath;
}

/* Returns true when nexthop @id is the one @kr chose. */
static bool nh_is(const struct rxp_ksync *k, uint32_t id, const struct kroute *kr)
{
	const struct nexthop *nh = &k->nhs[id];

	return nh->family == kr->key.family && nh->has_gw == kr->has_gw && nh->port == kr->port &&
	       !memcmp(nh->gw, kr->gw, 16);
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
	if (r && !is_new && !kr.multipath && (r->flags & F_MULTI)) {
		/*
		 * One nexthop of an IPv6 multipath route went, and the kernel does
		 * not say which remain. Only when it was rxpath's one does that matter.
		 */
		if (v == V_MIRROR && nh_is(k, r->r.nh, &kr))
			resync_soon(k);
		return;
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
	if (r) {
		ks_reconcile(k, r, false);
		ks_clear_done(k, &kr.key);
	}
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
 * a word from the kernel: resync soon.
 */
static void link_msg(struct rxp_ksync *k, const struct nlmsghdr *nlh)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[IFLA_MAX + 1] = { 0 };
	struct attr_set set = { tb, IFLA_MAX };
	const char *name = NULL;
	bool gone = nlh->nlmsg_type == RTM_DELLINK;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi) ||
	    mnl_attr_parse(nlh, sizeof(*ifi), attr_collect, &set) < 0)
		return;
	if (tb[IFLA_IFNAME] && mnl_attr_validate(tb[IFLA_IFNAME], MNL_TYPE_NUL_STRING) == 0)
		name = mnl_attr_get_str(tb[IFLA_IFNAME]);
	for (unsigned i = 0; i < k->n_map; i++) {
		struct map_entry *m = &k->map[i];
		bool named = !gone && name && !strcmp(name, m->ifname);

		if (named) {
			bool up = ifi->ifi_flags & IFF_UP;

			if (m->ifindex && m->ifindex != ifi->ifi_index)
				resync_soon(k);
			if (m->up && !up)
				resync_soon(k);
			m->ifindex = ifi->ifi_index;
			m->up = up;
		} else if (m->ifindex == ifi->ifi_index) {	/* deleted or renamed away */
			m->ifindex = 0;
			m->up = false;
			resync_soon(k);
		}
	}
}

/* Deleting an IPv4 address also drops, silently, the routes through its subnet. */
static void addr_event(struct rxp_ksync *k, const struct nlmsghdr *nlh)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(*ifa) && ifa->ifa_family == AF_INET &&
	    port_of_ifindex(k, (int)ifa->ifa_index) >= 0)
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
		/* with strict checking on, the kernel dumps only this table */
		mnl_attr_put_u32(nlh, RTA_TABLE, k->table);
	} else if (type == RTM_GETNEIGH) {
		struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));

		ndm->ndm_family = family;
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
		k->map[i].up = false;
	}
	k->last_map_hit = 0;
	ret = dump(k, RTM_GETLINK, AF_UNSPEC, "link", err, errlen);
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
	int fd, size = (int)ks_count_int(buffer_bytes), ret;

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
	return 0;
}
