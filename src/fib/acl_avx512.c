/* SPDX-License-Identifier: MIT */
/*
 * The classifier's lookups with AVX-512 (F and BW), chosen at build when
 * the CPU has them (acl_impl_pick()); acl_scan.c has the scalar ones that
 * every other CPU runs, with the same results.
 *
 * Keys go in groups of 16, one per 32-bit lane: their fields are gathered
 * straight from the keys, and the first step of each tree (the root's cut,
 * where most of the walk is) is computed for all 16 at once and its slots
 * gathered. Only the few keys that go deeper walk on one at a time. Each
 * leaf reached is then scanned for one key: four masked loads and two
 * compares test eight rules.
 */
#include <stddef.h>
#include "fib/acl_priv.h"
#include "rxpath/common.h"

#ifdef ACL_HAVE_AVX512
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,avx512bw,bmi,bmi2")))
#define GROUP 16u

/* The key shuffles below read the key as it is laid out in memory. */
_Static_assert(sizeof(struct rxp_acl_key) == 64 && offsetof(struct rxp_acl_key, dst) == 16 &&
	       offsetof(struct rxp_acl_key, sport) == 32 &&
	       offsetof(struct rxp_acl_key, dport) == 34 &&
	       offsetof(struct rxp_acl_key, family) == 36 &&
	       offsetof(struct rxp_acl_key, proto) == 37, "struct rxp_acl_key layout");

#define Z 0x80			/* a shuffle index that writes 0 */

/* IPv4 lanes: the key's words src 0-1, dst 0-1, ports, family+protocol ... */
static const _Alignas(64) uint16_t lanes4_words[32] = {
	0, 1, 8, 9, 16, 17, 18, 18, 0, 1, 8, 9, 16, 17, 18, 18,
	0, 1, 8, 9, 16, 17, 18, 18, 0, 1, 8, 9, 16, 17, 18, 18,
};
/* ... then the address halves to host order and the protocol alone, in each 128-bit lane */
static const _Alignas(64) uint8_t lanes4_bytes[64] = {
	1, 0, 3, 2, 5, 4, 7, 6, 8, 9, 10, 11, 13, Z, Z, Z,
	1, 0, 3, 2, 5, 4, 7, 6, 8, 9, 10, 11, 13, Z, Z, Z,
	1, 0, 3, 2, 5, 4, 7, 6, 8, 9, 10, 11, 13, Z, Z, Z,
	1, 0, 3, 2, 5, 4, 7, 6, 8, 9, 10, 11, 13, Z, Z, Z,
};
/* IPv6 lanes (the fields as 32-bit words): addresses to host order, ports, protocol */
static const _Alignas(64) uint8_t lanes6_bytes[64] = {
	3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
	3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
	0, 1, Z, Z, 2, 3, Z, Z, 5, Z, Z, Z, Z, Z, Z, Z,
	Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z,
};
static const _Alignas(64) uint8_t bswap32_bytes[64] = {
	3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
	3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
	3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
	3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
};

/* Lanes of the first and the second four rules of an n-rule IPv4 leaf (8 lanes a rule). */
static const uint32_t leaf4_lo[9] = {
	0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
};
static const uint32_t leaf4_hi[9] = { 0, 0, 0, 0, 0, 0xff, 0xffff, 0xffffff, 0xffffffff };

static AVX512 inline __m512i key_lanes4(const struct rxp_acl_key *k)
{
	__m512i v = _mm512_loadu_si512(k);

	v = _mm512_permutexvar_epi16(_mm512_load_si512(lanes4_words), v);
	return _mm512_shuffle_epi8(v, _mm512_load_si512(lanes4_bytes));
}

static AVX512 inline __m512i key_lanes6(const struct rxp_acl_key *k)
{
	return _mm512_shuffle_epi8(_mm512_loadu_si512(k), _mm512_load_si512(lanes6_bytes));
}

/*
 * All eight rules in four loads: lanes of rules past n are masked off (the
 * masked loads touch no memory there), each lane compares (key - lo) <=
 * width, and a rule matches when its 8 lanes, one byte of the mask, all do.
 */
static AVX512 inline uint32_t leaf4(const struct rxp_acl *acl, uint32_t s, __m512i kv,
				    const struct rxp_acl_key *k)
{
	unsigned n = acl_leaf_n(s);
	const uint8_t *leaf = acl_leaf_at(acl, s), *wp = leaf + n * ACL_LANES4 * 2;
	__mmask32 k0 = leaf4_lo[n], k1 = leaf4_hi[n];
	__m512i lo0 = _mm512_maskz_loadu_epi16(k0, leaf), lo1 = _mm512_maskz_loadu_epi16(k1, leaf + 64);
	__m512i w0 = _mm512_maskz_loadu_epi16(k0, wp), w1 = _mm512_maskz_loadu_epi16(k1, wp + 64);
	uint64_t m0 = _mm512_mask_cmple_epu16_mask(k0, _mm512_sub_epi16(kv, lo0), w0);
	uint64_t m1 = _mm512_mask_cmple_epu16_mask(k1, _mm512_sub_epi16(kv, lo1), w1);
	uint64_t x = m0 | m1 << 32;
	const uint32_t *ids;
	uint32_t hits = 0;


	x &= x >> 4;
	x &= x >> 2;
	x &= x >> 1;
	x &= 0x0101010101010101ull;
	ids = acl_leaf4_ids(leaf, n);
	if (rxp_likely(!(s & ACL_SLOT_EXTRAS))) {
		/* no branch on the outcome: with no match, read id 7 (in the block) and drop it */
		uint32_t id = ids[__builtin_ctzll(x | 1ull << 63) >> 3];

		return id | (uint32_t)-(int32_t)(x == 0);	/* RXP_ACL_NO_MATCH is all ones */
	}
	for (; x; x &= x - 1)
		hits |= 1u << (__builtin_ctzll(x) >> 3);
	return acl_leaf_extras(acl, hits, ids, n, k);
}

static AVX512 inline uint32_t leaf6(const struct rxp_acl *acl, uint32_t s, __m512i kv,
				    const struct rxp_acl_key *k)
{
	unsigned n = acl_leaf_n(s);
	const uint8_t *leaf = acl_leaf_at(acl, s);
	uint32_t hits = 0;

	for (unsigned r = 0; r < n; r++) {
		__m512i lo = _mm512_loadu_si512(leaf + r * 64);
		__m512i w = _mm512_loadu_si512(leaf + (n + r) * 64);

		hits |= (uint32_t)(_mm512_cmple_epu32_mask(_mm512_sub_epi32(kv, lo), w) == 0xffff) << r;
	}
	if (!hits)
		return RXP_ACL_NO_MATCH;
	if (!(s & ACL_SLOT_EXTRAS))
		return acl_leaf6_ids(leaf, n)[__builtin_ctz(hits)];
	return acl_leaf_extras(acl, hits, acl_leaf6_ids(leaf, n), n, k);
}

/* A chain's leaves hold its rules in order: the first leaf that matches has the answer. */
static AVX512 rxp_noinline uint32_t chain(const struct rxp_acl *acl, uint32_t s, bool v6,
					  __m512i kv, const struct rxp_acl_key *k)
{
	const uint32_t *c = acl->slots + (s >> 2);

	for (uint32_t i = 0; i < c[0]; i++) {
		uint32_t r = v6 ? leaf6(acl, c[1 + i], kv, k) : leaf4(acl, c[1 + i], kv, k);

		if (r != RXP_ACL_NO_MATCH)
			return r;
	}
	return RXP_ACL_NO_MATCH;
}

static AVX512 inline uint32_t scan(const struct rxp_acl *acl, uint32_t s, bool v6,
				   const struct rxp_acl_key *k)
{
	__m512i kv = v6 ? key_lanes6(k) : key_lanes4(k);

	if (rxp_unlikely(acl_slot_kind(s) == ACL_SLOT_CHAIN))
		return chain(acl, s, v6, kv, k);
	return v6 ? leaf6(acl, s, kv, k) : leaf4(acl, s, kv, k);
}

static AVX512 uint32_t scan4_avx512(const struct rxp_acl *acl, uint32_t s, const uint16_t *lanes,
				    const struct rxp_acl_key *k)
{
	(void)lanes;
	return scan(acl, s, false, k);
}

static AVX512 uint32_t scan6_avx512(const struct rxp_acl *acl, uint32_t s, const uint32_t *lanes,
				    const struct rxp_acl_key *k)
{
	(void)lanes;
	return scan(acl, s, true, k);
}

/* ---- bursts ---- */

/* One key's walk below the root, one node at a time (few keys get here). */
static rxp_noinline uint32_t walk_on(const struct rxp_acl *acl, uint32_t s, const uint32_t *kf)
{
	while (acl_slot_kind(s) == ACL_SLOT_NODE)
		s = acl_step(acl, s, kf);
	return s;
}

/*
 * Lowers match[] of the keys @list[0..n) by the trees of family @v6. Tree
 * by tree: the keys still to look drop out without a branch, the root's cut
 * (its fields hoisted out of the loop) leads every key to a slot, the keys
 * at an empty leaf drop out, and the leaves reached are scanned.
 */
static AVX512 rxp_always_inline void burst_family(const struct rxp_acl *acl, bool v6, uint8_t *list, unsigned n,
				const struct rxp_acl_key *keys, const struct acl_kfields *kf,
				uint32_t *match)
{
	uint32_t cur[ACL_BURST];
	uint8_t at[ACL_BURST];

	for (unsigned t = 0; t < acl->n_trees[v6]; t++) {
		const struct acl_tree *tr = &acl->trees[v6][t];
		uint32_t root = tr->root;
		unsigned keep = 0, m = 0;

		for (unsigned j = 0; j < n; j++) {
			list[keep] = list[j];
			keep += match[list[j]] > tr->min_rule;
		}
		n = keep;
		if (!n)
			break;	/* the later trees start later still */
		if (acl_slot_kind(root) == ACL_SLOT_NODE) {
			const struct acl_node *nd = &acl->nodes[root >> 2];
			const uint32_t *slots = acl->slots + nd->base;
			unsigned f1 = nd->f1, s1 = nd->s1, f2 = nd->f2, s2 = nd->s2, sh = nd->sh;
			uint32_t m1 = nd->m1, m2 = nd->m2;
			bool deeper = false;

			for (unsigned j = 0; j < n; j++) {
				unsigned i = list[j];
				const uint32_t *f = kf[i].f;
				uint32_t s = slots[((f[f1] >> s1) & m1) << sh | ((f[f2] >> s2) & m2)];

				cur[m] = s;
				at[m] = (uint8_t)i;
				m += s != 0;
				deeper |= acl_slot_kind(s) == ACL_SLOT_NODE;
			}
			if (deeper) {
				for (unsigned q = 0; q < m; q++)
					if (acl_slot_kind(cur[q]) == ACL_SLOT_NODE)
						cur[q] = walk_on(acl, cur[q], kf[at[q]].f);
			}
		} else if (root) {
			for (unsigned j = 0; j < n; j++) {
				cur[j] = root;
				at[j] = list[j];
			}
			m = n;
		}
		for (unsigned q = 0; q < m; q++) {
			unsigned i = at[q];
			uint32_t r = scan(acl, cur[q], v6, &keys[i]);

			match[i] = match[i] < r ? match[i] : r;
		}
	}
}

/* Each family its own copy of the loops, the layout of its leaves fixed in it. */
static AVX512 rxp_noinline void burst4(const struct rxp_acl *acl, uint8_t *list, unsigned n,
				       const struct rxp_acl_key *keys, const struct acl_kfields *kf,
				       uint32_t *match)
{
	burst_family(acl, false, list, n, keys, kf, match);
}

static AVX512 rxp_noinline void burst6(const struct rxp_acl *acl, uint8_t *list, unsigned n,
				       const struct rxp_acl_key *keys, const struct acl_kfields *kf,
				       uint32_t *match)
{
	burst_family(acl, true, list, n, keys, kf, match);
}

static AVX512 void classify_avx512(const struct rxp_acl *acl, const struct rxp_acl_key *keys,
				   uint32_t *match, unsigned n)
{
	struct acl_kfields kf[ACL_BURST];
	uint8_t list[2][ACL_BURST];
	unsigned n4 = 0, n6 = 0;
	const __m512i shuf = _mm512_load_si512(lanes6_bytes);

	for (unsigned i = 0; i < n; i++) {
		uint8_t fam = keys[i].family;

		/* the fields as 32-bit words (IPv4: word 0 of each address) in one store */
		_mm512_store_si512(kf[i].f, _mm512_shuffle_epi8(_mm512_loadu_si512(&keys[i]), shuf));
		match[i] = RXP_ACL_NO_MATCH;
		list[0][n4] = (uint8_t)i;
		list[1][n6] = (uint8_t)i;
		n4 += fam == 4;
		n6 += fam == 6;
	}
	if (n4)
		burst4(acl, list[0], n4, keys, kf, match);
	if (n6)
		burst6(acl, list[1], n6, keys, kf, match);
}

const struct acl_impl acl_impl_avx512 = {
	.name = "avx512",
	.scan4 = scan4_avx512,
	.scan6 = scan6_avx512,
	.classify = classify_avx512,
};

bool acl_cpu_avx512(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("bmi2");
}
#endif
