/* SPDX-License-Identifier: MIT */
/*
 * Kernel route and neighbour sync over rtnetlink (ksync.h).
 *
 * State: one open-addressing hash table of records, one per kernel route
 * (family, prefix, length, metric) and per neighbour (family, address,
 * port), and a pool of interned nexthop sets that records point to by id,
 * so a million routes through a few gateways cost 40 bytes each. A set is
 * one path (gateway, port) or the paths of a multipath route with their
 * weights, sorted so that the kernel's order (which differs between dumps
 * and events) does not matter: an unchanged set is the same id, and
 * nothing is emitted. Records of one prefix (its metrics) hash alike and
 * so sit in one probe cluster, where ks_reconcile() finds them together.
 *
 * A record holds what the kernel has (nh, mac) and, on the one record of a
 * prefix that "owns" it, what ksync told rxpath (inst_nh, inst_mac). Every
 * change, whether from an event or a dump, ends in ks_reconcile(), which
 * compares the two and emits the line that makes rxpath match the kernel.
 *
 * A route may name a kernel nexthop object (ip nexthop, FRR) instead of
 * its gateways; ksync_nexthop.c keeps the objects and resolves the route
 * into its set, again when the object changes. Such a route has a record
 * even while its object gives nothing rxpath can have (nh 0, with why):
 * the object may change without a word about the route.
 *
 * Files: ksync_table.c holds the table, ksync_nl.c speaks rtnetlink and
 * feeds every change to ks_reconcile(), ksync_nexthop.c the nexthop
 * objects; this one decides what to emit and holds the API; ksync_priv.h
 * is what they share.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ksync_priv.h"
#include "core/clock.h"

#define TABLE_MIN_SLOTS 1024u
#define NH_INDEX_MIN 64u
#define RESYNC_RETRY_NS 1000000000ull	/* after a failed dump */
#define DUMP_ATTEMPTS 3			/* dumps the kernel marked inconsistent are redone */


/* An errno for a uint8_t field. */
static uint8_t err_code(int ret)
{
	return (uint8_t)(ret < 0 ? (-ret > 255 ? 255 : -ret) : (ret > 255 ? 255 : ret));
}

/* A count for an int return. */
int ks_count_int(uint64_t n)
{
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

/* ---- lines ---- */

static const char *port_name(const struct rxp_ksync *k, uint16_t port)
{
	return k->map[port].port;
}

static void format_addr(uint8_t family, const uint8_t *addr, char *out, size_t len)
{
	if (!inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, out, (socklen_t)len))
		snprintf(out, len, "?");
}

/* Hands @line to the caller. Returns what the apply callback returned. */
static int emit(struct rxp_ksync *k, const char *line, bool is_add)
{
	int ret = k->apply(k->ctx, line);

	if (is_add) {
		k->st.lines_add++;
		k->st.lines_refused += ret != 0;
	} else {
		k->st.lines_del++;
		k->st.lines_del_failed += ret != 0;
	}
	return ret;
}

/* The route type word of a rejecting nexthop's port, NULL for a real port. */
static const char *reject_type(uint16_t port)
{
	if ((port & NH_PORT_REJECT) != NH_PORT_REJECT)
		return NULL;
	switch (port & 0xffu) {
	case REJECT_BLACKHOLE: return "blackhole";
	case REJECT_UNREACHABLE: return "unreachable";
	default: return "prohibit";
	}
}

/* Appends to @line (RXP_KSYNC_LINE_MAX bytes) at *@len. Returns false once it does not fit. */
static bool __attribute__((format(printf, 3, 4)))
line_put(char *line, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= RXP_KSYNC_LINE_MAX)
		return false;
	va_start(ap, fmt);
	n = vsnprintf(line + *len, RXP_KSYNC_LINE_MAX - *len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= RXP_KSYNC_LINE_MAX - *len) {
		*len = RXP_KSYNC_LINE_MAX;
		return false;
	}
	*len += (size_t)n;
	return true;
}

/* " via GW dev PORT" or " dev PORT" of @p. */
static bool put_path(const struct rxp_ksync *k, uint8_t family, const struct ks_path *p,
		     char *line, size_t *len)
{
	char gw[INET6_ADDRSTRLEN];

	if (p->has_gw) {
		format_addr(family, p->gw, gw, sizeof(gw));
		if (!line_put(line, len, " via %s", gw))
			return false;
	}
	return line_put(line, len, " dev %s", port_name(k, p->port));
}

/*
 * "route add P via GW dev PORT", "route add P blackhole", or a multipath
 * route's "route add P nexthop via GW dev PORT weight W nexthop ...".
 * Returns what the apply callback returned, or -E2BIG for a line too long
 * to give (a cut one would say other next hops).
 */
static int emit_route_add(struct rxp_ksync *k, const struct rec *r)
{
	const struct nexthop *nh = &k->nhs[r->r.nh];
	const struct ks_path *p = ks_nh_paths(nh);
	char line[RXP_KSYNC_LINE_MAX], prefix[INET6_ADDRSTRLEN];
	const char *type = reject_type(p->port);
	size_t len = 0;
	bool ok;

	format_addr(r->family, r->addr, prefix, sizeof(prefix));
	ok = line_put(line, &len, "route add %s/%u", prefix, r->plen) &&
	     (!r->port || line_put(line, &len, " vrf %s", k->vrf_name[r->port - 1]));
	if (type) {
		ok = ok && line_put(line, &len, " %s", type);
	} else if (nh->n_paths == 1) {
		ok = ok && put_path(k, nh->family, p, line, &len);
	} else {
		for (unsigned i = 0; ok && i < nh->n_paths; i++)
			ok = line_put(line, &len, " nexthop") &&
			     put_path(k, nh->family, &p[i], line, &len) &&
			     line_put(line, &len, " weight %u", p[i].weight);
	}
	if (!ok)
		return -E2BIG;
	return emit(k, line, true);
}

static void emit_route_del(struct rxp_ksync *k, const struct rec *r)
{
	char line[RXP_KSYNC_LINE_MAX], prefix[INET6_ADDRSTRLEN];

	format_addr(r->family, r->addr, prefix, sizeof(prefix));
	snprintf(line, sizeof(line), "route del %s/%u%s%s", prefix, r->plen, r->port ? " vrf " : "",
		 r->port ? k->vrf_name[r->port - 1] : "");
	emit(k, line, false);
}

static int emit_neigh(struct rxp_ksync *k, const struct rec *r, bool add)
{
	char line[RXP_KSYNC_LINE_MAX], addr[INET6_ADDRSTRLEN];
	const uint8_t *m = r->n.mac;

	format_addr(r->family, r->addr, addr, sizeof(addr));
	if (add)
		snprintf(line, sizeof(line),
			 "neigh add %s lladdr %02x:%02x:%02x:%02x:%02x:%02x dev %s", addr, m[0],
			 m[1], m[2], m[3], m[4], m[5], port_name(k, r->port));
	else
		snprintf(line, sizeof(line), "neigh del %s dev %s", addr, port_name(k, r->port));
	return emit(k, line, add);
}

/* ---- reconcile ---- */

static void set_refused(struct rec *r, int ret)
{
	r->flags |= F_REFUSED;
	r->err = err_code(ret);
}

/*
 * Refused because a configured route or neighbour holds the key: rxpath keeps
 * a copy for when that one goes, so it must hear when this one goes too.
 */
static bool waits_under_configured(const struct rec *r)
{
	return (r->flags & F_REFUSED) && r->err == EEXIST;
}

/* Moves the ownership of a prefix (and the reference to what rxpath has) between its records. */
static void move_owner(struct rec *from, struct rec *to)
{
	if (from == to)
		return;
	to->flags |= F_INSTALLED;
	to->r.inst_nh = from->r.inst_nh;
	from->flags &= (uint8_t)~F_INSTALLED;
	from->r.inst_nh = 0;
}

/* Forgets what rxpath has for @owner's prefix; @del also tells rxpath to delete it. */
static void route_uninstall(struct rxp_ksync *k, struct rec *owner, bool del)
{
	if (del)
		emit_route_del(k, owner);
	ks_nh_put(k, owner->r.inst_nh);
	owner->r.inst_nh = 0;
	owner->flags &= (uint8_t)~F_INSTALLED;
}

/*
 * Makes rxpath's route for the prefix of @any match the kernel: the live
 * record with the lowest metric wins (as in the kernel's FIB). @retry also
 * re-emits what rxpath refused before. Marks the prefix's records F_DONE.
 * Never inserts or frees records, so pointers stay valid. Afterwards either
 * the best record owns the prefix with its own nexthop, or nobody does and
 * rxpath has nothing from ksync for it.
 */
static void route_reconcile(struct rxp_ksync *k, const struct rec *any, bool retry)
{
	struct key key = ks_key_of(any);
	struct rec *owner = NULL, *best = NULL, *under = NULL;
	int ret;

	for (uint32_t i = ks_key_hash(&key) & k->mask; k->slots[i].kind; i = (i + 1) & k->mask) {
		struct rec *r = &k->slots[i];

		if (!ks_rec_in_group(r, &key))
			continue;
		r->flags |= F_DONE;
		if (r->flags & F_INSTALLED)
			owner = r;
		if (waits_under_configured(r))
			under = r;
		/* one whose nexthop object gives nothing rxpath can have is no candidate */
		if (!(r->flags & F_DEAD) && r->r.nh && (!best || r->metric < best->metric))
			best = r;
	}
	if (!best) {
		if (owner) {
			route_uninstall(k, owner, true);
		} else if (under) {
			emit_route_del(k, under);	/* rxpath forgets the copy it keeps */
			under->flags &= (uint8_t)~F_REFUSED;	/* held with nothing to mirror: it waits no more */
			under->err = 0;
		}
		return;
	}
	if (owner && owner->r.inst_nh == best->r.nh) {
		move_owner(owner, best);
		best->flags &= (uint8_t)~F_REFUSED;
		best->err = 0;
		return;
	}
	/* one under a configured route is offered again: that one may have gone (or takes the news) */
	if (!(best->flags & F_REFUSED) || retry || waits_under_configured(best)) {
		/* "route add" replaces an existing prefix in rxpath: no del first, no gap */
		ret = emit_route_add(k, best);
		if (!ret) {
			if (owner)
				route_uninstall(k, owner, false);
			ks_nh_ref(k, best->r.nh);
			best->r.inst_nh = best->r.nh;
			best->flags = (uint8_t)((best->flags | F_INSTALLED) & ~F_REFUSED);
			best->err = 0;
			return;
		}
		set_refused(best, ret);
	}
	/*
	 * refused: rxpath must not go on forwarding along a route the kernel
	 * has replaced; but under a configured route, rxpath's copy of the
	 * kernel's is the new one already, which a del would take
	 */
	if (owner)
		route_uninstall(k, owner, !waits_under_configured(best));
}

/* The same for a neighbour record: there is one per key. */
static void neigh_reconcile(struct rxp_ksync *k, struct rec *r, bool retry)
{
	int ret;

	r->flags |= F_DONE;
	if (!(r->flags & F_DEAD)) {
		if ((r->flags & F_INSTALLED) && !memcmp(r->n.inst_mac, r->n.mac, 6)) {
			r->flags &= (uint8_t)~F_REFUSED;
			r->err = 0;
			return;
		}
		if (!(r->flags & F_REFUSED) || retry || waits_under_configured(r)) {
			ret = emit_neigh(k, r, true);
			if (!ret) {
				memcpy(r->n.inst_mac, r->n.mac, 6);
				r->flags = (uint8_t)((r->flags | F_INSTALLED) & ~F_REFUSED);
				r->err = 0;
				return;
			}
			set_refused(r, ret);
		}
	}
	/*
	 * gone: rxpath must not keep it (nor its copy under a configured one);
	 * refused: nor the old MAC, unless a configured neighbour holds the
	 * address, under which rxpath keeps the new one already
	 */
	if ((r->flags & F_DEAD) ? (r->flags & F_INSTALLED) || waits_under_configured(r) :
				  (r->flags & F_INSTALLED) && !waits_under_configured(r))
		emit_neigh(k, r, false);
	r->flags &= (uint8_t)~F_INSTALLED;
}

void ks_reconcile(struct rxp_ksync *k, struct rec *r, bool retry)
{
	if (r->kind == KIND_ROUTE)
		route_reconcile(k, r, retry);
	else
		neigh_reconcile(k, r, retry);
}

/* Clears F_DONE after an incremental reconcile (only this cluster was touched). */
void ks_clear_done(struct rxp_ksync *k, const struct key *key)
{
	for (uint32_t i = ks_key_hash(key) & k->mask; k->slots[i].kind; i = (i + 1) & k->mask)
		k->slots[i].flags &= (uint8_t)~F_DONE;
}

/* Frees the dead records and clears F_DONE on the rest. */
static void free_dead(struct rxp_ksync *k)
{
	for (uint32_t i = 0; i <= k->mask;) {
		struct rec *r = &k->slots[i];

		if (r->kind && (r->flags & F_DEAD)) {
			ks_rec_free(k, r);	/* a later record may now sit in slot i: look again */
			continue;
		}
		r->flags &= (uint8_t)~F_DONE;
		i++;
	}
}

/* Reconciles every prefix once, then frees the dead records. */
static void reconcile_all(struct rxp_ksync *k, bool retry)
{
	for (uint32_t i = 0; i <= k->mask; i++)
		if (k->slots[i].kind && !(k->slots[i].flags & F_DONE))
			ks_reconcile(k, &k->slots[i], retry);
	free_dead(k);
}

/* An event says @key/@metric is gone (or no longer mirrorable). */
void ks_rec_forget(struct rxp_ksync *k, const struct key *key, uint32_t metric)
{
	struct rec *r = ks_rec_find(k, key, metric);

	if (!r)
		return;
	r->flags |= F_DEAD;
	ks_reconcile(k, r, false);
	ks_clear_done(k, key);
	ks_rec_free(k, r);
}

void ks_forget_marked(struct rxp_ksync *k)
{
	for (uint32_t i = 0; i <= k->mask; i++)
		if (k->slots[i].kind && (k->slots[i].flags & F_DEAD) && !(k->slots[i].flags & F_DONE))
			ks_reconcile(k, &k->slots[i], false);
	free_dead(k);
}

/* ---- resync, run, withdraw ---- */

int rxp_ksync_resync(struct rxp_ksync *k, char *err, size_t errlen)
{
	uint64_t start = rxp_clock_ns(), lines = k->st.lines_add + k->st.lines_del;
	int ret = 0;

	ks_events_discard(k);
	for (unsigned attempt = 0; attempt < DUMP_ATTEMPTS; attempt++) {
		for (uint32_t i = 0; i <= k->mask; i++)
			k->slots[i].flags &= (uint8_t)~(F_SEEN | F_DUP);
		memset(&k->dump_skips, 0, sizeof(k->dump_skips));
		k->dump_intr = false;
		ret = ks_dump_all(k, err, errlen);
		if (ret || !k->dump_intr)
			break;
		k->st.dump_retries++;
	}
	if (ret) {
		/* nothing is deleted on a failed dump */
		k->last_resync_end_ns = rxp_clock_ns();
		k->next_resync_ns = k->last_resync_end_ns + RESYNC_RETRY_NS;
		return ret;
	}
	for (uint32_t i = 0; i <= k->mask; i++)
		if (k->slots[i].kind && !(k->slots[i].flags & F_SEEN))
			k->slots[i].flags |= F_DEAD;
	reconcile_all(k, true);
	ks_kobj_clean(k);	/* every route through a changed object was resolved again */
	k->st.resyncs++;
	k->st.last_dump = k->dump_skips;
	ks_add_skips(&k->st.skipped, &k->dump_skips);
	k->last_resync_end_ns = rxp_clock_ns();
	k->st.last_resync_us = (k->last_resync_end_ns - start) / 1000;
	k->next_resync_ns = k->last_resync_end_ns + k->interval_ns;
	if (k->dump_intr)	/* still inconsistent after every attempt: look again soon */
		k->next_resync_ns = k->last_resync_end_ns + RESYNC_RETRY_NS;
	return ks_count_int(k->st.lines_add + k->st.lines_del - lines);
}

int rxp_ksync_run(struct rxp_ksync *k, char *err, size_t errlen)
{
	uint64_t lines = k->st.lines_add + k->st.lines_del;
	int ret = ks_events_read(k, err, errlen);

	if (ret < 0)
		return ret;
	if (rxp_clock_ns() >= k->next_resync_ns) {
		ret = rxp_ksync_resync(k, err, errlen);
		if (ret < 0)
			return ret;
	}
	return ks_count_int(k->st.lines_add + k->st.lines_del - lines);
}

void rxp_ksync_reoffer(struct rxp_ksync *k)
{
	for (uint32_t i = 0; i <= k->mask; i++) {
		struct rec *r = &k->slots[i];

		if (r->kind && !(r->flags & (F_DONE | F_DEAD)) && waits_under_configured(r))
			ks_reconcile(k, r, false);
	}
	for (uint32_t i = 0; i <= k->mask; i++)
		k->slots[i].flags &= (uint8_t)~F_DONE;
}

int rxp_ksync_withdraw(struct rxp_ksync *k)
{
	uint64_t lines = k->st.lines_add + k->st.lines_del;

	for (uint32_t i = 0; i <= k->mask; i++)
		if (k->slots[i].kind)
			k->slots[i].flags |= F_DEAD;
	reconcile_all(k, false);
	return ks_count_int(k->st.lines_add + k->st.lines_del - lines);
}

/* ---- open, close, queries ---- */

int rxp_ksync_open(struct rxp_ksync **out, const struct rxp_ksync_config *cfg, char *err,
		   size_t errlen)
{
	struct rxp_ksync *k;
	int ret;

	*out = NULL;
	if (!cfg->apply || (cfg->n_map && !cfg->map)) {
		snprintf(err, errlen, "ksync: no apply callback or port map given");
		return -EINVAL;
	}
	if (cfg->n_map > UINT16_MAX) {
		snprintf(err, errlen, "ksync: %u ports in the map: at most %u", cfg->n_map, UINT16_MAX);
		return -EINVAL;
	}
	for (unsigned i = 0; i < cfg->n_map; i++) {
		const struct rxp_ksync_port_map *m = &cfg->map[i];

		if (!m->ifname || !m->port || !m->ifname[0] || !m->port[0] ||
		    strlen(m->ifname) >= IF_NAMESIZE || strlen(m->port) >= NAME_MAX_LEN) {
			snprintf(err, errlen,
				 "ksync: port map entry %u: expected a kernel interface name (under %d characters) and a port name",
				 i, IF_NAMESIZE);
			return -EINVAL;
		}
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(cfg->map[j].ifname, m->ifname)) {
				snprintf(err, errlen, "ksync: kernel interface '%s' is mapped twice",
					 m->ifname);
				return -EINVAL;
			}
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		goto nomem;
	k->table = cfg->table ? cfg->table : RXP_KSYNC_TABLE_MAIN;
	if (cfg->n_vrfs > RXP_KSYNC_VRFS_MAX) {
		snprintf(err, errlen, "ksync: %u VRFs: at most %u", cfg->n_vrfs, RXP_KSYNC_VRFS_MAX);
		ret = -EINVAL;
		goto fail;
	}
	for (unsigned v = 0; v < cfg->n_vrfs; v++) {
		if (strlen(cfg->vrfs[v].name) >= NAME_MAX_LEN || !cfg->vrfs[v].name[0] ||
		    cfg->vrfs[v].table == k->table) {
			snprintf(err, errlen, "ksync: VRF '%s' (table %u): a name of 1 to %d characters and another table than the main one's",
				 cfg->vrfs[v].name, cfg->vrfs[v].table, NAME_MAX_LEN - 1);
			ret = -EINVAL;
			goto fail;
		}
		k->vrf_table[v] = cfg->vrfs[v].table;
		snprintf(k->vrf_name[v], sizeof(k->vrf_name[v]), "%s", cfg->vrfs[v].name);
	}
	k->n_vrfs = cfg->n_vrfs;
	k->interval_ns = (uint64_t)(cfg->resync_interval_ms ? cfg->resync_interval_ms
							    : RXP_KSYNC_RESYNC_MS_DEFAULT) * 1000000ull;
	k->max_entries = cfg->max_entries ? cfg->max_entries : RXP_KSYNC_MAX_ENTRIES_DEFAULT;
	k->apply = cfg->apply;
	k->ctx = cfg->ctx;
	k->n_map = cfg->n_map;
	k->map = calloc(cfg->n_map ? cfg->n_map : 1, sizeof(*k->map));
	k->slots = calloc(TABLE_MIN_SLOTS, sizeof(*k->slots));
	k->mask = TABLE_MIN_SLOTS - 1;
	k->nh_cap = 64;
	k->nh_used = 1;
	k->nhs = calloc(k->nh_cap, sizeof(*k->nhs));
	k->nh_index = calloc(NH_INDEX_MIN, sizeof(*k->nh_index));
	k->nh_index_mask = NH_INDEX_MIN - 1;
	if (!k->map || !k->slots || !k->nhs || !k->nh_index || ks_kobj_init(k))
		goto nomem;
	for (unsigned i = 0; i < cfg->n_map; i++) {
		snprintf(k->map[i].ifname, sizeof(k->map[i].ifname), "%s", cfg->map[i].ifname);
		snprintf(k->map[i].port, sizeof(k->map[i].port), "%s", cfg->map[i].port);
		k->map[i].routes_only = cfg->map[i].routes_only;
	}
	ret = ks_nl_open(k, cfg->event_buffer_bytes ? cfg->event_buffer_bytes
					      : RXP_KSYNC_EVENT_BUFFER_DEFAULT, err, errlen);
	if (ret)
		goto fail;
	k->next_resync_ns = 0;	/* the first run syncs */
	*out = k;
	return 0;
nomem:
	snprintf(err, errlen, "ksync: out of memory");
	ret = -ENOMEM;
fail:
	rxp_ksync_close(k);
	return ret;
}

void rxp_ksync_close(struct rxp_ksync *k)
{
	if (!k)
		return;
	ks_nl_close(k);
	ks_kobj_free_all(k);
	if (k->nhs)
		ks_nh_free_all(k);
	free(k->nh_index);
	free(k->nhs);
	free(k->slots);
	free(k->map);
	free(k);
}

int rxp_ksync_fd(const struct rxp_ksync *k)
{
	return ks_events_fd(k);
}

int rxp_ksync_timeout_ms(const struct rxp_ksync *k)
{
	uint64_t now = rxp_clock_ns();

	if (now >= k->next_resync_ns)
		return 0;
	return ks_count_int((k->next_resync_ns - now + 999999) / 1000000);
}

const char *rxp_ksync_state_name(enum rxp_ksync_state state)
{
	switch (state) {
	case RXP_KSYNC_INSTALLED:
		return "installed";
	case RXP_KSYNC_REFUSED:
		return "refused";
	case RXP_KSYNC_SHADOWED:
		return "shadowed";
	case RXP_KSYNC_PENDING:
		return "pending";
	case RXP_KSYNC_SKIPPED:
		return "skipped";
	}
	return "?";
}

/* Why route @r has nothing to mirror, in words. */
static const char *why_text(uint8_t why)
{
	switch (why) {
	case WHY_UNMAPPED:
		return "no live nexthop on a mapped interface";
	case WHY_UNSUPPORTED:
		return "a nexthop rxpath cannot have (FDB, encapsulation, another family's gateway, "
		       "a weight above 256, more than 64)";
	case WHY_DEAD:
		return "no live nexthop";
	case WHY_UNKNOWN:
		return "a nexthop object the kernel has not described";
	case WHY_FULL:
		return "out of memory for its nexthops";
	default:
		return "nothing to mirror";
	}
}

/* Returns true when another live record of @r's prefix has a lower metric. */
static bool shadowed(const struct rxp_ksync *k, const struct rec *r)
{
	struct key key = ks_key_of(r);

	for (uint32_t i = ks_key_hash(&key) & k->mask; k->slots[i].kind; i = (i + 1) & k->mask) {
		const struct rec *o = &k->slots[i];

		if (o != r && ks_rec_in_group(o, &key) && o->metric < r->metric && o->r.nh)
			return true;
	}
	return false;
}

int rxp_ksync_foreach_route(const struct rxp_ksync *k, rxp_ksync_route_fn fn, void *ctx)
{
	struct rxp_ksync_path_info paths[KS_PATHS_MAX];

	for (uint32_t i = 0; i <= k->mask; i++) {
		const struct rec *r = &k->slots[i];
		const struct nexthop *nh;
		const struct ks_path *p;
		struct rxp_ksync_route_info info = { 0 };
		int ret;

		if (r->kind != KIND_ROUTE)
			continue;
		nh = &k->nhs[r->r.nh];
		p = ks_nh_paths(nh);
		info.family = r->family;
		info.plen = r->plen;
		memcpy(info.prefix, r->addr, 16);
		info.metric = r->metric;
		info.nhid = r->r.kid;
		info.vrf = r->port ? k->vrf_name[r->port - 1] : "";
		info.table = r->port ? k->vrf_table[r->port - 1] : k->table;
		info.port = info.ifname = "";
		info.paths = paths;
		if (!r->r.nh) {
			info.skipped = why_text(r->why);
		} else if ((info.type = reject_type(p->port)) == NULL) {
			info.n_paths = nh->n_paths;
			for (unsigned j = 0; j < nh->n_paths; j++) {
				paths[j] = (struct rxp_ksync_path_info){
					.has_gw = p[j].has_gw, .port = k->map[p[j].port].port,
					.ifname = k->map[p[j].port].ifname, .weight = p[j].weight };
				memcpy(paths[j].gw, p[j].gw, 16);
			}
			info.has_gw = paths[0].has_gw;
			memcpy(info.gw, paths[0].gw, 16);
			info.port = paths[0].port;
			info.ifname = paths[0].ifname;
		}
		if (r->flags & F_REFUSED) {
			info.state = RXP_KSYNC_REFUSED;
			info.error = -(int)r->err;
		} else if ((r->flags & F_INSTALLED) && r->r.inst_nh == r->r.nh) {
			info.state = RXP_KSYNC_INSTALLED;
		} else if (!r->r.nh) {
			info.state = RXP_KSYNC_SKIPPED;
		} else if (shadowed(k, r)) {
			info.state = RXP_KSYNC_SHADOWED;
		} else {
			info.state = RXP_KSYNC_PENDING;
		}
		ret = fn(ctx, &info);
		if (ret)
			return ret;
	}
	return 0;
}

void rxp_ksync_get_stats(const struct rxp_ksync *k, struct rxp_ksync_stats *st)
{
	*st = k->st;
	st->routes = st->routes_installed = st->routes_refused = 0;
	st->routes_multipath = st->routes_skipped = 0;
	st->neighs = st->neighs_installed = st->neighs_refused = 0;
	for (uint32_t i = 0; i <= k->mask; i++) {
		const struct rec *r = &k->slots[i];

		if (r->kind == KIND_ROUTE) {
			st->routes++;
			st->routes_installed += (r->flags & F_INSTALLED) != 0;
			st->routes_refused += (r->flags & F_REFUSED) != 0;
			st->routes_multipath += k->nhs[r->r.nh].n_paths > 1;
			st->routes_skipped += r->r.nh == 0;
		} else if (r->kind == KIND_NEIGH) {
			st->neighs++;
			st->neighs_installed += (r->flags & F_INSTALLED) != 0;
			st->neighs_refused += (r->flags & F_REFUSED) != 0;
		}
	}
	st->nexthops = k->nh_live;
	st->nexthop_objects = 0;
	st->memory_bytes = sizeof(*k) + (size_t)(k->mask + 1) * sizeof(*k->slots) +
			   (size_t)k->nh_cap * sizeof(*k->nhs) + k->nh_heap_bytes +
			   (size_t)(k->nh_index_mask + 1) * sizeof(*k->nh_index) +
			   (size_t)k->n_map * sizeof(*k->map) +
			   (size_t)(k->kobj_mask + 1) * sizeof(*k->kobjs);
	for (uint32_t i = 0; i <= k->kobj_mask; i++) {
		const struct kobj *o = &k->kobjs[i];

		st->nexthop_objects += o->id && o->kind != KOBJ_NONE;
		st->memory_bytes += o->id ? o->n_members * sizeof(*o->members) : 0;
	}
}
