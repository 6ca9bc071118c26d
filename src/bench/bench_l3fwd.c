/* SPDX-License-Identifier: MIT */
/*
 * rxpath bench l3fwd: the router's forwarding rate on one core, the way
 * DPDK's l3fwd is measured: 64-byte frames over many flows come in on one
 * sim port, are validated (IPv4 header checksum included), looked up in
 * the FIB, rewritten and sent out of another sim port.
 *
 * All cases are built first and kept open; the measurements then take
 * turns (case after case, repetition after repetition), so that a slow
 * moment of a shared machine is spread over every case.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ctl/capture_file.h"
#include "bench_l3fwd.h"
#include "ctl/config.h"
#include "engine/dataplane.h"
#include "engine/dp_filter.h"
#include "core/fmt.h"
#include "engine/loop.h"
#include "engine/workers.h"
#include "net/conntrack.h"
#include "port/gen.h"
#include "port/sim.h"
#include "rxpath/csum.h"
#include "rxpath/proto.h"

#define CASES_MAX 12
#define WORKER_COUNTS_MAX 8
#define REPS_MAX 101
#define BIG_TABLE_ROUTES 1000000u

struct l3fwd_case {
	const char *name;
	const char *proto;
	const char *dst;	/* the generator's destination range */
	unsigned extra_routes;	/* random prefixes added to the table */
	unsigned ecmp;		/* next hops of each route (0, 1: one) */
	unsigned flows;		/* the generator's flows for this case; 0: --flows */
	enum { FILTER_NONE, FILTER_STATELESS, FILTER_CT_ESTABLISHED, FILTER_CT_NEW, FILTER_NAT,
	       FILTER_NAT_NEW, FILTER_EDGE } filter;
	unsigned rules;		/* FILTER_STATELESS, _EDGE: rules before the one that lets the traffic through */
	unsigned workers;
	struct dp_config cfg;
	struct dp dp;
	bool open;
	double samples[REPS_MAX];
	double samples_capture[REPS_MAX];	/* the same, capturing (--capture) */
	double cpu_ns[REPS_MAX];		/* with --capture: datapath CPU time per packet */
	double cpu_ns_capture[REPS_MAX];
	struct rxp_capture_file_stats capture;	/* summed over its measurements */
};

struct l3fwd_opts {
	double duration;
	unsigned reps;
	uint32_t size;
	uint32_t flows;
	bool json;
	bool per_packet;
	unsigned budget;	/* packets per poll at most */
	const char *capture_path;	/* NULL: no capture measurement */
	const char *capture_filter;
	unsigned capture_points;	/* RXP_CAPTURE_* */
	const char *capture_points_text;
	unsigned worker_counts[WORKER_COUNTS_MAX];
	unsigned n_worker_counts;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rxpath bench l3fwd [OPTIONS]\n"
		"\n"
		"Forwarding rate on one core: frames from sim port sim0 are routed to sim port\n"
		"sim1 (validate with IPv4 header checksum, LPM lookup, TTL/hop limit, MAC\n"
		"rewrite, transmit). Cases:\n"
		"  ipv4             16 /8 routes; UDP to 16.0.0.0/4\n"
		"  ipv6             16 /16 routes; UDP to 2000::/12\n"
		"  ipv4-1m-routes   the ipv4 table plus 1,000,000 random prefixes\n"
		"  ipv4-ecmp        the ipv4 routes each over 4 equal next hops (multipath)\n"
		"  ipv4-filter-10   ipv4 through 10 stateless forward rules (the last lets it through)\n"
		"  ipv4-filter-10k  the same with 10,000 rules\n"
		"  ipv4-1m-flows    ipv4 over the 1,000,000 flows of ipv4-ct-1m, nothing filtered:\n"
		"                   what so many flows cost before the tracking does\n"
		"  ipv4-ct-1m       ct-state established accept, policy drop, over 1,000,000\n"
		"                   connections made established before the measurement\n"
		"  ipv4-ct-new      every packet a new connection (1,048,576 flows through a\n"
		"                   65,536-entry table): Mpps is connections made, and dropped, per second\n"
		"  ipv4-nat         source NAT to a pool of 32 addresses over 1,000,000 live\n"
		"                   mappings, their answers coming back on sim1 (both\n"
		"                   directions, mixed): a masquerade to one address holds\n"
		"                   at most 64,512 UDP mappings\n"
		"  ipv4-edge        a gateway's whole job: ipv4-nat's 1,000,000 mappings behind\n"
		"                   1,000 forward rules (established,related accept first, the\n"
		"                   ipv4-filter rules, policy drop), the traffic established\n"
		"  ipv4-nat-new     masquerade, every packet a new mapping (1,048,576 flows through\n"
		"                   a 32,768-entry table): Mpps is mappings made, and let go, per second\n"
		"  --cases LIST     the cases to measure, by name, separated by commas (default all)\n"
		"\n"
		"  --duration S     seconds per measurement (default 1)\n"
		"  --reps N         repetitions per case, interleaved (default 5)\n"
		"  --size N         frame size with FCS (default 64)\n"
		"  --flows N        flows (default 4096)\n"
		"  --handoff MODE   list (default) or packet\n"
		"  --budget N       packets per poll at most, 1 to 256 (default 64, as in run)\n"
		"  --workers LIST   worker counts to measure, e.g. 1,2 (default 1): each\n"
		"                   worker polls its own queue of both ports (RSS spreads\n"
		"                   the flows) on its own CPU\n"
		"  --capture FILE   also measure each case while capturing on all ports into\n"
		"                   FILE (pcapng), taking turns with the measurement\n"
		"                   without; FILE is rewritten each time\n"
		"  --capture-points P  with --capture: rx, tx, drop, all (default) or a\n"
		"                   list joined with '+' (rx+drop)\n"
		"  --capture-filter EXPR  with --capture: a BPF filter (tcpdump syntax)\n"
		"  --json           one JSON array on stdout\n");
}

/* xorshift: the random prefixes are the same on every run */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int add_cmd(struct dp_config *cfg, const char *line, char *err, size_t errlen)
{
	return config_apply_line(cfg, line, "bench", err, errlen);
}

static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * Returns the forwarding rate of @c (Mpps, wall clock) and sets *@cpu_ns to
 * this thread's CPU time per forwarded packet, warm-up included: on a
 * shared machine the CPU time shows the datapath's own cost when other
 * threads (the capture writer among them) take turns on its core.
 */
/* What the router sent on: the ports' transmits over every queue (sim0's are the NAT case's answers). */
static uint64_t forwarded(const struct dp *dp)
{
	uint64_t n = 0;

	/* the other workers' counters, read while they run: a benchmark's tolerance */
	for (unsigned p = 0; p < dp->n_ports; p++)
		for (uint16_t q = 0; q < dp->ports[p].n_queues; q++)
			n += __atomic_load_n(&dp->ports[p].queues[q].stats.tx_packets, __ATOMIC_RELAXED);
	return n;
}

static double measure(struct l3fwd_case *c, const struct l3fwd_opts *o, double *cpu_ns)
{
	int cpus[DP_WORKERS_MAX];
	uint64_t n0 = forwarded(&c->dp);
	double t0, mpps;
	char err[256];

	if (c->workers == 1) {
		t0 = thread_cpu_ns();
		mpps = dp_measure_rate(&c->dp, forwarded, o->duration);
		*cpu_ns = (thread_cpu_ns() - t0) / (double)RXP_MAX(forwarded(&c->dp) - n0, 1);
		return mpps;
	}
	/* the other workers poll on their own cores; one thread's CPU time says little here */
	*cpu_ns = 0;
	if (dp_workers_start(&c->dp, cpus, err, sizeof(err))) {
		fprintf(stderr, "rxpath bench l3fwd: %s\n", err);
		dp_workers_stop(&c->dp);	/* gives this thread its CPUs back */
		return 0;
	}
	mpps = dp_measure_rate(&c->dp, forwarded, o->duration);
	dp_workers_stop(&c->dp);
	return mpps;
}

/*
 * Measures @c with a capture of every point on every port running. Returns
 * 0 with the rate in *@mpps and the CPU time per packet in *@cpu_ns, or -1
 * with @err.
 */
static int measure_capturing(struct l3fwd_case *c, const struct l3fwd_opts *o, double *mpps,
			     double *cpu_ns, char *err, size_t errlen)
{
	const char *names[RXP_PORTS_MAX] = { NULL };
	struct rxp_capture_file_spec spec = {
		.path = o->capture_path,
		.points = o->capture_points,
		.port = RXP_CAPTURE_FILE_ALL_PORTS,
		.filter = o->capture_filter,
		.port_names = names,
		.n_ports = RXP_PORTS_MAX,
	};
	struct rxp_capture_file_stats s;
	struct rxp_capture_file *cf;

	for (unsigned p = 0; p < c->dp.n_ports; p++)
		names[c->dp.ports[p].id] = c->dp.ports[p].name;
	if (rxp_capture_file_start(&c->dp.stack, &spec, &cf, err, errlen))
		return -1;
	*mpps = measure(c, o, cpu_ns);
	if (rxp_capture_file_stop(&c->dp.stack, cf, &s, err, errlen))
		return -1;
	c->capture.captured += s.captured;
	c->capture.lost += s.lost;
	c->capture.filtered += s.filtered;
	c->capture.written += s.written;
	c->capture.file_bytes += s.file_bytes;
	return 0;
}

/* Prints the capturing measurement of @c beside the one without (@off_med). */
static void print_capture_row(const struct l3fwd_case *c, const struct l3fwd_opts *o,
			      double off_med)
{
	double med, lo, hi, cpu, cpu_off, n = o->reps;

	summarize_samples(c->cpu_ns, o->reps, &cpu_off, &lo, &hi);
	summarize_samples(c->cpu_ns_capture, o->reps, &cpu, &lo, &hi);
	summarize_samples(c->samples_capture, o->reps, &med, &lo, &hi);
	if (o->json)
		printf(",\n  {\"case\":\"%s+capture\",\"frame_size\":%u,\"workers\":1,\"handoff\":\"%s\","
		       "\"mpps\":%.4f,\"ns_per_packet\":%.3f,\"mpps_min\":%.4f,\"mpps_max\":%.4f,"
		       "\"spread_pct\":%.2f,\"reps\":%u,\"mpps_without_capture\":%.4f,"
		       "\"cpu_ns_per_packet\":%.2f,\"cpu_ns_per_packet_without_capture\":%.2f,"
		       "\"captured_per_run\":%.0f,\"lost_per_run\":%.0f,\"file_bytes_per_run\":%.0f}",
		       c->name, o->size, o->per_packet ? "per-packet" : "list", med,
		       med > 0 ? 1000 / med : 0, lo, hi, med > 0 ? (hi - lo) / 2 / med * 100 : 0,
		       o->reps, off_med, cpu, cpu_off, (double)c->capture.captured / n,
		       (double)c->capture.lost / n, (double)c->capture.file_bytes / n);
	else
		printf("%-16s %8.2f %8.2f %8.2f %8.2f %8.1f  %+.1f%% Mpps, %+.1f cpu ns/pkt, captured %.0f, lost %.0f\n",
		       "  +capture", med, med > 0 ? 1000 / med : 0, lo, hi, cpu,
		       off_med > 0 ? (med / off_med - 1) * 100 : 0, cpu - cpu_off,
		       (double)c->capture.captured / n, (double)c->capture.lost / n);
}

/*
 * @n random forward rules none of the bench's traffic (UDP to port 9 from
 * 198.18/15) matches, as an edge's list looks: TCP services, UDP services
 * on other ports, blocked prefixes outside the traffic's sources; then the
 * one that lets the traffic through. Seeded: every run the same. @inside:
 * none matches NAT's inside sources either (172.16.0.0/16).
 */
static int add_stateless_rules(struct dp_config *cfg, unsigned n, bool inside, char *err, size_t errlen)
{
	static const unsigned tcp_ports[] = { 22, 25, 53, 80, 110, 143, 443, 993, 3306, 8080 };
	uint64_t s = 0x243f6a8885a308d3ull;
	char line[256];

	for (unsigned i = 0; i < n; i++) {
		uint64_t r = rng_next(&s);
		uint32_t a = (uint32_t)(r >> 32), b = (uint32_t)r;
		unsigned len = 8 + (unsigned)(r >> 12) % 25, dlen = 8 + (unsigned)(r >> 20) % 25;
		const char *verdict = i % 2 ? "drop" : "accept";

		/* no source in 198.18.0.0/15, the traffic's */
		if ((a >> 24) == 198 || (inside && (a >> 24) == 172))
			a ^= 0x40000000u;
		a &= len ? ~0u << (32 - len) : 0;
		b &= dlen ? ~0u << (32 - dlen) : 0;
		switch (r % 3) {
		case 0:
			snprintf(line, sizeof(line), "filter add forward src %u.%u.%u.%u/%u proto tcp dport %u %s",
				 a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255, len,
				 tcp_ports[(r >> 40) % RXP_ARRAY_SIZE(tcp_ports)], verdict);
			break;
		case 1:
			snprintf(line, sizeof(line), "filter add forward dst %u.%u.%u.%u/%u proto udp dport %u-%u %s",
				 b >> 24, b >> 16 & 255, b >> 8 & 255, b & 255, dlen, 10 + (unsigned)(r >> 44) % 1000,
				 1100 + (unsigned)(r >> 50) % 1000, verdict);
			break;
		default:
			snprintf(line, sizeof(line), "filter add forward src %u.%u.%u.%u/%u dst %u.%u.%u.%u/%u %s",
				 a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255, len,
				 b >> 24, b >> 16 & 255, b >> 8 & 255, b & 255, dlen, verdict);
			break;
		}
		if (add_cmd(cfg, line, err, errlen))
			return -1;
	}
	return add_cmd(cfg, "filter add forward proto udp dport 9 accept", err, errlen) ||
	       add_cmd(cfg, "filter policy forward drop", err, errlen) ? -1 : 0;
}

/*
 * Makes every flow sim0 sends a connection that has seen its reply, as
 * traffic in both directions would have: the first packet tracked and
 * confirmed, then the answer tracked.
 */
static int make_established(struct l3fwd_case *c, char *err, size_t errlen)
{
	struct rxp_stack *st = dp_stack(&c->dp, 0);
	uint64_t now = st->now_ns;

	for (unsigned q = 0; q < c->workers; q++) {
		const struct rxp_gen *g = rxp_sim_gen(&c->dp.ports[0], (uint16_t)q);

		for (uint32_t i = 0; g && i < g->n_good; i++) {
			const uint8_t *frame = g->frames + (size_t)i * g->stride;
			struct rxp_ct_pkt p, reply;
			struct rxp_ct_ref ref;

			if (g->lens[i] < RXP_ETH_HLEN ||
			    rxp_ct_parse(frame + RXP_ETH_HLEN, g->lens[i] - RXP_ETH_HLEN, 4, &p))
				continue;
			rxp_ct_enter(st->ct, 0);
			if (rxp_ct_track(st->ct, 0, &p, now, &ref) == RXP_ACL_CT_NEW &&
			    rxp_ct_confirm(st->ct, 0, &p, now, &ref)) {
				rxp_ct_leave(st->ct, 0);
				snprintf(err, errlen, "the connection table filled at %u flows", i);
				return -1;
			}
			reply = p;
			memcpy(reply.t.src, p.t.dst, 16);
			memcpy(reply.t.dst, p.t.src, 16);
			reply.t.sport = p.t.dport;
			reply.t.dport = p.t.sport;
			rxp_ct_track(st->ct, 0, &reply, now, &ref);
			rxp_ct_leave(st->ct, 0);
		}
	}
	return 0;
}

struct answers {
	struct dp *dp;
	unsigned queue, n_queues;
	uint32_t next[DP_WORKERS_MAX];	/* per sim1 queue: the next template to write */
	uint32_t written;
};

/* One translated connection's answer as a sim1 template: from its destination to its mapping. */
static int write_answer(const struct rxp_ct_view *v, void *ctx)
{
	struct answers *a = ctx;
	unsigned q = a->queue++ % a->n_queues;
	struct rxp_gen *g = rxp_sim_gen_rw(&a->dp->ports[1], (uint16_t)q);
	uint8_t *f;
	struct rxp_ip4_hdr *ip;
	struct rxp_udp_hdr *uh;

	if (!g || a->next[q] >= g->n_good || v->orig.family != 4 || v->orig.proto != RXP_IPPROTO_UDP)
		return 0;
	f = g->frames + (size_t)a->next[q]++ * g->stride;
	ip = (struct rxp_ip4_hdr *)(f + RXP_ETH_HLEN);
	uh = (struct rxp_udp_hdr *)(ip + 1);
	memcpy(&ip->src, v->reply.src, 4);
	memcpy(&ip->dst, v->reply.dst, 4);
	ip->csum = 0;
	ip->csum = rxp_csum(ip, RXP_IP4_HLEN);
	uh->sport = htons(v->reply.sport);
	uh->dport = htons(v->reply.dport);
	uh->csum = 0;	/* none (RFC 768): the router keeps it so */
	a->written++;
	return 0;
}

/*
 * Makes the NAT case's mappings, sending every flow of sim0 once through
 * the router, then writes sim1's templates as their answers: the
 * measurement then forwards both directions of a million translated
 * connections.
 */
static int make_mappings(struct l3fwd_case *c, char *err, size_t errlen)
{
	struct rxp_ct *ct = c->dp.filter->ct;
	struct answers a = { .dp = &c->dp, .n_queues = c->workers };
	uint32_t made = 0;

	for (unsigned tries = 0; tries < 40 && ct; tries++) {
		const struct l3fwd_opts brief = { .duration = 0.1 };
		double cpu_ns;

		measure(c, &brief, &cpu_ns);	/* every worker, its queues' flows */
		made = rxp_nat_map_count(c->dp.filter->nat.map);
		if (made >= c->flows)
			break;
	}
	if (!ct || made < c->flows) {
		snprintf(err, errlen, "only %u of %u mappings were made", made, c->flows);
		return -1;
	}
	rxp_ct_walk(ct, dp_stack(&c->dp, 0)->now_ns, write_answer, &a);
	if (a.written < c->flows) {
		snprintf(err, errlen, "only %u of %u answers were written", a.written, c->flows);
		return -1;
	}
	return 0;
}

/* Is @name in the comma-separated @list (NULL: every case is)? */
static bool case_wanted(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return true;
	return !list;
}

static int build_case(struct l3fwd_case *c, const struct l3fwd_opts *o, char *err, size_t errlen)
{
	char line[256];
	bool v6 = !strcmp(c->proto, "udp6");
	bool nat = c->filter == FILTER_NAT || c->filter == FILTER_EDGE;

	dp_config_default(&c->cfg);
	c->cfg.log = fmt_log_stderr;
	c->cfg.tuning.handoff = o->per_packet ? RXP_HANDOFF_PACKET : RXP_HANDOFF_LIST;
	c->cfg.tuning.budget = (uint16_t)o->budget;
	c->cfg.n_workers = c->workers;
	/* NAT's inside hosts sit behind a gateway: their answers need no neighbour each */
	snprintf(line, sizeof(line), "port add sim0 sim:proto=%s,size=%u,flows=%u,%s=%s,queues=%u%s",
		 c->proto, o->size, c->flows ? c->flows : o->flows, v6 ? "dst6" : "dst4", c->dst, c->workers,
		 nat ? ",src4=172.16.0.0/16" : "");
	if (add_cmd(&c->cfg, line, err, errlen))
		return -1;
	if (nat)	/* sim1 sends the answers (make_mappings writes them) */
		snprintf(line, sizeof(line), "port add sim1 sim:proto=udp4,size=%u,flows=%u,queues=%u", o->size,
			 c->flows, c->workers);
	else
		snprintf(line, sizeof(line), "port add sim1 sim:rx=off,queues=%u", c->workers);
	if (add_cmd(&c->cfg, line, err, errlen) ||
	    add_cmd(&c->cfg, "addr add 198.18.255.254/16 dev sim0", err, errlen) ||
	    add_cmd(&c->cfg, "addr add 10.0.1.1/24 dev sim1", err, errlen) ||
	    add_cmd(&c->cfg, "addr add 2001:db8:1::1/64 dev sim0", err, errlen) ||
	    add_cmd(&c->cfg, "addr add 2001:db8:ff::1/64 dev sim1", err, errlen) ||
	    add_cmd(&c->cfg, "neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev sim1", err, errlen) ||
	    add_cmd(&c->cfg, "neigh add 2001:db8:ff::2 lladdr 02:00:00:00:01:02 dev sim1", err, errlen))
		return -1;
	for (unsigned i = 1; i < c->ecmp; i++) {
		snprintf(line, sizeof(line), "neigh add 10.0.1.%u lladdr 02:00:00:00:01:%02x dev sim1", 2 + i, 2 + i);
		if (add_cmd(&c->cfg, line, err, errlen))
			return -1;
	}
	for (unsigned i = 0; i < 16; i++) {
		if (v6)
			snprintf(line, sizeof(line), "route add 20%02x::/16 via 2001:db8:ff::2", i);
		else if (c->ecmp > 1)
			snprintf(line, sizeof(line), "route add %u.0.0.0/8 nexthop via 10.0.1.2 nexthop via 10.0.1.3 "
				 "nexthop via 10.0.1.4 nexthop via 10.0.1.5", 16 + i);
		else
			snprintf(line, sizeof(line), "route add %u.0.0.0/8 via 10.0.1.2", 16 + i);
		if (add_cmd(&c->cfg, line, err, errlen))
			return -1;
	}
	switch (c->filter) {
	case FILTER_NONE:
		break;
	case FILTER_STATELESS:
		if (add_stateless_rules(&c->cfg, c->rules, false, err, errlen))
			return -1;
		break;
	case FILTER_CT_ESTABLISHED:
		c->cfg.ct_max = 2 * c->flows;
		if (add_cmd(&c->cfg, "filter add forward ct-state established,related accept", err, errlen) ||
		    add_cmd(&c->cfg, "filter policy forward drop", err, errlen))
			return -1;
		break;
	case FILTER_EDGE:	/* ipv4-nat behind a gateway's policy: what went out may answer */
		if (add_cmd(&c->cfg, "filter add forward ct-state established,related accept", err, errlen) ||
		    add_stateless_rules(&c->cfg, c->rules, true, err, errlen))
			return -1;
		__attribute__((fallthrough));
	case FILTER_NAT:
		c->cfg.ct_max = 2 * c->flows;
		if (add_cmd(&c->cfg, "neigh add 198.18.0.2 lladdr 02:00:00:00:00:02 dev sim0", err, errlen) ||
		    add_cmd(&c->cfg, "route add 172.16.0.0/16 via 198.18.0.2", err, errlen) ||
		    add_cmd(&c->cfg, "nat add snat out sim1 to 10.0.1.100-10.0.1.131", err, errlen))
			return -1;
		break;
	case FILTER_NAT_NEW:
		c->cfg.ct_max = 32768;	/* under the address's 64,512 ports: early drop frees a mapping for the next */
		if (add_cmd(&c->cfg, "nat add masquerade out sim1", err, errlen))
			return -1;
		break;
	case FILTER_CT_NEW:
		c->cfg.ct_max = 65536;
		if (add_cmd(&c->cfg, "filter add forward ct-state established,related accept", err, errlen) ||
		    add_cmd(&c->cfg, "filter add forward ct-state new accept", err, errlen) ||
		    add_cmd(&c->cfg, "filter policy forward drop", err, errlen))
			return -1;
		break;
	}
	if (dp_open(&c->dp, &c->cfg, err, errlen))
		return -1;
	c->open = true;
	if (c->filter == FILTER_CT_ESTABLISHED && make_established(c, err, errlen))
		return -1;
	if (nat && make_mappings(c, err, errlen))
		return -1;
	if (c->extra_routes) {
		uint64_t s = 0x9e3779b97f4a7c15ull;
		uint8_t gw[4] = { 10, 0, 1, 2 };

		uint32_t target = rxp_lpm4_count(c->dp.router->fib4) + c->extra_routes;

		while (rxp_lpm4_count(c->dp.router->fib4) < target) {
			uint64_t r = rng_next(&s);
			/* lengths as in a real table: mostly /24, many /16-/23, a few longer */
			static const uint8_t lens[16] = { 24, 24, 24, 24, 24, 24, 24, 24, 23, 22, 22, 21,
							  20, 19, 16, 28 };
			uint8_t len = lens[r & 15];
			uint32_t a = htonl((uint32_t)(r >> 32));
			uint8_t first = (uint8_t)(r >> 56);

			/* unicast space outside our own subnets and the martians */
			if (first == 0 || first == 10 || first == 127 || first >= 224 || first == 198)
				continue;
			if (rxp_router_add_route(c->dp.router, RXP_VRF_DEFAULT, 4, (const uint8_t *)&a, len, gw, -1) == -ENOSPC)
				break;
		}
	}
	return 0;
}

int cmd_bench_l3fwd(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "reps", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' },
		{ "flows", required_argument, NULL, 'f' },
		{ "handoff", required_argument, NULL, 'H' },
		{ "budget", required_argument, NULL, 'b' },
		{ "workers", required_argument, NULL, 'w' },
		{ "capture", required_argument, NULL, 'c' },
		{ "capture-filter", required_argument, NULL, 'F' },
		{ "capture-points", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "cases", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const struct l3fwd_case base[] = {
		{ .name = "ipv4", .proto = "udp4", .dst = "16.0.0.0/4" },
		{ .name = "ipv6", .proto = "udp6", .dst = "2000::/12" },
		{ .name = "ipv4-1m-routes", .proto = "udp4", .dst = "16.0.0.0/4",
		  .extra_routes = BIG_TABLE_ROUTES },
		{ .name = "ipv4-ecmp", .proto = "udp4", .dst = "16.0.0.0/4", .ecmp = 4 },
		{ .name = "ipv4-filter-10", .proto = "udp4", .dst = "16.0.0.0/4",
		  .filter = FILTER_STATELESS, .rules = 9 },
		{ .name = "ipv4-filter-10k", .proto = "udp4", .dst = "16.0.0.0/4",
		  .filter = FILTER_STATELESS, .rules = 9999 },
		{ .name = "ipv4-1m-flows", .proto = "udp4", .dst = "16.0.0.0/4", .flows = 1000000 },
		{ .name = "ipv4-ct-1m", .proto = "udp4", .dst = "16.0.0.0/4",
		  .filter = FILTER_CT_ESTABLISHED, .flows = 1000000 },
		{ .name = "ipv4-ct-new", .proto = "udp4", .dst = "16.0.0.0/4",
		  .filter = FILTER_CT_NEW, .flows = 1u << 20 },
		{ .name = "ipv4-nat", .proto = "udp4", .dst = "16.0.0.0/4",
		  .filter = FILTER_NAT, .flows = 1000000 },
		{ .name = "ipv4-edge", .proto = "udp4", .dst = "16.0.0.0/4",
		  .filter = FILTER_EDGE, .rules = 998, .flows = 1000000 },
		{ .name = "ipv4-nat-new", .proto = "udp4", .dst = "16.0.0.0/4",
		  .filter = FILTER_NAT_NEW, .flows = 1u << 20 },
	};
	const char *only = NULL;	/* --cases */
	static struct l3fwd_case cases[CASES_MAX * WORKER_COUNTS_MAX];
	struct l3fwd_opts o = { .duration = 1, .reps = 5, .size = 64, .flows = 4096,
				.budget = RXP_BUDGET_DEFAULT,
				.capture_points = RXP_CAPTURE_POINTS_ALL, .capture_points_text = "all",
				.worker_counts = { 1 }, .n_worker_counts = 1 };
	unsigned n_cases = 0, done = 0;
	bool tty = isatty(STDERR_FILENO);
	char err[512];
	uint64_t v;
	int opt, ret = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			if (parse_seconds(optarg, 0.01, 60, &o.duration)) {
				fprintf(stderr, "rxpath bench l3fwd: --duration %s: expected seconds from 0.01 to 60\n", optarg);
				return 2;
			}
			break;
		case 'r':
			if (rxp_parse_u64(optarg, 1, REPS_MAX, &v)) {
				fprintf(stderr, "rxpath bench l3fwd: --reps %s: expected 1 to %d\n", optarg, REPS_MAX);
				return 2;
			}
			o.reps = (unsigned)v;
			break;
		case 's':
			if (rxp_parse_u64(optarg, 64, 1518, &v)) {
				fprintf(stderr, "rxpath bench l3fwd: --size %s: expected 64 to 1518\n", optarg);
				return 2;
			}
			o.size = (uint32_t)v;
			break;
		case 'f':
			if (rxp_parse_u64(optarg, 1, 65536, &v)) {
				fprintf(stderr, "rxpath bench l3fwd: --flows %s: expected 1 to 65536\n", optarg);
				return 2;
			}
			o.flows = (uint32_t)v;
			break;
		case 'H':
			if (strcmp(optarg, "list") && strcmp(optarg, "packet")) {
				fprintf(stderr, "rxpath bench l3fwd: --handoff %s: expected list or packet\n", optarg);
				return 2;
			}
			o.per_packet = !strcmp(optarg, "packet");
			break;
		case 'b':
			if (rxp_parse_u64(optarg, 1, RXP_BURST_MAX, &v)) {
				fprintf(stderr, "rxpath bench l3fwd: --budget %s: expected 1 to %u\n", optarg,
					RXP_BURST_MAX);
				return 2;
			}
			o.budget = (unsigned)v;
			break;
		case 'C':
			only = optarg;
			break;
		case 'w': {
			char *list = optarg, *tok, *save = NULL;

			o.n_worker_counts = 0;
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (o.n_worker_counts == WORKER_COUNTS_MAX ||
				    rxp_parse_u64(tok, 1, DP_WORKERS_MAX, &v)) {
					fprintf(stderr, "rxpath bench l3fwd: --workers: '%s': expected up to %d worker counts from 1 to %d, like 1,2\n",
						tok, WORKER_COUNTS_MAX, DP_WORKERS_MAX);
					return 2;
				}
				o.worker_counts[o.n_worker_counts++] = (unsigned)v;
			}
			if (!o.n_worker_counts) {
				fprintf(stderr, "rxpath bench l3fwd: --workers: expected worker counts, like 1,2\n");
				return 2;
			}
			break;
		}
		case 'c':
			o.capture_path = optarg;
			break;
		case 'F':
			o.capture_filter = optarg;
			break;
		case 'P':
			if (rxp_capture_points_parse(optarg, &o.capture_points)) {
				fprintf(stderr, "rxpath bench l3fwd: --capture-points %s: expected rx, tx, drop, all, or several joined with '+'\n",
					optarg);
				return 2;
			}
			o.capture_points_text = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "rxpath bench l3fwd: see 'rxpath bench l3fwd --help'\n");
			return 2;
		}
	}
	if ((o.capture_filter || o.capture_points != RXP_CAPTURE_POINTS_ALL) && !o.capture_path) {
		fprintf(stderr, "rxpath bench l3fwd: --capture-filter and --capture-points need --capture FILE\n");
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "rxpath bench l3fwd: unexpected argument '%s'; see 'rxpath bench l3fwd --help'\n",
			argv[optind]);
		return 2;
	}
	if (only) {
		char list[256], *tok, *save = NULL;

		snprintf(list, sizeof(list), "%s", only);
		for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			bool known = false;

			for (unsigned b = 0; b < RXP_ARRAY_SIZE(base); b++)
				known |= !strcmp(tok, base[b].name);
			if (!known) {
				fprintf(stderr, "rxpath bench l3fwd: --cases: '%s': no such case; see 'rxpath bench l3fwd --help'\n", tok);
				return 2;
			}
		}
	}
	for (unsigned b = 0; b < RXP_ARRAY_SIZE(base); b++)
		for (unsigned k = 0; k < o.n_worker_counts && case_wanted(only, base[b].name); k++) {
			cases[n_cases] = base[b];
			cases[n_cases++].workers = o.worker_counts[k];
		}
	for (unsigned i = 0; i < n_cases; i++) {
		fprintf(stderr, "%sbench l3fwd: building %s, %u worker%s%s", tty ? "\r" : "",
			cases[i].name, cases[i].workers, cases[i].workers == 1 ? "" : "s",
			tty ? "          " : "\n");
		if (build_case(&cases[i], &o, err, sizeof(err))) {
			fprintf(stderr, "%srxpath bench l3fwd: %s: %s\n", tty ? "\n" : "", cases[i].name, err);
			ret = 1;
			goto out;
		}
	}
	for (unsigned rep = 0; rep < o.reps; rep++) {
		for (unsigned k = 0; k < n_cases; k++) {
			struct l3fwd_case *c = &cases[(k + rep) % n_cases];

			if (tty)
				fprintf(stderr, "\rbench l3fwd: %2u/%u  %-16s repetition %u/%u ", ++done,
					n_cases * o.reps, c->name, rep + 1, o.reps);
			/* capture on and off take turns going first */
			if (o.capture_path && c->workers == 1 && rep % 2 == 0 &&
			    measure_capturing(c, &o, &c->samples_capture[rep], &c->cpu_ns_capture[rep],
					      err, sizeof(err)))
				goto capture_failed;
			/* what leaves sim1 is what was forwarded */
			c->samples[rep] = measure(c, &o, &c->cpu_ns[rep]);
			if (o.capture_path && c->workers == 1 && rep % 2 == 1 &&
			    measure_capturing(c, &o, &c->samples_capture[rep], &c->cpu_ns_capture[rep],
					      err, sizeof(err)))
				goto capture_failed;
		}
		if (!tty)
			fprintf(stderr, "bench l3fwd: repetition %u/%u done\n", rep + 1, o.reps);
	}
	if (tty)
		fprintf(stderr, "\r%-60s\r", "");
	if (!o.json)
		printf("rxpath bench l3fwd: sim0 -> route -> sim1, %u-byte frames, %u flows, %s handoff, "
		       "budget %u\n"
		       "%u repetitions x %.2f s, interleaved; medians, spread = (max-min)/2 as %% of median;\n"
		       "ns/pkt is per worker (workers x 1000 / Mpps)\n\n"
		       "%-16s %7s %8s %8s %8s %8s%s\n",
		       o.size, o.flows, o.per_packet ? "per-packet" : "list", o.budget, o.reps, o.duration,
		       "case",
		       "workers", "Mpps", "ns/pkt", "min", "max", o.capture_path ? "   cpu ns" : "");
	else
		printf("[");
	for (unsigned i = 0; i < n_cases; i++) {
		struct l3fwd_case *c = &cases[i];
		double med, lo, hi;

		double one = 0, d1, d2;

		summarize_samples(c->samples, o.reps, &med, &lo, &hi);
		/* the same case with one worker, when measured: the scaling ratio */
		for (unsigned k = 0; k < n_cases; k++)
			if (cases[k].workers == 1 && !strcmp(cases[k].name, c->name))
				summarize_samples(cases[k].samples, o.reps, &one, &d1, &d2);
		if (o.json) {
			printf("%s\n  {\"case\":\"%s\",\"frame_size\":%u,\"workers\":%u,\"handoff\":\"%s\","
			       "\"budget\":%u,"
			       "\"mpps\":%.4f,\"ns_per_packet\":%.3f,\"mpps_min\":%.4f,\"mpps_max\":%.4f,"
			       "\"spread_pct\":%.2f,\"routes\":%u,\"reps\":%u",
			       i ? "," : "", c->name, o.size, c->workers, o.per_packet ? "per-packet" : "list",
			       o.budget,
			       med, med > 0 ? 1000 * c->workers / med : 0, lo, hi,
			       med > 0 ? (hi - lo) / 2 / med * 100 : 0,
			       /* the case's own family's FIB, connected and local routes included */
			       !strcmp(c->proto, "udp6") ? rxp_lpm6_count(c->dp.router->fib6) :
			       rxp_lpm4_count(c->dp.router->fib4), o.reps);
			if (one > 0)
				printf(",\"scaling\":%.3f", med / one);
			printf("}");
		} else {
			printf("%-16s %7u %8.2f %8.2f %8.2f %8.2f", c->name, c->workers, med,
			       med > 0 ? 1000 * c->workers / med : 0, lo, hi);
			if (c->workers > 1 && one > 0)
				printf("   %.2fx the 1-worker rate", med / one);
		}
		if (!o.json && o.capture_path) {
			double cpu, cpu_lo, cpu_hi;

			summarize_samples(c->cpu_ns, o.reps, &cpu, &cpu_lo, &cpu_hi);
			printf(" %8.1f", cpu);
		}
		if (!o.json)
			printf("\n");
		if (o.capture_path && c->workers == 1)
			print_capture_row(c, &o, med);
	}
	if (o.json)
		printf("\n]\n");
	else if (o.capture_path)
		printf("\n+capture: %s on all ports into %s%s%s%s; captured and lost\n"
		       "are per measurement (lost: the capture buffer was full); cpu ns: the datapath\n"
		       "thread's CPU time per forwarded packet (what other threads on its core cost\n"
		       "shows in Mpps, not there)\n",
		       o.capture_points_text, o.capture_path, o.capture_filter ? ", filter '" : "",
		       o.capture_filter ? o.capture_filter : "", o.capture_filter ? "'" : "");
	goto out;
capture_failed:
	fprintf(stderr, "%srxpath bench l3fwd: --capture: %s\n", tty ? "\n" : "", err);
	ret = 1;
out:
	for (unsigned i = 0; i < n_cases; i++) {
		if (cases[i].open && dp_close(&cases[i].dp)) {
			fprintf(stderr, "rxpath bench l3fwd: %s: buffers not accounted for\n", cases[i].name);
			ret = 1;
		}
		dp_config_free(&cases[i].cfg);
	}
	return ret;
}
