/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the control plane's command language (src/ctl): the
 * tokenizer and its structured errors (src/ctl/words.h), the table of verbs
 * (verbs.h), every config verb with a good line and bad ones (the message
 * names the line's source, the word at fault and what was expected, and the
 * config is left as it was), config files (errors with their line number,
 * all or nothing), and reload's diff (reload.h), applied to a running
 * datapath of sim ports.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctl/config.h"
#include "ctl/reload.h"
#include "ctl/verbs.h"
#include "ctl/words.h"
#include "engine/control.h"
#include "engine/dataplane.h"
#include "rxpath/router.h"
#include "rxpath/stack.h"
#include "check.h"

#define ERR_LEN 512

static bool starts_with(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

/* CHECK that @s starts with @prefix, showing @s when not. */
#define CHECK_PREFIX(s, prefix) do { \
	if (!starts_with((s), (prefix))) \
		fprintf(stdout, "  got \"%s\", expected it to start with \"%s\"\n", (s), (prefix)); \
	CHECK(starts_with((s), (prefix))); \
} while (0)

#define CHECK_HAS(s, part) do { \
	if (!strstr((s), (part))) \
		fprintf(stdout, "  got \"%s\", expected it to hold \"%s\"\n", (s), (part)); \
	CHECK(strstr((s), (part)) != NULL); \
} while (0)

#define CHECK_STR(s, want) do { \
	if (strcmp((s), (want))) \
		fprintf(stdout, "  got \"%s\", expected \"%s\"\n", (s), (want)); \
	CHECK(strcmp((s), (want)) == 0); \
} while (0)

/* ---- the tokenizer ---- */

static void test_split_words(void)
{
	struct cmd_line l;
	struct cmd_err e = { 0 };

	CHECK_EQ(cmd_split(&l, "  route add 10.9.0.0/16\tvia 10.0.1.2  # the lab's gateway\n", NULL,
			   &e), 5);
	CHECK_EQ(l.n, 5);
	CHECK_STR(l.w[0], "route");
	CHECK_STR(l.w[2], "10.9.0.0/16");
	CHECK_STR(l.w[3], "via");
	CHECK_STR(l.w[4], "10.0.1.2");

	/* a comment, an empty line, blanks: no words */
	CHECK_EQ(cmd_split(&l, "# port add p0 sim", NULL, &e), 0);
	CHECK_EQ(cmd_split(&l, "   \t# indented comment", NULL, &e), 0);
	CHECK_EQ(cmd_split(&l, "", NULL, &e), 0);
	CHECK_EQ(cmd_split(&l, " \t \n", NULL, &e), 0);
	/* as in sh, a '#' inside a word is part of it */
	CHECK_EQ(cmd_split(&l, "port add p#1 sim # a comment", NULL, &e), 4);
	CHECK_STR(l.w[2], "p#1");

	/* a line's own end, Unix or DOS, is not part of it */
	CHECK_EQ(cmd_split(&l, "addr add 10.0.1.1/24 dev p0\r\n", NULL, &e), 5);
	CHECK_STR(l.w[4], "p0");
	CHECK_EQ(cmd_split(&l, "neigh ageing 60\n", NULL, &e), 3);
	CHECK_STR(l.w[2], "60");
}

static void test_split_errors(void)
{
	struct cmd_line l;
	struct cmd_err e;
	char line[CMD_LINE_MAX + 8];
	char msg[700];

	/* a line break inside would hide the rest */
	memset(&e, 0, sizeof(e));
	CHECK_EQ(cmd_split(&l, "addr add 10.0.1.1/24 dev p0\nroute del default", NULL, &e), -EINVAL);
	CHECK_STR(e.word, "");
	CHECK_HAS(e.text, "a line break inside one command");
	memset(&e, 0, sizeof(e));
	CHECK_EQ(cmd_split(&l, "neigh ageing 60\r\nsync off\n", NULL, &e), -EINVAL);
	CHECK_HAS(e.text, "line break");
	CHECK_EQ(cmd_split(&l, "a\rb", NULL, &e), -EINVAL);

	/* at most CMD_WORDS_DEFAULT words; a comment after them does not count */
	CHECK_EQ(cmd_split(&l, "1 2 3 4 5 6 7 8 9 10 11 12", NULL, &e), 12);
	CHECK_EQ(cmd_split(&l, "1 2 3 4 5 6 7 8 9 10 11 12   # 13 14", NULL, &e), 12);
	memset(&e, 0, sizeof(e));
	CHECK_EQ(cmd_split(&l, "1 2 3 4 5 6 7 8 9 10 11 12 13", NULL, &e), -E2BIG);
	CHECK_STR(e.text, "too many words (at most 12)");
	CHECK_STR(cmd_err_format(&e, msg, sizeof(msg)), "too many words (at most 12)");

	/* at most CMD_LINE_MAX - 1 characters */
	memset(line, 'x', CMD_LINE_MAX - 1);
	line[CMD_LINE_MAX - 1] = '\0';
	CHECK_EQ(cmd_split(&l, line, NULL, &e), 1);
	CHECK_EQ(strlen(l.w[0]), CMD_LINE_MAX - 1);
	line[CMD_LINE_MAX - 1] = '\n';	/* its line break aside, it fits */
	line[CMD_LINE_MAX] = '\0';
	CHECK_EQ(cmd_split(&l, line, NULL, &e), 1);
	line[CMD_LINE_MAX - 1] = 'x';
	memset(&e, 0, sizeof(e));
	CHECK_EQ(cmd_split(&l, line, NULL, &e), -EINVAL);
	CHECK_STR(e.text, "line longer than 4095 characters");
}

/* capture's filter: from the rest word on, the rest of the line is one word */
static void test_split_rest_word(void)
{
	const struct cmd_verb *v = cmd_verb_of("capture start all f.pcap", CMD_IN_CTL);
	struct cmd_line l;
	struct cmd_err e = { 0 };

	CHECK(v != NULL);
	if (!v)
		return;
	CHECK_STR(v->shape.rest_word, "filter");
	CHECK_EQ(v->shape.rest_from, 4);
	CHECK_EQ(v->shape.max_words, 10);
	CHECK_EQ(cmd_split(&l, "capture start all /tmp/c.pcap dev p0 filter udp and  port 53 \t\n",
			   &v->shape, &e), 8);
	CHECK_STR(l.w[6], "filter");
	CHECK_STR(l.w[7], "udp and  port 53");	/* trimmed, its inside as written */

	/* before rest_from, the word is an ordinary one (a file called filter) */
	CHECK_EQ(cmd_split(&l, "capture start all filter filter tcp", &v->shape, &e), 6);
	CHECK_STR(l.w[3], "filter");
	CHECK_STR(l.w[5], "tcp");

	/* nothing after it: no last word */
	CHECK_EQ(cmd_split(&l, "capture start all c.pcap filter   ", &v->shape, &e), 5);

	/* the filter is one word, however many it has */
	CHECK_EQ(cmd_split(&l, "capture start all c.pcap dev p0 count 5 filter "
			   "a or b or c or d or e or f or g", &v->shape, &e), 10);
	CHECK_STR(l.w[9], "a or b or c or d or e or f or g");

	/* at most 10 words, the filter expression not counted, as capture always took */
	CHECK_EQ(cmd_split(&l, "capture start all c.pcap dev p0 count 5 count 6 filter tcp",
			   &v->shape, &e), -E2BIG);
	CHECK_EQ(cmd_split(&l, "capture start all c.pcap dev p0 count 5 dev p1", &v->shape, &e), 10);
	CHECK_EQ(cmd_split(&l, "capture start all c.pcap dev p0 count 5 dev p1 count", &v->shape,
			   &e), -E2BIG);

	/* without a rest word, "filter" is a word like any */
	CHECK_EQ(cmd_split(&l, "capture start all c.pcap filter udp port 53", NULL, &e), 8);
}

static void test_err_format(void)
{
	struct cmd_err e = { 0 };
	char msg[700], small[8];
	char where[sizeof(((struct cmd_err *)0)->where) + 100];

	snprintf(e.where, sizeof(e.where), "rxpath.conf:3");
	CHECK_EQ(cmd_fail(&e, "lladr", "expected 'neigh add ADDRESS lladdr MAC dev PORT'"), -EINVAL);
	CHECK_STR(e.word, "'lladr'");
	CHECK_STR(cmd_err_format(&e, msg, sizeof(msg)),
		  "rxpath.conf:3: 'lladr': expected 'neigh add ADDRESS lladdr MAC dev PORT'");

	/* no word: none shown; an empty word: shown as '' */
	cmd_fail(&e, NULL, "route add needs %s", "'via GATEWAY'");
	CHECK_STR(cmd_err_format(&e, msg, sizeof(msg)), "rxpath.conf:3: route add needs 'via GATEWAY'");
	cmd_fail(&e, "", "expected a word");
	CHECK_STR(cmd_err_format(&e, msg, sizeof(msg)), "rxpath.conf:3: '': expected a word");

	/* the word as shown */
	cmd_fail_shown(&e, "nothing after 'dev'", "expected 'addr add|del ADDRESS/LENGTH dev PORT'");
	CHECK_STR(cmd_err_format(&e, msg, sizeof(msg)),
		  "rxpath.conf:3: nothing after 'dev': expected 'addr add|del ADDRESS/LENGTH dev PORT'");

	/* ctl's: without where */
	e.where[0] = '\0';
	cmd_fail(&e, "p9", "no such port");
	CHECK_STR(cmd_err_format(&e, msg, sizeof(msg)), "'p9': no such port");

	/* cut short, never past the buffer */
	CHECK_EQ(strlen(cmd_err_format(&e, small, sizeof(small))), sizeof(small) - 1);

	/* a long where keeps its end: the file's name and the line number */
	memset(where, 'd', sizeof(where));
	snprintf(where + sizeof(e.where) + 50, sizeof(where) - sizeof(e.where) - 50, "/router.conf:12");
	cmd_set_where(e.where, sizeof(e.where), where);
	CHECK_EQ(strlen(e.where), sizeof(e.where) - 1);
	CHECK_PREFIX(e.where, "...ddd");
	CHECK(strlen(e.where) > 15 && !strcmp(e.where + strlen(e.where) - 15, "/router.conf:12"));
	cmd_set_where(e.where, sizeof(e.where), "-e 2");
	CHECK_STR(e.where, "-e 2");
}

static void test_misfit(void)
{
	struct cmd_line l;
	struct cmd_err e = { 0 };
	const char *pat = "neigh add ADDRESS lladdr MAC dev PORT";

	cmd_split(&l, "neigh add 10.0.1.2 lladr 02:00:00:00:00:01 dev p0", NULL, &e);
	CHECK_STR(cmd_misfit(&l, pat).text, "'lladr'");
	cmd_split(&l, "neigh add 10.0.1.2 lladdr 02:00:00:00:00:01 dev", NULL, &e);
	CHECK_STR(cmd_misfit(&l, pat).text, "nothing after 'dev'");
	cmd_split(&l, "neigh add 10.0.1.2 lladdr 02:00:00:00:00:01 dev p0 extra", NULL, &e);
	CHECK_STR(cmd_misfit(&l, pat).text, "'extra'");
	cmd_split(&l, "neigh add 10.0.1.2 lladdr 02:00:00:00:00:01 dev p0", NULL, &e);
	CHECK_STR(cmd_misfit(&l, pat).text, "");
	cmd_split(&l, "ip source-route maybe", NULL, &e);
	CHECK_STR(cmd_misfit(&l, "ip source-route on|off").text, "'maybe'");
	cmd_split(&l, "ip source-route off", NULL, &e);
	CHECK_STR(cmd_misfit(&l, "ip source-route on|off").text, "");
	cmd_split(&l, "ip source-route o", NULL, &e);
	CHECK_STR(cmd_misfit(&l, "ip source-route on|off").text, "'o'");
}

/* ---- the verbs ---- */

static void test_verbs(void)
{
	const struct cmd_verb *v;
	char buf[300], small[10];
	struct rxp_sbuf help = { 0 };

	v = cmd_verb_of("addr add 10.0.1.1/24 dev p0", CMD_IN_CONFIG);
	CHECK(v && !strcmp(v->word, "addr") && v->parse == verb_addr);
	v = cmd_verb_of(" \troute del default", CMD_IN_CONFIG);
	CHECK(v && v->parse == verb_route);
	/* a '#' inside a word is part of it, as cmd_split() cuts it */
	CHECK(cmd_verb_of("neigh#comment", CMD_IN_CONFIG) == NULL);
	v = cmd_verb_of("neigh #comment", CMD_IN_CONFIG);
	CHECK(v && v->parse == verb_neigh);
	CHECK(cmd_verb_of("addresses add", CMD_IN_CONFIG) == NULL);
	CHECK(cmd_verb_of("add", CMD_IN_CONFIG) == NULL);
	CHECK(cmd_verb_of("", CMD_IN_CONFIG) == NULL);
	CHECK(cmd_verb_of("# addr add", CMD_IN_CONFIG) == NULL);
	/* what only the control socket takes */
	CHECK(cmd_verb_of("show routes", CMD_IN_CONFIG) == NULL);
	v = cmd_verb_of("show routes", CMD_IN_CTL);
	CHECK(v && v->serve != NULL);
	CHECK(cmd_verb_of("capture stop", CMD_IN_CONFIG) == NULL);
	CHECK(cmd_verb_of("help", CMD_IN_CTL) != NULL);
	v = cmd_verb_of("sync kernel", CMD_IN_CTL);
	CHECK(v && v->parse == verb_sync && v->serve != NULL);
	CHECK(cmd_verb_of("Addr add", CMD_IN_CONFIG) == NULL);	/* words are lower case */

	CHECK_STR(cmd_verbs_list(CMD_IN_CONFIG, buf, sizeof(buf)),
		  "port, addr, route, neigh, icmp, sync, ip, filter, conntrack, nat, vrf");
	CHECK_STR(cmd_verbs_list(CMD_IN_CTL, buf, sizeof(buf)),
		  "show, addr, route, neigh, port set, vrf, icmp, ip, filter, conntrack, nat, sync, capture, help");
	CHECK_EQ(strlen(cmd_verbs_list(CMD_IN_CONFIG, small, sizeof(small))), sizeof(small) - 1);

	CHECK_EQ(cmd_verbs_help(CMD_IN_CONFIG, &help), 0);
	CHECK(help.data && starts_with(help.data, "commands:\n"));
	CHECK(help.data && strstr(help.data, "addr add|del ADDRESS/LENGTH dev PORT") != NULL);
	CHECK(help.data && strstr(help.data, "show ports") == NULL);
	rxp_sbuf_reset(&help);
	CHECK_EQ(cmd_verbs_help(CMD_IN_CTL, &help), 0);
	CHECK(help.data && strstr(help.data, "show ports") != NULL);
	CHECK(help.data && strstr(help.data, "capture start") != NULL);
	rxp_sbuf_free(&help);
}

/* ---- config lines ---- */

/* Ports p0, p1 and a VLAN sub-port v100 of p0. */
static void base_config(struct dp_config *cfg)
{
	char err[ERR_LEN] = "";

	dp_config_default(cfg);
	CHECK_EQ(config_apply_line(cfg, "port add p0 sim", "base", err, sizeof(err)), 0);
	CHECK_EQ(config_apply_line(cfg, "port add p1 sim:rx=off", "base", err, sizeof(err)), 0);
	CHECK_EQ(config_apply_line(cfg, "port add v100 vlan:parent=p0,id=100", "base", err,
				   sizeof(err)), 0);
	CHECK_EQ(cfg->n_ports, 2);
	CHECK_EQ(cfg->n_vlans, 1);
	CHECK_EQ(cfg->n_cmds, 0);
}

/* Applies @line as "-e 1"; returns the command it added (NULL: it added none, or failed). */
static const struct dp_cmd *good_line(struct dp_config *cfg, const char *line)
{
	char err[ERR_LEN] = "";
	unsigned n = cfg->n_cmds;
	int ret = config_apply_line(cfg, line, "-e 1", err, sizeof(err));

	if (ret)
		fprintf(stdout, "  \"%s\": %s\n", line, err);
	CHECK_EQ(ret, 0);
	CHECK(cfg->n_cmds <= n + 1);
	if (ret || cfg->n_cmds != n + 1)
		return NULL;
	CHECK_STR(cfg->cmds[n].where, "-e 1");
	return &cfg->cmds[n];
}

static bool addr_is(const struct dp_cmd *c, const char *text)
{
	uint8_t a[16] = { 0 };

	if (inet_pton(strchr(text, ':') ? AF_INET6 : AF_INET, text, a) != 1)
		return false;
	return !memcmp(c->addr, a, 16);
}

static bool gw_is(const struct dp_cmd *c, const char *text)
{
	uint8_t a[16] = { 0 };

	if (inet_pton(strchr(text, ':') ? AF_INET6 : AF_INET, text, a) != 1)
		return false;
	return c->has_gw && !memcmp(c->gw, a, 16);
}

static void test_config_good_lines(void)
{
	struct dp_config cfg;
	const struct dp_cmd *c;
	const uint8_t mac[6] = { 0x02, 0, 0, 0, 0x01, 0x02 };
	char err[ERR_LEN] = "";

	base_config(&cfg);

	c = good_line(&cfg, "addr add 10.0.1.1/24 dev p0");
	CHECK(c && c->kind == DP_CMD_ADDR_ADD && c->family == 4 && c->plen == 24 &&
	      addr_is(c, "10.0.1.1") && !strcmp(c->dev, "p0"));
	c = good_line(&cfg, "addr del 2001:db8::1 dev v100");
	CHECK(c && c->kind == DP_CMD_ADDR_DEL && c->family == 6 && c->plen == 128 &&
	      addr_is(c, "2001:db8::1") && !strcmp(c->dev, "v100"));

	c = good_line(&cfg, "route add 10.9.1.0/16 via 10.0.1.2");
	CHECK(c && c->kind == DP_CMD_ROUTE_ADD && c->plen == 16 && addr_is(c, "10.9.0.0") &&
	      gw_is(c, "10.0.1.2") && !c->dev[0] && !c->route_type);
	c = good_line(&cfg, "route add 10.9.0.0/16 via 10.0.1.2 dev p1  # via the lab");
	CHECK(c && gw_is(c, "10.0.1.2") && !strcmp(c->dev, "p1"));
	c = good_line(&cfg, "route add 10.9.0.0/16 dev p1 via 10.0.1.2");
	CHECK(c && gw_is(c, "10.0.1.2") && !strcmp(c->dev, "p1"));
	c = good_line(&cfg, "route add default via 2001:db8::2");
	CHECK(c && c->family == 6 && c->plen == 0 && gw_is(c, "2001:db8::2"));
	c = good_line(&cfg, "route add default dev p0");
	CHECK(c && c->family == 4 && c->plen == 0 && !c->has_gw && !strcmp(c->dev, "p0"));
	c = good_line(&cfg, "route add 10.66.0.0/16 blackhole");
	CHECK(c && c->route_type == RXP_NH_KIND_BLACKHOLE);
	c = good_line(&cfg, "route add 10.67.0.0/16 unreachable");
	CHECK(c && c->route_type == RXP_NH_KIND_UNREACHABLE);
	c = good_line(&cfg, "route add 2001:db8:66::/48 prohibit");
	CHECK(c && c->route_type == RXP_NH_KIND_PROHIBIT && c->family == 6);
	c = good_line(&cfg, "route del 10.9.0.0/16");
	CHECK(c && c->kind == DP_CMD_ROUTE_DEL && c->plen == 16 && !c->has_gw);
	c = good_line(&cfg, "route del 10.9.0.0/16 via 10.0.1.2 dev p1");
	CHECK(c && c->kind == DP_CMD_ROUTE_DEL && gw_is(c, "10.0.1.2") && !strcmp(c->dev, "p1"));

	c = good_line(&cfg, "neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev p1");
	CHECK(c && c->kind == DP_CMD_NEIGH_ADD && c->family == 4 && addr_is(c, "10.0.1.2") &&
	      !memcmp(c->mac, mac, 6) && !strcmp(c->dev, "p1"));
	c = good_line(&cfg, "neigh add fe80::2 lladdr 02:00:00:00:01:02 dev v100");
	CHECK(c && c->family == 6 && !strcmp(c->dev, "v100"));
	c = good_line(&cfg, "neigh del 10.0.1.2 dev p1");
	CHECK(c && c->kind == DP_CMD_NEIGH_DEL && addr_is(c, "10.0.1.2"));
	c = good_line(&cfg, "neigh ageing 60");
	CHECK(c && c->kind == DP_CMD_NEIGH_AGEING && c->seconds == 60);

	c = good_line(&cfg, "port set p0 mtu 9000");
	CHECK(c && c->kind == DP_CMD_MTU && c->mtu == 9000 && !strcmp(c->dev, "p0"));
	c = good_line(&cfg, "port set v100 mtu 1400");
	CHECK(c && c->kind == DP_CMD_MTU && c->mtu == 1400 && !strcmp(c->dev, "v100"));
	c = good_line(&cfg, "port set p1 redirects off");
	CHECK(c && c->kind == DP_CMD_REDIRECTS && !c->redirects && !strcmp(c->dev, "p1"));
	c = good_line(&cfg, "port set p1 ra on");
	CHECK(c && c->kind == DP_CMD_RA && c->ra_on);
	c = good_line(&cfg, "port set p0 host on gro off name rxtap0");
	CHECK(c && c->kind == DP_CMD_HOST && c->host_on && !c->host_gro &&
	      !strcmp(c->host_name, "rxtap0") && !strcmp(c->dev, "p0"));
	c = good_line(&cfg, "port set p0 host off");
	CHECK(c && c->kind == DP_CMD_HOST && !c->host_on && c->host_gro && !c->host_name[0]);

	c = good_line(&cfg, "icmp ratelimit 100");
	CHECK(c && c->kind == DP_CMD_ICMP_RATE && c->rate == 100 && c->burst == 5);
	c = good_line(&cfg, "icmp ratelimit 100 burst 7");
	CHECK(c && c->rate == 100 && c->burst == 7);
	c = good_line(&cfg, "icmp ratelimit 0");
	CHECK(c && c->rate == 0 && c->burst == 0);

	c = good_line(&cfg, "ip source-route off");
	CHECK(c && c->kind == DP_CMD_SOURCE_ROUTE && !c->source_route);
	c = good_line(&cfg, "ip source-route on");
	CHECK(c && c->source_route);

	/* sync changes the config's settings, not its commands */
	CHECK(good_line(&cfg, "sync kernel") == NULL);
	CHECK(cfg.sync.on && cfg.sync.table == 254 && cfg.sync.interval_ms == 30000);
	CHECK_STR(cfg.sync.where, "-e 1");
	CHECK(good_line(&cfg, "sync kernel table 100 interval 5") == NULL);
	CHECK(cfg.sync.on && cfg.sync.table == 100 && cfg.sync.interval_ms == 5000);
	CHECK(good_line(&cfg, "sync off") == NULL);
	CHECK(!cfg.sync.on);

	/* ports and VLAN sub-ports */
	CHECK_EQ(config_apply_line(&cfg, "port add p2 sim:proto=udp4,count=5", "f.conf:9", err,
				   sizeof(err)), 0);
	CHECK_EQ(cfg.n_ports, 3);
	CHECK_STR(cfg.ports[2].name, "p2");
	CHECK_STR(cfg.ports[2].spec, "sim:proto=udp4,count=5");
	CHECK_STR(cfg.ports[2].where, "f.conf:9");
	CHECK_EQ(config_apply_line(&cfg, "port add v200 vlan:parent=p1,id=200", "-e 1", err,
				   sizeof(err)), 0);
	CHECK_EQ(cfg.n_vlans, 2);
	CHECK(cfg.vlans[1].id == 200 && !strcmp(cfg.vlans[1].parent, "p1"));
	c = good_line(&cfg, "addr add 10.0.2.1/24 dev v200");	/* known at once */
	CHECK(c && !strcmp(c->dev, "v200"));

	/* nothing to do */
	CHECK(good_line(&cfg, "") == NULL);
	CHECK(good_line(&cfg, "   # route add 10.9.0.0/16 via 10.0.1.2") == NULL);
	CHECK(good_line(&cfg, " \t ") == NULL);
	dp_config_free(&cfg);
}

struct bad_case {
	const char *line;
	const char *msg;	/* what the message starts with, after "-e 1: " */
	const char *also;	/* and, if not NULL, holds */
};

static const struct bad_case bad_cases[] = {
	/* not a command of config files */
	{ "frobnicate now", "'frobnicate': expected a command: port, addr, route, neigh, icmp, sync, ip", NULL },
	{ "addr#x add 10.0.0.1/24 dev p0", "'addr#x': expected a command: port, addr, route, neigh, icmp, sync, ip", NULL },
	{ "show ports", "'show': expected a command", NULL },
	{ "capture stop", "'capture': expected a command", NULL },
	/* the tokenizer's */
	{ "1 2 3 4 5 6 7 8 9 10 11 12 13", "too many words (at most 12)", NULL },
	{ "addr add 10.0.1.1/24 dev p0\nroute del default", "a line break inside one command", NULL },
	/* addr */
	{ "addr", "", "expected 'add' or 'del' after 'addr'" },
	{ "addr change 10.0.1.1/24 dev p0", "'change': expected 'add' or 'del' after 'addr'", NULL },
	{ "addr add 10.0.1.1/33 dev p0", "'10.0.1.1/33': expected an address with a prefix length", NULL },
	{ "addr add 10.0.1/24 dev p0", "'10.0.1/24': expected an address", NULL },
	{ "addr add 10.0.1.1/24 dev p9", "'p9': no such port", NULL },
	{ "addr add 10.0.1.1/24 on p0", "'on': expected 'addr add ADDRESS/LENGTH dev PORT'", NULL },
	{ "addr add 10.0.1.1/24 dev", "nothing after 'dev': expected 'addr add ADDRESS/LENGTH dev PORT'", NULL },
	{ "addr del 10.0.1.1/24 dev p0 now", "'now': expected 'addr del ADDRESS/LENGTH dev PORT'", NULL },
	/* route */
	{ "route add 10.9.0.0/16", "route add needs 'via GATEWAY', 'dev PORT' or both", NULL },
	{ "route flush", "'flush': expected 'route add PREFIX", NULL },
	{ "route add 10.9.0.0/33 via 10.0.1.2", "'10.9.0.0/33': expected a prefix like", NULL },
	{ "route add 10.9.0.0/16 via 2001:db8::1", "'2001:db8::1': expected an IPv4 gateway address", NULL },
	{ "route add 2001:db8:9::/48 via 10.0.1.2", "'10.0.1.2': expected an IPv6 gateway address", NULL },
	{ "route add 10.9.0.0/16 via 10.0.1.2 metric 5", "'metric': expected 'via GATEWAY' or 'dev PORT'", NULL },
	{ "route add 10.9.0.0/16 via 10.0.1.2 via 10.0.1.3", "'via': expected 'via GATEWAY' or 'dev PORT'", NULL },
	{ "route add 10.9.0.0/16 via", "'via': expected", NULL },
	{ "route add 10.9.0.0/16 dev p7", "'p7': no such port", NULL },
	{ "route del 10.9.0.0/16 blackhole", "'blackhole': expected 'via GATEWAY', 'dev PORT' or nothing more", NULL },
	{ "route add 10.9.0.0/16 blackhole dev p0", "'blackhole': expected", NULL },
	/* neigh */
	{ "neigh add 10.0.1.2 lladr 02:00:00:00:01:02 dev p1", "'lladr': expected 'neigh add ADDRESS lladdr MAC dev PORT'", NULL },
	{ "neigh add 10.0.1.2 lladdr 01:00:5e:00:00:01 dev p1", "'01:00:5e:00:00:01': expected a unicast MAC address", NULL },
	{ "neigh add 10.0.1.2 lladdr 02:00:00:00:01 dev p1", "'02:00:00:00:01': expected a unicast MAC address", NULL },
	{ "neigh add 224.0.0.5 lladdr 02:00:00:00:01:02 dev p1", "'224.0.0.5': expected a unicast address", NULL },
	{ "neigh add ff02::1 lladdr 02:00:00:00:01:02 dev p1", "'ff02::1': expected a unicast address", NULL },
	{ "neigh add 10.0.1.300 lladdr 02:00:00:00:01:02 dev p1", "'10.0.1.300': expected an IPv4 or IPv6 address", NULL },
	{ "neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev p5", "'p5': no such port", NULL },
	{ "neigh del 10.0.1.2 dev", "nothing after 'dev': expected 'neigh del ADDRESS dev PORT'", NULL },
	{ "neigh del 10.0.1.2 dev p9", "'p9': no such port", NULL },
	{ "neigh flush", "'flush': expected 'add' or 'del' after 'neigh'", NULL },
	{ "neigh ageing 4", "'4': expected seconds from 5 to 86400", NULL },
	{ "neigh ageing 86401", "'86401': expected seconds from 5 to 86400", NULL },
	{ "neigh ageing", "nothing after 'ageing': expected 'neigh ageing SECONDS'", NULL },
	{ "neigh ageing 60 now", "'now': expected 'neigh ageing SECONDS'", NULL },
	/* port */
	{ "port frob", "'frob': expected 'add' or 'set' after 'port'", NULL },
	{ "port set p0 mtu 67", "'67': expected an MTU from 68 to 65535", NULL },
	{ "port set p0 mtu 65536", "'65536': expected an MTU from 68 to 65535", NULL },
	{ "port set p0 mtu big", "'big': expected an MTU", NULL },
	{ "port set p0 mtu", "nothing after 'mtu': expected 'port set NAME mtu N'", NULL },
	{ "port set p9 mtu 1400", "'p9': no such port", NULL },
	{ "port set p0 speed 10", "'speed': expected 'port set NAME mtu N'", NULL },
	{ "port set p0 redirects maybe", "'maybe': expected 'on' or 'off' after 'redirects'", NULL },
	{ "port set p0 ra yes", "'yes': expected 'on' or 'off' after 'ra'", NULL },
	{ "port set p0 host maybe", "'maybe': expected 'port set NAME host on|off [gro on|off] [name TAP]'", NULL },
	{ "port set p0 host on gro maybe", "'gro maybe': expected 'gro on|off' or 'name TAP'", NULL },
	{ "port set p0 host on gro", "'gro': expected a value after it", NULL },
	{ "port set p0 host on name a/b", "'a/b': expected an interface name", NULL },
	{ "port set p9 host on", "'p9': no such port", NULL },
	{ "port set v100 host on", "'v100': no such port (a VLAN sub-port's host path is its port's)", NULL },
	{ "port add p2 nosuch:x=1", "'nosuch:x=1': unknown driver (built in: ", "sim" },
	{ "port add p0 sim", "'p0': port p0 is already defined", NULL },
	{ "port add v100 sim", "'v100': port v100 is already defined", NULL },
	{ "port add bad/name sim", "'bad/name': port name 'bad/name': only letters, digits", NULL },
	{ "port add p2", "", "expected 'port add NAME DRIVER[:key=value,...]'" },
	{ "port add v300 vlan:parent=nosuch,id=3", "'v300': parent=nosuch: no such port", NULL },
	{ "port add v300 vlan:parent=p0,id=100", "'v300': VLAN 100 on p0 is already v100", NULL },
	{ "port add v300 vlan:parent=p0,id=5000", "'v300': ", "id" },
	{ "port add v300 vlan:parent=p0", "'v300': a VLAN sub-port needs parent=PORT and id=1..4094", NULL },
	/* icmp */
	{ "icmp ratelimit fast", "'fast': expected errors per second from 0 to 10000000", NULL },
	{ "icmp ratelimit 10000001", "'10000001': expected errors per second", NULL },
	{ "icmp ratelimit 100 burst 0", "'0': expected a burst from 1 to 10000000", NULL },
	{ "icmp ratelimit 100 bust 7", "'bust': expected 'icmp ratelimit ERRORS_PER_SECOND [burst N]'", NULL },
	{ "icmp limit 100", "'limit': expected 'icmp ratelimit ERRORS_PER_SECOND [burst N]'", NULL },
	{ "icmp ratelimit", "nothing after 'ratelimit': expected", NULL },
	/* ip */
	{ "ip source-route maybe", "'maybe': expected 'ip source-route on|off'", NULL },
	{ "ip forwarding on", "'forwarding': expected 'ip source-route on|off'", NULL },
	{ "ip source-route", "nothing after 'source-route': expected 'ip source-route on|off'", NULL },
	/* sync */
	{ "sync now", "'now': expected 'sync kernel [table N] [interval SECONDS]' or 'sync off'", NULL },
	{ "sync kernel table x", "'x': expected a kernel table number", NULL },
	{ "sync kernel table 0", "'0': expected a kernel table number", NULL },
	{ "sync kernel interval 0", "'0': expected seconds between full resyncs, 1 to 86400", NULL },
	{ "sync kernel every 5", "'every': expected 'table N' or 'interval SECONDS'", NULL },
	{ "sync kernel table", "'table': expected 'table N' or 'interval SECONDS'", NULL },
	{ "sync kernel table 7 every 5", "'every': expected 'table N' or 'interval SECONDS'", NULL },
};

static void test_config_bad_lines(void)
{
	struct dp_config cfg;
	unsigned char sync[sizeof(cfg.sync)];
	char err[ERR_LEN], want[300];

	base_config(&cfg);
	/* something there already, and sync on: a bad line keeps all of it */
	CHECK(good_line(&cfg, "addr add 10.0.1.1/24 dev p0") != NULL);
	CHECK(good_line(&cfg, "sync kernel table 9") == NULL);
	memcpy(sync, &cfg.sync, sizeof(sync));
	for (size_t i = 0; i < RXP_ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *b = &bad_cases[i];
		int ret;

		err[0] = '\0';
		ret = config_apply_line(&cfg, b->line, "-e 1", err, sizeof(err));
		snprintf(want, sizeof(want), "-e 1: %s", b->msg);
		if (ret != -EINVAL || !starts_with(err, want) || (b->also && !strstr(err, b->also)))
			fprintf(stdout, "  \"%s\": %d \"%s\", expected \"%s...\"%s%s\n", b->line, ret,
				err, want, b->also ? " with " : "", b->also ? b->also : "");
		CHECK_EQ(ret, -EINVAL);
		CHECK(starts_with(err, want));
		CHECK(!b->also || strstr(err, b->also));
		CHECK(!strchr(err, '\n'));	/* one line */
		/* unchanged */
		CHECK_EQ(cfg.n_cmds, 1);
		CHECK_EQ(cfg.n_ports, 2);
		CHECK_EQ(cfg.n_vlans, 1);
		CHECK(!memcmp(&cfg.sync, sync, sizeof(sync)));
	}
	CHECK(!dp_config_has_name(&cfg, "p2") && !dp_config_has_name(&cfg, "v300"));
	dp_config_free(&cfg);
}

/* A word after a port's spec, or a line that ends early, as rxpath has always said it. */
static void test_config_port_add_extra_word(void)
{
	struct dp_config cfg;
	char err[ERR_LEN] = "";

	base_config(&cfg);
	CHECK_EQ(config_apply_line(&cfg, "port add p2 sim extra", "-e 1", err, sizeof(err)), -EINVAL);
	CHECK_PREFIX(err, "-e 1: extra: expected 'port add NAME DRIVER[:key=value,...]'");
	CHECK_EQ(config_apply_line(&cfg, "port add p2", "-e 2", err, sizeof(err)), -EINVAL);
	CHECK_PREFIX(err, "-e 2: missing words: expected 'port add NAME DRIVER[:key=value,...]'");
	CHECK_EQ(cfg.n_ports, 2);
	dp_config_free(&cfg);
}

/* ---- config files ---- */

static char tmp_dir[256];

static void make_tmp_dir(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmp_dir, sizeof(tmp_dir), "%s/rxpath-test-ctl-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmp_dir))
		tmp_dir[0] = '\0';
}

/* Writes @len bytes of @text to @name in the scratch directory; returns its path (static). */
static const char *write_file(const char *name, const char *text, size_t len)
{
	static char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return path;
	CHECK_EQ(fwrite(text, 1, len, f), len);
	fclose(f);
	return path;
}

static const char *write_text(const char *name, const char *text)
{
	return write_file(name, text, strlen(text));
}

static void test_config_file(void)
{
	struct dp_config cfg;
	char err[ERR_LEN] = "", want[700];
	const char *path;

	CHECK(tmp_dir[0]);
	dp_config_default(&cfg);
	path = write_text("good.conf",
			  "# a router between two sim ports\r\n"
			  "port add p0 sim:proto=udp4\r\n"
			  "\n"
			  "   port add p1 sim:rx=off   # transmit only\n"
			  "addr add 10.0.1.1/24 dev p1\n"
			  "route add 16.0.0.0/8 via 10.0.1.2\n"
			  "sync kernel interval 10\n"
			  "neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev p1");	/* no last line break */
	CHECK_EQ(config_apply_file(&cfg, path, err, sizeof(err)), 0);
	if (err[0])
		fprintf(stdout, "  %s\n", err);
	CHECK_EQ(cfg.n_ports, 2);
	CHECK_EQ(cfg.n_cmds, 3);
	snprintf(want, sizeof(want), "%s:2", path);
	CHECK_STR(cfg.ports[0].where, want);
	snprintf(want, sizeof(want), "%s:6", path);
	CHECK(cfg.n_cmds == 3 && !strcmp(cfg.cmds[1].where, want));
	CHECK(cfg.n_cmds == 3 && cfg.cmds[2].kind == DP_CMD_NEIGH_ADD);
	CHECK(cfg.sync.on && cfg.sync.interval_ms == 10000);
	dp_config_free(&cfg);

	/* a line of CMD_LINE_MAX - 1 characters and its break: taken */
	{
		char text[CMD_LINE_MAX + 64];

		memset(text, ' ', CMD_LINE_MAX - 1);
		memcpy(text, "#", 1);
		memcpy(text + CMD_LINE_MAX - 1, "\nsync off\n", 11);
		dp_config_default(&cfg);
		path = write_text("longest.conf", text);
		CHECK_EQ(config_apply_file(&cfg, path, err, sizeof(err)), 0);
		dp_config_free(&cfg);
	}
}

static void test_config_file_errors(void)
{
	struct dp_config cfg;
	unsigned char sync[sizeof(cfg.sync)];
	char err[ERR_LEN] = "", want[700], missing[600];
	char text[CMD_LINE_MAX + 64];
	const char *path;

	CHECK(tmp_dir[0]);
	base_config(&cfg);
	CHECK(good_line(&cfg, "addr add 10.0.1.1/24 dev p0") != NULL);
	memcpy(sync, &cfg.sync, sizeof(sync));

	/* a bad line 3: the two before it are taken back, the message names the line */
	path = write_text("bad3.conf",
			  "port add p5 sim\n"
			  "addr add 10.0.5.1/24 dev p5\n"
			  "route add 10.9.0.0/16 vai 10.0.5.2\n"
			  "sync kernel\n");
	CHECK_EQ(config_apply_file(&cfg, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:3: 'vai': expected 'via GATEWAY' or 'dev PORT'", path);
	CHECK_PREFIX(err, want);
	CHECK_EQ(cfg.n_ports, 2);
	CHECK_EQ(cfg.n_vlans, 1);
	CHECK_EQ(cfg.n_cmds, 1);
	CHECK(!dp_config_has_name(&cfg, "p5"));
	CHECK(!memcmp(&cfg.sync, sync, sizeof(sync)));

	/* a VLAN and sync before the bad line: gone too */
	path = write_text("bad_sync.conf",
			  "port add v7 vlan:parent=p1,id=7\n"
			  "sync kernel table 7\n"
			  "# comment\n"
			  "\n"
			  "sync kernel interval 0\n");
	CHECK_EQ(config_apply_file(&cfg, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:5: '0': expected seconds", path);
	CHECK_PREFIX(err, want);
	CHECK_EQ(cfg.n_vlans, 1);
	CHECK(!cfg.sync.on);
	CHECK(!memcmp(&cfg.sync, sync, sizeof(sync)));

	/* a missing file */
	snprintf(missing, sizeof(missing), "%s/nosuch.conf", tmp_dir);
	CHECK_EQ(config_apply_file(&cfg, missing, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "cannot read config file '%s': ", missing);
	CHECK_PREFIX(err, want);

	/* not a text file */
	path = write_file("nul.conf", "sync off\nport add p7\0 sim\n", 26);
	CHECK_EQ(config_apply_file(&cfg, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: a NUL byte", path);
	CHECK_PREFIX(err, want);
	CHECK_EQ(cfg.n_ports, 2);

	/* a line too long, taken for none of its parts */
	memset(text, 'x', sizeof(text));
	memcpy(text, "sync off\nport add p8 sim\n#", 26);
	memcpy(text + sizeof(text) - 2, "\n", 2);
	path = write_text("long.conf", text);
	CHECK_EQ(config_apply_file(&cfg, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:3: line longer than 4095 characters", path);
	CHECK_PREFIX(err, want);
	CHECK_EQ(cfg.n_ports, 2);

	/* a directory is no config file: an error, not a hang */
	CHECK(config_apply_file(&cfg, tmp_dir, err, sizeof(err)) < 0);
	CHECK_EQ(cfg.n_ports, 2);
	CHECK_EQ(cfg.n_cmds, 1);
	dp_config_free(&cfg);
}

/* A path longer than a where holds: the message keeps its end, the line number with it. */
static void test_config_file_long_path(void)
{
	struct dp_config cfg;
	char dir[600], err[ERR_LEN] = "";
	char path[700];
	FILE *f;

	CHECK(tmp_dir[0]);
	snprintf(dir, sizeof(dir), "%s/a-directory-whose-name-is-long-enough-to-overflow-a-where-"
		 "of-ninety-six-characters", tmp_dir);
	CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/router.conf", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("port add p0 sim\n\nroute add 10.9.0.0/16 vai 10.0.5.2\n", f);
	fclose(f);
	dp_config_default(&cfg);
	/* the whole path, as a where of 96 characters would not have held it */
	CHECK_EQ(config_apply_file(&cfg, path, err, sizeof(err)), -EINVAL);
	CHECK_PREFIX(err, dir);
	CHECK_HAS(err, "-characters/router.conf:3: 'vai': expected");
	CHECK_EQ(cfg.n_ports, 0);
	dp_config_free(&cfg);
	unlink(path);
	rmdir(dir);
}

/* ---- reload ---- */

/* A config of @lines, as a file would give it (where "f:N"). */
static void build(struct dp_config *cfg, const char *const *lines)
{
	char err[ERR_LEN], where[32];

	dp_config_default(cfg);
	for (unsigned i = 0; lines[i]; i++) {
		int ret;

		snprintf(where, sizeof(where), "f:%u", i + 1);
		ret = config_apply_line(cfg, lines[i], where, err, sizeof(err));
		if (ret)
			fprintf(stdout, "  %s\n", err);
		CHECK_EQ(ret, 0);
	}
}

#define PORTS "port add p0 sim:rx=off", "port add p1 sim:rx=off"

/* The diff of two configs; its count, the commands in *@out. */
static long diff_of(const char *const *a, const char *const *b, struct dp_cmd **out)
{
	struct dp_config old, new;
	long n;

	build(&old, a);
	build(&new, b);
	*out = NULL;
	n = reload_diff(&old, &new, out);
	CHECK(n >= 0);
	dp_config_free(&old);
	dp_config_free(&new);
	return n;
}

static void test_reload_same(void)
{
	static const char *const a[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev p1",
		"route add 16.0.0.0/8 via 10.0.1.2", "port set p1 mtu 1400", "icmp ratelimit 10",
		NULL };
	/* the same, in another order, with comments and blank lines: other wheres */
	static const char *const b[] = { PORTS, "# reordered", "icmp ratelimit 10",
		"route add 16.0.0.0/8 via 10.0.1.2", "", "port set p1 mtu 1400",
		"addr add 10.0.1.1/24 dev p1",
		"neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev p1", NULL };
	/* what is added and deleted again is not there */
	static const char *const c[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev p1",
		"route add 16.0.0.0/8 via 10.0.1.2", "route add 17.0.0.0/8 via 10.0.1.2",
		"port set p1 mtu 1400", "icmp ratelimit 10", "route del 17.0.0.0/8", NULL };
	/* the last says what stays */
	static const char *const d[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev p1",
		"route add 16.0.0.0/8 via 10.0.1.3", "route add 16.0.0.0/8 via 10.0.1.2",
		"port set p1 mtu 9000", "port set p1 mtu 1400", "icmp ratelimit 10", NULL };
	static const char *const none[] = { PORTS, NULL };
	struct dp_cmd *out;

	CHECK_EQ(diff_of(a, a, &out), 0);
	free(out);
	CHECK_EQ(diff_of(a, b, &out), 0);
	free(out);
	CHECK_EQ(diff_of(a, c, &out), 0);
	free(out);
	CHECK_EQ(diff_of(a, d, &out), 0);
	free(out);
	CHECK_EQ(diff_of(none, none, &out), 0);
	free(out);
}

/* VRFs in a reload: made before the ports moved into them and their addresses, gone after both. */
static void test_reload_vrfs(void)
{
	static const char *const plain[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"route add 16.0.0.0/8 via 10.0.1.2", NULL };
	static const char *const vrf[] = { PORTS, "vrf add red table 10", "port set p1 vrf red",
		"addr add 10.0.1.1/24 dev p1", "route add 16.0.0.0/8 vrf red via 10.0.1.2", NULL };
	static const char *const multipath[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"route add 16.0.0.0/8 nexthop via 10.0.1.2 nexthop via 10.0.1.3", NULL };
	static const char *const weighted[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"route add 16.0.0.0/8 nexthop via 10.0.1.2 nexthop via 10.0.1.3 weight 2", NULL };
	struct dp_cmd *out;
	long n;

	/* into the VRF: the address and route of the default table go, then VRF, port, address, route */
	n = diff_of(plain, vrf, &out);
	CHECK_EQ(n, 6);
	if (n == 6) {
		CHECK(out[0].kind == DP_CMD_ROUTE_DEL && !out[0].vrf[0]);
		CHECK(out[1].kind == DP_CMD_ADDR_DEL);
		CHECK(out[2].kind == DP_CMD_VRF_ADD && !strcmp(out[2].vrf, "red") && out[2].table == 10);
		CHECK(out[3].kind == DP_CMD_PORT_VRF && !strcmp(out[3].vrf, "red"));
		CHECK(out[4].kind == DP_CMD_ADDR_ADD);
		CHECK(out[5].kind == DP_CMD_ROUTE_ADD && !strcmp(out[5].vrf, "red"));
	}
	free(out);
	/* and back: the port to the default table before its address there, the VRF deleted last */
	n = diff_of(vrf, plain, &out);
	CHECK_EQ(n, 6);
	if (n == 6) {
		CHECK(out[0].kind == DP_CMD_ROUTE_DEL && !strcmp(out[0].vrf, "red"));
		CHECK(out[1].kind == DP_CMD_ADDR_DEL);
		CHECK(out[2].kind == DP_CMD_PORT_VRF && !out[2].vrf[0]);
		CHECK(out[3].kind == DP_CMD_ADDR_ADD);
		CHECK(out[4].kind == DP_CMD_ROUTE_ADD && !out[4].vrf[0]);
		CHECK(out[5].kind == DP_CMD_VRF_DEL && !strcmp(out[5].vrf, "red"));
	}
	free(out);
	/* a multipath route whose weights changed is a change; the same one again is none */
	n = diff_of(multipath, weighted, &out);
	CHECK_EQ(n, 1);
	if (n == 1)
		CHECK(out[0].kind == DP_CMD_ROUTE_ADD && out[0].paths.n == 2 && out[0].paths.path[1].weight == 2);
	free(out);
	CHECK_EQ(diff_of(weighted, weighted, &out), 0);
	free(out);
}

static void test_reload_routes(void)
{
	static const char *const a[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"route add 16.0.0.0/8 via 10.0.1.2", "route add 17.0.0.0/8 via 10.0.1.2 dev p1",
		NULL };
	static const char *const removed_added[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"route add 16.0.0.0/8 via 10.0.1.2", "route add 18.0.0.0/8 blackhole", NULL };
	static const char *const changed[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"route add 16.0.0.0/8 via 10.0.1.3", "route add 17.0.0.0/8 via 10.0.1.2 dev p1",
		NULL };
	static const char *const deleted[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"route add 16.0.0.0/8 via 10.0.1.2", "route add 17.0.0.0/8 via 10.0.1.2 dev p1",
		"route del 17.0.0.0/8", NULL };
	struct dp_cmd *out;
	long n;

	/* gone from the file: deleted first; new in it: added after */
	n = diff_of(a, removed_added, &out);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK(out[0].kind == DP_CMD_ROUTE_DEL && out[0].plen == 8 && out[0].addr[0] == 17);
		CHECK(out[0].undo);
		CHECK(!out[0].dev[0]);	/* the prefix, whatever it holds */
		CHECK_STR(out[0].where, "reload (was f:5)");	/* the line that said it */
		CHECK(out[1].kind == DP_CMD_ROUTE_ADD && out[1].addr[0] == 18 &&
		      out[1].route_type == RXP_NH_KIND_BLACKHOLE && !out[1].undo);
	}
	free(out);

	/* a route changed in the file: the change, and nothing else */
	n = diff_of(a, changed, &out);
	CHECK_EQ(n, 1);
	if (n == 1) {
		uint8_t gw[4] = { 10, 0, 1, 3 };

		CHECK(out[0].kind == DP_CMD_ROUTE_ADD && out[0].addr[0] == 16);
		CHECK(out[0].has_gw && !memcmp(out[0].gw, gw, 4));
		CHECK_STR(out[0].where, "f:4");
	}
	free(out);

	/* the other way: the route it had again */
	n = diff_of(changed, a, &out);
	CHECK_EQ(n, 1);
	CHECK(n == 1 && out[0].kind == DP_CMD_ROUTE_ADD && out[0].gw[3] == 2);
	free(out);

	/* deleted by a later line of the file */
	n = diff_of(a, deleted, &out);
	CHECK_EQ(n, 1);
	CHECK(n == 1 && out[0].kind == DP_CMD_ROUTE_DEL && out[0].addr[0] == 17 && out[0].undo);
	free(out);
}

static void test_reload_addr_neigh(void)
{
	static const char *const a[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev p1", NULL };
	static const char *const b[] = { PORTS, "addr add 10.0.1.1/25 dev p1",
		"neigh add 10.0.1.2 lladdr 02:00:00:00:01:03 dev p1", NULL };
	static const char *const moved[] = { PORTS, "addr add 10.0.1.1/24 dev p0",
		"neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev p1", NULL };
	struct dp_cmd *out;
	long n;

	/* an address with a new length goes first; a neighbour's new MAC replaces */
	n = diff_of(a, b, &out);
	CHECK_EQ(n, 3);
	if (n == 3) {
		CHECK(out[0].kind == DP_CMD_ADDR_DEL && out[0].undo && out[0].plen == 24);
		CHECK(out[1].kind == DP_CMD_ADDR_ADD && out[1].plen == 25);
		CHECK(out[2].kind == DP_CMD_NEIGH_ADD && out[2].mac[5] == 3);
	}
	free(out);

	/* an address on another port: a thing of its own, deleted and added */
	n = diff_of(a, moved, &out);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK(out[0].kind == DP_CMD_ADDR_DEL && !strcmp(out[0].dev, "p1"));
		CHECK(out[1].kind == DP_CMD_ADDR_ADD && !strcmp(out[1].dev, "p0"));
	}
	free(out);
}

/* NAT's rules are a list: a change flushes it and adds the file's in order; its settings go back to defaults. */
static void test_reload_nat(void)
{
	static const char *const a[] = { PORTS, "nat add masquerade out p1", "nat timeout udp 600",
		"nat filtering endpoint-independent", NULL };
	static const char *const same[] = { PORTS, "nat add masquerade out p1", "nat timeout udp 600",
		"nat filtering endpoint-independent", NULL };
	static const char *const more[] = { PORTS, "nat add masquerade out p1",
		"nat add dnat in p1 proto tcp dport 80 to 10.0.0.5", NULL };
	struct dp_cmd *out;
	long n;

	CHECK_EQ(diff_of(a, same, &out), 0);
	free(out);
	n = diff_of(a, more, &out);
	CHECK_EQ(n, 5);	/* the timeout and filtering back to defaults, a flush, the two rules */
	for (long i = 0, rules = 0; i < n; i++) {
		const struct dp_cmd *c = &out[i];

		if (c->kind == DP_CMD_NAT_TIMEOUT)
			CHECK_EQ(c->seconds, 300);
		else if (c->kind == DP_CMD_NAT_FILTERING)
			CHECK_EQ(c->nat.kind, 0);
		else if (c->kind == DP_CMD_NAT_FLUSH)
			CHECK_EQ(rules, 0);
		else if (c->kind == DP_CMD_NAT_ADD && rules++)
			CHECK_STR(c->nat.text, "dnat in p1 proto tcp dport 80 to 10.0.0.5");
		else if (c->kind == DP_CMD_NAT_ADD)
			CHECK_STR(c->nat.text, "masquerade out p1");
		else
			CHECK(false);
	}
	free(out);
}

static void test_reload_settings(void)
{
	static const char *const a[] = { PORTS, "port set p1 mtu 1400", "icmp ratelimit 10",
		"port set p0 redirects off", "ip source-route off", "neigh ageing 60",
		"port set p1 ra on", NULL };
	static const char *const none[] = { PORTS, NULL };
	static const char *const changed[] = { PORTS, "port set p1 mtu 1500", "icmp ratelimit 10",
		"port set p0 redirects off", "ip source-route off", "neigh ageing 60",
		"port set p1 ra on", NULL };
	struct dp_cmd *out;
	long n;
	bool seen[DP_CMD_KINDS] = { false };

	/* each setting gone from the file: back to its default */
	n = diff_of(a, none, &out);
	CHECK_EQ(n, 6);
	for (long i = 0; i < n; i++) {
		const struct dp_cmd *c = &out[i];

		seen[c->kind] = true;
		CHECK_PREFIX(c->where, "reload (was f:");
		switch (c->kind) {
		case DP_CMD_MTU:
			CHECK(c->mtu == 0 && !strcmp(c->dev, "p1"));
			break;
		case DP_CMD_ICMP_RATE:
			CHECK(c->rate == RXP_ICMP_RATE_DEFAULT && c->burst == RXP_ICMP_BURST_DEFAULT);
			break;
		case DP_CMD_REDIRECTS:
			CHECK(c->redirects && !strcmp(c->dev, "p0"));
			break;
		case DP_CMD_SOURCE_ROUTE:
			CHECK(c->source_route);
			break;
		case DP_CMD_NEIGH_AGEING:
			CHECK_EQ(c->seconds, RXP_NEIGH_REACHABLE_NS / 1000000000ull);
			break;
		case DP_CMD_RA:
			CHECK(!c->ra_on && !strcmp(c->dev, "p1"));
			break;
		default:
			CHECK(!"a setting's default only");
		}
	}
	CHECK(seen[DP_CMD_MTU] && seen[DP_CMD_ICMP_RATE] && seen[DP_CMD_REDIRECTS] &&
	      seen[DP_CMD_SOURCE_ROUTE] && seen[DP_CMD_NEIGH_AGEING] && seen[DP_CMD_RA]);
	free(out);

	/* one changed: that one */
	n = diff_of(a, changed, &out);
	CHECK_EQ(n, 1);
	CHECK(n == 1 && out[0].kind == DP_CMD_MTU && out[0].mtu == 1500);
	free(out);
}

/* Deletions first (routes, then neighbours, then addresses); then additions, addresses before the routes that need them. */
static void test_reload_order(void)
{
	static const char *const a[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"addr add 10.0.2.1/24 dev p1", "neigh add 10.0.2.2 lladdr 02:00:00:00:02:02 dev p1",
		"route add 17.0.0.0/8 via 10.0.2.2", NULL };
	static const char *const b[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"route add 18.0.0.0/8 via 10.0.4.2", "port set p0 redirects off",
		"port set p1 ra on", "neigh add 10.0.4.2 lladdr 02:00:00:00:04:02 dev p1",
		"addr add 10.0.4.1/24 dev p1", "port set p1 mtu 1400", NULL };
	static const enum dp_cmd_kind want[] = { DP_CMD_ROUTE_DEL, DP_CMD_NEIGH_DEL, DP_CMD_ADDR_DEL,
		DP_CMD_MTU, DP_CMD_ADDR_ADD, DP_CMD_NEIGH_ADD, DP_CMD_ROUTE_ADD, DP_CMD_REDIRECTS,
		DP_CMD_RA };
	struct dp_cmd *out;
	long n = diff_of(a, b, &out);

	CHECK_EQ(n, RXP_ARRAY_SIZE(want));
	for (long i = 0; i < n && i < (long)RXP_ARRAY_SIZE(want); i++) {
		if (out[i].kind != want[i])
			fprintf(stdout, "  command %ld: kind %d, expected %d\n", i, out[i].kind, want[i]);
		CHECK_EQ(out[i].kind, want[i]);
	}
	free(out);
}

static void test_reload_same_ports(void)
{
	static const char *const a[] = { PORTS, "port add v1 vlan:parent=p0,id=1",
		"addr add 10.0.1.1/24 dev p1", NULL };
	static const char *const routes_differ[] = { PORTS, "port add v1 vlan:parent=p0,id=1",
		"route add 10.9.0.0/16 dev p0", NULL };
	static const char *const spec_differs[] = { "port add p0 sim:rx=off",
		"port add p1 sim:rx=off,queues=2", "port add v1 vlan:parent=p0,id=1", NULL };
	static const char *const more[] = { PORTS, "port add p2 sim",
		"port add v1 vlan:parent=p0,id=1", NULL };
	static const char *const vlan_differs[] = { PORTS, "port add v1 vlan:parent=p0,id=2", NULL };
	static const char *const vlan_gone[] = { PORTS, NULL };
	struct dp_config x, y;

#define SAME_PORTS(p, q, yes) do { \
	build(&x, p); \
	build(&y, q); \
	CHECK(reload_same_ports(&x, &y) == (yes)); \
	CHECK(reload_same_ports(&y, &x) == (yes)); \
	dp_config_free(&x); \
	dp_config_free(&y); \
} while (0)
	SAME_PORTS(a, a, true);
	SAME_PORTS(a, routes_differ, true);
	SAME_PORTS(a, spec_differs, false);
	SAME_PORTS(a, more, false);
	SAME_PORTS(a, vlan_differs, false);
	SAME_PORTS(a, vlan_gone, false);
#undef SAME_PORTS
}

/* ---- reload's diff on a running datapath ---- */

struct lines {
	unsigned n;
	char l[512][160];
};

static int line_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The router's addresses, routes, neighbours and settings as sorted lines. */
static void router_lines(struct dp *dp, struct lines *s)
{
	const struct rxp_router *r = dp->router;
	char a[INET6_ADDRSTRLEN], g[INET6_ADDRSTRLEN];
	double rate, burst;

	s->n = 0;
#define LINE(...) do { \
	if (s->n < RXP_ARRAY_SIZE(s->l)) \
		snprintf(s->l[s->n++], sizeof(s->l[0]), __VA_ARGS__); \
} while (0)
	rxp_stack_icmp_rate(&dp->stack, &rate, &burst);
	LINE("icmp %.3f %.3f", rate, burst);
	LINE("ageing %llu source-route %d", (unsigned long long)r->neigh_reachable_ns,
	     !r->no_source_route);
	for (unsigned i = 0; i < r->n_ifs; i++) {
		const struct rxp_l3if *ifp = &r->ifs[i];

		LINE("if %s mtu %u redirects %d ra %d", ifp->name, ifp->mtu, !ifp->no_redirects,
		     ifp->ra);
		for (unsigned k = 0; k < ifp->n_addr4; k++)
			LINE("addr %s %s/%u", ifp->name, inet_ntop(AF_INET, &ifp->addr4[k], a, sizeof(a)),
			     ifp->plen4[k]);
		for (unsigned k = 0; k < ifp->n_addr6; k++)
			LINE("addr %s %s/%u", ifp->name, inet_ntop(AF_INET6, ifp->addr6[k], a, sizeof(a)),
			     ifp->plen6[k]);
	}
	for (uint32_t i = 0; i < r->routes_size; i++) {
		const struct rxp_route *rt = &r->routes[i];
		const struct rxp_nexthop *nh = &r->nh[rt->nh];
		int af = rt->family == 4 ? AF_INET : AF_INET6;

		if (!rt->family)
			continue;
		LINE("route %s/%u kind %u gw %s if %u parked %d", inet_ntop(af, rt->prefix, a, sizeof(a)),
		     rt->plen, nh->kind, nh->kind == RXP_NH_KIND_GATEWAY ?
		     inet_ntop(af, nh->gw, g, sizeof(g)) : "-",
		     rxp_nh_kind_rejects(nh->kind) ? 0 : nh->ifidx, rt->parked);
	}
	for (uint32_t i = 0; i < r->neigh.size; i++) {
		const struct rxp_neigh *n = &r->neigh.slots[i];

		if (n->state == RXP_NEIGH_FREE)
			continue;
		LINE("neigh %u %s %02x:%02x:%02x:%02x:%02x:%02x state %u", n->ifidx,
		     inet_ntop(n->family == 4 ? AF_INET : AF_INET6, n->addr, a, sizeof(a)),
		     n->mac[0], n->mac[1], n->mac[2], n->mac[3], n->mac[4], n->mac[5], n->state);
	}
#undef LINE
	qsort(s->l, s->n, sizeof(s->l[0]), line_cmp);
}

/* True when @x and @y are the same; else, if @say, shows where they part. */
static bool lines_same(const struct lines *x, const struct lines *y, bool say)
{
	bool same = x->n == y->n;

	for (unsigned i = 0; i < x->n || i < y->n; i++) {
		const char *a = i < x->n ? x->l[i] : "", *b = i < y->n ? y->l[i] : "";

		if (strcmp(a, b)) {
			if (say)
				fprintf(stdout, "  reloaded \"%s\", fresh \"%s\"\n", a, b);
			same = false;
			break;
		}
	}
	return same;
}

static void test_reload_applied(void)
{
	static const char *const a[] = { PORTS, "addr add 10.0.1.1/24 dev p1",
		"addr add 10.0.2.1/24 dev p1", "addr add 2001:db8:1::1/64 dev p1",
		"neigh add 10.0.1.2 lladdr 02:00:00:00:01:02 dev p1",
		"route add 16.0.0.0/8 via 10.0.1.2", "route add 17.0.0.0/8 via 10.0.2.2",
		"route add 2001:db8:9::/48 via 2001:db8:1::2", "port set p1 mtu 1400",
		"icmp ratelimit 100", "ip source-route off", NULL };
	static const char *const b[] = { PORTS, "addr add 10.0.1.1/25 dev p1",
		"addr add 10.0.4.1/24 dev p0", "addr add 2001:db8:1::1/64 dev p1",
		"neigh add 10.0.1.2 lladdr 02:00:00:00:01:03 dev p1",
		"route add 16.0.0.0/8 via 10.0.1.3", "route add 18.0.0.0/8 via 10.0.4.2",
		"route add 10.66.0.0/16 blackhole", "port set p0 redirects off",
		"port set p0 mtu 1300", "neigh ageing 90", NULL };
	struct dp_config old, new, fresh_cfg;
	struct dp dp, fresh;
	struct dp_cmd *diff = NULL;
	struct rxp_sbuf errors = { 0 };
	struct dp_batch w = { .all_or_nothing = true, .errors = &errors };
	static struct lines before, after, want;
	char err[ERR_LEN] = "";
	long n;

	build(&old, a);
	build(&new, b);
	build(&fresh_cfg, b);
	n = reload_diff(&old, &new, &diff);
	CHECK(n > 0);
	CHECK_EQ(dp_open(&dp, &old, err, sizeof(err)), 0);
	CHECK_EQ(dp_open(&fresh, &fresh_cfg, err, sizeof(err)), 0);
	if (err[0])
		fprintf(stdout, "  %s\n", err);
	router_lines(&dp, &before);
	router_lines(&fresh, &want);
	CHECK(!lines_same(&before, &want, false));	/* the two configs differ */
	w.cmds = diff;
	w.n_cmds = (unsigned)(n > 0 ? n : 0);
	CHECK_EQ(dp_batch_apply(&dp, &w, NULL), 0);
	if (errors.data)
		fprintf(stdout, "  %s", errors.data);
	CHECK_EQ(w.failed, 0);
	CHECK_EQ(w.applied, w.n_cmds);
	router_lines(&dp, &after);
	CHECK(lines_same(&after, &want, true));

	/* and back: the diff the other way gives the old state again */
	free(diff);
	n = reload_diff(&new, &old, &diff);
	CHECK(n > 0);
	w = (struct dp_batch){ .cmds = diff, .n_cmds = (unsigned)(n > 0 ? n : 0),
			       .all_or_nothing = true, .errors = &errors };
	CHECK_EQ(dp_batch_apply(&dp, &w, NULL), 0);
	if (errors.data)
		fprintf(stdout, "  %s", errors.data);
	router_lines(&dp, &after);
	CHECK(lines_same(&after, &before, true));
	CHECK_EQ(dp_close(&dp), 0);
	CHECK_EQ(dp_close(&fresh), 0);
	free(diff);
	rxp_sbuf_free(&errors);
	dp_config_free(&old);
	dp_config_free(&new);
	dp_config_free(&fresh_cfg);
}

int main(void)
{
	make_tmp_dir();
	RUN(test_split_words);
	RUN(test_split_errors);
	RUN(test_split_rest_word);
	RUN(test_err_format);
	RUN(test_misfit);
	RUN(test_verbs);
	RUN(test_config_good_lines);
	RUN(test_config_bad_lines);
	RUN(test_config_port_add_extra_word);
	RUN(test_config_file);
	RUN(test_config_file_errors);
	RUN(test_config_file_long_path);
	RUN(test_reload_same);
	RUN(test_reload_routes);
	RUN(test_reload_vrfs);
	RUN(test_reload_addr_neigh);
	RUN(test_reload_settings);
	RUN(test_reload_nat);
	RUN(test_reload_order);
	RUN(test_reload_same_ports);
	RUN(test_reload_applied);
	if (tmp_dir[0]) {
		static const char *const files[] = { "good.conf", "longest.conf", "bad3.conf",
			"bad_sync.conf", "nul.conf", "long.conf" };
		char path[600];

		for (size_t i = 0; i < RXP_ARRAY_SIZE(files); i++) {
			snprintf(path, sizeof(path), "%s/%s", tmp_dir, files[i]);
			unlink(path);
		}
		rmdir(tmp_dir);
	}
	return tests_done();
}
