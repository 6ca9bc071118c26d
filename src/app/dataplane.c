/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "dataplane.h"

void dp_config_default(struct dp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pool.max_frame = RXP_FRAME_DEFAULT;
	cfg->pool.rx_offset = 2;
	cfg->tuning = rxp_rx_tuning_default();
}

int dp_config_add_port(struct dp_config *cfg, const char *name, const char *spec, char *err,
		       size_t errlen)
{
	struct dp_port_config *pc;

	if (cfg->n_ports == DP_PORTS_MAX) {
		snprintf(err, errlen, "too many ports (at most %d)", DP_PORTS_MAX);
		return -EINVAL;
	}
	if (!name[0] || strlen(name) >= sizeof(pc->name)) {
		snprintf(err, errlen, "port name '%s' must be 1 to %zu characters", name,
			 sizeof(pc->name) - 1);
		return -EINVAL;
	}
	if (strlen(spec) >= sizeof(pc->spec)) {
		snprintf(err, errlen, "port spec for %s is longer than %zu characters", name,
			 sizeof(pc->spec) - 1);
		return -EINVAL;
	}
	for (unsigned i = 0; i < cfg->n_ports; i++) {
		if (!strcmp(cfg->ports[i].name, name)) {
			snprintf(err, errlen, "port %s is already defined", name);
			return -EEXIST;
		}
	}
	pc = &cfg->ports[cfg->n_ports++];
	snprintf(pc->name, sizeof(pc->name), "%s", name);
	snprintf(pc->spec, sizeof(pc->spec), "%s", spec);
	return 0;
}

int dp_open(struct dp *dp, const struct dp_config *cfg, char *err, size_t errlen)
{
	struct rxp_pool_config pcfg = cfg->pool;
	int ret;

	memset(dp, 0, sizeof(*dp));
	if (!pcfg.n_bufs)
		pcfg.n_bufs = DP_BUFS_PER_PORT * RXP_MAX(cfg->n_ports, 1u) + RXP_POOL_CACHE_MAX;
	dp->pool = rxp_pool_create(&pcfg, err, errlen);
	if (!dp->pool)
		return -errno;
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
			snprintf(err, errlen, "port %s: %s", cfg->ports[i].name, perr);
			goto err_ports;
		}
		dp->n_ports++;
		rxp_stack_add_port(&dp->stack, port->id, port->mac);
	}
	for (unsigned i = 0; i < dp->n_ports; i++) {
		ret = rxp_port_start(&dp->ports[i], &dp->cache, err, errlen);
		if (ret)
			goto err_ports;
	}
	return 0;

err_ports:
	for (unsigned i = dp->n_ports; i-- > 0;)
		rxp_port_close(&dp->ports[i]);
err_cache:
	rxp_pool_cache_close(&dp->cache);
err_pool:
	rxp_pool_destroy(dp->pool);
	dp->pool = NULL;
	return ret;
}

bool dp_finished(struct dp *dp)
{
	for (unsigned p = 0; p < dp->n_ports; p++) {
		struct rxp_port *port = &dp->ports[p];

		for (uint16_t q = 0; q < port->n_queues; q++) {
			struct rxp_queue *queue = &port->queues[q];

			if (!port->ops->rx_finished(queue) || !port->ops->tx_idle(queue))
				return false;
		}
	}
	return dp->n_ports > 0;
}

long dp_close(struct dp *dp)
{
	struct rxp_pool_cache *cache = &dp->cache;
	long bad;

	if (!dp->pool)
		return 0;
	for (unsigned i = dp->n_ports; i-- > 0;)
		rxp_port_close(&dp->ports[i]);
	dp->n_ports = 0;
	bad = rxp_pool_audit(dp->pool, &cache, 1);
	rxp_pool_cache_close(&dp->cache);
	rxp_pool_destroy(dp->pool);
	dp->pool = NULL;
	return bad;
}
