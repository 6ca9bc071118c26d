/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fmt.h"

char *fmt_si(char *buf, size_t len, double value, const char *unit)
{
	static const char prefix[] = " kMGT";
	int i = 0;

	while (value >= 1000.0 && i < 4) {
		value /= 1000.0;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%.0f %s", value, unit);
	else
		snprintf(buf, len, "%.2f %c%s", value, prefix[i], unit);
	return buf;
}

char *fmt_count(char *buf, size_t len, uint64_t n)
{
	char digits[32];
	int nd = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
	size_t o = 0;

	for (int i = 0; i < nd && o + 1 < len; i++) {
		if (i && (nd - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

int parse_seconds(const char *text, double min, double max, double *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(text, &end);
	if (!*text || *end || errno || isnan(x) || x < min || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void summarize_samples(const double *samples, unsigned n, double *median, double *min,
		       double *max)
{
	double s[101];

	n = n > 101 ? 101 : n;
	memcpy(s, samples, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	*median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	*min = s[0];
	*max = s[n - 1];
}

void fmt_log_stderr(const char *line)
{
	fprintf(stderr, "rxpath: %s\n", line);
}
