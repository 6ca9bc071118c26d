/* SPDX-License-Identifier: MIT */
/* What `rxpath run` prints: its start lines, the live rates and the summary, as text or JSON lines. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "core/fmt.h"
#include "engine/workers.h"
#include "report.h"

static void host_print_json(const struct dp *dp, FILE *out)
{
	bool first = true;

	fprintf(out, ",\"host\":[");
	for (unsigned p = 0; p < RXP_STACK_PORTS_MAX; p++) {
		const struct rxp_host *h = dp->stack.host[p];
		struct rxp_xstat xs[RXP_XSTATS_MAX];
		unsigned n = dp_host_counters(dp, (uint16_t)p, xs, RXP_XSTATS_MAX);

		if (!h)
			continue;
		fprintf(out, "%s{\"port\":\"%s\",\"tap\":\"%s\",\"gro\":%s", first ? "" : ",",
			dp_port_name(dp, h->port), h->tap.name, h->gro ? "true" : "false");
		for (unsigned k = 0; k < n; k++)
			fprintf(out, ",\"%s\":%" PRIu64, xs[k].name, xs[k].value);
		fprintf(out, "}");
		first = false;
	}
	fprintf(out, "]");
}

static void host_print_text(const struct dp *dp, FILE *out)
{
	char a[32], b[32], c[32], d[32], e[32], f[32], g[32];

	for (unsigned p = 0; p < RXP_STACK_PORTS_MAX; p++) {
		const struct rxp_host *h = dp->stack.host[p];
		struct rxp_host_stats sum;
		const struct rxp_host_stats *s = &sum;

		if (!dp_host_stats(dp, (uint16_t)p, &sum))
			continue;
		fprintf(out, "  host %-8s TAP %s, GRO %s: to host %s packets (%s bytes) in %s writes; "
			"GRO made %s super-packets of %s merged segments; bad TCP checksums %s\n",
			dp_port_name(dp, h->port), h->tap.name, h->gro ? "on" : "off",
			fmt_count(a, sizeof(a), s->to_host_packets), fmt_count(b, sizeof(b), s->to_host_bytes),
			fmt_count(c, sizeof(c), s->writes), fmt_count(d, sizeof(d), s->gro_super),
			fmt_count(e, sizeof(e), s->gro_merged), fmt_count(f, sizeof(f), s->csum_bad));
		fprintf(out, "  %-13s from host %s frames, sent as %s packets; GSO cut %s super-packets "
			"into %s segments; checksums completed %s\n", "",
			fmt_count(a, sizeof(a), s->from_host_frames),
			fmt_count(b, sizeof(b), s->from_host_packets), fmt_count(c, sizeof(c), s->gso_frames),
			fmt_count(d, sizeof(d), s->gso_segments), fmt_count(e, sizeof(e), s->csum_completed));
		if (s->write_errors || s->read_errors || s->bad_frames || s->no_buffer)
			fprintf(out, "  %-13s errors: TAP writes %s, reads %s; bad frames from the host %s; "
				"no buffer %s\n", "", fmt_count(a, sizeof(a), s->write_errors),
				fmt_count(b, sizeof(b), s->read_errors), fmt_count(c, sizeof(c), s->bad_frames),
				fmt_count(g, sizeof(g), s->no_buffer));
	}
}

static void host_print(const struct dp *dp, FILE *out, bool json)
{
	if (!dp->stack.host_ports)
		return;
	if (json)
		host_print_json(dp, out);
	else
		host_print_text(dp, out);
}

void print_config(const struct dp *dp, const struct dp_config *cfg, bool json)
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

void report_interval(struct dp *dp, struct port_snap *snap, double t0, double t1,
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

void report_summary_text(struct dp *dp, double elapsed)
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
	host_print(dp, stdout, false);
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

void report_summary_json(struct dp *dp, double elapsed)
{
	const char *sep;
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
	printf("]");
#define X(f, metric, help) printf(",\"" #f "\":%llu", (unsigned long long)ss->f);
	RXP_STACK_COUNTERS(X)
#undef X
	printf(",\"delivered\":{");
	for (int c = 0; c < RXP_SINK_MAX; c++)
		printf("%s\"%s\":%llu", c ? "," : "", rxp_sink_name((enum rxp_sink_class)c),
		       (unsigned long long)ss->delivered[c]);
	printf("},\"drops\":{");
	for (int r = 0; r < RXP_DROP_MAX; r++)
		printf("%s\"%s\":%llu", r ? "," : "", rxp_drop_name((enum rxp_drop_reason)r),
		       (unsigned long long)ss->drops[r]);
	printf("}");
	host_print(dp, stdout, true);
	printf(",\"pool\":{");
	sep = "";
#define X(f, metric, help) printf("%s\"" #f "\":%llu", sep, (unsigned long long)ps->f); sep = ",";
	RXP_POOL_COUNTERS(X)
#undef X
	printf("}}\n");
}
