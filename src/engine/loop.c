/* SPDX-License-Identifier: MIT */
#include <stdatomic.h>
#include "core/clock.h"
#include "loop.h"
#include "workers.h"

/* Worker 0's turn at a clock read: its hook, then the limits. Returns false to stop. */
static bool go_on(struct dp *dp, const struct dp_loop *loop, uint64_t start, uint64_t now)
{
	if (loop->at_clock && !loop->at_clock(loop->ctx, now))
		return false;
	if (loop->duration_ns && now - start >= loop->duration_ns)
		return false;
	return !(loop->until_finished && dp_finished(dp));
}

uint64_t dp_loop_run(struct dp *dp, unsigned w, const struct dp_loop *loop)
{
	struct dp_idle *idle = w ? &dp->workers[w - 1].idle : &dp->idle;
	struct dp_worker *wk = w ? &dp->workers[w - 1] : NULL;
	uint64_t start = rxp_clock_ns(), now = start;
	unsigned rounds = 0;

	for (;;) {
		idle->frames |= dp_poll_worker(dp, w);
		if (wk) {
			if (rxp_unlikely(atomic_load_explicit(&dp->stopping, memory_order_relaxed)))
				break;
			/* one load of a line no one writes while forwarding: it stays in this core's cache */
			if (rxp_unlikely(atomic_load_explicit(&dp->barrier, memory_order_acquire)))
				dp_barrier_park(dp, wk);
		}
		if (++rounds % DP_POLLS_PER_CLOCK_READ)
			continue;
		now = rxp_clock_ns();
		if (wk) {
			rxp_stack_tick(&wk->stack, now);
		} else {
			idle->frames |= dp_tick(dp, now);
			if (!go_on(dp, loop, start, now))
				break;
		}
		if (loop->sleep_when_idle)
			dp_idle_after_clock(dp, w, idle, now);
	}
	return now - start;
}

double dp_measure_mpps(struct dp *dp, const uint64_t *counter, double seconds)
{
	/* warm-up: fill the rings and caches, fault in the pages, train the branches */
	struct dp_loop warm = { .duration_ns = (uint64_t)(RXP_MAX(0.02, seconds * 0.1) * 1e9) };
	struct dp_loop run = { .duration_ns = (uint64_t)(seconds * 1e9) };
	uint64_t start, ns;

	dp_loop_run(dp, 0, &warm);
	start = *counter;
	ns = dp_loop_run(dp, 0, &run);
	return (double)(*counter - start) / ((double)ns * 1e-9) / 1e6;
}
