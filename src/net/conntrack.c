/* SPDX-License-Identifier: MIT */
/*
 * Connection tracking (conntrack.h): what each protocol's packets do to
 * their connection, on the table of src/fib/ct_table.h. TCP is ct_tcp.c;
 * UDP, ICMP queries and the other protocols are timers here, as Linux's
 * nf_conntrack_proto_{udp,icmp,icmpv6,generic}.c have them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conntrack.h"
#include "ct_tcp.h"
#include "fib/acl.h"
#include "fib/ct_table.h"
#include "rxpath/proto.h"

#define BULK_MAX 256u
#ifndef BULK_GROUP
#define BULK_GROUP 16u			/* packets per stage of the bulk pipeline: a prefetch's head start (4 and 8 measured slower over 1M connections) */
#endif
#define TIMEOUT_MAX_S (20u * 86400u)	/* below the 2^31 ticks a timer can span */
#define UDP_STREAM_S 2u			/* a replied UDP flow still active after this is a stream */
#define CT_IPPROTO_UDPLITE 136
#define CT_IPPROTO_SCTP 132
#define CT_IPPROTO_GRE 47
#define CT_IPPROTO_DCCP 33
#define ICMP_TYPE_LAST 18		/* Linux: higher ICMP types are invalid (NR_ICMP_TYPES) */

struct rxp_ct {
	struct rxp_ct_table *t;
	struct ct_params par;		/* what packets read: ticks, liberal */
	uint32_t limit[16];		/* by TCP state: the longest timer it allows (ticks), for expiry */
	uint32_t nat_to[RXP_CT_NAT_TO_MAX];	/* a translated connection's timeouts (ticks) */
	struct rxp_ct_config cfg;	/* as asked, in seconds */
	void (*release_fn)(void *ctx, uint32_t map, uint32_t remote);	/* a translated connection's mapping, let go */
	void *release_ctx;
};

static void release_nat(void *ctx, const struct rxp_ct_nat *n)
{
	struct rxp_ct *ct = ctx;

	if (ct->release_fn && n->map != RXP_CTT_NONE)
		ct->release_fn(ct->release_ctx, n->map, n->remote);
	if (ct->release_fn && n->map2 != RXP_CTT_NONE)
		ct->release_fn(ct->release_ctx, n->map2, 0);
}

static const struct {
	const char *name;
	uint32_t secs;
} timeouts[RXP_CT_TO_MAX] = {
#define X(id, name, secs) [RXP_CT_TO_##id] = { name, secs },
	RXP_CT_TIMEOUTS(X)
#undef X
};

static const char *const tcp_state_names[RXP_CT_TCP_MAX] = {
#define X(id, name) [RXP_CT_TCP_##id] = name,
	RXP_CT_TCP_STATES(X)
#undef X
};

int rxp_ct_timeout_of(const char *name)
{
	for (int t = 0; name && t < RXP_CT_TO_MAX; t++)
		if (!strcmp(name, timeouts[t].name))
			return t;
	return -1;
}

const char *rxp_ct_timeout_name(enum rxp_ct_timeout t)
{
	return (unsigned)t < RXP_CT_TO_MAX ? timeouts[t].name : "?";
}

uint32_t rxp_ct_timeout_default(enum rxp_ct_timeout t)
{
	return (unsigned)t < RXP_CT_TO_MAX ? timeouts[t].secs : 0;
}

const char *rxp_ct_tcp_state_name(unsigned state)
{
	return state < RXP_CT_TCP_MAX ? tcp_state_names[state] : "?";
}

void rxp_ct_config_default(struct rxp_ct_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max = RXP_CT_MAX_DEFAULT;
	for (unsigned t = 0; t < RXP_CT_TO_MAX; t++)
		cfg->timeout[t] = timeouts[t].secs;
	cfg->tcp_liberal = false;
	cfg->tcp_loose = true;
}

static uint32_t clamp_timeout(uint32_t s)
{
	return RXP_MAX(1u, RXP_MIN(s, TIMEOUT_MAX_S));
}

/* Expiry cuts a TCP timer to its state's timeout (a lock-free update may have left a longer one). */
static void update_limits(struct rxp_ct *ct)
{
	for (unsigned s = 1; s < RXP_CT_TCP_MAX; s++)
		RXP_CT_ST(&ct->limit[s], RXP_CT_LD(&ct->par.to[ct_tcp_timeout_of(s)]) + rxp_ct_ticks_of_s(1));
}

struct rxp_ct *rxp_ct_create(const struct rxp_ct_config *cfg, unsigned n_workers)
{
	struct rxp_ct *ct;

	if (!cfg || !cfg->max || cfg->max > RXP_CTT_MAX_ENTRIES || !n_workers || n_workers > RXP_CT_WORKERS_MAX) {
		errno = EINVAL;
		return NULL;
	}
	ct = calloc(1, sizeof(*ct));
	if (!ct) {
		errno = ENOMEM;
		return NULL;
	}
	ct->t = rxp_ct_table_create(cfg->max, n_workers);
	if (!ct->t) {
		free(ct);
		return NULL;
	}
	ct->cfg = *cfg;
	for (unsigned t = 0; t < RXP_CT_TO_MAX; t++) {
		ct->cfg.timeout[t] = clamp_timeout(cfg->timeout[t]);
		ct->par.to[t] = rxp_ct_ticks_of_s(ct->cfg.timeout[t]);
	}
	for (unsigned t = 0; t < RXP_CT_NAT_TO_MAX; t++)
		ct->nat_to[t] = rxp_ct_ticks_of_s(rxp_ct_nat_timeout_default(t));
	ct->par.liberal = cfg->tcp_liberal;
	ct->par.loose = cfg->tcp_loose;
	update_limits(ct);
	return ct;
}

void rxp_ct_destroy(struct rxp_ct *ct)
{
	if (!ct)
		return;
	rxp_ct_table_destroy(ct->t);
	free(ct);
}

void rxp_ct_set_timeout(struct rxp_ct *ct, enum rxp_ct_timeout t, uint32_t seconds)
{
	if ((unsigned)t >= RXP_CT_TO_MAX)
		return;
	seconds = clamp_timeout(seconds);
	RXP_CT_ST(&ct->cfg.timeout[t], seconds);
	RXP_CT_ST(&ct->par.to[t], rxp_ct_ticks_of_s(seconds));
	update_limits(ct);
}

void rxp_ct_set_loose(struct rxp_ct *ct, bool on)
{
	RXP_CT_ST(&ct->cfg.tcp_loose, on);
	RXP_CT_ST(&ct->par.loose, (uint8_t)on);
}

void rxp_ct_set_liberal(struct rxp_ct *ct, bool on)
{
	RXP_CT_ST(&ct->cfg.tcp_liberal, on);
	RXP_CT_ST(&ct->par.liberal, (uint8_t)on);
}

const struct rxp_ct_config *rxp_ct_config(const struct rxp_ct *ct)
{
	return &ct->cfg;
}

size_t rxp_ct_memory(const struct rxp_ct *ct)
{
	return rxp_ct_table_memory(ct->t);
}

void rxp_ct_enter(struct rxp_ct *ct, unsigned w)
{
	rxp_ct_table_enter(ct->t, w);
}

void rxp_ct_leave(struct rxp_ct *ct, unsigned w)
{
	rxp_ct_table_leave(ct->t, w);
}

/* ---- what a packet is to tracking ---- */

enum kind {
	K_INVALID,	/* no connection can have it */
	K_UNTRACKED,	/* not tracked at all (Neighbor Discovery, MLD) */
	K_LOOKUP,	/* its own connection: @k is its tuple as seen */
	K_RELATED,	/* an ICMP error: @k is the quoted packet's connection, as the error travels */
};

/* ICMP queries and their answers: echo, timestamp, information, address mask; ICMPv6 echo, node information. */
static const uint8_t icmp4_queries[][2] = { { 8, 0 }, { 13, 14 }, { 15, 16 }, { 17, 18 } };
static const uint8_t icmp6_queries[][2] = { { 128, 129 }, { 139, 140 } };

/*
 * The request's type for a query or its answer (both directions share
 * the key), and whether @type is the answer. False for other messages.
 */
static bool icmp_query(uint8_t family, uint8_t type, uint8_t *req, bool *answer)
{
	const uint8_t (*q)[2] = family == 4 ? icmp4_queries : icmp6_queries;
	unsigned n = family == 4 ? RXP_ARRAY_SIZE(icmp4_queries) : RXP_ARRAY_SIZE(icmp6_queries);

	for (unsigned i = 0; i < n; i++) {
		if (type == q[i][0] || type == q[i][1]) {
			*req = q[i][0];
			*answer = type == q[i][1];
			return true;
		}
	}
	return false;
}

static uint8_t icmp_answer_of(uint8_t family, uint8_t req)
{
	const uint8_t (*q)[2] = family == 4 ? icmp4_queries : icmp6_queries;
	unsigned n = family == 4 ? RXP_ARRAY_SIZE(icmp4_queries) : RXP_ARRAY_SIZE(icmp6_queries);

	for (unsigned i = 0; i < n; i++)
		if (q[i][0] == req)
			return q[i][1];
	return req;
}

static rxp_always_inline bool is_icmp(uint8_t family, uint8_t proto)
{
	return (family == 4 && proto == RXP_IPPROTO_ICMP) || (family == 6 && proto == RXP_IPPROTO_ICMP6);
}

static rxp_always_inline bool has_ports(uint8_t proto)
{
	return proto == RXP_IPPROTO_TCP || proto == RXP_IPPROTO_UDP || proto == CT_IPPROTO_UDPLITE;
}

/* ICMPv6 that Linux leaves untracked: MLD (130-132, 143) and Neighbor Discovery's 133-136. */
static bool icmp6_untracked(uint8_t type)
{
	return (type >= 130 && type <= 136) || type == 143;
}

/* An address as two words: IPv4's four bytes and zeros, or IPv6's sixteen. */
static rxp_always_inline void addr_words(const uint8_t *a, uint8_t family, uint64_t *w0, uint64_t *w1)
{
	*w0 = *w1 = 0;
	if (family == 4) {
		memcpy(w0, a, 4);
	} else {
		memcpy(w0, a, 8);
		memcpy(w1, a + 8, 8);
	}
}

/*
 * @k from a tuple (addresses, the ports of the protocols that have them, an
 * ICMP query's identity) and its hash in @h, made from the words in
 * registers.
 */
static rxp_always_inline void key_of(const struct rxp_ct *ct, struct rxp_ct_key *k, uint64_t *h,
			  const struct rxp_ct_tuple *t, uint8_t icmp_req, uint8_t icmp_code)
{
	uint64_t w0, w1, w2, w3, w4;
	bool ports = has_ports(t->proto) || icmp_req;

	addr_words(t->src, t->family, &w0, &w1);
	addr_words(t->dst, t->family, &w2, &w3);
	w4 = rxp_ct_key_w4(ports ? t->sport : 0, ports ? t->dport : 0, t->proto, t->family, icmp_req, icmp_code);
	k->w[0] = w0;
	k->w[1] = w1;
	k->w[2] = w2;
	k->w[3] = w3;
	k->w[4] = w4;
	*h = rxp_ct_hash_w(ct->t, w0, w1, w2, w3, w4);
}

static rxp_always_inline unsigned classify(const struct rxp_ct *ct, const struct rxp_ct_pkt *p, struct rxp_ct_key *k,
				uint64_t *h)
{
	uint8_t fam = p->t.family, req;
	bool answer;

	if (rxp_unlikely(p->malformed || (fam != 4 && fam != 6)))
		return K_INVALID;
	/* a later fragment has no ports: its datagram is decided by the first (the filter holds it) */
	if (rxp_unlikely(p->frag_nth))
		return K_INVALID;
	if (rxp_likely(has_ports(p->t.proto))) {
		if (p->t.proto == RXP_IPPROTO_TCP && !ct_tcp_flags_valid(p->tcp_flags))
			return K_INVALID;
		key_of(ct, k, h, &p->t, 0, 0);
		return K_LOOKUP;
	}
	if (is_icmp(fam, p->t.proto)) {
		if (p->icmp_error) {
			struct rxp_ct_key q;
			uint8_t qreq = 0;

			/* the error goes to the quoted packet's sender, and quotes a packet that has a connection */
			if (p->inner.family != fam || memcmp(p->t.dst, p->inner.src, fam == 4 ? 4 : 16))
				return K_INVALID;
			if (is_icmp(fam, p->inner.proto) && !icmp_query(fam, p->inner_icmp_type, &qreq, &answer))
				return K_INVALID;
			key_of(ct, &q, h, &p->inner, qreq, qreq ? p->inner_icmp_code : 0);
			rxp_ct_key_swap(k, &q);
			*h = rxp_ct_hash(ct->t, k);
			return K_RELATED;
		}
		if (fam == 4 && p->icmp_type > ICMP_TYPE_LAST)
			return K_INVALID;
		if (fam == 6 && icmp6_untracked(p->icmp_type))
			return K_UNTRACKED;
		if (!icmp_query(fam, p->icmp_type, &req, &answer))
			return K_INVALID;	/* no connection to find or make (router advertisements, unknown types) */
		key_of(ct, k, h, &p->t, req, p->icmp_code);
		return K_LOOKUP;
	}
	if (fam == 6 && p->t.proto == RXP_IPPROTO_NONE)
		return K_INVALID;	/* Linux finds no protocol in it */
	key_of(ct, k, h, &p->t, 0, 0);
	return K_LOOKUP;
}

/* The packet may open a connection (given it found none). */
static bool can_open(const struct rxp_ct *ct, const struct rxp_ct_pkt *p)
{
	uint8_t req;
	bool answer;

	if (p->t.proto == RXP_IPPROTO_TCP)
		return ct_tcp_can_open(p, &ct->par);
	if (is_icmp(p->t.family, p->t.proto))
		return !p->icmp_error && icmp_query(p->t.family, p->icmp_type, &req, &answer) && !answer;
	return true;
}

static uint32_t to_ticks(const struct rxp_ct *ct, enum rxp_ct_timeout t)
{
	return RXP_CT_LD(&ct->par.to[t]);
}

static enum rxp_ct_timeout other_timeout(uint8_t family, uint8_t proto)
{
	if (family == 4 && proto == RXP_IPPROTO_ICMP)
		return RXP_CT_TO_ICMP;
	if (family == 6 && proto == RXP_IPPROTO_ICMP6)
		return RXP_CT_TO_ICMPV6;
	return RXP_CT_TO_GENERIC;
}

static inline void set_expires(struct rxp_ct_entry *e, uint32_t when)
{
	if (RXP_CT_LD(&e->expires) != when)
		RXP_CT_ST(&e->expires, when);
}

/*
 * UDP (and UDP-Lite): the unreplied timeout until a reply, and still for
 * the first 2 s after; from then on a replied flow is a stream: the longer
 * timeout, and assured.
 */
static void udp_packet(const struct rxp_ct *ct, struct rxp_ct_entry *e, uint8_t status, uint32_t now)
{
	uint32_t t = to_ticks(ct, RXP_CT_TO_UDP);

	if (status & RXP_CTE_SEEN_REPLY) {
		if (status & RXP_CTE_ASSURED) {
			t = to_ticks(ct, RXP_CT_TO_UDP_STREAM);
		} else if ((int32_t)(now - RXP_CT_LD(&e->l4.udp.stream)) > 0) {
			t = to_ticks(ct, RXP_CT_TO_UDP_STREAM);
			__atomic_fetch_or(&e->status, RXP_CTE_ASSURED, __ATOMIC_RELAXED);
		}
	}
	set_expires(e, now + t);
}

static enum ct_verdict l4_packet(const struct rxp_ct *ct, struct rxp_ct_entry *e, unsigned dir,
				 const struct rxp_ct_pkt *p, uint8_t status, uint32_t now)
{
	switch (p->t.proto) {
	case RXP_IPPROTO_TCP:
		return ct_tcp_packet(e, dir, p, &ct->par, now);
	case RXP_IPPROTO_UDP:
	case CT_IPPROTO_UDPLITE:
		udp_packet(ct, e, status, now);
		return CT_ACCEPT;
	default:
		set_expires(e, now + to_ticks(ct, other_timeout(p->t.family, p->t.proto)));
		return CT_ACCEPT;
	}
}

/* What a translated connection's state keeps it for: NAT's timeouts (RFC 4787 REQ-5, RFC 5382 REQ-5, RFC 5508 REQ-1). */
static uint32_t nat_ticks(const struct rxp_ct *ct, const struct rxp_ct_entry *e)
{
	switch (e->key.proto) {
	case RXP_IPPROTO_TCP:
		switch (RXP_CT_LD(&e->l4state)) {
		case RXP_CT_TCP_ESTABLISHED:
			return RXP_CT_LD(&ct->nat_to[RXP_CT_NAT_TO_TCP_ESTABLISHED]);
		case RXP_CT_TCP_CLOSE:
			return 0;	/* reset: conntrack's short close timer stands */
		default:
			return RXP_CT_LD(&ct->nat_to[RXP_CT_NAT_TO_TCP_TRANSITORY]);
		}
	case RXP_IPPROTO_ICMP:
		return RXP_CT_LD(&ct->nat_to[RXP_CT_NAT_TO_ICMP]);
	default:
		return RXP_CT_LD(&ct->nat_to[RXP_CT_NAT_TO_UDP]);
	}
}

static void nat_expires(const struct rxp_ct *ct, struct rxp_ct_entry *e, uint32_t now)
{
	uint32_t t = nat_ticks(ct, e);

	if (t)
		set_expires(e, now + t);
}

static rxp_always_inline void account(struct rxp_ct_entry *e, unsigned dir, const struct rxp_ct_pkt *p)
{
	/* one worker per direction (RSS): plain increments, made atomic only for the readers */
	RXP_CT_ST(&e->packets[dir], RXP_CT_LD(&e->packets[dir]) + 1);
	RXP_CT_ST(&e->bytes[dir], RXP_CT_LD(&e->bytes[dir]) + p->bytes);
}

static rxp_always_inline uint8_t finish(struct rxp_ct_ref *ref, uint32_t entry, unsigned dir, uint8_t state)
{
	ref->entry = entry;
	ref->dir = (uint8_t)dir;
	ref->state = state;
	return state;
}

struct acc {
	uint64_t searched, invalid;
};

static rxp_always_inline uint8_t track_prepared(struct rxp_ct *ct, unsigned w, const struct rxp_ct_pkt *p,
			      const struct rxp_ct_key *k, uint64_t h, uint32_t hint, unsigned kind,
			      uint32_t now, struct rxp_ct_ref *ref, struct acc *acc)
{
	struct rxp_ct_table *t = ct->t;
	uint32_t r;

	if (rxp_unlikely(kind < K_LOOKUP)) {
		if (kind == K_UNTRACKED)
			return finish(ref, RXP_CTT_NONE, 0, RXP_ACL_CT_UNTRACKED);
		acc->invalid++;
		return finish(ref, RXP_CTT_NONE, 0, RXP_ACL_CT_INVALID);
	}
	acc->searched++;
	r = rxp_ct_table_find_hint(t, k, h, hint);
	if (rxp_unlikely(kind == K_RELATED)) {
		if (r != RXP_CTT_NONE &&
		    !rxp_ct_tick_past(RXP_CT_LD(&rxp_ct_table_entry(t, r >> 1)->expires), now))
			return finish(ref, r >> 1, r & 1, RXP_ACL_CT_RELATED);
		acc->invalid++;
		return finish(ref, RXP_CTT_NONE, 0, RXP_ACL_CT_INVALID);
	}
	if (r != RXP_CTT_NONE) {
		struct rxp_ct_entry *e = rxp_ct_table_entry(t, r >> 1);
		unsigned dir = r & 1;
		uint8_t st = RXP_CT_LDA(&e->status), state;

		/* expired but not reaped yet: as if it were gone */
		if (!rxp_ct_tick_past(RXP_CT_LD(&e->expires), now)) {
			enum ct_verdict v = l4_packet(ct, e, dir, p, st, now);

			if (rxp_unlikely(st & RXP_CTE_NAT))
				nat_expires(ct, e, now);

			switch (v) {
			case CT_ACCEPT:
			case CT_IGNORE:
			case CT_KILL:
				/* Linux's ctinfo: new in the original direction until a reply is seen */
				state = dir || (st & RXP_CTE_SEEN_REPLY) ? RXP_ACL_CT_ESTABLISHED : RXP_ACL_CT_NEW;
				if (v != CT_IGNORE)
					account(e, dir, p);
				if (dir && !(st & RXP_CTE_SEEN_REPLY))
					__atomic_fetch_or(&e->status, RXP_CTE_SEEN_REPLY, __ATOMIC_RELEASE);
				if (v == CT_KILL)
					rxp_ct_table_delete(t, w, r >> 1);
				return finish(ref, r >> 1, dir, state);
			case CT_INVALID:
				acc->invalid++;
				return finish(ref, RXP_CTT_NONE, 0, RXP_ACL_CT_INVALID);
			case CT_REOPEN:
				rxp_ct_table_delete(t, w, r >> 1);
				break;
			case CT_GONE:
				break;
			}
		}
	}
	if (can_open(ct, p))
		return finish(ref, RXP_CTT_NONE, 0, RXP_ACL_CT_NEW);
	acc->invalid++;
	return finish(ref, RXP_CTT_NONE, 0, RXP_ACL_CT_INVALID);
}

static void add_acc(struct rxp_ct *ct, unsigned w, const struct acc *acc)
{
	if (acc->searched)
		RXP_CT_STAT_ADD(ct->t, w, searched, acc->searched);
	if (acc->invalid)
		RXP_CT_STAT_ADD(ct->t, w, invalid, acc->invalid);
}

static inline unsigned worker_of(const struct rxp_ct *ct, unsigned w)
{
	return w < ct->t->n_workers ? w : ct->t->n_workers;
}

uint8_t rxp_ct_track(struct rxp_ct *ct, unsigned w, const struct rxp_ct_pkt *p, uint64_t now_ns,
		     struct rxp_ct_ref *ref)
{
	struct rxp_ct_key k;
	struct acc acc = { 0, 0 };
	uint64_t h = 0;
	unsigned kind = classify(ct, p, &k, &h);
	uint8_t state;

	w = worker_of(ct, w);
	state = track_prepared(ct, w, p, &k, h, RXP_CTT_NONE, kind, rxp_ct_tick(now_ns), ref, &acc);
	add_acc(ct, w, &acc);
	return state;
}

/*
 * Three stages over the vector, BULK_GROUP packets at a time, each group a
 * stage behind the one before: the key, its hash and the bucket's
 * prefetch; the bucket read (a hint) and the entry's prefetch; the packet
 * tracked with both in cache.
 */
static void track_chunk(struct rxp_ct *ct, unsigned w, const struct rxp_ct_pkt *const *p, unsigned n,
			uint32_t now, struct rxp_ct_ref *refs, struct acc *acc)
{
	const struct rxp_ct_table *t = ct->t;
	struct rxp_ct_key keys[BULK_MAX];
	uint64_t hs[BULK_MAX];
	uint32_t hint[BULK_MAX];
	uint8_t kinds[BULK_MAX];

	for (unsigned base = 0; base < n + 2 * BULK_GROUP; base += BULK_GROUP) {
		for (unsigned i = base; i < base + BULK_GROUP && i < n; i++) {
			kinds[i] = (uint8_t)classify(ct, p[i], &keys[i], &hs[i]);
			if (kinds[i] >= K_LOOKUP)
				rxp_ct_prefetch_bucket(t, hs[i]);
		}
		if (base >= BULK_GROUP) {
			for (unsigned i = base - BULK_GROUP; i < base && i < n; i++) {
				hint[i] = RXP_CTT_NONE;
				if (kinds[i] < K_LOOKUP)
					continue;
				hint[i] = rxp_ct_bucket_hint(t, hs[i]);
				if (hint[i] < RXP_CTT_ABSENT && (hint[i] >> 1) < t->phys)
					rxp_ct_prefetch_entry(t, hint[i] >> 1);
			}
		}
		if (base >= 2 * BULK_GROUP) {
			for (unsigned i = base - 2 * BULK_GROUP; i < base - BULK_GROUP && i < n; i++)
				track_prepared(ct, w, p[i], &keys[i], hs[i], hint[i], kinds[i], now, &refs[i], acc);
		}
	}
}

void rxp_ct_track_bulk(struct rxp_ct *ct, unsigned w, const struct rxp_ct_pkt *const *p, unsigned n,
		       uint64_t now_ns, struct rxp_ct_ref *refs)
{
	struct acc acc = { 0, 0 };
	uint32_t now = rxp_ct_tick(now_ns);

	w = worker_of(ct, w);
	for (unsigned done = 0; done < n; done += BULK_MAX)
		track_chunk(ct, w, p + done, RXP_MIN(n - done, BULK_MAX), now, refs + done, &acc);
	add_acc(ct, w, &acc);
}

/* ---- a new connection ---- */

static bool init_entry(const struct rxp_ct *ct, struct rxp_ct_entry *e, const struct rxp_ct_key *k,
		       const struct rxp_ct_pkt *p, uint32_t now)
{
	rxp_ct_key_store(&e->key, k);
	RXP_CT_ST(&e->packets[0], 1u);
	RXP_CT_ST(&e->packets[1], 0u);
	RXP_CT_ST(&e->bytes[0], (uint64_t)p->bytes);
	RXP_CT_ST(&e->bytes[1], 0ull);
	if (k->proto == RXP_IPPROTO_TCP)
		return ct_tcp_first(e, p, &ct->par, now);
	/* the TCP fields a reused entry may still have: nothing of them is left */
	memset(&e->l4, 0, sizeof(e->l4));
	memset(e->tcp_flags, 0, sizeof(e->tcp_flags));
	memset(e->tcp_scale, 0, sizeof(e->tcp_scale));
	e->tcp_last = e->tcp_retrans = 0;
	RXP_CT_ST(&e->l4state, 0);
	if (k->proto == RXP_IPPROTO_UDP || k->proto == CT_IPPROTO_UDPLITE) {
		e->l4.udp.stream = now + rxp_ct_ticks_of_s(UDP_STREAM_S);
		RXP_CT_ST(&e->expires, now + to_ticks(ct, RXP_CT_TO_UDP));
	} else {
		RXP_CT_ST(&e->expires, now + to_ticks(ct, other_timeout(k->family, k->proto)));
	}
	return true;
}

int rxp_ct_confirm(struct rxp_ct *ct, unsigned w, const struct rxp_ct_pkt *p, uint64_t now_ns,
		   struct rxp_ct_ref *ref)
{
	return rxp_ct_confirm_nat(ct, w, p, now_ns, ref, NULL);
}

/* The reply key of a connection whose original direction @k leaves translated as @b says. */
static void nat_reply_key(struct rxp_ct_key *kr, const struct rxp_ct_key *k, const struct rxp_ct_nat_bind *b)
{
	struct rxp_ct_tuple t = { .sport = b->dport, .dport = b->sport, .proto = k->proto, .family = 4 };

	memcpy(t.src, &b->dst, 4);
	memcpy(t.dst, &b->src, 4);
	rxp_ct_key_swap(kr, k);
	addr_words(t.src, 4, &kr->w[0], &kr->w[1]);
	addr_words(t.dst, 4, &kr->w[2], &kr->w[3]);
	if (has_ports(k->proto) || k->icmp_type) {
		kr->sport = t.sport;
		kr->dport = t.dport;
	}
}

int rxp_ct_confirm_nat(struct rxp_ct *ct, unsigned w, const struct rxp_ct_pkt *p, uint64_t now_ns,
		       struct rxp_ct_ref *ref, const struct rxp_ct_nat_bind *bind)
{
	struct rxp_ct_table *t = ct->t;
	uint32_t now = rxp_ct_tick(now_ns), r, idx;
	struct rxp_ct_key k, kr;
	uint64_t h0 = 0, h1;
	unsigned kind = classify(ct, p, &k, &h0);

	w = worker_of(ct, w);
	if (kind != K_LOOKUP || !can_open(ct, p)) {
		finish(ref, RXP_CTT_NONE, 0, kind == K_UNTRACKED ? RXP_ACL_CT_UNTRACKED : RXP_ACL_CT_INVALID);
		return -EINVAL;
	}
	if (bind)
		nat_reply_key(&kr, &k, bind);
	else
		rxp_ct_key_swap(&kr, &k);
	h1 = rxp_ct_hash(t, &kr);
	/* the reply's bucket is a miss of its own: on its way while the rest is done */
	rxp_prefetchw(rxp_ct_bucket_of(t, h1));
	rxp_ct_table_lock(t);
	r = rxp_ct_table_find(t, &k, h0);
	if (r != RXP_CTT_NONE) {
		if (!rxp_ct_tick_past(RXP_CT_LD(&rxp_ct_table_entry(t, r >> 1)->expires), now)) {
			/* another worker was first: the packet is that connection's */
			struct acc acc = { 0, 0 };

			rxp_ct_table_unlock(t);
			track_prepared(ct, w, p, &k, h0, r, kind, now, ref, &acc);
			add_acc(ct, w, &acc);
			return bind ? 1 : 0;	/* a translation asked for is not this connection's */
		}
		rxp_ct_table_delete_locked(t, w, r >> 1);
	}
	/* a translation must not give the reply direction a key another connection has */
	if (bind && rxp_ct_table_find(t, &kr, h1) != RXP_CTT_NONE) {
		rxp_ct_table_unlock(t);
		finish(ref, RXP_CTT_NONE, 0, RXP_ACL_CT_NEW);
		return -EADDRINUSE;
	}
	idx = rxp_ct_table_alloc(t, w, h0, now);
	if (idx == RXP_CTT_NONE) {
		rxp_ct_table_unlock(t);
		finish(ref, RXP_CTT_NONE, 0, RXP_ACL_CT_NEW);
		return -ENOSPC;
	}
	if (!init_entry(ct, rxp_ct_table_entry(t, idx), &k, p, now)) {
		rxp_ct_table_free_new(t, idx);
		rxp_ct_table_unlock(t);
		finish(ref, RXP_CTT_NONE, 0, RXP_ACL_CT_INVALID);
		return -EINVAL;
	}
	if (bind) {
		struct rxp_ct_entry *e = rxp_ct_table_entry(t, idx);

		t->nat[idx].reply = kr;
		t->nat[idx].map = bind->map;
		t->nat[idx].rule = bind->rule;
		t->nat[idx].remote = bind->remote;
		t->nat[idx].map2 = bind->map2;
		RXP_CT_ST(&e->status, (uint8_t)(RXP_CT_LD(&e->status) | RXP_CTE_NAT));
		nat_expires(ct, e, now);
	}
	if (!rxp_ct_table_link(t, w, idx, h0, h1)) {
		rxp_ct_table_unlock(t);
		finish(ref, RXP_CTT_NONE, 0, RXP_ACL_CT_NEW);
		return -ENOSPC;
	}
	rxp_ct_table_unlock(t);
	finish(ref, idx, 0, RXP_ACL_CT_NEW);
	return 0;
}

unsigned rxp_ct_expire(struct rxp_ct *ct, unsigned w, uint64_t now_ns, unsigned budget)
{
	return rxp_ct_table_expire(ct->t, worker_of(ct, w), rxp_ct_tick(now_ns), budget, ct->limit);
}

void rxp_ct_flush(struct rxp_ct *ct)
{
	rxp_ct_table_flush(ct->t);
}

void rxp_ct_stats(const struct rxp_ct *ct, struct rxp_ct_stats *out)
{
	struct rxp_ct_wstats s;
	uint64_t live;

	rxp_ct_table_stats(ct->t, &s, &live);
	memset(out, 0, sizeof(*out));
	out->entries = live;
	out->max = ct->t->max;
#define X(field, metric, help) out->field = s.field;
	RXP_CT_STATS(X)
#undef X
}

/* ---- views ---- */

/* A consistent copy of entry @idx (its seqlock), or false when a writer kept it too long. */
static bool copy_entry(const struct rxp_ct_table *t, uint32_t idx, struct rxp_ct_entry *out)
{
	const struct rxp_ct_entry *e = rxp_ct_table_entry(t, idx);

	for (unsigned tries = 0; tries < 1000; tries++) {
		uint32_t s1 = RXP_CT_LDA(&e->seq);

		if (s1 & 1) {
			rxp_cpu_relax();
			continue;
		}
		memcpy(out, e, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (RXP_CT_LD(&e->seq) == s1)
			return true;
	}
	return false;
}

static void tuple_of_key(struct rxp_ct_tuple *t, const struct rxp_ct_key *k)
{
	memcpy(t->src, k->src, 16);
	memcpy(t->dst, k->dst, 16);
	t->sport = k->sport;
	t->dport = k->dport;
	t->proto = k->proto;
	t->family = k->family;
}

int rxp_ct_walk(struct rxp_ct *ct, uint64_t now_ns, int (*fn)(const struct rxp_ct_view *v, void *ctx),
		void *ctx)
{
	const struct rxp_ct_table *t = ct->t;
	uint32_t now = rxp_ct_tick(now_ns), used = rxp_ct_table_used(t);

	for (uint32_t idx = 0; idx < used; idx++) {
		struct rxp_ct_entry e;
		struct rxp_ct_key rk;
		struct rxp_ct_view v;
		int ret;

		if (!(RXP_CT_LDA(&rxp_ct_table_entry(t, idx)->status) & RXP_CTE_LIVE) || !copy_entry(t, idx, &e))
			continue;
		if (!(e.status & RXP_CTE_LIVE) || rxp_ct_tick_past(e.expires, now))
			continue;
		memset(&v, 0, sizeof(v));
		tuple_of_key(&v.orig, &e.key);
		if (e.status & RXP_CTE_NAT)
			rxp_ct_key_load(&rk, &t->nat[idx].reply);
		else
			rxp_ct_key_swap(&rk, &e.key);
		tuple_of_key(&v.reply, &rk);
		v.tcp_state = e.key.proto == RXP_IPPROTO_TCP ? e.l4state : 0;
		v.seen_reply = e.status & RXP_CTE_SEEN_REPLY;
		v.assured = e.status & RXP_CTE_ASSURED;
		v.expires_in_s = rxp_ct_s_of_ticks(e.expires - now);
		for (unsigned d = 0; d < 2; d++) {
			v.packets[d] = e.packets[d];
			v.bytes[d] = e.bytes[d];
		}
		if (e.key.icmp_type) {
			v.icmp_type[0] = e.key.icmp_type;
			v.icmp_type[1] = icmp_answer_of(e.key.family, e.key.icmp_type);
			v.icmp_code = e.key.icmp_code;
		}
		ret = fn(&v, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

/* conntrack-tools' names of the protocols it knows; the others are "unknown". */
static const char *proto_name(uint8_t family, uint8_t proto)
{
	switch (proto) {
	case RXP_IPPROTO_TCP: return "tcp";
	case RXP_IPPROTO_UDP: return "udp";
	case CT_IPPROTO_UDPLITE: return "udplite";
	case RXP_IPPROTO_ICMP: return family == 4 ? "icmp" : "unknown";
	case RXP_IPPROTO_ICMP6: return family == 6 ? "icmpv6" : "unknown";
	case CT_IPPROTO_SCTP: return "sctp";
	case CT_IPPROTO_GRE: return "gre";
	case CT_IPPROTO_DCCP: return "dccp";
	default: return "unknown";
	}
}

struct out {
	char *buf;
	size_t len, n;
};

static void __attribute__((format(printf, 2, 3))) put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(o->n < o->len ? o->buf + o->n : NULL, o->n < o->len ? o->len - o->n : 0, fmt, ap);
	va_end(ap);
	if (r > 0)
		o->n += (size_t)r;
}

static void put_tuple(struct out *o, const struct rxp_ct_tuple *t, const struct rxp_ct_view *v, unsigned dir)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	int af = t->family == 4 ? AF_INET : AF_INET6;

	if (!inet_ntop(af, t->src, s, sizeof(s)))
		strcpy(s, "?");
	if (!inet_ntop(af, t->dst, d, sizeof(d)))
		strcpy(d, "?");
	put(o, "src=%s dst=%s ", s, d);
	if (has_ports(t->proto))
		put(o, "sport=%u dport=%u ", t->sport, t->dport);
	else if (is_icmp(t->family, t->proto))
		put(o, "type=%u code=%u id=%u ", v->icmp_type[dir], v->icmp_code, t->sport);
	put(o, "packets=%" PRIu64 " bytes=%" PRIu64 " ", v->packets[dir], v->bytes[dir]);
}

int rxp_ct_view_format(const struct rxp_ct_view *v, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };

	put(&o, "%-8s %u %" PRIu64 " ", proto_name(v->orig.family, v->orig.proto), v->orig.proto,
	    v->expires_in_s);
	if (v->orig.proto == RXP_IPPROTO_TCP)
		put(&o, "%s ", rxp_ct_tcp_state_name(v->tcp_state));
	put_tuple(&o, &v->orig, v, 0);
	if (!v->seen_reply)
		put(&o, "[UNREPLIED] ");
	put_tuple(&o, &v->reply, v, 1);
	if (v->assured)
		put(&o, "[ASSURED] ");
	/* no blank at the end, as conntrack prints it */
	o.n--;
	if (len)
		buf[RXP_MIN(o.n, len - 1)] = '\0';
	return (int)o.n;
}

/* ---- translated connections (src/net/nat.c) ---- */

static const struct {
	const char *name;
	uint32_t secs;
} nat_timeouts[RXP_CT_NAT_TO_MAX] = {
#define X(id, name, secs) [RXP_CT_NAT_TO_##id] = { name, secs },
	RXP_CT_NAT_TIMEOUTS(X)
#undef X
};

int rxp_ct_nat_timeout_of(const char *name)
{
	for (int t = 0; name && t < RXP_CT_NAT_TO_MAX; t++)
		if (!strcmp(name, nat_timeouts[t].name))
			return t;
	return -1;
}

const char *rxp_ct_nat_timeout_name(enum rxp_ct_nat_timeout t)
{
	return (unsigned)t < RXP_CT_NAT_TO_MAX ? nat_timeouts[t].name : "?";
}

uint32_t rxp_ct_nat_timeout_default(enum rxp_ct_nat_timeout t)
{
	return (unsigned)t < RXP_CT_NAT_TO_MAX ? nat_timeouts[t].secs : 0;
}

void rxp_ct_set_nat_timeout(struct rxp_ct *ct, enum rxp_ct_nat_timeout t, uint32_t seconds)
{
	if ((unsigned)t < RXP_CT_NAT_TO_MAX)
		RXP_CT_ST(&ct->nat_to[t], rxp_ct_ticks_of_s(clamp_timeout(seconds)));
}

void rxp_ct_set_nat_release(struct rxp_ct *ct, void (*fn)(void *ctx, uint32_t map, uint32_t remote), void *ctx)
{
	ct->release_fn = fn;
	ct->t->nat_ctx = ct;
	ct->t->nat_release = fn ? release_nat : NULL;
	ct->release_ctx = ctx;
}

bool rxp_ct_nat_target(const struct rxp_ct *ct, const struct rxp_ct_ref *ref, struct rxp_ct_nat4 *out)
{
	const struct rxp_ct_table *t = ct->t;
	const struct rxp_ct_entry *e;
	const struct rxp_ct_key *k;

	if (ref->entry >= t->phys)
		return false;
	e = rxp_ct_table_entry(t, ref->entry);
	if (!(RXP_CT_LDA(&e->status) & RXP_CTE_NAT))
		return false;
	/* it leaves as the other direction's key seen back: that key's source is its destination */
	k = ref->dir ? &e->key : &t->nat[ref->entry].reply;
	memcpy(&out->src, k->dst, 4);
	memcpy(&out->dst, k->src, 4);
	out->sport = k->dport;
	out->dport = k->sport;
	out->proto = k->proto;
	return true;
}

uint32_t rxp_ct_nat_rule(const struct rxp_ct *ct, uint32_t entry)
{
	return entry < ct->t->phys ? RXP_CT_LD(&ct->t->nat[entry].rule) : UINT32_MAX;
}

unsigned rxp_ct_nat_forget_addr(struct rxp_ct *ct, uint32_t addr)
{
	struct rxp_ct_table *t = ct->t;
	uint32_t used = rxp_ct_table_used(t);
	unsigned n = 0;

	for (uint32_t idx = 0; idx < used; idx++) {
		const struct rxp_ct_entry *e = rxp_ct_table_entry(t, idx);
		uint8_t status = RXP_CT_LDA(&e->status);
		uint32_t d;

		if (!(status & RXP_CTE_LIVE) || !(status & RXP_CTE_NAT))
			continue;
		memcpy(&d, t->nat[idx].reply.dst, 4);
		if (d == addr && rxp_ct_table_delete(t, t->n_workers, idx))
			n++;
	}
	return n;
}
