/* SPDX-License-Identifier: MIT */
/* Small shared definitions: cache-line size, port limits, branch hints, prefetch. */
#ifndef RXPATH_COMMON_H
#define RXPATH_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define RXP_CACHE_LINE 64u

/* Port limits that the tables (fib) size themselves by as well as the drivers. */
#define RXP_PORT_NAME_MAX 16
#define RXP_PORTS_MAX 64	/* port ids are below this */

#define rxp_likely(x)   __builtin_expect(!!(x), 1)
#define rxp_unlikely(x) __builtin_expect(!!(x), 0)
#define rxp_cache_aligned _Alignas(RXP_CACHE_LINE)
#define rxp_noinline __attribute__((noinline))
#define rxp_always_inline inline __attribute__((always_inline))
#define rxp_unused __attribute__((unused))

#define RXP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define RXP_ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define RXP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define RXP_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Read prefetch of one cache line, kept in all cache levels. */
static inline void rxp_prefetch(const void *p)
{
	__builtin_prefetch(p, 0, 3);
}

/* Write prefetch: we are about to store to this line. */
static inline void rxp_prefetchw(const void *p)
{
	__builtin_prefetch(p, 1, 3);
}

/* Spin-wait hint for the CPU (a no-op where there is none). */
static inline void rxp_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static inline bool rxp_is_pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

static inline uint32_t rxp_pow2_roundup(uint32_t x)
{
	if (x <= 1)
		return 1;
	return 1u << (32 - __builtin_clz(x - 1));
}

#endif
