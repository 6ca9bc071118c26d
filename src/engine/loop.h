/* SPDX-License-Identifier: MIT */
/*
 * The poll loop: the one loop that `rxpath run`, every worker thread and
 * every benchmark drive. A round polls the worker's queues of every port
 * once; the clock is read once every DP_POLLS_PER_CLOCK_READ rounds, never
 * per packet, and only then do the timers, the host paths, the caller's
 * hook and the idle sleep run.
 */
#ifndef RXPATH_ENGINE_LOOP_H
#define RXPATH_ENGINE_LOOP_H

#include <signal.h>
#include "dataplane.h"

#define DP_POLLS_PER_CLOCK_READ 64u

/* What a loop runs for and what it does at each clock read. */
struct dp_loop {
	double duration;		/* seconds; 0: no limit */
	const volatile sig_atomic_t *stop;	/* worker 0: stops before the next poll once set (a signal) */
	bool until_finished;		/* worker 0: stop once every finite source is done (dp_finished) */
	bool sleep_when_idle;		/* wait on the queues when none had a frame for a while (idle.c) */
	/* worker 0, after the timers: returns false to stop (a signal, a report's turn); may be NULL */
	bool (*at_clock)(void *ctx, uint64_t now_ns);
	void *ctx;
};

/*
 * Runs worker @w's loop until @loop says stop (worker 0) or dp_workers_stop()
 * (the others; they wait at the barrier when worker 0 asks). Returns the
 * nanoseconds from its start to its last clock read.
 */
uint64_t dp_loop_run(struct dp *dp, unsigned w, const struct dp_loop *loop);

/*
 * Runs worker 0's loop for a short warm-up, then for @seconds (the other
 * workers, if started, poll on their own), and returns the rate at which
 * @count grew, in millions per second.
 */
double dp_measure_rate(struct dp *dp, uint64_t (*count)(const struct dp *dp), double seconds);

#endif
