/* SPDX-License-Identifier: MIT */
/* The VRF commands on the running datapath (dp_vrf.c), as cmd.c's table of kinds takes them. */
#ifndef RXPATH_ENGINE_DP_VRF_H
#define RXPATH_ENGINE_DP_VRF_H

#include "dataplane.h"

/* vrf add NAME table N, vrf del NAME, port set P vrf NAME|default: apply, inverse, key. */
int dp_vrf_apply(struct dp *dp, const struct dp_cmd *c, int ifidx, char *err, size_t errlen);
bool dp_vrf_inverse(struct dp *dp, const struct dp_cmd *c, int ifidx, struct dp_cmd *inv);
void dp_vrf_key(const struct dp_cmd *c, char *key, size_t len);

#endif
