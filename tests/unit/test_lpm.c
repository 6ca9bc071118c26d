/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the longest-prefix-match tables (include/rxpath/lpm4.h,
 * lpm6.h): fixed cases at the edges (/0, /24 and /25, /32, /128), errors and
 * limits, memory of an empty table, random add/replace/delete sequences
 * checked against a slow reference (a list of rules scanned for the longest
 * match), bulk against single lookups, and a reader thread racing a writer.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rxpath/lpm4.h"
#include "rxpath/lpm6.h"
#include "check.h"

#define SEED 0x5eed1e55u

static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
	rng_state = seed;
}

/* splitmix64: small, and every seed is a good one */
static uint64_t rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd32(void)
{
	return (uint32_t)(rnd64() >> 32);
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(((uint64_t)rnd32() * n) >> 32);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint32_t ip4(unsigned a, unsigned b, unsigned c, unsigned d)
{
	return (uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d;
}

static uint32_t mask4(unsigned len)
{
	return len ? ~0u << (32 - len) : 0;
}

/* Returns the next hop for @addr, or RXP_LPM_NO_ROUTE. */
static uint32_t look4(const struct rxp_lpm4 *lpm, uint32_t addr)
{
	uint32_t nh = 12345;
	int ret = rxp_lpm4_lookup(lpm, addr, &nh);

	if (ret == -ENOENT)
		return RXP_LPM_NO_ROUTE;
	return ret == 0 ? nh : 0xdeadu;
}

/* ---- the IPv4 reference: a list scanned for the longest match ---- */

struct ref4 {
	uint32_t prefix;
	uint8_t len;
	uint32_t nh;
};

#define REF_MAX 8192

static struct ref4 ref4[REF_MAX];
static unsigned n_ref4;

static int ref4_find(uint32_t prefix, unsigned len)
{
	for (unsigned i = 0; i < n_ref4; i++)
		if (ref4[i].len == len && ref4[i].prefix == prefix)
			return (int)i;
	return -1;
}

static uint32_t ref4_lookup(uint32_t addr)
{
	int best = -1;

	for (unsigned i = 0; i < n_ref4; i++)
		if ((addr & mask4(ref4[i].len)) == ref4[i].prefix &&
		    (best < 0 || ref4[i].len > ref4[best].len))
			best = (int)i;
	return best < 0 ? RXP_LPM_NO_ROUTE : ref4[best].nh;
}

/* Lengths weighted so that short prefixes (which rewrite up to 2^23 entries) stay rare. */
static unsigned rnd_len4(void)
{
	uint32_t r = rnd_below(1000);

	if (r < 3)
		return 0;
	if (r < 6)
		return 1 + rnd_below(8);	/* 1..8 */
	if (r < 60)
		return 9 + rnd_below(8);	/* 9..16 */
	if (r < 520)
		return 17 + rnd_below(8);	/* 17..24 */
	return 25 + rnd_below(8);		/* 25..32 */
}

/* An address near the others, so that prefixes nest and overlap. */
static uint32_t rnd_addr4(void)
{
	static const uint32_t top12[] = { 0x0a0, 0x0a1, 0xc0a };
	static const uint32_t mid12[] = { 0x000, 0x001, 0x0ff, 0x100 };
	uint32_t a = rnd32();

	if (rnd_below(10) < 9)
		a = top12[rnd_below(3)] << 20 | (a & 0xfffff);
	if (rnd_below(2))
		a = (a & 0xfff000ff) | mid12[rnd_below(4)] << 8;
	return a;
}

/* Checks the table against the reference at @addr; returns 1 on a mismatch. */
static int check4_at(const struct rxp_lpm4 *lpm, uint32_t addr)
{
	uint32_t want = ref4_lookup(addr), got = look4(lpm, addr);

	if (got == want)
		return 0;
	printf("  lpm4: %u.%u.%u.%u: got %u, want %u\n", addr >> 24, (addr >> 16) & 0xff,
	       (addr >> 8) & 0xff, addr & 0xff, got, want);
	return 1;
}

/* Checks random addresses and the edges of every route (first, last, and one past each). */
static int check4_all(const struct rxp_lpm4 *lpm, unsigned n_random)
{
	int bad = 0;

	for (unsigned i = 0; i < n_random && bad < 5; i++)
		bad += check4_at(lpm, rnd_addr4());
	for (unsigned i = 0; i < n_ref4 && bad < 5; i++) {
		uint32_t first = ref4[i].prefix, last = first | ~mask4(ref4[i].len);

		bad += check4_at(lpm, first);
		bad += check4_at(lpm, last);
		bad += check4_at(lpm, first - 1);
		bad += check4_at(lpm, last + 1);
	}
	return bad;
}

/* ---- IPv4 fixed cases ---- */

static void test_lpm4_edges(void)
{
	struct rxp_lpm4 *lpm = rxp_lpm4_create(64, 0);

	CHECK(lpm != NULL);
	if (!lpm)
		return;
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 1)), RXP_LPM_NO_ROUTE);
	CHECK_EQ(rxp_lpm4_count(lpm), 0);

	/* /24 and /25 at the boundary between the two levels */
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 0), 24, 24), 0);
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 128), 25, 25), 0);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 0)), 24);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 127)), 24);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 128)), 25);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 255)), 25);
	CHECK_EQ(look4(lpm, ip4(10, 0, 1, 0)), RXP_LPM_NO_ROUTE);
	CHECK_EQ(look4(lpm, ip4(9, 255, 255, 255)), RXP_LPM_NO_ROUTE);
	CHECK_EQ(rxp_lpm4_groups_used(lpm), 1);

	/* a shorter route added later must not overwrite the longer ones */
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 0), 8, 8), 0);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 5)), 24);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 200)), 25);
	CHECK_EQ(look4(lpm, ip4(10, 0, 1, 0)), 8);
	CHECK_EQ(look4(lpm, ip4(10, 255, 255, 255)), 8);
	CHECK_EQ(look4(lpm, ip4(11, 0, 0, 0)), RXP_LPM_NO_ROUTE);

	/* /32 host routes, at both ends of a /24 */
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 255), 32, 32), 0);
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 0), 32, 33), 0);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 255)), 32);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 254)), 25);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 0)), 33);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 1)), 24);

	/* the default route, and the host bits of a prefix are ignored */
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(1, 2, 3, 4), 0, 1000), 0);
	CHECK_EQ(look4(lpm, ip4(11, 0, 0, 0)), 1000);
	CHECK_EQ(look4(lpm, 0), 1000);
	CHECK_EQ(look4(lpm, 0xffffffff), 1000);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 77)), 24);
	CHECK_EQ(rxp_lpm4_count(lpm), 6);

	/* replacing a next hop keeps the count and changes only that route's addresses */
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 0), 24, 240), 0);
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 0), 8, 80), 0);
	CHECK_EQ(rxp_lpm4_count(lpm), 6);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 1)), 240);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 130)), 25);
	CHECK_EQ(look4(lpm, ip4(10, 9, 0, 1)), 80);

	/* deletes fall back to the next longest covering route */
	CHECK_EQ(rxp_lpm4_del(lpm, ip4(10, 0, 0, 0), 24), 0);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 1)), 80);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 0)), 33);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 130)), 25);
	CHECK_EQ(rxp_lpm4_del(lpm, ip4(10, 0, 0, 128), 25), 0);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 130)), 80);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 255)), 32);
	CHECK_EQ(rxp_lpm4_del(lpm, ip4(10, 0, 0, 0), 8), 0);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 130)), 1000);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 255)), 32);
	CHECK_EQ(rxp_lpm4_del(lpm, 0, 0), 0);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 130)), RXP_LPM_NO_ROUTE);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 0)), 33);
	CHECK_EQ(rxp_lpm4_groups_used(lpm), 1);
	CHECK_EQ(rxp_lpm4_del(lpm, ip4(10, 0, 0, 0), 32), 0);
	CHECK_EQ(rxp_lpm4_del(lpm, ip4(10, 0, 0, 255), 32), 0);
	/* the group emptied: folded back into the first level and retired */
	CHECK_EQ(rxp_lpm4_groups_used(lpm), 0);
	CHECK_EQ(rxp_lpm4_reclaim(lpm), 1);
	CHECK_EQ(rxp_lpm4_count(lpm), 0);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 255)), RXP_LPM_NO_ROUTE);

	/* /32 over /0 only, and /1 halves */
	CHECK_EQ(rxp_lpm4_add(lpm, 0, 0, 1), 0);
	CHECK_EQ(rxp_lpm4_add(lpm, 0xffffffff, 32, 2), 0);
	CHECK_EQ(rxp_lpm4_add(lpm, 0x80000000, 1, 3), 0);
	CHECK_EQ(look4(lpm, 0xffffffff), 2);
	CHECK_EQ(look4(lpm, 0xfffffffe), 3);
	CHECK_EQ(look4(lpm, 0x7fffffff), 1);
	CHECK_EQ(rxp_lpm4_del(lpm, 0x80000000, 1), 0);
	CHECK_EQ(look4(lpm, 0xfffffffe), 1);
	CHECK_EQ(look4(lpm, 0xffffffff), 2);
	rxp_lpm4_destroy(lpm);
}

static void test_lpm4_errors(void)
{
	struct rxp_lpm4 *lpm;

	errno = 0;
	CHECK(rxp_lpm4_create(0, 0) == NULL);
	CHECK_EQ(errno, EINVAL);
	rxp_lpm4_destroy(NULL);

	lpm = rxp_lpm4_create(4, 2);
	CHECK(lpm != NULL);
	if (!lpm)
		return;
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 0), 33, 1), -EINVAL);
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 0), 8, RXP_LPM_NH_MAX), -EINVAL);
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 0), 8, RXP_LPM_NH_MAX - 1), 0);
	CHECK_EQ(look4(lpm, ip4(10, 1, 1, 1)), RXP_LPM_NH_MAX - 1);
	CHECK_EQ(rxp_lpm4_del(lpm, ip4(10, 0, 0, 0), 33), -EINVAL);
	CHECK_EQ(rxp_lpm4_del(lpm, ip4(10, 0, 0, 0), 16), -ENOENT);
	CHECK_EQ(rxp_lpm4_del(lpm, ip4(11, 0, 0, 0), 8), -ENOENT);
	CHECK_EQ(rxp_lpm4_del(lpm, 0, 0), -ENOENT);

	/* groups: two exist, a third /24 with a long route does not fit */
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 0), 25, 2), 0);
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 1, 0), 25, 3), 0);
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 2, 0), 25, 4), -ENOSPC);
	CHECK_EQ(look4(lpm, ip4(10, 0, 2, 1)), RXP_LPM_NH_MAX - 1);	/* nothing changed */
	CHECK_EQ(rxp_lpm4_count(lpm), 3);

	/* routes: 4 at most; replacing one at the limit is fine */
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 128), 25, 5), 0);	/* same group */
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(12, 0, 0, 0), 8, 6), -ENOSPC);
	CHECK_EQ(rxp_lpm4_add(lpm, 0, 0, 6), -ENOSPC);
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 128), 25, 7), 0);
	CHECK_EQ(look4(lpm, ip4(10, 0, 0, 129)), 7);
	CHECK_EQ(rxp_lpm4_count(lpm), 4);

	/* a retired group is not reused before reclaim */
	CHECK_EQ(rxp_lpm4_del(lpm, ip4(10, 0, 1, 0), 25), 0);
	CHECK_EQ(rxp_lpm4_groups_used(lpm), 1);
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 2, 0), 25, 4), -ENOSPC);
	CHECK_EQ(rxp_lpm4_reclaim(lpm), 1);
	CHECK_EQ(rxp_lpm4_reclaim(lpm), 0);
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 2, 0), 25, 4), 0);
	CHECK_EQ(look4(lpm, ip4(10, 0, 2, 1)), 4);
	CHECK_EQ(look4(lpm, ip4(10, 0, 2, 200)), RXP_LPM_NH_MAX - 1);
	CHECK_EQ(look4(lpm, ip4(10, 0, 1, 1)), RXP_LPM_NH_MAX - 1);
	rxp_lpm4_destroy(lpm);
}

static void test_lpm4_memory(void)
{
	struct rxp_lpm4 *lpm = rxp_lpm4_create(1024, 0);
	size_t bytes, resident = 0, empty;

	CHECK(lpm != NULL);
	if (!lpm)
		return;
	bytes = rxp_lpm4_memory(lpm, &resident);
	CHECK(bytes >= ((size_t)64 << 20));
	CHECK(resident < ((size_t)256 << 10));	/* nothing of the big table is in memory */
	empty = resident;
	/* lookups of an empty table read zero pages: still "no route" */
	CHECK_EQ(look4(lpm, ip4(1, 2, 3, 4)), RXP_LPM_NO_ROUTE);
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 0), 24, 1), 0);
	CHECK_EQ(rxp_lpm4_add(lpm, ip4(10, 0, 0, 0), 28, 2), 0);
	rxp_lpm4_memory(lpm, &resident);
	CHECK(resident > empty);
	CHECK(resident <= empty + ((size_t)8 << 20));	/* a huge page or two at most */
	/* the default route costs no table memory */
	CHECK_EQ(rxp_lpm4_add(lpm, 0, 0, 3), 0);
	bytes = resident;
	rxp_lpm4_memory(lpm, &resident);
	CHECK_EQ(resident, bytes);
	rxp_lpm4_destroy(lpm);
}

/* ---- IPv4 random sequences against the reference ---- */

/*
 * Random adds, replaces and deletes against the reference. With few groups
 * (@max_groups) some adds fail with -ENOSPC, and must change nothing.
 */
static void random4(uint32_t max_groups, unsigned n_ops, uint64_t seed)
{
	struct rxp_lpm4 *lpm = rxp_lpm4_create(REF_MAX, max_groups);
	unsigned n_full = 0;
	int bad = 0;

	CHECK(lpm != NULL);
	if (!lpm)
		return;
	rng_seed(seed);
	n_ref4 = 0;
	for (unsigned op = 0; op < n_ops && !bad; op++) {
		uint32_t r = rnd_below(100);

		if (r < 55 || n_ref4 == 0) {
			unsigned len = rnd_len4();
			uint32_t prefix = rnd_addr4() & mask4(len), nh = rnd_below(RXP_LPM_NH_MAX);
			int i = ref4_find(prefix, len);
			int ret = rxp_lpm4_add(lpm, prefix, (uint8_t)len, nh);

			if (ret == -ENOSPC && max_groups && i < 0 && len > 24) {
				n_full++;
				continue;
			}
			CHECK_EQ(ret, 0);
			if (i >= 0) {
				ref4[i].nh = nh;
			} else {
				ref4[n_ref4].prefix = prefix;
				ref4[n_ref4].len = (uint8_t)len;
				ref4[n_ref4++].nh = nh;
			}
		} else if (r < 70) {
			unsigned i = rnd_below(n_ref4);

			/* replace; host bits set on purpose */
			ref4[i].nh = rnd_below(RXP_LPM_NH_MAX);
			CHECK_EQ(rxp_lpm4_add(lpm, ref4[i].prefix | (rnd32() & ~mask4(ref4[i].len)),
					      ref4[i].len, ref4[i].nh), 0);
		} else if (r < 97) {
			unsigned i = rnd_below(n_ref4);

			CHECK_EQ(rxp_lpm4_del(lpm, ref4[i].prefix, ref4[i].len), 0);
			ref4[i] = ref4[--n_ref4];
		} else {
			unsigned len = rnd_len4();
			uint32_t prefix = rnd_addr4() & mask4(len);

			CHECK_EQ(rxp_lpm4_del(lpm, prefix, (uint8_t)len),
				 ref4_find(prefix, len) < 0 ? -ENOENT : 0);
			if (ref4_find(prefix, len) >= 0) {
				int i = ref4_find(prefix, len);

				ref4[i] = ref4[--n_ref4];
			}
		}
		CHECK_EQ(rxp_lpm4_count(lpm), n_ref4);
		if (op % (max_groups ? 97 : 997) == 0)
			rxp_lpm4_reclaim(lpm);
		if (op % 250 == 0) {
			for (unsigned k = 0; k < 300 && !bad; k++)
				bad += check4_at(lpm, rnd_addr4());
		}
		if (op % 2000 == 1999)
			bad += check4_all(lpm, 1000);
	}
	CHECK_EQ(bad, 0);
	bad = check4_all(lpm, 3000);
	CHECK_EQ(bad, 0);

	/* delete everything in random order; the table empties and its groups fold */
	while (n_ref4 && !bad) {
		unsigned i = rnd_below(n_ref4);

		CHECK_EQ(rxp_lpm4_del(lpm, ref4[i].prefix, ref4[i].len), 0);
		ref4[i] = ref4[--n_ref4];
		if (n_ref4 % 128 == 0)
			bad += check4_all(lpm, 200);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(rxp_lpm4_count(lpm), 0);
	CHECK_EQ(rxp_lpm4_groups_used(lpm), 0);
	for (unsigned k = 0; k < 1000; k++)
		CHECK_EQ(look4(lpm, rnd_addr4()), RXP_LPM_NO_ROUTE);
	if (max_groups)
		CHECK(n_full > 10);	/* the limit really was hit */
	rxp_lpm4_destroy(lpm);
}

static void test_lpm4_random(void)
{
	random4(0, 8000, SEED);
}

static void test_lpm4_random_few_groups(void)
{
	random4(24, 3000, SEED + 10);
}

static void test_lpm4_bulk(void)
{
	struct rxp_lpm4 *lpm = rxp_lpm4_create(4096, 0);
	enum { N = 1000 };
	static uint32_t addrs[N], nhs[N], copy[N];
	int bad = 0;

	CHECK(lpm != NULL);
	if (!lpm)
		return;
	rng_seed(SEED + 1);
	for (unsigned i = 0; i < 3000; i++) {
		unsigned len = rnd_len4();

		CHECK_EQ(rxp_lpm4_add(lpm, rnd_addr4() & mask4(len), (uint8_t)len, i), 0);
	}
	for (int with_default = 0; with_default < 2; with_default++) {
		if (with_default)
			CHECK_EQ(rxp_lpm4_add(lpm, 0, 0, 4242), 0);
		for (unsigned i = 0; i < N; i++)
			addrs[i] = i % 7 ? rnd_addr4() : rnd32();
		/* every count to 70 (around the prefetch distance), then larger ones */
		for (unsigned n = 0; n <= N; n += n < 70 ? 1 : 331) {
			memset(nhs, 0xaa, sizeof(nhs));
			rxp_lpm4_lookup_bulk(lpm, addrs, nhs, n);
			for (unsigned i = 0; i < n; i++)
				bad += nhs[i] != look4(lpm, addrs[i]);
			for (unsigned i = n; i < N; i++)
				bad += nhs[i] != 0xaaaaaaaau;
		}
		rxp_lpm4_prefetch(lpm, addrs[0]);	/* a hint only */
		/* in place */
		memcpy(copy, addrs, sizeof(copy));
		rxp_lpm4_lookup_bulk(lpm, copy, copy, N);
		for (unsigned i = 0; i < N; i++)
			bad += copy[i] != look4(lpm, addrs[i]);
	}
	CHECK_EQ(bad, 0);
	rxp_lpm4_destroy(lpm);
}

/* ---- IPv6 helpers and reference ---- */

struct a6 {
	uint8_t b[16];
};

static struct a6 a6_make(uint64_t hi, uint64_t lo)
{
	struct a6 a;

	for (int i = 0; i < 8; i++) {
		a.b[i] = (uint8_t)(hi >> (56 - 8 * i));
		a.b[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
	return a;
}

static void a6_split(const struct a6 *a, uint64_t *hi, uint64_t *lo)
{
	*hi = *lo = 0;
	for (int i = 0; i < 8; i++) {
		*hi = *hi << 8 | a->b[i];
		*lo = *lo << 8 | a->b[8 + i];
	}
}

static uint64_t m64(unsigned bits)
{
	return bits >= 64 ? ~0ull : bits ? ~0ull << (64 - bits) : 0;
}

/* Returns @a with the bits after @len cleared (@fill_ones: set). */
static struct a6 a6_mask(const struct a6 *a, unsigned len, bool fill_ones)
{
	uint64_t hi, lo, mh = m64(len), ml = m64(len > 64 ? len - 64 : 0);

	a6_split(a, &hi, &lo);
	hi &= mh;
	lo &= ml;
	if (fill_ones) {
		hi |= ~mh;
		lo |= ~ml;
	}
	return a6_make(hi, lo);
}

/* Returns @a + @delta (delta -1 or +1), wrapping. */
static struct a6 a6_add(const struct a6 *a, int delta)
{
	uint64_t hi, lo;

	a6_split(a, &hi, &lo);
	if (delta > 0) {
		hi += ++lo == 0;
	} else {
		hi -= lo-- == 0;
	}
	return a6_make(hi, lo);
}

static uint32_t look6(const struct rxp_lpm6 *lpm, const struct a6 *a)
{
	uint32_t nh = 12345;
	int ret = rxp_lpm6_lookup(lpm, a->b, &nh);

	if (ret == -ENOENT)
		return RXP_LPM_NO_ROUTE;
	return ret == 0 ? nh : 0xdeadu;
}

struct ref6 {
	struct a6 prefix;
	uint8_t len;
	uint32_t nh;
	uint64_t hi, lo, mask_hi, mask_lo;	/* the prefix again, for a quick match */
};

static struct ref6 ref6[REF_MAX];
static unsigned n_ref6;

static int ref6_find(const struct a6 *prefix, unsigned len)
{
	for (unsigned i = 0; i < n_ref6; i++)
		if (ref6[i].len == len && !memcmp(ref6[i].prefix.b, prefix->b, 16))
			return (int)i;
	return -1;
}

static void ref6_set(unsigned i, const struct a6 *prefix, unsigned len, uint32_t nh)
{
	struct ref6 *r = &ref6[i];

	r->prefix = *prefix;
	r->len = (uint8_t)len;
	r->nh = nh;
	a6_split(prefix, &r->hi, &r->lo);
	r->mask_hi = m64(len);
	r->mask_lo = m64(len > 64 ? len - 64 : 0);
}

static uint32_t ref6_lookup(const struct a6 *addr)
{
	uint64_t hi, lo;
	int best = -1;

	a6_split(addr, &hi, &lo);
	for (unsigned i = 0; i < n_ref6; i++) {
		const struct ref6 *r = &ref6[i];

		if ((hi & r->mask_hi) == r->hi && (lo & r->mask_lo) == r->lo &&
		    (best < 0 || r->len > ref6[best].len))
			best = (int)i;
	}
	return best < 0 ? RXP_LPM_NO_ROUTE : ref6[best].nh;
}

static unsigned rnd_len6(void)
{
	uint32_t r = rnd_below(1000);

	if (r < 3)
		return 0;
	if (r < 6)
		return 1 + rnd_below(8);	/* 1..8 */
	if (r < 40)
		return 9 + rnd_below(16);	/* 9..24 */
	if (r < 550)
		return 25 + rnd_below(40);	/* 25..64 */
	return 65 + rnd_below(64);		/* 65..128 */
}

/* An address near the others, so that prefixes nest and overlap at every level. */
static struct a6 rnd_addr6(void)
{
	static const uint64_t top32[] = { 0x20010db8, 0x2a001450, 0x20010db9 };
	static const uint64_t mid32[] = { 0x00000000, 0x00010000, 0xffff0000, 0x00000001 };
	static const uint64_t low[] = { 0, 1, 0xffffffffffffffffull, 0x0200000000000000ull };
	uint64_t hi = rnd64(), lo = rnd64();

	if (rnd_below(10) < 9)
		hi = top32[rnd_below(3)] << 32 | (hi & 0xffffffff);
	if (rnd_below(2))
		hi = (hi & ~0xffffffffull) | mid32[rnd_below(4)] | (hi & 0xff);
	if (rnd_below(3) == 0)
		lo = low[rnd_below(4)] ^ (lo & 0xff);
	return a6_make(hi, lo);
}

static void print6(const struct a6 *a)
{
	for (int i = 0; i < 16; i += 2)
		printf("%s%02x%02x", i ? ":" : "", a->b[i], a->b[i + 1]);
}

static int check6_at(const struct rxp_lpm6 *lpm, const struct a6 *addr)
{
	uint32_t want = ref6_lookup(addr), got = look6(lpm, addr);

	if (got == want)
		return 0;
	printf("  lpm6: ");
	print6(addr);
	printf(": got %u, want %u\n", got, want);
	return 1;
}

static int check6_all(const struct rxp_lpm6 *lpm, unsigned n_random)
{
	int bad = 0;

	for (unsigned i = 0; i < n_random && bad < 5; i++) {
		struct a6 a = rnd_addr6();

		bad += check6_at(lpm, &a);
	}
	for (unsigned i = 0; i < n_ref6 && bad < 5; i++) {
		struct a6 first = ref6[i].prefix, last = a6_mask(&first, ref6[i].len, true);
		struct a6 before = a6_add(&first, -1), after = a6_add(&last, 1);

		bad += check6_at(lpm, &first);
		bad += check6_at(lpm, &last);
		bad += check6_at(lpm, &before);
		bad += check6_at(lpm, &after);
	}
	return bad;
}

/* ---- IPv6 fixed cases ---- */

static void test_lpm6_edges(void)
{
	struct rxp_lpm6 *lpm = rxp_lpm6_create(256, 0);
	struct a6 base = a6_make(0x20010db800000000ull, 0);
	struct a6 probe = a6_make(0x20010db812345678ull, 0x9abcdef012345678ull);
	struct a6 all_ones = a6_make(~0ull, ~0ull), zero = a6_make(0, 0);
	int bad = 0;

	CHECK(lpm != NULL);
	if (!lpm)
		return;
	CHECK_EQ(look6(lpm, &probe), RXP_LPM_NO_ROUTE);

	/* every length 1..128 of one address: each lookup at the edge of a length sees it */
	for (unsigned len = 1; len <= 128; len++) {
		struct a6 p = a6_mask(&probe, len, false);

		CHECK_EQ(rxp_lpm6_add(lpm, p.b, (uint8_t)len, len), 0);
	}
	CHECK_EQ(rxp_lpm6_count(lpm), 128);
	CHECK_EQ(look6(lpm, &probe), 128);
	for (unsigned len = 1; len < 128; len++) {
		/* flip the bit after the prefix: the /len route is the longest match */
		struct a6 a = probe;

		a.b[len / 8] ^= (uint8_t)(0x80 >> (len % 8));
		bad += look6(lpm, &a) != len;
	}
	CHECK_EQ(bad, 0);
	/* delete from the longest: each step falls back by one */
	for (unsigned len = 128; len > 1 && !bad; len--) {
		struct a6 p = a6_mask(&probe, len, false);

		CHECK_EQ(rxp_lpm6_del(lpm, p.b, (uint8_t)len), 0);
		bad += look6(lpm, &probe) != len - 1;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(rxp_lpm6_groups_used(lpm), 0);
	CHECK_EQ(rxp_lpm6_count(lpm), 1);

	/* the other order: longest first, shortest deleted first */
	for (unsigned len = 128; len >= 2; len--) {
		struct a6 p = a6_mask(&probe, len, false);

		CHECK_EQ(rxp_lpm6_add(lpm, p.b, (uint8_t)len, 1000 + len), 0);
	}
	CHECK_EQ(look6(lpm, &probe), 1128);
	for (unsigned len = 1; len < 128 && !bad; len++) {
		struct a6 p = a6_mask(&probe, len, false), a = probe;

		CHECK_EQ(rxp_lpm6_del(lpm, p.b, (uint8_t)len), 0);
		/* flip the bit after /len+1: that route is now the longest match */
		if (len + 1 < 128) {
			a.b[(len + 1) / 8] ^= (uint8_t)(0x80 >> ((len + 1) % 8));
			bad += look6(lpm, &a) != 1000 + len + 1;
		}
		bad += look6(lpm, &probe) != 1128;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(look6(lpm, &probe), 1128);
	CHECK_EQ(rxp_lpm6_del(lpm, probe.b, 128), 0);
	CHECK_EQ(look6(lpm, &probe), RXP_LPM_NO_ROUTE);
	CHECK_EQ(rxp_lpm6_count(lpm), 0);
	CHECK_EQ(rxp_lpm6_groups_used(lpm), 0);
	CHECK(rxp_lpm6_reclaim(lpm) > 0);

	/* /0, /128 at both ends of the space, a /32 and a /48 inside it */
	CHECK_EQ(rxp_lpm6_add(lpm, probe.b, 0, 1), 0);	/* host bits ignored */
	CHECK_EQ(rxp_lpm6_add(lpm, all_ones.b, 128, 2), 0);
	CHECK_EQ(rxp_lpm6_add(lpm, zero.b, 128, 3), 0);
	CHECK_EQ(rxp_lpm6_add(lpm, base.b, 32, 32), 0);
	CHECK_EQ(rxp_lpm6_add(lpm, base.b, 48, 48), 0);
	CHECK_EQ(look6(lpm, &all_ones), 2);
	CHECK_EQ(look6(lpm, &zero), 3);
	CHECK_EQ(look6(lpm, &probe), 32);
	CHECK_EQ(look6(lpm, &base), 48);
	{
		struct a6 a = a6_make(0x20010db80000ffffull, ~0ull), b = a6_add(&a, 1);
		struct a6 c = a6_make(0x20010db7ffffffffull, ~0ull), d = a6_add(&zero, 1);

		CHECK_EQ(look6(lpm, &a), 48);
		CHECK_EQ(look6(lpm, &b), 32);
		CHECK_EQ(look6(lpm, &c), 1);
		CHECK_EQ(look6(lpm, &d), 1);
	}
	/* replace */
	CHECK_EQ(rxp_lpm6_add(lpm, base.b, 32, 320), 0);
	CHECK_EQ(rxp_lpm6_count(lpm), 5);
	CHECK_EQ(look6(lpm, &probe), 320);
	CHECK_EQ(look6(lpm, &base), 48);
	CHECK_EQ(rxp_lpm6_del(lpm, base.b, 32), 0);
	CHECK_EQ(look6(lpm, &probe), 1);
	CHECK_EQ(look6(lpm, &base), 48);
	CHECK_EQ(rxp_lpm6_del(lpm, zero.b, 0), 0);
	CHECK_EQ(look6(lpm, &probe), RXP_LPM_NO_ROUTE);
	CHECK_EQ(look6(lpm, &all_ones), 2);
	rxp_lpm6_destroy(lpm);
}

static void test_lpm6_errors(void)
{
	struct a6 p48 = a6_make(0x20010db800010000ull, 0);
	struct a6 q48 = a6_make(0x20010db800020000ull, 0);	/* same /40 */
	struct a6 r48 = a6_make(0x2a00145000000000ull, 0);	/* another /24 */
	struct rxp_lpm6 *lpm;

	errno = 0;
	CHECK(rxp_lpm6_create(0, 0) == NULL);
	CHECK_EQ(errno, EINVAL);
	rxp_lpm6_destroy(NULL);

	lpm = rxp_lpm6_create(4, 3);
	CHECK(lpm != NULL);
	if (!lpm)
		return;
	CHECK_EQ(rxp_lpm6_add(lpm, p48.b, 129, 1), -EINVAL);
	CHECK_EQ(rxp_lpm6_add(lpm, p48.b, 48, RXP_LPM_NH_MAX), -EINVAL);
	CHECK_EQ(rxp_lpm6_del(lpm, p48.b, 129), -EINVAL);
	CHECK_EQ(rxp_lpm6_del(lpm, p48.b, 48), -ENOENT);

	/* a lone /48 takes three groups: all there are */
	CHECK_EQ(rxp_lpm6_add(lpm, p48.b, 48, RXP_LPM_NH_MAX - 1), 0);
	CHECK_EQ(look6(lpm, &p48), RXP_LPM_NH_MAX - 1);
	CHECK_EQ(rxp_lpm6_groups_used(lpm), 3);
	CHECK_EQ(rxp_lpm6_del(lpm, p48.b, 47), -ENOENT);
	CHECK_EQ(rxp_lpm6_del(lpm, p48.b, 64), -ENOENT);
	CHECK_EQ(rxp_lpm6_add(lpm, r48.b, 48, 2), -ENOSPC);
	CHECK_EQ(look6(lpm, &r48), RXP_LPM_NO_ROUTE);
	CHECK_EQ(rxp_lpm6_add(lpm, q48.b, 48, 3), 0);	/* shares the path */
	CHECK_EQ(rxp_lpm6_add(lpm, r48.b, 24, 4), 0);	/* first level only */
	CHECK_EQ(rxp_lpm6_add(lpm, r48.b, 0, 5), 0);
	CHECK_EQ(rxp_lpm6_count(lpm), 4);
	CHECK_EQ(rxp_lpm6_add(lpm, r48.b, 16, 6), -ENOSPC);
	CHECK_EQ(rxp_lpm6_add(lpm, r48.b, 24, 7), 0);	/* replace at the limit */
	CHECK_EQ(look6(lpm, &r48), 7);

	/* retired groups wait for reclaim */
	CHECK_EQ(rxp_lpm6_del(lpm, p48.b, 48), 0);
	CHECK_EQ(rxp_lpm6_del(lpm, q48.b, 48), 0);
	CHECK_EQ(rxp_lpm6_groups_used(lpm), 0);
	CHECK_EQ(look6(lpm, &p48), 5);
	CHECK_EQ(rxp_lpm6_add(lpm, r48.b, 48, 8), -ENOSPC);
	CHECK_EQ(rxp_lpm6_reclaim(lpm), 3);
	CHECK_EQ(rxp_lpm6_add(lpm, r48.b, 48, 8), 0);
	CHECK_EQ(look6(lpm, &r48), 8);
	{
		struct a6 a = a6_make(0x2a00145000010000ull, 0);

		CHECK_EQ(look6(lpm, &a), 7);
	}
	rxp_lpm6_destroy(lpm);
}

static void test_lpm6_memory(void)
{
	struct rxp_lpm6 *lpm = rxp_lpm6_create(1024, 0);
	struct a6 p = a6_make(0x20010db800010000ull, 0);
	size_t resident = 0, empty;

	CHECK(lpm != NULL);
	if (!lpm)
		return;
	rxp_lpm6_memory(lpm, &resident);
	CHECK(resident < ((size_t)256 << 10));
	empty = resident;
	CHECK_EQ(look6(lpm, &p), RXP_LPM_NO_ROUTE);
	CHECK_EQ(rxp_lpm6_add(lpm, p.b, 64, 1), 0);
	rxp_lpm6_memory(lpm, &resident);
	CHECK(resident > empty);
	CHECK(resident <= empty + ((size_t)8 << 20));
	rxp_lpm6_destroy(lpm);
}

/* As random4(), for IPv6. */
static void random6(uint32_t max_groups, unsigned n_ops, uint64_t seed)
{
	struct rxp_lpm6 *lpm = rxp_lpm6_create(REF_MAX, max_groups);
	unsigned n_full = 0;
	int bad = 0;

	CHECK(lpm != NULL);
	if (!lpm)
		return;
	rng_seed(seed);
	n_ref6 = 0;
	for (unsigned op = 0; op < n_ops && !bad; op++) {
		uint32_t r = rnd_below(100);

		if (r < 55 || n_ref6 == 0) {
			unsigned len = rnd_len6();
			struct a6 a = rnd_addr6(), p = a6_mask(&a, len, false);
			uint32_t nh = rnd_below(RXP_LPM_NH_MAX);
			int i = ref6_find(&p, len);
			/* host bits set on purpose: the table ignores them */
			int ret = rxp_lpm6_add(lpm, a.b, (uint8_t)len, nh);

			if (ret == -ENOSPC && max_groups && i < 0 && len > 24) {
				n_full++;
				continue;
			}
			CHECK_EQ(ret, 0);
			if (i >= 0) {
				ref6[i].nh = nh;
			} else {
				ref6_set(n_ref6++, &p, len, nh);
			}
		} else if (r < 70) {
			unsigned i = rnd_below(n_ref6);

			ref6[i].nh = rnd_below(RXP_LPM_NH_MAX);
			CHECK_EQ(rxp_lpm6_add(lpm, ref6[i].prefix.b, ref6[i].len, ref6[i].nh), 0);
		} else if (r < 97) {
			unsigned i = rnd_below(n_ref6);

			CHECK_EQ(rxp_lpm6_del(lpm, ref6[i].prefix.b, ref6[i].len), 0);
			ref6[i] = ref6[--n_ref6];
		} else {
			unsigned len = rnd_len6();
			struct a6 a = rnd_addr6(), p = a6_mask(&a, len, false);
			int i = ref6_find(&p, len);

			CHECK_EQ(rxp_lpm6_del(lpm, a.b, (uint8_t)len), i < 0 ? -ENOENT : 0);
			if (i >= 0)
				ref6[i] = ref6[--n_ref6];
		}
		CHECK_EQ(rxp_lpm6_count(lpm), n_ref6);
		if (op % (max_groups ? 97 : 997) == 0)
			rxp_lpm6_reclaim(lpm);
		if (op % 250 == 0) {
			for (unsigned k = 0; k < 200 && !bad; k++) {
				struct a6 a = rnd_addr6();

				bad += check6_at(lpm, &a);
			}
		}
		if (op % 2000 == 1999)
			bad += check6_all(lpm, 1000);
	}
	CHECK_EQ(bad, 0);
	bad = check6_all(lpm, 3000);
	CHECK_EQ(bad, 0);

	while (n_ref6 && !bad) {
		unsigned i = rnd_below(n_ref6);

		CHECK_EQ(rxp_lpm6_del(lpm, ref6[i].prefix.b, ref6[i].len), 0);
		ref6[i] = ref6[--n_ref6];
		if (n_ref6 % 128 == 0)
			bad += check6_all(lpm, 200);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(rxp_lpm6_count(lpm), 0);
	CHECK_EQ(rxp_lpm6_groups_used(lpm), 0);
	for (unsigned k = 0; k < 1000; k++) {
		struct a6 a = rnd_addr6();

		CHECK_EQ(look6(lpm, &a), RXP_LPM_NO_ROUTE);
	}
	if (max_groups)
		CHECK(n_full > 10);
	rxp_lpm6_destroy(lpm);
}

static void test_lpm6_random(void)
{
	random6(0, 15000, SEED + 2);
}

static void test_lpm6_random_few_groups(void)
{
	random6(150, 3000, SEED + 12);
}

static void test_lpm6_bulk(void)
{
	struct rxp_lpm6 *lpm = rxp_lpm6_create(4096, 0);
	enum { N = 1000 };
	static uint8_t addrs[N][16];
	static uint32_t nhs[N];
	int bad = 0;

	CHECK(lpm != NULL);
	if (!lpm)
		return;
	rng_seed(SEED + 3);
	for (unsigned i = 0; i < 3000; i++) {
		struct a6 a = rnd_addr6();

		CHECK_EQ(rxp_lpm6_add(lpm, a.b, (uint8_t)rnd_len6(), i), 0);
	}
	for (int with_default = 0; with_default < 2; with_default++) {
		if (with_default)
			CHECK_EQ(rxp_lpm6_add(lpm, addrs[0], 0, 4242), 0);
		for (unsigned i = 0; i < N; i++) {
			struct a6 a = rnd_addr6();

			memcpy(addrs[i], a.b, 16);
		}
		rxp_lpm6_prefetch(lpm, addrs[0]);	/* a hint only */
		for (unsigned n = 0; n <= N; n += n < 70 ? 1 : 331) {
			memset(nhs, 0xaa, sizeof(nhs));
			rxp_lpm6_lookup_bulk(lpm, (const uint8_t (*)[16])addrs, nhs, n);
			for (unsigned i = 0; i < n; i++) {
				struct a6 a;

				memcpy(a.b, addrs[i], 16);
				bad += nhs[i] != look6(lpm, &a);
			}
			for (unsigned i = n; i < N; i++)
				bad += nhs[i] != 0xaaaaaaaau;
		}
	}
	CHECK_EQ(bad, 0);
	rxp_lpm6_destroy(lpm);
}

/* ---- a reader racing the writer ---- */

#define RACE_SECONDS 0.4
#define STABLE_NH 7u
#define SPECIFIC_NH 100u	/* + prefix length: routes covering the probe */
#define FOREIGN_NH 5000u	/* + k: routes elsewhere, to churn and reuse groups */

struct race {
	struct rxp_lpm4 *lpm4;
	struct rxp_lpm6 *lpm6;
	uint32_t probe4;
	struct a6 probe6;
	unsigned min_len, max_len;	/* specific routes cover the probe with these lengths */
	_Atomic uint64_t reads;		/* lookups finished: the reader's quiescent points */
	_Atomic uint64_t bad;
	_Atomic uint32_t last_bad;
	_Atomic bool stop;
};

static bool race_nh_ok(const struct race *rc, int ret, uint32_t nh)
{
	return ret == 0 && (nh == STABLE_NH ||
			    (nh >= SPECIFIC_NH + rc->min_len && nh <= SPECIFIC_NH + rc->max_len));
}

static void *race_reader(void *arg)
{
	struct race *rc = arg;
	uint32_t addrs[4], nhs[4];
	uint8_t addrs6[4][16];

	for (unsigned i = 0; i < 4; i++) {
		addrs[i] = rc->probe4;
		memcpy(addrs6[i], rc->probe6.b, 16);
	}
	while (!atomic_load(&rc->stop)) {
		uint32_t nh = 0;
		int ret;
		bool ok = true;

		if (rc->lpm4) {
			ret = rxp_lpm4_lookup(rc->lpm4, rc->probe4, &nh);
			ok = race_nh_ok(rc, ret, nh);
			rxp_lpm4_lookup_bulk(rc->lpm4, addrs, nhs, 4);
		} else {
			ret = rxp_lpm6_lookup(rc->lpm6, rc->probe6.b, &nh);
			ok = race_nh_ok(rc, ret, nh);
			rxp_lpm6_lookup_bulk(rc->lpm6, (const uint8_t (*)[16])addrs6, nhs, 4);
		}
		for (unsigned i = 0; i < 4; i++)
			ok &= race_nh_ok(rc, 0, nhs[i]);
		if (!ok) {
			atomic_fetch_add(&rc->bad, 1);
			atomic_store(&rc->last_bad, ret ? RXP_LPM_NO_ROUTE : nh);
		}
		/* quiescent point: no lookup in progress (seq_cst: partner of the writer's fence) */
		atomic_fetch_add(&rc->reads, 1);
	}
	return NULL;
}

/* Waits until the reader has finished every lookup that could see what was just retired. */
static void race_grace(struct race *rc)
{
	uint64_t seen;

	atomic_thread_fence(memory_order_seq_cst);
	seen = atomic_load(&rc->reads);
	while (atomic_load(&rc->reads) == seen)
		sched_yield();
}

/*
 * Adds or deletes route @k: a specific route (length k, covering the probe),
 * or foreign route k: one that differs from the probe in its last bit, or a
 * long route in another block (so other groups are made and freed).
 */
static int race_add(struct race *rc, unsigned k, bool specific, bool add)
{
	uint32_t nh = specific ? SPECIFIC_NH + k : FOREIGN_NH + k;

	if (rc->lpm4) {
		uint32_t p = rc->probe4;
		unsigned len = k;

		if (!specific && k % 2) {
			len = 9 + (k * 5) % 24;
			p ^= 1u << (32 - len);
		} else if (!specific) {
			len = 25 + k % 8;
			p ^= (k / 2 + 1) << 8;
		}
		p &= mask4(len);
		return add ? rxp_lpm4_add(rc->lpm4, p, (uint8_t)len, nh)
			   : rxp_lpm4_del(rc->lpm4, p, (uint8_t)len);
	} else {
		struct a6 p = rc->probe6;
		unsigned len = k;

		if (!specific && k % 2) {
			len = 33 + (k * 7) % 96;
			p.b[(len - 1) / 8] ^= (uint8_t)(0x80 >> ((len - 1) % 8));
		} else if (!specific) {
			len = 64 + (k * 11) % 65;
			p.b[3 + k % 5] ^= 0xff;
		}
		return add ? rxp_lpm6_add(rc->lpm6, p.b, (uint8_t)len, nh)
			   : rxp_lpm6_del(rc->lpm6, p.b, (uint8_t)len);
	}
}

static void race_run(struct race *rc)
{
	enum { N_FOREIGN = 24 };
	bool specific_on[129] = { false }, foreign_on[N_FOREIGN] = { false };
	pthread_t reader;
	double t_end, t_max;
	uint64_t ops = 0, reclaims = 0;

	rng_seed(SEED + 4);
	atomic_store(&rc->reads, 0);
	atomic_store(&rc->bad, 0);
	atomic_store(&rc->stop, false);
	CHECK_EQ(pthread_create(&reader, NULL, race_reader, rc), 0);
	t_end = now_s() + RACE_SECONDS;
	t_max = t_end + 20 * RACE_SECONDS;
	/* a loaded machine slows the grace periods: run until enough happened, within a bound */
	while (now_s() < t_end || ((ops <= 2000 || reclaims <= 20) && now_s() < t_max)) {
		for (unsigned burst = 0; burst < 16; burst++) {
			bool specific = rnd_below(3) != 0;
			unsigned k = specific ? rc->min_len + rnd_below(rc->max_len - rc->min_len + 1)
					      : rnd_below(N_FOREIGN);
			bool *on = specific ? &specific_on[k] : &foreign_on[k];
			int ret = race_add(rc, k, specific, !*on);

			/* groups are scarce on purpose: an add may not fit */
			if (ret == 0)
				*on = !*on;
			else
				CHECK_EQ(ret, -ENOSPC);
			ops++;
		}
		race_grace(rc);
		reclaims += rc->lpm4 ? rxp_lpm4_reclaim(rc->lpm4) : rxp_lpm6_reclaim(rc->lpm6);
	}
	atomic_store(&rc->stop, true);
	pthread_join(reader, NULL);
	if (atomic_load(&rc->bad))
		printf("  race: %" PRIu64 " bad lookups of %" PRIu64 " (last nh %u)\n",
		       (uint64_t)atomic_load(&rc->bad), (uint64_t)atomic_load(&rc->reads),
		       atomic_load(&rc->last_bad));
	CHECK_EQ(atomic_load(&rc->bad), 0);
	CHECK(atomic_load(&rc->reads) > 1000);
	CHECK(ops > 1000);
	CHECK(reclaims > 10);	/* groups really were reused under the reader */
}

static void test_lpm4_concurrent(void)
{
	static struct race rc;

	memset(&rc, 0, sizeof(rc));
	rc.lpm4 = rxp_lpm4_create(256, 6);
	CHECK(rc.lpm4 != NULL);
	if (!rc.lpm4)
		return;
	rc.probe4 = ip4(10, 1, 2, 3);
	rc.min_len = 9;
	rc.max_len = 32;
	CHECK_EQ(rxp_lpm4_add(rc.lpm4, ip4(10, 0, 0, 0), 8, STABLE_NH), 0);
	race_run(&rc);
	CHECK_EQ(look4(rc.lpm4, rc.probe4) == STABLE_NH ||
		 look4(rc.lpm4, rc.probe4) >= SPECIFIC_NH + 9, 1);
	rxp_lpm4_destroy(rc.lpm4);
}

static void test_lpm6_concurrent(void)
{
	static struct race rc;

	memset(&rc, 0, sizeof(rc));
	rc.lpm6 = rxp_lpm6_create(256, 40);
	CHECK(rc.lpm6 != NULL);
	if (!rc.lpm6)
		return;
	rc.probe6 = a6_make(0x20010db8a5a5c3c3ull, 0x0123456789abcdefull);
	rc.min_len = 33;
	rc.max_len = 128;
	{
		struct a6 p = a6_mask(&rc.probe6, 32, false);

		CHECK_EQ(rxp_lpm6_add(rc.lpm6, p.b, 32, STABLE_NH), 0);
	}
	race_run(&rc);
	rxp_lpm6_destroy(rc.lpm6);
}

int main(void)
{
	RUN(test_lpm4_edges);
	RUN(test_lpm4_errors);
	RUN(test_lpm4_memory);
	RUN(test_lpm4_random);
	RUN(test_lpm4_random_few_groups);
	RUN(test_lpm4_bulk);
	RUN(test_lpm4_concurrent);
	RUN(test_lpm6_edges);
	RUN(test_lpm6_errors);
	RUN(test_lpm6_memory);
	RUN(test_lpm6_random);
	RUN(test_lpm6_random_few_groups);
	RUN(test_lpm6_bulk);
	RUN(test_lpm6_concurrent);
	return tests_done();
}
