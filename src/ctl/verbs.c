/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>
#include "verbs.h"

/* In the order config messages list them; ctl_rank: the order of ctl's list and help. */
static const struct cmd_verb verbs[] = {
	{ .word = "port", .ctl_rank = 4, .listed_as = "port set", .in = CMD_IN_CONFIG | CMD_IN_CTL,
	  .parse = verb_port,
	  .help = "  port set PORT mtu N\n"
		  "  port set PORT redirects on|off  |  port set PORT ra on|off\n"
		  "  port set PORT host on|off [gro on|off] [name TAP]\n"
		  "  port set PORT vrf VRF|default\n" },
	{ .word = "addr", .ctl_rank = 1, .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_addr,
	  .help = "  addr add|del ADDRESS/LENGTH dev PORT\n" },
	{ .word = "route", .ctl_rank = 2, .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_route,
	  .shape = { .max_words = 3 + RXP_NH_PATHS_MAX * 7 },	/* 64 x nexthop via GW dev P weight W */
	  .help = "  route add PREFIX [vrf VRF] [via GATEWAY [vrf VRF2]] [dev PORT]  |  route add PREFIX [vrf VRF] blackhole|unreachable|prohibit\n"
		  "  route add PREFIX [vrf VRF] nexthop via GATEWAY [vrf VRF2] [dev PORT] [weight W] nexthop ...   (up to 64, weights 1-256)\n"
		  "  route del PREFIX [vrf VRF] [via GATEWAY] [dev PORT]    (PREFIX may be default)\n" },
	{ .word = "neigh", .ctl_rank = 3, .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_neigh,
	  .help = "  neigh add ADDRESS lladdr MAC dev PORT\n"
		  "  neigh del ADDRESS dev PORT\n"
		  "  neigh ageing SECONDS\n" },
	{ .word = "icmp", .ctl_rank = 6, .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_icmp,
	  .help = "  icmp ratelimit ERRORS_PER_SECOND [burst N]\n" },
	{ .word = "sync", .ctl_rank = 11, .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_sync,
	  .serve = ctl_sync_serve,
	  .help = "  sync kernel [table N] [interval SECONDS]  |  sync off\n" },
	{ .word = "ip", .ctl_rank = 7, .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_ip,
	  .help = "  ip source-route on|off\n" },
	{ .word = "filter", .ctl_rank = 8, .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_filter,
	  .shape = { .max_words = CMD_WORDS_MAX - 1 },
	  .help = "  filter add input|forward|output [in PORT] [out PORT] [src PREFIX|@SET] [dst PREFIX|@SET]\n"
		  "             [proto tcp|udp|icmp|icmpv6|N] [sport N[-M]] [dport N[-M]] [icmp-type T]\n"
		  "             [ct-state new,established,related,invalid] accept|drop|reject\n"
		  "  filter policy input|forward|output accept|drop  |  filter del CHAIN N  |  filter flush [CHAIN]\n"
		  "  filter set add NAME [PREFIX...]  |  filter set del NAME PREFIX...\n" },
	{ .word = "conntrack", .ctl_rank = 9, .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_conntrack,
	  .help = "  conntrack max N  |  conntrack timeout NAME SECONDS  |  conntrack tcp liberal|loose on|off\n" },
	{ .word = "nat", .ctl_rank = 10, .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_nat,
	  .shape = { .max_words = 16 },	/* the longest: nat add dnat in P dst A proto P dport N-M to A:P */
	  .help = "  nat add masquerade out PORT [src PREFIX]\n"
		  "  nat add snat out PORT [src PREFIX] to ADDR[-ADDR] [ports N-M]\n"
		  "  nat add dnat in PORT [dst ADDR] proto tcp|udp dport N[-M] to ADDR[:PORT]\n"
		  "  nat add static INSIDE_ADDR OUTSIDE_ADDR  |  nat del N|RULE  |  nat flush\n"
		  "  nat filtering endpoint-independent|address-dependent|address-and-port-dependent\n"
		  "  nat timeout udp|tcp-established|tcp-transitory|icmp SECONDS\n" },
	{ .word = "vrf", .ctl_rank = 5, .in = CMD_IN_CONFIG | CMD_IN_CTL, .parse = verb_vrf,
	  .help = "  vrf add NAME table N  |  vrf del NAME\n" },
	{ .word = "show", .ctl_rank = 0, .in = CMD_IN_CTL, .serve = ctl_show_serve,
	  .help = "  show ports | stats | drops | routes [PREFIX|ADDRESS] [vrf VRF] | neigh | pool | filter | nat\n"
		  "  show conntrack [src ADDR] [dst ADDR] [proto P] [state S]  |  show conntrack stats\n"
		  "  show routes kernel [summary]   (the kernel's routes as mirrored, and what rxpath did with each)\n" },
	{ .word = "capture", .ctl_rank = 12, .in = CMD_IN_CTL, .serve = ctl_capture_serve,
	  .shape = { .rest_word = "filter", .rest_from = 4, .max_words = 10 },
	  .too_many = "capture: too many words; see 'help'",
	  .help = "  capture start rx|tx|drop|all FILE [dev PORT] [count N] [filter EXPR]  |  capture stop\n" },
	{ .word = "help", .ctl_rank = 13, .in = CMD_IN_CTL, .serve = ctl_help_serve },
};

const struct cmd_verb *cmd_verb_of(const char *line, unsigned in)
{
	/* the first word as cmd_split() cuts it: a '#' inside a word is part of it */
	size_t skip = strspn(line, " \t\r\n"), len = strcspn(line + skip, " \t\r\n");

	for (size_t i = 0; i < RXP_ARRAY_SIZE(verbs); i++)
		if ((verbs[i].in & in) && strlen(verbs[i].word) == len &&
		    !strncmp(verbs[i].word, line + skip, len))
			return &verbs[i];
	return NULL;
}

/* The @k-th verb in @in's order: the table's for config, ctl_rank for ctl; NULL past the end. */
static const struct cmd_verb *nth_verb(unsigned in, size_t k)
{
	for (size_t i = 0; i < RXP_ARRAY_SIZE(verbs); i++)
		if (in == CMD_IN_CTL ? verbs[i].ctl_rank == k : i == k)
			return &verbs[i];
	return NULL;
}

char *cmd_verbs_list(unsigned in, char *buf, size_t len)
{
	const struct cmd_verb *v;

	buf[0] = '\0';
	for (size_t k = 0, n = 0; (v = nth_verb(in, k)) && n < len; k++) {
		if (!(v->in & in))
			continue;
		snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
			 in == CMD_IN_CTL && v->listed_as ? v->listed_as : v->word);
		n = strlen(buf);
	}
	return buf;
}

int cmd_verbs_help(unsigned in, struct rxp_sbuf *out)
{
	int ret = rxp_sbuf_printf(out, "commands:\n");

	const struct cmd_verb *v;

	for (size_t k = 0; (v = nth_verb(in, k)) && !ret; k++)
		if ((v->in & in) && v->help)
			ret = rxp_sbuf_printf(out, "%s", v->help);
	return ret;
}
