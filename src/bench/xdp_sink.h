/* SPDX-License-Identifier: MIT */
#ifndef RXPATH_BENCH_XDP_SINK_H
#define RXPATH_BENCH_XDP_SINK_H

#include <stddef.h>

/*
 * Attaches to @dev in network namespace @netns (a name under /run/netns) an
 * XDP program that drops IPv4 UDP and passes everything else. It stays
 * until the device goes. Returns 0, or -1 with @err saying what failed.
 */
int xdp_sink_attach(const char *netns, const char *dev, char *err, size_t errlen);

#endif
