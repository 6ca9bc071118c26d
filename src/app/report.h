/* SPDX-License-Identifier: MIT */
/* What `rxpath run` prints: its start lines, the live rates and the summary, as text or JSON lines. */
#ifndef RXPATH_APP_REPORT_H
#define RXPATH_APP_REPORT_H

#include "engine/dataplane.h"

/* Per-port counters at the previous report, to turn totals into rates. */
struct port_snap {
	uint64_t rx_packets, rx_bytes, rx_dropped, tx_packets, tx_bytes;
};

/* Prints the pool, the receive settings and the ports as opened: text lines, or one JSON "start" line. */
void print_config(const struct dp *dp, const struct dp_config *cfg, bool json);

/* Prints each port's rates between @t0 and @t1 (seconds since @start) and updates @snap. */
void report_interval(struct dp *dp, struct port_snap *snap, double t0, double t1,
		     double start, bool json);

/* Prints the run's totals over @elapsed seconds: ports, deliveries, host paths, drops, pool. */
void report_summary_text(struct dp *dp, double elapsed);

/* The same as one JSON "summary" line. */
void report_summary_json(struct dp *dp, double elapsed);

#endif
