/* SPDX-License-Identifier: MIT */
/*
 * rxpath bench filter: how fast the filter's classifier (src/fib/acl.h)
 * answers, how much memory it takes and how long it takes to build, on a
 * rule file and a trace of packets, measured as dpdk-test-acl measures
 * rte_acl: the classifier alone, in bursts of 64, over a trace kept in
 * memory as 16-byte tuples.
 *
 * Reads the rules (`filter add CHAIN [src P] [dst P] [proto tcp|udp|N]
 * [sport N[-M]] [dport N[-M]] accept|drop`, as
 * /work/shared/anchors/gen_rules.py writes them) and the trace (`SRC DST
 * SPORT DPORT PROTO` per line) or, without one, makes random packets.
 * Builds, then goes over the whole trace once to warm up and --reps more
 * times: each burst's keys are built from its tuples (as a datapath builds
 * them from the headers, and inside the timed loop), then classified.
 * Reports the median ns per packet with the min..max. Last, checks every
 * answer against a linear scan of the rules (the first rule that matches):
 * a mismatch is a failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "rxpath/args.h"
#include "bench.h"
#include "bench_filter.h"
#include "ctl/config.h"
#include "ctl/filter_verbs.h"
#include "ctl/verbs.h"
#include "core/clock.h"
#include "core/fmt.h"
#include "fib/acl.h"
#include "fib/acl_priv.h"

#define REPS_MAX 101
#define KEYS_DEFAULT 200000u
#define KEYS_MAX (1u << 26)
#define BURST 64u
#define LINE_MAX_LEN 1024

struct filter_opts {
	const char *rules;
	const char *trace;
	uint32_t keys;		/* random packets without --trace */
	unsigned reps;
	uint64_t seed;
	uint32_t verify;	/* packets checked against the linear scan (UINT32_MAX: all) */
	enum acl_impl_choice impl;
	bool key_array;		/* classify out of one array of keys, not per-burst ones */
	bool json;
};

/*
 * A packet of the trace as a datapath sees it before it builds the key: 16
 * bytes, as dpdk-test-acl keeps its trace. An IPv6 packet's src is the
 * index of its addresses in the trace's IPv6 table.
 */
struct tuple {
	uint32_t src, dst;	/* network order */
	uint16_t sport, dport;
	uint8_t proto, family;
	uint8_t pad[2];
};

struct trace {
	struct tuple *t;
	uint8_t (*v6)[32];	/* source then destination */
	struct rxp_acl_key *keys;	/* the same packets as keys: --key-array and the check */
	uint32_t n, n6;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rxpath bench filter --rules FILE [OPTIONS]\n"
		"\n"
		"Measures the filter's packet classifier alone, as dpdk-test-acl measures rte_acl:\n"
		"the trace in memory as 16-byte tuples, each burst of %u packets turned into keys\n"
		"and classified; reports ns per packet (median of the repetitions, with min..max),\n"
		"build time and memory, then checks every answer against a linear scan of the\n"
		"rules and fails on any difference.\n"
		"\n"
		"Rule lines: filter add CHAIN [src PREFIX] [dst PREFIX] [proto tcp|udp|icmp|N]\n"
		"            [sport N[-M]] [dport N[-M]] accept|drop   (first listed wins; # comments)\n"
		"Trace lines: SRC DST SPORT DPORT PROTO   (addresses IPv4 dotted or IPv6)\n"
		"gen_rules.py N DIR writes both: --rules DIR/rules.conf --trace DIR/trace.txt\n"
		"\n"
		"  --rules FILE    the rules (required)\n"
		"  --trace FILE    the packets; without it, --keys random IPv4 packets (random\n"
		"                  addresses and source port, destination port 22/53/80/443 or\n"
		"                  random, TCP or UDP)\n"
		"  --keys N        random packets to make without --trace (default %u)\n"
		"  --reps N        timed passes over the trace, after one warm-up (default 5)\n"
		"  --impl NAME     leaf scans: auto, scalar or avx512 (default auto: the best here)\n"
		"  --key-array     classify straight out of one array of keys (64 bytes each,\n"
		"                  streamed from memory) instead of building each burst's keys\n"
		"  --verify N      check only the first N packets against the linear scan\n"
		"                  (default all; 0: none)\n"
		"  --seed N        PRNG seed of the random packets (default 1)\n"
		"  --json          print one JSON object on stdout\n",
		BURST, KEYS_DEFAULT);
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

/* ---- the rules ---- */

/*
 * Parses one line of a rules file, in the command language as a config
 * file has it (`filter add CHAIN ... accept|drop|reject`), into @r.
 * Returns 1 for a rule, 0 for a blank or comment line, -EINVAL with @err
 * naming the word and what was expected. Sets and ports name what only a
 * running router has: refused here.
 */
static int parse_rule_line(const char *line, struct rxp_acl_rule *r, char *err, size_t errlen)
{
	const struct cmd_verb *v = cmd_verb_of(line, CMD_IN_CONFIG);
	struct dp_filter_cmd f = { 0 };
	struct cmd_err e = { 0 };
	struct cmd_line l;
	int n = cmd_split(&l, line, v ? &v->shape : NULL, &e);

	if (n == 0)
		return 0;
	if (n > 0 && (n < 3 || strcmp(l.w[0], "filter") || strcmp(l.w[1], "add")))
		n = cmd_fail(&e, NULL, "expected 'filter add CHAIN [MATCHES] accept|drop|reject'");
	if (n > 0 && filter_rule_parse(l.w + 3, n - 3, &f, &e))
		n = -EINVAL;
	if (n > 0 && (f.src_set[0] || f.dst_set[0] || f.in_if[0] || f.out_if[0]))
		n = cmd_fail(&e, NULL, "sets and ports are a running router's; bench filter takes addresses, protocols and ports only");
	if (n < 0) {
		cmd_err_format(&e, err, errlen);
		return -EINVAL;
	}
	*r = f.rule;
	return 1;
}

/* Reads @path's rules into *@rules. Returns their count, or -errno after printing why. */
static long read_rules(const char *path, struct rxp_acl_rule **rules)
{
	FILE *f = fopen(path, "r");
	char line[LINE_MAX_LEN], err[256];
	struct rxp_acl_rule *v = NULL;
	size_t n = 0, cap = 0;
	unsigned lineno = 0;

	if (!f) {
		int e = errno;

		fprintf(stderr, "rxpath bench filter: --rules %s: %s\n", path, strerror(e));
		return -e;
	}
	while (fgets(line, sizeof(line), f)) {
		struct rxp_acl_rule r;
		int ret;

		lineno++;
		ret = parse_rule_line(line, &r, err, sizeof(err));
		if (ret < 0) {
			fprintf(stderr, "rxpath bench filter: %s:%u: %s\n", path, lineno, err);
			goto fail;
		}
		if (!ret)
			continue;
		if (n == RXP_ACL_RULES_MAX) {
			fprintf(stderr, "rxpath bench filter: %s: more than %u rules, the classifier's "
				"limit\n", path, RXP_ACL_RULES_MAX);
			goto fail;
		}
		if (n == cap) {
			struct rxp_acl_rule *nv;

			cap = cap ? cap * 2 : 1024;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				fprintf(stderr, "rxpath bench filter: out of memory reading %s\n", path);
				goto fail;
			}
			v = nv;
		}
		v[n++] = r;
	}
	fclose(f);
	*rules = v;
	return (long)n;
fail:
	fclose(f);
	free(v);
	return -EINVAL;
}

/* ---- the trace ---- */

/* Builds the key of @t, as a datapath builds it from the headers. */
static inline void key_of(const struct trace *tr, const struct tuple *t, struct rxp_acl_key *k)
{
	memset(k, 0, sizeof(*k));
	if (t->family == 6) {
		memcpy(k->src, tr->v6[t->src], 16);
		memcpy(k->dst, tr->v6[t->src] + 16, 16);
	} else {
		memcpy(k->src, &t->src, 4);
		memcpy(k->dst, &t->dst, 4);
	}
	k->sport = t->sport;
	k->dport = t->dport;
	k->family = t->family;
	k->proto = t->proto;
	k->ct_state = RXP_ACL_CT_NEW;
}

/*
 * The rows of @m IPv4 tuples @t, as the filter's stateless way writes them
 * from the headers (rxp_acl_classify4() then reads them in place).
 */
static inline void rows_of(const struct tuple *t, unsigned m, struct rxp_acl_rows4 *rows)
{
	for (unsigned j = 0; j < m; j++) {
		rows->src[j] = ntohl(t[j].src);
		rows->dst[j] = ntohl(t[j].dst);
		rows->sport[j] = t[j].sport;
		rows->dport[j] = t[j].dport;
		rows->proto[j] = t[j].proto;
		rows->ct_state[j] = RXP_ACL_CT_NEW;
		rows->in_if[j] = rows->out_if[j] = 0;
		rows->src_sets[j] = rows->dst_sets[j] = 0;
	}
}

/* Appends @t (and its IPv6 addresses) to @tr. Returns 0 or -ENOMEM. */
static int trace_add(struct trace *tr, size_t *cap, size_t *cap6, const struct tuple *t,
		     const uint8_t *src6, const uint8_t *dst6)
{
	if (tr->n == *cap) {
		size_t c = *cap ? *cap * 2 : 65536;
		struct tuple *nt = realloc(tr->t, c * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		tr->t = nt;
		*cap = c;
	}
	tr->t[tr->n] = *t;
	if (t->family == 6) {
		if (tr->n6 == *cap6) {
			size_t c = *cap6 ? *cap6 * 2 : 1024;
			uint8_t (*n6)[32] = realloc(tr->v6, c * sizeof(*n6));

			if (!n6)
				return -ENOMEM;
			tr->v6 = n6;
			*cap6 = c;
		}
		memcpy(tr->v6[tr->n6], src6, 16);
		memcpy(tr->v6[tr->n6] + 16, dst6, 16);
		tr->t[tr->n].src = tr->n6++;
	}
	tr->n++;
	return 0;
}

/* Fills tr->keys from the tuples. Returns 0 or -ENOMEM. */
static int trace_keys(struct trace *tr)
{
	tr->keys = malloc(RXP_MAX(tr->n, 1u) * sizeof(*tr->keys));
	if (!tr->keys)
		return -ENOMEM;
	for (uint32_t i = 0; i < tr->n; i++)
		key_of(tr, &tr->t[i], &tr->keys[i]);
	return 0;
}

static void trace_free(struct trace *tr)
{
	free(tr->t);
	free(tr->v6);
	free(tr->keys);
}

/* Reads @path's packets into @tr. Returns 0, or -errno after printing why. */
static int read_trace(const char *path, struct trace *tr)
{
	FILE *f = fopen(path, "r");
	char line[LINE_MAX_LEN];
	size_t cap = 0, cap6 = 0;
	unsigned lineno = 0;

	if (!f) {
		int e = errno;

		fprintf(stderr, "rxpath bench filter: --trace %s: %s\n", path, strerror(e));
		return -e;
	}
	while (fgets(line, sizeof(line), f)) {
		char src[64], dst[64];
		unsigned sp, dp, proto;
		uint8_t a[16], d[16];
		struct tuple t = { 0 };
		int f1, f2, words;

		lineno++;
		words = sscanf(line, "%63s %63s %u %u %u", src, dst, &sp, &dp, &proto);
		if (words <= 0 || src[0] == '#')
			continue;
		f1 = words == 5 ? parse_ip_addr(src, a) : 0;
		f2 = words == 5 ? parse_ip_addr(dst, d) : 0;
		if (!f1 || f1 != f2 || sp > 65535 || dp > 65535 || proto > 255) {
			fprintf(stderr, "rxpath bench filter: %s:%u: expected SRC DST SPORT DPORT PROTO "
				"(addresses of one family, ports 0-65535, protocol 0-255)\n", path,
				lineno);
			goto fail;
		}
		if (tr->n == KEYS_MAX) {
			fprintf(stderr, "rxpath bench filter: %s: more than %u packets\n", path, KEYS_MAX);
			goto fail;
		}
		t.family = (uint8_t)f1;
		memcpy(&t.src, a, 4);
		memcpy(&t.dst, d, 4);
		t.sport = (uint16_t)sp;
		t.dport = (uint16_t)dp;
		t.proto = (uint8_t)proto;
		if (trace_add(tr, &cap, &cap6, &t, a, d)) {
			fprintf(stderr, "rxpath bench filter: out of memory reading %s\n", path);
			goto fail;
		}
	}
	fclose(f);
	if (!tr->n) {
		fprintf(stderr, "rxpath bench filter: %s: no packets in it\n", path);
		return -EINVAL;
	}
	return 0;
fail:
	fclose(f);
	return -EINVAL;
}

/* Random packets like gen_rules.py's trace. Returns 0 or -ENOMEM. */
static int random_trace(struct trace *tr, uint32_t n, uint64_t seed)
{
	static const uint16_t dports[] = { 22, 53, 80, 443 };

	tr->t = calloc(n, sizeof(*tr->t));
	if (!tr->t)
		return -ENOMEM;
	rng = seed;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t x = rnd64(), y = rnd64();
		struct tuple *t = &tr->t[i];

		t->family = 4;
		t->src = (uint32_t)x;
		t->dst = (uint32_t)(x >> 32);
		t->sport = (uint16_t)y;
		t->dport = (y >> 16) % 5 < 4 ? dports[(y >> 16) % 5] : (uint16_t)(y >> 32);
		t->proto = y >> 48 & 1 ? 17 : 6;
	}
	tr->n = n;
	return 0;
}

/* ---- the linear scan ---- */

/* A rule as flat IPv4 ranges, for a quick scan; IPv6 keys use rxp_acl_rule_matches. */
struct flat4 {
	uint32_t src_lo, src_hi, dst_lo, dst_hi;
	uint16_t sp_lo, sp_hi, dp_lo, dp_hi;
	uint16_t proto;
	bool ok;		/* matches IPv4 keys at all */
	bool plain;		/* no interface, state or set tests: the ranges say it all */
};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void flatten(const struct rxp_acl_rule *r, struct flat4 *f)
{
	uint32_t sm = r->src_len ? ~0u << (32 - RXP_MIN(r->src_len, 32)) : 0;
	uint32_t dm = r->dst_len ? ~0u << (32 - RXP_MIN(r->dst_len, 32)) : 0;

	f->src_lo = be32(r->src) & sm;
	f->src_hi = f->src_lo | ~sm;
	f->dst_lo = be32(r->dst) & dm;
	f->dst_hi = f->dst_lo | ~dm;
	f->sp_lo = r->sport_lo, f->sp_hi = r->sport_hi;
	f->dp_lo = r->dport_lo, f->dp_hi = r->dport_hi;
	f->proto = r->proto;
	f->ok = (r->family == 0 || r->family == 4) && !rxp_acl_rule_void(r);
	f->plain = r->in_ifs == UINT64_MAX && r->out_ifs == UINT64_MAX &&
		   r->ct_states == RXP_ACL_CT_ANY && r->src_set == RXP_ACL_NO_SET &&
		   r->dst_set == RXP_ACL_NO_SET;
}

static uint32_t linear(const struct rxp_acl_rule *rules, const struct flat4 *flat, uint32_t n,
		       const struct rxp_acl_key *k)
{
	uint32_t s = be32(k->src), d = be32(k->dst);

	if (k->family != 4) {
		for (uint32_t i = 0; i < n; i++)
			if (rxp_acl_rule_matches(&rules[i], k))
				return i;
		return RXP_ACL_NO_MATCH;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct flat4 *f = &flat[i];

		if (f->ok && s >= f->src_lo && s <= f->src_hi && d >= f->dst_lo && d <= f->dst_hi &&
		    k->sport >= f->sp_lo && k->sport <= f->sp_hi && k->dport >= f->dp_lo &&
		    k->dport <= f->dp_hi && (f->proto == RXP_ACL_ANY_PROTO || f->proto == k->proto) &&
		    (f->plain || rxp_acl_rule_matches(&rules[i], k)))
			return i;
	}
	return RXP_ACL_NO_MATCH;
}

/* ---- the measurement ---- */

struct filter_result {
	uint32_t n_rules, n_rules4, n_rules6, n_keys;
	double build_ms;
	size_t memory;
	const char *impl;
	double ns, ns_min, ns_max;
	unsigned reps;
	uint64_t matched, checksum;
	uint32_t verified, mismatches;
	bool rows;		/* the bursts went as rows (an all-IPv4 trace) */
};

/*
 * One pass over the trace in bursts: each burst's keys built from its
 * tuples (or taken from the key array), then classified. Returns a checksum
 * of the answers; counts the matches.
 */
static uint64_t pass(const struct rxp_acl *acl, const struct trace *tr, bool key_array,
		     uint64_t *matched)
{
	struct rxp_acl_key burst[BURST];
	struct rxp_acl_rows4 rows;
	uint32_t match[BURST];
	uint64_t sum = 0, hit = 0;

	for (uint32_t i = 0; i < tr->n; i += BURST) {
		unsigned m = RXP_MIN(tr->n - i, BURST);

		if (key_array) {
			rxp_acl_classify(acl, tr->keys + i, match, m);
		} else if (!tr->n6) {
			rows_of(&tr->t[i], m, &rows);
			rxp_acl_classify4(acl, &rows, match, m);
		} else {
			for (unsigned j = 0; j < m; j++)
				key_of(tr, &tr->t[i + j], &burst[j]);
			rxp_acl_classify(acl, burst, match, m);
		}
		for (unsigned j = 0; j < m; j++) {
			sum = sum * 31 + match[j];
			hit += match[j] != RXP_ACL_NO_MATCH;
		}
	}
	*matched = hit;
	return sum;
}

/* Checks the answers for the first res->verified packets. Returns 0, or -ENOMEM. */
static int verify(const struct rxp_acl *acl, const struct rxp_acl_rule *rules, uint32_t n_rules,
		  const struct trace *tr, struct filter_result *res)
{
	struct flat4 *flat = malloc(RXP_MAX(n_rules, 1u) * sizeof(*flat));
	struct rxp_acl_rows4 rows;
	uint32_t match[BURST], match4[BURST];

	if (!flat)
		return -ENOMEM;
	for (uint32_t i = 0; i < n_rules; i++)
		flatten(&rules[i], &flat[i]);
	/* in bulk and one at a time */
	for (uint32_t i = 0; i < res->verified; i += BURST) {
		unsigned m = RXP_MIN(res->verified - i, BURST);

		rxp_acl_classify(acl, tr->keys + i, match, m);
		if (!tr->n6) {
			rows_of(&tr->t[i], m, &rows);
			rxp_acl_classify4(acl, &rows, match4, m);
		} else {
			memcpy(match4, match, m * sizeof(*match));	/* IPv6 keys have no rows */
		}
		for (unsigned j = 0; j < m; j++) {
			const struct rxp_acl_key *k = &tr->keys[i + j];
			uint32_t want = linear(rules, flat, n_rules, k);
			uint32_t one = rxp_acl_classify_one(acl, k);

			if ((match[j] != want || match4[j] != want || one != want) && res->mismatches++ < 5)
				fprintf(stderr, "rxpath bench filter: packet %u: classify %d, classify4 %d, "
					"classify_one %d, linear scan %d (-1: none)\n", i + j + 1,
					(int)match[j], (int)match4[j], (int)one, (int)want);
		}
	}
	free(flat);
	return 0;
}

/* Returns the exit status: 0, 1 on a failure, 2 on a usage error. */
static int run(const struct filter_opts *o, const struct rxp_acl_rule *rules, uint32_t n_rules,
	       const struct trace *tr, struct filter_result *res)
{
	double samples[REPS_MAX];
	struct rxp_acl *acl;
	char err[256];
	uint64_t t0, sum0 = 0;
	int ret = 1;

	res->n_rules = n_rules;
	res->n_keys = tr->n;
	res->rows = !o->key_array && !tr->n6;
	for (uint32_t i = 0; i < n_rules; i++) {
		res->n_rules4 += rules[i].family != 6;
		res->n_rules6 += rules[i].family != 4;
	}
	if (!rxp_acl_force_impl(o->impl)) {
		fprintf(stderr, "rxpath bench filter: --impl avx512: this CPU lacks AVX-512 F and BW "
			"or BMI2; use --impl scalar or auto\n");
		return 2;
	}
	t0 = rxp_clock_ns();
	acl = rxp_acl_build(rules, n_rules, err, sizeof(err));
	res->build_ms = (double)(rxp_clock_ns() - t0) / 1e6;
	rxp_acl_force_impl(ACL_IMPL_AUTO);
	if (!acl) {
		fprintf(stderr, "rxpath bench filter: building the classifier: %s\n", err);
		return 1;
	}
	res->memory = rxp_acl_memory(acl);
	res->impl = rxp_acl_impl_name(acl);
	/* pass 0 warms the caches up and gives the checksum every pass must give */
	for (unsigned rep = 0; rep <= o->reps; rep++) {
		uint64_t matched, sum;

		t0 = rxp_clock_ns();
		sum = pass(acl, tr, o->key_array, &matched);
		if (rep == 0) {
			sum0 = sum;
			res->matched = matched;
			continue;
		}
		samples[rep - 1] = (double)(rxp_clock_ns() - t0) / tr->n;
		if (sum != sum0) {
			fprintf(stderr, "rxpath bench filter: pass %u gave other answers than pass 0\n",
				rep);
			goto out;
		}
	}
	res->checksum = sum0;
	res->reps = o->reps;
	summarize_samples(samples, o->reps, &res->ns, &res->ns_min, &res->ns_max);
	res->verified = RXP_MIN(o->verify, tr->n);
	if (verify(acl, rules, n_rules, tr, res)) {
		fprintf(stderr, "rxpath bench filter: out of memory for the linear scan\n");
		goto out;
	}
	ret = res->mismatches ? 1 : 0;
out:
	rxp_acl_free(acl);
	return ret;
}

static void print_text(const struct filter_opts *o, const struct filter_result *r)
{
	char a[32], b[32], c[32];

	printf("rxpath bench filter: %s rules (%s for IPv4, %s for IPv6) from %s\n",
	       fmt_count(a, sizeof(a), r->n_rules), fmt_count(b, sizeof(b), r->n_rules4),
	       fmt_count(c, sizeof(c), r->n_rules6), o->rules);
	printf("packets: %s from %s, %s\n", fmt_count(a, sizeof(a), r->n_keys),
	       o->trace ? o->trace : "random IPv4 (no --trace)",
	       o->key_array ? "classified out of one array of keys" :
	       r->rows ? "each burst's keys built as rows (all IPv4) from 16-byte tuples in the timed loop" :
	       "each burst's keys built from 16-byte tuples in the timed loop");
	printf("build: %.1f ms, memory %s bytes (%.2f MiB), leaf scans %s\n", r->build_ms,
	       fmt_count(a, sizeof(a), r->memory), (double)r->memory / (1 << 20), r->impl);
	printf("classify: %.2f ns/packet median (%.2f..%.2f over %u reps), bursts of %u\n", r->ns,
	       r->ns_min, r->ns_max, r->reps, BURST);
	printf("matches: %s of %s packets, checksum %016llx\n", fmt_count(a, sizeof(a), r->matched),
	       fmt_count(b, sizeof(b), r->n_keys), (unsigned long long)r->checksum);
	if (r->verified)
		printf("verify: %s packets against a linear scan of the rules: %u mismatches\n",
		       fmt_count(a, sizeof(a), r->verified), r->mismatches);
	else
		printf("verify: skipped (--verify 0)\n");
}

static void print_json(const struct filter_opts *o, const struct filter_result *r)
{
	printf("{\"rules\":%u,\"rules_ipv4\":%u,\"rules_ipv6\":%u,\"packets\":%u,"
	       "\"key_mode\":\"%s\",\"burst\":%u,\"impl\":\"%s\",\"build_ms\":%.3f,"
	       "\"memory_bytes\":%zu,\"reps\":%u,\"ns_per_packet\":%.3f,\"ns_min\":%.3f,"
	       "\"ns_max\":%.3f,\"matched\":%llu,\"checksum\":\"%016llx\",\"verified\":%u,"
	       "\"mismatches\":%u}\n",
	       r->n_rules, r->n_rules4, r->n_rules6, r->n_keys, o->key_array ? "array" : r->rows ? "rows" : "burst",
	       BURST, r->impl, r->build_ms, r->memory, r->reps, r->ns, r->ns_min, r->ns_max,
	       (unsigned long long)r->matched, (unsigned long long)r->checksum, r->verified,
	       r->mismatches);
}

int cmd_bench_filter(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rules", required_argument, NULL, 'R' },
		{ "trace", required_argument, NULL, 't' },
		{ "keys", required_argument, NULL, 'k' },
		{ "reps", required_argument, NULL, 'r' },
		{ "impl", required_argument, NULL, 'i' },
		{ "key-array", no_argument, NULL, 'a' },
		{ "verify", required_argument, NULL, 'v' },
		{ "seed", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct filter_opts o = {
		.keys = KEYS_DEFAULT, .reps = 5, .seed = 1, .verify = UINT32_MAX,
		.impl = ACL_IMPL_AUTO,
	};
	struct filter_result res = { 0 };
	struct rxp_acl_rule *rules = NULL;
	struct trace tr = { 0 };
	long n_rules;
	uint64_t v;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'R':
			o.rules = optarg;
			break;
		case 't':
			o.trace = optarg;
			break;
		case 'k':
			if (bench_opt_u64("rxpath bench filter", "keys", optarg, 1, KEYS_MAX, &v))
				return 2;
			o.keys = (uint32_t)v;
			break;
		case 'r':
			if (bench_opt_u64("rxpath bench filter", "reps", optarg, 1, REPS_MAX, &v))
				return 2;
			o.reps = (unsigned)v;
			break;
		case 'i':
			if (!strcmp(optarg, "auto")) {
				o.impl = ACL_IMPL_AUTO;
			} else if (!strcmp(optarg, "scalar")) {
				o.impl = ACL_IMPL_SCALAR;
			} else if (!strcmp(optarg, "avx512")) {
				o.impl = ACL_IMPL_AVX512;
			} else {
				fprintf(stderr, "rxpath bench filter: --impl %s: expected auto, scalar or "
					"avx512\n", optarg);
				return 2;
			}
			break;
		case 'a':
			o.key_array = true;
			break;
		case 'v':
			if (bench_opt_u64("rxpath bench filter", "verify", optarg, 0, UINT32_MAX, &v))
				return 2;
			o.verify = (uint32_t)v;
			break;
		case 's':
			if (bench_opt_u64("rxpath bench filter", "seed", optarg, 0, UINT64_MAX, &v))
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
			fprintf(stderr, "rxpath bench filter: see 'rxpath bench filter --help'\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rxpath bench filter: unexpected argument '%s'; see 'rxpath bench "
			"filter --help'\n", argv[optind]);
		return 2;
	}
	if (!o.rules) {
		fprintf(stderr, "rxpath bench filter: no rules: give --rules FILE (gen_rules.py N DIR "
			"writes DIR/rules.conf)\n");
		return 2;
	}
	n_rules = read_rules(o.rules, &rules);
	if (n_rules < 0)
		return 1;
	ret = o.trace ? read_trace(o.trace, &tr) : random_trace(&tr, o.keys, o.seed);
	if (!ret)
		ret = trace_keys(&tr);
	if (ret) {
		if (ret == -ENOMEM)
			fprintf(stderr, "rxpath bench filter: out of memory for the packets\n");
		trace_free(&tr);
		free(rules);
		return 1;
	}
	ret = run(&o, rules, (uint32_t)n_rules, &tr, &res);
	if (ret != 2 && res.reps) {
		if (o.json)
			print_json(&o, &res);
		else
			print_text(&o, &res);
	}
	trace_free(&tr);
	free(rules);
	return ret;
}
