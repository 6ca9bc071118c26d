/* SPDX-License-Identifier: MIT */
/* Open addressing with linear probing; removal shifts the cluster back, so no tombstones. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "rxpath/neigh.h"

static uint32_t neigh_hash(uint16_t ifidx, uint8_t family, const uint8_t *addr)
{
	uint32_t h = 2166136261u ^ ifidx ^ ((uint32_t)family << 16);
	unsigned len = family == 4 ? 4 : 16;

	for (unsigned i = 0; i < len; i++)
		h = (h ^ addr[i]) * 16777619u;
	return h ^ (h >> 15);
}

static bool neigh_match(const struct rxp_neigh *n, uint16_t ifidx, uint8_t family,
			const uint8_t *addr)
{
	return n->state != RXP_NEIGH_FREE && n->ifidx == ifidx && n->family == family &&
	       !memcmp(n->addr, addr, family == 4 ? 4 : 16);
}

int rxp_neigh_init(struct rxp_neigh_table *t, uint32_t max_entries)
{
	memset(t, 0, sizeof(*t));
	if (max_entries == 0 || max_entries > (1u << 20))
		return -EINVAL;
	t->size = rxp_pow2_roundup(max_entries * 2);
	t->mask = t->size - 1;
	t->max_entries = max_entries;
	t->slots = calloc(t->size, sizeof(*t->slots));
	return t->slots ? 0 : -ENOMEM;
}

void rxp_neigh_free(struct rxp_neigh_table *t)
{
	free(t->slots);
	t->slots = NULL;
}

struct rxp_neigh *rxp_neigh_lookup(struct rxp_neigh_table *t, uint16_t ifidx, uint8_t family,
				   const uint8_t *addr)
{
	for (uint32_t i = neigh_hash(ifidx, family, addr);; i++) {
		struct rxp_neigh *n = &t->slots[i & t->mask];

		if (n->state == RXP_NEIGH_FREE)
			return NULL;
		if (neigh_match(n, ifidx, family, addr))
			return n;
	}
}

struct rxp_neigh *rxp_neigh_create(struct rxp_neigh_table *t, uint16_t ifidx, uint8_t family,
				   const uint8_t *addr, enum rxp_neigh_state state)
{
	if (t->n_entries >= t->max_entries)
		return NULL;
	for (uint32_t i = neigh_hash(ifidx, family, addr);; i++) {
		struct rxp_neigh *n = &t->slots[i & t->mask];

		if (n->state != RXP_NEIGH_FREE)
			continue;
		memset(n, 0, sizeof(*n));
		n->state = (uint8_t)state;
		n->family = family;
		n->ifidx = ifidx;
		memcpy(n->addr, addr, family == 4 ? 4 : 16);
		t->n_entries++;
		return n;
	}
}

void rxp_neigh_remove(struct rxp_neigh_table *t, struct rxp_neigh *n)
{
	uint32_t hole = (uint32_t)(n - t->slots);

	n->state = RXP_NEIGH_FREE;
	t->n_entries--;
	rxp_neigh_gen_bump(t);
	/* Backward shift: move later members of the cluster into the hole when their home allows. */
	for (uint32_t j = (hole + 1) & t->mask;; j = (j + 1) & t->mask) {
		struct rxp_neigh *m = &t->slots[j];
		uint32_t home;

		if (m->state == RXP_NEIGH_FREE)
			return;
		home = neigh_hash(m->ifidx, m->family, m->addr) & t->mask;
		/* m may move to hole if home is not in the cyclic range (hole, j] */
		if (((j - home) & t->mask) >= ((j - hole) & t->mask)) {
			t->slots[hole] = *m;
			m->state = RXP_NEIGH_FREE;
			hole = j;
		}
	}
}

void rxp_neigh_walk(struct rxp_neigh_table *t, void (*fn)(void *ctx, struct rxp_neigh *n),
		    void *ctx)
{
	/*
	 * A removal may shift a later entry into the slot just visited; visit a
	 * slot again while it holds an entry that has not been seen at it yet.
	 */
	for (uint32_t i = 0; i < t->size; i++) {
		struct rxp_neigh *n = &t->slots[i];

		while (n->state != RXP_NEIGH_FREE) {
			struct rxp_neigh before = *n;

			fn(ctx, n);
			if (n->state == RXP_NEIGH_FREE || !memcmp(&before, n, sizeof(before)) ||
			    neigh_match(n, before.ifidx, before.family, before.addr))
				break;
		}
	}
}
