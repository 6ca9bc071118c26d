/* SPDX-License-Identifier: MIT */
/* One worker's datapath: a buffer pool, its cache, the ports and the stack. */
#ifndef RXPATH_APP_DATAPLANE_H
#define RXPATH_APP_DATAPLANE_H

#include "rxpath/port.h"
#include "rxpath/stack.h"

#define DP_PORTS_MAX 16
#define DP_BUFS_PER_PORT 4096u	/* RX ring + TX ring + room in flight, at default ring sizes */

struct dp_port_config {
	char name[RXP_PORT_NAME_MAX];
	char spec[256];
};

struct dp_config {
	struct rxp_pool_config pool;	/* n_bufs 0: DP_BUFS_PER_PORT per port + a cache */
	struct rxp_rx_tuning tuning;
	unsigned n_ports;
	struct dp_port_config ports[DP_PORTS_MAX];
};

struct dp {
	struct rxp_pool *pool;
	struct rxp_pool_cache cache;
	unsigned n_ports;
	struct rxp_port ports[DP_PORTS_MAX];
	struct rxp_stack stack;
};

/* Returns defaults: precise 1518-byte buffers at rx offset 2, every technique on. */
void dp_config_default(struct dp_config *cfg);

/* Adds a port. Returns 0 or -EINVAL with @err. */
int dp_config_add_port(struct dp_config *cfg, const char *name, const char *spec, char *err,
		       size_t errlen);

/* Builds and starts everything. Returns 0 or -errno with @err; on error nothing is left open. */
int dp_open(struct dp *dp, const struct dp_config *cfg, char *err, size_t errlen);

/* Polls every queue of every port once. Returns the packets received. */
static inline unsigned dp_poll(struct dp *dp)
{
	unsigned n = 0;

	for (unsigned p = 0; p < dp->n_ports; p++)
		for (uint16_t q = 0; q < dp->ports[p].n_queues; q++)
			n += rxp_napi_poll(&dp->ports[p].queues[q], &dp->stack);
	return n;
}

/* Returns true when every port is a finite source that has delivered everything. */
bool dp_finished(struct dp *dp);

/*
 * Stops the ports, returns every buffer and checks that the pool has them all.
 * Returns 0, or the number of buffers missing or returned twice.
 */
long dp_close(struct dp *dp);

#endif
