/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/simd.h"

#define SIMD_ENV "RXPATH_SIMD"

static const char *const names[] = { [RXP_SIMD_SCALAR] = "scalar", [RXP_SIMD_AVX512] = "avx512" };

const char *rxp_simd_name(enum rxp_simd s)
{
	return s <= RXP_SIMD_AVX512 ? names[s] : "?";
}

/* RXPATH_SIMD's level; -1 when unset or auto; -2 when not understood. */
static int simd_env(void)
{
	const char *v = getenv(SIMD_ENV);

	if (!v || !*v || !strcmp(v, "auto"))
		return -1;
	for (int s = RXP_SIMD_SCALAR; s <= RXP_SIMD_AVX512; s++)
		if (!strcmp(v, names[s]))
			return s;
	return -2;
}

enum rxp_simd rxp_simd_max(void)
{
	int s = simd_env();

	return s >= 0 ? (enum rxp_simd)s : RXP_SIMD_AVX512;
}

int rxp_simd_check(enum rxp_simd have, char *err, size_t errlen)
{
	int s = simd_env();

	if (s == -2) {
		snprintf(err, errlen, "%s=%s: expected scalar, avx512 or auto (unset it for the best this CPU "
			 "has)", SIMD_ENV, getenv(SIMD_ENV));
		return -1;
	}
	if (s > (int)have) {
		snprintf(err, errlen, "%s=%s: this CPU runs no more than %s (avx512 needs AVX-512 F and BW and "
			 "BMI2); use %s=%s or unset it", SIMD_ENV, names[s], names[have], SIMD_ENV, names[have]);
		return -1;
	}
	return 0;
}
