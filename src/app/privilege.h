/* SPDX-License-Identifier: MIT */
/*
 * Least privilege for `rxpath run`. Opening AF_XDP and AF_PACKET ports, TAPs
 * and XDP programs needs capabilities; forwarding does not. Once every port,
 * socket and thread is set up, rxpath keeps only the capabilities that
 * something later needs (removing an XDP program at exit, a host path's TAP
 * following its port's addresses), drops the rest from every thread and from
 * the bounding set, and sets no_new_privs.
 */
#ifndef RXPATH_APP_PRIVILEGE_H
#define RXPATH_APP_PRIVILEGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "engine/dataplane.h"

#define PRIV_CAPS_MAX 64	/* capability numbers fit a 64-bit mask */
#define PRIV_KEEP_ALL UINT64_MAX
#define PRIV_WHY_LEN 120

/* What to keep after set-up and why; built by priv_plan(). */
struct priv_plan {
	uint64_t keep;			/* bit N: capability N */
	bool keep_all;			/* --keep-caps all: drop nothing */
	char why[PRIV_CAPS_MAX][PRIV_WHY_LEN];	/* "" for a capability kept only on request */
};

/*
 * Parses a --keep-caps list: capability names separated by commas, with or
 * without the "cap_" prefix ("net_admin,cap_sys_admin"), or "all". Returns
 * 0 with *@mask, or -EINVAL with @err naming the word.
 */
int priv_parse_caps(const char *list, uint64_t *mask, char *err, size_t errlen);

/*
 * Decides what a run of @cfg needs after set-up, plus @extra (from
 * --keep-caps; PRIV_KEEP_ALL keeps everything).
 */
void priv_plan(const struct dp_config *cfg, uint64_t extra, struct priv_plan *plan);

/*
 * Drops every capability @plan does not keep, in every thread of the
 * process (other threads through a signal they answer between two system
 * calls), from the bounding set when it may, clears the ambient and
 * inheritable sets and sets no_new_privs; then reads every thread's
 * status back to check. A process that holds no capability is left alone
 * and @line is "". Returns 0 with @line saying what was kept and dropped,
 * or -errno with @line saying what did not work.
 */
int priv_drop(const struct priv_plan *plan, char *line, size_t len);

/* Returns the capabilities priv_drop() gave up: bit N for capability N. */
uint64_t priv_caps_dropped(void);

#endif
