/* SPDX-License-Identifier: MIT */
/*
 * The classifier's lookups with AVX-512 (F and BW) and BMI2, chosen at
 * build when the CPU has them (acl_impl_pick()); acl_scan.c has the scalar
 * ones, which every other CPU runs, with the same answers.
 *
 * A burst's keys are first transposed (or, rxp_acl_classify4, come as
 * rows): each field becomes rows of 16 keys, one per 32-bit lane (shuffles:
 * a gather per field would be slow on some CPUs; the roots' slots are
 * gathered, one load a key either way).
 * Then per tree: a linear list tests 16 keys against each rule at once; a
 * cut computes the root's child index of 16 keys at once and gathers their
 * slots, and the keys that reach something are packed (the few that land
 * on another node walk on alone); each then scans its leaf: four masked
 * loads and two compares test eight rules.
 */
#include <stddef.h>
#include <string.h>
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
/* 32-bit words to host order */
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
	__m512i lo0 = _mm512_maskz_loadu_epi16(k0, leaf), w0 = _mm512_maskz_loadu_epi16(k0, wp);
	uint64_t x = _mm512_mask_cmple_epu16_mask(k0, _mm512_sub_epi16(kv, lo0), w0);
	const uint32_t *ids;
	uint32_t hits = 0;

	/* most leaves hold four rules or fewer: the second four only when there are some */
	if (n > 4) {
		__m512i lo1 = _mm512_maskz_loadu_epi16(k1, leaf + 64), w1 = _mm512_maskz_loadu_epi16(k1, wp + 64);

		x |= (uint64_t)_mm512_mask_cmple_epu16_mask(k1, _mm512_sub_epi16(kv, lo1), w1) << 32;
	}

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

/* Rows of a burst's fields: the tree fields, then what linear lists test. */
enum {
	SOA_CT = ACL_FIELDS, SOA_IN, SOA_OUT, SOA_SSET_LO, SOA_SSET_HI, SOA_DSET_LO, SOA_DSET_HI,
	SOA_ROWS
};

/*
 * A burst's keys as the lookups use them: each field a row, a vector per 16
 * keys, in f[] or (rxp_acl_classify4) the caller's rows; row[] says where.
 */
struct burst {
	const uint32_t *row[SOA_ROWS];
	const struct rxp_acl_rows4 *rows;		/* the caller's rows, or NULL: keys */
	_Alignas(64) uint32_t f[SOA_ROWS][ACL_BURST];
	_Alignas(64) uint32_t best[ACL_BURST];		/* the answers so far */
	_Alignas(64) uint32_t lanes4[ACL_BURST][4];	/* IPv4 leaf lanes, at lane_entry() */
	uint64_t fam[2];				/* the keys of each family */
	unsigned n, groups;
};

/* The rows an IPv4 key does not have (address words 1-3), and those past the burst. */
static const _Alignas(64) uint32_t zero_row[ACL_BURST];

static inline uint32_t load_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return __builtin_bswap32(v);
}

/* A key's words 0 (source, IPv4), 4 (destination), 8 (ports), 9 (family, protocol, ...). */
static const _Alignas(64) uint32_t key_words[16] = { 0, 4, 8, 9 };

/* The 128-bit lane of @k's words 0, 4, 8, 9 (zero past the burst). */
static AVX512 inline __m128i key_quad(const struct rxp_acl_key *k, bool in, __m512i pick)
{
	if (!in)
		return _mm_setzero_si128();
	return _mm512_castsi512_si128(_mm512_permutexvar_epi32(pick, _mm512_loadu_si512(k)));
}

/*
 * The IPv4 fields of group @g's @n keys, in rows: each key's four words in
 * a 128-bit lane (keys r, r+4, r+8, r+12 in vector r), then a 4x4
 * transpose in every lane puts word w of keys 4j..4j+3 in lane j of vector
 * w, in the keys' order. No gathers: they are slow on some CPUs.
 */
static AVX512 void group_load(struct burst *b, const struct rxp_acl_key *keys, unsigned g,
			      unsigned n, uint64_t *fam4, uint64_t *fam6)
{
	const __m512i pick = _mm512_load_si512(key_words);
	const struct rxp_acl_key *k = keys + GROUP * g;
	unsigned o = GROUP * g;
	__m512i q[4], t0, t1, t2, t3, src, dst, pp, fp, fam;
	__mmask16 valid = (__mmask16)((1u << n) - 1);

	for (unsigned r = 0; r < 4; r++) {
		__m512i v = _mm512_castsi128_si512(key_quad(&k[r], r < n, pick));

		v = _mm512_inserti32x4(v, key_quad(&k[4 + r], 4 + r < n, pick), 1);
		v = _mm512_inserti32x4(v, key_quad(&k[8 + r], 8 + r < n, pick), 2);
		q[r] = _mm512_inserti32x4(v, key_quad(&k[12 + r], 12 + r < n, pick), 3);
	}
	t0 = _mm512_unpacklo_epi32(q[0], q[1]);
	t1 = _mm512_unpackhi_epi32(q[0], q[1]);
	t2 = _mm512_unpacklo_epi32(q[2], q[3]);
	t3 = _mm512_unpackhi_epi32(q[2], q[3]);
	src = _mm512_unpacklo_epi64(t0, t2);
	dst = _mm512_unpackhi_epi64(t0, t2);
	pp = _mm512_unpacklo_epi64(t1, t3);
	fp = _mm512_unpackhi_epi64(t1, t3);
	_mm512_store_si512(&b->f[ACL_F_SRC0][o], _mm512_shuffle_epi8(src, _mm512_load_si512(bswap32_bytes)));
	_mm512_store_si512(&b->f[ACL_F_DST0][o], _mm512_shuffle_epi8(dst, _mm512_load_si512(bswap32_bytes)));
	_mm512_store_si512(&b->f[ACL_F_SPORT][o], _mm512_and_si512(pp, _mm512_set1_epi32(0xffff)));
	_mm512_store_si512(&b->f[ACL_F_DPORT][o], _mm512_srli_epi32(pp, 16));
	_mm512_store_si512(&b->f[ACL_F_PROTO][o],
			   _mm512_and_si512(_mm512_srli_epi32(fp, 8), _mm512_set1_epi32(0xff)));
	_mm512_store_si512(&b->best[o], _mm512_set1_epi32(-1));
	fam = _mm512_and_si512(fp, _mm512_set1_epi32(0xff));
	*fam4 |= (uint64_t)_mm512_mask_cmpeq_epi32_mask(valid, fam, _mm512_set1_epi32(4)) << o;
	*fam6 |= (uint64_t)_mm512_mask_cmpeq_epi32_mask(valid, fam, _mm512_set1_epi32(6)) << o;
}

static AVX512 void burst_load(struct burst *b, const struct rxp_acl *acl,
			      const struct rxp_acl_key *keys, unsigned n)
{
	bool v6 = acl->n_trees[1], extras = acl->linear_extras;
	uint64_t fam4 = 0, fam6 = 0;

	_Static_assert(RXP_ACL_NO_MATCH == UINT32_MAX, "answers start at all ones");
	for (unsigned f = 0; f < SOA_ROWS; f++)
		b->row[f] = b->f[f];
	b->rows = NULL;
	b->n = n;
	b->groups = (n + GROUP - 1) / GROUP;
	for (unsigned g = 0; g < b->groups; g++)
		group_load(b, keys, g, RXP_MIN(n - GROUP * g, GROUP), &fam4, &fam6);
	b->fam[0] = fam4;
	b->fam[1] = fam6;
	if (!(v6 | extras))
		return;
	/* the rest, key by key: IPv6 words, what linear lists test */
	for (unsigned i = 0; i < n; i++) {
		const struct rxp_acl_key *k = &keys[i];

		if (v6) {
			for (unsigned w = 1; w < 4; w++) {
				b->f[ACL_F_SRC0 + w][i] = load_be32(k->src + 4 * w);
				b->f[ACL_F_DST0 + w][i] = load_be32(k->dst + 4 * w);
			}
		}
		if (extras) {
			b->f[SOA_CT][i] = k->ct_state;
			b->f[SOA_IN][i] = k->in_if;
			b->f[SOA_OUT][i] = k->out_if;
			b->f[SOA_SSET_LO][i] = (uint32_t)k->src_sets;
			b->f[SOA_SSET_HI][i] = (uint32_t)(k->src_sets >> 32);
			b->f[SOA_DSET_LO][i] = (uint32_t)k->dst_sets;
			b->f[SOA_DSET_HI][i] = (uint32_t)(k->dst_sets >> 32);
		}
	}
	/* lanes past n: defined fields (no key there is ever looked at) */
	for (unsigned i = n; i < b->groups * GROUP; i++)
		for (unsigned f = ACL_F_SRC0 + 1; f < SOA_ROWS; f++)
			b->f[f][i] = 0;
}

/* The burst of @n IPv4 keys given as @rows: their rows are read in place. */
static AVX512 void burst_load4(struct burst *b, const struct rxp_acl *acl, const struct rxp_acl_rows4 *rows,
			       unsigned n)
{
	for (unsigned f = 0; f < SOA_ROWS; f++)
		b->row[f] = f < ACL_FIELDS ? zero_row : b->f[f];
	b->row[ACL_F_SRC0] = rows->src;
	b->row[ACL_F_DST0] = rows->dst;
	b->row[ACL_F_SPORT] = rows->sport;
	b->row[ACL_F_DPORT] = rows->dport;
	b->row[ACL_F_PROTO] = rows->proto;
	b->rows = rows;
	b->n = n;
	b->groups = (n + GROUP - 1) / GROUP;
	b->fam[0] = n >= 64 ? ~0ull : (1ull << n) - 1;
	b->fam[1] = 0;
	for (unsigned g = 0; g < b->groups; g++)
		_mm512_store_si512(&b->best[GROUP * g], _mm512_set1_epi32(-1));
	if (!acl->linear_extras)
		return;
	for (unsigned i = 0; i < b->groups * GROUP; i++) {
		bool in = i < n;

		b->f[SOA_CT][i] = in ? rows->ct_state[i] : 0;
		b->f[SOA_IN][i] = in ? rows->in_if[i] : 0;
		b->f[SOA_OUT][i] = in ? rows->out_if[i] : 0;
		b->f[SOA_SSET_LO][i] = in ? (uint32_t)rows->src_sets[i] : 0;
		b->f[SOA_SSET_HI][i] = in ? (uint32_t)(rows->src_sets[i] >> 32) : 0;
		b->f[SOA_DSET_LO][i] = in ? (uint32_t)rows->dst_sets[i] : 0;
		b->f[SOA_DSET_HI][i] = in ? (uint32_t)(rows->dst_sets[i] >> 32) : 0;
	}
}

/* Where key @i's IPv4 leaf lanes are in b->lanes4 (group_lanes4() leaves them out of order). */
static inline unsigned lane_entry(unsigned i)
{
	return (i & ~15u) + (i & 3) * 4 + (i >> 2 & 3);
}

/*
 * The IPv4 leaf lanes (key_lanes4()'s, as 32-bit words: the addresses'
 * halves swapped, dport:sport, the protocol) of group @g's keys, from the
 * rows: a 4x4 transpose in every 128-bit lane, keys j, j+4, j+8, j+12 in
 * vector j.
 */
static AVX512 inline void group_lanes4(struct burst *b, unsigned g)
{
	unsigned o = GROUP * g;
	__m512i src = _mm512_rol_epi32(_mm512_load_si512(&b->row[ACL_F_SRC0][o]), 16);
	__m512i dst = _mm512_rol_epi32(_mm512_load_si512(&b->row[ACL_F_DST0][o]), 16);
	__m512i ports = _mm512_or_si512(_mm512_slli_epi32(_mm512_load_si512(&b->row[ACL_F_DPORT][o]), 16),
					_mm512_load_si512(&b->row[ACL_F_SPORT][o]));
	__m512i proto = _mm512_load_si512(&b->row[ACL_F_PROTO][o]);
	__m512i t0 = _mm512_unpacklo_epi32(src, dst), t1 = _mm512_unpackhi_epi32(src, dst);
	__m512i t2 = _mm512_unpacklo_epi32(ports, proto), t3 = _mm512_unpackhi_epi32(ports, proto);

	_mm512_store_si512(b->lanes4[o], _mm512_unpacklo_epi64(t0, t2));
	_mm512_store_si512(b->lanes4[o + 4], _mm512_unpackhi_epi64(t0, t2));
	_mm512_store_si512(b->lanes4[o + 8], _mm512_unpacklo_epi64(t1, t3));
	_mm512_store_si512(b->lanes4[o + 12], _mm512_unpackhi_epi64(t1, t3));
}

static inline __mmask16 group_bits(uint64_t m, unsigned g)
{
	return (__mmask16)(m >> (GROUP * g));
}

/* Bit @ifindex of the 64-bit mask hi:lo, for 16 keys (none from 64 on). */
static AVX512 inline __mmask16 ifs_test(__mmask16 live, __m512i ifindex, uint32_t lo, uint32_t hi)
{
	__m512i t = _mm512_or_si512(_mm512_srlv_epi32(_mm512_set1_epi32((int)lo), ifindex),
				    _mm512_srlv_epi32(_mm512_set1_epi32((int)hi),
						      _mm512_sub_epi32(ifindex, _mm512_set1_epi32(32))));

	return _mm512_mask_test_epi32_mask(live, t, _mm512_set1_epi32(1));
}

/* Runs linear list @prog over the keys @act of group @g. Returns their answers, lowered. */
static AVX512 __m512i linear_group(const uint32_t *prog, const struct burst *b, unsigned g,
				   __mmask16 act, __m512i best)
{
	const uint32_t *p = prog + 1;
	unsigned o = GROUP * g;

	for (uint32_t r = 0; r < prog[0]; r++) {
		uint32_t id = p[0], nc = p[1] & 0xffff, n_range = p[1] >> 16;
		const uint32_t *c = p + 2;
		__mmask16 live = _mm512_mask_cmpgt_epu32_mask(act, best, _mm512_set1_epi32((int)id));

		if (!live)
			break;	/* the rules after come later still */
		for (uint32_t j = 0; j < n_range; j++, c += 3)
			live = _mm512_mask_cmple_epu32_mask(live,
				_mm512_sub_epi32(_mm512_load_si512(&b->row[c[0] & 0xff][o]),
						 _mm512_set1_epi32((int)c[1])),
				_mm512_set1_epi32((int)c[2]));
		/* then the bit-mask tests (the ranges come first) */
		for (uint32_t j = n_range; j < nc; j++, c += 3) {
			unsigned kind = c[0] >> 8, row;

			switch (kind) {
			case ACL_CHECK_CT:
				live = _mm512_mask_test_epi32_mask(live, _mm512_load_si512(&b->row[SOA_CT][o]),
								   _mm512_set1_epi32((int)c[1]));
				break;
			case ACL_CHECK_IN_IF:
			case ACL_CHECK_OUT_IF:
				row = kind == ACL_CHECK_IN_IF ? SOA_IN : SOA_OUT;
				live = ifs_test(live, _mm512_load_si512(&b->row[row][o]), c[1], c[2]);
				break;
			default:
				row = (kind == ACL_CHECK_SRC_SET ? SOA_SSET_LO : SOA_DSET_LO) + (c[1] >= 32);
				live = _mm512_mask_test_epi32_mask(live, _mm512_load_si512(&b->row[row][o]),
								   _mm512_set1_epi32((int)(1u << (c[1] & 31))));
				break;
			}
		}
		best = _mm512_mask_mov_epi32(best, live, _mm512_set1_epi32((int)id));
		p = c;
	}
	return best;
}

/* The keys of @fam_mask that can still do better than @min_rule. */
static AVX512 inline uint64_t tree_keys(const struct burst *b, uint64_t fam_mask, uint32_t min_rule)
{
	uint64_t act = 0;

	for (unsigned g = 0; g < b->groups; g++)
		act |= (uint64_t)_mm512_mask_cmpgt_epu32_mask(group_bits(fam_mask, g),
			_mm512_load_si512(&b->best[GROUP * g]), _mm512_set1_epi32((int)min_rule))
		       << (GROUP * g);
	return act;
}

/* Key @i's walk on below the root (few keys get here). */
static rxp_noinline uint32_t walk_on(const struct rxp_acl *acl, uint32_t s, const struct burst *b,
				     unsigned i)
{
	while (acl_slot_kind(s) == ACL_SLOT_NODE) {
		const struct acl_node *nd = &acl->nodes[s >> 2];
		uint32_t i1 = (b->row[nd->f1][i] >> nd->s1) & nd->m1;
		uint32_t i2 = (b->row[nd->f2][i] >> nd->s2) & nd->m2;

		s = acl_child(acl, nd, i1 << nd->sh | i2);
	}
	return s;
}

static const _Alignas(64) uint32_t lane_ids[GROUP] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

/* Bits set in each 32-bit lane (AVX-512F alone: VPOPCNTD is not on every AVX-512 CPU). */
static AVX512 inline __m512i popcount32(__m512i x)
{
	const __m512i m1 = _mm512_set1_epi32(0x55555555), m2 = _mm512_set1_epi32(0x33333333);
	const __m512i m4 = _mm512_set1_epi32(0x0f0f0f0f);

	x = _mm512_sub_epi32(x, _mm512_and_si512(_mm512_srli_epi32(x, 1), m1));
	x = _mm512_add_epi32(_mm512_and_si512(x, m2), _mm512_and_si512(_mm512_srli_epi32(x, 2), m2));
	x = _mm512_and_si512(_mm512_add_epi32(x, _mm512_srli_epi32(x, 4)), m4);
	return _mm512_srli_epi32(_mm512_mullo_epi32(x, _mm512_set1_epi32(0x01010101)), 24);
}

/*
 * The children of root node @nd that group @g's keys @a lead to (0 for the
 * others), as acl_child() finds them, 16 at once: the child index from the
 * two cut fields, then the slot gathered (a sparse node: its bitmap word and
 * rank first, the bits below counted).
 */
static AVX512 inline __m512i root_children(const struct rxp_acl *acl, const struct acl_node *nd,
					   const struct burst *b, unsigned g, __mmask16 a)
{
	const uint32_t *slots = acl->slots + nd->base;
	unsigned o = GROUP * g;
	__m512i i1 = _mm512_and_si512(_mm512_srlv_epi32(_mm512_load_si512(&b->row[nd->f1][o]),
							  _mm512_set1_epi32(nd->s1)), _mm512_set1_epi32(nd->m1));
	__m512i i2 = _mm512_and_si512(_mm512_srlv_epi32(_mm512_load_si512(&b->row[nd->f2][o]),
							  _mm512_set1_epi32(nd->s2)), _mm512_set1_epi32(nd->m2));
	__m512i idx = _mm512_or_si512(_mm512_sllv_epi32(i1, _mm512_set1_epi32(nd->sh)), i2);
	__m512i word, bits, rank, bit, below;
	__mmask16 present;

	if (!nd->sparse)
		return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), a, idx, slots, 4);
	word = _mm512_slli_epi32(_mm512_srli_epi32(idx, 5), 1);
	bits = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), a, word, slots, 4);
	rank = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), a,
					   _mm512_add_epi32(word, _mm512_set1_epi32(1)), slots, 4);
	bit = _mm512_and_si512(idx, _mm512_set1_epi32(31));
	below = _mm512_and_si512(bits, _mm512_sub_epi32(_mm512_sllv_epi32(_mm512_set1_epi32(1), bit),
							 _mm512_set1_epi32(1)));
	present = _mm512_mask_test_epi32_mask(a, _mm512_srlv_epi32(bits, bit), _mm512_set1_epi32(1));
	rank = _mm512_add_epi32(_mm512_add_epi32(rank, popcount32(below)),
				_mm512_set1_epi32((int)(1u << nd->cell_bits >> 4)));
	return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), present, rank, slots, 4);
}

/*
 * Lowers the answers of family @v6's keys of @b by its trees. Per tree: the
 * keys still looking; for a linear list, 16 keys tested against each rule
 * at once; for a cut, the root's children of 16 keys at once (keys at an
 * empty leaf drop out without a branch), a walk on for the few below
 * another node, and the leaf scans.
 */
static AVX512 rxp_always_inline void burst_family(const struct rxp_acl *acl, bool v6,
						  struct burst *b, const struct rxp_acl_key *keys)
{
	/* room past the last key: each group stores a whole vector */
	_Alignas(64) uint32_t cur[ACL_BURST + GROUP], at[ACL_BURST + GROUP];

	for (unsigned t = 0; t < acl->n_trees[v6]; t++) {
		const struct acl_tree *tr = &acl->trees[v6][t];
		uint64_t act = tree_keys(b, b->fam[v6], tr->min_rule);
		uint32_t root = tr->root;
		unsigned m = 0;

		if (!act)
			break;	/* the later trees start later still */
		if (acl_slot_kind(root) == ACL_SLOT_LINEAR) {
			const uint32_t *prog = acl->slots + (root >> 2);

			for (unsigned g = 0; g < b->groups; g++) {
				__mmask16 a = group_bits(act, g);

				if (a)
					_mm512_store_si512(&b->best[GROUP * g],
						linear_group(prog, b, g, a,
							     _mm512_load_si512(&b->best[GROUP * g])));
			}
			continue;
		}
		if (acl_slot_kind(root) == ACL_SLOT_NODE) {
			__mmask16 deeper = 0;

			for (unsigned g = 0; g < b->groups; g++) {
				__mmask16 a = group_bits(act, g), live;
				__m512i slot = root_children(acl, &acl->nodes[root >> 2], b, g, a);

				/* the keys at a leaf or a chain (or below), packed in order; no branch on each */
				live = _mm512_mask_test_epi32_mask(a, slot, slot);
				_mm512_storeu_si512(&cur[m], _mm512_maskz_compress_epi32(live, slot));
				_mm512_storeu_si512(&at[m], _mm512_maskz_compress_epi32(live,
					_mm512_add_epi32(_mm512_load_si512(lane_ids), _mm512_set1_epi32((int)(GROUP * g)))));
				deeper |= _mm512_mask_cmpeq_epi32_mask(live, _mm512_and_si512(slot, _mm512_set1_epi32(3)),
								       _mm512_set1_epi32(ACL_SLOT_NODE));
				m += (unsigned)__builtin_popcount(live);
			}
			if (deeper) {
				for (unsigned q = 0; q < m; q++)
					if (acl_slot_kind(cur[q]) == ACL_SLOT_NODE)
						cur[q] = walk_on(acl, cur[q], b, at[q]);
			}
		} else {
			for (unsigned i = 0; i < b->n; i++) {
				cur[m] = root;
				at[m] = i;
				m += (unsigned)(act >> i) & 1;
			}
		}
		for (unsigned q = 0; q < m; q++) {
			unsigned i = at[q];
			uint32_t r, s = cur[q];
			const struct rxp_acl_key *k = keys ? &keys[i] : NULL;
			struct rxp_acl_key made;
			__m512i kv;

			kv = v6 ? key_lanes6(k) :
			     _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)b->lanes4[lane_entry(i)]));
			/* keys given as rows: a rule's bit-mask tests (few leaves have any) need the whole key */
			if (!k && rxp_unlikely(acl_slot_kind(s) == ACL_SLOT_CHAIN || (s & ACL_SLOT_EXTRAS))) {
				rxp_acl_rows4_key(b->rows, i, &made);
				k = &made;
			}
			if (rxp_unlikely(acl_slot_kind(s) == ACL_SLOT_CHAIN))
				r = chain(acl, s, v6, kv, k);
			else if (v6)
				r = leaf6(acl, s, kv, k);
			else
				r = leaf4(acl, s, kv, k);
			b->best[i] = b->best[i] < r ? b->best[i] : r;
		}
	}
}

/* Each family its own copy of the loops, the layout of its leaves fixed in it. */
static AVX512 rxp_noinline void burst4(const struct rxp_acl *acl, struct burst *b,
				       const struct rxp_acl_key *keys)
{
	for (unsigned g = 0; g < b->groups; g++)
		group_lanes4(b, g);
	burst_family(acl, false, b, keys);
}

static AVX512 rxp_noinline void burst6(const struct rxp_acl *acl, struct burst *b,
				       const struct rxp_acl_key *keys)
{
	burst_family(acl, true, b, keys);
}

static AVX512 void classify_avx512(const struct rxp_acl *acl, const struct rxp_acl_key *keys,
				   uint32_t *match, unsigned n)
{
	struct burst b;

	burst_load(&b, acl, keys, n);
	if (b.fam[0] && acl->n_trees[0])
		burst4(acl, &b, keys);
	if (b.fam[1] && acl->n_trees[1])
		burst6(acl, &b, keys);
	memcpy(match, b.best, n * sizeof(*match));
}

static AVX512 void classify4_avx512(const struct rxp_acl *acl, const struct rxp_acl_rows4 *rows,
				    uint32_t *match, unsigned n)
{
	struct burst b;

	burst_load4(&b, acl, rows, n);
	if (n && acl->n_trees[0])
		burst4(acl, &b, NULL);
	memcpy(match, b.best, n * sizeof(*match));
}

const struct acl_impl acl_impl_avx512 = {
	.name = "avx512",
	.scan4 = scan4_avx512,
	.scan6 = scan6_avx512,
	.classify = classify_avx512,
	.classify4 = classify4_avx512,
};

bool acl_cpu_avx512(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("bmi2");
}
#endif
