/* SPDX-License-Identifier: MIT */
/*
 * Config reload (SIGHUP): the file is read again, its router state is
 * compared with what the previous load asked for, and only the difference
 * is applied, like control-socket changes: deletions first, then additions.
 */
#ifndef RXPATH_CTL_RELOAD_H
#define RXPATH_CTL_RELOAD_H

#include "engine/dataplane.h"

/*
 * Computes the commands that turn @old's router state into @new's, in the
 * order to apply them. Returns the count (the array in *@out, to free), or
 * -ENOMEM.
 */
long reload_diff(const struct dp_config *old, const struct dp_config *new, struct dp_cmd **out);

/* Returns true when @a and @b have the same ports and VLAN sub-ports. */
bool reload_same_ports(const struct dp_config *a, const struct dp_config *b);

#endif
