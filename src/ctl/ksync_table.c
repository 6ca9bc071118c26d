/* SPDX-License-Identifier: MIT */
/*
 * Kernel sync's mirrored table (ksync_priv.h; the design is told in
 * ksync.c): the open-addressing hash table of records and the pool of
 * interned nexthops they point to by id.
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
uint32_t ks_nh_get(struct rxp_ksync *k, uint8_t family, bool has_gw, uint16_t port,
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

void ks_nh_ref(struct rxp_ksync *k, uint32_t id)
{
	k->nhs[id].refs++;
}

/* Drops a reference; the last one frees the id and takes it out of the index. */
void ks_nh_put(struct rxp_ksync *k, uint32_t id)
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
