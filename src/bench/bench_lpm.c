/* SPDX-License-Identifier: MIT */
/*
 * rxpath bench lpm: how fast the FIB answers, how much memory it takes and
 * how long it takes to build.
 *
 * Builds an IPv4 table of random prefixes with a BGP-like length mix and an
 * IPv6 table shaped like the IPv6 Internet (holders' /29-/32 blocks in the
 * RIR ranges, mostly /48 and /32-/64 more-specifics), from a seeded PRNG so
 * that runs repeat. Then looks up a precomputed array of addresses (it
 * streams from memory sequentially, the table is what misses) one at a time
 * and in bursts through lookup_bulk, several repetitions interleaved, and
 * reports the median ns per lookup with the spread.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rxpath/args.h"
#include "rxpath/lpm4.h"
#include "rxpath/lpm6.h"
#include "bench.h"
#include "bench_lpm.h"
#include "core/clock.h"
#include "core/fmt.h"

#define REPS_MAX 51
#define PREFIXES4_MAX (1u << 22)
#define PREFIXES6_MAX (1u << 20)
#define LOOKUPS_MAX (1u << 28)
#define BURST_MAX 256u

struct lpm_opts {
	uint32_t prefixes4;
	uint32_t prefixes6;
	uint32_t lookups;	/* IPv4 addresses; IPv6 gets a quarter (same bytes) */
	unsigned reps;
	unsigned burst;
	uint64_t seed;
	bool json;
};

/* One row of the report. */
struct lpm_row {
	const char *family;	/* "ipv4", "ipv6" */
	const char *mode;	/* "single", "bulk" */
	unsigned burst;		/* addresses per call */
	uint32_t prefixes;	/* routes in the table */
	uint32_t lookups;	/* per repetition */
	unsigned reps;
	double ns, ns_min, ns_max, spread_pct;
	double hit_pct;
	double build_s;
	size_t bytes;		/* allocated (rxp_lpm*_memory) */
	size_t resident;	/* in memory, by mincore */
	size_t rss_delta;	/* growth of the process's resident set over the build */
	size_t huge;		/* bytes of the first-level table on huge pages */
	uint32_t groups;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rxpath bench lpm [OPTIONS]\n"
		"\n"
		"Measures the longest-prefix-match tables: lookups one at a time and in bursts\n"
		"(lookup_bulk), table memory and build time.\n"
		"\n"
		"IPv4 table: random prefixes in 1.0.0.0-223.255.255.255 with lengths mixed like the\n"
		"BGP table: /24 60.5%%, /23 10%%, /22 11.5%%, /21 5%%, /20 4.3%%, /19 2.6%%,\n"
		"/18 1.4%%, /17 0.9%%, /16 1.4%%, /8-/15 0.4%% (about 20 /8s per million),\n"
		"/25-/32 2%%. Lookups: uniformly random 32-bit addresses.\n"
		"IPv6 table: holders' /32 (1 in 10: /29) blocks in 2001::/16, 2400::/12, 2600::/12,\n"
		"2800::/12, 2a00::/12, 2c00::/12, one holder per 4 routes; routes are /48 45%%,\n"
		"the holder's block 15%%, /33-/40 8%%, /41-/47 12%%, /49-/64 17%%, /65-/128 3%%,\n"
		"numbered mostly from the start of the holder's block. Lookups: 9 in 10 inside a\n"
		"random route (host bits random), 1 in 10 random in 2000::/3.\n"
		"\n"
		"Modes: single (rxp_lpm*_lookup per address), bulk (rxp_lpm*_lookup_bulk per\n"
		"burst) and, for IPv4, floor: one prefetched load of the first-level entry per\n"
		"address and nothing else, the memory-bound limit for a DIR-24-8 lookup here.\n"
		"\n"
		"  --prefixes4 N   IPv4 routes (default 1000000; 0 skips IPv4)\n"
		"  --prefixes6 N   IPv6 routes (default 100000; 0 skips IPv6)\n"
		"  --lookups N     IPv4 addresses per pass (default 16777216; IPv6 uses N/4)\n"
		"  --reps N        repetitions of every measurement (default 5)\n"
		"  --burst N       addresses per lookup_bulk call (default 64)\n"
		"  --seed N        PRNG seed (default 1)\n"
		"  --json          print one JSON array on stdout\n");
}

/* ---- a seeded PRNG ---- */

static uint64_t rng;

static uint64_t rnd64(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(((rnd64() >> 32) * n) >> 32);
}

/* Picks an index by weight (the weights sum to @total). */
static unsigned pick(const uint16_t *weights, unsigned n, uint32_t total)
{
	uint32_t r = rnd_below(total);

	for (unsigned i = 0; i < n; i++) {
		if (r < weights[i])
			return i;
		r -= weights[i];
	}
	return n - 1;
}

/* ---- measuring helpers ---- */

static size_t statm_resident(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size, res = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

/* Returns the AnonHugePages bytes of the mapping that holds @addr (0 if unknown). */
static size_t huge_bytes_at(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	uintptr_t a = (uintptr_t)addr;
	bool inside = false;
	char line[512];
	size_t kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, v;

		/* a mapping's header line: "start-end perms ..." */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			inside = a >= start && a < end;
		} else if (inside && sscanf(line, "AnonHugePages: %lu kB", &v) == 1) {
			kb = v;
			break;
		}
	}
	fclose(f);
	return kb << 10;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void summarize(struct lpm_row *r, const double *samples, unsigned n)
{
	double s[REPS_MAX];

	memcpy(s, samples, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	r->ns = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	r->ns_min = s[0];
	r->ns_max = s[n - 1];
	r->spread_pct = r->ns > 0 ? (r->ns_max - r->ns_min) / 2 / r->ns * 100 : 0;
	r->reps = n;
}

static void progress(const char *family, uint32_t done, uint32_t total, bool tty)
{
	char a[32], b[32];

	if (tty)
		fprintf(stderr, "\rbench lpm: %s: building %s of %s prefixes", family,
			fmt_count(a, sizeof(a), done), fmt_count(b, sizeof(b), total));
	else if (done == 0)
		fprintf(stderr, "bench lpm: %s: building %s prefixes\n", family,
			fmt_count(b, sizeof(b), total));
}

static void progress_done(bool tty)
{
	if (tty)
		fprintf(stderr, "\r%-70s\r", "");
}

/* ---- IPv4 ---- */

/* Lengths /8 .. /32 per 100,000 routes, after the shape of the IPv4 BGP table. */
static const uint16_t len4_weight[] = {
	/* 8..15 */ 2, 2, 4, 10, 30, 60, 110, 190,
	/* 16..24 */ 1400, 900, 1400, 2600, 4300, 5000, 11500, 10000, 60492,
	/* 25..32 */ 500, 400, 300, 250, 200, 150, 50, 150,
};

static void gen_prefix4(uint32_t *prefix, uint8_t *len)
{
	unsigned l = 8 + pick(len4_weight, RXP_ARRAY_SIZE(len4_weight), 100000);
	/* 1.0.0.0 .. 223.255.255.255 */
	uint32_t a = (uint32_t)(0x01000000ull + (rnd64() >> 32) % (0xe0000000ull - 0x01000000ull));

	*len = (uint8_t)l;
	*prefix = a & (~0u << (32 - l));
}

enum { MODE_SINGLE, MODE_BULK, MODE_FLOOR, MODES4 };

static const char *const mode_names[MODES4] = { "single", "bulk", "floor" };

/* One pass of single lookups. Returns a sum of the results; counts hits in *hits. */
static uint64_t pass4_single(const struct rxp_lpm4 *lpm, const uint32_t *addrs, uint32_t n,
			     uint64_t *hits)
{
	uint64_t sum = 0, hit = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t nh;

		if (rxp_lpm4_lookup(lpm, addrs[i], &nh) == 0) {
			sum += nh;
			hit++;
		} else {
			sum += RXP_LPM_NO_ROUTE;
		}
	}
	*hits = hit;
	return sum;
}

/* One pass of lookup_bulk calls of @burst addresses. Returns a sum of the results. */
static uint64_t pass4_bulk(const struct rxp_lpm4 *lpm, const uint32_t *addrs, uint32_t *nhs,
			   uint32_t n, unsigned burst)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i += burst) {
		unsigned m = RXP_MIN(burst, n - i);

		rxp_lpm4_lookup_bulk(lpm, addrs + i, nhs, m);
		for (unsigned j = 0; j < m; j++)
			sum += nhs[j];
	}
	return sum;
}

/*
 * The memory floor: one load of the first-level entry per address, in bursts
 * and prefetched ahead like lookup_bulk, with nothing else. What bulk costs
 * above this is the LPM's own work. Returns a sum of the entries.
 */
static uint64_t pass4_floor(const struct rxp_lpm4 *lpm, const uint32_t *addrs, uint32_t n,
			    unsigned burst)
{
	enum { AHEAD = 24 };
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i += burst) {
		unsigned m = RXP_MIN(burst, n - i);
		const uint32_t *a = addrs + i;

		for (unsigned j = 0; j < m && j < AHEAD; j++)
			rxp_lpm4_prefetch(lpm, a[j]);
		for (unsigned j = 0; j < m; j++) {
			if (j + AHEAD < m)
				rxp_lpm4_prefetch(lpm, a[j + AHEAD]);
			sum += atomic_load_explicit(&lpm->tbl24[a[j] >> 8], memory_order_relaxed);
		}
	}
	return sum;
}

/* Runs the IPv4 measurements; fills MODES4 rows. Returns 0 or -errno. */
static int bench4(const struct lpm_opts *o, struct lpm_row *rows, bool tty)
{
	uint32_t *addrs = NULL, *nhs = NULL;
	struct rxp_lpm4 *lpm;
	double samples[MODES4][REPS_MAX], t0;
	size_t rss0, resident;
	uint64_t hits = 0, sink = 0;
	uint32_t n = o->lookups, made = 0;
	int ret = -ENOMEM;

	rng = o->seed;
	rss0 = statm_resident();
	/* 2% of the routes are longer than /24: room for 1 group in 8 routes is plenty */
	lpm = rxp_lpm4_create(o->prefixes4, o->prefixes4 / 8 + 256);
	if (!lpm)
		return -errno;
	progress("ipv4", 0, o->prefixes4, tty);
	t0 = rxp_clock_seconds();
	/* random prefixes repeat now and then (a replace): go on until there are N */
	while (rxp_lpm4_count(lpm) < o->prefixes4) {
		uint32_t prefix;
		uint8_t len;

		gen_prefix4(&prefix, &len);
		ret = rxp_lpm4_add(lpm, prefix, len, made++ % RXP_LPM_NH_MAX);
		if (ret)
			goto out;
		if (tty && made % 65536 == 0)
			progress("ipv4", rxp_lpm4_count(lpm), o->prefixes4, tty);
	}
	rows[0].build_s = rxp_clock_seconds() - t0;
	progress_done(tty);
	rows[0].rss_delta = statm_resident() - rss0;
	rows[0].bytes = rxp_lpm4_memory(lpm, &resident);
	rows[0].resident = resident;
	rows[0].huge = huge_bytes_at((const void *)lpm->tbl24);
	rows[0].groups = rxp_lpm4_groups_used(lpm);

	ret = -ENOMEM;
	addrs = malloc((size_t)n * sizeof(*addrs));
	nhs = malloc(BURST_MAX * sizeof(*nhs));
	if (!addrs || !nhs)
		goto out;
	for (uint32_t i = 0; i < n; i++)
		addrs[i] = (uint32_t)(rnd64() >> 32);

	for (unsigned rep = 0; rep <= o->reps; rep++) {
		/* rep 0 warms up; the order rotates so no mode always goes first */
		for (unsigned k = 0; k < MODES4; k++) {
			unsigned mode = (k + rep) % MODES4;
			uint64_t sum = 0, hit = 0;
			double t;

			t0 = rxp_clock_seconds();
			if (mode == MODE_SINGLE)
				sum = pass4_single(lpm, addrs, n, &hit);
			else if (mode == MODE_BULK)
				sum = pass4_bulk(lpm, addrs, nhs, n, o->burst);
			else
				sum = pass4_floor(lpm, addrs, n, o->burst);
			t = (rxp_clock_seconds() - t0) * 1e9 / n;
			sink ^= sum;
			if (rep == 0) {
				if (mode == MODE_SINGLE)
					hits = hit;
				continue;
			}
			samples[mode][rep - 1] = t;
		}
	}
	if (sink == 0x5a5a5a5a)	/* keep the results alive */
		fprintf(stderr, " ");
	for (unsigned k = 0; k < MODES4; k++) {
		struct lpm_row *r = &rows[k];

		if (k)
			*r = rows[0];
		r->family = "ipv4";
		r->mode = mode_names[k];
		r->burst = k == MODE_SINGLE ? 1 : o->burst;
		r->prefixes = rxp_lpm4_count(lpm);
		r->lookups = n;
		r->hit_pct = 100.0 * (double)hits / n;
		summarize(r, samples[k], o->reps);
	}
	ret = 0;
out:
	progress_done(tty);
	free(nhs);
	free(addrs);
	rxp_lpm4_destroy(lpm);
	return ret;
}

/* ---- IPv6 ---- */

struct holder {
	uint64_t hi;		/* the block, top 64 bits */
	uint8_t len;		/* 29 or 32 */
};

struct route6 {
	uint64_t hi, lo;
	uint8_t len;
};

static const struct {
	uint64_t prefix;	/* top 16 bits, in the top of a 64-bit word */
	unsigned len;
	uint16_t weight;	/* per mille */
} regions6[] = {
	{ 0x2001ull << 48, 16, 200 },
	{ 0x2400ull << 48, 12, 200 },
	{ 0x2600ull << 48, 12, 200 },
	{ 0x2800ull << 48, 12, 100 },
	{ 0x2a00ull << 48, 12, 250 },
	{ 0x2c00ull << 48, 12, 50 },
};

/* Route lengths: /48, the holder's block, /33-40, /41-47, /49-64, /65-128. */
static const uint16_t len6_weight[] = { 450, 150, 80, 120, 170, 30 };

static uint64_t mask64(unsigned bits)
{
	return bits >= 64 ? ~0ull : bits ? ~0ull << (64 - bits) : 0;
}

static struct holder gen_holder(void)
{
	uint16_t w[RXP_ARRAY_SIZE(regions6)];
	struct holder h;
	unsigned r;

	for (unsigned i = 0; i < RXP_ARRAY_SIZE(regions6); i++)
		w[i] = regions6[i].weight;
	r = pick(w, RXP_ARRAY_SIZE(regions6), 1000);
	h.len = rnd_below(10) ? 32 : 29;
	h.hi = (regions6[r].prefix | (rnd64() & ~mask64(regions6[r].len))) & mask64(h.len);
	return h;
}

/* A subnet number below a holder's block: mostly small (numbered from the start), sometimes any. */
static uint64_t subnet_bits(unsigned bits)
{
	uint64_t v = rnd64();

	if (bits < 64 && rnd_below(10) < 7)
		v %= 64;
	return bits >= 64 ? v : v & ((1ull << bits) - 1);
}

static struct route6 gen_route6(const struct holder *h)
{
	struct route6 r = { h->hi, 0, h->len };
	unsigned len, k = pick(len6_weight, RXP_ARRAY_SIZE(len6_weight), 1000);

	switch (k) {
	case 0: len = 48; break;
	case 1: len = h->len; break;
	case 2: len = 33 + rnd_below(8); break;
	case 3: len = 41 + rnd_below(7); break;
	case 4: len = 49 + rnd_below(16); break;
	default: len = 65 + rnd_below(64); break;
	}
	r.len = (uint8_t)len;
	if (len > h->len) {
		/* the subnet number sits right after the holder's block, up to bit 64 */
		unsigned sub = RXP_MIN(len, 64u) - h->len;

		r.hi |= subnet_bits(sub) << (64 - RXP_MIN(len, 64u));
		if (len < 64)
			r.hi &= mask64(len);
		if (len > 64)
			r.lo = rnd64() & mask64(len - 64);
	}
	return r;
}

static void put6(uint8_t out[16], uint64_t hi, uint64_t lo)
{
	for (int i = 0; i < 8; i++) {
		out[i] = (uint8_t)(hi >> (56 - 8 * i));
		out[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
}

/* Runs the IPv6 measurements; fills two rows. Returns 0 or -errno. */
static int bench6(const struct lpm_opts *o, struct lpm_row *rows, bool tty)
{
	uint32_t n = RXP_MAX(o->lookups / 4, 1u), n_holders = RXP_MAX(o->prefixes6 / 4, 1u);
	struct holder *holders = NULL;
	struct route6 *routes = NULL;
	uint8_t (*addrs)[16] = NULL;
	uint32_t *nhs = NULL, n_routes = 0;
	struct rxp_lpm6 *lpm;
	double single[REPS_MAX], bulk[REPS_MAX], t0;
	size_t rss0, resident;
	uint64_t hits = 0, sink = 0;
	int ret = -ENOMEM;

	rng = o->seed + 6;
	rss0 = statm_resident();
	lpm = rxp_lpm6_create(o->prefixes6, 0);
	if (!lpm)
		return -errno;
	holders = malloc((size_t)n_holders * sizeof(*holders));
	routes = malloc((size_t)o->prefixes6 * sizeof(*routes));
	if (!holders || !routes)
		goto out;
	for (uint32_t i = 0; i < n_holders; i++)
		holders[i] = gen_holder();
	progress("ipv6", 0, o->prefixes6, tty);
	t0 = rxp_clock_seconds();
	while (rxp_lpm6_count(lpm) < o->prefixes6) {
		struct route6 r = gen_route6(&holders[rnd_below(n_holders)]);
		uint32_t before = rxp_lpm6_count(lpm);
		uint8_t p[16];

		put6(p, r.hi, r.lo);
		ret = rxp_lpm6_add(lpm, p, r.len, n_routes % RXP_LPM_NH_MAX);
		if (ret)
			goto out;
		if (rxp_lpm6_count(lpm) != before)
			routes[n_routes++] = r;
		if (tty && n_routes % 16384 == 0)
			progress("ipv6", n_routes, o->prefixes6, tty);
	}
	rows[0].build_s = rxp_clock_seconds() - t0;
	progress_done(tty);
	rows[0].rss_delta = statm_resident() - rss0;
	rows[0].bytes = rxp_lpm6_memory(lpm, &resident);
	rows[0].resident = resident;
	rows[0].huge = huge_bytes_at((const void *)lpm->tbl24);
	rows[0].groups = rxp_lpm6_groups_used(lpm);

	ret = -ENOMEM;
	addrs = malloc((size_t)n * sizeof(*addrs));
	nhs = malloc(BURST_MAX * sizeof(*nhs));
	if (!addrs || !nhs)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		if (rnd_below(10)) {
			const struct route6 *r = &routes[rnd_below(n_routes)];

			put6(addrs[i], r->hi | (rnd64() & ~mask64(r->len)),
			     r->lo | (rnd64() & ~mask64(r->len > 64 ? r->len - 64u : 0)));
		} else {
			put6(addrs[i], (rnd64() >> 3) | 0x2000000000000000ull, rnd64());
		}
	}

	for (unsigned rep = 0; rep <= o->reps; rep++) {
		for (unsigned k = 0; k < 2; k++) {
			bool is_bulk = (k + rep) % 2;
			uint64_t sum = 0, hit = 0;
			double t;

			t0 = rxp_clock_seconds();
			if (is_bulk) {
				for (uint32_t i = 0; i < n; i += o->burst) {
					unsigned m = RXP_MIN(o->burst, n - i);

					rxp_lpm6_lookup_bulk(lpm, (const uint8_t (*)[16])(addrs + i),
							     nhs, m);
					for (unsigned j = 0; j < m; j++)
						sum += nhs[j];
				}
			} else {
				for (uint32_t i = 0; i < n; i++) {
					uint32_t nh;

					if (rxp_lpm6_lookup(lpm, addrs[i], &nh) == 0) {
						sum += nh;
						hit++;
					} else {
						sum += RXP_LPM_NO_ROUTE;
					}
				}
			}
			t = (rxp_clock_seconds() - t0) * 1e9 / n;
			sink ^= sum;
			if (rep == 0) {
				if (!is_bulk)
					hits = hit;
				continue;
			}
			(is_bulk ? bulk : single)[rep - 1] = t;
		}
	}
	if (sink == 0x5a5a5a5a)
		fprintf(stderr, " ");
	for (int k = 0; k < 2; k++) {
		struct lpm_row *r = &rows[k];

		if (k)
			*r = rows[0];
		r->family = "ipv6";
		r->mode = k ? "bulk" : "single";
		r->burst = k ? o->burst : 1;
		r->prefixes = rxp_lpm6_count(lpm);
		r->lookups = n;
		r->hit_pct = 100.0 * (double)hits / n;
		summarize(r, k ? bulk : single, o->reps);
	}
	ret = 0;
out:
	progress_done(tty);
	free(nhs);
	free(addrs);
	free(routes);
	free(holders);
	rxp_lpm6_destroy(lpm);
	return ret;
}

/* ---- report ---- */

static double mib(size_t b)
{
	return (double)b / (1 << 20);
}

static void print_table(const struct lpm_row *rows, unsigned n, const struct lpm_opts *o)
{
	char buf[32];

	printf("rxpath bench lpm: %u repetitions, medians; spread = (max-min)/2 as %% of median\n",
	       o->reps);
	printf("floor = one prefetched load of the first-level entry per address, nothing else\n");
	printf("memory: alloc = mapped + heap, resident = pages in memory (mincore), rss+ = growth\n"
	       "of the process over the build, huge = first-level table on 2 MiB pages\n\n");
	printf("%-6s %11s %-6s %5s %9s %9s %7s %6s\n", "family", "prefixes", "mode", "burst",
	       "ns/lookup", "Mlookup/s", "spread", "hit%");
	for (unsigned i = 0; i < n; i++) {
		const struct lpm_row *r = &rows[i];

		printf("%-6s %11s %-6s %5u %9.2f %9.1f %6.1f%% %5.1f%%\n", r->family,
		       fmt_count(buf, sizeof(buf), r->prefixes), r->mode, r->burst, r->ns,
		       r->ns > 0 ? 1e3 / r->ns : 0, r->spread_pct, r->hit_pct);
	}
	printf("\n%-6s %11s %8s %9s %9s %9s %9s %8s\n", "family", "prefixes", "build s", "alloc MiB",
	       "resid MiB", "rss+ MiB", "huge MiB", "groups");
	for (unsigned i = 0; i < n; i++) {
		const struct lpm_row *r = &rows[i];

		if (i && !strcmp(r->family, rows[i - 1].family))
			continue;	/* one line per table */

		printf("%-6s %11s %8.3f %9.1f %9.1f %9.1f %9.1f %8u\n", r->family,
		       fmt_count(buf, sizeof(buf), r->prefixes), r->build_s, mib(r->bytes),
		       mib(r->resident), mib(r->rss_delta), mib(r->huge), r->groups);
	}
}

static void print_json(const struct lpm_row *rows, unsigned n)
{
	printf("[");
	for (unsigned i = 0; i < n; i++) {
		const struct lpm_row *r = &rows[i];

		printf("%s\n  {\"family\":\"%s\",\"mode\":\"%s\",\"burst\":%u,\"prefixes\":%u,"
		       "\"lookups\":%u,\"reps\":%u,\"ns_per_lookup\":%.3f,\"ns_min\":%.3f,"
		       "\"ns_max\":%.3f,\"spread_pct\":%.2f,\"hit_pct\":%.2f,\"build_s\":%.4f,"
		       "\"bytes\":%zu,\"resident_bytes\":%zu,\"rss_delta_bytes\":%zu,"
		       "\"hugepage_bytes\":%zu,\"groups\":%u}",
		       i ? "," : "", r->family, r->mode, r->burst, r->prefixes, r->lookups, r->reps,
		       r->ns, r->ns_min, r->ns_max, r->spread_pct, r->hit_pct, r->build_s, r->bytes,
		       r->resident, r->rss_delta, r->huge, r->groups);
	}
	printf("\n]\n");
}

int cmd_bench_lpm(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "prefixes4", required_argument, NULL, '4' },
		{ "prefixes6", required_argument, NULL, '6' },
		{ "lookups", required_argument, NULL, 'l' },
		{ "reps", required_argument, NULL, 'r' },
		{ "burst", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct lpm_opts o = {
		.prefixes4 = 1000000, .prefixes6 = 100000, .lookups = 1u << 24, .reps = 5,
		.burst = 64, .seed = 1,
	};
	struct lpm_row rows[MODES4 + 2];
	bool tty = isatty(STDERR_FILENO);
	unsigned n_rows = 0;
	uint64_t v;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case '4':
			if (bench_opt_u64("rxpath bench lpm", "prefixes4", optarg, 0, PREFIXES4_MAX, &v))
				return 2;
			o.prefixes4 = (uint32_t)v;
			break;
		case '6':
			if (bench_opt_u64("rxpath bench lpm", "prefixes6", optarg, 0, PREFIXES6_MAX, &v))
				return 2;
			o.prefixes6 = (uint32_t)v;
			break;
		case 'l':
			if (bench_opt_u64("rxpath bench lpm", "lookups", optarg, 1024, LOOKUPS_MAX, &v))
				return 2;
			o.lookups = (uint32_t)v;
			break;
		case 'r':
			if (bench_opt_u64("rxpath bench lpm", "reps", optarg, 1, REPS_MAX, &v))
				return 2;
			o.reps = (unsigned)v;
			break;
		case 'b':
			if (bench_opt_u64("rxpath bench lpm", "burst", optarg, 1, BURST_MAX, &v))
				return 2;
			o.burst = (unsigned)v;
			break;
		case 's':
			if (bench_opt_u64("rxpath bench lpm", "seed", optarg, 0, UINT64_MAX, &v))
				return 2;
			o.seed = v;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "rxpath bench lpm: see 'rxpath bench lpm --help'\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rxpath bench lpm: unexpected argument '%s'; see 'rxpath bench lpm --help'\n",
			argv[optind]);
		return 2;
	}
	if (!o.prefixes4 && !o.prefixes6) {
		fprintf(stderr, "rxpath bench lpm: nothing to do with --prefixes4 0 and --prefixes6 0\n");
		return 2;
	}

	if (o.prefixes4) {
		ret = bench4(&o, rows + n_rows, tty);
		if (ret) {
			fprintf(stderr, "rxpath bench lpm: ipv4: %s\n", strerror(-ret));
			return 1;
		}
		n_rows += MODES4;
	}
	if (o.prefixes6) {
		ret = bench6(&o, rows + n_rows, tty);
		if (ret) {
			fprintf(stderr, "rxpath bench lpm: ipv6: %s\n", strerror(-ret));
			return 1;
		}
		n_rows += 2;
	}
	if (o.json)
		print_json(rows, n_rows);
	else
		print_table(rows, n_rows, &o);
	return 0;
}
