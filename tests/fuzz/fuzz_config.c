/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the command language (src/ctl/config.c). The input
 * is a config file: its lines go one by one to config_apply_line() on a
 * fresh dp_config, then the whole input, as a file, to config_apply_file()
 * on another. It checks, and aborts on a violation:
 *  - a line that fails leaves the config exactly as it was, and its error is
 *    a NUL-terminated message that starts with the line's location;
 *  - a line that passes adds at most one port, VLAN or command, and leaves
 *    a config that holds together (unique names, known parents and ports,
 *    known drivers, families and prefix lengths in range);
 *  - a file is all or nothing: when it fails the config is as before, when
 *    it passes it is what the same lines give one by one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ctl/config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#if defined(__clang__)
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

#define ERR_LEN 256
#define LINES_MAX 64		/* lines applied one by one; a config file rarely has more */

static struct {
	int fd;			/* a memfd the input is written to, read back as a file */
	char path[64];
	struct dp_config lines, file, before;
	struct dp_cmd *before_cmds;
	size_t before_cap;
} F;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_config: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

static bool cmd_equal(const struct dp_cmd *a, const struct dp_cmd *b)
{
	return a->kind == b->kind && !strcmp(a->where, b->where) && !strcmp(a->dev, b->dev) &&
	       a->family == b->family && a->plen == b->plen && a->has_gw == b->has_gw &&
	       !memcmp(a->addr, b->addr, 16) && !memcmp(a->gw, b->gw, 16) &&
	       !memcmp(a->mac, b->mac, 6) && a->mtu == b->mtu && a->rate == b->rate &&
	       a->burst == b->burst && a->host_on == b->host_on && a->host_gro == b->host_gro &&
	       !strcmp(a->host_name, b->host_name);
}

/* Returns NULL when @a and @b configure the same thing, else what differs. */
NO_COVERAGE static const char *cfg_diff(const struct dp_config *a, const struct dp_config *b)
{
	if (a->n_ports != b->n_ports)
		return "number of ports";
	for (unsigned i = 0; i < a->n_ports; i++)
		if (strcmp(a->ports[i].name, b->ports[i].name) ||
		    strcmp(a->ports[i].spec, b->ports[i].spec) ||
		    strcmp(a->ports[i].where, b->ports[i].where))
			return "a port";
	if (a->n_vlans != b->n_vlans)
		return "number of VLAN sub-ports";
	for (unsigned i = 0; i < a->n_vlans; i++)
		if (strcmp(a->vlans[i].name, b->vlans[i].name) ||
		    strcmp(a->vlans[i].parent, b->vlans[i].parent) || a->vlans[i].id != b->vlans[i].id)
			return "a VLAN sub-port";
	if (a->n_cmds != b->n_cmds)
		return "number of commands";
	for (unsigned i = 0; i < a->n_cmds; i++)
		if (!cmd_equal(&a->cmds[i], &b->cmds[i]))
			return "a command";
	if (a->sync.on != b->sync.on || (a->sync.on && (a->sync.table != b->sync.table ||
						       a->sync.interval_ms != b->sync.interval_ms ||
						       strcmp(a->sync.where, b->sync.where))))
		return "kernel sync";
	/* field by field: struct padding is not part of the value */
	if (a->pool.n_bufs != b->pool.n_bufs || a->pool.max_frame != b->pool.max_frame ||
	    a->pool.rx_offset != b->pool.rx_offset || a->pool.page_sized != b->pool.page_sized ||
	    a->pool.hugepages != b->pool.hugepages || a->pool.headroom != b->pool.headroom ||
	    a->pool.pow2_sized != b->pool.pow2_sized)
		return "pool";
	if (a->tuning.handoff != b->tuning.handoff ||
	    a->tuning.prefetch_lines != b->tuning.prefetch_lines ||
	    a->tuning.prefetch_ahead != b->tuning.prefetch_ahead || a->tuning.copy != b->tuning.copy ||
	    a->tuning.copybreak != b->tuning.copybreak || a->tuning.budget != b->tuning.budget)
		return "receive tuning";
	return NULL;
}

/* A deep copy of @cfg into F.before, to compare with after a line fails. */
NO_COVERAGE static void snapshot(const struct dp_config *cfg)
{
	if (cfg->n_cmds > F.before_cap) {
		F.before_cap = cfg->n_cmds * 2;
		F.before_cmds = realloc(F.before_cmds, F.before_cap * sizeof(*F.before_cmds));
		if (!F.before_cmds)
			die("out of memory");
	}
	F.before = *cfg;
	F.before.cmds = F.before_cmds;
	if (cfg->n_cmds)
		memcpy(F.before_cmds, cfg->cmds, cfg->n_cmds * sizeof(*cfg->cmds));
}

static bool terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static bool port_name_ok(const char *name, size_t size)
{
	return terminated(name, size) && name[0];
}

/* What every accepted config must be. */
NO_COVERAGE static void check_config(const struct dp_config *c, const char *where)
{
	if (c->n_ports > DP_PORTS_MAX || c->n_vlans > DP_VLANS_MAX || c->n_cmds > c->cmds_cap)
		die("%s: %u ports, %u VLANs, %u commands (room for %u)", where, c->n_ports,
		    c->n_vlans, c->n_cmds, c->cmds_cap);
	for (unsigned i = 0; i < c->n_ports; i++) {
		const struct dp_port_config *p = &c->ports[i];
		char driver[sizeof(p->spec)];

		if (!port_name_ok(p->name, sizeof(p->name)) || !terminated(p->spec, sizeof(p->spec)) ||
		    !terminated(p->where, sizeof(p->where)))
			die("%s: port %u: a name, spec or location not terminated", where, i);
		snprintf(driver, sizeof(driver), "%.*s", (int)strcspn(p->spec, ":"), p->spec);
		if (!rxp_port_driver(driver))
			die("%s: port %s: driver '%s' is not built in", where, p->name, driver);
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(c->ports[j].name, p->name))
				die("%s: two ports called %s", where, p->name);
	}
	for (unsigned i = 0; i < c->n_vlans; i++) {
		const struct dp_vlan_config *v = &c->vlans[i];
		bool parent = false;

		if (!port_name_ok(v->name, sizeof(v->name)) || !terminated(v->parent, sizeof(v->parent)))
			die("%s: VLAN %u: a name not terminated", where, i);
		if (v->id < 1 || v->id > 4094)
			die("%s: VLAN %s: id %u", where, v->name, v->id);
		for (unsigned j = 0; j < c->n_ports; j++) {
			parent |= !strcmp(c->ports[j].name, v->parent);
			if (!strcmp(c->ports[j].name, v->name))
				die("%s: %s is a port and a VLAN", where, v->name);
		}
		if (!parent)
			die("%s: VLAN %s on %s, which is no port", where, v->name, v->parent);
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(c->vlans[j].name, v->name) ||
			    (!strcmp(c->vlans[j].parent, v->parent) && c->vlans[j].id == v->id))
				die("%s: VLAN %s twice", where, v->name);
	}
	for (unsigned i = 0; i < c->n_cmds; i++) {
		const struct dp_cmd *cmd = &c->cmds[i];

		if (!terminated(cmd->dev, sizeof(cmd->dev)) || !terminated(cmd->where, sizeof(cmd->where)) ||
		    !terminated(cmd->host_name, sizeof(cmd->host_name)))
			die("%s: command %u: a string not terminated", where, i);
		if (cmd->dev[0] && !dp_config_has_name(c, cmd->dev))
			die("%s: command %u names %s, which is no port", where, i, cmd->dev);
		switch (cmd->kind) {
		case DP_CMD_ADDR_ADD:
		case DP_CMD_ADDR_DEL:
		case DP_CMD_ROUTE_ADD:
		case DP_CMD_ROUTE_DEL:
		case DP_CMD_NEIGH_ADD:
		case DP_CMD_NEIGH_DEL:
			if ((cmd->family != 4 && cmd->family != 6) ||
			    cmd->plen > (cmd->family == 4 ? 32 : 128))
				die("%s: command %u: family %u, length %u", where, i, cmd->family,
				    cmd->plen);
			if (cmd->kind != DP_CMD_ROUTE_ADD && cmd->kind != DP_CMD_ROUTE_DEL &&
			    !cmd->dev[0])
				die("%s: command %u: no port", where, i);
			/* blackhole, unreachable and prohibit routes lead nowhere: neither */
			if (cmd->kind == DP_CMD_ROUTE_ADD && !cmd->route_type && !cmd->has_gw &&
			    !cmd->dev[0])
				die("%s: command %u: a route with neither gateway nor port", where, i);
			if (cmd->kind == DP_CMD_ROUTE_ADD && cmd->route_type &&
			    (cmd->has_gw || cmd->dev[0]))
				die("%s: command %u: a route that leads nowhere, with a next hop", where, i);
			if (cmd->kind == DP_CMD_NEIGH_ADD && (cmd->mac[0] & 1))
				die("%s: command %u: a multicast neighbour", where, i);
			break;
		case DP_CMD_MTU:
			if (cmd->mtu < 68 || cmd->mtu > 65535 || !cmd->dev[0])
				die("%s: command %u: mtu %u", where, i, cmd->mtu);
			break;
		case DP_CMD_ICMP_RATE:
			if (!(cmd->rate >= 0 && cmd->burst >= 0))
				die("%s: command %u: rate %g burst %g", where, i, cmd->rate, cmd->burst);
			break;
		case DP_CMD_HOST: {
			bool port = false;

			for (unsigned j = 0; j < c->n_ports; j++)
				port |= !strcmp(c->ports[j].name, cmd->dev);
			if (!port)
				die("%s: command %u: a host path for %s, which is no port", where, i,
				    cmd->dev);
			break;
		}
		case DP_CMD_REDIRECTS:
		case DP_CMD_RA:
			if (!cmd->dev[0])
				die("%s: command %u: a port setting for no port", where, i);
			break;
		case DP_CMD_NEIGH_AGEING:
			if (cmd->seconds < 5 || cmd->seconds > 86400)
				die("%s: command %u: neighbour ageing %u s", where, i, cmd->seconds);
			break;
		case DP_CMD_SOURCE_ROUTE:
			break;
		case DP_CMD_VRF_ADD:
			if (!cmd->vrf[0] || !strcmp(cmd->vrf, "default") || !cmd->table ||
			    (cmd->table >= 253 && cmd->table <= 255))
				die("%s: command %u: vrf add '%s' table %u", where, i, cmd->vrf, cmd->table);
			break;
		case DP_CMD_VRF_DEL:
			if (!cmd->vrf[0])
				die("%s: command %u: vrf del of no name", where, i);
			break;
		case DP_CMD_PORT_VRF:
			if (!dp_config_has_name(c, cmd->dev) || !strcmp(cmd->vrf, "default"))
				die("%s: command %u: port %s into vrf '%s'", where, i, cmd->dev, cmd->vrf);
			break;
		/* the filter's and NAT's: their own parsers' tests check what they hold */
		case DP_CMD_FILTER_ADD:
		case DP_CMD_FILTER_DEL:
		case DP_CMD_FILTER_FLUSH:
		case DP_CMD_FILTER_RESTORE:
		case DP_CMD_FILTER_POLICY:
		case DP_CMD_SET_ADD:
		case DP_CMD_SET_DEL:
		case DP_CMD_CT_TIMEOUT:
		case DP_CMD_CT_LIBERAL:
		case DP_CMD_CT_LOOSE:
		case DP_CMD_NAT_ADD:
		case DP_CMD_NAT_DEL:
		case DP_CMD_NAT_FLUSH:
		case DP_CMD_NAT_RESTORE:
		case DP_CMD_NAT_FILTERING:
		case DP_CMD_NAT_TIMEOUT:
			break;
		default:
			die("%s: command %u of kind %u", where, i, cmd->kind);
		}
	}
}

/* Applies one line to F.lines and checks what became of it. Returns its result. */
static int apply_line(const char *line, const char *where)
{
	char err[ERR_LEN];
	const char *diff;
	int ret;

	snapshot(&F.lines);
	memset(err, 0x5a, sizeof(err));	/* no NUL but what the parser writes */
	ret = config_apply_line(&F.lines, line, where, err, sizeof(err));
	if (ret == 0) {
		unsigned grew = (F.lines.n_ports - F.before.n_ports) +
				(F.lines.n_vlans - F.before.n_vlans) +
				(F.lines.n_cmds - F.before.n_cmds);

		if (grew > 1 || F.lines.n_ports < F.before.n_ports ||
		    F.lines.n_vlans < F.before.n_vlans || F.lines.n_cmds < F.before.n_cmds)
			die("%s: one line changed the counts from %u/%u/%u to %u/%u/%u", where,
			    F.before.n_ports, F.before.n_vlans, F.before.n_cmds, F.lines.n_ports,
			    F.lines.n_vlans, F.lines.n_cmds);
		check_config(&F.lines, where);
		return 0;
	}
	if (ret != -EINVAL)
		die("%s: failed with %d, not -EINVAL", where, ret);
	if (!terminated(err, sizeof(err)))
		die("%s: the error message is not terminated", where);
	if (strncmp(err, where, strlen(where)) || err[strlen(where)] != ':')
		die("%s: the error does not start with the location: '%s'", where, err);
	diff = cfg_diff(&F.before, &F.lines);
	if (diff)
		die("%s: a failed line changed the config (%s): %s", where, diff, err);
	return ret;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	F.fd = memfd_create("fuzz-config", 0);
	if (F.fd < 0)
		die("memfd_create: %s", strerror(errno));
	snprintf(F.path, sizeof(F.path), "/proc/self/fd/%d", F.fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[1100], where[96], err[ERR_LEN];
	bool all_ok = true, has_nul = memchr(data, '\0', size) != NULL;
	unsigned lineno = 0;
	size_t pos = 0;
	const char *diff;
	int ret;

	/* line by line, as -e does, with the locations the file reader would give */
	dp_config_default(&F.lines);
	while (pos < size && lineno < LINES_MAX) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - (data + pos)) + 1 : size - pos;
		size_t take = len < sizeof(line) - 1 ? len : sizeof(line) - 1;

		memcpy(line, data + pos, take);
		line[take] = '\0';
		pos += len;
		snprintf(where, sizeof(where), "%s:%u", F.path, ++lineno);
		/* a longer line fails in either reader; keep the comparison to what both take */
		if (len > 1024)
			all_ok = false;
		if (apply_line(line, where))
			all_ok = false;
	}

	/* the same as a file: all or nothing */
	if (!has_nul && pos == size) {
		if (ftruncate(F.fd, 0) || pwrite(F.fd, data, size, 0) != (ssize_t)size)
			die("cannot write the memfd: %s", strerror(errno));
		dp_config_default(&F.file);
		memset(err, 0x5a, sizeof(err));
		ret = config_apply_file(&F.file, F.path, err, sizeof(err));
		if (ret) {
			struct dp_config fresh;

			if (!terminated(err, sizeof(err)) || strncmp(err, F.path, strlen(F.path)))
				die("the file's error does not name the file");
			dp_config_default(&fresh);
			diff = cfg_diff(&fresh, &F.file);
			if (diff)
				die("a file that failed changed the config (%s): %s", diff, err);
			if (all_ok)
				die("a file failed whose lines all pass: %s", err);
		} else {
			if (!all_ok)
				die("a file passed whose lines do not all pass");
			diff = cfg_diff(&F.lines, &F.file);
			if (diff)
				die("the file and its lines one by one differ (%s)", diff);
		}
		dp_config_free(&F.file);
	}
	dp_config_free(&F.lines);
	return 0;
}
