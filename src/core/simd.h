/* SPDX-License-Identifier: MIT */
/*
 * Which instruction sets the lookups may use: the best the CPU has, or
 * less when the environment says so, RXPATH_SIMD=scalar|avx512|auto (as
 * DPDK's --force-max-simd-bitwidth), so that the scalar paths run, and are
 * tested, on a CPU that has the wider ones.
 */
#ifndef RXPATH_CORE_SIMD_H
#define RXPATH_CORE_SIMD_H

#include <stdbool.h>
#include <stddef.h>

enum rxp_simd { RXP_SIMD_SCALAR, RXP_SIMD_AVX512 };

/* The widest RXPATH_SIMD allows (RXP_SIMD_AVX512 when it is unset, auto, or not understood). */
enum rxp_simd rxp_simd_max(void);

/*
 * Checks RXPATH_SIMD, and that this CPU has what it asks for (@have: the
 * widest the CPU runs). Returns 0, or -1 with the problem and the fix in @err.
 */
int rxp_simd_check(enum rxp_simd have, char *err, size_t errlen);

/* The name of @s, as RXPATH_SIMD spells it. */
const char *rxp_simd_name(enum rxp_simd s);

#endif
