/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "loop.h"
#include "workers.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Waits between two polls while worker 0 changes the tables, saying in
 * which round it waits. A worker still here from the round before, when
 * worker 0 asks again at once, says so for the new round and goes on
 * waiting; one that has left counts only once it is back: worker 0 never
 * takes a worker that is about to poll for one that waits (a count of
 * those waiting could not tell the two apart).
 */
void dp_barrier_park(struct dp *dp, struct dp_worker *wk)
{
	while (atomic_load(&dp->barrier)) {
		unsigned round = atomic_load(&dp->barrier_round);

		if (atomic_load_explicit(&wk->parked_round, memory_order_relaxed) != round)
			atomic_store(&wk->parked_round, round);
		cpu_relax();
	}
}

static void *worker_main(void *arg)
{
	struct dp_worker *wk = arg;
	const struct dp_loop loop = { .sleep_when_idle = true };

	dp_loop_run(wk->dp, wk->id, &loop);
	rxp_stack_flush(&wk->stack);
	return NULL;
}

/* Pins the calling thread to @cpu. Returns 0 or an errno. */
static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int dp_workers_start(struct dp *dp, int *cpus, char *err, size_t errlen)
{
	cpu_set_t allowed;
	int n_allowed = 0, list[CPU_SETSIZE];

	for (unsigned w = 0; w < dp->n_workers; w++)
		cpus[w] = -1;
	if (dp->n_workers == 1)
		return 0;
	/* the caller's CPUs, given back to it when the workers stop */
	if (pthread_getaffinity_np(pthread_self(), sizeof(allowed), &allowed) == 0) {
		dp->caller_cpus = allowed;
		dp->caller_pinned = true;
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &allowed))
				list[n_allowed++] = c;
	}
	atomic_store(&dp->stopping, false);
	atomic_store(&dp->barrier, false);
	atomic_store(&dp->barrier_round, 0);
	for (unsigned w = 1; w < dp->n_workers; w++)
		atomic_store(&dp->workers[w - 1].parked_round, 0);
	for (unsigned w = 0; w < dp->n_workers; w++)
		cpus[w] = n_allowed ? list[w % (unsigned)n_allowed] : -1;
	if (cpus[0] >= 0)
		pin_self(cpus[0]);
	for (unsigned w = 1; w < dp->n_workers; w++) {
		struct dp_worker *wk = &dp->workers[w - 1];
		pthread_attr_t attr;
		int ret;

		wk->cpu = cpus[w];
		pthread_attr_init(&attr);
		if (wk->cpu >= 0) {
			cpu_set_t one;

			CPU_ZERO(&one);
			CPU_SET(wk->cpu, &one);
			pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		}
		ret = pthread_create(&wk->thread, &attr, worker_main, wk);
		pthread_attr_destroy(&attr);
		if (ret) {
			snprintf(err, errlen, "cannot start worker %u: %s", w, strerror(ret));
			/* the ones running stop again */
			atomic_store(&dp->stopping, true);
			for (unsigned k = 1; k < w; k++)
				pthread_join(dp->workers[k - 1].thread, NULL);
			return -ret;
		}
	}
	dp->n_workers_running = dp->n_workers - 1;
	return 0;
}

void dp_workers_stop(struct dp *dp)
{
	atomic_store(&dp->stopping, true);
	/* a start that failed has joined its threads already */
	for (unsigned w = 1; w <= dp->n_workers_running; w++)
		pthread_join(dp->workers[w - 1].thread, NULL);
	dp->n_workers_running = 0;
	if (dp->caller_pinned) {
		pthread_setaffinity_np(pthread_self(), sizeof(dp->caller_cpus), &dp->caller_cpus);
		dp->caller_pinned = false;
	}
}

void dp_barrier_enter(struct dp *dp)
{
	unsigned round;

	if (dp->n_workers == 1 || !dp->n_workers_running)
		return;
	/* the flag first: a worker that sees the new round sees the flag up with it (seq_cst) */
	atomic_store(&dp->barrier, true);
	round = atomic_fetch_add(&dp->barrier_round, 1) + 1;
	/* one asleep in its idle wait comes at once (10 times a second: a write each) */
	for (unsigned w = 1; w < dp->n_workers; w++)
		dp_idle_wake(&dp->workers[w - 1].idle);
	for (unsigned w = 1; w < dp->n_workers; w++)
		while (atomic_load(&dp->workers[w - 1].parked_round) != round)
			cpu_relax();
}

void dp_barrier_exit(struct dp *dp)
{
	if (dp->n_workers == 1)
		return;
	atomic_store_explicit(&dp->barrier, false, memory_order_release);
}
