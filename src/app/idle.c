/* SPDX-License-Identifier: MIT */
/*
 * A worker that sleeps while its queues are idle, NAPI's way: it polls as
 * long as frames come, and once none has come for DP_IDLE_AFTER_NS it
 * waits in poll() on its queues' file descriptors (the interrupt that NAPI
 * turns back on when a poll finds less than its budget) and on its host
 * paths' TAPs. The wait lasts DP_IDLE_SLEEP_MS at most, so that timers and
 * the control socket are served; what arrives meanwhile wakes it at once.
 * A worker with a queue that cannot be waited for (sim, pcap, a port that
 * busy polls) never sleeps, nor does one run with --idle spin.
 */
#include <poll.h>
#include "dataplane.h"

#define IDLE_FDS_MAX 256

void dp_idle_after_clock(struct dp *dp, unsigned w, struct dp_idle *idle, uint64_t now_ns)
{
	const struct rxp_stack *st = dp_stack(dp, w);
	struct pollfd fds[IDLE_FDS_MAX];
	unsigned n = 0;

	if (idle->frames || !idle->busy_ns) {
		idle->frames = 0;
		idle->busy_ns = now_ns;
		return;
	}
	if (dp->idle_spin || now_ns - idle->busy_ns < DP_IDLE_AFTER_NS)
		return;
	for (unsigned p = 0; p < dp->n_ports; p++) {
		for (uint16_t q = (uint16_t)w; q < dp->ports[p].n_queues; q += (uint16_t)dp->n_workers) {
			int fd = rxp_queue_wait_fd(&dp->ports[p].queues[q]);

			if (fd == RXP_WAIT_NONE)
				continue;
			if (fd < 0 || n == IDLE_FDS_MAX)
				return;	/* a queue that cannot be waited for: polled all along */
			fds[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		}
	}
	for (unsigned p = 0; p < RXP_STACK_PORTS_MAX && st->host_ports; p++) {
		if (!st->host[p])
			continue;
		if (n == IDLE_FDS_MAX)
			return;
		fds[n++] = (struct pollfd){ .fd = st->host[p]->tap.fd, .events = POLLIN };
	}
	/* what came in is polled in the next rounds, which count it as busy again */
	poll(fds, n, DP_IDLE_SLEEP_MS);
	idle->sleeps++;
}
