/* SPDX-License-Identifier: MIT */
#ifndef RXPATH_BENCH_VETH_SENDER_H
#define RXPATH_BENCH_VETH_SENDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The benchmark lab's sender: a child process that enters network namespace
 * @netns, pins itself to @cpu (-1: not pinned) and sends @frame (@len bytes,
 * 14..96) out of @dev from a PACKET_TX_RING with the qdisc bypassed, as
 * fast as the kernel takes it, until it is sent SIGTERM. A full socket or
 * device queue (EAGAIN, ENOBUFS) is waited out, not given up on; any other
 * error is written to @log and the child exits 1. Returns its pid, or -1
 * with @err set.
 */
pid_t veth_sender_start(const char *netns, const char *dev, const uint8_t *frame, size_t len,
			int cpu, const char *log, char *err, size_t errlen);

#endif
