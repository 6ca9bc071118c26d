/* SPDX-License-Identifier: MIT */
/* `show nat` (show_nat.c): the rules with their counters, the mappings by outside address and protocol. */
#ifndef RXPATH_CTL_SHOW_NAT_H
#define RXPATH_CTL_SHOW_NAT_H

#include "core/sbuf.h"
#include "engine/dataplane.h"

/* Writes `show nat` (@arg: a bool, JSON) on the datapath thread. Returns 0 or -ENOMEM. */
int show_nat_run(struct dp *dp, void *arg, struct rxp_sbuf *out);

/* NAT's Prometheus lines: connections per rule, mappings in use and by outside address. */
void show_nat_metrics(struct dp *dp, struct rxp_sbuf *out);

#endif
