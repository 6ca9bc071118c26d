/* SPDX-License-Identifier: MIT */
/* rxpath bench lpm: the IPv4 and IPv6 longest-prefix-match tables under load. */
#ifndef RXPATH_BENCH_BENCH_LPM_H
#define RXPATH_BENCH_BENCH_LPM_H

/*
 * Runs the LPM microbenchmark; @argv[0] is the subcommand name ("lpm").
 * Returns the exit status: 0, 1 on failure, 2 on a usage error.
 */
int cmd_bench_lpm(int argc, char **argv);

#endif
