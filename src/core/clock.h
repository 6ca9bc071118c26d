/* SPDX-License-Identifier: MIT */
/* The monotonic clock, read between polls and on slow paths: never per packet. */
#ifndef RXPATH_CORE_CLOCK_H
#define RXPATH_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Returns CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t rxp_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Returns CLOCK_MONOTONIC in seconds. */
static inline double rxp_clock_seconds(void)
{
	return (double)rxp_clock_ns() * 1e-9;
}

#endif
