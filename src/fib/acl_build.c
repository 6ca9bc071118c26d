/* SPDX-License-Identifier: MIT */
/*
 * The classifier's builder (the layout is in acl_priv.h).
 *
 * Per family: the rules become boxes; rules that an earlier rule covers are
 * dropped (first everything after a rule that matches all, then rules
 * covered by an earlier wide one); the rest are partitioned into up to four
 * trees by the width of their addresses. A tree node is built from its
 * rules and its region (a box of aligned power-of-two blocks): rules after
 * the first one covering the whole region are dropped, small lists are
 * pruned pairwise, then the node becomes a linear list (a root of <= 16
 * rules), a leaf (<= 8 rules), a chain (when no cut helps) or a cut chosen
 * by a cost model: the expected work of a uniformly random key in the
 * region (a node step, a leaf scan) plus a little for the memory, within a
 * memory budget proportional to the rules. The counts behind the model
 * already drop, per child, the rules after one that covers the child.
 * Identical leaves are stored once, and children alike (the same rules, all
 * spanning them) share one subtree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fib/acl_priv.h"
#include "rxpath/common.h"

#define NO_EXTRA UINT32_MAX
#define WIDE4 8			/* an IPv4 prefix shorter than this is wide */
#define WIDE6 16
#define TINY_RULES 16		/* a family with no more rules gets one tree */
#define PRUNE_MAX 48		/* pairwise pruning of node lists this short */
#define PAIR_MIN 24		/* two-field cuts for nodes with this many rules */
#define CUT_BITS_MAX 17		/* children per node: at most 2^17 */
#define DEPTH_MAX 40
#define SPARSE_MIN 131072	/* nodes with fewer children stay dense (a test hook lowers it) */
#define MEM_CAP_BASE ((size_t)64 << 20)	/* the block's cap: this, */
#define MEM_CAP_PER_RULE 1024u		/* and this much per rule */
#define GLOBAL_CHECKS_MAX 40000000ull	/* pairs compared by the global pruning */

static size_t sparse_min = SPARSE_MIN;
static size_t mem_cap_forced;	/* test hook: 0, or the cap */

/* The cost model (units: one node step). */
#define COST_NODE 1.0
#define COST_LEAF 1.6
#define COST_MEM 0.03		/* per multiple of the rules' own leaf bytes */
#define SPACE_FACTOR 4		/* a node's children take at most this many times its rules' bytes */
#define TRAFFIC_AT_RULES 0.25	/* the share of keys that fall where the rules are */

struct brule {
	uint32_t lo[ACL_FIELDS], hi[ACL_FIELDS];
	uint32_t id;		/* index in the caller's list */
	uint32_t xidx;		/* index in the extras, or NO_EXTRA */
	uint8_t src_len, dst_len;
};

struct region {
	uint32_t lo[ACL_FIELDS];
	uint8_t bits[ACL_FIELDS];	/* the block is lo .. lo + 2^bits - 1 */
};

struct fam {
	bool v6;
	uint8_t n_fields;
	uint8_t fields[ACL_FIELDS];	/* the ones a tree may cut */
	size_t rule_bytes;		/* leaf bytes per rule */
	struct brule *rules;
	uint32_t n;
};

struct leaf_hash {
	uint64_t h;
	uint32_t slot;		/* 0: free */
	uint8_t v6;
};

struct builder {
	struct acl_node *nodes;
	uint32_t n_nodes, cap_nodes;
	uint32_t *slots;
	uint32_t n_slots, cap_slots;
	uint8_t *leaves;
	size_t n_leaf, cap_leaf;
	struct acl_extra *extras;
	uint32_t n_extras;
	int32_t *grid;		/* counting scratch */
	size_t cap_grid;
	uint32_t *scratch;	/* more of it, for counts_truncated() */
	size_t cap_scratch;
	uint16_t *open;		/* per rule of the node being cut: fields it does not cover */
	size_t cap_open;
	struct leaf_hash *lh;
	size_t lh_cap, lh_n;
	const struct fam *fam;
	bool linear_extras;
	size_t mem_cap;		/* bytes of nodes, slots and leaves: past it, -E2BIG */
	unsigned mode;		/* MODE_*: what the cuts may spend */
	int err;		/* -ENOMEM, -E2BIG */
};

/*
 * Builds that hit the memory cap are tried again cheaper: tighter cuts of
 * one field, then no cuts at all (chains of leaves: memory linear in the
 * rules, always under the cap).
 */
enum { MODE_FULL, MODE_TIGHT, MODE_CHAINS, MODES };

/* ---- rules ---- */

static bool extras_trivial(const struct rxp_acl_rule *r)
{
	return r->in_ifs == UINT64_MAX && r->out_ifs == UINT64_MAX && r->ct_states == RXP_ACL_CT_ANY &&
	       r->src_set == RXP_ACL_NO_SET && r->dst_set == RXP_ACL_NO_SET;
}

_Bool rxp_acl_rule_void(const struct rxp_acl_rule *r)
{
	unsigned max_len = r->family == 4 ? 32 : r->family == 6 ? 128 : 0;

	return r->sport_lo > r->sport_hi || r->dport_lo > r->dport_hi || r->ct_states == 0 ||
	       r->in_ifs == 0 || r->out_ifs == 0 || r->src_len > max_len || r->dst_len > max_len;
}

static bool prefix_match(const uint8_t *a, const uint8_t *p, unsigned len)
{
	unsigned bytes = len / 8, bits = len % 8;

	if (memcmp(a, p, bytes))
		return false;
	return !bits || !((a[bytes] ^ p[bytes]) & (0xff00u >> bits));
}

static bool set_ok(uint8_t set, uint64_t sets)
{
	return set == RXP_ACL_NO_SET || (set < RXP_ACL_SETS_MAX && (sets >> set & 1));
}

static bool ifs_ok(uint64_t ifs, uint8_t ifindex)
{
	return ifs == UINT64_MAX || (ifindex < 64 && (ifs >> ifindex & 1));
}

_Bool rxp_acl_rule_matches(const struct rxp_acl_rule *r, const struct rxp_acl_key *k)
{
	if ((k->family != 4 && k->family != 6) || rxp_acl_rule_void(r))
		return false;
	if (r->family && r->family != k->family)
		return false;
	return prefix_match(k->src, r->src, r->src_len) && prefix_match(k->dst, r->dst, r->dst_len) &&
	       (r->proto == RXP_ACL_ANY_PROTO || r->proto == k->proto) &&
	       k->sport >= r->sport_lo && k->sport <= r->sport_hi &&
	       k->dport >= r->dport_lo && k->dport <= r->dport_hi &&
	       ifs_ok(r->in_ifs, k->in_if) && ifs_ok(r->out_ifs, k->out_if) &&
	       (r->ct_states == RXP_ACL_CT_ANY || (r->ct_states & k->ct_state)) &&
	       set_ok(r->src_set, k->src_sets) && set_ok(r->dst_set, k->dst_sets);
}

bool acl_extra_ok(const struct acl_extra *x, const struct rxp_acl_key *k)
{
	return ifs_ok(x->in_ifs, k->in_if) && ifs_ok(x->out_ifs, k->out_if) &&
	       (x->ct_states == RXP_ACL_CT_ANY || (x->ct_states & k->ct_state)) &&
	       set_ok(x->src_set, k->src_sets) && set_ok(x->dst_set, k->dst_sets);
}

static uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Fields @f0..@f0+@words-1 from the prefix @a/@len. */
static void prefix_ranges(struct brule *b, unsigned f0, const uint8_t *a, unsigned len,
			  unsigned words)
{
	for (unsigned w = 0; w < words; w++) {
		unsigned have = len > 32 * w ? RXP_MIN(len - 32 * w, 32u) : 0;
		uint32_t host = have >= 32 ? 0 : ~0u >> have;	/* bits past the prefix */
		uint32_t v = load_be32(a + 4 * w) & ~host;

		b->lo[f0 + w] = v;
		b->hi[f0 + w] = v | host;
	}
}

/* Fills @b from @r for family @v6 (the rule is not void and fits it). */
static void rule_box(struct brule *b, const struct rxp_acl_rule *r, bool v6)
{
	unsigned words = v6 ? 4 : 1;

	memset(b->lo, 0, sizeof(b->lo));
	memset(b->hi, 0, sizeof(b->hi));
	prefix_ranges(b, ACL_F_SRC0, r->src, r->family ? r->src_len : 0, words);
	prefix_ranges(b, ACL_F_DST0, r->dst, r->family ? r->dst_len : 0, words);
	b->lo[ACL_F_SPORT] = r->sport_lo;
	b->hi[ACL_F_SPORT] = r->sport_hi;
	b->lo[ACL_F_DPORT] = r->dport_lo;
	b->hi[ACL_F_DPORT] = r->dport_hi;
	b->lo[ACL_F_PROTO] = r->proto == RXP_ACL_ANY_PROTO ? 0 : r->proto;
	b->hi[ACL_F_PROTO] = r->proto == RXP_ACL_ANY_PROTO ? 255 : r->proto;
	b->src_len = r->family ? r->src_len : 0;
	b->dst_len = r->family ? r->dst_len : 0;
}

/* Returns true when every key that @r matches passes @c's extras too. */
static bool extras_cover(const struct builder *b, const struct brule *c, const struct brule *r)
{
	const struct acl_extra *x, *y;

	if (c->xidx == NO_EXTRA)
		return true;
	if (r->xidx == NO_EXTRA)
		return false;
	x = &b->extras[c->xidx];
	y = &b->extras[r->xidx];
	return !(y->in_ifs & ~x->in_ifs) && !(y->out_ifs & ~x->out_ifs) &&
	       (x->ct_states == RXP_ACL_CT_ANY ||
		(y->ct_states != RXP_ACL_CT_ANY && !(y->ct_states & ~x->ct_states))) &&
	       (x->src_set == RXP_ACL_NO_SET || x->src_set == y->src_set) &&
	       (x->dst_set == RXP_ACL_NO_SET || x->dst_set == y->dst_set);
}

static inline uint32_t region_hi(const struct region *g, unsigned f)
{
	return g->bits[f] >= 32 ? UINT32_MAX : g->lo[f] + ((1u << g->bits[f]) - 1);
}

static bool covers_region(const struct brule *r, const struct region *g)
{
	for (unsigned f = 0; f < ACL_FIELDS; f++)
		if (r->lo[f] > g->lo[f] || r->hi[f] < region_hi(g, f))
			return false;
	return r->xidx == NO_EXTRA;
}

/* Returns true when @c matches every key of @g that @r matches. */
static bool covers_in(const struct builder *b, const struct brule *c, const struct brule *r,
		      const struct region *g)
{
	for (unsigned f = 0; f < ACL_FIELDS; f++) {
		uint32_t lo = g ? RXP_MAX(r->lo[f], g->lo[f]) : r->lo[f];
		uint32_t hi = g ? RXP_MIN(r->hi[f], region_hi(g, f)) : r->hi[f];

		if (c->lo[f] > lo || c->hi[f] < hi)
			return false;
	}
	return extras_cover(b, c, r);
}

/* ---- growing the block's parts ---- */

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return true;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * elem);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

static bool grow32(void **p, uint32_t *cap, size_t need, size_t elem)
{
	size_t c = *cap;

	if (need > UINT32_MAX / 4 || !grow(p, &c, need, elem))
		return false;
	*cap = (uint32_t)c;
	return true;
}

/* Returns false, with b->err set, when @more bytes would take the block past its cap. */
static bool mem_ok(struct builder *b, size_t more)
{
	size_t used = (size_t)b->n_nodes * sizeof(struct acl_node) +
		      (size_t)b->n_slots * sizeof(uint32_t) + b->n_leaf;

	if (used + more <= b->mem_cap)
		return true;
	b->err = -E2BIG;
	return false;
}

/* Returns the index of @n new slots (zeroed), or UINT32_MAX with b->err set. */
static uint32_t slots_add(struct builder *b, size_t n)
{
	uint32_t at = b->n_slots;

	if (!mem_ok(b, n * sizeof(uint32_t)))
		return UINT32_MAX;

	if ((size_t)at + n >= (1u << 30) ||
	    !grow32((void **)&b->slots, &b->cap_slots, (size_t)at + n, sizeof(uint32_t))) {
		b->err = at + n >= (1u << 30) ? -E2BIG : -ENOMEM;
		return UINT32_MAX;
	}
	memset(b->slots + at, 0, n * sizeof(uint32_t));
	b->n_slots += (uint32_t)n;
	return at;
}

static int32_t *grid(struct builder *b, size_t n)
{
	if (!grow((void **)&b->grid, &b->cap_grid, n, sizeof(int32_t))) {
		b->err = -ENOMEM;
		return NULL;
	}
	memset(b->grid, 0, n * sizeof(int32_t));
	return b->grid;
}

/* ---- leaves ---- */

static uint64_t leaf_hash(const struct brule *rules, const uint32_t *ids, unsigned n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (unsigned i = 0; i < n; i++) {
		h ^= rules[ids[i]].id;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	return h | 1;
}

/* Returns true when leaf slot @s holds exactly the rules @ids. */
static bool leaf_same(const struct builder *b, uint32_t s, const uint32_t *ids, unsigned n)
{
	const uint8_t *leaf = b->leaves + (size_t)(s >> 7) * ACL_LEAF_UNIT;
	const uint32_t *lid = b->fam->v6 ? acl_leaf6_ids(leaf, n) : acl_leaf4_ids(leaf, n);

	if (acl_leaf_n(s) != n)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (lid[i] != b->fam->rules[ids[i]].id)
			return false;
	return true;
}

static struct leaf_hash *leaf_find(struct builder *b, uint64_t h, const uint32_t *ids, unsigned n)
{
	size_t mask = b->lh_cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct leaf_hash *e = &b->lh[i];

		if (!e->slot || (e->h == h && e->v6 == b->fam->v6 && leaf_same(b, e->slot, ids, n)))
			return e;
	}
}

static bool leaf_hash_grow(struct builder *b)
{
	struct leaf_hash *old = b->lh;
	size_t old_cap = b->lh_cap, cap = old_cap ? old_cap * 2 : 1024;

	b->lh = calloc(cap, sizeof(*b->lh));
	if (!b->lh) {
		b->lh = old;
		return false;
	}
	b->lh_cap = cap;
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i].slot) {
			size_t j = old[i].h & (cap - 1);

			while (b->lh[j].slot)
				j = (j + 1) & (cap - 1);
			b->lh[j] = old[i];
		}
	}
	free(old);
	return true;
}

static void lanes4(const struct brule *r, uint16_t lo[8], uint16_t w[8])
{
	uint32_t l[8] = {
		r->lo[ACL_F_SRC0] >> 16, r->lo[ACL_F_SRC0] & 0xffff,
		r->lo[ACL_F_DST0] >> 16, r->lo[ACL_F_DST0] & 0xffff,
		r->lo[ACL_F_SPORT], r->lo[ACL_F_DPORT], r->lo[ACL_F_PROTO], 0,
	};
	uint32_t h[8] = {
		r->hi[ACL_F_SRC0] >> 16, r->hi[ACL_F_SRC0] & 0xffff,
		r->hi[ACL_F_DST0] >> 16, r->hi[ACL_F_DST0] & 0xffff,
		r->hi[ACL_F_SPORT], r->hi[ACL_F_DPORT], r->hi[ACL_F_PROTO], 0,
	};

	/* a prefix splits exactly into a range of its high half and one of its low half */
	for (int i = 0; i < 8; i++) {
		lo[i] = (uint16_t)l[i];
		w[i] = (uint16_t)(h[i] - l[i]);
	}
}

/* Returns the slot of a leaf of rules @ids[0..@n) (1..8), or 0 with b->err set. */
static uint32_t leaf_make(struct builder *b, const uint32_t *ids, unsigned n)
{
	const struct fam *fm = b->fam;
	bool extras = false;
	size_t lanes_bytes = fm->v6 ? 2 * ACL_LANES6 * 4 : 2 * ACL_LANES4 * 2;
	size_t align = fm->v6 ? 64 : 16, at, size;
	uint64_t h = leaf_hash(fm->rules, ids, n);
	struct leaf_hash *e;
	uint32_t *lid;
	uint8_t *leaf;
	uint32_t slot;

	if (b->lh_n * 2 >= b->lh_cap && !leaf_hash_grow(b)) {
		b->err = -ENOMEM;
		return 0;
	}
	e = leaf_find(b, h, ids, n);
	if (e->slot)
		return e->slot;
	for (unsigned i = 0; i < n; i++)
		extras |= fm->rules[ids[i]].xidx != NO_EXTRA;
	at = RXP_ALIGN_UP(b->n_leaf, align);
	size = n * lanes_bytes + n * 4 * (extras ? 2 : 1);
	if ((at + size) / ACL_LEAF_UNIT >= (1u << 25)) {
		b->err = -E2BIG;
		return 0;
	}
	if (!mem_ok(b, at + size - b->n_leaf))
		return 0;
	if (!grow((void **)&b->leaves, &b->cap_leaf, at + size, 1)) {
		b->err = -ENOMEM;
		return 0;
	}
	memset(b->leaves + b->n_leaf, 0, at + size - b->n_leaf);
	leaf = b->leaves + at;
	for (unsigned i = 0; i < n; i++) {
		const struct brule *r = &fm->rules[ids[i]];

		if (fm->v6) {
			uint32_t *lo = (uint32_t *)(void *)leaf + i * ACL_LANES6;
			uint32_t *w = (uint32_t *)(void *)leaf + (n + i) * ACL_LANES6;

			for (unsigned f = 0; f < ACL_FIELDS; f++) {
				lo[f] = r->lo[f];
				w[f] = r->hi[f] - r->lo[f];
			}
		} else {
			uint16_t *lo = (uint16_t *)(void *)leaf + i * ACL_LANES4;
			uint16_t *w = (uint16_t *)(void *)leaf + (n + i) * ACL_LANES4;

			lanes4(r, lo, w);
		}
	}
	lid = (uint32_t *)(void *)(leaf + n * lanes_bytes);
	for (unsigned i = 0; i < n; i++) {
		lid[i] = fm->rules[ids[i]].id;
		if (extras)
			lid[n + i] = fm->rules[ids[i]].xidx;
	}
	b->n_leaf = at + size;
	slot = (uint32_t)(at / ACL_LEAF_UNIT) << 7 | (extras ? ACL_SLOT_EXTRAS : 0) | n << 2 |
	       ACL_SLOT_LEAF;
	e->h = h;
	e->v6 = fm->v6;
	e->slot = slot;
	b->lh_n++;
	return slot;
}

/* Returns the slot of a chain of leaves over @ids[0..@n), or 0 with b->err set. */
static uint32_t chain_make(struct builder *b, const uint32_t *ids, uint32_t n)
{
	uint32_t n_leaves = (n + ACL_LEAF_RULES - 1) / ACL_LEAF_RULES;
	uint32_t at = slots_add(b, 1 + (size_t)n_leaves);

	if (at == UINT32_MAX)
		return 0;
	b->slots[at] = n_leaves;
	for (uint32_t i = 0; i < n_leaves; i++) {
		unsigned m = RXP_MIN(n - i * ACL_LEAF_RULES, (uint32_t)ACL_LEAF_RULES);
		uint32_t s = leaf_make(b, ids + i * ACL_LEAF_RULES, m);

		if (!s)
			return 0;
		b->slots[at + 1 + i] = s;
	}
	return at << 2 | ACL_SLOT_CHAIN;
}

/* ---- linear lists ---- */

static void region_full(const struct fam *fm, struct region *g)
{
	memset(g, 0, sizeof(*g));
	for (unsigned i = 0; i < fm->n_fields; i++) {
		unsigned f = fm->fields[i];

		g->bits[f] = f == ACL_F_PROTO ? 8 : f >= ACL_F_SPORT ? 16 : 32;
	}
}

static void check_add(struct builder *b, uint32_t at, unsigned *n, unsigned kind, unsigned field,
		      uint32_t x, uint32_t y)
{
	uint32_t *c = b->slots + at + 2 + 3 * *n;

	c[0] = kind << 8 | field;
	c[1] = x;
	c[2] = y;
	(*n)++;
}

/* Returns the slot of a linear list of @ids[0..n), or 0 with b->err set. */
static uint32_t linear_make(struct builder *b, const uint32_t *ids, uint32_t n)
{
	const struct fam *fm = b->fam;
	uint32_t start = slots_add(b, 1);
	struct region all;

	if (start == UINT32_MAX)
		return 0;
	region_full(fm, &all);
	b->slots[start] = n;
	for (uint32_t i = 0; i < n; i++) {
		const struct brule *r = &fm->rules[ids[i]];
		/* room for every field and every extra */
		uint32_t at = slots_add(b, 2 + 3 * (ACL_FIELDS + 5));
		unsigned nc = 0, n_range;

		if (at == UINT32_MAX)
			return 0;
		for (unsigned f = 0; f < ACL_FIELDS; f++)
			if (r->lo[f] > all.lo[f] || r->hi[f] < region_hi(&all, f))
				check_add(b, at, &nc, ACL_CHECK_RANGE, f, r->lo[f], r->hi[f] - r->lo[f]);
		n_range = nc;
		if (r->xidx != NO_EXTRA) {
			const struct acl_extra *x = &b->extras[r->xidx];

			if (x->ct_states != RXP_ACL_CT_ANY)
				check_add(b, at, &nc, ACL_CHECK_CT, 0, x->ct_states, 0);
			if (x->in_ifs != UINT64_MAX)
				check_add(b, at, &nc, ACL_CHECK_IN_IF, 0, (uint32_t)x->in_ifs,
					  (uint32_t)(x->in_ifs >> 32));
			if (x->out_ifs != UINT64_MAX)
				check_add(b, at, &nc, ACL_CHECK_OUT_IF, 0, (uint32_t)x->out_ifs,
					  (uint32_t)(x->out_ifs >> 32));
			if (x->src_set != RXP_ACL_NO_SET)
				check_add(b, at, &nc, ACL_CHECK_SRC_SET, 0, x->src_set, 0);
			if (x->dst_set != RXP_ACL_NO_SET)
				check_add(b, at, &nc, ACL_CHECK_DST_SET, 0, x->dst_set, 0);
			b->linear_extras = true;
		}
		b->slots[at] = r->id;
		b->slots[at + 1] = nc | n_range << 16;
		b->n_slots = at + 2 + 3 * nc;	/* give back the room not used */
	}
	return start << 2 | ACL_SLOT_LINEAR;
}

/* ---- choosing a cut ---- */

struct cut {
	uint8_t f1, k1, f2, k2;	/* k2 = 0: one field */
	double score;
};

/* What a child of @c rules is expected to cost a key that lands in it. */
static double child_cost(int32_t c)
{
	if (c == 0)
		return 0;
	if (c <= ACL_LEAF_RULES)
		return COST_LEAF;
	return COST_LEAF + COST_NODE * (1 + (c > 128) + (c > 2048));
}

/* The children of rule @r's range on field @f of @g, cut in 2^k: [*a, *b]. */
static inline void child_span(const struct brule *r, const struct region *g, unsigned f, unsigned k,
			      uint32_t *a, uint32_t *b)
{
	unsigned shift = g->bits[f] - k;

	*a = (RXP_MAX(r->lo[f], g->lo[f]) - g->lo[f]) >> shift;
	*b = (RXP_MIN(r->hi[f], region_hi(g, f)) - g->lo[f]) >> shift;
}

/* Returns the first index from @x on that next[] does not skip (path halving). */
static inline uint32_t dsu_find(uint32_t *next, uint32_t x)
{
	while (next[x] != x) {
		next[x] = next[next[x]];
		x = next[x];
	}
	return x;
}

/*
 * Counts the rules of each child of a one-field cut (@f, @k) into @count, as
 * the child will hold them: only up to the first rule that covers the child
 * whole (one wide on every other field: open only on @f). A sweep over the
 * children keeps the rules whose span holds the child in a Fenwick tree over
 * rule positions. Returns the sum of the counts.
 */
static double counts_truncated(struct builder *b, const uint32_t *ids, uint32_t n,
			       const struct region *g, unsigned f, unsigned k, int32_t *count)
{
	const struct brule *rules = b->fam->rules;
	size_t cells = (size_t)1 << k;
	unsigned shift = g->bits[f] - k;
	uint32_t *cover = b->scratch, *next = cover + cells, *start = next + cells + 1;
	uint32_t *ev = start + cells + 2, *fen = ev + 2 * (size_t)n;
	double sum = 0;

	for (size_t j = 0; j < cells; j++) {
		cover[j] = n;
		next[j] = (uint32_t)j;
	}
	next[cells] = (uint32_t)cells;
	/* each child's first covering rule; next[] skips children already covered */
	for (uint32_t p = 0; p < n; p++) {
		const struct brule *r = &rules[ids[p]];
		uint64_t lo = RXP_MAX(r->lo[f], g->lo[f]) - g->lo[f];
		uint64_t hi = (uint64_t)RXP_MIN(r->hi[f], region_hi(g, f)) - g->lo[f];
		uint64_t a = (lo + (1ull << shift) - 1) >> shift, e = (hi + 1) >> shift;	/* [a, e) */

		if (b->open[p] != 1u << f)
			continue;
		for (uint32_t j = dsu_find(next, (uint32_t)a); j < e; j = dsu_find(next, j + 1)) {
			cover[j] = p;
			next[j] = j + 1;
		}
	}
	/* events by child: rule p enters at its first child, leaves after its last */
	memset(start, 0, (cells + 2) * sizeof(*start));
	for (uint32_t p = 0; p < n; p++) {
		uint32_t a, z;

		child_span(&rules[ids[p]], g, f, k, &a, &z);
		start[a + 1]++;
		start[z + 2]++;
	}
	for (size_t j = 0; j <= cells; j++)
		start[j + 1] += start[j];
	for (uint32_t p = 0; p < n; p++) {
		uint32_t a, z;

		child_span(&rules[ids[p]], g, f, k, &a, &z);
		ev[start[a]++] = p << 1;
		ev[start[z + 1]++] = p << 1 | 1;
	}
	/* start[j] is now where the events of child j + 1 begin */
	memset(fen, 0, (n + 1) * sizeof(*fen));
	for (size_t j = 0, at = 0; j < cells; j++) {
		int64_t c = 0;

		for (; at < start[j]; at++) {
			uint32_t p = ev[at] >> 1;
			int32_t d = ev[at] & 1 ? -1 : 1;

			for (uint32_t x = p + 1; x <= n; x += x & -x)
				fen[x] = (uint32_t)((int32_t)fen[x] + d);
		}
		for (uint32_t x = RXP_MIN(cover[j] + 1, n); x; x -= x & -x)
			c += (int32_t)fen[x];
		count[j] = (int32_t)c;
		sum += (double)c;
	}
	return sum;
}

/* Scores cut @c of @ids over @g (lower is better); 1e300 when not allowed. */
static double cut_score(struct builder *b, const uint32_t *ids, uint32_t n, const struct region *g,
			const struct cut *c, double budget, bool truncate)
{
	const struct brule *rules = b->fam->rules;
	size_t rows = (size_t)1 << c->k1, cols = (size_t)1 << c->k2, cells = rows * cols;
	double sum = 0, own = (double)n * (double)b->fam->rule_bytes, mem, e = 0, er = 0;
	int32_t *d, max = 0;

	if ((double)cells * 4 > budget)
		return 1e300;
	d = grid(b, (rows + 1) * (cols + 1));
	if (!d)
		return 1e300;
	if (truncate && !c->k2) {
		sum = counts_truncated(b, ids, n, g, c->f1, c->k1, d);
		for (size_t j = 0; j < cells; j++) {
			e += child_cost(d[j]);
			er += child_cost(d[j]) * d[j];
			max = RXP_MAX(max, d[j]);
		}
	} else {
		/* a 2-D difference array: each rule adds 1 over its rectangle of children */
		for (uint32_t i = 0; i < n; i++) {
			const struct brule *r = &rules[ids[i]];
			uint32_t a1, b1, a2 = 0, b2 = 0;

			child_span(r, g, c->f1, c->k1, &a1, &b1);
			if (c->k2)
				child_span(r, g, c->f2, c->k2, &a2, &b2);
			sum += (double)(b1 - a1 + 1) * (double)(b2 - a2 + 1);
			d[a1 * (cols + 1) + a2]++;
			d[a1 * (cols + 1) + b2 + 1]--;
			d[(b1 + 1) * (cols + 1) + a2]--;
			d[(b1 + 1) * (cols + 1) + b2 + 1]++;
		}
		for (size_t i = 0; i < rows; i++) {
			int32_t *row = d + i * (cols + 1), *prev = i ? row - (cols + 1) : NULL;
			int32_t acc = 0;

			for (size_t j = 0; j < cols; j++) {
				acc += row[j];
				/* the count: this row's running sum plus the count above (already summed) */
				row[j] = acc + (prev ? prev[j] : 0);
				e += child_cost(row[j]);
				er += child_cost(row[j]) * row[j];
				max = RXP_MAX(max, row[j]);
			}
		}
	}
	mem = sum * (double)b->fam->rule_bytes + (double)cells * 4;
	if (mem > budget)
		return 1e300;
	if ((uint32_t)max >= n)
		return 1e300;	/* no progress */
	/*
	 * Keys land partly uniformly over the region, partly where the rules
	 * are (traffic crowds on the protocols and ports the rules name): a cut
	 * of empty space helps only the first part.
	 */
	return COST_NODE + (1 - TRAFFIC_AT_RULES) * e / (double)cells +
	       TRAFFIC_AT_RULES * (sum > 0 ? er / sum : 0) + COST_MEM * mem / own;
}

/*
 * Picks the cut of @ids over @g. Returns false when no cut beats a chain of
 * leaves.
 */
static bool cut_pick(struct builder *b, const uint32_t *ids, uint32_t n, const struct region *g,
		     struct cut *best)
{
	const struct fam *fm = b->fam;
	double own = (double)n * (double)fm->rule_bytes;
	double budget = (b->mode == MODE_FULL ? SPACE_FACTOR : 1) * own + 64 * 4;
	double field_best[ACL_FIELDS];
	unsigned top[3] = { ACL_FIELDS, ACL_FIELDS, ACL_FIELDS };
	bool coverer[ACL_FIELDS] = { false };
	struct cut c;

	best->score = COST_LEAF * ((n + ACL_LEAF_RULES - 1) / ACL_LEAF_RULES) + COST_MEM;
	best->k1 = 0;
	if (!grow((void **)&b->open, &b->cap_open, n, sizeof(*b->open)) ||
	    !grow((void **)&b->scratch, &b->cap_scratch,
		  3 * ((size_t)1 << CUT_BITS_MAX) + 3 * (size_t)n + 4, sizeof(*b->scratch))) {
		b->err = -ENOMEM;
		return false;
	}
	/* rules wide on all fields but one cover the children inside their range on it */
	for (uint32_t i = 0; i < n; i++) {
		const struct brule *r = &fm->rules[ids[i]];
		unsigned open = 0;

		for (unsigned f = 0; f < ACL_FIELDS; f++)
			if (r->lo[f] > g->lo[f] || r->hi[f] < region_hi(g, f))
				open |= 1u << f;
		b->open[i] = (uint16_t)(r->xidx == NO_EXTRA ? open : 0xffff);
		if (open && !(open & (open - 1)) && r->xidx == NO_EXTRA)
			coverer[__builtin_ctz(open)] = true;
	}
	for (unsigned i = 0; i < fm->n_fields; i++) {
		unsigned f = fm->fields[i];

		field_best[f] = 1e300;
		for (unsigned k = 1; k <= RXP_MIN((unsigned)g->bits[f], (unsigned)CUT_BITS_MAX); k++) {
			c = (struct cut){ .f1 = (uint8_t)f, .k1 = (uint8_t)k };
			c.score = cut_score(b, ids, n, g, &c, budget, coverer[f]);
			if (b->err)
				return false;
			if (c.score < field_best[f])
				field_best[f] = c.score;
			if (c.score < best->score)
				*best = c;
			if ((double)((size_t)4 << k) > budget)
				break;
		}
		/* keep the three best fields for two-field cuts */
		for (unsigned t = 0; t < 3; t++) {
			if (field_best[f] >= 1e299)
				break;
			if (top[t] == ACL_FIELDS || field_best[f] < field_best[top[t]]) {
				for (unsigned u = 2; u > t; u--)
					top[u] = top[u - 1];
				top[t] = f;
				break;
			}
		}
	}
	if (n >= PAIR_MIN && b->mode == MODE_FULL) {
		for (unsigned x = 0; x < 3; x++) {
			for (unsigned y = x + 1; y < 3; y++) {
				unsigned f1 = top[x], f2 = top[y];

				if (f1 == ACL_FIELDS || f2 == ACL_FIELDS)
					continue;
				for (unsigned k1 = 1; k1 <= g->bits[f1] && k1 < CUT_BITS_MAX; k1++) {
					for (unsigned k2 = 1; k2 <= g->bits[f2] && k1 + k2 <= CUT_BITS_MAX;
					     k2++) {
						if ((double)((size_t)4 << (k1 + k2)) > budget)
							break;
						c = (struct cut){ .f1 = (uint8_t)f1, .k1 = (uint8_t)k1,
								  .f2 = (uint8_t)f2, .k2 = (uint8_t)k2 };
						c.score = cut_score(b, ids, n, g, &c, budget, false);
						if (b->err)
							return false;
						if (c.score < best->score)
							*best = c;
					}
				}
			}
		}
	}
	return best->k1 != 0;
}

/* ---- nodes ---- */

/* Drops the rules of @ids[0..n) that an earlier one covers within @g. Returns the new n. */
static uint32_t prune(const struct builder *b, uint32_t *ids, uint32_t n, const struct region *g)
{
	const struct brule *rules = b->fam->rules;
	uint32_t m = 0;

	for (uint32_t i = 0; i < n; i++) {
		bool covered = false;

		for (uint32_t j = 0; j < m && !covered; j++)
			covered = covers_in(b, &rules[ids[j]], &rules[ids[i]], g);
		if (!covered)
			ids[m++] = ids[i];
	}
	return m;
}

static uint32_t node_build(struct builder *b, const uint32_t *ids_in, uint32_t n,
			   const struct region *g, unsigned depth, bool root);

/* Returns true when every rule of @ids covers child @g on the cut fields of @c. */
static bool child_full(const struct builder *b, const uint32_t *ids, uint32_t n,
		       const struct region *g, const struct cut *c)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct brule *r = &b->fam->rules[ids[i]];

		if (r->lo[c->f1] > g->lo[c->f1] || r->hi[c->f1] < region_hi(g, c->f1))
			return false;
		if (c->k2 && (r->lo[c->f2] > g->lo[c->f2] || r->hi[c->f2] < region_hi(g, c->f2)))
			return false;
	}
	return true;
}

/*
 * Stores the @cells child slots of @nd, sparse when most are empty (see
 * struct acl_node) and that takes half the room or less. Sets b->err on
 * failure.
 */
static void children_store(struct builder *b, struct acl_node *nd, const uint32_t *child,
			   size_t cells)
{
	size_t full = 0, words = cells / 16, need;
	uint32_t at, rank = 0;

	for (size_t j = 0; j < cells; j++)
		full += child[j] != 0;
	need = words + full + 1;
	if (cells < sparse_min || 2 * need > cells) {
		at = slots_add(b, cells);
		if (at == UINT32_MAX)
			return;
		memcpy(b->slots + at, child, cells * sizeof(*child));
		nd->base = at;
		return;
	}
	at = slots_add(b, need);	/* zeroed: the slot past the last is 0 */
	if (at == UINT32_MAX)
		return;
	for (size_t w = 0; w < cells / 32; w++) {
		uint32_t bits = 0;

		for (unsigned j = 0; j < 32; j++)
			bits |= (uint32_t)(child[32 * w + j] != 0) << j;
		b->slots[at + 2 * w] = bits;
		b->slots[at + 2 * w + 1] = rank;
		for (unsigned j = 0; j < 32; j++)
			if (child[32 * w + j])
				b->slots[at + words + rank++] = child[32 * w + j];
	}
	nd->base = at;
	nd->sparse = 1;
}

/* Builds the node for cut @c of @ids over @g. Returns its slot, or 0 with b->err set. */
static uint32_t cut_build(struct builder *b, const uint32_t *ids, uint32_t n, const struct region *g,
			  const struct cut *c, unsigned depth)
{
	const struct brule *rules = b->fam->rules;
	size_t cols = (size_t)1 << c->k2, cells = ((size_t)1 << c->k1) * cols, total = 0;
	uint32_t *count = NULL, *lists = NULL, *child = NULL, node, last_slot = 0, last_at = 0;
	uint32_t last_n = 0;
	bool have_last = false;
	struct region cg;
	unsigned sh1 = g->bits[c->f1] - c->k1, sh2 = c->k2 ? g->bits[c->f2] - c->k2 : 0;

	if (!grow32((void **)&b->nodes, &b->cap_nodes, (size_t)b->n_nodes + 1, sizeof(*b->nodes))) {
		b->err = -ENOMEM;
		return 0;
	}
	node = b->n_nodes++;
	b->nodes[node] = (struct acl_node){
		.f1 = c->f1, .s1 = (uint8_t)sh1, .m1 = (uint16_t)((1u << c->k1) - 1),
		.f2 = c->k2 ? c->f2 : c->f1, .s2 = (uint8_t)sh2,
		.m2 = (uint16_t)(c->k2 ? (1u << c->k2) - 1 : 0), .sh = c->k2,
		.cell_bits = (uint8_t)(c->k1 + c->k2),
	};
	/* counting sort of the rules into the children */
	count = calloc(cells + 1, sizeof(*count));
	child = calloc(cells, sizeof(*child));
	if (!count || !child)
		goto nomem;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < n; i++) {
			uint32_t a1, b1, a2 = 0, b2 = 0;

			child_span(&rules[ids[i]], g, c->f1, c->k1, &a1, &b1);
			if (c->k2)
				child_span(&rules[ids[i]], g, c->f2, c->k2, &a2, &b2);
			for (uint32_t x = a1; x <= b1; x++)
				for (uint32_t y = a2; y <= b2; y++) {
					if (pass == 0)
						count[x * cols + y + 1]++;
					else
						lists[count[x * cols + y]++] = ids[i];
				}
		}
		if (pass == 0) {
			for (size_t j = 0; j < cells; j++)
				count[j + 1] += count[j];
			total = count[cells];
			lists = malloc(RXP_MAX(total, (size_t)1) * sizeof(*lists));
			if (!lists)
				goto nomem;
			/* count[j] is now where child j's list starts; the fill moves it to its end */
		}
	}
	cg = *g;
	cg.bits[c->f1] = (uint8_t)sh1;
	if (c->k2)
		cg.bits[c->f2] = (uint8_t)sh2;
	for (size_t j = 0; j < cells; j++) {
		uint32_t end = count[j], start = j ? count[j - 1] : 0, m = end - start, s;
		bool full;

		if (!m)
			continue;
		cg.lo[c->f1] = g->lo[c->f1] + (uint32_t)((j / cols) << sh1);
		if (c->k2)
			cg.lo[c->f2] = g->lo[c->f2] + (uint32_t)((j % cols) << sh2);
		/* children whose rules all span them on the cut fields are alike: share one */
		full = child_full(b, lists + start, m, &cg, c);
		if (full && have_last && m == last_n &&
		    !memcmp(lists + start, lists + last_at, m * sizeof(*lists))) {
			child[j] = last_slot;
			continue;
		}
		s = node_build(b, lists + start, m, &cg, depth + 1, false);
		if (b->err)
			goto out;
		child[j] = s;
		if (full) {
			have_last = true;
			last_slot = s;
			last_at = start;
			last_n = m;
		}
	}
	children_store(b, &b->nodes[node], child, cells);
	goto out;
nomem:
	b->err = -ENOMEM;
out:
	free(child);
	free(lists);
	free(count);
	return b->err ? 0 : node << 2 | ACL_SLOT_NODE;
}

/* Returns the slot for @ids_in[0..n) over @g, or 0 (also the empty leaf) with b->err set. */
static uint32_t node_build(struct builder *b, const uint32_t *ids_in, uint32_t n,
			   const struct region *g, unsigned depth, bool root)
{
	const struct brule *rules = b->fam->rules;
	uint32_t *ids, s = 0;
	struct cut c;

	for (uint32_t i = 0; i < n; i++) {
		if (covers_region(&rules[ids_in[i]], g)) {
			n = i + 1;	/* nothing after it is ever the first match here */
			break;
		}
	}
	if (!n)
		return 0;
	ids = malloc(n * sizeof(*ids));
	if (!ids) {
		b->err = -ENOMEM;
		return 0;
	}
	memcpy(ids, ids_in, n * sizeof(*ids));
	if (n <= PRUNE_MAX)
		n = prune(b, ids, n, g);
	if (root && n <= ACL_LINEAR_MAX)
		s = linear_make(b, ids, n);
	else if (n <= ACL_LEAF_RULES)
		s = leaf_make(b, ids, n);
	else if (depth >= DEPTH_MAX || b->mode == MODE_CHAINS || !cut_pick(b, ids, n, g, &c))
		s = b->err ? 0 : chain_make(b, ids, n);
	else
		s = cut_build(b, ids, n, g, &c, depth);
	free(ids);
	return s;
}

/* ---- families and trees ---- */

static void fam_init(struct fam *fm, bool v6)
{
	static const uint8_t f4[] = { ACL_F_SRC0, ACL_F_DST0, ACL_F_SPORT, ACL_F_DPORT, ACL_F_PROTO };

	memset(fm, 0, sizeof(*fm));
	fm->v6 = v6;
	if (v6) {
		fm->n_fields = ACL_FIELDS;
		for (unsigned f = 0; f < ACL_FIELDS; f++)
			fm->fields[f] = (uint8_t)f;
		fm->rule_bytes = 2 * ACL_LANES6 * 4 + 4;
	} else {
		fm->n_fields = sizeof(f4);
		memcpy(fm->fields, f4, sizeof(f4));
		fm->rule_bytes = 2 * ACL_LANES4 * 2 + 4;
	}
}

/* Drops rules an earlier rule covers: after a match-all, and under wide rules. */
static void fam_prune(const struct builder *b, struct fam *fm, const struct region *all)
{
	unsigned wide = fm->v6 ? WIDE6 : WIDE4;
	uint32_t *cand, n_cand = 0, m = 0;
	uint64_t checks = 0;

	for (uint32_t i = 0; i < fm->n; i++) {
		if (covers_region(&fm->rules[i], all)) {
			fm->n = i + 1;
			break;
		}
	}
	cand = malloc(RXP_MAX(fm->n, 1u) * sizeof(*cand));
	if (!cand)
		return;		/* pruning is an optimization */
	for (uint32_t i = 0; i < fm->n; i++) {
		struct brule *r = &fm->rules[i];
		bool covered = false;

		for (uint32_t j = 0; j < n_cand && !covered && checks < GLOBAL_CHECKS_MAX; j++, checks++)
			covered = covers_in(b, &fm->rules[cand[j]], r, NULL);
		if (covered)
			continue;
		fm->rules[m] = *r;
		if (r->src_len < wide || r->dst_len < wide)
			cand[n_cand++] = m;
		m++;
	}
	fm->n = m;
	free(cand);
}

static int cmp_tree(const void *a, const void *b)
{
	const struct acl_tree *x = a, *y = b;

	return (x->min_rule > y->min_rule) - (x->min_rule < y->min_rule);
}

/* Builds the trees of family @fm into @trees. Returns their count, or b->err. */
static int fam_build(struct builder *b, struct fam *fm, struct acl_tree *trees)
{
	unsigned wide = fm->v6 ? WIDE6 : WIDE4, n_trees = 0;
	uint32_t *ids;
	struct region all;

	region_full(fm, &all);
	fam_prune(b, fm, &all);
	if (!fm->n)
		return 0;
	ids = malloc(fm->n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	b->fam = fm;
	for (unsigned group = 0; group < ACL_TREES_MAX; group++) {
		uint32_t m = 0, s;

		for (uint32_t i = 0; i < fm->n; i++) {
			const struct brule *r = &fm->rules[i];
			unsigned gr = (r->src_len < wide) | (r->dst_len < wide) << 1;

			if (fm->n <= TINY_RULES ? group == 0 : gr == group)
				ids[m++] = i;
		}
		if (!m)
			continue;
		s = node_build(b, ids, m, &all, 0, true);
		if (b->err)
			break;
		if (!s)
			continue;	/* all pruned */
		trees[n_trees].root = s;
		trees[n_trees].min_rule = fm->rules[ids[0]].id;
		n_trees++;
	}
	free(ids);
	if (b->err)
		return b->err;
	qsort(trees, n_trees, sizeof(*trees), cmp_tree);
	return (int)n_trees;
}

/* ---- the block ---- */

static int rules_check(const struct rxp_acl_rule *rules, uint32_t n, char *err, size_t errlen)
{
	if (n > RXP_ACL_RULES_MAX) {
		snprintf(err, errlen, "%u rules: the classifier takes at most %u", n, RXP_ACL_RULES_MAX);
		return -E2BIG;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct rxp_acl_rule *r = &rules[i];

		if (r->family != 0 && r->family != 4 && r->family != 6) {
			snprintf(err, errlen, "rule %u: family %u: it must be 4, 6 or 0 (both)", i,
				 r->family);
			return -EINVAL;
		}
		if (r->proto > RXP_ACL_ANY_PROTO) {
			snprintf(err, errlen, "rule %u: protocol %u: it must be 0-255 or any", i,
				 r->proto);
			return -EINVAL;
		}
		if ((r->src_set != RXP_ACL_NO_SET && r->src_set >= RXP_ACL_SETS_MAX) ||
		    (r->dst_set != RXP_ACL_NO_SET && r->dst_set >= RXP_ACL_SETS_MAX)) {
			snprintf(err, errlen, "rule %u: set %u: set ids are below %u", i,
				 r->src_set != RXP_ACL_NO_SET && r->src_set >= RXP_ACL_SETS_MAX ?
				 r->src_set : r->dst_set, RXP_ACL_SETS_MAX);
			return -EINVAL;
		}
	}
	return 0;
}

/* Copies the builder's parts into one block. Returns it, or NULL. */
static struct rxp_acl *block_make(const struct builder *b, uint32_t n_rules)
{
	size_t o_nodes = RXP_ALIGN_UP(sizeof(struct rxp_acl), (size_t)64);
	size_t o_slots = RXP_ALIGN_UP(o_nodes + (size_t)b->n_nodes * sizeof(struct acl_node), (size_t)64);
	size_t o_leaves = RXP_ALIGN_UP(o_slots + (size_t)b->n_slots * sizeof(uint32_t), (size_t)64);
	size_t o_extras = RXP_ALIGN_UP(o_leaves + b->n_leaf, (size_t)64);
	size_t total = RXP_ALIGN_UP(o_extras + (size_t)b->n_extras * sizeof(struct acl_extra) + 64,
				    (size_t)64);
	struct rxp_acl *acl = aligned_alloc(64, total);
	uint8_t *p = (uint8_t *)acl;

	if (!acl)
		return NULL;
	memset(acl, 0, total);
	acl->bytes = total;
	acl->n_rules = n_rules;
	acl->n_nodes = b->n_nodes;
	acl->n_slots = b->n_slots;
	acl->n_leaf_bytes = (uint32_t)b->n_leaf;
	acl->n_extras = b->n_extras;
	acl->linear_extras = b->linear_extras;
	if (b->n_nodes)
		memcpy(p + o_nodes, b->nodes, (size_t)b->n_nodes * sizeof(struct acl_node));
	if (b->n_slots)
		memcpy(p + o_slots, b->slots, (size_t)b->n_slots * sizeof(uint32_t));
	if (b->n_leaf)
		memcpy(p + o_leaves, b->leaves, b->n_leaf);
	if (b->n_extras)
		memcpy(p + o_extras, b->extras, (size_t)b->n_extras * sizeof(struct acl_extra));
	acl->nodes = (const struct acl_node *)(const void *)(p + o_nodes);
	acl->slots = (const uint32_t *)(const void *)(p + o_slots);
	acl->leaves = p + o_leaves;
	acl->extras = (const struct acl_extra *)(const void *)(p + o_extras);
	acl->impl = acl_impl_pick();
	return acl;
}

struct rxp_acl *rxp_acl_build(const struct rxp_acl_rule *rules, uint32_t n, char *err, size_t errlen)
{
	struct builder b = { 0 };
	struct fam fams[2];
	struct acl_tree trees[2][ACL_TREES_MAX];
	int n_trees[2] = { 0, 0 };
	struct rxp_acl *acl = NULL;
	int ret;

	if (errlen)
		err[0] = '\0';
	ret = rules_check(rules, n, err, errlen);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	fam_init(&fams[0], false);
	fam_init(&fams[1], true);
	b.extras = malloc(RXP_MAX(n, 1u) * sizeof(*b.extras));
	fams[0].rules = malloc(RXP_MAX(n, 1u) * sizeof(struct brule));
	fams[1].rules = malloc(RXP_MAX(n, 1u) * sizeof(struct brule));
	if (!b.extras || !fams[0].rules || !fams[1].rules) {
		ret = -ENOMEM;
		goto out;
	}
	b.mem_cap = mem_cap_forced ? mem_cap_forced : MEM_CAP_BASE + (size_t)n * MEM_CAP_PER_RULE;
	for (uint32_t i = 0; i < n; i++) {
		const struct rxp_acl_rule *r = &rules[i];
		uint32_t xidx = NO_EXTRA;

		if (rxp_acl_rule_void(r))
			continue;
		if (!extras_trivial(r)) {
			xidx = b.n_extras++;
			b.extras[xidx] = (struct acl_extra){
				.in_ifs = r->in_ifs, .out_ifs = r->out_ifs, .ct_states = r->ct_states,
				.src_set = r->src_set, .dst_set = r->dst_set,
			};
		}
		for (int v6 = 0; v6 < 2; v6++) {
			struct fam *fm = &fams[v6];
			struct brule *br;

			if (r->family && r->family != (v6 ? 6 : 4))
				continue;
			br = &fm->rules[fm->n++];
			rule_box(br, r, v6);
			br->id = i;
			br->xidx = xidx;
		}
	}
	for (b.mode = MODE_FULL; b.mode < MODES; b.mode++) {
		/* start over: slot 0 is the empty leaf, and no chain or list is at 0 */
		b.n_nodes = b.n_slots = 0;
		b.n_leaf = 0;
		b.lh_n = 0;
		if (b.lh)
			memset(b.lh, 0, b.lh_cap * sizeof(*b.lh));
		b.linear_extras = false;
		b.err = 0;
		ret = slots_add(&b, 1) == UINT32_MAX ? b.err : 0;
		for (int v6 = 0; v6 < 2 && !ret; v6++) {
			n_trees[v6] = fam_build(&b, &fams[v6], trees[v6]);
			ret = n_trees[v6] < 0 ? n_trees[v6] : 0;
		}
		if (ret != -E2BIG)
			break;
	}
	if (ret)
		goto out;
	acl = block_make(&b, n);
	if (!acl) {
		ret = -ENOMEM;
		goto out;
	}
	for (int v6 = 0; v6 < 2; v6++) {
		acl->n_trees[v6] = (uint8_t)n_trees[v6];
		memcpy(acl->trees[v6], trees[v6], sizeof(trees[v6]));
	}
	ret = 0;
out:
	if (ret) {
		if (errlen && !err[0])
			snprintf(err, errlen, "%s", ret == -E2BIG ?
				 "the rules make a classifier too large: fewer or simpler rules" :
				 "out of memory building the classifier");
		errno = -ret;
	}
	free(fams[1].rules);
	free(fams[0].rules);
	free(b.extras);
	free(b.nodes);
	free(b.slots);
	free(b.leaves);
	free(b.grid);
	free(b.scratch);
	free(b.open);
	free(b.lh);
	return acl;
}

void rxp_acl_set_sparse_min(size_t cells)
{
	sparse_min = cells ? cells : SPARSE_MIN;
}

void rxp_acl_set_mem_cap(size_t bytes)
{
	mem_cap_forced = bytes;
}

void rxp_acl_free(struct rxp_acl *acl)
{
	free(acl);
}

size_t rxp_acl_memory(const struct rxp_acl *acl)
{
	return acl ? acl->bytes : 0;
}
