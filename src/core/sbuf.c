/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sbuf.h"

/* Makes room for @more bytes and the NUL. Returns 0 or -ENOMEM. */
static int reserve(struct rxp_sbuf *sb, size_t more)
{
	size_t need = sb->len + more + 1, cap = sb->cap ? sb->cap : 256;
	char *p;

	if (sb->oom)
		return -ENOMEM;
	if (need <= sb->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	p = realloc(sb->data, cap);
	if (!p) {
		sb->oom = true;
		return -ENOMEM;
	}
	sb->data = p;
	sb->cap = cap;
	return 0;
}

int rxp_sbuf_append(struct rxp_sbuf *sb, const char *data, size_t len)
{
	if (reserve(sb, len))
		return -ENOMEM;
	memcpy(sb->data + sb->len, data, len);
	sb->len += len;
	sb->data[sb->len] = '\0';
	return 0;
}

int rxp_sbuf_printf(struct rxp_sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || reserve(sb, (size_t)n))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

int rxp_sbuf_json_str(struct rxp_sbuf *sb, const char *s)
{
	int ret = rxp_sbuf_append(sb, "\"", 1);

	for (; *s && !ret; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			ret = rxp_sbuf_printf(sb, "\\%c", c);
		else if (c < 0x20)
			ret = rxp_sbuf_printf(sb, "\\u%04x", c);
		else
			ret = rxp_sbuf_append(sb, (const char *)&c, 1);
	}
	return ret ? ret : rxp_sbuf_append(sb, "\"", 1);
}

void rxp_sbuf_reset(struct rxp_sbuf *sb)
{
	sb->len = 0;
	sb->oom = false;
	if (sb->data)
		sb->data[0] = '\0';
}

void rxp_sbuf_free(struct rxp_sbuf *sb)
{
	free(sb->data);
	*sb = (struct rxp_sbuf){ 0 };
}
