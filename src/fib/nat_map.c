/* SPDX-License-Identifier: MIT */
/* NAT44 endpoint-independent mappings: see nat_map.h for the rules and the layout. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "nat_map.h"
#include "seed.h"
#include "rxpath/common.h"
#include "rxpath/proto.h"

#define NONE RXP_NAT_MAP_NONE
#define EMPTY UINT64_MAX
#define RANDOM_TRIES 16u	/* random candidate ports before the search goes through them all */

enum { IN, OUT };	/* the two indexes */

struct rxp_nat_map {
	struct rxp_nat_mapping *rec;	/* [max]; refs 0: free */
	uint32_t *free_stack;		/* [max]: records given back, reused first */
	/*
	 * [mask + 1] by IN and OUT endpoint: the key's hash (low 32 bits) above
	 * its record number, so that a probe reads a record only when the hash
	 * matches, and a move finds a key's home without hashing it again.
	 * EMPTY: no key.
	 */
	uint64_t *idx[2];
	uint32_t mask, max;
	uint32_t count;			/* in use (atomic: read without the lock) */
	uint32_t hwm;			/* records [0, hwm) have been handed out once */
	uint32_t free_top;
	bool locked, lock_ready;
	uint64_t seed[6];		/* IN index, OUT index, paired address: two words each */
	struct permit *permit;		/* [mask + 1]: address-dependent filtering's (mapping, remote) counts */
	pthread_spinlock_t lock;
};

/*
 * A mapping's remote address with the count of its connections there:
 * address-dependent filtering lets in what comes from such an address.
 * Open addressing by (map + 1, remote); map1 0: empty.
 */
struct permit {
	uint32_t map1, remote, n;
};

/* An index's key: two words, built from the endpoint's fields. */
struct key {
	uint64_t w0, w1;
};

/* A seeded mix of two words, then avalanched (a product alone leaves near keys near). */
static uint64_t hash2(uint64_t a, uint64_t b, const uint64_t *seed)
{
	uint64_t x = rxp_mix64(a ^ seed[0], b ^ seed[1]);

	x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ x >> 27) * 0x94d049bb133111ebull;
	return x ^ x >> 31;
}

static struct key in_key(uint32_t pool_id, uint8_t proto, uint32_t addr, uint16_t port)
{
	return (struct key){ (uint64_t)addr << 32 | pool_id, (uint64_t)proto << 16 | port };
}

static struct key out_key(uint8_t proto, uint32_t addr, uint16_t port)
{
	return (struct key){ addr, (uint64_t)proto << 16 | port };
}

static struct key rec_key(const struct rxp_nat_mapping *r, int side)
{
	return side == IN ? in_key(r->pool_id, r->proto, r->in_addr, r->in_port) :
			    out_key(r->proto, r->out_addr, r->out_port);
}

static uint64_t key_hash(const struct rxp_nat_map *m, struct key k, int side)
{
	return hash2(k.w0, k.w1, &m->seed[2 * side]);
}

static inline uint32_t slot_rec(uint64_t v)
{
	return (uint32_t)v;
}

/* Returns the slot of @side's index that holds @k (hash @h), or the empty slot that ends its run. */
static uint32_t slot_find(const struct rxp_nat_map *m, int side, struct key k, uint64_t h)
{
	const uint64_t *tab = m->idx[side];
	uint32_t tag = (uint32_t)h;

	/* at most half of the slots are in use: a run always ends */
	for (uint32_t s = tag & m->mask;; s = (s + 1) & m->mask) {
		struct key o;

		if (tab[s] == EMPTY)
			return s;
		if ((uint32_t)(tab[s] >> 32) != tag)
			continue;
		o = rec_key(&m->rec[slot_rec(tab[s])], side);
		if (o.w0 == k.w0 && o.w1 == k.w1)
			return s;
	}
}

static void slot_insert(struct rxp_nat_map *m, int side, uint32_t ri)
{
	struct key k = rec_key(&m->rec[ri], side);
	uint64_t h = key_hash(m, k, side);

	m->idx[side][slot_find(m, side, k, h)] = (uint64_t)(uint32_t)h << 32 | ri;
}

/* Takes record @ri out of @side's index, moving back the keys after it that may live in its slot. */
static void slot_remove(struct rxp_nat_map *m, int side, uint32_t ri)
{
	uint64_t *tab = m->idx[side];
	struct key k = rec_key(&m->rec[ri], side);
	uint32_t hole = slot_find(m, side, k, key_hash(m, k, side)), j = hole;

	for (;;) {
		uint32_t home;

		j = (j + 1) & m->mask;
		if (tab[j] == EMPTY)
			break;
		home = (uint32_t)(tab[j] >> 32) & m->mask;
		/* the hole lies between the key's home and its slot: a lookup from home must find it there */
		if (((j - home) & m->mask) >= ((j - hole) & m->mask)) {
			tab[hole] = tab[j];
			hole = j;
		}
	}
	tab[hole] = EMPTY;
}

static void lock(struct rxp_nat_map *m)
{
	if (m->locked)
		pthread_spin_lock(&m->lock);
}

static void unlock(struct rxp_nat_map *m)
{
	if (m->locked)
		pthread_spin_unlock(&m->lock);
}

struct rxp_nat_map *rxp_nat_map_create(uint32_t max, bool locked)
{
	struct rxp_nat_map *m;
	size_t slots;

	if (!max || max > RXP_NAT_MAP_MAX) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		goto nomem;
	slots = rxp_pow2_roundup(2 * max);
	m->mask = (uint32_t)slots - 1;
	m->max = max;
	m->locked = locked;
	m->rec = calloc(max, sizeof(*m->rec));
	m->free_stack = malloc((size_t)max * sizeof(uint32_t));
	m->idx[IN] = malloc(slots * sizeof(uint64_t));
	m->idx[OUT] = malloc(slots * sizeof(uint64_t));
	m->permit = calloc(slots, sizeof(*m->permit));	/* zero pages until used */
	if (!m->rec || !m->free_stack || !m->idx[IN] || !m->idx[OUT] || !m->permit)
		goto nomem;
	memset(m->idx[IN], 0xff, slots * sizeof(uint64_t));
	memset(m->idx[OUT], 0xff, slots * sizeof(uint64_t));
	if (locked && pthread_spin_init(&m->lock, PTHREAD_PROCESS_PRIVATE))
		goto nomem;
	m->lock_ready = locked;
	rxp_seed_fill(m->seed, RXP_ARRAY_SIZE(m->seed), m);
	return m;
nomem:
	rxp_nat_map_destroy(m);
	errno = ENOMEM;
	return NULL;
}

void rxp_nat_map_destroy(struct rxp_nat_map *m)
{
	if (!m)
		return;
	free(m->rec);
	free(m->free_stack);
	free(m->idx[IN]);
	free(m->idx[OUT]);
	free(m->permit);
	if (m->lock_ready)
		pthread_spin_destroy(&m->lock);
	free(m);
}

/* True when no mapping holds (proto, addr, port) and the caller does not exclude it. */
static bool port_free(const struct rxp_nat_map *m, uint8_t proto, uint32_t addr, uint16_t port,
		      rxp_nat_excluded_fn excluded, void *ctx)
{
	struct key k = out_key(proto, addr, port);

	if (m->idx[OUT][slot_find(m, OUT, k, key_hash(m, k, OUT))] != EMPTY)
		return false;
	return !excluded || !excluded(ctx, proto, addr, port);
}

/* Returns the external port for @in_port on @addr (searched from @start), or -1 when none is free. */
static int32_t pick_port(const struct rxp_nat_map *m, const struct rxp_nat_pool *pool, uint8_t proto,
			 uint32_t addr, uint16_t in_port, uint32_t start, rxp_nat_excluded_fn excluded,
			 void *ctx)
{
	uint32_t lo, hi, n, p;

	if (proto == RXP_IPPROTO_ICMP) {
		lo = 1;
		hi = 65535;
	} else if (pool->default_ports) {
		/* RFC 4787 REQ-3: well-known ports stay well-known, the others stay out of them */
		lo = in_port < 1024 ? 1 : 1024;
		hi = in_port < 1024 ? 1023 : 65535;
	} else {
		lo = pool->port_lo;
		hi = pool->port_hi;
	}
	/* port preservation; an echo identifier 0 can only be kept */
	if (((in_port >= lo && in_port <= hi) || (proto == RXP_IPPROTO_ICMP && !in_port)) &&
	    port_free(m, proto, addr, in_port, excluded, ctx))
		return in_port;
	n = hi - lo + 1;
	/*
	 * Random candidates first: a linear search from a random start lands
	 * at the end of a run of taken ports ever more often as the runs grow
	 * (they merge), random ones find a free port in 1 / (1 - load) tries.
	 * Then every port, so that a nearly full range still gives its last.
	 */
	for (uint32_t i = 0, x = start | 1; i < RANDOM_TRIES; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p = lo + x % n;
		if (port_free(m, proto, addr, (uint16_t)p, excluded, ctx))
			return (int32_t)p;
	}
	p = lo + start % n;
	for (uint32_t i = 0; i < n; i++, p = p == hi ? lo : p + 1)
		if (port_free(m, proto, addr, (uint16_t)p, excluded, ctx))
			return (int32_t)p;
	return -1;
}

uint32_t rxp_nat_map_get(struct rxp_nat_map *m, const struct rxp_nat_pool *pool, uint8_t proto,
			 uint32_t in_addr, uint16_t in_port, rxp_nat_excluded_fn excluded, void *ctx,
			 int *err)
{
	struct key k = in_key(pool->id, proto, in_addr, in_port);
	uint64_t n_addr = (uint64_t)pool->addr_hi - pool->addr_lo + 1, h;
	uint32_t ri = NONE, slot, addr;
	struct rxp_nat_mapping *r;
	int e = 0;
	int32_t port;

	if (pool->addr_lo > pool->addr_hi ||
	    (proto != RXP_IPPROTO_ICMP && !pool->default_ports && pool->port_lo > pool->port_hi)) {
		e = -EINVAL;
		goto out;
	}
	lock(m);
	h = key_hash(m, k, IN);
	slot = slot_find(m, IN, k, h);
	ri = slot_rec(m->idx[IN][slot]);
	if (ri != NONE) {
		m->rec[ri].refs++;	/* endpoint-independent: the same mapping for every destination */
		goto unlock;
	}
	if (m->count == m->max) {
		e = -ENOSPC;
		goto unlock;
	}
	/* paired pooling: the internal address alone picks the external one, never another */
	addr = pool->addr_lo + (uint32_t)(hash2(in_addr, 0, &m->seed[4]) % n_addr);
	port = pick_port(m, pool, proto, addr, in_port, (uint32_t)(h >> 32), excluded, ctx);
	if (port < 0) {
		e = -EADDRNOTAVAIL;
		goto unlock;
	}
	ri = m->free_top ? m->free_stack[--m->free_top] : m->hwm++;
	r = &m->rec[ri];
	*r = (struct rxp_nat_mapping){ .in_addr = in_addr, .out_addr = addr, .in_port = in_port,
				       .out_port = (uint16_t)port, .proto = proto, .pool_id = pool->id,
				       .refs = 1 };
	m->idx[IN][slot] = (uint64_t)(uint32_t)h << 32 | ri;	/* the IN index has not changed since the slot was found */
	slot_insert(m, OUT, ri);
	__atomic_store_n(&m->count, m->count + 1, __ATOMIC_RELAXED);
unlock:
	unlock(m);
out:
	if (err)
		*err = e;
	return ri;
}

void rxp_nat_map_hold(struct rxp_nat_map *m, uint32_t idx)
{
	lock(m);
	if (idx < m->max && m->rec[idx].refs)
		m->rec[idx].refs++;
	unlock(m);
}

void rxp_nat_map_put(struct rxp_nat_map *m, uint32_t idx)
{
	lock(m);
	if (idx < m->max && m->rec[idx].refs && !--m->rec[idx].refs) {
		slot_remove(m, IN, idx);
		slot_remove(m, OUT, idx);
		m->free_stack[m->free_top++] = idx;
		__atomic_store_n(&m->count, m->count - 1, __ATOMIC_RELAXED);
	}
	unlock(m);
}

uint32_t rxp_nat_map_find_out(struct rxp_nat_map *m, uint8_t proto, uint32_t out_addr, uint16_t out_port)
{
	struct key k = out_key(proto, out_addr, out_port);
	uint32_t ri;

	lock(m);
	ri = slot_rec(m->idx[OUT][slot_find(m, OUT, k, key_hash(m, k, OUT))]);
	unlock(m);
	return ri;
}

uint32_t rxp_nat_map_find_in(struct rxp_nat_map *m, uint32_t pool_id, uint8_t proto, uint32_t in_addr,
			     uint16_t in_port)
{
	struct key k = in_key(pool_id, proto, in_addr, in_port);
	uint32_t ri;

	lock(m);
	ri = slot_rec(m->idx[IN][slot_find(m, IN, k, key_hash(m, k, IN))]);
	unlock(m);
	return ri;
}

bool rxp_nat_map_read(struct rxp_nat_map *m, uint32_t idx, struct rxp_nat_mapping *out)
{
	bool used;

	lock(m);
	used = idx < m->max && m->rec[idx].refs;
	if (used)
		*out = m->rec[idx];
	unlock(m);
	return used;
}

int rxp_nat_map_walk(struct rxp_nat_map *m, int (*fn)(const struct rxp_nat_mapping *mp, void *ctx),
		     void *ctx)
{
	int rc = 0;

	lock(m);
	for (uint32_t i = 0; i < m->hwm && !rc; i++)
		if (m->rec[i].refs)
			rc = fn(&m->rec[i], ctx);
	unlock(m);
	return rc;
}

uint32_t rxp_nat_map_count(const struct rxp_nat_map *m)
{
	return __atomic_load_n(&m->count, __ATOMIC_RELAXED);
}

uint32_t rxp_nat_map_max(const struct rxp_nat_map *m)
{
	return m->max;
}

size_t rxp_nat_map_memory(const struct rxp_nat_map *m)
{
	return sizeof(*m) + (size_t)m->max * (sizeof(*m->rec) + sizeof(uint32_t)) +
	       2 * ((size_t)m->mask + 1) * sizeof(uint64_t) + ((size_t)m->mask + 1) * sizeof(*m->permit);
}

void rxp_nat_map_flush(struct rxp_nat_map *m)
{
	lock(m);
	memset(m->idx[IN], 0xff, ((size_t)m->mask + 1) * sizeof(uint64_t));
	memset(m->idx[OUT], 0xff, ((size_t)m->mask + 1) * sizeof(uint64_t));
	memset(m->rec, 0, (size_t)m->hwm * sizeof(*m->rec));
	memset(m->permit, 0, ((size_t)m->mask + 1) * sizeof(*m->permit));
	m->hwm = 0;
	m->free_top = 0;
	__atomic_store_n(&m->count, 0, __ATOMIC_RELAXED);
	unlock(m);
}

/* The permit slot of (@idx, @remote), or the empty one that ends its run. */
static uint32_t permit_slot(const struct rxp_nat_map *m, uint32_t idx, uint32_t remote)
{
	uint32_t s = (uint32_t)hash2(idx, remote, &m->seed[0]) & m->mask;

	/* no more counts than connections, at most max: under half of the slots */
	while (m->permit[s].map1 && (m->permit[s].map1 != idx + 1 || m->permit[s].remote != remote))
		s = (s + 1) & m->mask;
	return s;
}

void rxp_nat_map_permit(struct rxp_nat_map *m, uint32_t idx, uint32_t remote, int delta)
{
	uint32_t s, j;

	if (idx >= m->max)
		return;
	lock(m);
	s = permit_slot(m, idx, remote);
	if (delta > 0) {
		m->permit[s] = (struct permit){ idx + 1, remote, m->permit[s].n + 1 };
	} else if (m->permit[s].map1 && !--m->permit[s].n) {
		/* the last one: the slot goes, the run after it moved back (as slot_remove) */
		for (j = s;;) {
			uint32_t home;

			j = (j + 1) & m->mask;
			if (!m->permit[j].map1)
				break;
			home = (uint32_t)hash2(m->permit[j].map1 - 1, m->permit[j].remote, &m->seed[0]) & m->mask;
			if (((j - home) & m->mask) >= ((j - s) & m->mask)) {
				m->permit[s] = m->permit[j];
				s = j;
			}
		}
		m->permit[s] = (struct permit){ 0, 0, 0 };
	}
	unlock(m);
}

bool rxp_nat_map_permits(struct rxp_nat_map *m, uint32_t idx, uint32_t remote)
{
	bool yes;

	if (idx >= m->max)
		return false;
	lock(m);
	yes = m->permit[permit_slot(m, idx, remote)].map1 != 0;
	unlock(m);
	return yes;
}
