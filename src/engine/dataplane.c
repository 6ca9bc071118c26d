/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/clock.h"
#include "dataplane.h"
#include "dp_filter.h"
#include "rxpath/proto.h"
#include "workers.h"

#define ROUTES4_MAX (1u << 21)	/* a full IPv4 table (about 1,000,000) with room */
#define ROUTES6_MAX (1u << 18)	/* a full IPv6 table (about 200,000) with room */
#define IP_MTU_DEFAULT 1500u

/*
 * The most an interface's MTU can be (@vlan: a sub-port, whose tag takes
 * room): what a frame of the pool carries.
 */
uint32_t dp_if_max_mtu(const struct dp *dp, uint16_t vlan)
{
	return dp->pool->max_frame - RXP_ETH_HLEN - (vlan ? RXP_VLAN_HLEN : 0u);
}

/*
 * An interface's MTU unless configured: its device's, as Linux gives its
 * VLAN devices their parent's (a port without a device, sim or pcap, has
 * 1500, Ethernet's), within what a frame of the pool carries.
 */
uint32_t dp_if_default_mtu(const struct dp *dp, uint16_t port, uint16_t vlan)
{
	uint32_t dev = dp->ports[port].mtu;

	return RXP_MIN(dev ? dev : IP_MTU_DEFAULT, dp_if_max_mtu(dp, vlan));
}

void dp_log(const struct dp *dp, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!dp->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	dp->log(line);
}

/* A VLAN sub-port's MTU cannot pass its port's interface's (as Linux's VLAN devices); UINT32_MAX: no limit. */
static uint32_t parent_mtu(const struct rxp_router *r, const struct rxp_l3if *ifp)
{
	int parent = r->port_if[ifp->port];

	return ifp->vlan && parent >= 0 ? r->ifs[parent].mtu : UINT32_MAX;
}

uint64_t dp_packet_time(struct dp *dp, uint64_t wall)
{
	struct rxp_port *p = &dp->ports[dp->clock_port];
	uint64_t ts, t;

	if (!dp->clock_ended && !p->ops->next_time_ns(p, &ts)) {
		if (!dp->clock_started) {
			dp->clock_started = true;
			dp->clock_pkt0 = ts;
			dp->clock_at = RXP_MAX(wall, dp->clock_last);
		}
		t = dp->clock_at + (ts > dp->clock_pkt0 ? ts - dp->clock_pkt0 : 0);
	} else if (!dp->clock_started) {
		t = wall;	/* no frame yet */
	} else {
		if (!dp->clock_ended) {
			dp->clock_ended = true;
			dp->clock_at = dp->clock_last;
			dp->clock_wall_end = wall;
		}
		t = dp->clock_at + (wall > dp->clock_wall_end ? wall - dp->clock_wall_end : 0);
	}
	dp->clock_last = RXP_MAX(t, dp->clock_last);
	return dp->clock_last;
}

uint32_t dp_if_mtu(const struct dp *dp, int ifidx)
{
	const struct rxp_l3if *ifp = &dp->router->ifs[ifidx];
	uint32_t mtu = dp->mtu_cfg[ifidx] ? dp->mtu_cfg[ifidx] :
		       dp_if_default_mtu(dp, ifp->port, ifp->vlan);

	return RXP_MIN(mtu, parent_mtu(dp->router, ifp));
}

static int open_router(struct dp *dp, const struct dp_config *cfg, char *err, size_t errlen)
{
	struct rxp_router *r;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r || rxp_router_init(r, ROUTES4_MAX, ROUTES6_MAX)) {
		free(r);
		snprintf(err, errlen, "out of memory for the routing tables");
		return -ENOMEM;
	}
	dp->router = r;
	if (dp->pool->max_frame < RXP_ETH_HLEN + RXP_VLAN_HLEN + 68u) {
		snprintf(err, errlen, "--max-frame %u is too small for routing: an IP packet of 68 bytes must fit (RFC 791); use at least %u",
			 dp->pool->max_frame, RXP_ETH_HLEN + RXP_VLAN_HLEN + 68u);
		return -EINVAL;
	}
	for (unsigned i = 0; i < dp->n_ports; i++) {
		const struct rxp_port *p = &dp->ports[i];

		rxp_router_add_if(r, p->name, p->id, 0, p->mac, dp_if_default_mtu(dp, p->id, 0));
	}
	for (unsigned i = 0; i < cfg->n_vlans; i++) {
		const struct dp_vlan_config *v = &cfg->vlans[i];
		int parent = rxp_router_if_by_name(r, v->parent);
		uint16_t port = r->ifs[parent].port;

		ret = rxp_router_add_if(r, v->name, port, v->id, r->ifs[parent].mac,
					dp_if_default_mtu(dp, port, v->id));
		if (ret < 0) {
			snprintf(err, errlen, "VLAN sub-port %s: %s", v->name, dp_cmd_strerror(ret));
			return ret;
		}
	}
	ret = rxp_router_set_workers(r, dp->n_workers);
	if (ret) {
		snprintf(err, errlen, "cannot set up the routing tables' locks: %s", strerror(-ret));
		return ret;
	}
	for (unsigned w = 0; w < dp->n_workers; w++)
		rxp_stack_set_router(dp_stack(dp, w), r);
	for (unsigned i = 0; i < cfg->n_cmds; i++) {
		ret = dp_apply_cmd(dp, &cfg->cmds[i], err, errlen);
		if (ret)
			return ret;
	}
	return dp_filter_commit(dp, err, errlen);	/* the config's rules, compiled once */
}

int dp_router_enable(struct dp *dp, char *err, size_t errlen)
{
	struct dp_config none;
	int ret;

	if (dp->router)
		return 0;
	dp_config_default(&none);
	ret = open_router(dp, &none, err, errlen);
	if (ret)
		dp_router_disable(dp);
	return ret;
}

void dp_router_disable(struct dp *dp)
{
	if (!dp->router)
		return;
	for (unsigned w = 0; w < dp->n_workers; w++)
		rxp_stack_set_router(dp_stack(dp, w), NULL);
	rxp_router_free(dp->router);
	free(dp->router);
	dp->router = NULL;
}

void dp_stack_stats(struct dp *dp, struct rxp_stack_stats *out)
{
	*out = dp->stack.stats;
	for (unsigned w = 1; w < dp->n_workers; w++) {
		const struct rxp_stack_stats *s = &dp_stack(dp, w)->stats;

#define X(f, metric, help) out->f += s->f;
		RXP_STACK_COUNTERS(X)
#undef X
		for (int c = 0; c < RXP_SINK_MAX; c++)
			out->delivered[c] += s->delivered[c];
		for (int r = 0; r < RXP_DROP_MAX; r++)
			out->drops[r] += s->drops[r];
	}
}

uint64_t dp_port_drops(struct dp *dp, uint16_t port, unsigned reason)
{
	uint64_t n = 0;

	for (unsigned w = 0; w < dp->n_workers; w++)
		n += dp_stack(dp, w)->port_drops[port][reason];
	return n;
}

uint32_t dp_pool_stats(struct dp *dp, struct rxp_pool_stats *out)
{
	uint32_t held = 0;

	memset(out, 0, sizeof(*out));
	for (unsigned w = 0; w < dp->n_workers; w++) {
		const struct rxp_pool_cache *c = dp_cache(dp, w);

#define X(f, metric, help) out->f += c->stats.f;
		RXP_POOL_COUNTERS(X)
#undef X
		held += c->count;
	}
	return held;
}

void dp_totals(struct dp *dp, struct dp_totals *t)
{
	dp_stack_stats(dp, &t->stack);
	t->in_caches = dp_pool_stats(dp, &t->pool);
}

/* Workers 1..n-1: a cache and a stack each, transmitting on their own queue of every port. */
static int open_workers(struct dp *dp, const struct dp_config *cfg, char *err, size_t errlen)
{
	if (dp->n_workers == 1)
		return 0;
	for (unsigned i = 0; i < dp->n_ports; i++)
		if (dp->ports[i].n_queues < dp->n_workers) {
			snprintf(err, errlen,
				 "port %s has %u queue%s; --workers %u needs one per worker (sim: queues=%u; afxdp: queues=%u; afpacket: queues=%u)",
				 dp->ports[i].name, dp->ports[i].n_queues,
				 dp->ports[i].n_queues == 1 ? "" : "s", dp->n_workers, dp->n_workers,
				 dp->n_workers, dp->n_workers);
			return -EINVAL;
		}
	dp->workers = aligned_alloc(64, RXP_ALIGN_UP(sizeof(*dp->workers) * (dp->n_workers - 1), 64));
	if (!dp->workers) {
		snprintf(err, errlen, "out of memory for %u workers", dp->n_workers);
		return -ENOMEM;
	}
	memset(dp->workers, 0, sizeof(*dp->workers) * (dp->n_workers - 1));
	for (unsigned w = 1; w < dp->n_workers; w++)
		dp->workers[w - 1].idle.wake_fd = -1;
	for (unsigned w = 1; w < dp->n_workers; w++) {
		struct dp_worker *wk = &dp->workers[w - 1];

		wk->dp = dp;
		wk->id = w;
		wk->cpu = -1;
		dp_idle_init(&wk->idle);	/* without its eventfd the worker never sleeps */
		if (rxp_pool_cache_init(&wk->cache, dp->pool, RXP_POOL_CACHE_MAX) ||
		    rxp_stack_init(&wk->stack, &cfg->tuning, &wk->cache) ||
		    rxp_stack_share(&wk->stack, &dp->stack)) {
			snprintf(err, errlen, "cannot set up worker %u", w);
			return -ENOMEM;
		}
		wk->stack.timer_owner = false;	/* worker 0 runs the shared timers */
		for (unsigned i = 0; i < dp->n_ports; i++)
			rxp_stack_add_port(&wk->stack, dp->ports[i].id, dp->ports[i].mac,
					   &dp->ports[i].queues[w]);
	}
	return 0;
}

static void close_workers(struct dp *dp)
{
	if (!dp->workers)
		return;
	for (unsigned w = 1; w < dp->n_workers; w++) {
		if (dp->workers[w - 1].cache.pool)
			rxp_pool_cache_close(&dp->workers[w - 1].cache);
		dp_idle_close(&dp->workers[w - 1].idle);
	}
	free(dp->workers);
	dp->workers = NULL;
}

/*
 * The queues a port spec asks for (queues=N, 1 unless given or readable):
 * each has rings of its own to keep filled, so the pool grows with them.
 * A bad value is the driver's to report when it opens the port.
 */
static uint32_t spec_queues(const char *spec)
{
	const char *colon = strchr(spec, ':');
	struct rxp_args args;
	uint32_t n = 1;
	char err[RXP_ERR_LEN];

	if (!colon || rxp_args_parse(&args, colon + 1, err, sizeof(err)) ||
	    rxp_args_u32(&args, "queues", 1, RXP_QUEUES_MAX, &n, err, sizeof(err)))
		return 1;
	return n;
}

int dp_open(struct dp *dp, const struct dp_config *cfg, char *err, size_t errlen)
{
	struct rxp_pool_config pcfg = cfg->pool;
	int ret;

	memset(dp, 0, sizeof(*dp));
	dp->log = cfg->log;
	dp->n_workers = RXP_MAX(cfg->n_workers, 1u);
	dp->idle_spin = cfg->idle_spin;
	if (dp->n_workers > DP_WORKERS_MAX) {
		snprintf(err, errlen, "--workers %u: at most %u", dp->n_workers, DP_WORKERS_MAX);
		return -EINVAL;
	}
	dp_idle_init(&dp->idle);	/* without its eventfd worker 0 never sleeps */
	if (!pcfg.n_bufs) {
		/* every queue's rings and what is in flight, and every worker's cache */
		uint32_t queues = 0;

		for (unsigned i = 0; i < cfg->n_ports; i++)
			queues += spec_queues(cfg->ports[i].spec);
		pcfg.n_bufs = DP_BUFS_PER_PORT * RXP_MAX(queues, 1u) +
			      RXP_POOL_CACHE_MAX * dp->n_workers;
	}
	/* a driver may need a layout of its own (AF_XDP: the pool is its UMEM) */
	for (unsigned i = 0; i < cfg->n_ports; i++) {
		const struct rxp_port_ops *ops = rxp_port_driver_of_spec(cfg->ports[i].spec);

		if (ops && ops->pool_config)
			ops->pool_config(&pcfg);
	}
	dp->pool = rxp_pool_create(&pcfg, err, errlen);
	if (!dp->pool) {
		ret = -errno;
		goto err_idle;
	}
	ret = rxp_pool_cache_init(&dp->cache, dp->pool, RXP_POOL_CACHE_MAX);
	if (ret) {
		snprintf(err, errlen, "cannot set up the buffer cache");
		goto err_pool;
	}
	ret = rxp_stack_init(&dp->stack, &cfg->tuning, &dp->cache);
	if (ret) {
		snprintf(err, errlen,
			 "invalid receive settings: budget %u (1..%u), prefetch %u lines (0..2)",
			 cfg->tuning.budget, RXP_BURST_MAX, cfg->tuning.prefetch_lines);
		goto err_cache;
	}
	for (unsigned i = 0; i < cfg->n_ports; i++) {
		char perr[RXP_ERR_LEN];
		struct rxp_port *port = &dp->ports[i];

		ret = rxp_port_open(port, (uint16_t)i, cfg->ports[i].name, cfg->ports[i].spec,
				    dp->pool, perr, sizeof(perr));
		if (ret) {
			snprintf(err, errlen, "%s%sport %s: %s", cfg->ports[i].where,
				 cfg->ports[i].where[0] ? ": " : "", cfg->ports[i].name, perr);
			goto err_ports;
		}
		dp->n_ports++;
		rxp_stack_add_port(&dp->stack, port->id, port->mac, &port->queues[0]);
		for (unsigned k = 0; k < i; k++) {
			const uint8_t *m = port->mac;

			if (memcmp(dp->ports[k].mac, m, 6))
				continue;
			/* allowed on separate links, but rarely meant: a default MAC met a mac= */
			dp_log(dp, "warning: ports %s and %s have the same MAC "
			       "%02x:%02x:%02x:%02x:%02x:%02x, and so the same IPv6 link-local address; "
			       "give one of them another with mac=", dp->ports[k].name, port->name,
			       m[0], m[1], m[2], m[3], m[4], m[5]);
		}
	}
	ret = open_workers(dp, cfg, err, errlen);
	if (ret)
		goto err_ports;
	dp->clock_port = -1;
	for (unsigned i = 0; i < dp->n_ports; i++) {
		uint64_t ns;
		int r = dp->ports[i].ops->next_time_ns ? dp->ports[i].ops->next_time_ns(&dp->ports[i], &ns) : -ENOTSUP;

		if (r == -ENOTSUP)
			continue;
		if (dp->clock_port >= 0 || dp->n_workers > 1) {
			snprintf(err, errlen, "port %s: clock=packets: %s", dp->ports[i].name,
				 dp->clock_port >= 0 ? "one port only may drive the clock" :
						      "the clock from frames needs one worker (no --workers)");
			ret = -EINVAL;
			goto err_ports;
		}
		dp->clock_port = (int)i;
	}
	dp->filter = calloc(1, sizeof(*dp->filter));
	if (!dp->filter) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto err_ports;
	}
	dp_filter_init(dp, cfg->ct_max);
	if (cfg->n_cmds || cfg->n_vlans) {
		ret = open_router(dp, cfg, err, errlen);
		if (ret)
			goto err_ports;
	}
	{
		struct rxp_pool_cache *caches[DP_WORKERS_MAX];
		uint64_t now = rxp_clock_ns();

		for (unsigned w = 0; w < dp->n_workers; w++) {
			caches[w] = dp_cache(dp, w);
			dp_stack(dp, w)->now_ns = now;
		}
		for (unsigned i = 0; i < dp->n_ports; i++) {
			ret = rxp_port_start_caches(&dp->ports[i], caches, dp->n_workers, err, errlen);
			if (ret)
				goto err_ports;
		}
	}
	return 0;

err_ports:
	dp_filter_free(dp);
	free(dp->filter);
	dp->filter = NULL;
	dp_hosts_close(dp);
	for (unsigned i = dp->n_ports; i-- > 0;)
		rxp_port_close(&dp->ports[i]);
	if (dp->router) {
		rxp_router_free(dp->router);
		free(dp->router);
		dp->router = NULL;
	}
	close_workers(dp);
err_cache:
	rxp_pool_cache_close(&dp->cache);
err_pool:
	rxp_pool_destroy(dp->pool);
	dp->pool = NULL;
err_idle:
	dp_idle_close(&dp->idle);
	return ret;
}

/* Whether the queues from @first on, every @step-th, have received all their input. */
static bool inputs_done(struct dp *dp, unsigned first, unsigned step)
{
	for (unsigned p = 0; p < dp->n_ports; p++) {
		struct rxp_port *port = &dp->ports[p];

		for (unsigned q = first; q < port->n_queues; q += step)
			if (!port->ops->rx_finished(&port->queues[q]))
				return false;
	}
	return dp->n_ports > 0;
}

bool dp_finished(struct dp *dp)
{
	bool done;

	/* worker 0's own queues first: no other thread's state is read while any has input left */
	if (!inputs_done(dp, 0, dp->n_workers))
		return false;
	/* then every queue, and the drain, while the other workers wait between two polls
	 * (a round each 16 calls: the others may have a while to go) */
	if (dp->n_workers > 1 && dp->finish_checks++ % 16)
		return false;
	dp_barrier_enter(dp);
	done = inputs_done(dp, 0, 1);
	if (done && !dp->drained) {
		/* what waits for a neighbour that has not answered by now never will */
		rxp_stack_drain(&dp->stack);
		dp->drained = true;
	}
	dp_barrier_exit(dp);
	if (!done)
		return false;
	rxp_stack_flush(&dp->stack);
	for (unsigned p = 0; p < dp->n_ports; p++) {
		struct rxp_port *port = &dp->ports[p];

		/* worker 0's queues: the others' are settled when they stop (dp_settle) */
		for (uint16_t q = 0; q < port->n_queues; q += (uint16_t)dp->n_workers) {
			port->ops->complete(&port->queues[q]);
			if (!port->ops->tx_idle(&port->queues[q]))
				return false;
		}
	}
	return true;
}

void dp_settle(struct dp *dp)
{
	uint64_t deadline = rxp_clock_ns() + 100000000ull;
	bool idle;

	if (dp->router)
		for (unsigned i = 0; i < dp->router->n_ifs; i++)
			if (dp->router->ifs[i].ra)
				rxp_stack_set_ra(&dp->stack, (int)i, false);
	/*
	 * What still waits for a neighbour or for the rest of its datagram
	 * (a run stopped by --duration or a signal) is dropped now, so that
	 * the report counts it; unanswered: neither gave up, the run did.
	 */
	for (unsigned w = 0; w < dp->n_workers; w++)
		rxp_stack_release(dp_stack(dp, w));
	for (unsigned w = 0; w < dp->n_workers; w++)
		rxp_stack_flush(dp_stack(dp, w));
	do {
		idle = true;
		for (unsigned p = 0; p < dp->n_ports; p++) {
			struct rxp_port *port = &dp->ports[p];

			for (uint16_t q = 0; q < port->n_queues; q++) {
				port->ops->complete(&port->queues[q]);
				idle &= port->ops->tx_idle(&port->queues[q]);
			}
		}
	} while (!idle && rxp_clock_ns() < deadline);
}

long dp_close(struct dp *dp)
{
	struct rxp_pool_cache *caches[DP_WORKERS_MAX];
	long bad;

	if (!dp->pool)
		return 0;
	dp_hosts_close(dp);	/* the TAPs go away; what they held goes back to the cache */
	for (unsigned w = dp->n_workers; w-- > 0;)
		rxp_stack_close(dp_stack(dp, w));
	dp_filter_free(dp);
	free(dp->filter);
	dp->filter = NULL;
	for (unsigned i = dp->n_ports; i-- > 0;)
		rxp_port_close(&dp->ports[i]);
	dp->n_ports = 0;
	if (dp->router) {
		rxp_router_free(dp->router);
		free(dp->router);
		dp->router = NULL;
	}
	free(dp->shadowed);
	dp->shadowed = NULL;
	dp->n_shadowed = dp->shadowed_cap = 0;
	for (unsigned w = 0; w < dp->n_workers; w++)
		caches[w] = dp_cache(dp, w);
	bad = rxp_pool_audit(dp->pool, caches, dp->n_workers);
	close_workers(dp);
	dp_idle_close(&dp->idle);
	rxp_pool_cache_close(&dp->cache);
	rxp_pool_destroy(dp->pool);
	dp->pool = NULL;
	return bad;
}
