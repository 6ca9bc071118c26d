/* SPDX-License-Identifier: MIT */
/*
 * rxpath bench: what each receive-path technique is worth on this machine.
 *
 * Every configuration is a variant of "all on" with one technique turned
 * off, plus "all off". Configurations run interleaved, several repetitions
 * each, rotating the order so that no variant always runs first or last;
 * each measurement gets a fresh pool and port and a short warm-up. The
 * figures are medians with the min..max spread.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"
#include "bench_l3fwd.h"
#include "bench_filter.h"
#include "bench_lpm.h"
#include "bench_veth.h"
#include "engine/loop.h"
#include "core/fmt.h"
#include "ctl/config.h"

#define SIZES_MAX 8
#define REPS_MAX 101

enum bench_config {
	CFG_ALL_ON,
	CFG_PER_PACKET,
	CFG_COPY,
	CFG_PREFETCH_0,
	CFG_PREFETCH_1,
	CFG_OFFSET_0,
	CFG_PAGE,
	CFG_ALL_OFF,
	CFG_MAX
};

static const char *const config_names[CFG_MAX] = {
	"all-on", "per-packet", "copy", "prefetch-none", "prefetch-1", "offset-0", "page",
	"all-off",
};

/* The table: each family's variants, baseline first, and the configuration measuring each. */
static const struct {
	const char *family;
	const char *variant;
	enum bench_config cfg;
} table[] = {
	{ "handoff", "per-packet", CFG_PER_PACKET },
	{ "handoff", "list", CFG_ALL_ON },
	{ "copy", "copy", CFG_COPY },
	{ "copy", "zero-copy", CFG_ALL_ON },
	{ "prefetch", "none", CFG_PREFETCH_0 },
	{ "prefetch", "1-line", CFG_PREFETCH_1 },
	{ "prefetch", "2-lines", CFG_ALL_ON },
	{ "rx_offset", "0", CFG_OFFSET_0 },
	{ "rx_offset", "2", CFG_ALL_ON },
	{ "buffer_size", "page", CFG_PAGE },
	{ "buffer_size", "precise", CFG_ALL_ON },
	{ "all", "all-off", CFG_ALL_OFF },
	{ "all", "all-on", CFG_ALL_ON },
};

struct bench_opts {
	double duration;
	unsigned reps;
	unsigned n_sizes;
	uint32_t sizes[SIZES_MAX];
	bool json;
	const char *svg;
	const char *device;
	const char *proto;
	uint32_t flows;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rxpath bench [OPTIONS]        the receive-path A/B matrix (below)\n"
		"       rxpath bench l3fwd [OPTIONS]  forwarding rate, sim port to sim port\n"
		"       rxpath bench lpm [OPTIONS]    FIB lookups with large tables\n"
		"       rxpath bench filter --rules FILE [--trace FILE]   the filter's classifier alone, ns per packet\n"
		"\n"
		"Measures the receive path (receive, validate, count) on a simulated NIC with\n"
		"each technique on and off, all others held on: list vs per-packet handoff,\n"
		"zero-copy vs copy, prefetch none / 1 line / 2 lines, rx offset 0 vs 2, precise\n"
		"vs page-sized buffers, and all off vs all on. Variants run interleaved.\n"
		"\n"
		"  --duration S     seconds per measurement (default 0.5)\n"
		"  --reps N         repetitions of every variant (default 5)\n"
		"  --sizes LIST     frame sizes with FCS, comma-separated (default 64,1500)\n"
		"  --device MODE    inline (device work on the polling core; default) or thread\n"
		"  --proto P        generated traffic: udp4, tcp4, udp6, tcp6 or a mix a+b (default udp4)\n"
		"  --flows N        flows in the generated traffic (default 256)\n"
		"  --json           print the results as one JSON array on stdout\n"
		"  --svg FILE       also write a bar chart to FILE\n");
}

static int parse_sizes(const char *text, struct bench_opts *o)
{
	char buf[128];
	char *save, *tok;

	if (strlen(text) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, text);
	o->n_sizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (o->n_sizes == SIZES_MAX || rxp_parse_u64(tok, 64, RXP_FRAME_DEFAULT + 4, &v))
			return -EINVAL;
		o->sizes[o->n_sizes++] = (uint32_t)v;
	}
	return o->n_sizes ? 0 : -EINVAL;
}

static void config_for(enum bench_config c, struct dp_config *cfg)
{
	dp_config_default(cfg);
	cfg->log = fmt_log_stderr;
	cfg->pool.n_bufs = DP_BUFS_PER_PORT + RXP_POOL_CACHE_MAX;
	switch (c) {
	case CFG_ALL_ON:
		break;
	case CFG_PER_PACKET:
		cfg->tuning.handoff = RXP_HANDOFF_PACKET;
		break;
	case CFG_COPY:
		cfg->tuning.copy = true;
		break;
	case CFG_PREFETCH_0:
		cfg->tuning.prefetch_lines = 0;
		break;
	case CFG_PREFETCH_1:
		cfg->tuning.prefetch_lines = 1;
		break;
	case CFG_OFFSET_0:
		cfg->pool.rx_offset = 0;
		break;
	case CFG_PAGE:
		cfg->pool.page_sized = true;
		break;
	case CFG_ALL_OFF:
		cfg->tuning.handoff = RXP_HANDOFF_PACKET;
		cfg->tuning.copy = true;
		cfg->tuning.prefetch_lines = 0;
		cfg->pool.rx_offset = 0;
		cfg->pool.page_sized = true;
		break;
	case CFG_MAX:
		break;
	}
}

/* Runs one measurement. Returns Mpps, or a negative value with @err on failure. */
/* What the one port received. */
static uint64_t received(const struct dp *dp)
{
	return dp->ports[0].queues[0].stats.rx_packets;
}

static double measure(enum bench_config c, uint32_t size, const struct bench_opts *o, char *err,
		      size_t errlen)
{
	struct dp_config cfg;
	char spec[160];
	struct dp dp;
	double mpps;
	long bad;

	config_for(c, &cfg);
	snprintf(spec, sizeof(spec), "sim:proto=%s,size=%u,flows=%u,device=%s", o->proto, size,
		 o->flows, o->device);
	if (dp_config_add_port(&cfg, "bench0", spec, err, errlen) || dp_open(&dp, &cfg, err, errlen))
		return -1;
	mpps = dp_measure_rate(&dp, received, o->duration);
	bad = dp_close(&dp);
	if (bad) {
		snprintf(err, errlen, "%ld buffers not accounted for after a measurement", bad);
		return -1;
	}
	return mpps;
}

static void print_table(const struct bench_row *rows, unsigned n, const struct bench_opts *o)
{
	printf("rxpath bench: receive, validate, count on a sim NIC (device %s), %s, %u flows\n",
	       o->device, o->proto, o->flows);
	printf("%u repetitions x %.2f s per variant, interleaved; medians; spread = (max-min)/2 "
	       "as %% of median\n",
	       o->reps, o->duration);
	printf("Gbit/s counts frames with FCS, without preamble and gap\n\n");
	printf("%5s  %-11s  %-10s  %7s  %7s  %7s  %6s  %7s\n", "frame", "family", "variant",
	       "Mpps", "ns/pkt", "Gbit/s", "ratio", "spread");
	for (unsigned i = 0; i < n; i++) {
		const struct bench_row *r = &rows[i];

		if (i && strcmp(r->family, rows[i - 1].family))
			printf("\n");
		printf("%5u  %-11s  %-10s  %7.2f  %7.2f  %7.2f  %5.2fx  %6.1f%%%s\n", r->frame_size,
		       r->family, r->variant, r->mpps, r->ns_per_packet, r->gbps, r->ratio,
		       r->spread_pct, r->baseline ? "  (baseline)" : "");
	}
}

static void print_json(const struct bench_row *rows, unsigned n)
{
	printf("[");
	for (unsigned i = 0; i < n; i++) {
		const struct bench_row *r = &rows[i];

		printf("%s\n  {\"family\":\"%s\",\"variant\":\"%s\",\"baseline\":%s,\"frame_size\":%u,"
		       "\"mpps\":%.4f,\"ns_per_packet\":%.3f,\"gbps\":%.4f,\"ratio\":%.4f,"
		       "\"mpps_min\":%.4f,\"mpps_max\":%.4f,\"spread_pct\":%.2f,\"reps\":%u}",
		       i ? "," : "", r->family, r->variant, r->baseline ? "true" : "false",
		       r->frame_size, r->mpps, r->ns_per_packet, r->gbps, r->ratio, r->mpps_min,
		       r->mpps_max, r->spread_pct, r->reps);
	}
	printf("\n]\n");
}

int bench_opt_u64(const char *cmd, const char *name, const char *text, uint64_t min, uint64_t max,
		  uint64_t *out)
{
	if (rxp_parse_u64(text, min, max, out) == 0)
		return 0;
	fprintf(stderr, "%s: --%s %s: expected %llu to %llu\n", cmd, name, text,
		(unsigned long long)min, (unsigned long long)max);
	return -EINVAL;
}

int cmd_bench(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "reps", required_argument, NULL, 'r' },
		{ "sizes", required_argument, NULL, 's' },
		{ "device", required_argument, NULL, 'D' },
		{ "proto", required_argument, NULL, 'p' },
		{ "flows", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct bench_opts o = {
		.duration = 0.5, .reps = 5, .n_sizes = 2, .sizes = { 64, 1500 },
		.device = "inline", .proto = "udp4", .flows = 256,
	};
	static double samples[SIZES_MAX][CFG_MAX][REPS_MAX];
	struct bench_row rows[SIZES_MAX * RXP_ARRAY_SIZE(table)];
	unsigned n_rows = 0, done = 0, total;
	bool tty = isatty(STDERR_FILENO);
	char err[512];
	uint64_t v;
	int opt;

	/* argv[1] renamed as getopt's messages name the command */
	if (argc > 1 && !strcmp(argv[1], "l3fwd"))
		return cmd_bench_l3fwd(argc - 1, (argv[1] = (char *)"rxpath bench l3fwd", argv + 1));
	if (argc > 1 && !strcmp(argv[1], "lpm"))
		return cmd_bench_lpm(argc - 1, (argv[1] = (char *)"rxpath bench lpm", argv + 1));
	if (argc > 1 && !strcmp(argv[1], "filter"))
		return cmd_bench_filter(argc - 1, (argv[1] = (char *)"rxpath bench filter", argv + 1));
	if (argc > 1 && !strcmp(argv[1], "veth"))
		return cmd_bench_veth(argc - 1, (argv[1] = (char *)"rxpath bench veth", argv + 1));
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			if (parse_seconds(optarg, 0.01, 60, &o.duration)) {
				fprintf(stderr, "rxpath bench: --duration %s: expected seconds from 0.01 to 60\n", optarg);
				return 2;
			}
			break;
		case 'r':
			if (rxp_parse_u64(optarg, 1, REPS_MAX, &v)) {
				fprintf(stderr, "rxpath bench: --reps %s: expected 1 to %d\n", optarg, REPS_MAX);
				return 2;
			}
			o.reps = (unsigned)v;
			break;
		case 's':
			if (parse_sizes(optarg, &o)) {
				fprintf(stderr, "rxpath bench: --sizes %s: expected up to %d frame sizes from 64 to %u, like 64,1500\n",
					optarg, SIZES_MAX, RXP_FRAME_DEFAULT + 4);
				return 2;
			}
			break;
		case 'D':
			if (strcmp(optarg, "inline") && strcmp(optarg, "thread")) {
				fprintf(stderr, "rxpath bench: --device %s: expected inline or thread\n", optarg);
				return 2;
			}
			o.device = optarg;
			break;
		case 'p':
			if (strlen(optarg) > 32 || strchr(optarg, ',')) {
				fprintf(stderr, "rxpath bench: --proto %s: expected udp4, tcp4, udp6, tcp6 or a mix like udp4+tcp6\n", optarg);
				return 2;
			}
			o.proto = optarg;
			break;
		case 'f':
			if (rxp_parse_u64(optarg, 1, 65536, &v)) {
				fprintf(stderr, "rxpath bench: --flows %s: expected 1 to 65536\n", optarg);
				return 2;
			}
			o.flows = (uint32_t)v;
			break;
		case 'j':
			o.json = true;
			break;
		case 'g':
			o.svg = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "rxpath bench: see 'rxpath bench --help'\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rxpath bench: unexpected argument '%s'; see 'rxpath bench --help'\n",
			argv[optind]);
		return 2;
	}

	total = o.n_sizes * o.reps * CFG_MAX;
	for (unsigned s = 0; s < o.n_sizes; s++) {
		for (unsigned rep = 0; rep < o.reps; rep++) {
			for (unsigned k = 0; k < CFG_MAX; k++) {
				/* rotate the order each repetition */
				enum bench_config c = (enum bench_config)((k + rep) % CFG_MAX);
				double mpps;

				if (tty)
					fprintf(stderr, "\rbench: %3u/%u  %4u B  repetition %u/%u  %-14s",
						done + 1, total, o.sizes[s], rep + 1, o.reps,
						config_names[c]);
				mpps = measure(c, o.sizes[s], &o, err, sizeof(err));
				if (mpps < 0) {
					fprintf(stderr, "%srxpath bench: %s\n", tty ? "\n" : "", err);
					return 1;
				}
				samples[s][c][rep] = mpps;
				done++;
			}
			if (!tty)
				fprintf(stderr, "bench: %u B, repetition %u/%u done (%u/%u measurements)\n",
					o.sizes[s], rep + 1, o.reps, done, total);
		}
	}
	if (tty)
		fprintf(stderr, "\r%-70s\r", "");

	for (unsigned s = 0; s < o.n_sizes; s++) {
		double base = 0;

		for (unsigned i = 0; i < RXP_ARRAY_SIZE(table); i++) {
			struct bench_row *r = &rows[n_rows++];
			bool first = i == 0 || strcmp(table[i].family, table[i - 1].family);

			r->family = table[i].family;
			r->variant = table[i].variant;
			r->baseline = first;
			r->frame_size = o.sizes[s];
			r->reps = o.reps;
			summarize_samples(samples[s][table[i].cfg], o.reps, &r->mpps, &r->mpps_min,
				  &r->mpps_max);
			if (first)
				base = r->mpps;
			r->ns_per_packet = r->mpps > 0 ? 1000.0 / r->mpps : 0;
			r->gbps = r->mpps * o.sizes[s] * 8 / 1000.0;
			r->ratio = base > 0 ? r->mpps / base : 0;
			r->spread_pct = r->mpps > 0 ? (r->mpps_max - r->mpps_min) / 2 / r->mpps * 100 : 0;
		}
	}
	if (o.json)
		print_json(rows, n_rows);
	else
		print_table(rows, n_rows, &o);
	if (o.svg) {
		char title[160];
		int ret;

		snprintf(title, sizeof(title), "rxpath bench: receive path, sim NIC (device %s), %s",
			 o.device, o.proto);
		ret = bench_write_svg(o.svg, rows, n_rows, title);
		if (ret) {
			fprintf(stderr, "rxpath bench: cannot write %s: %s\n", o.svg, strerror(-ret));
			return 1;
		}
		if (!o.json)
			printf("\nchart written to %s\n", o.svg);
	}
	return 0;
}
