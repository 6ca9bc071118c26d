/* SPDX-License-Identifier: MIT */
/* rxpath bench filter: the packet classifier of the filter alone, in ns per packet. */
#ifndef RXPATH_BENCH_BENCH_FILTER_H
#define RXPATH_BENCH_BENCH_FILTER_H

/*
 * Runs the classifier microbenchmark; @argv[0] is the subcommand name
 * ("filter"). Returns the exit status: 0, 1 on failure (including answers
 * that differ from a linear scan of the rules), 2 on a usage error.
 */
int cmd_bench_filter(int argc, char **argv);

#endif
