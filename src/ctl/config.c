/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "rxpath/proto.h"

#define WORDS_MAX 12
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

/*
 * Keeps @where ("FILE:LINE", "-e N") for later messages; when it does not
 * fit, its end does, the line number with it: "...ong/dir/router.conf:12".
 */
static void set_where(char *dst, size_t len, const char *where)
{
	size_t n = strlen(where);

	if (n < len)
		memcpy(dst, where, n + 1);
	else
		snprintf(dst, len, "...%s", where + n - (len - 4));
}

/* Parses an IPv4 or IPv6 address; returns its family (4 or 6) or 0. */
static int parse_addr(const char *text, uint8_t out[16])
{
	memset(out, 0, 16);
	if (strchr(text, ':'))
		return inet_pton(AF_INET6, text, out) == 1 ? 6 : 0;
	return inet_pton(AF_INET, text, out) == 1 ? 4 : 0;
}

/* Parses "ADDR/LEN" (a bare address means a host prefix). Returns the family or 0. */
static int parse_prefix(const char *text, uint8_t out[16], uint8_t *plen)
{
	char buf[64];
	const char *slash = strchr(text, '/');
	size_t alen = slash ? (size_t)(slash - text) : strlen(text);
	uint64_t len;
	int family;

	if (alen >= sizeof(buf))
		return 0;
	memcpy(buf, text, alen);
	buf[alen] = '\0';
	family = parse_addr(buf, out);
	if (!family)
		return 0;
	if (!slash) {
		*plen = family == 4 ? 32 : 128;
		return family;
	}
	if (rxp_parse_u64(slash + 1, 0, family == 4 ? 32 : 128, &len))
		return 0;
	*plen = (uint8_t)len;
	return family;
}

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -EINVAL; } while (0)

struct misfit {
	char text[96];
};

/* True when @word is one of the '|'-separated words of @alts. */
static bool one_of(const char *word, const char *alts)
{
	size_t len = strlen(word);

	for (const char *a = alts; a; a = strchr(a, '|') ? strchr(a, '|') + 1 : NULL)
		if (!strncmp(a, word, len) && (a[len] == '|' || a[len] == '\0'))
			return true;
	return false;
}

/*
 * Names the first word of @w that does not fit @pattern, for a message:
 * "'lladr'", "'extra'" after the last word it has room for, or "nothing
 * after 'dev'" when the line ends early. In @pattern an upper-case word
 * stands for any word and "on|off" for either.
 */
static struct misfit misfit(char **w, int n, const char *pattern)
{
	struct misfit m = { "" };
	char pat[128], *save, *tok;
	int i = 0;

	snprintf(pat, sizeof(pat), "%s", pattern);
	for (tok = strtok_r(pat, " ", &save); tok; tok = strtok_r(NULL, " ", &save), i++) {
		if (i >= n) {
			snprintf(m.text, sizeof(m.text), "nothing after '%.64s'", w[n - 1]);
			return m;
		}
		if (!(tok[0] >= 'A' && tok[0] <= 'Z') && !one_of(w[i], tok))
			break;
	}
	if (i < n)
		snprintf(m.text, sizeof(m.text), "'%.64s'", w[i]);
	return m;
}

/* Returns 1 for "on", 0 for "off", -1 for anything else. */
static int on_off(const char *word)
{
	return !strcmp(word, "on") ? 1 : !strcmp(word, "off") ? 0 : -1;
}

/* "port set NAME host on|off [gro on|off] [name TAP]": the port's host path (TAP) */
static int cmd_port_host(struct dp_config *cfg, char **w, int n, const char *where, char *err,
			 size_t errlen)
{
	struct dp_cmd c = { .kind = DP_CMD_HOST, .host_gro = true };
	bool is_port = false;
	int on;

	for (unsigned i = 0; i < cfg->n_ports; i++)
		is_port |= !strcmp(cfg->ports[i].name, w[2]);
	if (!is_port)
		BAD("%s: '%s': no such port%s", where, w[2],
		    dp_config_has_name(cfg, w[2]) ? " (a VLAN sub-port's host path is its port's)" : "");
	if (n < 5 || (on = on_off(w[4])) < 0)
		BAD("%s: '%s': expected 'port set NAME host on|off [gro on|off] [name TAP]'", where,
		    n < 5 ? "" : w[4]);
	c.host_on = on;
	for (int i = 5; i < n; i += 2) {
		if (i + 1 == n)
			BAD("%s: '%s': expected a value after it", where, w[i]);
		if (!strcmp(w[i], "gro") && (on = on_off(w[i + 1])) >= 0) {
			c.host_gro = on;
		} else if (!strcmp(w[i], "name")) {
			const char *t = w[i + 1];

			if (!t[0] || strlen(t) >= sizeof(c.host_name) || strpbrk(t, "/:") ||
			    !strcmp(t, ".") || !strcmp(t, ".."))
				BAD("%s: '%s': expected an interface name of 1 to %zu characters, without '/' or ':'",
				    where, t, sizeof(c.host_name) - 1);
			snprintf(c.host_name, sizeof(c.host_name), "%s", t);
		} else {
			BAD("%s: '%s %s': expected 'gro on|off' or 'name TAP'", where, w[i], w[i + 1]);
		}
	}
	snprintf(c.dev, sizeof(c.dev), "%s", w[2]);
	set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* "port add NAME SPEC", "port set NAME mtu N|redirects on|off|ra on|off" and "port set NAME host ..." */
static int cmd_port(struct dp_config *cfg, char **w, int n, const char *where, char *err,
		    size_t errlen)
{
	char perr[RXP_ERR_LEN];
	unsigned n_ports;

	if (n >= 2 && !strcmp(w[1], "set")) {
		struct dp_cmd c = { .kind = DP_CMD_MTU };
		uint64_t mtu;

		if (n >= 4 && !strcmp(w[3], "host"))
			return cmd_port_host(cfg, w, n, where, err, errlen);
		if (n != 5 || (strcmp(w[3], "mtu") && strcmp(w[3], "redirects") && strcmp(w[3], "ra")))
			BAD("%s: %s: expected 'port set NAME mtu N', 'port set NAME redirects|ra on|off' or "
			    "'port set NAME host on|off [gro on|off] [name TAP]'", where,
			    misfit(w, n, n >= 4 && !strcmp(w[3], "mtu") ? "port set NAME mtu N" :
					 "port set NAME mtu|redirects|ra|host on|off").text);
		if (!dp_config_has_name(cfg, w[2]))
			BAD("%s: '%s': no such port", where, w[2]);
		if (strcmp(w[3], "mtu")) {
			if (strcmp(w[4], "on") && strcmp(w[4], "off"))
				BAD("%s: '%s': expected 'on' or 'off' after '%s'", where, w[4], w[3]);
			c.kind = !strcmp(w[3], "ra") ? DP_CMD_RA : DP_CMD_REDIRECTS;
			c.redirects = c.ra_on = !strcmp(w[4], "on");
		} else {
			if (rxp_parse_u64(w[4], 68, 65535, &mtu))
				BAD("%s: '%s': expected an MTU from 68 to 65535", where, w[4]);
			c.mtu = (uint32_t)mtu;
		}
		snprintf(c.dev, sizeof(c.dev), "%s", w[2]);
		set_where(c.where, sizeof(c.where), where);
		return dp_config_add_cmd(cfg, &c);
	}
	if (n < 2 || strcmp(w[1], "add"))
		BAD("%s: '%s': expected 'add' or 'set' after 'port'", where, n < 2 ? "" : w[1]);
	if (n != 4)
		BAD("%s: %s: expected 'port add NAME DRIVER[:key=value,...]'", where,
		    n < 4 ? "missing words" : w[4]);
	if (strcmp(w[3], "vlan") && strncmp(w[3], "vlan:", 5) &&
	    !rxp_port_driver(strndupa(w[3], strcspn(w[3], ":"))))
		BAD("%s: '%s': unknown driver (built in: %s, vlan)", where, w[3], rxp_port_drivers());
	n_ports = cfg->n_ports;
	if (dp_config_add_port(cfg, w[2], w[3], perr, sizeof(perr)))
		BAD("%s: '%s': %s", where, w[2], perr);
	if (cfg->n_ports > n_ports)	/* driver arguments are checked when the port opens */
		set_where(cfg->ports[n_ports].where, sizeof(cfg->ports[n_ports].where), where);
	return 0;
}

/* "addr add A/L dev NAME" */
static int cmd_addr(struct dp_config *cfg, char **w, int n, const char *where, char *err,
		    size_t errlen)
{
	struct dp_cmd c = { .kind = DP_CMD_ADDR_ADD };

	if (n < 2 || (strcmp(w[1], "add") && strcmp(w[1], "del")))
		BAD("%s: '%s': expected 'add' or 'del' after 'addr'", where, n < 2 ? "" : w[1]);
	if (n != 5 || strcmp(w[3], "dev"))
		BAD("%s: %s: expected 'addr %s ADDRESS/LENGTH dev PORT'", where,
		    misfit(w, n, "addr add|del ADDRESS dev PORT").text, w[1]);
	if (!strcmp(w[1], "del"))
		c.kind = DP_CMD_ADDR_DEL;	/* the length is optional: the address names the entry */
	c.family = (uint8_t)parse_prefix(w[2], c.addr, &c.plen);
	if (!c.family)
		BAD("%s: '%s': expected an address with a prefix length, like 10.0.1.1/24 or 2001:db8::1/64", where, w[2]);
	if (!dp_config_has_name(cfg, w[4]))
		BAD("%s: '%s': no such port", where, w[4]);
	snprintf(c.dev, sizeof(c.dev), "%s", w[4]);
	set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* "route add|del P/L|default [via GW] [dev NAME]": a del with them deletes only a route that has them */
static int cmd_route(struct dp_config *cfg, char **w, int n, const char *where, char *err,
		     size_t errlen)
{
	struct dp_cmd c = { 0 };
	int i;

	if (n < 3 || (strcmp(w[1], "add") && strcmp(w[1], "del")))
		BAD("%s: '%s': expected 'route add PREFIX via GATEWAY|dev PORT' or 'route del PREFIX [via GATEWAY] [dev PORT]'",
		    where, n < 2 ? "" : w[1]);
	c.kind = !strcmp(w[1], "add") ? DP_CMD_ROUTE_ADD : DP_CMD_ROUTE_DEL;
	/* "default", as ip route says it: IPv4's, or IPv6's when the gateway is an IPv6 address */
	if (!strcmp(w[2], "default")) {
		bool v6 = false;

		for (i = 3; i + 1 < n; i++)
			v6 |= !strcmp(w[i], "via") && strchr(w[i + 1], ':');
		c.family = (uint8_t)parse_prefix(v6 ? "::/0" : "0.0.0.0/0", c.addr, &c.plen);
	} else {
		c.family = (uint8_t)parse_prefix(w[2], c.addr, &c.plen);
	}
	if (!c.family)
		BAD("%s: '%s': expected a prefix like 10.9.0.0/16 or 2001:db8:9::/48, or default", where, w[2]);
	/* 10.9.1.0/16 is 10.9.0.0/16, as the table stores it: one name for one route */
	rxp_prefix_mask(c.family, c.addr, c.plen, c.addr);
	/* the route types that lead nowhere, one word each */
	if (c.kind == DP_CMD_ROUTE_ADD && n == 4 && (!strcmp(w[3], "blackhole") ||
						     !strcmp(w[3], "unreachable") ||
						     !strcmp(w[3], "prohibit"))) {
		c.route_type = !strcmp(w[3], "blackhole") ? RXP_NH_KIND_BLACKHOLE :
			       !strcmp(w[3], "unreachable") ? RXP_NH_KIND_UNREACHABLE :
			       RXP_NH_KIND_PROHIBIT;
		set_where(c.where, sizeof(c.where), where);
		return dp_config_add_cmd(cfg, &c);
	}
	for (i = 3; i + 1 < n; i += 2) {
		if (!strcmp(w[i], "via") && !c.has_gw) {
			if (parse_addr(w[i + 1], c.gw) != c.family)
				BAD("%s: '%s': expected an IPv%u gateway address", where, w[i + 1], c.family);
			c.has_gw = true;
		} else if (!strcmp(w[i], "dev") && !c.dev[0]) {
			if (!dp_config_has_name(cfg, w[i + 1]))
				BAD("%s: '%s': no such port", where, w[i + 1]);
			snprintf(c.dev, sizeof(c.dev), "%s", w[i + 1]);
		} else {
			break;
		}
	}
	if (i < n)
		BAD("%s: '%s': expected %s", where, w[i],
		    c.kind == DP_CMD_ROUTE_ADD ?
		    "'via GATEWAY' or 'dev PORT' (or alone, a type: blackhole, unreachable, prohibit)" :
		    "'via GATEWAY', 'dev PORT' or nothing more");
	if (c.kind == DP_CMD_ROUTE_ADD && !c.has_gw && !c.dev[0])
		BAD("%s: route add needs 'via GATEWAY', 'dev PORT' or both, or a type: blackhole, unreachable, prohibit",
		    where);
	set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* Learned neighbours: longer than the last-seconds probes that renew them, at most a day. */
#define NEIGH_AGEING_MIN 5u
#define NEIGH_AGEING_MAX 86400u

/* "neigh add ADDR lladdr MAC dev NAME", "neigh del ADDR dev NAME", "neigh ageing SECONDS" */
static int cmd_neigh(struct dp_config *cfg, char **w, int n, const char *where, char *err,
		     size_t errlen)
{
	struct dp_cmd c = { .kind = DP_CMD_NEIGH_ADD };
	int dev;	/* the word naming the port */

	if (n >= 2 && !strcmp(w[1], "ageing")) {
		uint64_t s;

		if (n != 3)
			BAD("%s: %s: expected 'neigh ageing SECONDS'", where,
			    misfit(w, n, "neigh ageing SECONDS").text);
		if (rxp_parse_u64(w[2], NEIGH_AGEING_MIN, NEIGH_AGEING_MAX, &s))
			BAD("%s: '%s': expected seconds from %u to %u", where, w[2], NEIGH_AGEING_MIN,
			    NEIGH_AGEING_MAX);
		c.kind = DP_CMD_NEIGH_AGEING;
		c.seconds = (uint32_t)s;
		set_where(c.where, sizeof(c.where), where);
		return dp_config_add_cmd(cfg, &c);
	}
	if (n < 2 || (strcmp(w[1], "add") && strcmp(w[1], "del")))
		BAD("%s: '%s': expected 'add' or 'del' after 'neigh' (or 'neigh ageing SECONDS')", where,
		    n < 2 ? "" : w[1]);
	if (!strcmp(w[1], "del")) {
		c.kind = DP_CMD_NEIGH_DEL;
		dev = 4;
		if (n != 5 || strcmp(w[3], "dev"))
			BAD("%s: %s: expected 'neigh del ADDRESS dev PORT'", where,
			    misfit(w, n, "neigh del ADDRESS dev PORT").text);
	} else {
		dev = 6;
		if (n != 7 || strcmp(w[3], "lladdr") || strcmp(w[5], "dev"))
			BAD("%s: %s: expected 'neigh add ADDRESS lladdr MAC dev PORT'", where,
			    misfit(w, n, "neigh add ADDRESS lladdr MAC dev PORT").text);
	}
	c.family = (uint8_t)parse_addr(w[2], c.addr);
	if (!c.family)
		BAD("%s: '%s': expected an IPv4 or IPv6 address", where, w[2]);
	/* a neighbour is one host on a link: not a group, a broadcast, nobody or this host */
	if (c.kind == DP_CMD_NEIGH_ADD &&
	    (c.family == 4 ? c.addr[0] >= 224 || c.addr[0] == 0 || c.addr[0] == 127
			   : c.addr[0] == 0xff || !memcmp(c.addr, (const uint8_t[15]){ 0 }, 15) ||
			     rxp_ip6_is_v4mapped(c.addr)))
		BAD("%s: '%s': expected a unicast address", where, w[2]);
	if (c.kind == DP_CMD_NEIGH_ADD &&
	    (rxp_parse_mac(w[4], c.mac) || !rxp_eth_is_unicast(c.mac)))
		BAD("%s: '%s': expected a unicast MAC address like 02:00:00:00:00:22", where, w[4]);
	if (!dp_config_has_name(cfg, w[dev]))
		BAD("%s: '%s': no such port", where, w[dev]);
	snprintf(c.dev, sizeof(c.dev), "%s", w[dev]);
	set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* "icmp ratelimit RATE [burst N]" */
static int cmd_icmp(struct dp_config *cfg, char **w, int n, const char *where, char *err,
		    size_t errlen)
{
	struct dp_cmd c = { .kind = DP_CMD_ICMP_RATE };
	uint64_t rate, burst;

	if (n < 3 || strcmp(w[1], "ratelimit") || (n != 3 && n != 5) ||
	    (n == 5 && strcmp(w[3], "burst")))
		BAD("%s: %s: expected 'icmp ratelimit ERRORS_PER_SECOND [burst N]'", where,
		    misfit(w, n, n <= 3 ? "icmp ratelimit N" : "icmp ratelimit N burst N").text);
	if (rxp_parse_u64(w[2], 0, 10000000, &rate))
		BAD("%s: '%s': expected errors per second from 0 to 10000000", where, w[2]);
	burst = rate ? RXP_MAX(rate / 20, 1u) : 0;
	if (n == 5 && rxp_parse_u64(w[4], rate ? 1 : 0, 10000000, &burst))
		BAD("%s: '%s': expected a burst from %u to 10000000%s", where, w[4], rate ? 1 : 0,
		    rate ? " (a burst of 0 lets no error through; 'icmp ratelimit 0' sends none)" : "");
	c.rate = (double)rate;
	c.burst = (double)burst;
	set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* "ip source-route on|off" */
static int cmd_ip(struct dp_config *cfg, char **w, int n, const char *where, char *err,
		  size_t errlen)
{
	struct dp_cmd c = { .kind = DP_CMD_SOURCE_ROUTE };

	if (n != 3 || strcmp(w[1], "source-route") || (strcmp(w[2], "on") && strcmp(w[2], "off")))
		BAD("%s: %s: expected 'ip source-route on|off'", where,
		    misfit(w, n, "ip source-route on|off").text);
	c.source_route = !strcmp(w[2], "on");
	set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* "sync kernel [table N] [interval S]", "sync off" */
static int cmd_sync(struct dp_config *cfg, char **w, int n, const char *where, char *err,
		    size_t errlen)
{
	uint64_t table = 254, seconds = 30;
	int i;

	if (n == 2 && !strcmp(w[1], "off")) {
		cfg->sync.on = false;
		return 0;
	}
	if (n < 2 || strcmp(w[1], "kernel"))
		BAD("%s: '%s': expected 'sync kernel [table N] [interval SECONDS]' or 'sync off'", where,
		    n < 2 ? "" : w[1]);
	for (i = 2; i + 1 < n; i += 2) {
		if (!strcmp(w[i], "table")) {
			if (rxp_parse_u64(w[i + 1], 1, UINT32_MAX, &table))
				BAD("%s: '%s': expected a kernel table number (254 is main)", where, w[i + 1]);
		} else if (!strcmp(w[i], "interval")) {
			if (rxp_parse_u64(w[i + 1], 1, 86400, &seconds))
				BAD("%s: '%s': expected seconds between full resyncs, 1 to 86400", where, w[i + 1]);
		} else {
			break;
		}
	}
	if (i < n)
		BAD("%s: '%s': expected 'table N' or 'interval SECONDS'", where, w[i]);
	cfg->sync.on = true;
	cfg->sync.table = (uint32_t)table;
	cfg->sync.interval_ms = (uint32_t)seconds * 1000;
	set_where(cfg->sync.where, sizeof(cfg->sync.where), where);
	return 0;
}

int config_apply_line(struct dp_config *cfg, const char *line, const char *where, char *err,
		      size_t errlen)
{
	char buf[LINE_MAX_LEN];
	char *w[WORDS_MAX];
	size_t len = strlen(line);
	int n;

	/* a line's end is not part of it; a break inside would hide the rest */
	if (len && line[len - 1] == '\n')
		len--;
	if (len && line[len - 1] == '\r')
		len--;
	if (memchr(line, '\n', len) || memchr(line, '\r', len)) {
		snprintf(err, errlen, "%s: a line break inside one command; give one command per line or -e",
			 where);
		return -EINVAL;
	}
	if (len >= sizeof(buf)) {
		snprintf(err, errlen, "%s: line longer than %d characters", where, LINE_MAX_LEN - 1);
		return -EINVAL;
	}
	memcpy(buf, line, len);
	buf[len] = '\0';
	n = split(buf, w);
	if (n == 0)
		return 0;
	if (n < 0) {
		snprintf(err, errlen, "%s: too many words (at most %d)", where, WORDS_MAX);
		return -EINVAL;
	}
	if (!strcmp(w[0], "port"))
		return cmd_port(cfg, w, n, where, err, errlen);
	if (!strcmp(w[0], "addr"))
		return cmd_addr(cfg, w, n, where, err, errlen);
	if (!strcmp(w[0], "route"))
		return cmd_route(cfg, w, n, where, err, errlen);
	if (!strcmp(w[0], "neigh"))
		return cmd_neigh(cfg, w, n, where, err, errlen);
	if (!strcmp(w[0], "icmp"))
		return cmd_icmp(cfg, w, n, where, err, errlen);
	if (!strcmp(w[0], "sync"))
		return cmd_sync(cfg, w, n, where, err, errlen);
	if (!strcmp(w[0], "ip"))
		return cmd_ip(cfg, w, n, where, err, errlen);
	snprintf(err, errlen, "%s: '%s': expected a command: port, addr, route, neigh, icmp, sync, ip",
		 where, w[0]);
	return -EINVAL;
}

enum line_read { LINE_OK, LINE_EOF, LINE_LONG, LINE_NUL, LINE_ERROR };

/*
 * Reads one line of @f into @buf (LINE_MAX_LEN + 1 bytes), its break
 * included, and never more than fits: a file without line breaks
 * (/dev/zero) is a line too long, not a line that never ends.
 */
static enum line_read read_line(FILE *f, char *buf)
{
	size_t len = 0;
	bool nul = false;
	int c = 0;

	while (len < LINE_MAX_LEN && (c = getc(f)) != EOF) {
		nul |= c == '\0';
		buf[len++] = (char)c;
		if (c == '\n')
			break;
	}
	buf[len] = '\0';
	if (c == EOF && ferror(f))
		return LINE_ERROR;
	if (!len)
		return LINE_EOF;
	if (nul)
		return LINE_NUL;
	return len == LINE_MAX_LEN && buf[len - 1] != '\n' ? LINE_LONG : LINE_OK;
}

int config_apply_file(struct dp_config *cfg, const char *path, char *err, size_t errlen)
{
	/* all or nothing: on error, put back the counts the config had, and `sync` as it was */
	unsigned n_ports = cfg->n_ports, n_vlans = cfg->n_vlans, n_cmds = cfg->n_cmds;
	unsigned char sync[sizeof(cfg->sync)];
	char line[LINE_MAX_LEN + 1];
	char where[300];
	unsigned lineno = 0;
	int ret = 0;
	size_t full_len = strlen(path) + 16;	/* PATH:LINE */
	char *full;
	FILE *f = fopen(path, "r");

	if (!f) {
		int e = errno;

		snprintf(err, errlen, "cannot read config file '%s': %s", path, strerror(e));
		return -e;
	}
	full = malloc(full_len);
	if (!full) {
		fclose(f);
		snprintf(err, errlen, "out of memory reading config file '%s'", path);
		return -ENOMEM;
	}
	memcpy(sync, &cfg->sync, sizeof(sync));
	for (;;) {
		enum line_read r = read_line(f, line);

		if (r == LINE_EOF)
			break;
		lineno++;
		/* a long path keeps its end, where the file's name is, and the line number */
		snprintf(full, full_len, "%s:%u", path, lineno);
		set_where(where, sizeof(where), full);
		if (r == LINE_NUL)
			snprintf(err, errlen, "%s: a NUL byte: not a text file?", where);
		else if (r == LINE_LONG)
			snprintf(err, errlen, "%s: line longer than %d characters", where, LINE_MAX_LEN - 1);
		else if (r == LINE_ERROR)
			snprintf(err, errlen, "%s: cannot read on: %s", where, strerror(errno));
		ret = r == LINE_OK ? config_apply_line(cfg, line, where, err, errlen) : -EINVAL;
		if (ret) {
			cfg->n_ports = n_ports;
			cfg->n_vlans = n_vlans;
			cfg->n_cmds = n_cmds;
			memcpy(&cfg->sync, sync, sizeof(sync));
			ret = -EINVAL;
			break;
		}
	}
	free(full);
	fclose(f);
	return ret;
}

int apply_rx_option(struct dp_config *cfg, const char *name, const char *value, char *err,
		    size_t errlen)
{
	uint64_t n;

	if (!strcmp(name, "handoff")) {
		if (!strcmp(value, "list"))
			cfg->tuning.handoff = RXP_HANDOFF_LIST;
		else if (!strcmp(value, "packet") || !strcmp(value, "per-packet"))
			cfg->tuning.handoff = RXP_HANDOFF_PACKET;
		else
			goto bad;
	} else if (!strcmp(name, "prefetch")) {
		if (rxp_parse_u64(value, 0, 2, &n))
			goto bad;
		cfg->tuning.prefetch_lines = (uint8_t)n;
	} else if (!strcmp(name, "copy")) {
		cfg->tuning.copy = true;
	} else if (!strcmp(name, "copybreak")) {
		if (rxp_parse_u64(value, 0, UINT16_MAX, &n))
			goto bad;
		cfg->tuning.copy = true;
		cfg->tuning.copybreak = (uint16_t)n;
	} else if (!strcmp(name, "rx-offset")) {
		if (rxp_parse_u64(value, 0, 2, &n) || n == 1)
			goto bad;
		cfg->pool.rx_offset = (uint8_t)n;
	} else if (!strcmp(name, "buffers")) {
		if (!strcmp(value, "precise"))
			cfg->pool.page_sized = false;
		else if (!strcmp(value, "page"))
			cfg->pool.page_sized = true;
		else
			goto bad;
	} else if (!strcmp(name, "max-frame")) {
		if (rxp_parse_u64(value, 60, RXP_FRAME_MAX, &n))
			goto bad;
		cfg->pool.max_frame = (uint32_t)n;
	} else if (!strcmp(name, "budget")) {
		if (rxp_parse_u64(value, 1, RXP_BURST_MAX, &n))
			goto bad;
		cfg->tuning.budget = (uint16_t)n;
	} else if (!strcmp(name, "pool")) {
		if (rxp_parse_u64(value, 64, 1u << 24, &n))
			goto bad;
		cfg->pool.n_bufs = (uint32_t)n;
	} else if (!strcmp(name, "hugepages")) {
		cfg->pool.hugepages = true;
	} else {
		return 0;
	}
	return 1;
bad:
	snprintf(err, errlen, "--%s %s: expected %s", name, value,
		 !strcmp(name, "handoff")   ? "list or packet" :
		 !strcmp(name, "prefetch")  ? "0, 1 or 2" :
		 !strcmp(name, "copybreak") ? "a byte count from 0 to 65535" :
		 !strcmp(name, "rx-offset") ? "0 or 2" :
		 !strcmp(name, "buffers")   ? "precise or page" :
		 !strcmp(name, "max-frame") ? "a frame size from 60 to 9216" :
		 !strcmp(name, "budget")    ? "a packet count from 1 to 256" :
					      "a buffer count from 64 to 16777216");
	return -EINVAL;
}
