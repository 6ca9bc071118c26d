/* SPDX-License-Identifier: MIT */
/*
 * A growable text buffer for replies and reports built off the fast path
 * (control socket answers, metrics pages). Appending never fails loudly:
 * after an allocation failure the buffer is marked and stays truncated.
 */
#ifndef RXPATH_SBUF_H
#define RXPATH_SBUF_H

#include <stdbool.h>
#include <stddef.h>

struct rxp_sbuf {
	char *data;		/* NUL-terminated; NULL until the first append */
	size_t len, cap;
	bool oom;		/* an append did not fit in memory: the text is cut short */
};

/* Appends printf-style text. Returns 0 or -ENOMEM (and sets oom). */
int rxp_sbuf_printf(struct rxp_sbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appends @len bytes of @data. Returns 0 or -ENOMEM. */
int rxp_sbuf_append(struct rxp_sbuf *sb, const char *data, size_t len);

/* Appends @s as a JSON string, quotes included. Returns 0 or -ENOMEM. */
int rxp_sbuf_json_str(struct rxp_sbuf *sb, const char *s);

/* Empties the buffer, keeping its memory. */
void rxp_sbuf_reset(struct rxp_sbuf *sb);

/* Frees the memory. */
void rxp_sbuf_free(struct rxp_sbuf *sb);

#endif
