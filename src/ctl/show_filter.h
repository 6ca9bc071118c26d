/* SPDX-License-Identifier: MIT */
/* The filter's and connection tracking's reports and metrics (show_filter.c). */
#ifndef RXPATH_CTL_SHOW_FILTER_H
#define RXPATH_CTL_SHOW_FILTER_H

#include "core/sbuf.h"
#include "engine/dataplane.h"
#include "words.h"

struct rxp_ct;

/* show conntrack's question, and the table it is asked of. */
struct show_ct_request {
	bool json, stats;
	uint8_t family;			/* 0: either, as the addresses given say */
	bool has_src, has_dst;
	uint8_t src[16], dst[16];
	int proto;			/* -1: any */
	int state;			/* a TCP state (RXP_CT_TCP_*), -1: any */
	struct rxp_ct *ct;		/* found on the datapath (show_conntrack_table) */
	uint32_t max;			/* the table's size, made or to be made */
};

/* A control_fn: `show filter`, @arg pointing to a bool (JSON). */
int show_filter_run(struct dp *dp, void *arg, struct rxp_sbuf *out);

/* Parses "show conntrack [src A] [dst A] [proto P] [state S] | stats". Returns 0 or -EINVAL with @err. */
int show_conntrack_parse(const struct cmd_line *l, struct show_ct_request *q, char *err, size_t errlen);

/* A control_fn: finds the table (@arg: the request); the listing is made off the datapath. */
int show_conntrack_table(struct dp *dp, void *arg, struct rxp_sbuf *out);

/* The listing and the counters, on the caller's thread (the table is read while the workers track). */
int show_conntrack_list(const struct show_ct_request *q, struct rxp_sbuf *out);
int show_conntrack_stats(const struct show_ct_request *q, struct rxp_sbuf *out);

/* The filter's and tracking's metrics (metrics_render, on the datapath). */
void show_filter_metrics(struct dp *dp, struct rxp_sbuf *out);

#endif
