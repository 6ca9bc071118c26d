/* SPDX-License-Identifier: MIT */
#ifndef RXPATH_APP_RUN_H
#define RXPATH_APP_RUN_H

#include "dataplane.h"

int cmd_run(int argc, char **argv);

/*
 * Applies one receive-path option shared by run and bench (--handoff,
 * --prefetch, --copy, --copybreak, --rx-offset, --buffers, --max-frame,
 * --budget, --pool, --hugepages). Returns 1 if @name was one, 0 if not,
 * -EINVAL with @err if its value is bad.
 */
int apply_rx_option(struct dp_config *cfg, const char *name, const char *value, char *err,
		    size_t errlen);

#endif
