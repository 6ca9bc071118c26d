/* SPDX-License-Identifier: MIT */
#include <stdatomic.h>
#include "core/clock.h"
#include "loop.h"
#include "workers.h"

/* A duration in seconds as nanoseconds; 0: none, and never 0 for one asked for. */
static uint64_t duration_ns(double seconds)
{
	return seconds > 0 ? RXP_MAX((uint64_t)(seconds * 1e9), 1ull) : 0;
}

/* Worker 0's turn at a clock read: its hook, then the limits. Returns false to stop. */
static bool go_on(struct dp *dp, const struct dp_loop *loop, uint64_t ns, uint64_t now)
{
	if (loop->at_clock && !loop->at_clock(loop->ctx, now))
		return false;
	if (ns && now >= ns)
		return false;
	return !(loop->until_finished && dp_finished(dp));
}

uint64_t dp_loop_run(struct dp *dp, unsigned w, const struct dp_loop *loop)
{
	struct dp_idle *idle = w ? &dp->workers[w - 1].idle : &dp->idle;
	struct dp_worker *wk = w ? &dp->workers[w - 1] : NULL;
	uint64_t start = rxp_clock_ns(), now = start, limit = duration_ns(loop->duration);
	unsigned rounds = 0;

	if (limit)
		limit += start;
	for (;;) {
		if (wk) {
			if (rxp_unlikely(atomic_load_explicit(&dp->stopping, memory_order_relaxed)))
				break;
		} else if (loop->stop && rxp_unlikely(*loop->stop)) {
			break;
		}
		/* a clock from the frames: each poll sees its first frame's time (pcap clock=packets) */
		if (rxp_unlikely(dp->clock_port >= 0) && !wk)
			rxp_stack_tick(&dp->stack, dp_packet_time(dp, rxp_clock_ns()));
		idle->frames |= dp_poll_worker(dp, w);
		/* one load of a line no one writes while forwarding: it stays in this core's cache */
		if (wk && rxp_unlikely(atomic_load_explicit(&dp->barrier, memory_order_acquire)))
			dp_barrier_park(dp, wk);
		if (++rounds % DP_POLLS_PER_CLOCK_READ)
			continue;
		now = rxp_clock_ns();
		if (wk) {
			rxp_stack_tick(&wk->stack, now);
			if (wk->stack.host_ports)	/* this worker's queues of the TAPs */
				idle->frames |= rxp_host_poll_all(&wk->stack, RXP_BUDGET_DEFAULT);
		} else {
			idle->frames |= dp_tick(dp, now);
			if (!go_on(dp, loop, limit, now))
				break;
		}
		if (loop->sleep_when_idle)
			dp_idle_after_clock(dp, w, idle, now);
	}
	return now - start;
}

double dp_measure_rate(struct dp *dp, uint64_t (*count)(const struct dp *dp), double seconds)
{
	/* warm-up: fill the rings and caches, fault in the pages, train the branches */
	const struct dp_loop warm = { .duration = RXP_MAX(0.02, seconds * 0.1) };
	const struct dp_loop run = { .duration = seconds };
	uint64_t start, ns;

	dp_loop_run(dp, 0, &warm);
	start = count(dp);
	ns = dp_loop_run(dp, 0, &run);
	return (double)(count(dp) - start) / ((double)ns * 1e-9) / 1e6;
}
