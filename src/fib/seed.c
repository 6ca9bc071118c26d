/* SPDX-License-Identifier: MIT */
#include <sys/random.h>
#include <time.h>
#include "seed.h"

void rxp_seed_fill(uint64_t *seed, unsigned n, const void *salt)
{
	struct timespec ts;
	uint64_t x;

	if (getrandom(seed, n * sizeof(*seed), GRND_NONBLOCK) == (ssize_t)(n * sizeof(*seed)))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^ (uint64_t)(uintptr_t)salt;
	for (unsigned i = 0; i < n; i++) {
		x += 0x9e3779b97f4a7c15ull;
		seed[i] = rxp_mix64(x, 0xbf58476d1ce4e5b9ull) | 1;
	}
}
