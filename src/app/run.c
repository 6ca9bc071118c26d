/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/config.h"
#include "engine/control.h"
#include "ctl/ctl_server.h"
#include "engine/loop.h"
#include "engine/workers.h"
#include "core/clock.h"
#include "core/fmt.h"
#include "ctl/metrics.h"
#include "privilege.h"
#include "report.h"
#include "run.h"
#include "port/pcap_port.h"

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

/* What the run does at each clock read of worker 0's poll loop. */
struct run_turn {
	struct dp *dp;
	struct control *ctl;
	const struct run_opts *o;
	struct port_snap snap[DP_PORTS_MAX];
	double start, last;	/* seconds: the loop's start, the last live line */
};

/* The loop's hook: the mailbox and the live lines. Returns true: go on. */
static bool run_at_clock(void *arg, uint64_t now_ns)
{
	struct run_turn *t = arg;
	double now = (double)now_ns * 1e-9;

	control_service(t->ctl);
	if (t->o->interval > 0 && now - t->last >= t->o->interval) {
		report_interval(t->dp, t->snap, t->last, now, t->start, t->o->json);
		t->last = now;
	}
	return true;
}

/* Runs worker 0's poll loop until a signal, --duration or the end of the inputs. Returns the seconds it ran. */
static double run_loop(struct dp *dp, struct control *ctl, const struct run_opts *o)
{
	struct run_turn t = { .dp = dp, .ctl = ctl, .o = o };
	const struct dp_loop loop = {
		.duration = o->duration,
		.stop = &stop_requested,
		.until_finished = true,
		.sleep_when_idle = true,
		.at_clock = run_at_clock,
		.ctx = &t,
	};
	double now;

	t.start = t.last = rxp_clock_seconds();
	dp_loop_run(dp, 0, &loop);
	now = rxp_clock_seconds();
	if (o->interval > 0 && now - t.last > 0.001)
		report_interval(dp, t.snap, t.last, now, t.start, o->json);
	return now - t.start;
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
	cfg.log = fmt_log_stderr;
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
		dp.caps_dropped = priv_caps_dropped();	/* a later host path explains an EPERM with it */
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
