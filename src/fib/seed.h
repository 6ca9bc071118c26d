/* SPDX-License-Identifier: MIT */
/*
 * What the hashed tables of src/fib share (the connection table, NAT's
 * mappings): a 64-bit multiply-fold mix and secret seeds, so that an
 * attacker who picks addresses and ports cannot aim at one bucket.
 */
#ifndef RXPATH_FIB_SEED_H
#define RXPATH_FIB_SEED_H

#include <stdint.h>

/* The 128-bit product of @a and @b, its halves folded together. */
static inline uint64_t rxp_mix64(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	unsigned __int128 r = (unsigned __int128)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
	uint64_t lo = a * b, hi = (a >> 32) * (b >> 32) + (((a & 0xffffffffu) * (b >> 32)) >> 32);

	return lo ^ hi;
#endif
}

/*
 * Fills @seed[0..@n) from getrandom(); before the kernel has entropy
 * (early boot), from the clock and the address of @salt, stirred.
 */
void rxp_seed_fill(uint64_t *seed, unsigned n, const void *salt);

#endif
