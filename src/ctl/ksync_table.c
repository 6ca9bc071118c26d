/* SPDX-License-Identifier: MIT */
/*
 * Kernel sync's mirrored table (ksync_priv.h; the design is told in
 * ksync.c): the open-addressing hash table of records and the pool of
 * interned nexthop sets (one path, or the paths of a multipath route)
 * they point to by id.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ksync_priv.h"

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

uint32_t ks_key_hash(const struct key *key)
{
	return hash_fields(key->kind, key->family, key->plen, key->port, key->addr);
}

static uint32_t rec_hash(const struct rec *r)
{
	return hash_fields(r->kind, r->family, r->plen, r->port, r->addr);
}

bool ks_rec_in_group(const struct rec *r, const struct key *key)
{
	return r->kind == key->kind && r->family == key->family && r->plen == key->plen &&
	       r->port == key->port && !memcmp(r->addr, key->addr, 16);
}

struct key ks_key_of(const struct rec *r)
{
	struct key key = { .kind = r->kind, .family = r->family, .plen = r->plen, .port = r->port };

	memcpy(key.addr, r->addr, 16);
	return key;
}

/* ---- nexthop pool: interned sets of paths ---- */

static int path_cmp(const struct ks_path *a, const struct ks_path *b)
{
	int c = memcmp(a->gw, b->gw, 16);

	if (c)
		return c;
	if (a->port != b->port)
		return a->port < b->port ? -1 : 1;
	if (a->has_gw != b->has_gw)
		return a->has_gw < b->has_gw ? -1 : 1;
	return a->weight < b->weight ? -1 : a->weight > b->weight;
}

/* Insertion sort: sets are short, and most have one path. */
void ks_paths_sort(struct ks_path *paths, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		struct ks_path p = paths[i];
		unsigned j = i;

		for (; j && path_cmp(&paths[j - 1], &p) > 0; j--)
			paths[j] = paths[j - 1];
		paths[j] = p;
	}
}

static uint32_t set_hash(uint8_t family, const struct ks_path *paths, unsigned n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)family << 8 | n);

	for (unsigned i = 0; i < n; i++) {
		const struct ks_path *p = &paths[i];
		uint64_t a, b;

		memcpy(&a, p->gw, 8);
		memcpy(&b, p->gw + 8, 8);
		h = mix64(h ^ a);
		h = mix64(h ^ b ^ ((uint64_t)p->port << 32 | (uint64_t)p->weight << 16 | p->has_gw));
	}
	return (uint32_t)h;
}

static bool set_is(const struct nexthop *nh, uint32_t hash, uint8_t family,
		   const struct ks_path *paths, unsigned n)
{
	return nh->hash == hash && nh->family == family && nh->n_paths == n &&
	       !memcmp(ks_nh_paths(nh), paths, n * sizeof(*paths));
}

/* Returns the id of the set or 0; *@slot is where it is or would go in the index. */
static uint32_t nh_lookup(const struct rxp_ksync *k, uint32_t hash, uint8_t family,
			  const struct ks_path *paths, unsigned n, uint32_t *slot)
{
	uint32_t i = hash & k->nh_index_mask;

	for (;; i = (i + 1) & k->nh_index_mask) {
		uint32_t id = k->nh_index[i];

		if (!id || set_is(&k->nhs[id], hash, family, paths, n)) {
			*slot = i;
			return id;
		}
	}
}

/* Returns the first free slot of @hash's probe sequence (live entries are all distinct). */
static uint32_t nh_free_slot(const struct rxp_ksync *k, uint32_t hash)
{
	uint32_t i = hash & k->nh_index_mask;

	while (k->nh_index[i])
		i = (i + 1) & k->nh_index_mask;
	return i;
}

static int nh_index_resize(struct rxp_ksync *k, uint32_t size)
{
	uint32_t *index = calloc(size, sizeof(*index));

	if (!index)
		return -ENOMEM;
	free(k->nh_index);
	k->nh_index = index;
	k->nh_index_mask = size - 1;
	for (uint32_t id = 1; id < k->nh_used; id++)
		if (k->nhs[id].refs)
			k->nh_index[nh_free_slot(k, k->nhs[id].hash)] = id;
	return 0;
}

/* Returns the id of the set with one more reference, or 0 when out of memory. */
uint32_t ks_nh_get(struct rxp_ksync *k, uint8_t family, const struct ks_path *paths, unsigned n)
{
	uint32_t hash = set_hash(family, paths, n), slot, id;
	struct ks_path *many = NULL;
	struct nexthop *nh;

	if (!n || n > KS_PATHS_MAX)
		return 0;
	id = nh_lookup(k, hash, family, paths, n, &slot);
	if (id) {
		k->nhs[id].refs++;
		return id;
	}
	if ((k->nh_live + 1) * 2 > k->nh_index_mask + 1) {
		if (nh_index_resize(k, (k->nh_index_mask + 1) * 2))
			return 0;
		slot = nh_free_slot(k, hash);
	}
	if (n > 1) {
		many = malloc(n * sizeof(*many));
		if (!many)
			return 0;
		memcpy(many, paths, n * sizeof(*many));
	}
	if (k->nh_free) {
		id = k->nh_free;
		k->nh_free = k->nhs[id].next_free;
	} else {
		if (k->nh_used == k->nh_cap) {
			uint32_t cap = k->nh_cap * 2;
			struct nexthop *nhs = realloc(k->nhs, cap * sizeof(*nhs));

			if (!nhs) {
				free(many);
				return 0;
			}
			k->nhs = nhs;
			k->nh_cap = cap;
		}
		id = k->nh_used++;
	}
	nh = &k->nhs[id];
	memset(nh, 0, sizeof(*nh));
	nh->family = family;
	nh->n_paths = (uint8_t)n;
	nh->refs = 1;
	nh->hash = hash;
	if (many) {
		nh->many = many;
		k->nh_heap_bytes += n * sizeof(*many);
	} else {
		nh->one = paths[0];
	}
	k->nh_index[slot] = id;
	k->nh_live++;
	return id;
}

void ks_nh_ref(struct rxp_ksync *k, uint32_t id)
{
	k->nhs[id].refs++;
}

/* Drops a reference; the last one frees the id (and its paths) and takes it out of the index. */
void ks_nh_put(struct rxp_ksync *k, uint32_t id)
{
	struct nexthop *nh = &k->nhs[id];
	uint32_t i, j, mask = k->nh_index_mask;

	if (!id || --nh->refs)
		return;
	for (i = nh->hash & mask; k->nh_index[i] != id; i = (i + 1) & mask)
		;
	k->nh_index[i] = 0;
	/* backward-shift deletion: pull later members of the cluster into the hole */
	for (j = (i + 1) & mask; k->nh_index[j]; j = (j + 1) & mask) {
		uint32_t home = k->nhs[k->nh_index[j]].hash & mask;

		if (j > i ? (home <= i || home > j) : (home <= i && home > j)) {
			k->nh_index[i] = k->nh_index[j];
			k->nh_index[j] = 0;
			i = j;
		}
	}
	if (nh->n_paths > 1) {
		k->nh_heap_bytes -= nh->n_paths * sizeof(*nh->many);
		free(nh->many);
	}
	nh->many = NULL;
	nh->n_paths = 0;
	nh->next_free = k->nh_free;
	k->nh_free = id;
	k->nh_live--;
}

void ks_nh_free_all(struct rxp_ksync *k)
{
	for (uint32_t id = 1; id < k->nh_used; id++)
		if (k->nhs[id].refs && k->nhs[id].n_paths > 1)
			free(k->nhs[id].many);
	k->nh_heap_bytes = 0;
}

/* ---- record table ---- */

struct rec *ks_rec_find(struct rxp_ksync *k, const struct key *key, uint32_t metric)
{
	for (uint32_t i = ks_key_hash(key) & k->mask; k->slots[i].kind; i = (i + 1) & k->mask)
		if (k->slots[i].metric == metric && ks_rec_in_group(&k->slots[i], key))
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
struct rec *ks_rec_insert(struct rxp_ksync *k, const struct key *key, uint32_t metric)
{
	struct rec *r;

	if (k->n_recs >= k->max_entries)
		return NULL;
	/* at most 3/4 full keeps linear probing short */
	if ((uint64_t)(k->n_recs + 1) * 4 > (uint64_t)(k->mask + 1) * 3 && table_grow(k))
		return NULL;
	r = free_slot(k, ks_key_hash(key));
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
void ks_rec_free(struct rxp_ksync *k, struct rec *r)
{
	uint32_t i = (uint32_t)(r - k->slots), j, mask = k->mask;

	if (r->kind == KIND_ROUTE) {
		ks_nh_put(k, r->r.nh);
		if (r->flags & F_INSTALLED)
			ks_nh_put(k, r->r.inst_nh);
		if (r->r.kid)
			ks_kobj_route_put(k, r->r.kid);
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

bool ks_route_set_nh(struct rxp_ksync *k, struct rec *r, uint32_t nh, enum ks_why why)
{
	if (r->r.nh == nh && (nh || r->why == why)) {
		ks_nh_put(k, nh);	/* the same set: the record has its reference already */
		return false;
	}
	ks_nh_put(k, r->r.nh);
	r->r.nh = nh;
	r->why = nh ? WHY_OK : (uint8_t)why;
	/*
	 * new content: worth a try. Nothing to mirror keeps a wait under a
	 * configured route, for the reconcile to take rxpath's copy back.
	 */
	if (nh || !(r->flags & F_REFUSED) || r->err != EEXIST) {
		r->flags &= (uint8_t)~F_REFUSED;
		r->err = 0;
	}
	return true;
}
