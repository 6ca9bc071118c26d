/* SPDX-License-Identifier: MIT */
/* Driver arguments: "key=value,key=value" as in "sim:size=64,flows=16". */
#ifndef RXPATH_ARGS_H
#define RXPATH_ARGS_H

#include "rxpath/common.h"

#define RXP_ARGS_MAX 24
#define RXP_ERR_LEN 256

struct rxp_arg {
	char key[32];
	char value[224];
	bool used;		/* a driver took it; leftovers are reported as unknown */
};

struct rxp_args {
	unsigned n;
	struct rxp_arg arg[RXP_ARGS_MAX];
};

/* Parses @text. Returns 0, or -EINVAL with @err saying which part is wrong. */
int rxp_args_parse(struct rxp_args *args, const char *text, char *err, size_t errlen);

/* Returns the value of @key (and marks it used), or NULL when absent. */
const char *rxp_args_get(struct rxp_args *args, const char *key);

/*
 * Typed getters. Each leaves *out untouched when the key is absent and
 * returns 0, or returns -EINVAL with @err naming the key and the range.
 */
int rxp_args_u32(struct rxp_args *args, const char *key, uint32_t min, uint32_t max,
		 uint32_t *out, char *err, size_t errlen);
int rxp_args_double(struct rxp_args *args, const char *key, double min, double max,
		    double *out, char *err, size_t errlen);
int rxp_args_mac(struct rxp_args *args, const char *key, uint8_t out[6], char *err, size_t errlen);

/* Returns -EINVAL naming the first key no one used (with the list of @known), or 0. */
int rxp_args_check_unused(const struct rxp_args *args, const char *known, char *err, size_t errlen);

/* Parses "aa:bb:cc:dd:ee:ff". Returns 0 or -EINVAL. */
int rxp_parse_mac(const char *text, uint8_t out[6]);

/* Parses a whole decimal number in [min, max]. Returns 0 or -EINVAL. */
int rxp_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);

#endif
