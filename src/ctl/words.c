/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "rxpath/common.h"
#include "words.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int cmd_split(struct cmd_line *l, const char *line, const struct cmd_shape *shape,
	      struct cmd_err *e)
{
	int max = shape && shape->max_words ? RXP_MIN(shape->max_words, CMD_WORDS_MAX - 1) :
					       CMD_WORDS_DEFAULT;
	size_t len = strlen(line);
	char *p;

	l->n = 0;
	/* a line's end is not part of it; a break inside would hide the rest */
	if (len && line[len - 1] == '\n')
		len--;
	if (len && line[len - 1] == '\r')
		len--;
	if (memchr(line, '\n', len) || memchr(line, '\r', len))
		return cmd_fail(e, NULL, "a line break inside one command; give one command per line or -e");
	if (len >= sizeof(l->buf))
		return cmd_fail(e, NULL, "line longer than %d characters", CMD_LINE_MAX - 1);
	memcpy(l->buf, line, len);
	l->buf[len] = '\0';
	for (p = l->buf;;) {
		while (is_blank(*p))
			p++;
		if (!*p || *p == '#')
			return l->n;
		if (l->n == max) {
			cmd_fail(e, NULL, "too many words (at most %d)", max);
			return -E2BIG;
		}
		l->w[l->n++] = p;
		while (*p && !is_blank(*p))
			p++;
		if (*p)
			*p++ = '\0';
		if (shape && shape->rest_word && l->n > shape->rest_from &&
		    !strcmp(l->w[l->n - 1], shape->rest_word)) {
			char *end;

			while (is_blank(*p))
				p++;
			end = p + strlen(p);
			while (end > p && is_blank(end[-1]))
				*--end = '\0';
			if (*p)
				l->w[l->n++] = p;	/* room kept: max is below CMD_WORDS_MAX */
			return l->n;
		}
	}
}

static int fail(struct cmd_err *e, const char *shown, const char *fmt, va_list ap)
{
	snprintf(e->word, sizeof(e->word), "%s", shown);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	return -EINVAL;
}

int cmd_fail(struct cmd_err *e, const char *word, const char *fmt, ...)
{
	char shown[sizeof(e->word)] = "";
	va_list ap;
	int ret;

	if (word && word[0])
		snprintf(shown, sizeof(shown), "'%s'", word);
	else if (word)
		snprintf(shown, sizeof(shown), "''");
	va_start(ap, fmt);
	ret = fail(e, shown, fmt, ap);
	va_end(ap);
	return ret;
}

int cmd_fail_shown(struct cmd_err *e, const char *shown, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = fail(e, shown, fmt, ap);
	va_end(ap);
	return ret;
}

char *cmd_err_format(const struct cmd_err *e, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", e->where, e->where[0] ? ": " : "", e->word,
		 e->word[0] ? ": " : "", e->text);
	return buf;
}

void cmd_set_where(char *dst, size_t len, const char *where)
{
	size_t n = strlen(where);

	if (n < len)
		memcpy(dst, where, n + 1);
	else
		snprintf(dst, len, "...%s", where + n - (len - 4));
}

/* True when @word is one of the '|'-separated words of @alts. */
static bool one_of(const char *word, const char *alts)
{
	size_t len = strlen(word);

	for (const char *a = alts; a; a = strchr(a, '|') ? strchr(a, '|') + 1 : NULL)
		if (!strncmp(a, word, len) && (a[len] == '|' || a[len] == '\0'))
			return true;
	return false;
}

struct cmd_shown cmd_misfit(const struct cmd_line *l, const char *pattern)
{
	struct cmd_shown m = { "" };
	char pat[128], *save, *tok;
	int i = 0;

	snprintf(pat, sizeof(pat), "%s", pattern);
	for (tok = strtok_r(pat, " ", &save); tok; tok = strtok_r(NULL, " ", &save), i++) {
		if (i >= l->n) {
			snprintf(m.text, sizeof(m.text), "nothing after '%.64s'", l->w[l->n - 1]);
			return m;
		}
		if (!(tok[0] >= 'A' && tok[0] <= 'Z') && !one_of(l->w[i], tok))
			break;
	}
	if (i < l->n)
		snprintf(m.text, sizeof(m.text), "'%.64s'", l->w[i]);
	return m;
}
