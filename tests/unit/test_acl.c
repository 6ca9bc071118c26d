/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the packet classifier (src/fib/acl.h): fixed cases (void
 * rules, errors, an empty list, rules that are all void, duplicates, a first
 * rule that matches everything, chains of rules no cut separates, rules on
 * ports only with edges on the cuts' boundaries, nested rules, a memory cap
 * that forces the cheaper builds), then random rule sets of 0 to 10,000
 * rules, IPv4, IPv6 and mixed, every field exercised, checked against a slow
 * reference (the rule list scanned for the first match, written apart from
 * the library's own matcher) with keys drawn uniformly and from inside the
 * rules and at their edges. Every check runs with the scalar lookups, the
 * AVX-512 ones where the CPU has them, and once more with sparse nodes from
 * 64 children, and compares rxp_acl_classify (bursts of odd sizes) with
 * rxp_acl_classify_one. ACL_TEST_VERBOSE=1 prints each block's shape.
 */
#include <stdlib.h>
#include <string.h>
#include "fib/acl.h"
#include "fib/acl_priv.h"
#include "rxpath/common.h"
#include "check.h"

#define SEED 0xac1c1a55u
#define ERR_LEN 256

static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
	rng_state = seed;
}

static uint64_t rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(((rnd64() >> 32) * n) >> 32);
}

static bool chance(unsigned percent)
{
	return rnd_below(100) < percent;
}

/* ---- the reference ---- */

static bool ref_bit(const uint8_t *a, unsigned i)
{
	return a[i / 8] >> (7 - i % 8) & 1;
}

static bool ref_prefix(const uint8_t *key, const uint8_t *pfx, unsigned len)
{
	for (unsigned i = 0; i < len; i++)
		if (ref_bit(key, i) != ref_bit(pfx, i))
			return false;
	return true;
}

static bool ref_mask(uint64_t mask, uint8_t bit)
{
	if (mask == UINT64_MAX)
		return true;
	return bit < 64 && (mask >> bit & 1);
}

static bool ref_void(const struct rxp_acl_rule *r)
{
	unsigned max = r->family == 4 ? 32 : r->family == 6 ? 128 : 0;

	return r->sport_lo > r->sport_hi || r->dport_lo > r->dport_hi || !r->ct_states ||
	       !r->in_ifs || !r->out_ifs || r->src_len > max || r->dst_len > max;
}

static bool ref_matches(const struct rxp_acl_rule *r, const struct rxp_acl_key *k)
{
	if (ref_void(r) || (k->family != 4 && k->family != 6))
		return false;
	if (r->family && r->family != k->family)
		return false;
	if (!ref_prefix(k->src, r->src, r->src_len) || !ref_prefix(k->dst, r->dst, r->dst_len))
		return false;
	if (r->proto != RXP_ACL_ANY_PROTO && r->proto != k->proto)
		return false;
	if (k->sport < r->sport_lo || k->sport > r->sport_hi)
		return false;
	if (k->dport < r->dport_lo || k->dport > r->dport_hi)
		return false;
	if (!ref_mask(r->in_ifs, k->in_if) || !ref_mask(r->out_ifs, k->out_if))
		return false;
	if (r->ct_states != RXP_ACL_CT_ANY && !(r->ct_states & k->ct_state))
		return false;
	if (r->src_set != RXP_ACL_NO_SET && !(k->src_sets >> r->src_set & 1))
		return false;
	if (r->dst_set != RXP_ACL_NO_SET && !(k->dst_sets >> r->dst_set & 1))
		return false;
	return true;
}

static uint32_t ref_classify(const struct rxp_acl_rule *rules, uint32_t n,
			     const struct rxp_acl_key *k)
{
	for (uint32_t i = 0; i < n; i++)
		if (ref_matches(&rules[i], k))
			return i;
	return RXP_ACL_NO_MATCH;
}

/* ---- rules and keys ---- */

static struct rxp_acl_rule rule_any(void)
{
	struct rxp_acl_rule r;

	memset(&r, 0, sizeof(r));
	r.src_set = r.dst_set = RXP_ACL_NO_SET;
	r.proto = RXP_ACL_ANY_PROTO;
	r.sport_hi = r.dport_hi = 65535;
	r.in_ifs = r.out_ifs = UINT64_MAX;
	r.ct_states = RXP_ACL_CT_ANY;
	return r;
}

static void mask_prefix(uint8_t *a, unsigned len, unsigned bytes)
{
	for (unsigned i = 0; i < bytes * 8; i++)
		if (i >= len)
			a[i / 8] &= (uint8_t)~(0x80u >> (i % 8));
}

/* Addresses come from a few bases so that rules nest and overlap. */
static uint8_t bases[8][16];

static void bases_init(void)
{
	for (unsigned i = 0; i < 8; i++)
		for (unsigned j = 0; j < 16; j++)
			bases[i][j] = (uint8_t)rnd64();
}

static void random_addr(uint8_t *a, unsigned bytes)
{
	const uint8_t *b = bases[rnd_below(8)];
	unsigned keep = chance(70) ? rnd_below(bytes * 8) : 0;

	for (unsigned j = 0; j < 16; j++)
		a[j] = j < bytes ? (uint8_t)rnd64() : 0;
	for (unsigned i = 0; i < keep; i++) {
		uint8_t m = (uint8_t)(0x80u >> (i % 8));

		a[i / 8] = (uint8_t)((a[i / 8] & ~m) | (b[i / 8] & m));
	}
}

/* Percent of rules wide on everything else (short prefixes, any protocol, any ports). */
static unsigned wide_pct = 100;

static unsigned random_len(unsigned max)
{
	static const uint8_t common4[] = { 0, 8, 16, 24, 32, 32, 24, 16 };
	static const uint8_t common6[] = { 0, 16, 32, 48, 64, 128, 56, 96 };
	unsigned len;

	do {
		if (chance(50))
			len = max == 32 ? common4[rnd_below(8)] : common6[rnd_below(8)];
		else
			len = rnd_below(max + 1);
	} while (len < 8 && !chance(wide_pct));
	return len;
}

static void random_ports(uint16_t *lo, uint16_t *hi)
{
	static const uint16_t common[] = { 0, 22, 53, 80, 443, 1023, 1024, 65535 };
	unsigned k = rnd_below(10);

	if (k < 4) {
		*lo = 0, *hi = 65535;
	} else if (k < 7) {
		*lo = *hi = chance(60) ? common[rnd_below(8)] : (uint16_t)rnd64();
	} else {
		uint16_t a = chance(30) ? common[rnd_below(8)] : (uint16_t)rnd64();
		uint32_t b = a + (chance(50) ? rnd_below(300) : rnd_below(65536));

		*lo = a;
		*hi = (uint16_t)(b > 65535 ? 65535 : b);
	}
}

struct gen {
	unsigned fam_mask;	/* bit 0: IPv4 rules and keys, bit 1: IPv6 */
	unsigned extras_pct;	/* rules with interface, state or set tests */
	unsigned void_pct;
	unsigned fam0_pct;	/* rules with no address (family 0) */
};

static uint8_t pick_family(const struct gen *g)
{
	if (g->fam_mask == 3)
		return chance(50) ? 4 : 6;
	return g->fam_mask == 1 ? 4 : 6;
}

static uint16_t random_proto(void)
{
	static const uint16_t protos[] = { RXP_ACL_ANY_PROTO, RXP_ACL_ANY_PROTO, 6, 6, 17, 17, 1, 58, 0, 255 };
	unsigned k = rnd_below(11);

	return k < 10 ? protos[k] : (uint16_t)rnd_below(256);
}

/* Interface indexes and set ids: a few, low and high in the 64-bit masks. */
static uint8_t random_index(void)
{
	static const uint8_t idx[] = { 0, 1, 2, 3, 31, 32, 33, 63 };

	return idx[rnd_below(8)];
}

static uint64_t random_index_mask(void)
{
	uint64_t m = 0;

	for (unsigned i = 1 + rnd_below(3); i; i--)
		m |= 1ull << random_index();
	return m;
}

static struct rxp_acl_rule random_rule(const struct gen *g)
{
	struct rxp_acl_rule r = rule_any();

	r.family = chance(g->fam0_pct) ? 0 : pick_family(g);
	if (r.family) {
		unsigned max = r.family == 4 ? 32 : 128, bytes = max / 8;

		r.src_len = (uint8_t)random_len(max);
		r.dst_len = (uint8_t)random_len(max);
		random_addr(r.src, bytes);
		random_addr(r.dst, bytes);
		mask_prefix(r.src, r.src_len, 16);
		mask_prefix(r.dst, r.dst_len, 16);
	}
	r.proto = random_proto();
	if (chance(60))
		random_ports(&r.sport_lo, &r.sport_hi);
	if (chance(70))
		random_ports(&r.dport_lo, &r.dport_hi);
	if (!r.family && wide_pct < 100) {
		/* no address: some other field narrow, or the rule shadows most of the set */
		r.proto = (uint16_t)rnd_below(256);
		r.dport_lo = r.dport_hi = (uint16_t)rnd64();
	}
	if (r.proto == 1 || r.proto == 58) {
		/* icmp-type T [code C]: sport is the type, dport the code */
		r.sport_lo = r.sport_hi = (uint16_t)rnd_below(20);
		if (chance(50))
			r.dport_lo = r.dport_hi = (uint16_t)rnd_below(4);
		else
			r.dport_lo = 0, r.dport_hi = 65535;
	}
	if (chance(g->extras_pct)) {
		switch (rnd_below(5)) {
		case 0: r.in_ifs = random_index_mask(); break;
		case 1: r.out_ifs = random_index_mask(); break;
		case 2: r.ct_states = (uint8_t)(rnd_below(31) + 1); break;
		case 3: r.src_set = random_index(); break;
		default: r.dst_set = random_index(); break;
		}
	}
	if (chance(g->void_pct)) {
		switch (rnd_below(5)) {
		case 0: r.sport_lo = 10, r.sport_hi = 9; break;
		case 1: r.ct_states = 0; break;
		case 2: r.in_ifs = 0; break;
		case 3: r.family = 4; r.src_len = 33; break;
		default: r.family = 0; r.dst_len = 8; break;
		}
	}
	return r;
}

static void key_extras(struct rxp_acl_key *k)
{
	static const uint8_t states[] = {
		RXP_ACL_CT_NEW, RXP_ACL_CT_ESTABLISHED, RXP_ACL_CT_RELATED, RXP_ACL_CT_INVALID,
		RXP_ACL_CT_UNTRACKED, 0,
	};

	k->in_if = (uint8_t)(chance(2) ? 64 + rnd_below(100) : random_index());
	k->out_if = random_index();
	k->ct_state = states[rnd_below(6)];
	k->src_sets = random_index_mask() & rnd64();
	k->dst_sets = random_index_mask() & rnd64();
}

static struct rxp_acl_key uniform_key(const struct gen *g)
{
	struct rxp_acl_key k;
	unsigned bytes;

	memset(&k, 0, sizeof(k));
	k.family = pick_family(g);
	bytes = k.family == 4 ? 4 : 16;
	random_addr(k.src, bytes);
	random_addr(k.dst, bytes);
	k.proto = (uint8_t)(chance(80) ? random_proto() & 0xff : rnd_below(256));
	k.sport = (uint16_t)(chance(20) ? rnd_below(20) : rnd64());
	k.dport = (uint16_t)(chance(30) ? (uint16_t[]){ 22, 53, 80, 443, 0, 65535 }[rnd_below(6)] :
			     (uint16_t)rnd64());
	key_extras(&k);
	return k;
}

/* A value in, or just at or past an end of, [lo, hi]. */
static uint16_t edge16(uint16_t lo, uint16_t hi)
{
	switch (rnd_below(6)) {
	case 0: return lo;
	case 1: return hi;
	case 2: return (uint16_t)(lo - 1);
	case 3: return (uint16_t)(hi + 1);
	default: return (uint16_t)(lo + rnd_below((uint32_t)(hi - lo) + 1));
	}
}

/* An address in @p/@len, often at the block's edges, sometimes just outside. */
static void edge_addr(uint8_t *a, const uint8_t *p, unsigned len, unsigned bytes)
{
	unsigned k = rnd_below(8);

	for (unsigned i = 0; i < 16; i++)
		a[i] = i < bytes ? (uint8_t)rnd64() : 0;
	for (unsigned i = 0; i < bytes * 8; i++) {
		uint8_t m = (uint8_t)(0x80u >> (i % 8));
		bool bit;

		if (i < len)
			bit = ref_bit(p, i);
		else if (k == 0)
			bit = false;	/* the block's first address */
		else if (k == 1)
			bit = true;	/* its last */
		else
			bit = a[i / 8] & m;
		if (k == 2 && len && i == len - 1)
			bit = !bit;	/* the neighbour block */
		a[i / 8] = (uint8_t)((a[i / 8] & ~m) | (bit ? m : 0));
	}
}

static struct rxp_acl_key key_near(const struct rxp_acl_rule *r, const struct gen *g)
{
	struct rxp_acl_key k = uniform_key(g);
	unsigned bytes;

	if (r->family)
		k.family = r->family;
	bytes = k.family == 4 ? 4 : 16;
	if (r->family && r->src_len <= bytes * 8)
		edge_addr(k.src, r->src, r->src_len, bytes);
	if (r->family && r->dst_len <= bytes * 8)
		edge_addr(k.dst, r->dst, r->dst_len, bytes);
	if (r->proto != RXP_ACL_ANY_PROTO && chance(90))
		k.proto = (uint8_t)r->proto;
	if (chance(90))
		k.sport = edge16(r->sport_lo, r->sport_hi);
	if (chance(90))
		k.dport = edge16(r->dport_lo, r->dport_hi);
	if (r->in_ifs != UINT64_MAX && r->in_ifs && chance(80))
		k.in_if = (uint8_t)__builtin_ctzll(r->in_ifs);
	if (r->out_ifs != UINT64_MAX && r->out_ifs && chance(80))
		k.out_if = (uint8_t)(63 - __builtin_clzll(r->out_ifs));
	if (r->ct_states != RXP_ACL_CT_ANY && r->ct_states && chance(80))
		k.ct_state = (uint8_t)(1u << __builtin_ctz(r->ct_states));
	if (r->src_set != RXP_ACL_NO_SET && r->src_set < 64 && chance(80))
		k.src_sets |= 1ull << r->src_set;
	if (r->dst_set != RXP_ACL_NO_SET && r->dst_set < 64 && chance(80))
		k.dst_sets |= 1ull << r->dst_set;
	return k;
}

static void keys_make(const struct rxp_acl_rule *rules, uint32_t n, const struct gen *g,
		      struct rxp_acl_key *keys, uint32_t n_keys)
{
	for (uint32_t i = 0; i < n_keys; i++)
		keys[i] = n && chance(70) ? key_near(&rules[rnd_below(n)], g) : uniform_key(g);
}

/* ---- checking ---- */

/* The builds to check: each implementation, and the AVX-512 one with sparse nodes from 64 children. */
struct variant {
	enum acl_impl_choice impl;
	size_t sparse_min;
};

static unsigned variants(struct variant *out)
{
	unsigned n = 0;

	out[n++] = (struct variant){ ACL_IMPL_SCALAR, 0 };
	if (rxp_acl_force_impl(ACL_IMPL_AVX512)) {
		out[n++] = (struct variant){ ACL_IMPL_AVX512, 0 };
		out[n++] = (struct variant){ ACL_IMPL_AVX512, 64 };
	} else {
		out[n++] = (struct variant){ ACL_IMPL_SCALAR, 64 };
	}
	rxp_acl_force_impl(ACL_IMPL_AUTO);
	return n;
}

/*
 * The IPv4 keys of @keys given to rxp_acl_classify4() as rows, in bursts of
 * odd sizes, the entries past each burst filled with noise that no answer
 * may depend on. Returns the answers that differ from @want.
 */
static unsigned check_rows4(const struct rxp_acl *acl, const char *what, const struct rxp_acl_key *keys,
			    uint32_t n_keys, const uint32_t *want)
{
	static struct rxp_acl_rows4 rows;
	uint32_t got[RXP_ACL_BURST], at[RXP_ACL_BURST];
	unsigned bad = 0;

	for (uint32_t i = 0; i < n_keys;) {
		uint32_t burst = 1 + rnd_below(RXP_ACL_BURST), m = 0;

		memset(&rows, 0xa5, sizeof(rows));
		for (; i < n_keys && m < burst; i++) {
			const struct rxp_acl_key *k = &keys[i];
			struct rxp_acl_key back;

			if (k->family != 4)
				continue;
			rows.src[m] = (uint32_t)k->src[0] << 24 | k->src[1] << 16 | k->src[2] << 8 | k->src[3];
			rows.dst[m] = (uint32_t)k->dst[0] << 24 | k->dst[1] << 16 | k->dst[2] << 8 | k->dst[3];
			rows.sport[m] = k->sport;
			rows.dport[m] = k->dport;
			rows.proto[m] = k->proto;
			rows.ct_state[m] = k->ct_state;
			rows.in_if[m] = k->in_if;
			rows.out_if[m] = k->out_if;
			rows.src_sets[m] = k->src_sets;
			rows.dst_sets[m] = k->dst_sets;
			rxp_acl_rows4_key(&rows, m, &back);
			if ((memcmp(back.src, k->src, 4) || memcmp(back.dst, k->dst, 4) || back.sport != k->sport ||
			     back.dport != k->dport || back.family != 4 || back.proto != k->proto ||
			     back.ct_state != k->ct_state || back.in_if != k->in_if || back.out_if != k->out_if ||
			     back.src_sets != k->src_sets || back.dst_sets != k->dst_sets) && bad++ < 10)
				printf("  %s: key %u: rxp_acl_rows4_key does not give the key back\n", what, i);
			at[m++] = i;
		}
		rxp_acl_classify4(acl, &rows, got, m);
		for (uint32_t j = 0; j < m; j++)
			if (got[j] != want[at[j]] && bad++ < 10)
				printf("  %s (%s): key %u: classify4 %u, reference %u\n", what,
				       rxp_acl_impl_name(acl), at[j], got[j], want[at[j]]);
	}
	return bad;
}

/*
 * Builds @rules in every variant and checks @keys against the reference,
 * one at a time and in bulk (odd sizes, so bursts end short).
 */
static void check_set(const char *what, const struct rxp_acl_rule *rules, uint32_t n,
		      const struct rxp_acl_key *keys, uint32_t n_keys)
{
	struct variant v[3];
	unsigned n_var = variants(v);
	uint32_t *want = malloc((n_keys + 1) * sizeof(*want));
	uint32_t *got = malloc((n_keys + 1) * sizeof(*got));

	CHECK(want && got);
	if (!want || !got)
		goto out;
	for (uint32_t i = 0; i < n_keys; i++)
		want[i] = ref_classify(rules, n, &keys[i]);
	for (unsigned c = 0; c < n_var; c++) {
		char err[ERR_LEN];
		struct rxp_acl *acl;
		unsigned bad = 0;

		CHECK(rxp_acl_force_impl(v[c].impl));
		rxp_acl_set_sparse_min(v[c].sparse_min);
		acl = rxp_acl_build(rules, n, err, sizeof(err));
		rxp_acl_set_sparse_min(0);
		rxp_acl_force_impl(ACL_IMPL_AUTO);
		CHECK(acl != NULL);
		if (!acl) {
			printf("  %s: build failed: %s\n", what, err);
			continue;
		}
		CHECK(rxp_acl_memory(acl) > 0);
		for (uint32_t i = 0; i < n_keys; i++) {
			uint32_t one = rxp_acl_classify_one(acl, &keys[i]);

			if (one != want[i] && bad++ < 5)
				printf("  %s (%s): key %u: classify_one %u, reference %u\n", what,
				       rxp_acl_impl_name(acl), i, one, want[i]);
		}
		for (uint32_t i = 0; i < n_keys;) {
			uint32_t burst = 1 + rnd_below(150), m = RXP_MIN(n_keys - i, burst);

			rxp_acl_classify(acl, keys + i, got + i, m);
			i += m;
		}
		for (uint32_t i = 0; i < n_keys; i++)
			if (got[i] != want[i] && bad++ < 10)
				printf("  %s (%s): key %u: classify %u, reference %u\n", what,
				       rxp_acl_impl_name(acl), i, got[i], want[i]);
		bad += check_rows4(acl, what, keys, n_keys, want);
		CHECK_EQ(bad, 0);
		if (getenv("ACL_TEST_VERBOSE")) {
			uint32_t hits = 0;

			for (uint32_t i = 0; i < n_keys; i++)
				hits += want[i] != RXP_ACL_NO_MATCH;
			printf("  %s (%s): %u keys, %u match; %zu bytes, %u nodes, %u slots, "
			       "%u leaf bytes, trees %u+%u\n", what, rxp_acl_impl_name(acl), n_keys, hits,
			       rxp_acl_memory(acl), acl->n_nodes, acl->n_slots, acl->n_leaf_bytes,
			       acl->n_trees[0], acl->n_trees[1]);
		}
		rxp_acl_free(acl);
	}
out:
	free(got);
	free(want);
}

static void random_sets(const char *what, const struct gen *g, const uint32_t *counts,
			unsigned n_counts, uint32_t keys_max)
{
	for (unsigned c = 0; c < n_counts; c++) {
		uint32_t n = counts[c], n_keys = RXP_MIN(keys_max, 2000 + 2000000 / (n + 100));
		struct rxp_acl_rule *rules = malloc((n + 1) * sizeof(*rules));
		struct rxp_acl_key *keys = malloc(n_keys * sizeof(*keys));
		char name[64];

		CHECK(rules && keys);
		if (rules && keys) {
			/* big sets: few wide rules, else a rule matching all comes early */
			wide_pct = n >= 1000 ? 3 : n >= 100 ? 30 : 100;
			for (uint32_t i = 0; i < n; i++)
				rules[i] = random_rule(g);
			wide_pct = 100;
			keys_make(rules, n, g, keys, n_keys);
			snprintf(name, sizeof(name), "%s, %u rules", what, n);
			check_set(name, rules, n, keys, n_keys);
		}
		free(keys);
		free(rules);
	}
}

static const uint32_t counts[] = { 0, 1, 2, 7, 8, 9, 10, 17, 100, 1000, 10000 };

/* ---- cases ---- */

static void test_void(void)
{
	struct rxp_acl_rule r = rule_any();

	CHECK(!rxp_acl_rule_void(&r));
	r.sport_lo = 2, r.sport_hi = 1;
	CHECK(rxp_acl_rule_void(&r));
	r = rule_any();
	r.dport_lo = 2, r.dport_hi = 1;
	CHECK(rxp_acl_rule_void(&r));
	r = rule_any();
	r.ct_states = 0;
	CHECK(rxp_acl_rule_void(&r));
	r = rule_any();
	r.in_ifs = 0;
	CHECK(rxp_acl_rule_void(&r));
	r = rule_any();
	r.out_ifs = 0;
	CHECK(rxp_acl_rule_void(&r));
	r = rule_any();
	r.family = 4, r.src_len = 32;
	CHECK(!rxp_acl_rule_void(&r));
	r.src_len = 33;
	CHECK(rxp_acl_rule_void(&r));
	r = rule_any();
	r.family = 6, r.dst_len = 128;
	CHECK(!rxp_acl_rule_void(&r));
	r.dst_len = 129;
	CHECK(rxp_acl_rule_void(&r));
	r = rule_any();
	r.src_len = 1;		/* family 0 has no address */
	CHECK(rxp_acl_rule_void(&r));
}

static void test_errors(void)
{
	struct rxp_acl_rule r = rule_any();
	char err[ERR_LEN];

	r.family = 5;
	CHECK(rxp_acl_build(&r, 1, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "family") != NULL);
	r = rule_any();
	r.proto = 257;
	CHECK(rxp_acl_build(&r, 1, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "protocol") != NULL);
	r = rule_any();
	r.src_set = 64;
	CHECK(rxp_acl_build(&r, 1, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "set") != NULL);
	CHECK(rxp_acl_build(&r, RXP_ACL_RULES_MAX + 1, err, sizeof(err)) == NULL);
}

static void test_empty(void)
{
	const struct gen g = { .fam_mask = 3 };
	struct rxp_acl_key keys[300];
	struct rxp_acl *acl;
	char err[ERR_LEN];
	uint32_t got[300];

	acl = rxp_acl_build(NULL, 0, err, sizeof(err));
	CHECK(acl != NULL);
	if (!acl)
		return;
	CHECK(rxp_acl_memory(acl) > 0);
	keys_make(NULL, 0, &g, keys, 300);
	keys[7].family = 5;	/* a key of no family matches nothing */
	rxp_acl_classify(acl, keys, got, 300);
	for (unsigned i = 0; i < 300; i++) {
		CHECK_EQ(got[i], RXP_ACL_NO_MATCH);
		CHECK_EQ(rxp_acl_classify_one(acl, &keys[i]), RXP_ACL_NO_MATCH);
	}
	rxp_acl_free(acl);
	rxp_acl_free(NULL);
}

static void test_all_void(void)
{
	const struct gen g = { .fam_mask = 3, .void_pct = 100 };
	struct rxp_acl_rule rules[500];
	struct rxp_acl_key keys[2000];

	for (unsigned i = 0; i < 500; i++)
		rules[i] = random_rule(&g);
	keys_make(rules, 500, &g, keys, 2000);
	check_set("all void", rules, 500, keys, 2000);
}

static void test_match_all_first(void)
{
	const struct gen g = { .fam_mask = 3, .extras_pct = 10 };
	static struct rxp_acl_rule rules[3000];
	static struct rxp_acl_key keys[3000];

	for (unsigned i = 0; i < 3000; i++)
		rules[i] = random_rule(&g);
	rules[0] = rule_any();
	keys_make(rules, 3000, &g, keys, 3000);
	check_set("rule 0 matches all", rules, 3000, keys, 3000);
	/* a match-all for IPv4 only, further down */
	rules[0] = random_rule(&g);
	rules[500] = rule_any();
	rules[500].family = 4;
	check_set("IPv4 match-all at 500", rules, 3000, keys, 3000);
}

static void test_duplicates(void)
{
	const struct gen g = { .fam_mask = 3, .extras_pct = 20 };
	static struct rxp_acl_rule rules[2000];
	static struct rxp_acl_key keys[4000];

	for (unsigned i = 0; i < 2000; i++)
		rules[i] = i >= 100 && chance(60) ? rules[rnd_below(i)] : random_rule(&g);
	keys_make(rules, 2000, &g, keys, 4000);
	check_set("duplicates", rules, 2000, keys, 4000);
}

/* Rules no cut separates (the same box, different extras) end in chains of leaves. */
static void test_chains(void)
{
	const struct gen g = { .fam_mask = 3 };
	static struct rxp_acl_rule rules[300];
	static struct rxp_acl_key keys[4000];

	for (unsigned i = 0; i < 300; i++) {
		rules[i] = rule_any();
		if (i % 3 == 0)
			rules[i].in_ifs = 1ull << (i % 10);
		else if (i % 3 == 1)
			rules[i].ct_states = (uint8_t)(1u << (i % 5));
		else
			rules[i].src_set = (uint8_t)(i % 4), rules[i].out_ifs = 1ull << (i % 7);
		if (i % 50 == 49) {
			rules[i].family = 4;
			rules[i].proto = 17;
		}
	}
	keys_make(rules, 300, &g, keys, 4000);
	check_set("chains", rules, 300, keys, 4000);
}

/* A value on a power-of-two boundary, where the cuts fall, or next to one. */
static uint16_t aligned16(void)
{
	uint32_t v = (uint32_t)rnd_below(65536) & ~((1u << rnd_below(16)) - 1);

	return (uint16_t)(v + (chance(20) ? rnd_below(3) - 1 : 0));
}

/* No addresses: the trees cut the ports and the protocol, at aligned edges. */
static void test_ports(void)
{
	static const uint32_t c[] = { 30, 300, 3000 };
	const struct gen g = { .fam_mask = 3 };

	for (unsigned t = 0; t < RXP_ARRAY_SIZE(c); t++) {
		uint32_t n = c[t], n_keys = 6000;
		struct rxp_acl_rule *rules = malloc(n * sizeof(*rules));
		struct rxp_acl_key *keys = malloc(n_keys * sizeof(*keys));
		char name[64];

		CHECK(rules && keys);
		if (!rules || !keys) {
			free(rules);
			free(keys);
			return;
		}
		for (uint32_t i = 0; i < n; i++) {
			struct rxp_acl_rule *r = &rules[i];
			uint16_t a = aligned16(), b = aligned16();

			*r = rule_any();
			r->family = (uint8_t)(uint8_t[]){ 0, 0, 4, 6 }[rnd_below(4)];
			r->proto = chance(30) ? RXP_ACL_ANY_PROTO : (uint16_t)(rnd_below(8) * 32 + rnd_below(2));
			/* one narrow field at least: a rule matching all would end the list */
			if (r->proto == RXP_ACL_ANY_PROTO || chance(70)) {
				r->dport_lo = RXP_MIN(a, b);
				r->dport_hi = chance(60) ? r->dport_lo : RXP_MAX(a, b);
			}
			if (chance(50)) {
				a = aligned16(), b = aligned16();
				r->sport_lo = RXP_MIN(a, b);
				r->sport_hi = chance(40) ? r->sport_lo : RXP_MAX(a, b);
			}
			if (r->family && chance(30)) {
				unsigned max = r->family == 4 ? 32 : 128;

				/* a host whose address sits on a boundary */
				r->src_len = (uint8_t)max;
				memset(r->src, 0, sizeof(r->src));
				r->src[rnd_below(max / 8)] = (uint8_t)(1u << rnd_below(8));
			}
		}
		keys_make(rules, n, &g, keys, n_keys);
		for (uint32_t i = 0; i < n_keys; i += 3) {
			keys[i].proto = (uint8_t)(rnd_below(8) * 32 + rnd_below(3) - (chance(10) ? 1 : 0));
			keys[i].dport = aligned16();
		}
		snprintf(name, sizeof(name), "ports, %u rules", n);
		check_set(name, rules, n, keys, n_keys);
		free(keys);
		free(rules);
	}
}

/*
 * Nested rules, each containing the one before (ranges that grow, prefixes
 * that shorten), so that which rule is first in a part of the space depends
 * on where the part's edges fall.
 */
static void test_nested(void)
{
	const struct gen g = { .fam_mask = 3 };
	static struct rxp_acl_rule rules[400];
	static struct rxp_acl_key keys[8000];
	uint32_t n = 0;

	for (unsigned chain = 0; chain < 8; chain++) {
		struct rxp_acl_rule r = rule_any();
		uint8_t fam = chain & 1 ? 6 : 4;
		unsigned max = fam == 4 ? 32 : 128, len = max;
		uint16_t lo = (uint16_t)rnd64(), hi = lo;

		random_addr(r.dst, max / 8);
		for (unsigned i = 0; i < 50; i++) {
			r.family = chain < 6 ? fam : 0;
			if (chain < 6) {
				r.dst_len = (uint8_t)len;
				mask_prefix(r.dst, len, 16);
				len -= len > 2 ? 1 + rnd_below(3) : 0;
			}
			if (chain & 2) {
				r.sport_lo = lo, r.sport_hi = hi;
			} else {
				r.dport_lo = lo, r.dport_hi = hi;
			}
			r.proto = chain == 7 && i < 45 ? 17 : RXP_ACL_ANY_PROTO;
			rules[n++] = r;
			lo = (uint16_t)(lo > 300 ? lo - rnd_below(300) : 0);
			hi = (uint16_t)(hi < 65235 ? hi + rnd_below(300) : 65535);
		}
	}
	keys_make(rules, n, &g, keys, 8000);
	check_set("nested", rules, n, keys, 8000);
}

/* Rules shaped like the benchmark's (gen_rules.py): /0, /8, /16, /24, /32, tcp or udp or any. */
static void test_anchor_shape(void)
{
	static const uint8_t lens[] = { 0, 8, 16, 16, 24, 24, 24, 32 };
	const struct gen g = { .fam_mask = 1 };
	uint32_t n = 10000, n_keys = 4000;
	struct rxp_acl_rule *rules = malloc(n * sizeof(*rules));
	struct rxp_acl_key *keys = malloc(n_keys * sizeof(*keys));

	CHECK(rules && keys);
	for (int hard = 0; hard < 2 && rules && keys; hard++) {
		for (uint32_t i = 0; i < n; i++) {
			struct rxp_acl_rule *r = &rules[i];

			*r = rule_any();
			r->family = 4;
			do {
				r->src_len = lens[rnd_below(8)];
				r->dst_len = lens[rnd_below(8)];
			} while (hard && !r->src_len && !r->dst_len);
			for (int j = 0; j < 4; j++) {
				r->src[j] = (uint8_t)rnd64();
				r->dst[j] = (uint8_t)rnd64();
			}
			mask_prefix(r->src, r->src_len, 16);
			mask_prefix(r->dst, r->dst_len, 16);
			r->proto = (uint16_t[]){ 6, 17, RXP_ACL_ANY_PROTO }[rnd_below(3)];
			if (chance(50))
				random_ports(&r->sport_lo, &r->sport_hi);
			if (chance(70))
				random_ports(&r->dport_lo, &r->dport_hi);
		}
		keys_make(rules, n, &g, keys, n_keys);
		check_set(hard ? "hard 10000" : "anchor-like 10000", rules, n, keys, n_keys);
	}
	free(keys);
	free(rules);
}

static void test_random_ipv4(void)
{
	const struct gen g = { .fam_mask = 1, .extras_pct = 10, .void_pct = 2, .fam0_pct = 5 };

	random_sets("IPv4", &g, counts, RXP_ARRAY_SIZE(counts), 20000);
}

static void test_random_ipv6(void)
{
	const struct gen g = { .fam_mask = 2, .extras_pct = 10, .void_pct = 2, .fam0_pct = 5 };

	random_sets("IPv6", &g, counts, RXP_ARRAY_SIZE(counts), 20000);
}

static void test_random_mixed(void)
{
	const struct gen g = { .fam_mask = 3, .extras_pct = 15, .void_pct = 3, .fam0_pct = 10 };

	random_sets("mixed", &g, counts, RXP_ARRAY_SIZE(counts), 20000);
}

static void test_random_extras(void)
{
	static const uint32_t c[] = { 10, 100, 1000 };
	const struct gen g = { .fam_mask = 3, .extras_pct = 80, .fam0_pct = 30 };

	random_sets("extras", &g, c, RXP_ARRAY_SIZE(c), 10000);
}

/*
 * A block over its memory cap is built again cheaper (tight cuts, then
 * chains of leaves) and still answers right; past what chains need, the
 * build fails and says why.
 */
static void test_mem_cap(void)
{
	const struct gen g = { .fam_mask = 3, .extras_pct = 10, .fam0_pct = 5 };
	static struct rxp_acl_rule rules[2000];
	static struct rxp_acl_key keys[4000];
	/* about 470 KB uncapped, 220 KB with tight cuts, 190 KB as chains */
	static const size_t caps[] = { 400000, 200000 };
	struct rxp_acl *acl;
	char err[ERR_LEN];

	wide_pct = 3;
	for (unsigned i = 0; i < 2000; i++)
		rules[i] = random_rule(&g);
	wide_pct = 100;
	keys_make(rules, 2000, &g, keys, 4000);
	for (unsigned c = 0; c < RXP_ARRAY_SIZE(caps); c++) {
		char name[64];

		rxp_acl_set_mem_cap(caps[c]);
		acl = rxp_acl_build(rules, 2000, err, sizeof(err));
		CHECK(acl != NULL);
		if (acl)
			CHECK(rxp_acl_memory(acl) <= caps[c] + 65536);	/* the header, the extras */
		rxp_acl_free(acl);
		snprintf(name, sizeof(name), "memory cap %zu", caps[c]);
		check_set(name, rules, 2000, keys, 4000);
	}
	rxp_acl_set_mem_cap(1000);
	CHECK(rxp_acl_build(rules, 2000, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "too large") != NULL);
	rxp_acl_set_mem_cap(0);
}

/* The library's own matcher agrees with the reference. */
static void test_rule_matches(void)
{
	const struct gen g = { .fam_mask = 3, .extras_pct = 30, .void_pct = 5, .fam0_pct = 10 };
	unsigned bad = 0;

	for (unsigned i = 0; i < 20000; i++) {
		struct rxp_acl_rule r = random_rule(&g);
		struct rxp_acl_key k = chance(80) ? key_near(&r, &g) : uniform_key(&g);

		bad += rxp_acl_rule_matches(&r, &k) != ref_matches(&r, &k);
		bad += rxp_acl_rule_void(&r) != ref_void(&r);
	}
	CHECK_EQ(bad, 0);
}

int main(void)
{
	rng_seed(SEED);
	bases_init();
	RUN(test_void);
	RUN(test_errors);
	RUN(test_rule_matches);
	RUN(test_empty);
	RUN(test_all_void);
	RUN(test_match_all_first);
	RUN(test_duplicates);
	RUN(test_chains);
	RUN(test_ports);
	RUN(test_nested);
	RUN(test_mem_cap);
	RUN(test_random_ipv4);
	RUN(test_random_ipv6);
	RUN(test_random_mixed);
	RUN(test_random_extras);
	RUN(test_anchor_shape);
	return tests_done();
}
