/* SPDX-License-Identifier: MIT */
/*
 * IPv4 LPM, DIR-24-8 (see include/rxpath/lpm4.h for the layout and the
 * concurrency contract): the writer side and the bulk lookup.
 *
 * Every route entry carries the length of the route it came from, so an
 * add overwrites exactly the entries whose route is no longer than its own,
 * and a delete finds its own entries by their length and hands them to the
 * next longest covering route, which the rule store finds.
 *
 * The rule store is one open-addressing hash table (linear probing,
 * backward-shift deletion) of 64-bit slots: prefix, length + 1, next hop.
 * A slot of 0 is empty.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "rxpath/lpm4.h"
#include "table_mem.h"

#define TBL24_BYTES	((size_t)RXP_LPM4_TBL24_ENTRIES * sizeof(uint32_t))
#define GROUP_BYTES	((size_t)RXP_LPM4_GROUP_ENTRIES * sizeof(uint32_t))
#define ROUTES_MAX	(1u << 24)
#define GROUPS_MAX	(1u << 22)
#define GROUPS_DEFAULT_MIN 256u
#define GROUPS_DEFAULT_MAX 65536u
#define BULK_AHEAD	24u	/* lookups between a prefetch and its use */

struct rxp_lpm4_writer {
	uint64_t *rules;	/* the rule store; see above */
	uint32_t rule_shift;	/* 64 - log2(slots): the hash keeps the top bits */
	uint32_t rule_mask;
	uint32_t n_rules;
	uint32_t max_routes;
	uint32_t n_by_len[33];
	uint64_t lens;		/* bit l: some route has length l */

	uint32_t max_groups;
	uint32_t n_fresh;	/* groups [0, n_fresh) have been handed out at least once */
	uint32_t n_free;
	uint32_t n_retired;
	uint32_t *free_groups;	/* stack of reusable groups */
	uint32_t *retired;	/* emptied by deletes, waiting for a grace period */
	uint16_t *n_long;	/* per group: routes longer than /24 inside it */
	size_t groups_len;	/* mapped bytes of lpm->groups */
};

static inline uint32_t depth_of(uint32_t e)
{
	return e >> RXP_LPM4_DEPTH_SHIFT;
}

static inline uint32_t route_entry(uint32_t nh, uint32_t len)
{
	return RXP_LPM4_VALID | len << RXP_LPM4_DEPTH_SHIFT | nh;
}

static inline uint32_t prefix_mask(uint32_t len)
{
	return len ? ~0u << (32 - len) : 0;
}

/* Writer-side accessors: the writer is alone, relaxed loads see its own stores. */
static inline uint32_t ld(const _Atomic uint32_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

static inline void st(_Atomic uint32_t *p, uint32_t v)
{
	atomic_store_explicit(p, v, memory_order_relaxed);
}

static inline _Atomic uint32_t *group_at(const struct rxp_lpm4 *lpm, uint32_t g)
{
	return lpm->groups + (size_t)g * RXP_LPM4_GROUP_ENTRIES;
}

/* ---- the rule store ---- */

static inline uint64_t rule_key(uint32_t prefix, uint32_t len)
{
	return (uint64_t)prefix << 8 | (len + 1);
}

static inline uint32_t rule_home(const struct rxp_lpm4_writer *w, uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> w->rule_shift);
}

/* Returns the slot holding @prefix/@len, or the empty slot where it would go; *found says which. */
static uint32_t rule_slot(const struct rxp_lpm4_writer *w, uint32_t prefix, uint32_t len,
			  bool *found)
{
	uint64_t key = rule_key(prefix, len);
	uint32_t i = rule_home(w, key);

	while (w->rules[i]) {
		if (w->rules[i] >> 24 == key) {
			*found = true;
			return i;
		}
		i = (i + 1) & w->rule_mask;
	}
	*found = false;
	return i;
}

static void rule_put(struct rxp_lpm4_writer *w, uint32_t i, bool found, uint32_t prefix,
		     uint32_t len, uint32_t nh)
{
	w->rules[i] = rule_key(prefix, len) << 24 | nh;
	if (found)
		return;
	w->n_rules++;
	if (w->n_by_len[len]++ == 0)
		w->lens |= 1ull << len;
}

/* Empties slot @i and moves later slots of the probe run back so no lookup stops early. */
static void rule_remove(struct rxp_lpm4_writer *w, uint32_t i, uint32_t len)
{
	uint32_t j = i;

	for (;;) {
		uint32_t home;

		j = (j + 1) & w->rule_mask;
		if (!w->rules[j])
			break;
		home = rule_home(w, w->rules[j] >> 24);
		/* slot j may move to i only if its home is not in (i, j] cyclically */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			w->rules[i] = w->rules[j];
			i = j;
		}
	}
	w->rules[i] = 0;
	w->n_rules--;
	if (--w->n_by_len[len] == 0)
		w->lens &= ~(1ull << len);
}

/*
 * Returns the entry of the longest route shorter than @len covering @prefix,
 * or 0 when there is none (the /0 route is looked up separately).
 */
static uint32_t covering_entry(const struct rxp_lpm4_writer *w, uint32_t prefix, uint32_t len)
{
	uint64_t lens = w->lens & ((1ull << len) - 1) & ~1ull;

	while (lens) {
		uint32_t l = 63 - (uint32_t)__builtin_clzll(lens);
		bool found;
		uint32_t i = rule_slot(w, prefix & prefix_mask(l), l, &found);

		if (found)
			return route_entry((uint32_t)w->rules[i] & RXP_LPM4_VAL_MASK, l);
		lens &= ~(1ull << l);
	}
	return 0;
}

/* ---- groups ---- */

static bool group_available(const struct rxp_lpm4_writer *w)
{
	return w->n_free || w->n_fresh < w->max_groups;
}

static uint32_t group_take(struct rxp_lpm4_writer *w)
{
	return w->n_free ? w->free_groups[--w->n_free] : w->n_fresh++;
}

/* ---- add and delete ---- */

/* Writes @e over entries [first, first + count) of group @g whose route is no longer than @len. */
static void group_set(struct rxp_lpm4 *lpm, uint32_t g, uint32_t first, uint32_t count,
		      uint32_t len, uint32_t e)
{
	_Atomic uint32_t *t = group_at(lpm, g);

	for (uint32_t i = first; i < first + count; i++)
		if (depth_of(ld(&t[i])) <= len)
			st(&t[i], e);
}

/* Writes @e over entries [first, first + count) of group @g that came from a route of @len. */
static void group_unset(struct rxp_lpm4 *lpm, uint32_t g, uint32_t first, uint32_t count,
			uint32_t len, uint32_t e)
{
	_Atomic uint32_t *t = group_at(lpm, g);

	for (uint32_t i = first; i < first + count; i++)
		if (depth_of(ld(&t[i])) == len)
			st(&t[i], e);
}

static void add_short(struct rxp_lpm4 *lpm, uint32_t prefix, uint32_t len, uint32_t nh)
{
	uint32_t first = prefix >> 8, count = 1u << (24 - len);
	uint32_t e = route_entry(nh, len);

	for (uint32_t i = first; i < first + count; i++) {
		uint32_t old = ld(&lpm->tbl24[i]);

		if (old & RXP_LPM4_EXT)
			group_set(lpm, old & RXP_LPM4_VAL_MASK, 0, RXP_LPM4_GROUP_ENTRIES, len, e);
		else if (depth_of(old) <= len)
			st(&lpm->tbl24[i], e);
	}
}

static int add_long(struct rxp_lpm4 *lpm, uint32_t prefix, uint32_t len, uint32_t nh, bool is_new)
{
	struct rxp_lpm4_writer *w = lpm->w;
	_Atomic uint32_t *slot = &lpm->tbl24[prefix >> 8];
	uint32_t first = prefix & 0xff, count = 1u << (32 - len);
	uint32_t old = ld(slot), g;

	if (old & RXP_LPM4_EXT) {
		g = old & RXP_LPM4_VAL_MASK;
		group_set(lpm, g, first, count, len, route_entry(nh, len));
		w->n_long[g] += is_new;
		return 0;
	}
	if (!group_available(w))
		return -ENOSPC;
	g = group_take(w);
	/* Private until published: the whole /24 inherits the tbl24 entry, then the new route. */
	for (uint32_t i = 0; i < RXP_LPM4_GROUP_ENTRIES; i++)
		st(&group_at(lpm, g)[i], old);
	group_set(lpm, g, first, count, len, route_entry(nh, len));
	w->n_long[g] = 1;
	/* release: partner of the acquire loads of tbl24 in rxp_lpm4_lookup() and bulk */
	atomic_store_explicit(slot, RXP_LPM4_EXT | g, memory_order_release);
	return 0;
}

int rxp_lpm4_add(struct rxp_lpm4 *lpm, uint32_t prefix, uint8_t len, uint32_t nh)
{
	struct rxp_lpm4_writer *w = lpm->w;
	uint32_t slot;
	bool found;

	if (len > 32 || nh >= RXP_LPM_NH_MAX)
		return -EINVAL;
	prefix &= prefix_mask(len);
	slot = rule_slot(w, prefix, len, &found);
	if (!found && w->n_rules >= w->max_routes)
		return -ENOSPC;
	if (len == 0) {
		atomic_store_explicit(&lpm->dflt, RXP_LPM4_VALID | nh, memory_order_relaxed);
	} else if (len <= 24) {
		add_short(lpm, prefix, len, nh);
	} else {
		int ret = add_long(lpm, prefix, len, nh, !found);

		if (ret)
			return ret;
	}
	rule_put(w, slot, found, prefix, len, nh);
	return 0;
}

int rxp_lpm4_del(struct rxp_lpm4 *lpm, uint32_t prefix, uint8_t len)
{
	struct rxp_lpm4_writer *w = lpm->w;
	uint32_t slot, repl;
	bool found;

	if (len > 32)
		return -EINVAL;
	prefix &= prefix_mask(len);
	slot = rule_slot(w, prefix, len, &found);
	if (!found)
		return -ENOENT;
	if (len == 0) {
		atomic_store_explicit(&lpm->dflt, 0, memory_order_relaxed);
		rule_remove(w, slot, len);
		return 0;
	}
	repl = covering_entry(w, prefix, len);
	if (len <= 24) {
		uint32_t first = prefix >> 8, count = 1u << (24 - len);

		for (uint32_t i = first; i < first + count; i++) {
			uint32_t old = ld(&lpm->tbl24[i]);

			if (old & RXP_LPM4_EXT)
				group_unset(lpm, old & RXP_LPM4_VAL_MASK, 0, RXP_LPM4_GROUP_ENTRIES,
					    len, repl);
			else if (depth_of(old) == len)
				st(&lpm->tbl24[i], repl);
		}
	} else {
		_Atomic uint32_t *t24 = &lpm->tbl24[prefix >> 8];
		uint32_t g = ld(t24) & RXP_LPM4_VAL_MASK;

		group_unset(lpm, g, prefix & 0xff, 1u << (32 - len), len, repl);
		if (--w->n_long[g] == 0) {
			/* Only routes of /24 or shorter are left: one value fills the group. */
			st(t24, ld(&group_at(lpm, g)[0]));
			w->retired[w->n_retired++] = g;
		}
	}
	rule_remove(w, slot, len);
	return 0;
}

uint32_t rxp_lpm4_reclaim(struct rxp_lpm4 *lpm)
{
	struct rxp_lpm4_writer *w = lpm->w;
	uint32_t n = w->n_retired;

	memcpy(w->free_groups + w->n_free, w->retired, n * sizeof(*w->retired));
	w->n_free += n;
	w->n_retired = 0;
	return n;
}

/* ---- lookups ---- */

/* Four entries in a vector register (GCC and clang vector extension). */
typedef uint32_t v4u32 __attribute__((vector_size(16)));

/* The entry for @addr: its first-level entry, or the group's when that points to one. */
static inline uint32_t lookup_entry(const struct rxp_lpm4 *lpm, _Atomic uint32_t *tbl24,
				   uint32_t addr)
{
	/* acquire: partner of the release store that publishes a group */
	uint32_t e = atomic_load_explicit(&tbl24[addr >> 8], memory_order_acquire);

	if (rxp_unlikely(e & RXP_LPM4_EXT))
		e = atomic_load_explicit(&lpm->groups[((size_t)(e & RXP_LPM4_VAL_MASK) << 8) |
						      (addr & 0xff)],
					 memory_order_relaxed);
	return e;
}

/*
 * Two passes. The first is a software pipeline over the first-level
 * entries: the line of address i + BULK_AHEAD is prefetched while address i
 * is loaded, so about BULK_AHEAD misses are in flight at any time (the core
 * tracks some 20-odd); a group, rare, is read there too, while the address
 * is at hand. It stores the entries themselves, so that it stays a few
 * instructions a lookup: fewer instructions between the loads let more of
 * them into the core's window. The second turns entries into next hops
 * with no branch, four at a time in vector registers: an entry
 * without a route is 0 (no depth, no flags), so a mask picks the default.
 *
 * Prefetching a whole burst first and then loading measured slower: the
 * prefetches queue behind each other and the loads wait for the last of them.
 */
void rxp_lpm4_lookup_bulk(const struct rxp_lpm4 *lpm, const uint32_t *addrs, uint32_t *nhs,
			  unsigned n)
{
	_Atomic uint32_t *tbl24 = lpm->tbl24;
	uint32_t dflt = atomic_load_explicit(&lpm->dflt, memory_order_relaxed);
	uint32_t dflt_nh = dflt & RXP_LPM4_VALID ? dflt & RXP_LPM4_VAL_MASK : RXP_LPM_NO_ROUTE;
	unsigned i, ahead = RXP_MIN(n, BULK_AHEAD);

	for (i = 0; i < ahead; i++)
		rxp_prefetch((const void *)&tbl24[addrs[i] >> 8]);
	/* addrs[i] is read before nhs[i] is written: the two may be one array */
	for (i = 0; i + BULK_AHEAD < n; i++) {
		rxp_prefetch((const void *)&tbl24[addrs[i + BULK_AHEAD] >> 8]);
		nhs[i] = lookup_entry(lpm, tbl24, addrs[i]);
	}
	for (; i < n; i++)
		nhs[i] = lookup_entry(lpm, tbl24, addrs[i]);
	/* four at a time in vector registers, then the rest */
	const v4u32 val_mask = { RXP_LPM4_VAL_MASK, RXP_LPM4_VAL_MASK, RXP_LPM4_VAL_MASK,
				 RXP_LPM4_VAL_MASK };
	const v4u32 dflt4 = { dflt_nh, dflt_nh, dflt_nh, dflt_nh };

	for (i = 0; i + 4 <= n; i += 4) {
		v4u32 e;

		memcpy(&e, &nhs[i], sizeof(e));
		e = (e & val_mask) | (dflt4 & (v4u32)(e == 0));
		memcpy(&nhs[i], &e, sizeof(e));
	}
	for (; i < n; i++)
		nhs[i] = (nhs[i] & RXP_LPM4_VAL_MASK) | (dflt_nh & (0u - (uint32_t)(nhs[i] == 0)));
}

/* ---- life cycle and accounting ---- */

struct rxp_lpm4 *rxp_lpm4_create(uint32_t max_routes, uint32_t max_groups)
{
	struct rxp_lpm4 *lpm;
	struct rxp_lpm4_writer *w;
	uint32_t slots;

	if (max_routes == 0 || max_routes > ROUTES_MAX || max_groups > GROUPS_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if (max_groups == 0)
		max_groups = RXP_MAX(GROUPS_DEFAULT_MIN, RXP_MIN(max_routes, GROUPS_DEFAULT_MAX));
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
	w->n_long = calloc(max_groups, sizeof(*w->n_long));
	if (!w->free_groups || !w->retired || !w->n_long)
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
	free(w->n_long);
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

void rxp_lpm4_destroy(struct rxp_lpm4 *lpm)
{
	struct rxp_lpm4_writer *w;

	if (!lpm)
		return;
	w = lpm->w;
	munmap((void *)lpm->groups, w->groups_len);
	munmap((void *)lpm->tbl24, TBL24_BYTES);
	free(w->n_long);
	free(w->retired);
	free(w->free_groups);
	free(w->rules);
	free(w);
	free(lpm);
}

bool rxp_lpm4_has(const struct rxp_lpm4 *lpm, uint32_t prefix, uint8_t len)
{
	bool found = false;

	if (len <= 32)
		rule_slot(lpm->w, prefix & prefix_mask(len), len, &found);
	return found;
}

uint32_t rxp_lpm4_count(const struct rxp_lpm4 *lpm)
{
	return lpm->w->n_rules;
}

uint32_t rxp_lpm4_groups_used(const struct rxp_lpm4 *lpm)
{
	const struct rxp_lpm4_writer *w = lpm->w;

	return w->n_fresh - w->n_free - w->n_retired;
}

size_t rxp_lpm4_memory(const struct rxp_lpm4 *lpm, size_t *resident)
{
	const struct rxp_lpm4_writer *w = lpm->w;
	size_t heap = sizeof(*lpm) + sizeof(*w) + (size_t)(w->rule_mask + 1) * sizeof(*w->rules) +
		      (size_t)w->max_groups * (2 * sizeof(uint32_t) + sizeof(uint16_t));

	if (resident) {
		/* groups past n_fresh were never touched: no need to ask about them */
		size_t used = RXP_ALIGN_UP((size_t)w->n_fresh * GROUP_BYTES, (size_t)RXP_TABLE_PAGE);

		*resident = rxp_table_resident((const void *)lpm->tbl24, TBL24_BYTES) +
			    rxp_table_resident((const void *)lpm->groups, used) + heap;
	}
	return TBL24_BYTES + w->groups_len + heap;
}
