/* SPDX-License-Identifier: MIT */
/*
 * The control socket's reports: show ports, stats, drops, routes [PREFIX],
 * neigh, pool; as text or JSON. Each runs on the datapath thread (through
 * the mailbox), so it reads counters and tables no one is changing.
 */
#ifndef RXPATH_CTL_SHOW_H
#define RXPATH_CTL_SHOW_H

#include "engine/dataplane.h"
#include "core/sbuf.h"

struct show_request {
	const struct dp_config *cfg;	/* the ports as configured: their specs */
	char what[16];			/* "ports", "stats", ... */
	char arg[80];			/* show routes PREFIX: the prefix or address; else empty */
	char vrf[RXP_PORT_NAME_MAX];	/* show routes vrf NAME: its table; empty: the default one */
	bool json;
	char err[160];			/* filled when the call fails */
	/* show routes: copied on the datapath, printed by show_finish() */
	bool routes_collected, route_of_address, no_router;
	struct show_route *routes;
	uint32_t n_routes;
	struct show_group *groups;	/* the multipath routes' groups, by index */
	uint32_t n_groups;
};

/* Returns the names show takes, for messages. */
const char *show_topics(void);

/* Returns true when @what is a topic show knows. */
bool show_topic_known(const char *what);

/* A control_fn: writes the report @arg (a struct show_request) asks for. Returns 0 or -EINVAL. */
int show_run(struct dp *dp, void *arg, struct rxp_sbuf *out);

/*
 * Completes a report whose data show_run() only copied (show routes): sorts
 * and prints it, off the datapath. Call after show_run() returned 0.
 */
void show_finish(struct show_request *req, struct rxp_sbuf *out);

#endif
