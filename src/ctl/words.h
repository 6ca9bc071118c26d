/* SPDX-License-Identifier: MIT */
/*
 * The command language's one tokenizer and its errors. A line is split
 * into words at blanks, up to a '#'; a parse error says where the line
 * came from, the word at fault and what was expected, and is formatted
 * only when told (a config file's with its line, ctl's without: the
 * client names itself).
 */
#ifndef RXPATH_CTL_WORDS_H
#define RXPATH_CTL_WORDS_H

#include <stdbool.h>
#include <stddef.h>

#define CMD_WORDS_DEFAULT 12	/* words a line has at most, unless its verb says */
#define CMD_WORDS_MAX 512	/* ... which it may, up to this (a set's prefixes, 64 next hops) */
#define CMD_LINE_MAX 4096

/* One command line, split. */
struct cmd_line {
	char buf[CMD_LINE_MAX];		/* the words, each ended by a NUL */
	char *w[CMD_WORDS_MAX];
	int n;
};

/* A parse error. */
struct cmd_err {
	char where[300];	/* "rxpath.conf:3", "-e 2"; empty: not told (ctl) */
	char word[CMD_LINE_MAX + 4];	/* the word at fault as shown: "'lladr'", "nothing after 'dev'"; may be empty */
	char text[512];		/* what was expected, or why not */
};

/* How a verb's lines are cut, beyond plain words (NULL: plain words, CMD_WORDS_DEFAULT of them). */
struct cmd_shape {
	const char *rest_word;	/* at index rest_from or later, it ends the split: what follows, */
	int rest_from;		/* trimmed, is one last word (capture's filter expression) */
	int max_words;		/* words at most, the rest word's own not counted; 0: CMD_WORDS_DEFAULT */
};

/*
 * Splits @line as @shape says. Returns the word count, or -E2BIG (too many
 * words) or -EINVAL (a break inside the line, too long) with @e.
 */
int cmd_split(struct cmd_line *l, const char *line, const struct cmd_shape *shape,
	      struct cmd_err *e);

/*
 * Fills @e with @word (shown in quotes; NULL or "" for none) and the text
 * @fmt makes. Returns -EINVAL.
 */
int cmd_fail(struct cmd_err *e, const char *word, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same with @shown, the word as it is to be shown (quoted already, or "nothing after 'dev'"). Returns -EINVAL. */
int cmd_fail_shown(struct cmd_err *e, const char *shown, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes @e as one line: "WHERE: WORD: TEXT", leaving out what is empty. Returns @buf. */
char *cmd_err_format(const struct cmd_err *e, char *buf, size_t len);

/*
 * Keeps @where ("FILE:LINE", "-e N") in @dst for later messages; when it
 * does not fit, its end does, the line number with it: "...ong/dir/router.conf:12".
 */
void cmd_set_where(char *dst, size_t len, const char *where);

/* A word as a message shows it. */
struct cmd_shown {
	char text[CMD_LINE_MAX + 4];
};

/*
 * Names the first word of @l that does not fit @pattern, for a message:
 * "'lladr'", "'extra'" after the last word it has room for, or "nothing
 * after 'dev'" when the line ends early. In @pattern an upper-case word
 * stands for any word and "on|off" for either. Returns it; "" when all fit.
 */
struct cmd_shown cmd_misfit(const struct cmd_line *l, const char *pattern);

#endif
