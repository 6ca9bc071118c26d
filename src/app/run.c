/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "control.h"
#include "ctl_server.h"
#include "workers.h"
#include "fmt.h"
#include "metrics.h"
#include "privilege.h"
#include "run.h"
#include "rxpath/pcap_port.h"

/* Polls between two looks at the clock: the clock is never read per packet. */
#define POLLS_PER_CLOCK_READ 64u

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

struct run_opts {
	double duration;	/* 0: until a signal or the sources end */
	double interval;	/* 0: no live lines */
	bool json;
	const char *metrics;	/* --metrics ADDR; NULL: no HTTP server */
	const char *ctl_path;	/* --ctl PATH; NULL: none */
	bool ctl_explicit;	/* the user named it: failing to bind it is an error */
	uint64_t keep_caps;	/* --keep-caps: kept after set-up besides what the config needs */
};

/* Per-port counters at the previous report, to turn totals into rates. */
struct port_snap {
	uint64_t rx_packets, rx_bytes, rx_dropped, tx_packets, tx_bytes;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rxpath run [OPTIONS]\n"
		"\n"
		"Receives on the configured ports, hands every poll to the stack, prints live\n"
		"rates and a summary. With no port configured it runs two simulated ports:\n"
		"  sim0  sim:proto=udp4+tcp4,bad=0.1\n"
		"  sim1  sim:proto=udp6+tcp6,bad=0.1\n"
		"\n"
		"  -c, --config FILE     apply the commands in FILE (e.g. 'port add p0 sim:size=1500')\n"
		"  -e, --exec CMD        apply one command; may be repeated\n"
		"  -d, --duration S      stop after S seconds (default: at Ctrl-C, or when every\n"
		"                        port's finite source has been received)\n"
		"  -i, --interval S      seconds between live lines (default 1, 0 = none);\n"
		"      --stats-interval S  the same\n"
		"  -w, --workers N       polling threads, one per CPU, each with its own queue of\n"
		"                        every port (default 1; ports need N queues: sim queues=N)\n"
		"      --ctl PATH        control socket for 'rxpath ctl' (default %s;\n"
		"                        'none': no socket). SIGHUP reloads the -c files\n"
		"      --json            print JSON lines instead of text\n"
		"      --metrics ADDR    serve Prometheus metrics at http://ADDR/metrics; ADDR is\n"
		"                        PORT (on 127.0.0.1), IPV4:PORT, [IPV6]:PORT or localhost:PORT\n"
		"      --keep-caps LIST  capabilities to keep after set-up besides those the config\n"
		"                        needs (net_admin,...; 'all': drop none); see the line on stderr\n"
		"      --idle sleep|spin a worker whose queues stay empty 1 ms sleeps until frames\n"
		"                        come (10 ms at most; default), or polls on at full speed\n"
		"                        (spin: the lowest latency, a whole CPU); sim and pcap ports\n"
		"                        and busypoll= never sleep\n"
		"\n"
		"receive path (defaults: every technique on):\n"
		"      --handoff list|packet    vector handoff of a whole poll, or one packet at a time\n"
		"      --prefetch 0|1|2         frame header cache lines prefetched ahead\n"
		"      --copy                   copy frames into fresh buffers (pre-zero-copy drivers)\n"
		"      --copybreak N            --copy, but frames longer than N bytes stay zero-copy\n"
		"      --rx-offset 0|2          bytes before the frame (2 = NET_IP_ALIGN)\n"
		"      --buffers precise|page   buffer size: exactly what a frame needs, or 4 KiB\n"
		"      --max-frame N            largest frame in bytes, without FCS (default 1518)\n"
		"      --budget N               packets per poll at most (default 64, max %u)\n"
		"      --pool N                 buffers in the pool (default %u per port queue + %u per worker)\n"
		"      --hugepages              put the pool on 2 MiB pages when there are any\n",
		CTL_SOCKET_DEFAULT, RXP_BURST_MAX, DP_BUFS_PER_PORT, RXP_POOL_CACHE_MAX);
}

int apply_rx_option(struct dp_config *cfg, const char *name, const char *value, char *err,
		    size_t errlen)
{
	uint64_t n;

	if (!strcmp(name, "handoff")) {
		if (!strcmp(value, "list"))
			cfg->tuning.handoff = RXP_HANDOFF_LIST;
		else if (!strcmp(value, "packet") || !strcmp(value, "per-packet"))
			cfg->tuning.handoff = RXP_HANDOFF_PACKET;
		else
			goto bad;
	} else if (!strcmp(name, "prefetch")) {
		if (rxp_parse_u64(value, 0, 2, &n))
			goto bad;
		cfg->tuning.prefetch_lines = (uint8_t)n;
	} else if (!strcmp(name, "copy")) {
		cfg->tuning.copy = true;
	} else if (!strcmp(name, "copybreak")) {
		if (rxp_parse_u64(value, 0, UINT16_MAX, &n))
			goto bad;
		cfg->tuning.copy = true;
		cfg->tuning.copybreak = (uint16_t)n;
	} else if (!strcmp(name, "rx-offset")) {
		if (rxp_parse_u64(value, 0, 2, &n) || n == 1)
			goto bad;
		cfg->pool.rx_offset = (uint8_t)n;
	} else if (!strcmp(name, "buffers")) {
		if (!strcmp(value, "precise"))
			cfg->pool.page_sized = false;
		else if (!strcmp(value, "page"))
			cfg->pool.page_sized = true;
		else
			goto bad;
	} else if (!strcmp(name, "max-frame")) {
		if (rxp_parse_u64(value, 60, RXP_FRAME_MAX, &n))
			goto bad;
		cfg->pool.max_frame = (uint32_t)n;
	} else if (!strcmp(name, "budget")) {
		if (rxp_parse_u64(value, 1, RXP_BURST_MAX, &n))
			goto bad;
		cfg->tuning.budget = (uint16_t)n;
	} else if (!strcmp(name, "pool")) {
		if (rxp_parse_u64(value, 64, 1u << 24, &n))
			goto bad;
		cfg->pool.n_bufs = (uint32_t)n;
	} else if (!strcmp(name, "hugepages")) {
		cfg->pool.hugepages = true;
	} else {
		return 0;
	}
	return 1;
bad:
	snprintf(err, errlen, "--%s %s: expected %s", name, value,
		 !strcmp(name, "handoff")   ? "list or packet" :
		 !strcmp(name, "prefetch")  ? "0, 1 or 2" :
		 !strcmp(name, "copybreak") ? "a byte count from 0 to 65535" :
		 !strcmp(name, "rx-offset") ? "0 or 2" :
		 !strcmp(name, "buffers")   ? "precise or page" :
		 !strcmp(name, "max-frame") ? "a frame size from 60 to 9216" :
		 !strcmp(name, "budget")    ? "a packet count from 1 to 256" :
					      "a buffer count from 64 to 16777216");
	return -EINVAL;
}

static void print_config(const struct dp *dp, const struct dp_config *cfg, bool json)
{
	const struct rxp_pool *pool = dp->pool;
	const struct rxp_rx_tuning *t = &cfg->tuning;

	if (json) {
		printf("{\"event\":\"start\",\"workers\":%u,\"ports\":%u,\"pool_buffers\":%u,\"buffer_size\":%u,"
		       "\"rx_offset\":%u,\"handoff\":\"%s\",\"prefetch_lines\":%u,\"copy\":%s,"
		       "\"budget\":%u,\"hugepages\":%s}\n",
		       dp->n_workers, dp->n_ports, pool->n_bufs, pool->buf_size, pool->rx_offset,
		       t->handoff == RXP_HANDOFF_LIST ? "list" : "per-packet", t->prefetch_lines,
		       t->copy ? "true" : "false", t->budget, pool->hugepages ? "true" : "false");
		fflush(stdout);	/* a supervisor waiting for the start line gets it now */
		return;
	}
	printf("rxpath: %u port%s; pool %u buffers x %u B (%s, %.1f MiB%s); rx offset %u\n",
	       dp->n_ports, dp->n_ports == 1 ? "" : "s", pool->n_bufs, pool->buf_size,
	       cfg->pool.page_sized ? "page-sized" :
	       rxp_is_pow2(pool->buf_size) ? "power-of-two, the AF_XDP UMEM" : "precise",
	       (double)pool->region_len / (1 << 20), pool->hugepages ? ", huge pages" : "",
	       pool->rx_offset);
	printf("rxpath: %s handoff, %s, prefetch %u line%s, budget %u\n",
	       t->handoff == RXP_HANDOFF_LIST ? "list (vector)" : "per-packet",
	       t->copy ? "copy mode" : "zero-copy", t->prefetch_lines,
	       t->prefetch_lines == 1 ? "" : "s", t->budget);
	for (unsigned i = 0; i < dp->n_ports; i++) {
		const struct rxp_port *p = &dp->ports[i];

		printf("rxpath: port %s: %s, mac %02x:%02x:%02x:%02x:%02x:%02x, %u queue%s\n",
		       p->name, cfg->ports[i].spec, p->mac[0], p->mac[1], p->mac[2], p->mac[3],
		       p->mac[4], p->mac[5], p->n_queues, p->n_queues == 1 ? "" : "s");
	}
	fflush(stdout);
}

static void report_interval(struct dp *dp, struct port_snap *snap, double t0, double t1,
			    double start, bool json)
{
	struct rxp_queue_stats stats[DP_PORTS_MAX];
	double dt = t1 - t0;

	/* the other workers' counters, read while they wait between two polls */
	dp_barrier_enter(dp);
	for (unsigned i = 0; i < dp->n_ports; i++)
		rxp_port_stats(&dp->ports[i], &stats[i]);
	dp_barrier_exit(dp);
	for (unsigned i = 0; i < dp->n_ports; i++) {
		const struct rxp_queue_stats s = stats[i];
		char a[32], b[32], c[32], d[32], e[32];

		double pps = (double)(s.rx_packets - snap[i].rx_packets) / dt;
		double bps = (double)(s.rx_bytes - snap[i].rx_bytes) * 8 / dt;
		double dps = (double)(s.rx_dropped - snap[i].rx_dropped) / dt;
		double tpps = (double)(s.tx_packets - snap[i].tx_packets) / dt;
		double tbps = (double)(s.tx_bytes - snap[i].tx_bytes) * 8 / dt;

		if (json)
			printf("{\"event\":\"interval\",\"start\":%.3f,\"end\":%.3f,\"port\":\"%s\","
			       "\"rx_pps\":%.0f,\"rx_bps\":%.0f,\"tx_pps\":%.0f,\"tx_bps\":%.0f,"
			       "\"drop_pps\":%.0f}\n",
			       t0 - start, t1 - start, dp->ports[i].name, pps, bps, tpps, tbps, dps);
		else
			printf("%6.2f-%-6.2f s  %-8s rx %12s %14s   tx %12s %14s   drop %10s\n",
			       t0 - start, t1 - start, dp->ports[i].name,
			       fmt_si(a, sizeof(a), pps, "pps"), fmt_si(b, sizeof(b), bps, "bit/s"),
			       fmt_si(d, sizeof(d), tpps, "pps"), fmt_si(e, sizeof(e), tbps, "bit/s"),
			       fmt_si(c, sizeof(c), dps, "pps"));
		snap[i].rx_packets = s.rx_packets;
		snap[i].rx_bytes = s.rx_bytes;
		snap[i].rx_dropped = s.rx_dropped;
		snap[i].tx_packets = s.tx_packets;
		snap[i].tx_bytes = s.tx_bytes;
	}
	fflush(stdout);
}

/* The driver's own counters of a real interface (the kernel's view included), on one line. */
static void print_xstats_text(struct rxp_port *port)
{
	struct rxp_xstat xs[RXP_XSTATS_MAX];
	unsigned n = rxp_port_xstats(port, xs, RXP_XSTATS_MAX);
	char v[32];

	if (!n)
		return;
	printf("    driver %s:", port->ops->driver);
	for (unsigned k = 0; k < n; k++)
		printf("%s %s %s", k ? "," : "", xs[k].name, fmt_count(v, sizeof(v), xs[k].value));
	printf("\n");
}

static void report_summary_text(struct dp *dp, double elapsed)
{
	struct dp_totals t;
	const struct rxp_stack_stats *ss = &t.stack;
	const struct rxp_pool_stats *ps = &t.pool;
	char a[32], b[32], c[32], d[32], e[32], f[32], g[32], h[32];

	dp_totals(dp, &t);
	printf("\nsummary over %.2f s\n", elapsed);
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct rxp_queue_stats s;

		rxp_port_stats(&dp->ports[i], &s);
		printf("  port %-8s rx %s packets (%s), %s bytes; dropped %s; refills short of buffers %s\n",
		       dp->ports[i].name, fmt_count(a, sizeof(a), s.rx_packets),
		       fmt_si(b, sizeof(b), elapsed > 0 ? (double)s.rx_packets / elapsed : 0, "pps"),
		       fmt_count(c, sizeof(c), s.rx_bytes), fmt_count(d, sizeof(d), s.rx_dropped),
		       fmt_count(e, sizeof(e), s.rx_no_buffer));
		print_xstats_text(&dp->ports[i]);
	}
	printf("  delivered %s packets:", fmt_count(a, sizeof(a), rxp_stack_delivered_total(ss)));
	for (int c2 = 0; c2 < RXP_SINK_MAX; c2++)
		if (ss->delivered[c2])
			printf(" %s %s", rxp_sink_name((enum rxp_sink_class)c2),
			       fmt_count(a, sizeof(a), ss->delivered[c2]));
	printf("\n");
	dp_host_print(dp, stdout, false);
	if (dp->router)
		printf("  forwarded %s packets (%s fragments made); sent by the router %s "
		       "(ICMP errors %s, of them redirects %s, %s held back by the rate limit; "
		       "neighbour requests %s; lost %s)\n",
		       fmt_count(a, sizeof(a), ss->forwarded), fmt_count(b, sizeof(b), ss->fragments),
		       fmt_count(c, sizeof(c), ss->local_out), fmt_count(d, sizeof(d), ss->icmp_errors),
		       fmt_count(h, sizeof(h), ss->redirects),
		       fmt_count(e, sizeof(e), ss->icmp_ratelimited),
		       fmt_count(f, sizeof(f), ss->neigh_requests),
		       fmt_count(g, sizeof(g), ss->local_out_dropped));
	printf("  dropped %s packets%s\n", fmt_count(a, sizeof(a), ss->dropped),
	       ss->dropped ? ", by reason and port:" : "");
	for (int r = 0; r < RXP_DROP_MAX; r++) {
		if (!ss->drops[r])
			continue;
		printf("    %-24s %14s  %s\n", rxp_drop_name((enum rxp_drop_reason)r),
		       fmt_count(a, sizeof(a), ss->drops[r]),
		       rxp_drop_help((enum rxp_drop_reason)r));
		for (unsigned i = 0; i < dp->n_ports && dp->n_ports > 1; i++)
			if (dp_port_drops(dp, dp->ports[i].id, (unsigned)r))
				printf("      %-22s %14s\n", dp->ports[i].name,
				       fmt_count(a, sizeof(a), dp_port_drops(dp, dp->ports[i].id, (unsigned)r)));
	}
	printf("  polls with packets %s, average batch %.1f packets\n",
	       fmt_count(a, sizeof(a), ss->polls),
	       ss->polls ? (double)(ss->in_packets + ss->drops[RXP_DROP_NO_BUFFER]) / (double)ss->polls : 0.0);
	printf("  pool: allocs fast %s, slow %s, empty %s; recycled to cache %s, to ring %s\n",
	       fmt_count(a, sizeof(a), ps->alloc_fast), fmt_count(b, sizeof(b), ps->alloc_slow),
	       fmt_count(c, sizeof(c), ps->alloc_empty), fmt_count(d, sizeof(d), ps->recycle_cached),
	       fmt_count(e, sizeof(e), ps->recycle_ring));
}

static void report_summary_json(struct dp *dp, double elapsed)
{
	struct dp_totals t;
	const struct rxp_stack_stats *ss = &t.stack;
	const struct rxp_pool_stats *ps = &t.pool;

	dp_totals(dp, &t);
	printf("{\"event\":\"summary\",\"seconds\":%.3f,\"ports\":[", elapsed);
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct rxp_queue_stats s;

		rxp_port_stats(&dp->ports[i], &s);
		printf("%s{\"port\":\"%s\",\"rx_packets\":%llu,\"rx_bytes\":%llu,\"rx_dropped\":%llu,"
		       "\"rx_no_buffer\":%llu,\"tx_packets\":%llu,\"tx_bytes\":%llu,\"drops\":{",
		       i ? "," : "", dp->ports[i].name, (unsigned long long)s.rx_packets,
		       (unsigned long long)s.rx_bytes, (unsigned long long)s.rx_dropped,
		       (unsigned long long)s.rx_no_buffer, (unsigned long long)s.tx_packets,
		       (unsigned long long)s.tx_bytes);
		for (int r = 0, first = 1; r < RXP_DROP_MAX; r++) {
			uint64_t v = dp_port_drops(dp, dp->ports[i].id, (unsigned)r);

			if (!v)
				continue;
			printf("%s\"%s\":%llu", first ? "" : ",", rxp_drop_name((enum rxp_drop_reason)r),
			       (unsigned long long)v);
			first = 0;
		}
		printf("}");
		{
			struct rxp_xstat xs[RXP_XSTATS_MAX];
			unsigned n = rxp_port_xstats(&dp->ports[i], xs, RXP_XSTATS_MAX);

			/* the driver's own counters, for real interfaces */
			for (unsigned k = 0; k < n; k++)
				printf("%s\"%s\":%llu", k ? "," : ",\"driver\":{", xs[k].name,
				       (unsigned long long)xs[k].value);
			if (n)
				printf("}");
		}
		printf("}");
	}
	printf("],\"in_packets\":%llu,\"in_bytes\":%llu,\"delivered_bytes\":%llu,\"dropped\":%llu,"
	       "\"delivered\":{", (unsigned long long)ss->in_packets, (unsigned long long)ss->in_bytes,
	       (unsigned long long)ss->delivered_bytes, (unsigned long long)ss->dropped);
	for (int c = 0; c < RXP_SINK_MAX; c++)
		printf("%s\"%s\":%llu", c ? "," : "", rxp_sink_name((enum rxp_sink_class)c),
		       (unsigned long long)ss->delivered[c]);
	printf("},\"drops\":{");
	for (int r = 0; r < RXP_DROP_MAX; r++)
		printf("%s\"%s\":%llu", r ? "," : "", rxp_drop_name((enum rxp_drop_reason)r),
		       (unsigned long long)ss->drops[r]);
	printf("},\"forwarded\":%llu,\"fragments\":%llu,\"local_out\":%llu,\"local_out_dropped\":%llu,"
	       "\"icmp_errors\":%llu,\"icmp_ratelimited\":%llu,\"redirects\":%llu,"
	       "\"router_adverts\":%llu,\"neigh_requests\":%llu",
	       (unsigned long long)ss->forwarded, (unsigned long long)ss->fragments,
	       (unsigned long long)ss->local_out, (unsigned long long)ss->local_out_dropped,
	       (unsigned long long)ss->icmp_errors, (unsigned long long)ss->icmp_ratelimited,
	       (unsigned long long)ss->redirects, (unsigned long long)ss->router_adverts,
	       (unsigned long long)ss->neigh_requests);
	dp_host_print(dp, stdout, true);
	printf(",\"pool\":{\"alloc_fast\":%llu,\"alloc_slow\":%llu,\"alloc_empty\":%llu,"
	       "\"recycle_cached\":%llu,\"recycle_ring\":%llu}}\n",
	       (unsigned long long)ps->alloc_fast, (unsigned long long)ps->alloc_slow,
	       (unsigned long long)ps->alloc_empty, (unsigned long long)ps->recycle_cached,
	       (unsigned long long)ps->recycle_ring);
}

/* The poll loop: poll every queue; look at the clock once every POLLS_PER_CLOCK_READ rounds. */
static double run_loop(struct dp *dp, struct control *ctl, const struct run_opts *o)
{
	struct port_snap snap[DP_PORTS_MAX] = { 0 };
	double start = now_seconds(), last = start, now = start;
	unsigned rounds = 0;

	while (!stop_requested) {
		dp->idle.frames |= dp_poll(dp);
		if (++rounds % POLLS_PER_CLOCK_READ)
			continue;
		now = now_seconds();
		dp->idle.frames |= dp_tick(dp, (uint64_t)(now * 1e9));
		control_service(ctl);
		if (o->interval > 0 && now - last >= o->interval) {
			report_interval(dp, snap, last, now, start, o->json);
			last = now;
		}
		if (o->duration > 0 && now - start >= o->duration)
			break;
		if (dp_finished(dp))
			break;
		dp_idle_after_clock(dp, 0, &dp->idle, (uint64_t)(now * 1e9));
	}
	now = now_seconds();
	if (o->interval > 0 && now - last > 0.001)
		report_interval(dp, snap, last, now, start, o->json);
	return now - start;
}

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "exec", required_argument, NULL, 'e' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "stats-interval", required_argument, NULL, 'i' },
		{ "ctl", required_argument, NULL, 'C' },
		{ "workers", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ "metrics", required_argument, NULL, 'M' },	/* long only: not in the short list */
		{ "keep-caps", required_argument, NULL, 'K' },
		{ "idle", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ "handoff", required_argument, NULL, 0 },
		{ "prefetch", required_argument, NULL, 0 },
		{ "copy", no_argument, NULL, 0 },
		{ "copybreak", required_argument, NULL, 0 },
		{ "rx-offset", required_argument, NULL, 0 },
		{ "buffers", required_argument, NULL, 0 },
		{ "max-frame", required_argument, NULL, 0 },
		{ "budget", required_argument, NULL, 0 },
		{ "pool", required_argument, NULL, 0 },
		{ "hugepages", no_argument, NULL, 0 },
		{ 0 }
	};
	struct run_opts o = { .duration = 0, .interval = 1, .json = false,
			      .ctl_path = CTL_SOCKET_DEFAULT };
	struct config_source sources[64];
	unsigned n_sources = 0;
	struct ctl_server *server = NULL;
	int cpus[DP_WORKERS_MAX];
	sigset_t hup;
	struct dp_config cfg;
	char err[512], where[32];
	unsigned n_exec = 0;
	struct dp dp;
	struct control ctl;
	struct metrics_server *metrics = NULL;
	int opt, idx, ret;
	double elapsed;
	long unaccounted;

	dp_config_default(&cfg);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:e:d:i:w:h", longopts, &idx)) != -1) {
		switch (opt) {
		case 'c':
		case 'e':
			if (n_sources == RXP_ARRAY_SIZE(sources)) {
				fprintf(stderr, "rxpath run: more than %zu -c and -e options; put the commands in a file\n",
					RXP_ARRAY_SIZE(sources));
				goto out_usage;
			}
			sources[n_sources++] = (struct config_source){ opt == 'c', optarg };
			if (opt == 'c' && config_apply_file(&cfg, optarg, err, sizeof(err)))
				goto bad_config;
			if (opt == 'e') {
				snprintf(where, sizeof(where), "-e %u", ++n_exec);
				if (config_apply_line(&cfg, optarg, where, err, sizeof(err)))
					goto bad_config;
			}
			break;
		case 'w': {
			uint64_t n;

			if (rxp_parse_u64(optarg, 1, DP_WORKERS_MAX, &n)) {
				fprintf(stderr, "rxpath run: --workers %s: expected 1 to %u\n", optarg,
					DP_WORKERS_MAX);
				goto out_usage;
			}
			cfg.n_workers = (unsigned)n;
			break;
		}
		case 'C':
			o.ctl_path = strcmp(optarg, "none") ? optarg : NULL;
			o.ctl_explicit = true;
			break;
		case 'd':
			if (parse_seconds(optarg, 0, 1e9, &o.duration)) {
				fprintf(stderr, "rxpath run: --duration %s: expected seconds, 0 (no limit) to 1e9\n", optarg);
				goto out_usage;
			}
			break;
		case 'i':
			if (parse_seconds(optarg, 0, 1e6, &o.interval) || (o.interval > 0 && o.interval < 0.01)) {
				fprintf(stderr, "rxpath run: --interval %s: expected seconds, at least 0.01 (0 = no live lines)\n", optarg);
				goto out_usage;
			}
			break;
		case 'j':
			o.json = true;
			break;
		case 'I':
			if (strcmp(optarg, "sleep") && strcmp(optarg, "spin")) {
				fprintf(stderr, "rxpath run: --idle %s: expected sleep or spin\n", optarg);
				goto out_usage;
			}
			cfg.idle_spin = !strcmp(optarg, "spin");
			break;
		case 'K':
			if (priv_parse_caps(optarg, &o.keep_caps, err, sizeof(err))) {
				fprintf(stderr, "rxpath run: %s\n", err);
				goto out_usage;
			}
			break;
		case 'M': {
			struct sockaddr_storage addr;
			socklen_t addrlen;

			/* checked now, so a typo fails before any port opens */
			if (metrics_parse_listen(optarg, &addr, &addrlen, err, sizeof(err))) {
				fprintf(stderr, "rxpath run: --metrics %s\n", err);
				goto out_usage;
			}
			o.metrics = optarg;
			break;
		}
		case 'h':
			usage(stdout);
			dp_config_free(&cfg);
			return 0;
		case 0:
			if (apply_rx_option(&cfg, longopts[idx].name, optarg ? optarg : "", err,
					    sizeof(err)) < 0)
				goto bad_config;
			break;
		default:
			fprintf(stderr, "rxpath run: see 'rxpath run --help'\n");
			goto out_usage;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rxpath run: unexpected argument '%s'; see 'rxpath run --help'\n",
			argv[optind]);
		goto out_usage;
	}
	if (cfg.n_ports == 0) {
		dp_config_add_port(&cfg, "sim0", "sim:proto=udp4+tcp4,bad=0.1", err, sizeof(err));
		dp_config_add_port(&cfg, "sim1", "sim:proto=udp6+tcp6,bad=0.1", err, sizeof(err));
	}
	/* SIGHUP is the control thread's (a signalfd): blocked before any thread starts */
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &hup, NULL);
	if (dp_open(&dp, &cfg, err, sizeof(err))) {
		fprintf(stderr, "rxpath run: %s\n", err);
		dp_config_free(&cfg);
		return 1;
	}
	ret = control_init(&ctl, &dp);
	if (ret) {
		fprintf(stderr, "rxpath run: cannot set up the control mailbox: %s\n", strerror(-ret));
		dp_close(&dp);
		dp_config_free(&cfg);
		return 1;
	}
	if (o.metrics) {
		metrics = metrics_start(o.metrics, &ctl, err, sizeof(err));
		if (!metrics) {
			fprintf(stderr, "rxpath run: %s\n", err);
			control_destroy(&ctl);
			dp_close(&dp);
			dp_config_free(&cfg);
			return 1;
		}
		/* on stderr, so --json output stays JSON; port 0 shows the port it got */
		fprintf(stderr, "rxpath run: metrics at http://%s/metrics\n", metrics_address(metrics));
	}
	{
		/* the default socket is a convenience: without it rxpath runs on, and says so */
		struct ctl_server_config scfg = { .socket_path = o.ctl_path,
						  .socket_optional = !o.ctl_explicit, .ctl = &ctl,
						  .active = &cfg, .sources = sources,
						  .n_sources = n_sources };

		server = ctl_server_start(&scfg, err, sizeof(err));
		if (!server) {
			fprintf(stderr, "rxpath run: %s\n", err);
			metrics_stop(metrics);
			control_stop(&ctl);
			dp_close(&dp);
			control_destroy(&ctl);
			dp_config_free(&cfg);
			return 1;
		}
	}
	{
		/* every port, socket and thread is set up: keep only what running and exiting need */
		struct priv_plan plan;
		char line[1024];

		priv_plan(&cfg, o.keep_caps, &plan);
		if (priv_drop(&plan, line, sizeof(line)))
			fprintf(stderr, "rxpath run: warning: capabilities not fully dropped: %s\n", line);
		else if (line[0])
			fprintf(stderr, "rxpath run: %s\n", line);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (cfg.pool.hugepages && !dp.pool->hugepages)
		fprintf(stderr,
			"rxpath run: no free 2 MiB huge pages for the pool; using 4 KiB pages "
			"(reserve some with: echo 64 > /proc/sys/vm/nr_hugepages)\n");
	control_serve(&ctl);	/* the datapath threads serve the mailbox from now on */
	ret = dp_workers_start(&dp, cpus, err, sizeof(err));
	if (ret)
		fprintf(stderr, "rxpath run: %s\n", err);
	else
		print_config(&dp, &cfg, o.json);
	if (!ret && dp.n_workers > 1 && !o.json) {
		printf("rxpath: %u workers on CPUs", dp.n_workers);
		for (unsigned w = 0; w < dp.n_workers; w++)
			printf("%s%d", w ? "," : " ", cpus[w]);
		printf("\n");
		fflush(stdout);
	}
	elapsed = ret ? 0 : run_loop(&dp, &ctl, &o);
	metrics_stop(metrics);	/* serves a scrape still in the mailbox, then joins its thread */
	control_stop(&ctl);
	ctl_server_stop(server);	/* after control_stop: a request waiting on the mailbox returns */
	dp_workers_stop(&dp);
	dp_settle(&dp);
	if (ret) {
		dp_close(&dp);
		control_destroy(&ctl);
		dp_config_free(&cfg);
		return 1;
	}
	/* every frame a pcap port sent is in its file, or the run says it is not */
	bool written = true, read_all = true;

	for (unsigned i = 0; i < dp.n_ports; i++) {
		written &= rxp_pcap_port_flush(&dp.ports[i]);
		read_all &= !rxp_pcap_port_read_failed(&dp.ports[i]);
	}
	if (o.json)
		report_summary_json(&dp, elapsed);
	else
		report_summary_text(&dp, elapsed);
	uint32_t n_bufs = dp.pool->n_bufs;

	unaccounted = dp_close(&dp);
	control_destroy(&ctl);
	dp_config_free(&cfg);
	if (o.json)
		printf("{\"event\":\"buffers\",\"total\":%u,\"unaccounted\":%ld}\n", n_bufs,
		       unaccounted);
	if (unaccounted) {
		fprintf(stderr, "rxpath run: %ld of %u buffers not accounted for at shutdown\n",
			unaccounted, n_bufs);
		return 1;
	}
	if (!o.json)
		printf("  buffers: all %u accounted for\n", n_bufs);
	if (!written) {
		fprintf(stderr, "rxpath run: a pcap out= file is missing frames (write failed, above)\n");
		return 1;
	}
	if (!read_all) {
		fprintf(stderr, "rxpath run: a pcap in= file was not read to its end (read error, above)\n");
		return 1;
	}
	return 0;

bad_config:
	fprintf(stderr, "rxpath run: %s\n", err);
out_usage:
	dp_config_free(&cfg);
	return 2;
}
