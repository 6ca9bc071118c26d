/* SPDX-License-Identifier: MIT */
#ifndef RXPATH_BENCH_BENCH_L3FWD_H
#define RXPATH_BENCH_BENCH_L3FWD_H

/* rxpath bench l3fwd: sim port -> route -> sim port, like DPDK's l3fwd. */
int cmd_bench_l3fwd(int argc, char **argv);

#endif
