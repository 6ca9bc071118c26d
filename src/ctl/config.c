/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "verbs.h"
#include "rxpath/proto.h"

int parse_ip_addr(const char *text, uint8_t out[16])
{
	memset(out, 0, 16);
	if (strchr(text, ':'))
		return inet_pton(AF_INET6, text, out) == 1 ? 6 : 0;
	return inet_pton(AF_INET, text, out) == 1 ? 4 : 0;
}

int parse_prefix(const char *text, uint8_t out[16], uint8_t *plen)
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
	family = parse_ip_addr(buf, out);
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

/* Two words shown as one: "'gro maybe'". */
static struct cmd_shown cmd_pair(const char *a, const char *b)
{
	struct cmd_shown m;

	snprintf(m.text, sizeof(m.text), "'%s %s'", a, b);
	return m;
}

/* Returns 1 for "on", 0 for "off", -1 for anything else. */
static int on_off(const char *word)
{
	return !strcmp(word, "on") ? 1 : !strcmp(word, "off") ? 0 : -1;
}

/* "port set NAME host on|off [gro on|off] [name TAP]": the port's host path (TAP) */
static int verb_port_host(struct dp_config *cfg, const struct cmd_line *l, const char *where,
                          struct cmd_err *e)
{
	char *const *w = l->w;
	int n = l->n;
	struct dp_cmd c = { .kind = DP_CMD_HOST, .host_gro = true };
	bool is_port = false;
	int on;

	for (unsigned i = 0; i < cfg->n_ports; i++)
		is_port |= !strcmp(cfg->ports[i].name, w[2]);
	if (!is_port)
		return cmd_fail(e, w[2], "no such port%s", dp_config_has_name(cfg, w[2]) ? " (a VLAN sub-port's host path is its port's)" : "");
	if (n < 5 || (on = on_off(w[4])) < 0)
		return cmd_fail(e, n < 5 ? "" : w[4], "expected 'port set NAME host on|off [gro on|off] [name TAP]'");
	c.host_on = on;
	for (int i = 5; i < n; i += 2) {
		if (i + 1 == n)
			return cmd_fail(e, w[i], "expected a value after it");
		if (!strcmp(w[i], "gro") && (on = on_off(w[i + 1])) >= 0) {
			c.host_gro = on;
		} else if (!strcmp(w[i], "name")) {
			const char *t = w[i + 1];

			if (!t[0] || strlen(t) >= sizeof(c.host_name) || strpbrk(t, "/:") ||
			    !strcmp(t, ".") || !strcmp(t, ".."))
				return cmd_fail(e, t, "expected an interface name of 1 to %zu characters, without '/' or ':'", sizeof(c.host_name) - 1);
			snprintf(c.host_name, sizeof(c.host_name), "%s", t);
		} else {
			return cmd_fail_shown(e, cmd_pair(w[i], w[i + 1]).text, "expected 'gro on|off' or 'name TAP'");
		}
	}
	snprintf(c.dev, sizeof(c.dev), "%s", w[2]);
	cmd_set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* "port add NAME SPEC", "port set NAME mtu N|redirects on|off|ra on|off" and "port set NAME host ..." */
int verb_port(struct dp_config *cfg, const struct cmd_line *l, const char *where,
              struct cmd_err *e)
{
	char *const *w = l->w;
	int n = l->n;
	char perr[RXP_ERR_LEN];
	unsigned n_ports;

	if (n >= 2 && !strcmp(w[1], "set")) {
		struct dp_cmd c = { .kind = DP_CMD_MTU };
		uint64_t mtu;

		if (n >= 4 && !strcmp(w[3], "host"))
			return verb_port_host(cfg, l, where, e);
		if (n >= 4 && !strcmp(w[3], "vrf")) {
			if (n != 5)
				return cmd_fail_shown(e, cmd_misfit(l, "port set NAME vrf VRF").text,
						      "expected 'port set NAME vrf VRF' (or vrf default)");
			if (!dp_config_has_name(cfg, w[2]))
				return cmd_fail(e, w[2], "no such port");
			if (strlen(w[4]) >= sizeof(c.vrf))
				return cmd_fail(e, w[4], "a VRF's name has at most %zu characters", sizeof(c.vrf) - 1);
			c.kind = DP_CMD_PORT_VRF;
			snprintf(c.dev, sizeof(c.dev), "%s", w[2]);
			snprintf(c.vrf, sizeof(c.vrf), "%s", strcmp(w[4], "default") ? w[4] : "");
			cmd_set_where(c.where, sizeof(c.where), where);
			return dp_config_add_cmd(cfg, &c);
		}
		if (n != 5 || (strcmp(w[3], "mtu") && strcmp(w[3], "redirects") && strcmp(w[3], "ra")))
			return cmd_fail_shown(e, cmd_misfit(l, n >= 4 && !strcmp(w[3], "mtu") ? "port set NAME mtu N" :
							      "port set NAME mtu|redirects|ra|host on|off").text,
					      "expected 'port set NAME mtu N', 'port set NAME redirects|ra on|off' or "
					      "'port set NAME host on|off [gro on|off] [name TAP]'");
		if (!dp_config_has_name(cfg, w[2]))
			return cmd_fail(e, w[2], "no such port");
		if (strcmp(w[3], "mtu")) {
			if (strcmp(w[4], "on") && strcmp(w[4], "off"))
				return cmd_fail(e, w[4], "expected 'on' or 'off' after '%s'", w[3]);
			c.kind = !strcmp(w[3], "ra") ? DP_CMD_RA : DP_CMD_REDIRECTS;
			c.redirects = c.ra_on = !strcmp(w[4], "on");
		} else {
			if (rxp_parse_u64(w[4], 68, 65535, &mtu))
				return cmd_fail(e, w[4], "expected an MTU from 68 to 65535");
			c.mtu = (uint32_t)mtu;
		}
		snprintf(c.dev, sizeof(c.dev), "%s", w[2]);
		cmd_set_where(c.where, sizeof(c.where), where);
		return dp_config_add_cmd(cfg, &c);
	}
	if (n < 2 || strcmp(w[1], "add"))
		return cmd_fail(e, n < 2 ? "" : w[1], "expected 'add' or 'set' after 'port'");
	if (n != 4)
		return cmd_fail_shown(e, n < 4 ? "missing words" : w[4],
				      "expected 'port add NAME DRIVER[:key=value,...]'");
	if (strcmp(w[3], "vlan") && strncmp(w[3], "vlan:", 5) &&
	    !rxp_port_driver(strndupa(w[3], strcspn(w[3], ":"))))
		return cmd_fail(e, w[3], "unknown driver (built in: %s, vlan)", rxp_port_drivers());
	n_ports = cfg->n_ports;
	if (dp_config_add_port(cfg, w[2], w[3], perr, sizeof(perr)))
		return cmd_fail(e, w[2], "%s", perr);
	if (cfg->n_ports > n_ports)	/* driver arguments are checked when the port opens */
		cmd_set_where(cfg->ports[n_ports].where, sizeof(cfg->ports[n_ports].where), where);
	return 0;
}

/* "addr add A/L dev NAME" */
int verb_addr(struct dp_config *cfg, const struct cmd_line *l, const char *where,
              struct cmd_err *e)
{
	char *const *w = l->w;
	int n = l->n;
	struct dp_cmd c = { .kind = DP_CMD_ADDR_ADD };

	if (n < 2 || (strcmp(w[1], "add") && strcmp(w[1], "del")))
		return cmd_fail(e, n < 2 ? "" : w[1], "expected 'add' or 'del' after 'addr'");
	if (n != 5 || strcmp(w[3], "dev"))
		return cmd_fail_shown(e, cmd_misfit(l, "addr add|del ADDRESS dev PORT").text, "expected 'addr %s ADDRESS/LENGTH dev PORT'", w[1]);
	if (!strcmp(w[1], "del"))
		c.kind = DP_CMD_ADDR_DEL;	/* the length is optional: the address names the entry */
	c.family = (uint8_t)parse_prefix(w[2], c.addr, &c.plen);
	if (!c.family)
		return cmd_fail(e, w[2], "expected an address with a prefix length, like 10.0.1.1/24 or 2001:db8::1/64");
	if (!dp_config_has_name(cfg, w[4]))
		return cmd_fail(e, w[4], "no such port");
	snprintf(c.dev, sizeof(c.dev), "%s", w[4]);
	cmd_set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* "route add|del P/L|default [via GW] [dev NAME]": a del with them deletes only a route that has them */
/* The index + 1 of port @name among @ps's, added if new; 0 when DP_PATH_DEVS are named already. */
static uint8_t path_dev(struct dp_route_paths *ps, const char *name)
{
	for (unsigned i = 0; i < ps->n_devs; i++)
		if (!strcmp(ps->devs[i], name))
			return (uint8_t)(i + 1);
	if (ps->n_devs == DP_PATH_DEVS)
		return 0;
	snprintf(ps->devs[ps->n_devs], sizeof(ps->devs[0]), "%s", name);
	return ++ps->n_devs;
}

/* A VRF's name for a route into @out: "default" is the default table (empty). Returns 0 or -EINVAL. */
static int route_vrf_word(const char *word, char *out, size_t len, struct cmd_err *e)
{
	if (strlen(word) >= len)
		return cmd_fail(e, word, "a VRF's name has at most %zu characters", len - 1);
	snprintf(out, len, "%s", strcmp(word, "default") ? word : "");
	return 0;
}

/*
 * "nexthop via GW [dev PORT] [weight W] nexthop ...", as ip route writes
 * multipath routes, from word @i to the end. One next hop is an ordinary
 * route, its weight aside.
 */
static int parse_paths(struct dp_config *cfg, const struct cmd_line *l, int i, struct dp_cmd *c,
		       struct cmd_err *e)
{
	char *const *w = l->w;
	struct dp_route_paths *ps = &c->paths;

	while (i < l->n) {
		struct dp_path *p;

		if (strcmp(w[i], "nexthop"))
			return cmd_fail(e, w[i], "expected 'nexthop': each next hop of a multipath route starts with it");
		if (ps->n == RXP_NH_PATHS_MAX)
			return cmd_fail(e, w[i], "a route has at most %u next hops", RXP_NH_PATHS_MAX);
		p = &ps->path[ps->n++];
		p->weight = 1;
		for (i++; i < l->n && strcmp(w[i], "nexthop"); i += 2) {
			uint64_t v;

			if (i + 1 == l->n)
				return cmd_fail(e, w[i], "expected a value after it");
			if (!strcmp(w[i], "via") && !p->has_gw) {
				if (parse_ip_addr(w[i + 1], p->gw) != c->family)
					return cmd_fail(e, w[i + 1], "expected an IPv%u gateway address", c->family);
				p->has_gw = true;
			} else if (!strcmp(w[i], "dev") && !p->dev) {
				if (!dp_config_has_name(cfg, w[i + 1]))
					return cmd_fail(e, w[i + 1], "no such port");
				p->dev = path_dev(ps, w[i + 1]);
				if (!p->dev)
					return cmd_fail(e, w[i + 1], "the next hops of one route name at most %u ports", DP_PATH_DEVS);
			} else if (!strcmp(w[i], "vrf") && p->has_gw && !p->vrf && !p->dev) {
				char name[RXP_PORT_NAME_MAX];
				unsigned k;

				if (route_vrf_word(w[i + 1], name, sizeof(name), e))
					return -EINVAL;
				if (!name[0])
					snprintf(name, sizeof(name), "default");
				for (k = 0; k < ps->n_vrfs && strcmp(ps->vrfs[k], name); k++)
					;
				if (k == ps->n_vrfs) {
					if (k == DP_PATH_VRFS)
						return cmd_fail(e, w[i + 1], "the next hops of one route name at most %u VRFs", DP_PATH_VRFS);
					snprintf(ps->vrfs[ps->n_vrfs++], sizeof(ps->vrfs[0]), "%s", name);
				}
				p->vrf = (uint8_t)(k + 1);
			} else if (!strcmp(w[i], "weight")) {
				if (rxp_parse_u64(w[i + 1], 1, RXP_NH_WEIGHT_MAX, &v))
					return cmd_fail(e, w[i + 1], "expected a weight from 1 to %u", RXP_NH_WEIGHT_MAX);
				p->weight = (uint16_t)v;
			} else {
				return cmd_fail(e, w[i], "expected 'via GATEWAY', 'dev PORT', 'weight W' or the next 'nexthop'");
			}
		}
		if (!p->has_gw && !p->dev)
			return cmd_fail(e, w[i - 1], "a next hop needs 'via GATEWAY', 'dev PORT' or both");
	}
	if (ps->n == 1) {	/* an ordinary route */
		struct dp_path one = ps->path[0];

		c->has_gw = one.has_gw;
		memcpy(c->gw, one.gw, 16);
		if (one.dev)
			snprintf(c->dev, sizeof(c->dev), "%s", ps->devs[one.dev - 1]);
		if (one.vrf)
			snprintf(c->nh_vrf, sizeof(c->nh_vrf), "%s", ps->vrfs[one.vrf - 1]);
		memset(ps, 0, sizeof(*ps));
	}
	return 0;
}

int verb_route(struct dp_config *cfg, const struct cmd_line *l, const char *where,
               struct cmd_err *e)
{
	char *const *w = l->w;
	int n = l->n;
	struct dp_cmd c = { 0 };
	int i;

	if (n < 3 || (strcmp(w[1], "add") && strcmp(w[1], "del")))
		return cmd_fail(e, n < 2 ? "" : w[1], "expected 'route add PREFIX via GATEWAY|dev PORT' or 'route del PREFIX [via GATEWAY] [dev PORT]'");
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
		return cmd_fail(e, w[2], "expected a prefix like 10.9.0.0/16 or 2001:db8:9::/48, or default");
	/* 10.9.1.0/16 is 10.9.0.0/16, as the table stores it: one name for one route */
	rxp_prefix_mask(c.family, c.addr, c.plen, c.addr);
	/* vrf NAME first: the route's table */
	i = 3;
	if (i + 1 < n && !strcmp(w[i], "vrf")) {
		if (route_vrf_word(w[i + 1], c.vrf, sizeof(c.vrf), e))
			return -EINVAL;
		i += 2;
	}
	if (c.kind == DP_CMD_ROUTE_ADD && i < n && !strcmp(w[i], "nexthop")) {
		int ret = parse_paths(cfg, l, i, &c, e);

		if (ret)
			return ret;
		cmd_set_where(c.where, sizeof(c.where), where);
		return dp_config_add_cmd(cfg, &c);
	}
	/* the route types that lead nowhere, one word each */
	if (c.kind == DP_CMD_ROUTE_ADD && n == i + 1 && (!strcmp(w[i], "blackhole") ||
							 !strcmp(w[i], "unreachable") ||
							 !strcmp(w[i], "prohibit"))) {
		c.route_type = !strcmp(w[i], "blackhole") ? RXP_NH_KIND_BLACKHOLE :
			       !strcmp(w[i], "unreachable") ? RXP_NH_KIND_UNREACHABLE :
			       RXP_NH_KIND_PROHIBIT;
		cmd_set_where(c.where, sizeof(c.where), where);
		return dp_config_add_cmd(cfg, &c);
	}
	for (; i + 1 < n; i += 2) {
		if (!strcmp(w[i], "vrf") && c.has_gw && !c.nh_vrf[0] && !c.dev[0]) {
			/* after the gateway: the table it is looked for in (route leaking) */
			if (route_vrf_word(w[i + 1], c.nh_vrf, sizeof(c.nh_vrf), e))
				return -EINVAL;
			if (!c.nh_vrf[0])
				snprintf(c.nh_vrf, sizeof(c.nh_vrf), "default");
		} else if (!strcmp(w[i], "via") && !c.has_gw) {
			if (parse_ip_addr(w[i + 1], c.gw) != c.family)
				return cmd_fail(e, w[i + 1], "expected an IPv%u gateway address", c.family);
			c.has_gw = true;
		} else if (!strcmp(w[i], "dev") && !c.dev[0]) {
			if (!dp_config_has_name(cfg, w[i + 1]))
				return cmd_fail(e, w[i + 1], "no such port");
			snprintf(c.dev, sizeof(c.dev), "%s", w[i + 1]);
		} else {
			break;
		}
	}
	if (i < n)
		return cmd_fail(e, w[i], "expected %s", c.kind == DP_CMD_ROUTE_ADD ?
		    "'via GATEWAY' or 'dev PORT' (or alone, a type: blackhole, unreachable, prohibit)" :
		    "'via GATEWAY', 'dev PORT' or nothing more");
	if (c.kind == DP_CMD_ROUTE_ADD && !c.has_gw && !c.dev[0])
		return cmd_fail(e, NULL, "route add needs 'via GATEWAY', 'dev PORT' or both, or a type: blackhole, unreachable, prohibit");
	cmd_set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* "vrf add NAME table N", "vrf del NAME" */
int verb_vrf(struct dp_config *cfg, const struct cmd_line *l, const char *where,
             struct cmd_err *e)
{
	char *const *w = l->w;
	struct dp_cmd c = { .kind = DP_CMD_VRF_ADD };
	uint64_t table;

	if (l->n >= 2 && !strcmp(w[1], "del")) {
		if (l->n != 3)
			return cmd_fail_shown(e, cmd_misfit(l, "vrf del NAME").text, "expected 'vrf del NAME'");
		c.kind = DP_CMD_VRF_DEL;
	} else if (l->n < 2 || strcmp(w[1], "add")) {
		return cmd_fail(e, l->n < 2 ? "" : w[1], "expected 'vrf add NAME table N' or 'vrf del NAME'");
	} else if (l->n != 5 || strcmp(w[3], "table")) {
		return cmd_fail_shown(e, cmd_misfit(l, "vrf add NAME table N").text, "expected 'vrf add NAME table N'");
	} else if (rxp_parse_u64(w[4], 1, UINT32_MAX, &table) || table == 253 || table == 254 ||
		   table == 255) {
		return cmd_fail(e, w[4], "expected a kernel table number, 1 to 4294967295 but 253, 254 (main) and 255 (local)");
	}
	(void)cfg;
	if (!strcmp(w[2], "default"))
		return cmd_fail(e, w[2], "the default table is there already: a VRF has another name");
	if (strlen(w[2]) >= sizeof(c.vrf))
		return cmd_fail(e, w[2], "a VRF's name has at most %zu characters", sizeof(c.vrf) - 1);
	snprintf(c.vrf, sizeof(c.vrf), "%s", w[2]);
	c.table = c.kind == DP_CMD_VRF_ADD ? (uint32_t)table : 0;
	cmd_set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* Learned neighbours: longer than the last-seconds probes that renew them, at most a day. */
#define NEIGH_AGEING_MIN 5u
#define NEIGH_AGEING_MAX 86400u

/* "neigh add ADDR lladdr MAC dev NAME", "neigh del ADDR dev NAME", "neigh ageing SECONDS" */
int verb_neigh(struct dp_config *cfg, const struct cmd_line *l, const char *where,
               struct cmd_err *e)
{
	char *const *w = l->w;
	int n = l->n;
	struct dp_cmd c = { .kind = DP_CMD_NEIGH_ADD };
	int dev;	/* the word naming the port */

	if (n >= 2 && !strcmp(w[1], "ageing")) {
		uint64_t s;

		if (n != 3)
			return cmd_fail_shown(e, cmd_misfit(l, "neigh ageing SECONDS").text, "expected 'neigh ageing SECONDS'");
		if (rxp_parse_u64(w[2], NEIGH_AGEING_MIN, NEIGH_AGEING_MAX, &s))
			return cmd_fail(e, w[2], "expected seconds from %u to %u", NEIGH_AGEING_MIN, NEIGH_AGEING_MAX);
		c.kind = DP_CMD_NEIGH_AGEING;
		c.seconds = (uint32_t)s;
		cmd_set_where(c.where, sizeof(c.where), where);
		return dp_config_add_cmd(cfg, &c);
	}
	if (n < 2 || (strcmp(w[1], "add") && strcmp(w[1], "del")))
		return cmd_fail(e, n < 2 ? "" : w[1], "expected 'add' or 'del' after 'neigh' (or 'neigh ageing SECONDS')");
	if (!strcmp(w[1], "del")) {
		c.kind = DP_CMD_NEIGH_DEL;
		dev = 4;
		if (n != 5 || strcmp(w[3], "dev"))
			return cmd_fail_shown(e, cmd_misfit(l, "neigh del ADDRESS dev PORT").text, "expected 'neigh del ADDRESS dev PORT'");
	} else {
		dev = 6;
		if (n != 7 || strcmp(w[3], "lladdr") || strcmp(w[5], "dev"))
			return cmd_fail_shown(e, cmd_misfit(l, "neigh add ADDRESS lladdr MAC dev PORT").text, "expected 'neigh add ADDRESS lladdr MAC dev PORT'");
	}
	c.family = (uint8_t)parse_ip_addr(w[2], c.addr);
	if (!c.family)
		return cmd_fail(e, w[2], "expected an IPv4 or IPv6 address");
	/* a neighbour is one host on a link: not a group, a broadcast, nobody or this host */
	if (c.kind == DP_CMD_NEIGH_ADD &&
	    (c.family == 4 ? c.addr[0] >= 224 || c.addr[0] == 0 || c.addr[0] == 127
			   : c.addr[0] == 0xff || !memcmp(c.addr, (const uint8_t[15]){ 0 }, 15) ||
			     rxp_ip6_is_v4mapped(c.addr)))
		return cmd_fail(e, w[2], "expected a unicast address");
	if (c.kind == DP_CMD_NEIGH_ADD &&
	    (rxp_parse_mac(w[4], c.mac) || !rxp_eth_is_unicast(c.mac)))
		return cmd_fail(e, w[4], "expected a unicast MAC address like 02:00:00:00:00:22");
	if (!dp_config_has_name(cfg, w[dev]))
		return cmd_fail(e, w[dev], "no such port");
	snprintf(c.dev, sizeof(c.dev), "%s", w[dev]);
	cmd_set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* "icmp ratelimit RATE [burst N]" */
int verb_icmp(struct dp_config *cfg, const struct cmd_line *l, const char *where,
              struct cmd_err *e)
{
	char *const *w = l->w;
	int n = l->n;
	struct dp_cmd c = { .kind = DP_CMD_ICMP_RATE };
	uint64_t rate, burst;

	if (n < 3 || strcmp(w[1], "ratelimit") || (n != 3 && n != 5) ||
	    (n == 5 && strcmp(w[3], "burst")))
		return cmd_fail_shown(e, cmd_misfit(l, n <= 3 ? "icmp ratelimit N" : "icmp ratelimit N burst N").text, "expected 'icmp ratelimit ERRORS_PER_SECOND [burst N]'");
	if (rxp_parse_u64(w[2], 0, 10000000, &rate))
		return cmd_fail(e, w[2], "expected errors per second from 0 to 10000000");
	burst = rate ? RXP_MAX(rate / 20, 1u) : 0;
	if (n == 5 && rxp_parse_u64(w[4], rate ? 1 : 0, 10000000, &burst))
		return cmd_fail(e, w[4], "expected a burst from %u to 10000000%s", rate ? 1 : 0, rate ? " (a burst of 0 lets no error through; 'icmp ratelimit 0' sends none)" : "");
	c.rate = (double)rate;
	c.burst = (double)burst;
	cmd_set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* "ip source-route on|off" */
int verb_ip(struct dp_config *cfg, const struct cmd_line *l, const char *where,
            struct cmd_err *e)
{
	char *const *w = l->w;
	int n = l->n;
	struct dp_cmd c = { .kind = DP_CMD_SOURCE_ROUTE };

	if (n != 3 || strcmp(w[1], "source-route") || (strcmp(w[2], "on") && strcmp(w[2], "off")))
		return cmd_fail_shown(e, cmd_misfit(l, "ip source-route on|off").text, "expected 'ip source-route on|off'");
	c.source_route = !strcmp(w[2], "on");
	cmd_set_where(c.where, sizeof(c.where), where);
	return dp_config_add_cmd(cfg, &c);
}

/* "sync kernel [table N] [interval S]", "sync off" */
int verb_sync(struct dp_config *cfg, const struct cmd_line *l, const char *where,
              struct cmd_err *e)
{
	char *const *w = l->w;
	int n = l->n;
	uint64_t table = 254, seconds = 30;
	int i;

	if (n == 2 && !strcmp(w[1], "off")) {
		cfg->sync.on = false;
		return 0;
	}
	if (n < 2 || strcmp(w[1], "kernel"))
		return cmd_fail(e, n < 2 ? "" : w[1], "expected 'sync kernel [table N] [interval SECONDS]' or 'sync off'");
	for (i = 2; i + 1 < n; i += 2) {
		if (!strcmp(w[i], "table")) {
			if (rxp_parse_u64(w[i + 1], 1, UINT32_MAX, &table))
				return cmd_fail(e, w[i + 1], "expected a kernel table number (254 is main)");
		} else if (!strcmp(w[i], "interval")) {
			if (rxp_parse_u64(w[i + 1], 1, 86400, &seconds))
				return cmd_fail(e, w[i + 1], "expected seconds between full resyncs, 1 to 86400");
		} else {
			break;
		}
	}
	if (i < n)
		return cmd_fail(e, w[i], "expected 'table N' or 'interval SECONDS'");
	cfg->sync.on = true;
	cfg->sync.table = (uint32_t)table;
	cfg->sync.interval_ms = (uint32_t)seconds * 1000;
	cmd_set_where(cfg->sync.where, sizeof(cfg->sync.where), where);
	return 0;
}

int config_apply_line(struct dp_config *cfg, const char *line, const char *where, char *err,
		      size_t errlen)
{
	const struct cmd_verb *v = cmd_verb_of(line, CMD_IN_CONFIG);
	struct cmd_err e = { 0 };
	struct cmd_line l;
	int ret = cmd_split(&l, line, v ? &v->shape : NULL, &e);
	char verbs[200];

	if (ret > 0 && !v)
		ret = cmd_fail(&e, l.w[0], "expected a command: %s",
			       cmd_verbs_list(CMD_IN_CONFIG, verbs, sizeof(verbs)));
	else if (ret > 0)
		ret = v->parse(cfg, &l, where, &e);
	if (ret >= 0)
		return 0;
	if (!e.text[0])	/* a parser that ran out of memory says nothing itself */
		snprintf(e.text, sizeof(e.text), "%s", strerror(-ret));
	cmd_set_where(e.where, sizeof(e.where), where);
	cmd_err_format(&e, err, errlen);
	return ret == -ENOMEM ? ret : -EINVAL;
}

enum line_read { LINE_OK, LINE_EOF, LINE_LONG, LINE_NUL, LINE_ERROR };

/*
 * Reads one line of @f into @buf (CMD_LINE_MAX + 1 bytes), its break
 * included, and never more than fits: a file without line breaks
 * (/dev/zero) is a line too long, not a line that never ends.
 */
static enum line_read read_line(FILE *f, char *buf)
{
	size_t len = 0;
	bool nul = false;
	int c = 0;

	while (len < CMD_LINE_MAX && (c = getc(f)) != EOF) {
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
	return len == CMD_LINE_MAX && buf[len - 1] != '\n' ? LINE_LONG : LINE_OK;
}

int config_apply_file(struct dp_config *cfg, const char *path, char *err, size_t errlen)
{
	/* all or nothing: on error, put back the counts the config had, and `sync` as it was */
	unsigned n_ports = cfg->n_ports, n_vlans = cfg->n_vlans, n_cmds = cfg->n_cmds;
	unsigned char sync[sizeof(cfg->sync)];
	char line[CMD_LINE_MAX + 1];
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
		cmd_set_where(where, sizeof(where), full);
		if (r == LINE_NUL)
			snprintf(err, errlen, "%s: a NUL byte: not a text file?", where);
		else if (r == LINE_LONG)
			snprintf(err, errlen, "%s: line longer than %d characters", where, CMD_LINE_MAX - 1);
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
