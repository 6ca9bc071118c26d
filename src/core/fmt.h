/* SPDX-License-Identifier: MIT */
/* Human-readable numbers and the arithmetic of the program's reports. */
#ifndef RXPATH_CORE_FMT_H
#define RXPATH_CORE_FMT_H

#include <stddef.h>
#include <stdint.h>

/* Writes @value with an SI prefix and @unit ("14.2 Mpps"). Returns @buf. */
char *fmt_si(char *buf, size_t len, double value, const char *unit);

/* Writes @n with thousands separators ("1,234,567"). Returns @buf. */
char *fmt_count(char *buf, size_t len, uint64_t n);

/* Parses a number of seconds from @min to @max. Returns 0 or -EINVAL. */
int parse_seconds(const char *text, double min, double max, double *out);

/* Writes the median, minimum and maximum of @n (1..101) samples. */
void summarize_samples(const double *samples, unsigned n, double *median, double *min,
		       double *max);

/* Prints @line on stderr as "rxpath: LINE": the engine's log for the program and the benchmarks. */
void fmt_log_stderr(const char *line);

#endif
