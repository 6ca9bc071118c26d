/* SPDX-License-Identifier: MIT */
/*
 * Kernel route and neighbour sync over rtnetlink (include/rxpath/ksync.h).
 *
 * State: one open-addressing hash table of records, one per kernel route
 * (family, prefix, length, metric) and per neighbour (family, address,
 * port), and a pool of interned nexthops (family, gateway, port) that
 * records point to by id, so a million routes through a few gateways cost
 * 40 bytes each. Records of one prefix (its metrics) hash alike and so sit
 * in one probe cluster, where reconcile() finds them together.
 *
 * A record holds what the kernel has (nh, mac) and, on the one record of a
 * prefix that "owns" it, what ksync told rxpath (inst_nh, inst_mac). Every
 * change, whether from an event or a dump, ends in reconcile(), which
 * compares the two and emits the line that makes rxpath match the kernel.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include "ksync.h"
#include "rxpath/proto.h"

#define NAME_MAX_LEN 32
#define TABLE_MIN_SLOTS 1024u
#define NH_INDEX_MIN 64u
#define RECV_BUF_BYTES (64u * 1024)
#define EVENT_BUDGET 1024		/* event messages per rxp_ksync_run */
#define RESYNC_GAP_NS 1000000000ull	/* least time between two event-triggered resyncs */
#define RESYNC_RETRY_NS 1000000000ull	/* after a failed dump */
#define DUMP_ATTEMPTS 3			/* dumps the kernel marked inconsistent are redone */
#define DUMP_TIMEOUT_S 10

enum rec_kind { KIND_FREE, KIND_ROUTE, KIND_NEIGH };

#define F_SEEN      0x01	/* in the dump in progress */
#define F_INSTALLED 0x02	/* owns the prefix in rxpath: inst_nh / inst_mac is what rxpath has */
#define F_REFUSED   0x04	/* rxpath refused the current content; wait for a resync */
#define F_DEAD      0x08	/* gone from the kernel; freed once reconciled */
#define F_DONE      0x10	/* reconciled in this pass */
#define F_MULTI     0x20	/* the kernel's route has several nexthops (rxpath gets one) */
#define F_DUP       0x40	/* IPv4: more routes were appended under this key; the first is used */

struct rec {
	uint8_t kind;
	uint8_t family;		/* 4 or 6 */
	uint8_t plen;		/* neighbours: 32 or 128 */
	uint8_t flags;
	uint16_t port;		/* neighbours: index in the port map; routes: 0 */
	uint8_t err;		/* errno of the last refusal */
	uint8_t pad;
	uint32_t metric;	/* routes: the kernel's priority; neighbours: 0 */
	uint8_t addr[16];	/* network order, host bits cleared */
	union {
		struct {
			uint32_t nh;		/* the kernel's nexthop */
			uint32_t inst_nh;	/* what rxpath has (F_INSTALLED) */
		} r;
		struct {
			uint8_t mac[6];
			uint8_t inst_mac[6];
		} n;
	};
};
_Static_assert(sizeof(struct rec) == 40, "a record stays small: a million of them are held");

/* The fields that choose a record's cluster: the metric is not one of them. */
struct key {
	uint8_t kind, family, plen;
	uint16_t port;
	uint8_t addr[16];
};

/*
 * A route that leads nowhere (blackhole, unreachable, prohibit) has a
 * nexthop with no gateway whose port is this mark | its type: no mapped
 * port comes near it, so it pools and compares like the others.
 */
#define NH_PORT_REJECT 0xff00u
enum { REJECT_BLACKHOLE = 1, REJECT_UNREACHABLE, REJECT_PROHIBIT };

struct nexthop {
	uint8_t family;
	uint8_t has_gw;
	uint16_t port;		/* map index, or NH_PORT_REJECT | REJECT_... */
	uint32_t refs;		/* 0 = free; then next_free links it */
	uint32_t next_free;
	uint8_t gw[16];
};

struct map_entry {
	char ifname[NAME_MAX_LEN];
	char port[NAME_MAX_LEN];
	int ifindex;		/* 0 while the kernel has no such interface */
	bool up;
	bool routes_only;	/* rxp_ksync_port_map.routes_only */
};

struct rxp_ksync {
	struct mnl_socket *events;	/* subscribed, non-blocking */
	struct mnl_socket *dumps;	/* requests, blocking with a timeout */
	unsigned dump_portid;
	uint32_t seq;
	uint32_t table;
	uint64_t interval_ns;
	uint32_t max_entries;
	rxp_ksync_apply_fn apply;
	void *ctx;

	unsigned n_map;
	struct map_entry *map;
	unsigned last_map_hit;

	struct rec *slots;		/* power-of-two count */
	uint32_t mask;
	uint32_t n_recs;

	struct nexthop *nhs;		/* [0] unused: id 0 means none */
	uint32_t nh_cap, nh_used, nh_live, nh_free;
	uint32_t *nh_index;		/* ids by hash; 0 = empty */
	uint32_t nh_index_mask;

	uint64_t next_resync_ns;
	uint64_t last_resync_end_ns;
	bool dump_intr;			/* the kernel flagged the dump in progress */
	struct rxp_ksync_skips dump_skips;
	struct rxp_ksync_stats st;	/* the "since open" part */
	char buf[RECV_BUF_BYTES];
};

/* An errno for a uint8_t field. */
static uint8_t err_code(int ret)
{
	return (uint8_t)(ret < 0 ? (-ret > 255 ? 255 : -ret) : (ret > 255 ? 255 : ret));
}

/* A count for an int return. */
static int count_int(uint64_t n)
{
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Asks for a full resync soon, but not sooner than RESYNC_GAP_NS after the last one ended. */
static void resync_soon(struct rxp_ksync *k)
{
	uint64_t at = k->last_resync_end_ns + RESYNC_GAP_NS;

	if (at < k->next_resync_ns)
		k->next_resync_ns = at;
}

/* ---- hashing ---- */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t hash_fields(uint8_t kind, uint8_t family, uint8_t plen, uint16_t port,
			    const uint8_t *addr)
{
	uint64_t a, b;

	memcpy(&a, addr, 8);
	memcpy(&b, addr + 8, 8);
	return (uint32_t)mix64(mix64(a ^ 0x9e3779b97f4a7c15ull) ^ b ^
			       ((uint64_t)kind << 56 | (uint64_t)family << 48 |
				(uint64_t)plen << 32 | port));
}

static uint32_t key_hash(const struct key *key)
{
	return hash_fields(key->kind, key->family, key->plen, key->port, key->addr);
}

static uint32_t rec_hash(const struct rec *r)
{
	return hash_fields(r->kind, r->family, r->plen, r->port, r->addr);
}

static bool rec_in_group(const struct rec *r, const struct key *key)
{
	return r->kind == key->kind && r->family == key->family && r->plen == key->plen &&
	       r->port == key->port && !memcmp(r->addr, key->addr, 16);
}

static struct key key_of(const struct rec *r)
{
	struct key key = { .kind = r->kind, .family = r->family, .plen = r->plen, .port = r->port };

	memcpy(key.addr, r->addr, 16);
	return key;
}

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

/* ---- nexthop pool ---- */

static uint32_t nh_hash(uint8_t family, bool has_gw, uint16_t port, const uint8_t *gw)
{
	return hash_fields(has_gw, family, 0, port, gw);
}

/* Returns the id of the nexthop or 0; *@slot is where it is or would go in the index. */
static uint32_t nh_lookup(const struct rxp_ksync *k, uint8_t family, bool has_gw, uint16_t port,
			  const uint8_t *gw, uint32_t *slot)
{
	uint32_t i = nh_hash(family, has_gw, port, gw) & k->nh_index_mask;

	for (;; i = (i + 1) & k->nh_index_mask) {
		uint32_t id = k->nh_index[i];
		const struct nexthop *nh = &k->nhs[id];

		if (!id || (nh->family == family && nh->has_gw == has_gw && nh->port == port &&
			    !memcmp(nh->gw, gw, 16))) {
			*slot = i;
			return id;
		}
	}
}

static int nh_index_resize(struct rxp_ksync *k, uint32_t size)
{
	uint32_t *index = calloc(size, sizeof(*index));
	uint32_t slot;

	if (!index)
		return -ENOMEM;
	free(k->nh_index);
	k->nh_index = index;
	k->nh_index_mask = size - 1;
	for (uint32_t id = 1; id < k->nh_used; id++) {
		const struct nexthop *nh = &k->nhs[id];

		if (!nh->refs)
			continue;
		nh_lookup(k, nh->family, nh->has_gw, nh->port, nh->gw, &slot);
		k->nh_index[slot] = id;
	}
	return 0;
}

/* Returns the id of the nexthop with one more reference, or 0 when out of memory. */
static uint32_t nh_get(struct rxp_ksync *k, uint8_t family, bool has_gw, uint16_t port,
		       const uint8_t *gw)
{
	uint32_t slot, id = nh_lookup(k, family, has_gw, port, gw, &slot);
	struct nexthop *nh;

	if (id) {
		k->nhs[id].refs++;
		return id;
	}
	if ((k->nh_live + 1) * 2 > k->nh_index_mask + 1) {
		if (nh_index_resize(k, (k->nh_index_mask + 1) * 2))
			return 0;
		nh_lookup(k, family, has_gw, port, gw, &slot);
	}
	if (k->nh_free) {
		id = k->nh_free;
		k->nh_free = k->nhs[id].next_free;
	} else {
		if (k->nh_used == k->nh_cap) {
			uint32_t cap = k->nh_cap * 2;
			struct nexthop *nhs = realloc(k->nhs, cap * sizeof(*nhs));

			if (!nhs)
				return 0;
			k->nhs = nhs;
			k->nh_cap = cap;
		}
		id = k->nh_used++;
	}
	nh = &k->nhs[id];
	nh->family = family;
	nh->has_gw = has_gw;
	nh->port = port;
	nh->refs = 1;
	nh->next_free = 0;
	memcpy(nh->gw, gw, 16);
	k->nh_index[slot] = id;
	k->nh_live++;
	return id;
}

static void nh_ref(struct rxp_ksync *k, uint32_t id)
{
	k->nhs[id].refs++;
}

/* Drops a reference; the last one frees the id and takes it out of the index. */
static void nh_put(struct rxp_ksync *k, uint32_t id)
{
	struct nexthop *nh = &k->nhs[id];
	uint32_t i, j, mask = k->nh_index_mask;

	if (!id || --nh->refs)
		return;
	nh_lookup(k, nh->family, nh->has_gw, nh->port, nh->gw, &i);
	k->nh_index[i] = 0;
	/* backward-shift deletion: pull later members of the cluster into the hole */
	for (j = (i + 1) & mask; k->nh_index[j]; j = (j + 1) & mask) {
		const struct nexthop *o = &k->nhs[k->nh_index[j]];
		uint32_t home = nh_hash(o->family, o->has_gw, o->port, o->gw) & mask;

		if (j > i ? (home <= i || home > j) : (home <= i && home > j)) {
			k->nh_index[i] = k->nh_index[j];
			k->nh_index[j] = 0;
			i = j;
		}
	}
	nh->next_free = k->nh_free;
	k->nh_free = id;
	k->nh_live--;
}

/* ---- record table ---- */

static struct rec *rec_find(struct rxp_ksync *k, const struct key *key, uint32_t metric)
{
	for (uint32_t i = key_hash(key) & k->mask; k->slots[i].kind; i = (i + 1) & k->mask)
		if (k->slots[i].metric == metric && rec_in_group(&k->slots[i], key))
			return &k->slots[i];
	return NULL;
}

static struct rec *free_slot(struct rxp_ksync *k, uint32_t hash)
{
	uint32_t i = hash & k->mask;

	while (k->slots[i].kind)
		i = (i + 1) & k->mask;
	return &k->slots[i];
}

static int table_grow(struct rxp_ksync *k)
{
	uint32_t old_size = k->mask + 1, size = old_size * 2;
	struct rec *old = k->slots;

	k->slots = calloc(size, sizeof(*k->slots));
	if (!k->slots) {
		k->slots = old;
		return -ENOMEM;
	}
	k->mask = size - 1;
	for (uint32_t i = 0; i < old_size; i++)
		if (old[i].kind)
			*free_slot(k, rec_hash(&old[i])) = old[i];
	free(old);
	return 0;
}

/* Returns a new zeroed record for @key/@metric, or NULL (table full or out of memory). */
static struct rec *rec_insert(struct rxp_ksync *k, const struct key *key, uint32_t metric)
{
	struct rec *r;

	if (k->n_recs >= k->max_entries)
		return NULL;
	/* at most 3/4 full keeps linear probing short */
	if ((uint64_t)(k->n_recs + 1) * 4 > (uint64_t)(k->mask + 1) * 3 && table_grow(k))
		return NULL;
	r = free_slot(k, key_hash(key));
	memset(r, 0, sizeof(*r));
	r->kind = key->kind;
	r->family = key->family;
	r->plen = key->plen;
	r->port = key->port;
	r->metric = metric;
	memcpy(r->addr, key->addr, 16);
	k->n_recs++;
	return r;
}

/* Frees a record and its nexthop references; later records of its cluster may move into its slot. */
static void rec_free(struct rxp_ksync *k, struct rec *r)
{
	uint32_t i = (uint32_t)(r - k->slots), j, mask = k->mask;

	if (r->kind == KIND_ROUTE) {
		nh_put(k, r->r.nh);
		if (r->flags & F_INSTALLED)
			nh_put(k, r->r.inst_nh);
	}
	r->kind = KIND_FREE;
	for (j = (i + 1) & mask; k->slots[j].kind; j = (j + 1) & mask) {
		uint32_t home = rec_hash(&k->slots[j]) & mask;

		if (j > i ? (home <= i || home > j) : (home <= i && home > j)) {
			k->slots[i] = k->slots[j];
			k->slots[j].kind = KIND_FREE;
			i = j;
		}
	}
	k->n_recs--;
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

static int emit_route_add(struct rxp_ksync *k, const struct rec *r)
{
	const struct nexthop *nh = &k->nhs[r->r.nh];
	char line[RXP_KSYNC_LINE_MAX], prefix[INET6_ADDRSTRLEN], gw[INET6_ADDRSTRLEN];
	const char *type = reject_type(nh->port);

	format_addr(r->family, r->addr, prefix, sizeof(prefix));
	if (type) {
		snprintf(line, sizeof(line), "route add %s/%u %s", prefix, r->plen, type);
	} else if (nh->has_gw) {
		format_addr(nh->family, nh->gw, gw, sizeof(gw));
		snprintf(line, sizeof(line), "route add %s/%u via %s dev %s", prefix, r->plen, gw,
			 port_name(k, nh->port));
	} else {
		snprintf(line, sizeof(line), "route add %s/%u dev %s", prefix, r->plen,
			 port_name(k, nh->port));
	}
	return emit(k, line, true);
}

static void emit_route_del(struct rxp_ksync *k, const struct rec *r)
{
	char line[RXP_KSYNC_LINE_MAX], prefix[INET6_ADDRSTRLEN];

	format_addr(r->family, r->addr, prefix, sizeof(prefix));
	snprintf(line, sizeof(line), "route del %s/%u", prefix, r->plen);
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
	nh_put(k, owner->r.inst_nh);
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
	struct key key = key_of(any);
	struct rec *owner = NULL, *best = NULL, *under = NULL;
	int ret;

	for (uint32_t i = key_hash(&key) & k->mask; k->slots[i].kind; i = (i + 1) & k->mask) {
		struct rec *r = &k->slots[i];

		if (!rec_in_group(r, &key))
			continue;
		r->flags |= F_DONE;
		if (r->flags & F_INSTALLED)
			owner = r;
		if (waits_under_configured(r))
			under = r;
		if (!(r->flags & F_DEAD) && (!best || r->metric < best->metric))
			best = r;
	}
	if (!best) {
		if (owner)
			route_uninstall(k, owner, true);
		else if (under)
			emit_route_del(k, under);	/* rxpath forgets the copy it keeps */
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
			nh_ref(k, best->r.nh);
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

static void reconcile(struct rxp_ksync *k, struct rec *r, bool retry)
{
	if (r->kind == KIND_ROUTE)
		route_reconcile(k, r, retry);
	else
		neigh_reconcile(k, r, retry);
}

/* Clears F_DONE after an incremental reconcile (only this cluster was touched). */
static void clear_done(struct rxp_ksync *k, const struct key *key)
{
	for (uint32_t i = key_hash(key) & k->mask; k->slots[i].kind; i = (i + 1) & k->mask)
		k->slots[i].flags &= (uint8_t)~F_DONE;
}

/* Reconciles every prefix once, then frees the dead records. */
static void reconcile_all(struct rxp_ksync *k, bool retry)
{
	for (uint32_t i = 0; i <= k->mask; i++)
		if (k->slots[i].kind && !(k->slots[i].flags & F_DONE))
			reconcile(k, &k->slots[i], retry);
	for (uint32_t i = 0; i <= k->mask;) {
		struct rec *r = &k->slots[i];

		if (r->kind && (r->flags & F_DEAD)) {
			rec_free(k, r);	/* a later record may now sit in slot i: look again */
			continue;
		}
		r->flags &= (uint8_t)~F_DONE;
		i++;
	}
}

/* An event says @key/@metric is gone (or no longer mirrorable). */
static void rec_forget(struct rxp_ksync *k, const struct key *key, uint32_t metric)
{
	struct rec *r = rec_find(k, key, metric);

	if (!r)
		return;
	r->flags |= F_DEAD;
	reconcile(k, r, false);
	clear_done(k, key);
	rec_free(k, r);
}

/* ---- parsing rtnetlink messages ---- */

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
	uint32_t nh = nh_get(k, kr->key.family, kr->has_gw, kr->port, kr->gw);
	struct rec *r;

	if (!nh)
		goto full;
	r = rec_find(k, &kr->key, kr->metric);
	if (r) {
		/* IPv4 keeps appended duplicates of a key; the first one dumped is the one used */
		if (from_dump && (r->flags & F_SEEN)) {
			nh_put(k, nh);
			r->flags |= F_DUP;
			return r;
		}
		if (r->r.nh != nh) {
			nh_put(k, r->r.nh);
			r->r.nh = nh;
			r->flags &= (uint8_t)~F_REFUSED;	/* new content: worth a try */
			r->err = 0;
		} else {
			nh_put(k, nh);
		}
		r->flags &= (uint8_t)~F_DEAD;
	} else {
		r = rec_insert(k, &kr->key, kr->metric);
		if (!r) {
			nh_put(k, nh);
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
	struct rec *r = rec_find(k, &kn->key, 0);

	if (!r) {
		r = rec_insert(k, &kn->key, 0);
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

static void add_skips(struct rxp_ksync_skips *to, const struct rxp_ksync_skips *from)
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
	add_skips(&k->st.skipped, &skips);
	if (v == V_OTHER)
		return;
	r = rec_find(k, &kr.key, kr.metric);
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
		rec_forget(k, &kr.key, kr.metric);
		return;
	}
	r = route_upsert(k, &kr, false);
	if (r) {
		reconcile(k, r, false);
		clear_done(k, &kr.key);
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
	add_skips(&k->st.skipped, &skips);
	if (v == V_OTHER)
		return;
	if (v == V_SKIP || !is_new) {
		rec_forget(k, &kn.key, 0);
		return;
	}
	r = neigh_upsert(k, &kn, false);
	if (r) {
		reconcile(k, r, false);
		clear_done(k, &kn.key);
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

/* ---- dumps and resync ---- */

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

/* Discards the events queued before a full dump: the dump supersedes them. */
static void events_discard(struct rxp_ksync *k)
{
	/* bounded: under a storm, what arrives during the dump is read by the next run */
	for (unsigned i = 0; i < 16 * EVENT_BUDGET; i++)
		if (mnl_socket_recvfrom(k->events, k->buf, sizeof(k->buf)) < 0 && errno != ENOBUFS &&
		    errno != EINTR && errno != ENOSPC)
			break;
}

static int dump_all(struct rxp_ksync *k, char *err, size_t errlen)
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
	return ret;
}

int rxp_ksync_resync(struct rxp_ksync *k, char *err, size_t errlen)
{
	uint64_t start = now_ns(), lines = k->st.lines_add + k->st.lines_del;
	int ret = 0;

	events_discard(k);
	for (unsigned attempt = 0; attempt < DUMP_ATTEMPTS; attempt++) {
		for (uint32_t i = 0; i <= k->mask; i++)
			k->slots[i].flags &= (uint8_t)~(F_SEEN | F_DUP);
		memset(&k->dump_skips, 0, sizeof(k->dump_skips));
		k->dump_intr = false;
		ret = dump_all(k, err, errlen);
		if (ret || !k->dump_intr)
			break;
		k->st.dump_retries++;
	}
	if (ret) {
		/* nothing is deleted on a failed dump; the next one gets a fresh socket, free of this one's rest */
		mnl_socket_close(k->dumps);
		k->dumps = NULL;
		k->last_resync_end_ns = now_ns();
		k->next_resync_ns = k->last_resync_end_ns + RESYNC_RETRY_NS;
		return ret;
	}
	for (uint32_t i = 0; i <= k->mask; i++)
		if (k->slots[i].kind && !(k->slots[i].flags & F_SEEN))
			k->slots[i].flags |= F_DEAD;
	reconcile_all(k, true);
	k->st.resyncs++;
	k->st.last_dump = k->dump_skips;
	add_skips(&k->st.skipped, &k->dump_skips);
	k->last_resync_end_ns = now_ns();
	k->st.last_resync_us = (k->last_resync_end_ns - start) / 1000;
	k->next_resync_ns = k->last_resync_end_ns + k->interval_ns;
	if (k->dump_intr)	/* still inconsistent after every attempt: look again soon */
		k->next_resync_ns = k->last_resync_end_ns + RESYNC_RETRY_NS;
	return count_int(k->st.lines_add + k->st.lines_del - lines);
}

int rxp_ksync_run(struct rxp_ksync *k, char *err, size_t errlen)
{
	uint64_t lines = k->st.lines_add + k->st.lines_del;
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
	if (now_ns() >= k->next_resync_ns) {
		ret = rxp_ksync_resync(k, err, errlen);
		if (ret < 0)
			return ret;
	}
	return count_int(k->st.lines_add + k->st.lines_del - lines);
}

void rxp_ksync_reoffer(struct rxp_ksync *k)
{
	for (uint32_t i = 0; i <= k->mask; i++) {
		struct rec *r = &k->slots[i];

		if (r->kind && !(r->flags & (F_DONE | F_DEAD)) && waits_under_configured(r))
			reconcile(k, r, false);
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
	return count_int(k->st.lines_add + k->st.lines_del - lines);
}

/* ---- open, close, queries ---- */

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
	int fd, size = (int)count_int(buffer_bytes), ret;

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
	if (!k->map || !k->slots || !k->nhs || !k->nh_index)
		goto nomem;
	for (unsigned i = 0; i < cfg->n_map; i++) {
		snprintf(k->map[i].ifname, sizeof(k->map[i].ifname), "%s", cfg->map[i].ifname);
		snprintf(k->map[i].port, sizeof(k->map[i].port), "%s", cfg->map[i].port);
		k->map[i].routes_only = cfg->map[i].routes_only;
	}
	/* subscribe first: a change between the dump and the subscription would be lost */
	ret = events_open(k, cfg->event_buffer_bytes ? cfg->event_buffer_bytes
						     : RXP_KSYNC_EVENT_BUFFER_DEFAULT, err, errlen);
	if (ret)
		goto fail;
	ret = dumps_open(k, err, errlen);
	if (ret)
		goto fail;
	/* know the mapped interfaces before the first event comes */
	ret = dump(k, RTM_GETLINK, AF_UNSPEC, "link", err, errlen);
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
	if (k->events)
		mnl_socket_close(k->events);
	if (k->dumps)
		mnl_socket_close(k->dumps);
	free(k->nh_index);
	free(k->nhs);
	free(k->slots);
	free(k->map);
	free(k);
}

int rxp_ksync_fd(const struct rxp_ksync *k)
{
	return mnl_socket_get_fd(k->events);
}

int rxp_ksync_timeout_ms(const struct rxp_ksync *k)
{
	uint64_t now = now_ns();

	if (now >= k->next_resync_ns)
		return 0;
	return count_int((k->next_resync_ns - now + 999999) / 1000000);
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
	}
	return "?";
}

/* Returns true when another live record of @r's prefix has a lower metric. */
static bool shadowed(const struct rxp_ksync *k, const struct rec *r)
{
	struct key key = key_of(r);

	for (uint32_t i = key_hash(&key) & k->mask; k->slots[i].kind; i = (i + 1) & k->mask) {
		const struct rec *o = &k->slots[i];

		if (o != r && rec_in_group(o, &key) && o->metric < r->metric)
			return true;
	}
	return false;
}

int rxp_ksync_foreach_route(const struct rxp_ksync *k, rxp_ksync_route_fn fn, void *ctx)
{
	for (uint32_t i = 0; i <= k->mask; i++) {
		const struct rec *r = &k->slots[i];
		const struct nexthop *nh;
		struct rxp_ksync_route_info info = { 0 };
		int ret;

		if (r->kind != KIND_ROUTE)
			continue;
		nh = &k->nhs[r->r.nh];
		info.family = r->family;
		info.plen = r->plen;
		memcpy(info.prefix, r->addr, 16);
		info.has_gw = nh->has_gw;
		memcpy(info.gw, nh->gw, 16);
		info.type = reject_type(nh->port);
		info.port = info.type ? "" : k->map[nh->port].port;
		info.ifname = info.type ? "" : k->map[nh->port].ifname;
		info.metric = r->metric;
		if (r->flags & F_REFUSED) {
			info.state = RXP_KSYNC_REFUSED;
			info.error = -(int)r->err;
		} else if ((r->flags & F_INSTALLED) && r->r.inst_nh == r->r.nh) {
			info.state = RXP_KSYNC_INSTALLED;
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
	st->neighs = st->neighs_installed = st->neighs_refused = 0;
	for (uint32_t i = 0; i <= k->mask; i++) {
		const struct rec *r = &k->slots[i];

		if (r->kind == KIND_ROUTE) {
			st->routes++;
			st->routes_installed += (r->flags & F_INSTALLED) != 0;
			st->routes_refused += (r->flags & F_REFUSED) != 0;
		} else if (r->kind == KIND_NEIGH) {
			st->neighs++;
			st->neighs_installed += (r->flags & F_INSTALLED) != 0;
			st->neighs_refused += (r->flags & F_REFUSED) != 0;
		}
	}
	st->nexthops = k->nh_live;
	st->memory_bytes = sizeof(*k) + (size_t)(k->mask + 1) * sizeof(*k->slots) +
			   (size_t)k->nh_cap * sizeof(*k->nhs) +
			   (size_t)(k->nh_index_mask + 1) * sizeof(*k->nh_index) +
			   (size_t)k->n_map * sizeof(*k->map);
}
