/* SPDX-License-Identifier: MIT */
/*
 * The worker threads of a datapath: workers 1..n-1 each poll their own
 * queue of every port, run to completion and never take a lock on the
 * fast path; worker 0 is the caller's thread (its dp_loop_run()). A
 * control change runs on worker 0 while the others wait between two polls
 * (a barrier, as routers with a control thread and workers do), so that no
 * packet sees the tables half changed.
 */
#ifndef RXPATH_ENGINE_WORKERS_H
#define RXPATH_ENGINE_WORKERS_H

#include "dataplane.h"

/*
 * Starts workers 1..n-1, pinned one to a CPU in the order the process may
 * run on (worker 0, the caller, is pinned to the first). Returns 0 or
 * -errno with @err; fills @cpus (n_workers entries, -1: not pinned).
 */
int dp_workers_start(struct dp *dp, int *cpus, char *err, size_t errlen);

/* Stops the workers (they flush what they gathered) and joins them. */
void dp_workers_stop(struct dp *dp);

/* Worker 0: waits until every other worker stands between two polls. */
void dp_barrier_enter(struct dp *dp);

/* Worker @wk, between two polls: waits while worker 0 holds the barrier (dp_loop_run). */
void dp_barrier_park(struct dp *dp, struct dp_worker *wk);

/* Worker 0: lets them go on. */
void dp_barrier_exit(struct dp *dp);

#endif
