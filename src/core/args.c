/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rxpath/args.h"
#include "rxpath/proto.h"

int rxp_args_parse(struct rxp_args *args, const char *text, char *err, size_t errlen)
{
	const char *p = text;

	memset(args, 0, sizeof(*args));
	while (p && *p) {
		const char *end = strchr(p, ',');
		const char *eq = memchr(p, '=', end ? (size_t)(end - p) : strlen(p));
		size_t len = end ? (size_t)(end - p) : strlen(p);
		struct rxp_arg *a;

		if (args->n == RXP_ARGS_MAX) {
			snprintf(err, errlen, "too many arguments (at most %d)", RXP_ARGS_MAX);
			return -EINVAL;
		}
		if (!eq || eq == p) {
			snprintf(err, errlen, "argument '%.*s' is not of the form key=value",
				 (int)len, p);
			return -EINVAL;
		}
		a = &args->arg[args->n];
		if ((size_t)(eq - p) >= sizeof(a->key) ||
		    len - (size_t)(eq - p) - 1 >= sizeof(a->value)) {
			snprintf(err, errlen, "argument '%.*s' is too long", (int)len, p);
			return -EINVAL;
		}
		memcpy(a->key, p, (size_t)(eq - p));
		memcpy(a->value, eq + 1, len - (size_t)(eq - p) - 1);
		for (unsigned i = 0; i < args->n; i++) {
			if (!strcmp(args->arg[i].key, a->key)) {
				snprintf(err, errlen, "argument '%s' given twice", a->key);
				return -EINVAL;
			}
		}
		args->n++;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

const char *rxp_args_get(struct rxp_args *args, const char *key)
{
	for (unsigned i = 0; i < args->n; i++) {
		if (!strcmp(args->arg[i].key, key)) {
			args->arg[i].used = true;
			return args->arg[i].value;
		}
	}
	return NULL;
}

int rxp_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!text || *text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int rxp_args_u32(struct rxp_args *args, const char *key, uint32_t min, uint32_t max,
		 uint32_t *out, char *err, size_t errlen)
{
	const char *v = rxp_args_get(args, key);
	uint64_t x;

	if (!v)
		return 0;
	if (rxp_parse_u64(v, min, max, &x)) {
		snprintf(err, errlen, "%s=%s: expected a whole number from %u to %u", key, v, min,
			 max);
		return -EINVAL;
	}
	*out = (uint32_t)x;
	return 0;
}

int rxp_args_double(struct rxp_args *args, const char *key, double min, double max,
		    double *out, char *err, size_t errlen)
{
	const char *v = rxp_args_get(args, key);
	char *end;
	double x;

	if (!v)
		return 0;
	errno = 0;
	x = strtod(v, &end);
	if (!*v || errno || *end || isnan(x) || x < min || x > max) {
		snprintf(err, errlen, "%s=%s: expected a number from %g to %g", key, v, min, max);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int rxp_parse_mac(const char *text, uint8_t out[6])
{
	uint8_t mac[6];

	/* exactly "xx:xx:xx:xx:xx:xx" */
	if (strlen(text) != 17)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		int hi = hex_digit(text[i * 3]), lo = hex_digit(text[i * 3 + 1]);

		if (hi < 0 || lo < 0 || (i < 5 && text[i * 3 + 2] != ':'))
			return -EINVAL;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(out, mac, 6);
	return 0;
}

int rxp_args_mac(struct rxp_args *args, const char *key, uint8_t out[6], char *err, size_t errlen)
{
	const char *v = rxp_args_get(args, key);

	if (!v)
		return 0;
	/* a port's own address: one station, so not a group (I/G bit) and not all zeros */
	if (rxp_parse_mac(v, out) || !rxp_eth_is_unicast(out)) {
		snprintf(err, errlen, "%s=%s: expected a unicast MAC address like 02:00:00:00:00:01", key, v);
		return -EINVAL;
	}
	return 0;
}

int rxp_args_check_unused(const struct rxp_args *args, const char *known, char *err, size_t errlen)
{
	for (unsigned i = 0; i < args->n; i++) {
		if (!args->arg[i].used) {
			snprintf(err, errlen, "unknown argument '%s' (known: %s)", args->arg[i].key,
				 known);
			return -EINVAL;
		}
	}
	return 0;
}
