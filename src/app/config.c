/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"

#define WORDS_MAX 8
#define LINE_MAX_LEN 1024

/* Splits @line into words at blanks, up to a '#'. Returns the count, or -E2BIG. */
static int split(char *line, char **words)
{
	int n = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == WORDS_MAX)
			return -E2BIG;
		words[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			p++;
		if (*p)
			*p++ = '\0';
	}
}

int config_apply_line(struct dp_config *cfg, const char *line, const char *where, char *err,
		      size_t errlen)
{
	char buf[LINE_MAX_LEN];
	char *w[WORDS_MAX];
	char perr[RXP_ERR_LEN];
	int n;

	if (strlen(line) >= sizeof(buf)) {
		snprintf(err, errlen, "%s: line longer than %d characters", where, LINE_MAX_LEN - 1);
		return -EINVAL;
	}
	strcpy(buf, line);
	n = split(buf, w);
	if (n == 0)
		return 0;
	if (n < 0) {
		snprintf(err, errlen, "%s: too many words (at most %d)", where, WORDS_MAX);
		return -EINVAL;
	}
	if (strcmp(w[0], "port")) {
		snprintf(err, errlen, "%s: '%s': expected a command: port", where, w[0]);
		return -EINVAL;
	}
	if (n < 2 || strcmp(w[1], "add")) {
		snprintf(err, errlen, "%s: '%s': expected 'add' after 'port'", where,
			 n < 2 ? "" : w[1]);
		return -EINVAL;
	}
	if (n != 4) {
		snprintf(err, errlen, "%s: %s: expected 'port add NAME DRIVER[:key=value,...]'",
			 where, n < 4 ? "missing words" : w[4]);
		return -EINVAL;
	}
	if (!rxp_port_driver(strndupa(w[3], strcspn(w[3], ":")))) {
		snprintf(err, errlen, "%s: '%s': unknown driver (built in: %s)", where, w[3],
			 rxp_port_drivers());
		return -EINVAL;
	}
	if (dp_config_add_port(cfg, w[2], w[3], perr, sizeof(perr))) {
		snprintf(err, errlen, "%s: '%s': %s", where, w[2], perr);
		return -EINVAL;
	}
	return 0;
}

int config_apply_file(struct dp_config *cfg, const char *path, char *err, size_t errlen)
{
	struct dp_config next = *cfg;
	char line[LINE_MAX_LEN + 1];
	char where[300];
	unsigned lineno = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		int e = errno;

		snprintf(err, errlen, "cannot read config file '%s': %s", path, strerror(e));
		return -e;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s: line longer than %d characters", where,
				 LINE_MAX_LEN - 1);
			fclose(f);
			return -EINVAL;
		}
		if (config_apply_line(&next, line, where, err, errlen)) {
			fclose(f);
			return -EINVAL;
		}
	}
	fclose(f);
	*cfg = next;
	return 0;
}
