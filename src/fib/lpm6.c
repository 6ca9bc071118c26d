/* SPDX-License-Identifier: MIT */
/*
 * IPv6 LPM: a 24-bit first level and 8-bit strides (see include/rxpath/lpm6.h
 * for the layout and the concurrency contract): the writer side and the bulk
 * lookup.
 *
 * Depths. A group's entries are of three kinds:
 *  - own: a route of this level (length base + 1 .. base + 8), depth field
 *    length - base;
 *  - inherited: what the entry above the group meant when the group was
 *    made, depth field 0. All inherited entries of a group share one value
 *    and one length (inh_len[g]), because a route short enough to cover one
 *    of them covers the whole group;
 *  - EXT: a group of the next level, whose own inh_len says the length of
 *    the route the entry stands for.
 * So the writer knows the length of the route behind every entry, which is
 * all DIR-24-8's update rules need: an add overwrites what is no longer than
 * itself, a delete hands what was its own to the next longest covering
 * route (found in the rule store).
 *
 * n_own[g] counts a group's own and EXT entries; when a delete brings it to
 * 0 the group means one value and folds back into the entry above it.
 *
 * The rule store is an open-addressing hash table (linear probing,
 * backward-shift deletion) keyed by prefix and length.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "rxpath/lpm6.h"
#include "table_mem.h"

#define TBL24_BYTES	((size_t)RXP_LPM6_TBL24_ENTRIES * sizeof(uint32_t))
#define GROUP_BYTES	((size_t)RXP_LPM6_GROUP_ENTRIES * sizeof(uint32_t))
#define ROUTES_MAX	(1u << 24)
#define GROUPS_MAX	(1u << 22)
#define GROUPS_DEFAULT_MIN 1024u
#define GROUPS_PER_ROUTE 4u
#define LEVELS		14u	/* tbl24 and 13 levels of groups */
#define BULK_SLOTS	24u	/* lookups in flight in lookup_bulk */

struct rule6 {
	uint64_t hi, lo;	/* the prefix, big-endian halves, host bits zero */
	uint32_t nh;
	uint8_t len;
	uint8_t used;
};

struct rxp_lpm6_writer {
	struct rule6 *rules;
	uint32_t rule_shift;	/* 64 - log2(slots) */
	uint32_t rule_mask;
	uint32_t n_rules;
	uint32_t max_routes;
	uint32_t n_by_len[129];
	uint64_t lens[3];	/* bit l: some route has length l */

	uint32_t max_groups;
	uint32_t n_fresh;	/* groups [0, n_fresh) have been handed out at least once */
	uint32_t n_free;
	uint32_t n_retired;
	uint32_t *free_groups;	/* stack of reusable groups */
	uint32_t *retired;	/* emptied by deletes, waiting for a grace period */
	uint16_t *n_own;	/* per group: own and EXT entries */
	uint8_t *inh_len;	/* per group: length of the route its inherited entries stand for */
	size_t groups_len;	/* mapped bytes of lpm->groups */
};

/* A prefix as the writer handles it. */
struct pfx {
	uint64_t hi, lo;
	uint32_t len;
};

/* A route as an entry value: VALID | nh with its length, or nothing (val 0, len 0). */
struct route {
	uint32_t val;
	uint32_t len;
};

static inline uint32_t field_of(uint32_t e)
{
	return e >> RXP_LPM6_DEPTH_SHIFT;
}

static inline uint32_t level_of(uint32_t len)
{
	return len <= 24 ? 0 : (len - 25) / 8 + 1;
}

static inline uint32_t base_of(uint32_t level)
{
	return 16 + 8 * level;
}

static inline uint64_t mask64(uint32_t bits)
{
	return bits >= 64 ? ~0ull : bits ? ~0ull << (64 - bits) : 0;
}

static inline struct pfx pfx_make(const uint8_t b[16], uint32_t len)
{
	struct pfx p = { 0, 0, len };

	for (int i = 0; i < 8; i++) {
		p.hi = p.hi << 8 | b[i];
		p.lo = p.lo << 8 | b[8 + i];
	}
	p.hi &= mask64(len);
	p.lo &= mask64(len > 64 ? len - 64 : 0);
	return p;
}

static inline struct pfx pfx_trunc(const struct pfx *p, uint32_t len)
{
	struct pfx q = { p->hi & mask64(len), p->lo & mask64(len > 64 ? len - 64 : 0), len };

	return q;
}

/* Returns byte @i (0..15) of the prefix. */
static inline uint32_t pfx_byte(const struct pfx *p, uint32_t i)
{
	uint64_t half = i < 8 ? p->hi : p->lo;

	return (uint32_t)(half >> (56 - 8 * (i & 7))) & 0xff;
}

static inline uint32_t ld(const _Atomic uint32_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

static inline void st(_Atomic uint32_t *p, uint32_t v)
{
	atomic_store_explicit(p, v, memory_order_relaxed);
}

static inline _Atomic uint32_t *group_at(const struct rxp_lpm6 *lpm, uint32_t g)
{
	return lpm->groups + (size_t)g * RXP_LPM6_GROUP_ENTRIES;
}

/* ---- the rule store ---- */

static inline uint32_t rule_home(const struct rxp_lpm6_writer *w, const struct pfx *p)
{
	uint64_t h = p->hi * 0x9e3779b97f4a7c15ull;

	h ^= (p->lo + p->len) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 29;
	return (uint32_t)((h * 0x9e3779b97f4a7c15ull) >> w->rule_shift);
}

/* Returns the slot holding @p, or the empty slot where it would go; *found says which. */
static uint32_t rule_slot(const struct rxp_lpm6_writer *w, const struct pfx *p, bool *found)
{
	uint32_t i = rule_home(w, p);

	while (w->rules[i].used) {
		const struct rule6 *r = &w->rules[i];

		if (r->len == p->len && r->hi == p->hi && r->lo == p->lo) {
			*found = true;
			return i;
		}
		i = (i + 1) & w->rule_mask;
	}
	*found = false;
	return i;
}

static void rule_put(struct rxp_lpm6_writer *w, uint32_t i, bool found, const struct pfx *p,
		     uint32_t nh)
{
	struct rule6 *r = &w->rules[i];

	r->hi = p->hi;
	r->lo = p->lo;
	r->len = (uint8_t)p->len;
	r->nh = nh;
	r->used = 1;
	if (found)
		return;
	w->n_rules++;
	if (w->n_by_len[p->len]++ == 0)
		w->lens[p->len / 64] |= 1ull << (p->len % 64);
}

/* Empties slot @i and moves later slots of the probe run back so no lookup stops early. */
static void rule_remove(struct rxp_lpm6_writer *w, uint32_t i)
{
	uint32_t len = w->rules[i].len, j = i;

	for (;;) {
		uint32_t home;
		struct pfx q;

		j = (j + 1) & w->rule_mask;
		if (!w->rules[j].used)
			break;
		q.hi = w->rules[j].hi;
		q.lo = w->rules[j].lo;
		q.len = w->rules[j].len;
		home = rule_home(w, &q);
		/* slot j may move to i only if its home is not in (i, j] cyclically */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			w->rules[i] = w->rules[j];
			i = j;
		}
	}
	memset(&w->rules[i], 0, sizeof(w->rules[i]));
	w->n_rules--;
	if (--w->n_by_len[len] == 0)
		w->lens[len / 64] &= ~(1ull << (len % 64));
}

/* Returns the longest route shorter than @p covering it, not counting /0; {0, 0} if none. */
static struct route covering_route(const struct rxp_lpm6_writer *w, const struct pfx *p)
{
	struct route none = { 0, 0 };
	int l = (int)p->len - 1;

	while (l >= 1) {
		/* lengths l / 64 * 64 .. l that some route has */
		uint64_t word = w->lens[l / 64] & ((2ull << (l % 64)) - 1);
		struct pfx q;
		uint32_t i;
		bool found;

		if (!word) {
			l = l / 64 * 64 - 1;
			continue;
		}
		l = l / 64 * 64 + 63 - __builtin_clzll(word);
		if (l == 0)
			break;
		q = pfx_trunc(p, (uint32_t)l);
		i = rule_slot(w, &q, &found);
		if (found) {
			struct route r = { RXP_LPM6_VALID | w->rules[i].nh, (uint32_t)l };

			return r;
		}
		l--;
	}
	return none;
}

/* ---- groups ---- */

static uint32_t groups_available(const struct rxp_lpm6_writer *w)
{
	return w->n_free + (w->max_groups - w->n_fresh);
}

static uint32_t group_take(struct rxp_lpm6_writer *w)
{
	return w->n_free ? w->free_groups[--w->n_free] : w->n_fresh++;
}

/* Returns the length of the route behind non-EXT entry @e of group @g at @level (0: tbl24). */
static inline uint32_t entry_len(const struct rxp_lpm6_writer *w, uint32_t e, uint32_t level,
				 uint32_t g)
{
	uint32_t f = field_of(e);

	if (level == 0)
		return f;
	return f ? base_of(level) + f : w->inh_len[g];
}

/*
 * Gives group @g (and, below it, every group that inherited the same route)
 * the inherited route @r. Used when a route of the level above changes.
 */
static void push_inherited(struct rxp_lpm6 *lpm, uint32_t g, struct route r)
{
	struct rxp_lpm6_writer *w = lpm->w;
	_Atomic uint32_t *t = group_at(lpm, g);
	uint32_t old = w->inh_len[g];

	w->inh_len[g] = (uint8_t)r.len;
	for (uint32_t i = 0; i < RXP_LPM6_GROUP_ENTRIES; i++) {
		uint32_t e = ld(&t[i]);

		if (e & RXP_LPM6_EXT) {
			uint32_t c = e & RXP_LPM6_VAL_MASK;

			/* own routes here are longer than anything inherited */
			if (w->inh_len[c] == old)
				push_inherited(lpm, c, r);
		} else if (field_of(e) == 0) {
			st(&t[i], r.val);
		}
	}
}

/*
 * Applies an add of route @r (length r.len at @level) to entries
 * [first, first + count) of group @g (or tbl24 at level 0): every entry whose
 * route is no longer than r.len takes it.
 */
static void range_add(struct rxp_lpm6 *lpm, uint32_t level, uint32_t g, uint32_t first,
		      uint32_t count, struct route r)
{
	struct rxp_lpm6_writer *w = lpm->w;
	_Atomic uint32_t *t = level ? group_at(lpm, g) : lpm->tbl24;
	uint32_t base = level ? base_of(level) : 0;
	uint32_t e_new = r.val | (r.len - base) << RXP_LPM6_DEPTH_SHIFT;

	for (uint32_t i = first; i < first + count; i++) {
		uint32_t e = ld(&t[i]);

		if (e & RXP_LPM6_EXT) {
			uint32_t c = e & RXP_LPM6_VAL_MASK;

			if (w->inh_len[c] <= r.len)
				push_inherited(lpm, c, r);
		} else if (entry_len(w, e, level, g) <= r.len) {
			st(&t[i], e_new);
			if (level && field_of(e) == 0)
				w->n_own[g]++;
		}
	}
}

/*
 * Applies a delete of a route of length @len at @level to entries
 * [first, first + count) of group @g (or tbl24): what was the route's goes to
 * @cover, the next longest covering route.
 */
static void range_del(struct rxp_lpm6 *lpm, uint32_t level, uint32_t g, uint32_t first,
		      uint32_t count, uint32_t len, struct route cover)
{
	struct rxp_lpm6_writer *w = lpm->w;
	_Atomic uint32_t *t = level ? group_at(lpm, g) : lpm->tbl24;
	uint32_t base = level ? base_of(level) : 0;
	bool inherit = level && cover.len <= base;
	uint32_t e_new = inherit ? cover.val
		       : cover.val ? cover.val | (cover.len - base) << RXP_LPM6_DEPTH_SHIFT : 0;

	for (uint32_t i = first; i < first + count; i++) {
		uint32_t e = ld(&t[i]);

		if (e & RXP_LPM6_EXT) {
			uint32_t c = e & RXP_LPM6_VAL_MASK;

			if (w->inh_len[c] == len)
				push_inherited(lpm, c, cover);
		} else if (field_of(e) && entry_len(w, e, level, g) == len) {
			st(&t[i], e_new);
			if (inherit)
				w->n_own[g]--;
		}
	}
}

/* Returns how many groups an add of @p would create. */
static uint32_t groups_needed(const struct rxp_lpm6 *lpm, const struct pfx *p)
{
	uint32_t target = level_of(p->len);
	uint32_t e = ld(&lpm->tbl24[p->hi >> 40]);

	for (uint32_t level = 1; level <= target; level++) {
		if (!(e & RXP_LPM6_EXT))
			return target - level + 1;
		if (level < target)
			e = ld(&group_at(lpm, e & RXP_LPM6_VAL_MASK)[pfx_byte(p, 2 + level)]);
	}
	return 0;
}

/* Adds a route longer than /24: walks down, making groups where the path ends. */
static void add_long(struct rxp_lpm6 *lpm, const struct pfx *p, struct route r)
{
	struct rxp_lpm6_writer *w = lpm->w;
	uint32_t target = level_of(p->len);
	_Atomic uint32_t *slot = &lpm->tbl24[p->hi >> 40];
	uint32_t parent = 0, g = 0, span;

	for (uint32_t level = 1; level <= target; level++) {
		uint32_t e = ld(slot);

		if (!(e & RXP_LPM6_EXT)) {
			uint32_t c = group_take(w);
			uint32_t val = e & (RXP_LPM6_VALID | RXP_LPM6_VAL_MASK);

			/* Private until published: the block inherits what the entry meant. */
			for (uint32_t i = 0; i < RXP_LPM6_GROUP_ENTRIES; i++)
				st(&group_at(lpm, c)[i], val);
			w->inh_len[c] = (uint8_t)entry_len(w, e, level - 1, parent);
			w->n_own[c] = 0;
			if (level > 1 && field_of(e) == 0)
				w->n_own[parent]++;	/* an inherited entry becomes EXT */
			/* release: partner of the acquire loads in lookup and lookup_bulk */
			atomic_store_explicit(slot, RXP_LPM6_EXT | c, memory_order_release);
			e = RXP_LPM6_EXT | c;
		}
		g = e & RXP_LPM6_VAL_MASK;
		if (level < target) {
			slot = &group_at(lpm, g)[pfx_byte(p, 2 + level)];
			parent = g;
		}
	}
	span = 1u << (base_of(target) + 8 - p->len);
	range_add(lpm, target, g, pfx_byte(p, 2 + target), span, r);
}

/* Folds group @g, at @level under @slot (in group @parent when level > 1), into its slot. */
static void fold_group(struct rxp_lpm6 *lpm, uint32_t level, _Atomic uint32_t *slot,
		       uint32_t parent, uint32_t g)
{
	struct rxp_lpm6_writer *w = lpm->w;
	uint32_t val = ld(&group_at(lpm, g)[0]);	/* every entry is inherited: one value */
	uint32_t len = w->inh_len[g], e;

	if (level == 1) {
		e = val ? val | len << RXP_LPM6_DEPTH_SHIFT : 0;
	} else if (len > base_of(level - 1)) {
		e = val | (len - base_of(level - 1)) << RXP_LPM6_DEPTH_SHIFT;
	} else {
		e = val;	/* inherited in the parent too */
		w->n_own[parent]--;
	}
	st(slot, e);
	w->retired[w->n_retired++] = g;
}

int rxp_lpm6_add(struct rxp_lpm6 *lpm, const uint8_t prefix[16], uint8_t len, uint32_t nh)
{
	struct rxp_lpm6_writer *w = lpm->w;
	struct route r = { RXP_LPM6_VALID | nh, len };
	struct pfx p;
	uint32_t slot;
	bool found;

	if (len > 128 || nh >= RXP_LPM_NH_MAX)
		return -EINVAL;
	p = pfx_make(prefix, len);
	slot = rule_slot(w, &p, &found);
	if (!found && w->n_rules >= w->max_routes)
		return -ENOSPC;
	if (len == 0) {
		atomic_store_explicit(&lpm->dflt, r.val, memory_order_relaxed);
	} else if (len <= 24) {
		uint32_t span = 1u << (24 - len);

		range_add(lpm, 0, 0, (uint32_t)(p.hi >> 40), span, r);
	} else {
		if (groups_needed(lpm, &p) > groups_available(w))
			return -ENOSPC;
		add_long(lpm, &p, r);
	}
	rule_put(w, slot, found, &p, nh);
	return 0;
}

int rxp_lpm6_del(struct rxp_lpm6 *lpm, const uint8_t prefix[16], uint8_t len)
{
	struct rxp_lpm6_writer *w = lpm->w;
	_Atomic uint32_t *slots[LEVELS];
	uint32_t path[LEVELS];
	uint32_t slot, target;
	struct route cover;
	struct pfx p;
	bool found;

	if (len > 128)
		return -EINVAL;
	p = pfx_make(prefix, len);
	slot = rule_slot(w, &p, &found);
	if (!found)
		return -ENOENT;
	if (len == 0) {
		atomic_store_explicit(&lpm->dflt, 0, memory_order_relaxed);
		rule_remove(w, slot);
		return 0;
	}
	cover = covering_route(w, &p);
	target = level_of(len);
	if (target == 0) {
		range_del(lpm, 0, 0, (uint32_t)(p.hi >> 40), 1u << (24 - len), len, cover);
		rule_remove(w, slot);
		return 0;
	}
	/* The route exists, so its path does: every entry on the way is EXT. */
	path[0] = 0;
	slots[1] = &lpm->tbl24[p.hi >> 40];
	for (uint32_t level = 1; level <= target; level++) {
		uint32_t e = ld(slots[level]);

		if (!(e & RXP_LPM6_EXT))
			return -EIO;	/* cannot happen: the table and the rules disagree */
		path[level] = e & RXP_LPM6_VAL_MASK;
		if (level < target)
			slots[level + 1] = &group_at(lpm, path[level])[pfx_byte(&p, 2 + level)];
	}
	range_del(lpm, target, path[target], pfx_byte(&p, 2 + target),
		  1u << (base_of(target) + 8 - len), len, cover);
	for (uint32_t level = target; level >= 1 && w->n_own[path[level]] == 0; level--)
		fold_group(lpm, level, slots[level], path[level - 1], path[level]);
	rule_remove(w, slot);
	return 0;
}

uint32_t rxp_lpm6_reclaim(struct rxp_lpm6 *lpm)
{
	struct rxp_lpm6_writer *w = lpm->w;
	uint32_t n = w->n_retired;

	memcpy(w->free_groups + w->n_free, w->retired, n * sizeof(*w->retired));
	w->n_free += n;
	w->n_retired = 0;
	return n;
}

/* ---- lookups ---- */

/*
 * Interleaved walks: BULK_SLOTS lookups are in flight at once, each at its
 * own level. A round visits every slot: it loads the entry prefetched for
 * the slot a round earlier and prefetches the next one on the slot's path,
 * or, when the walk is over, stores the answer and starts the next address
 * in that slot. So about BULK_SLOTS cache misses overlap however deep each
 * walk goes. (Walking a batch level by level was slower: each level waits
 * for the slowest walk of the batch.)
 */
void rxp_lpm6_lookup_bulk(const struct rxp_lpm6 *lpm, const uint8_t (*addrs)[16], uint32_t *nhs,
			  unsigned n)
{
	_Atomic uint32_t *tbl24 = lpm->tbl24, *groups = lpm->groups;
	_Atomic uint32_t *at[BULK_SLOTS];	/* the entry each slot loads next */
	uint32_t idx[BULK_SLOTS];		/* the address each slot walks for */
	uint8_t byte[BULK_SLOTS];		/* the address byte indexing the next group */
	uint32_t dflt = atomic_load_explicit(&lpm->dflt, memory_order_relaxed);
	unsigned n_slots = RXP_MIN(n, BULK_SLOTS), active = n_slots, next = n_slots;

	for (unsigned s = 0; s < n_slots; s++) {
		const uint8_t *a = addrs[s];

		at[s] = &tbl24[(uint32_t)a[0] << 16 | (uint32_t)a[1] << 8 | a[2]];
		rxp_prefetch((const void *)at[s]);
		idx[s] = s;
		byte[s] = 3;
	}
	while (active) {
		for (unsigned s = 0; s < n_slots; s++) {
			uint32_t e;

			if (!at[s])
				continue;
			/* acquire: partner of the release store that publishes a group */
			e = atomic_load_explicit(at[s], memory_order_acquire);
			if ((e & RXP_LPM6_EXT) && byte[s] < 16) {
				at[s] = &groups[((size_t)(e & RXP_LPM6_VAL_MASK) << 8) |
						addrs[idx[s]][byte[s]++]];
				rxp_prefetch((const void *)at[s]);
				continue;
			}
			e = e & RXP_LPM6_VALID ? e : dflt;
			nhs[idx[s]] = e & RXP_LPM6_VALID ? e & RXP_LPM6_VAL_MASK : RXP_LPM_NO_ROUTE;
			if (next < n) {
				const uint8_t *a = addrs[next];

				at[s] = &tbl24[(uint32_t)a[0] << 16 | (uint32_t)a[1] << 8 | a[2]];
				rxp_prefetch((const void *)at[s]);
				idx[s] = next++;
				byte[s] = 3;
			} else {
				at[s] = NULL;
				active--;
			}
		}
	}
}

/* ---- life cycle and accounting ---- */

struct rxp_lpm6 *rxp_lpm6_create(uint32_t max_routes, uint32_t max_groups)
{
	struct rxp_lpm6 *lpm;
	struct rxp_lpm6_writer *w;
	uint32_t slots;

	if (max_routes == 0 || max_routes > ROUTES_MAX || max_groups > GROUPS_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if (max_groups == 0)
		max_groups = (uint32_t)RXP_MAX((uint64_t)GROUPS_DEFAULT_MIN,
					       RXP_MIN((uint64_t)max_routes * GROUPS_PER_ROUTE,
						       (uint64_t)GROUPS_MAX));
	/* load factor at most 3/4 */
	slots = rxp_pow2_roundup(RXP_MAX(16u, max_routes + max_routes / 3 + 1));

	lpm = calloc(1, sizeof(*lpm));
	if (!lpm)
		goto err;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto err_lpm;
	lpm->w = w;
	w->max_routes = max_routes;
	w->max_groups = max_groups;
	w->rule_mask = slots - 1;
	w->rule_shift = 64 - (uint32_t)__builtin_ctz(slots);
	w->rules = calloc(slots, sizeof(*w->rules));
	if (!w->rules)
		goto err_w;
	w->free_groups = calloc(max_groups, sizeof(*w->free_groups));
	w->retired = calloc(max_groups, sizeof(*w->retired));
	w->n_own = calloc(max_groups, sizeof(*w->n_own));
	w->inh_len = calloc(max_groups, sizeof(*w->inh_len));
	if (!w->free_groups || !w->retired || !w->n_own || !w->inh_len)
		goto err_arrays;
	lpm->tbl24 = rxp_table_map(TBL24_BYTES);
	if (!lpm->tbl24)
		goto err_arrays;
	w->groups_len = RXP_ALIGN_UP((size_t)max_groups * GROUP_BYTES, RXP_TABLE_HUGE);
	lpm->groups = rxp_table_map(w->groups_len);
	if (!lpm->groups)
		goto err_tbl24;
	atomic_init(&lpm->dflt, 0);
	return lpm;

err_tbl24:
	munmap((void *)lpm->tbl24, TBL24_BYTES);
err_arrays:
	free(w->inh_len);
	free(w->n_own);
	free(w->retired);
	free(w->free_groups);
	free(w->rules);
err_w:
	free(w);
err_lpm:
	free(lpm);
err:
	errno = ENOMEM;
	return NULL;
}

void rxp_lpm6_destroy(struct rxp_lpm6 *lpm)
{
	struct rxp_lpm6_writer *w;

	if (!lpm)
		return;
	w = lpm->w;
	munmap((void *)lpm->groups, w->groups_len);
	munmap((void *)lpm->tbl24, TBL24_BYTES);
	free(w->inh_len);
	free(w->n_own);
	free(w->retired);
	free(w->free_groups);
	free(w->rules);
	free(w);
	free(lpm);
}

bool rxp_lpm6_has(const struct rxp_lpm6 *lpm, const uint8_t prefix[16], uint8_t len)
{
	struct pfx p;
	bool found = false;

	if (len <= 128) {
		p = pfx_make(prefix, len);
		rule_slot(lpm->w, &p, &found);
	}
	return found;
}

uint32_t rxp_lpm6_count(const struct rxp_lpm6 *lpm)
{
	return lpm->w->n_rules;
}

uint32_t rxp_lpm6_groups_used(const struct rxp_lpm6 *lpm)
{
	const struct rxp_lpm6_writer *w = lpm->w;

	return w->n_fresh - w->n_free - w->n_retired;
}

size_t rxp_lpm6_memory(const struct rxp_lpm6 *lpm, size_t *resident)
{
	const struct rxp_lpm6_writer *w = lpm->w;
	size_t heap = sizeof(*lpm) + sizeof(*w) + (size_t)(w->rule_mask + 1) * sizeof(*w->rules) +
		      (size_t)w->max_groups * (2 * sizeof(uint32_t) + sizeof(uint16_t) +
					       sizeof(uint8_t));

	if (resident) {
		/* groups past n_fresh were never touched: no need to ask about them */
		size_t used = RXP_ALIGN_UP((size_t)w->n_fresh * GROUP_BYTES, (size_t)RXP_TABLE_PAGE);

		*resident = rxp_table_resident((const void *)lpm->tbl24, TBL24_BYTES) +
			    rxp_table_resident((const void *)lpm->groups, used) + heap;
	}
	return TBL24_BYTES + w->groups_len + heap;
}
