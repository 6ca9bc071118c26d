/* SPDX-License-Identifier: MIT */
/*
 * The classifier's lookups (the layout is in acl_priv.h): the API's entry
 * points, the choice of instruction set, and the scalar lookups that every
 * CPU can run (acl_avx512.c has the AVX-512 ones).
 *
 * The scalar burst is walked tree by tree and level by level: each pass
 * moves every key still at an inner node one level down, so the loads of
 * different keys overlap instead of each key's chain of loads running
 * alone, and keys that reached a leaf drop out of the pass without a
 * branch. Keys whose answer so far comes before a tree's first rule skip
 * that tree. Nothing is allocated.
 */
#include <string.h>
#include "core/simd.h"
#include "fib/acl_priv.h"
#include "rxpath/common.h"

static enum acl_impl_choice impl_forced = ACL_IMPL_AUTO;

static inline uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void acl_key_fields(const struct rxp_acl_key *k, struct acl_kfields *kf, uint16_t lanes4[8])
{
	unsigned words = k->family == 6 ? 4 : 1;

	for (unsigned w = 0; w < 4; w++) {
		kf->f[ACL_F_SRC0 + w] = w < words ? be32(k->src + 4 * w) : 0;
		kf->f[ACL_F_DST0 + w] = w < words ? be32(k->dst + 4 * w) : 0;
	}
	kf->f[ACL_F_SPORT] = k->sport;
	kf->f[ACL_F_DPORT] = k->dport;
	kf->f[ACL_F_PROTO] = k->proto;
	for (unsigned f = ACL_FIELDS; f < 16; f++)
		kf->f[f] = 0;
	lanes4[0] = (uint16_t)(kf->f[ACL_F_SRC0] >> 16);
	lanes4[1] = (uint16_t)kf->f[ACL_F_SRC0];
	lanes4[2] = (uint16_t)(kf->f[ACL_F_DST0] >> 16);
	lanes4[3] = (uint16_t)kf->f[ACL_F_DST0];
	lanes4[4] = k->sport;
	lanes4[5] = k->dport;
	lanes4[6] = k->proto;
	lanes4[7] = 0;
}

/* Slow path: only leaves holding a rule with extras come here. */
uint32_t acl_leaf_extras(const struct rxp_acl *acl, uint32_t hits, const uint32_t *ids, unsigned n,
			 const struct rxp_acl_key *k)
{
	const uint32_t *xidx = ids + n;

	while (hits) {
		unsigned r = (unsigned)__builtin_ctz(hits);

		if (xidx[r] == UINT32_MAX || acl_extra_ok(&acl->extras[xidx[r]], k))
			return ids[r];
		hits &= hits - 1;
	}
	return RXP_ACL_NO_MATCH;
}

/* ---- linear lists ---- */

static bool ifs_bit(uint32_t lo, uint32_t hi, uint8_t ifindex)
{
	return ifindex < 32 ? lo >> ifindex & 1 : ifindex < 64 && (hi >> (ifindex - 32) & 1);
}

/* Returns true when @k passes bit-mask check @c of a linear list. */
static bool check_extra(const uint32_t *c, const struct rxp_acl_key *k)
{
	switch (c[0] >> 8) {
	case ACL_CHECK_CT:
		return k->ct_state & c[1];
	case ACL_CHECK_IN_IF:
		return ifs_bit(c[1], c[2], k->in_if);
	case ACL_CHECK_OUT_IF:
		return ifs_bit(c[1], c[2], k->out_if);
	case ACL_CHECK_SRC_SET:
		return k->src_sets >> c[1] & 1;
	default:
		return k->dst_sets >> c[1] & 1;
	}
}

uint32_t acl_linear_one(const struct rxp_acl *acl, uint32_t slot, const uint32_t *kf,
			const struct rxp_acl_key *k)
{
	const uint32_t *p = acl->slots + (slot >> 2);
	uint32_t n = *p++;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = p[0], nc = p[1] & 0xffff, n_range = p[1] >> 16;
		const uint32_t *c = p + 2;
		bool ok = true;

		/* the ranges first, then the few bit-mask tests */
		for (uint32_t j = 0; j < n_range && ok; j++)
			ok = kf[c[3 * j] & 0xff] - c[3 * j + 1] <= c[3 * j + 2];
		for (uint32_t j = n_range; j < nc && ok; j++)
			ok = check_extra(c + 3 * j, k);
		if (ok)
			return id;
		p = c + 3 * nc;
	}
	return RXP_ACL_NO_MATCH;
}

/*
 * The same for the keys @act[0..m) of a burst, lowering their match[]: the
 * keys' fields in rows, each range tested for a whole row in a loop of
 * fixed length that the compiler vectorizes (the lanes past m never match).
 */
static void linear_burst(const struct rxp_acl *acl, uint32_t slot, bool v6, const uint8_t *act,
			 unsigned m, const struct acl_kfields *kf, const struct rxp_acl_key *keys,
			 uint32_t *match)
{
	static const uint8_t fields4[] = { ACL_F_SRC0, ACL_F_DST0, ACL_F_SPORT, ACL_F_DPORT, ACL_F_PROTO };
	const uint32_t *p = acl->slots + (slot >> 2);
	uint32_t rows[ACL_FIELDS][ACL_BURST], best[ACL_BURST], live[ACL_BURST], n = *p++;

	for (unsigned i = 0; i < (v6 ? ACL_FIELDS : sizeof(fields4)); i++) {
		unsigned f = v6 ? i : fields4[i];

		for (unsigned j = 0; j < ACL_BURST; j++)
			rows[f][j] = j < m ? kf[act[j]].f[f] : 0;
	}
	for (unsigned j = 0; j < ACL_BURST; j++)
		best[j] = j < m ? match[act[j]] : 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = p[0], nc = p[1] & 0xffff, n_range = p[1] >> 16, any = 0;
		const uint32_t *c = p + 2;

		for (unsigned j = 0; j < ACL_BURST; j++) {
			live[j] = -(uint32_t)(best[j] > id);
			any |= live[j];
		}
		if (!any)
			break;	/* the rules after come later still */
		for (uint32_t r = 0; r < n_range; r++) {
			const uint32_t *row = rows[c[3 * r] & 0xff];
			uint32_t lo = c[3 * r + 1], w = c[3 * r + 2];

			for (unsigned j = 0; j < ACL_BURST; j++)
				live[j] &= -(uint32_t)(row[j] - lo <= w);
		}
		for (uint32_t r = n_range; r < nc; r++)
			for (unsigned j = 0; j < m; j++)
				if (live[j] && !check_extra(c + 3 * r, &keys[act[j]]))
					live[j] = 0;
		for (unsigned j = 0; j < ACL_BURST; j++)
			best[j] = (best[j] & ~live[j]) | (id & live[j]);
		p = c + 3 * nc;
	}
	for (unsigned j = 0; j < m; j++)
		match[act[j]] = best[j];
}

/* ---- scalar leaves ---- */

static uint32_t leaf4_scalar(const struct rxp_acl *acl, uint32_t s, const uint16_t *key,
			     const struct rxp_acl_key *k)
{
	unsigned n = acl_leaf_n(s);
	const uint8_t *leaf = acl_leaf_at(acl, s);
	const uint16_t *lo = (const uint16_t *)(const void *)leaf, *w = lo + n * ACL_LANES4;
	const uint32_t *ids = acl_leaf4_ids(leaf, n);
	uint32_t hits = 0;

	for (unsigned r = 0; r < n; r++) {
		unsigned ok = 1;

		for (unsigned f = 0; f < ACL_LANES4; f++)
			ok &= (uint16_t)(key[f] - lo[r * ACL_LANES4 + f]) <= w[r * ACL_LANES4 + f];
		hits |= ok << r;
	}
	if (!hits)
		return RXP_ACL_NO_MATCH;
	if (!(s & ACL_SLOT_EXTRAS))
		return ids[__builtin_ctz(hits)];
	return acl_leaf_extras(acl, hits, ids, n, k);
}

static uint32_t leaf6_scalar(const struct rxp_acl *acl, uint32_t s, const uint32_t *key,
			     const struct rxp_acl_key *k)
{
	unsigned n = acl_leaf_n(s);
	const uint8_t *leaf = acl_leaf_at(acl, s);
	const uint32_t *lo = (const uint32_t *)(const void *)leaf, *w = lo + n * ACL_LANES6;
	const uint32_t *ids = acl_leaf6_ids(leaf, n);
	uint32_t hits = 0;

	for (unsigned r = 0; r < n; r++) {
		unsigned ok = 1;

		for (unsigned f = 0; f < ACL_FIELDS; f++)
			ok &= key[f] - lo[r * ACL_LANES6 + f] <= w[r * ACL_LANES6 + f];
		hits |= ok << r;
	}
	if (!hits)
		return RXP_ACL_NO_MATCH;
	if (!(s & ACL_SLOT_EXTRAS))
		return ids[__builtin_ctz(hits)];
	return acl_leaf_extras(acl, hits, ids, n, k);
}

/* A chain's leaves hold its rules in order: the first leaf that matches has the answer. */
#define CHAIN_SCAN(acl, s, leaf_fn, key, k) do { \
	const uint32_t *_c = (acl)->slots + ((s) >> 2); \
	for (uint32_t _i = 0; _i < _c[0]; _i++) { \
		uint32_t _r = leaf_fn((acl), _c[1 + _i], (key), (k)); \
		if (_r != RXP_ACL_NO_MATCH) \
			return _r; \
	} \
	return RXP_ACL_NO_MATCH; \
} while (0)

static uint32_t scan4_scalar(const struct rxp_acl *acl, uint32_t s, const uint16_t *key,
			     const struct rxp_acl_key *k)
{
	if (acl_slot_kind(s) == ACL_SLOT_CHAIN)
		CHAIN_SCAN(acl, s, leaf4_scalar, key, k);
	return leaf4_scalar(acl, s, key, k);
}

static uint32_t scan6_scalar(const struct rxp_acl *acl, uint32_t s, const uint32_t *key,
			     const struct rxp_acl_key *k)
{
	if (acl_slot_kind(s) == ACL_SLOT_CHAIN)
		CHAIN_SCAN(acl, s, leaf6_scalar, key, k);
	return leaf6_scalar(acl, s, key, k);
}

/* ---- the scalar burst ---- */

/* Walks keys @act[0..m) down the tree from @root; writes where each ends to @cur. */
static void walk(const struct rxp_acl *acl, uint32_t root, const uint8_t *act, unsigned m,
		 const struct acl_kfields *kf, uint32_t *cur)
{
	uint8_t inner[ACL_BURST];
	unsigned n_inner = 0;

	for (unsigned j = 0; j < m; j++)
		cur[j] = root;
	if (acl_slot_kind(root) != ACL_SLOT_NODE)
		return;
	for (unsigned j = 0; j < m; j++)
		inner[j] = (uint8_t)j;
	n_inner = m;
	while (n_inner) {
		unsigned next = 0;

		for (unsigned q = 0; q < n_inner; q++) {
			unsigned j = inner[q];
			uint32_t s = acl_step(acl, cur[j], kf[act[j]].f);

			cur[j] = s;
			inner[next] = (uint8_t)j;
			next += acl_slot_kind(s) == ACL_SLOT_NODE;
		}
		n_inner = next;
	}
}

static void classify_scalar(const struct rxp_acl *acl, const struct rxp_acl_key *keys,
			    uint32_t *match, unsigned n)
{
	struct acl_kfields kf[ACL_BURST];
	uint16_t l4[ACL_BURST][ACL_LANES4];
	uint8_t act[2][ACL_BURST];
	uint32_t cur[ACL_BURST];
	unsigned n_act[2] = { 0, 0 };

	for (unsigned i = 0; i < n; i++) {
		uint8_t fam = keys[i].family;

		match[i] = RXP_ACL_NO_MATCH;
		if (fam != 4 && fam != 6)
			continue;
		acl_key_fields(&keys[i], &kf[i], l4[i]);
		act[fam == 6][n_act[fam == 6]++] = (uint8_t)i;
	}
	for (unsigned fam = 0; fam < 2; fam++) {
		unsigned m = n_act[fam];
		uint8_t *a = act[fam];

		for (unsigned t = 0; t < acl->n_trees[fam] && m; t++) {
			const struct acl_tree *tr = &acl->trees[fam][t];
			unsigned keep = 0;

			/* keys already matched before this tree's first rule are done */
			for (unsigned j = 0; j < m; j++) {
				a[keep] = a[j];
				keep += match[a[j]] > tr->min_rule;
			}
			m = keep;
			if (acl_slot_kind(tr->root) == ACL_SLOT_LINEAR) {
				linear_burst(acl, tr->root, fam, a, m, kf, keys, match);
				continue;
			}
			walk(acl, tr->root, a, m, kf, cur);
			for (unsigned j = 0; j < m; j++) {
				unsigned i = a[j];
				uint32_t r;

				if (!cur[j])
					continue;
				if (fam)
					r = scan6_scalar(acl, cur[j], kf[i].f, &keys[i]);
				else
					r = scan4_scalar(acl, cur[j], l4[i], &keys[i]);
				match[i] = min_u32(match[i], r);
			}
		}
	}
}

void rxp_acl_rows4_key(const struct rxp_acl_rows4 *rows, unsigned i, struct rxp_acl_key *k)
{
	memset(k, 0, sizeof(*k));
	put_be32(k->src, rows->src[i]);
	put_be32(k->dst, rows->dst[i]);
	k->sport = (uint16_t)rows->sport[i];
	k->dport = (uint16_t)rows->dport[i];
	k->family = 4;
	k->proto = (uint8_t)rows->proto[i];
	k->ct_state = rows->ct_state[i];
	k->in_if = rows->in_if[i];
	k->out_if = rows->out_if[i];
	k->src_sets = rows->src_sets[i];
	k->dst_sets = rows->dst_sets[i];
}

/* The scalar walk takes keys one by one: the rows are made keys first. */
static void classify4_scalar(const struct rxp_acl *acl, const struct rxp_acl_rows4 *rows, uint32_t *match,
			     unsigned n)
{
	struct rxp_acl_key keys[ACL_BURST];

	for (unsigned i = 0; i < n; i++)
		rxp_acl_rows4_key(rows, i, &keys[i]);
	classify_scalar(acl, keys, match, n);
}

static const struct acl_impl impl_scalar = {
	.name = "scalar",
	.scan4 = scan4_scalar,
	.scan6 = scan6_scalar,
	.classify = classify_scalar,
	.classify4 = classify4_scalar,
};

/* ---- choosing ---- */

const struct acl_impl *acl_impl_pick(void)
{
#ifdef ACL_HAVE_AVX512
	/* a test's choice comes before RXPATH_SIMD's */
	if (impl_forced == ACL_IMPL_AVX512 ||
	    (impl_forced == ACL_IMPL_AUTO && rxp_simd_max() >= RXP_SIMD_AVX512 && acl_cpu_avx512()))
		return &acl_impl_avx512;
#endif
	return &impl_scalar;
}

enum rxp_simd rxp_acl_simd_have(void)
{
#ifdef ACL_HAVE_AVX512
	if (acl_cpu_avx512())
		return RXP_SIMD_AVX512;
#endif
	return RXP_SIMD_SCALAR;
}

bool rxp_acl_force_impl(enum acl_impl_choice c)
{
	if (c == ACL_IMPL_AVX512) {
#ifdef ACL_HAVE_AVX512
		if (!acl_cpu_avx512())
			return false;
#else
		return false;
#endif
	}
	impl_forced = c;
	return true;
}

const char *rxp_acl_impl_name(const struct rxp_acl *acl)
{
	return acl->impl->name;
}

/* ---- the API ---- */

uint32_t rxp_acl_classify_one(const struct rxp_acl *acl, const struct rxp_acl_key *key)
{
	struct acl_kfields kf;
	uint16_t l4[ACL_LANES4];
	uint32_t best = RXP_ACL_NO_MATCH;
	unsigned fam;

	if (key->family != 4 && key->family != 6)
		return RXP_ACL_NO_MATCH;
	fam = key->family == 6;
	acl_key_fields(key, &kf, l4);
	for (unsigned t = 0; t < acl->n_trees[fam]; t++) {
		const struct acl_tree *tr = &acl->trees[fam][t];
		uint32_t s = tr->root, r;

		if (best <= tr->min_rule)
			break;	/* the trees are in the order of their first rule */
		while (acl_slot_kind(s) == ACL_SLOT_NODE)
			s = acl_step(acl, s, kf.f);
		if (!s)
			continue;
		if (acl_slot_kind(s) == ACL_SLOT_LINEAR)
			r = acl_linear_one(acl, s, kf.f, key);
		else if (fam)
			r = acl->impl->scan6(acl, s, kf.f, key);
		else
			r = acl->impl->scan4(acl, s, l4, key);
		best = min_u32(best, r);
	}
	return best;
}

void rxp_acl_classify(const struct rxp_acl *acl, const struct rxp_acl_key *keys, uint32_t *match,
		      unsigned n)
{
	for (unsigned i = 0; i < n; i += ACL_BURST)
		acl->impl->classify(acl, keys + i, match + i, RXP_MIN(n - i, ACL_BURST));
}

void rxp_acl_classify4(const struct rxp_acl *acl, const struct rxp_acl_rows4 *rows, uint32_t *match,
		       unsigned n)
{
	acl->impl->classify4(acl, rows, match, RXP_MIN(n, ACL_BURST));
}
