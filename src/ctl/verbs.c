/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>
#include "verbs.h"

/* In the order the lists of commands and the help show them. */
static const struct cmd_verb verbs[] = {
	{ .word = "show", .in = CMD_IN_CTL, .serve = ctl_show_serve,
	  .help = "  show ports | stats | drops | routes [PREFIX|ADDRESS] | neigh | pool\n"
		  "  show routes kernel    (the kernel's routes as mirrored, and what rxpath did with each)\n" },
	{ .word = "addr", .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_addr,
	  .help = "  addr add|del ADDRESS/LENGTH dev PORT\n" },
	{ .word = "route", .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_route,
	  .help = "  route add PREFIX [via GATEWAY] [dev PORT]  |  route add PREFIX blackhole|unreachable|prohibit\n"
		  "  route del PREFIX [via GATEWAY] [dev PORT]    (PREFIX may be default)\n" },
	{ .word = "neigh", .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_neigh,
	  .help = "  neigh add ADDRESS lladdr MAC dev PORT\n"
		  "  neigh del ADDRESS dev PORT\n"
		  "  neigh ageing SECONDS\n" },
	{ .word = "port", .listed_as = "port set", .in = CMD_IN_CONFIG | CMD_IN_CTL,
	  .parse = verb_port,
	  .help = "  port set PORT mtu N\n"
		  "  port set PORT redirects on|off  |  port set PORT ra on|off\n"
		  "  port set PORT host on|off [gro on|off] [name TAP]\n" },
	{ .word = "icmp", .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_icmp,
	  .help = "  icmp ratelimit ERRORS_PER_SECOND [burst N]\n" },
	{ .word = "ip", .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_ip,
	  .help = "  ip source-route on|off\n" },
	{ .word = "sync", .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_sync,
	  .serve = ctl_sync_serve,
	  .help = "  sync kernel [table N] [interval SECONDS]  |  sync off\n" },
	{ .word = "capture", .in = CMD_IN_CTL, .serve = ctl_capture_serve,
	  .rest_word = "filter", .rest_from = 4,
	  .help = "  capture start rx|tx|drop|all FILE [dev PORT] [count N] [filter EXPR]  |  capture stop\n" },
	{ .word = "help", .in = CMD_IN_CTL, .serve = ctl_help_serve },
};

const struct cmd_verb *cmd_verb_of(const char *line, unsigned in)
{
	size_t skip = strspn(line, " \t"), len = strcspn(line + skip, " \t\r\n#");

	for (size_t i = 0; i < RXP_ARRAY_SIZE(verbs); i++)
		if ((verbs[i].in & in) && strlen(verbs[i].word) == len &&
		    !strncmp(verbs[i].word, line + skip, len))
			return &verbs[i];
	return NULL;
}

char *cmd_verbs_list(unsigned in, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0, n = 0; i < RXP_ARRAY_SIZE(verbs) && n < len; i++) {
		if (!(verbs[i].in & in))
			continue;
		snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
			 in == CMD_IN_CTL && verbs[i].listed_as ? verbs[i].listed_as : verbs[i].word);
		n = strlen(buf);
	}
	return buf;
}

int cmd_verbs_help(unsigned in, struct rxp_sbuf *out)
{
	int ret = rxp_sbuf_printf(out, "commands:\n");

	for (size_t i = 0; i < RXP_ARRAY_SIZE(verbs) && !ret; i++)
		if ((verbs[i].in & in) && verbs[i].help)
			ret = rxp_sbuf_printf(out, "%s", verbs[i].help);
	return ret;
}
