/* SPDX-License-Identifier: MIT */
/*
 * A worker that sleeps while its queues are idle, NAPI's way: it polls as
 * long as frames come, and once none has come for DP_IDLE_AFTER_NS it
 * waits in poll() on its queues' file descriptors (the interrupt that NAPI
 * turns back on when a poll finds less than its budget) and on its host
 * paths' TAPs, and on an eventfd that a control call and the workers'
 * barrier write, so that neither waits for it. The wait lasts
 * DP_IDLE_SLEEP_MS at most, for the timers; what arrives meanwhile wakes it
 * at once. A worker with a queue that cannot be waited for now (sim, pcap,
 * a port that busy polls or has frames to push out) does not sleep, nor
 * does one run with --idle spin.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "dataplane.h"

#define IDLE_FDS_MAX 256

int dp_idle_init(struct dp_idle *idle)
{
	*idle = (struct dp_idle){ .wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC) };
	return idle->wake_fd < 0 ? -errno : 0;
}

void dp_idle_close(struct dp_idle *idle)
{
	if (idle->wake_fd >= 0)
		close(idle->wake_fd);
	idle->wake_fd = -1;
}

void dp_idle_wake(struct dp_idle *idle)
{
	uint64_t one = 1;

	/* the counter stays up until the worker reads it: a wake before its sleep is not lost */
	if (idle->wake_fd >= 0)
		(void)!write(idle->wake_fd, &one, sizeof(one));
}

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
	if (dp->idle_spin || idle->wake_fd < 0 || now_ns - idle->busy_ns < DP_IDLE_AFTER_NS)
		return;
	fds[n++] = (struct pollfd){ .fd = idle->wake_fd, .events = POLLIN };
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
	if (poll(fds, n, DP_IDLE_SLEEP_MS) > 0 && (fds[0].revents & POLLIN)) {
		uint64_t count;

		if (read(idle->wake_fd, &count, sizeof(count)) < 0)
			count = 0;	/* EAGAIN: another read took it */
	}
}
