/* SPDX-License-Identifier: MIT */
#include "check.h"

int check_failures;
static int cases_failed;

void run_test(const char *name, test_fn fn)
{
	check_failures = 0;
	fn();
	printf("%s %s\n", check_failures ? "FAIL" : "PASS", name);
	fflush(stdout);
	cases_failed += check_failures != 0;
}

int tests_done(void)
{
	return cases_failed ? 1 : 0;
}
