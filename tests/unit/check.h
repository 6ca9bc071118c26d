/* SPDX-License-Identifier: MIT */
/*
 * A minimal test harness. Each CHECK prints nothing when it holds and a
 * FAIL line with file, line and values when it does not; each test case
 * prints one "PASS name" or "FAIL name" line that tests/run.sh counts.
 */
#ifndef RXPATH_TEST_CHECK_H
#define RXPATH_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>

extern int check_failures;	/* failures in the current test case */

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stdout, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		check_failures++; \
	} \
} while (0)

#define CHECK_EQ(a, b) do { \
	uint64_t _a = (uint64_t)(a), _b = (uint64_t)(b); \
	if (_a != _b) { \
		fprintf(stdout, "  %s:%d: %s == %s failed: %" PRIu64 " != %" PRIu64 "\n", \
			__FILE__, __LINE__, #a, #b, _a, _b); \
		check_failures++; \
	} \
} while (0)

typedef void (*test_fn)(void);

/* Runs @fn as test case @name and prints its PASS/FAIL line. */
void run_test(const char *name, test_fn fn);

/* Returns the exit status for main: 1 if any case failed. */
int tests_done(void);

#define RUN(fn) run_test(#fn, fn)

/* The next of the xorshift64 sequence in *@s (never 0 once seeded non-zero): tests' repeatable random numbers. */
static inline uint64_t check_xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#endif
