/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "config.h"
#include "ctl_server.h"
#include "reload.h"
#include "capture_file.h"
#include "net/host.h"
#include "ksync.h"
#include "show.h"

#define CLIENT_TIMEOUT_S 2	/* a client that stops reading the answer is dropped */
/*
 * A client sends its one line at once (ctl does): one that has not within
 * this is dropped, so that clients that stall cost the others little.
 */
#define REQUEST_TIMEOUT_MS 250

struct ctl_server {
	struct ctl_server_config cfg;
	char path[108];
	int listen_fd, stop_fd, signal_fd;
	int spare_fd;		/* /dev/null, given up to turn a client away when descriptors run out */
	bool told_no_fds;	/* that has been logged */
	pthread_t thread;
	struct rxp_capture_file *capture;	/* running capture; touched on the datapath thread */
	struct rxp_ksync *ksync;	/* `sync kernel` is on */
	uint32_t sync_table, sync_interval_ms;
	unsigned n_map;
	struct rxp_ksync_port_map map[2 * DP_PORTS_MAX];	/* kernel interfaces, then TAPs */
	char map_ifname[2 * DP_PORTS_MAX][IF_NAMESIZE];
};

/* Router commands parsed on this thread, applied on the datapath's. */
struct apply_work {
	const struct dp_cmd *cmds;
	unsigned n_cmds;
	bool keep_going;	/* report a failure and go on with the rest */
	bool all_or_nothing;	/* reload: at a failure, take back what went in before it */
	unsigned applied, failed;
	unsigned undo_failed;	/* all_or_nothing: what could not be taken back (in errors) */
	bool want_undo;		/* all_or_nothing: when all went in, hand back what takes it back */
	struct dp_cmd *undo;	/* ... last first, @n_undo of them (the caller frees it) */
	unsigned n_undo;
	struct rxp_sbuf *errors;
	struct rxp_sbuf *warnings;	/* if not NULL: what was taken with a warning, a line each */
};

static int apply_on_datapath(struct dp *dp, void *arg, struct rxp_sbuf *out)
{
	struct apply_work *w = arg;
	struct dp_cmd *inv = NULL;
	bool *has_inv = NULL;
	char err[512];
	int ret, first = 0;
	bool was_sink;

	(void)out;
	/* a receive sink becomes a router with an address, route or neighbour, not with an MTU alone */
	if (!dp->router) {
		unsigned i = 0;

		while (i < w->n_cmds && w->cmds[i].kind != DP_CMD_ADDR_ADD &&
		       w->cmds[i].kind != DP_CMD_ROUTE_ADD && w->cmds[i].kind != DP_CMD_NEIGH_ADD)
			i++;
		if (i == w->n_cmds && w->n_cmds) {
			rxp_sbuf_printf(w->errors, "%s: rxpath runs as a receive sink (no address, no route); add an address first\n",
					w->cmds[0].where);
			w->failed++;
			return -EINVAL;
		}
	}
	was_sink = !dp->router;
	ret = dp_router_enable(dp, err, sizeof(err));
	if (ret) {
		rxp_sbuf_printf(w->errors, "%s\n", err);
		return ret;
	}
	if (w->all_or_nothing) {
		/* what went in is commands 0 .. applied - 1: the loop stops at the first failure */
		w->keep_going = false;
		inv = calloc(w->n_cmds + 1, sizeof(*inv));
		has_inv = calloc(w->n_cmds + 1, sizeof(*has_inv));
		/* taken now, so that a take-back never lacks the memory to say how */
		if (w->want_undo)
			w->undo = calloc(w->n_cmds + 1, sizeof(*w->undo));
		if (!inv || !has_inv || (w->want_undo && !w->undo)) {
			free(inv);
			free(has_inv);
			free(w->undo);
			w->undo = NULL;
			rxp_sbuf_printf(w->errors, "out of memory\n");
			w->failed++;
			if (was_sink)
				dp_router_disable(dp);
			return -ENOMEM;
		}
	}
	for (unsigned i = 0; i < w->n_cmds; i++) {
		/* what it changes, as it is: to put back if a later one fails */
		if (inv)
			has_inv[i] = dp_cmd_inverse(dp, &w->cmds[i], &inv[i]);
		ret = dp_apply_cmd(dp, &w->cmds[i], err, sizeof(err));
		if (!ret) {
			if (err[0] && w->warnings)
				rxp_sbuf_printf(w->warnings, "%s\n", err);
			w->applied++;
			continue;
		}
		rxp_sbuf_printf(w->errors, "%s\n", err);
		w->failed++;
		first = first ? first : ret;
		if (!w->keep_going)
			break;
	}
	/* all or nothing: last first, what went in is taken back, in this same call */
	for (unsigned i = inv && w->failed ? w->applied : 0; i-- > 0;) {
		if (has_inv[i] && dp_apply_cmd(dp, &inv[i], err, sizeof(err))) {
			rxp_sbuf_printf(w->errors, "%s\n", err);
			w->undo_failed++;
		}
	}
	/* all went in: what would take it back, last first, for a caller that may yet have to */
	if (w->undo && !w->failed) {
		for (unsigned i = w->applied; i-- > 0;)
			if (has_inv[i])
				w->undo[w->n_undo++] = inv[i];
	} else {
		free(w->undo);
		w->undo = NULL;
	}
	free(inv);
	free(has_inv);
	/* nothing took, or all was taken back: the sink stays a sink */
	if (was_sink && (!w->applied || (w->all_or_nothing && w->failed)))
		dp_router_disable(dp);
	return first;
}

/* A config holding the running ports' names, so that commands can name them. */
static void scratch_config(const struct dp_config *active, struct dp_config *scratch)
{
	dp_config_default(scratch);
	scratch->n_ports = active->n_ports;
	memcpy(scratch->ports, active->ports, sizeof(scratch->ports));
	scratch->n_vlans = active->n_vlans;
	memcpy(scratch->vlans, active->vlans, sizeof(scratch->vlans));
}

static int reply_error(struct rxp_sbuf *out, bool json, int ret, const char *msg)
{
	rxp_sbuf_reset(out);
	if (json) {
		rxp_sbuf_printf(out, "{\"error\":");
		rxp_sbuf_json_str(out, msg);
		rxp_sbuf_printf(out, "}\n");
	} else {
		rxp_sbuf_printf(out, "%s%s", msg, msg[0] && msg[strlen(msg) - 1] == '\n' ? "" : "\n");
	}
	return ret;
}

/* ---- kernel sync ---- */

/* Applies one line from kernel sync, like a ctl command. Returns 0 or -errno. */
static int sync_apply(void *ctx, const char *line)
{
	struct ctl_server *s = ctx;
	struct dp_config scratch;
	struct rxp_sbuf errors = { 0 }, out = { 0 };
	struct apply_work w = { 0 };
	char err[512];
	int ret;

	scratch_config(s->cfg.active, &scratch);
	ret = config_apply_line(&scratch, line, "sync", err, sizeof(err));
	for (unsigned i = 0; !ret && i < scratch.n_cmds; i++)
		scratch.cmds[i].kernel = true;
	if (!ret) {
		w = (struct apply_work){ .cmds = scratch.cmds, .n_cmds = scratch.n_cmds,
					 .errors = &errors };
		ret = control_call(s->cfg.ctl, apply_on_datapath, &w, &out);
	}
	dp_config_free(&scratch);
	rxp_sbuf_free(&errors);
	rxp_sbuf_free(&out);
	return ret;
}

/* The kernel interface behind a port: its afpacket or afxdp dev=, if any. */
static bool port_kernel_if(const char *spec, char *ifname, size_t len)
{
	const char *dev;
	size_t n;

	if (strncmp(spec, "afpacket:", 9) && strncmp(spec, "afxdp:", 6))
		return false;
	dev = strstr(spec, "dev=");
	if (!dev || (dev[-1] != ':' && dev[-1] != ','))
		return false;
	dev += 4;
	n = strcspn(dev, ",");
	if (!n || n >= len)
		return false;
	memcpy(ifname, dev, n);
	ifname[n] = '\0';
	return true;
}

static void sync_stop(struct ctl_server *s)
{
	if (!s->ksync)
		return;
	rxp_ksync_withdraw(s->ksync);
	rxp_ksync_close(s->ksync);
	s->ksync = NULL;
}

static int sync_no_ports(char *err, size_t errlen)
{
	snprintf(err, errlen, "sync kernel: no port is on a kernel interface (afpacket:dev= or afxdp:dev=) nor has a host path (port set P host on); nothing to mirror");
	return -EINVAL;
}

/* The ports' host paths (TAPs), as the datapath has them now. */
struct tap_list {
	unsigned n;
	char port[DP_PORTS_MAX][RXP_PORT_NAME_MAX];
	char tap[DP_PORTS_MAX][IF_NAMESIZE];
};

static int taps_on_datapath(struct dp *dp, void *arg, struct rxp_sbuf *out)
{
	struct tap_list *t = arg;

	(void)out;
	t->n = 0;
	for (unsigned i = 0; i < dp->n_ports && t->n < DP_PORTS_MAX; i++) {
		uint16_t id = dp->ports[i].id;
		const struct rxp_host *h = id < RXP_STACK_PORTS_MAX ? dp->stack.host[id] : NULL;

		if (!h)
			continue;
		snprintf(t->port[t->n], sizeof(t->port[0]), "%s", dp->ports[i].name);
		snprintf(t->tap[t->n], sizeof(t->tap[0]), "%s", h->tap.name);
		t->n++;
	}
	return 0;
}

static void sync_taps(struct ctl_server *s, struct tap_list *t)
{
	struct rxp_sbuf out = { 0 };

	if (control_call(s->cfg.ctl, taps_on_datapath, t, &out))
		t->n = 0;
	rxp_sbuf_free(&out);
}

/* Whether sync_start() would find a port to mirror for: one on a kernel interface, or a host path. */
static bool sync_has_ports(struct ctl_server *s)
{
	const struct dp_config *a = s->cfg.active;
	char ifname[IF_NAMESIZE];
	struct tap_list t;

	for (unsigned i = 0; i < a->n_ports; i++)
		if (port_kernel_if(a->ports[i].spec, ifname, sizeof(ifname)))
			return true;
	sync_taps(s, &t);
	return t.n > 0;
}

/* Starts mirroring kernel table @table and runs the first full sync. Returns lines applied or -errno. */
static int sync_start(struct ctl_server *s, uint32_t table, uint32_t interval_ms, char *err,
		      size_t errlen)
{
	const struct dp_config *a = s->cfg.active;
	struct rxp_ksync_config kc = { .table = table, .resync_interval_ms = interval_ms,
				       .map = s->map, .apply = sync_apply, .ctx = s };
	int ret;

	struct tap_list taps;

	sync_stop(s);
	s->n_map = 0;
	for (unsigned i = 0; i < a->n_ports; i++) {
		if (!port_kernel_if(a->ports[i].spec, s->map_ifname[s->n_map], IF_NAMESIZE))
			continue;
		s->map[s->n_map].ifname = s->map_ifname[s->n_map];
		s->map[s->n_map].port = a->ports[i].name;
		s->map[s->n_map].routes_only = false;
		s->n_map++;
	}
	/*
	 * A host path's TAP is its port too: what a routing daemon there learns
	 * (BGP next hops on the TAP's subnet) goes through the port. Its
	 * neighbours are rxpath's own to learn, not mirrored.
	 */
	sync_taps(s, &taps);
	for (unsigned i = 0; i < taps.n; i++)
		for (unsigned j = 0; j < a->n_ports; j++) {
			if (strcmp(a->ports[j].name, taps.port[i]))
				continue;
			snprintf(s->map_ifname[s->n_map], IF_NAMESIZE, "%s", taps.tap[i]);
			s->map[s->n_map].ifname = s->map_ifname[s->n_map];
			s->map[s->n_map].port = a->ports[j].name;
			s->map[s->n_map].routes_only = true;
			s->n_map++;
		}
	if (!s->n_map)
		return sync_no_ports(err, errlen);
	kc.n_map = s->n_map;
	ret = rxp_ksync_open(&s->ksync, &kc, err, errlen);
	if (ret)
		return ret;
	s->sync_table = table;
	s->sync_interval_ms = interval_ms;
	ret = rxp_ksync_run(s->ksync, err, errlen);
	if (ret < 0)
		sync_stop(s);
	return ret;
}

/*
 * After @cmds went in, what kernel sync must hear of: a host path opened or
 * closed (the interfaces it mirrors change: it starts again), or a configured
 * route or neighbour deleted, which let the kernel's under it come back (its
 * record said refused).
 */
/* Whether the TAPs the sync mirrors are the datapath's host paths as they are now. */
static bool sync_taps_current(struct ctl_server *s)
{
	struct tap_list t;
	unsigned n = 0;

	sync_taps(s, &t);
	for (unsigned i = 0; i < s->n_map; i++) {
		if (!s->map[i].routes_only)
			continue;
		if (n >= t.n || strcmp(s->map[i].ifname, t.tap[n]) || strcmp(s->map[i].port, t.port[n]))
			return false;
		n++;
	}
	return n == t.n;
}

static void sync_after_changes(struct ctl_server *s, const struct dp_cmd *cmds, unsigned n,
			       struct rxp_sbuf *warnings)
{
	if (!s->ksync)
		return;
	/*
	 * a host path opened or closed: its TAP joins or leaves the interfaces
	 * mirrored, which takes a new start (its routes withdrawn, then mirrored
	 * again); a GRO change or the same host path said again takes none
	 */
	for (unsigned i = 0; i < n; i++)
		if (cmds[i].kind == DP_CMD_HOST) {
			char err[512];

			if (sync_taps_current(s))
				break;
			if (sync_start(s, s->sync_table, s->sync_interval_ms, err, sizeof(err)) < 0) {
				fprintf(stderr, "rxpath: kernel sync: %s; sync stopped\n", err);
				if (warnings)
					rxp_sbuf_printf(warnings, "kernel sync: %s; sync stopped (sync kernel starts it again)\n", err);
				s->cfg.active->sync.on = false;	/* a reload with it starts it again */
			}
			return;
		}
	for (unsigned i = 0; i < n; i++)
		if (cmds[i].kind == DP_CMD_ROUTE_DEL || cmds[i].kind == DP_CMD_NEIGH_DEL ||
		    cmds[i].kind == DP_CMD_ADDR_DEL) {
			rxp_ksync_reoffer(s->ksync);
			return;
		}
}

/* The ports the sync mirrors for: a port on a kernel interface and with a host path counts once. */
static unsigned sync_ports(const struct ctl_server *s)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->n_map; i++) {
		bool seen = false;

		for (unsigned j = 0; j < i; j++)
			seen |= !strcmp(s->map[j].port, s->map[i].port);
		n += !seen;
	}
	return n;
}

static int handle_sync(struct ctl_server *s, const char *line, bool json, struct rxp_sbuf *out)
{
	struct dp_config scratch;
	char err[512];
	int ret;

	scratch_config(s->cfg.active, &scratch);
	ret = config_apply_line(&scratch, line, "ctl", err, sizeof(err));
	dp_config_free(&scratch);
	if (ret)
		return reply_error(out, json, ret, err + (strncmp(err, "ctl: ", 5) ? 0 : 5));
	if (!scratch.sync.on) {
		sync_stop(s);
		rxp_sbuf_printf(out, json ? "{\"ok\":true}\n" : "kernel sync off; its routes and neighbours withdrawn\n");
		return 0;
	}
	ret = sync_start(s, scratch.sync.table, scratch.sync.interval_ms, err, sizeof(err));
	if (ret < 0)
		return reply_error(out, json, ret, err);
	if (json)
		rxp_sbuf_printf(out, "{\"ok\":true,\"table\":%u,\"lines\":%d}\n", scratch.sync.table, ret);
	else
		rxp_sbuf_printf(out, "mirroring kernel table %u on %u port%s: %d change%s applied\n",
				scratch.sync.table, sync_ports(s), sync_ports(s) == 1 ? "" : "s", ret,
				ret == 1 ? "" : "s");
	return 0;
}

struct kernel_routes_walk {
	struct rxp_sbuf *out;
	bool json, first;
};

static int kernel_route_one(void *ctx, const struct rxp_ksync_route_info *r)
{
	struct kernel_routes_walk *w = ctx;
	char p[INET6_ADDRSTRLEN], g[INET6_ADDRSTRLEN] = "";
	int af = r->family == 4 ? AF_INET : AF_INET6;

	inet_ntop(af, r->prefix, p, sizeof(p));
	if (r->has_gw)
		inet_ntop(af, r->gw, g, sizeof(g));
	if (w->json) {
		rxp_sbuf_printf(w->out, "%s{\"prefix\":\"%s/%u\",", w->first ? "" : ",", p, r->plen);
		if (r->type)
			rxp_sbuf_printf(w->out, "\"type\":\"%s\",", r->type);
		rxp_sbuf_printf(w->out, "\"via\":\"%s\",\"dev\":\"%s\",\"kernel_dev\":\"%s\","
				"\"metric\":%u,\"state\":\"%s\"", g, r->port, r->ifname, r->metric,
				rxp_ksync_state_name(r->state));
		if (r->error)
			rxp_sbuf_printf(w->out, ",\"error\":\"%s\"", strerror(-r->error));
		rxp_sbuf_printf(w->out, "}");
	} else {
		if (r->type)
			rxp_sbuf_printf(w->out, "%s/%u %s (kernel, metric %u): %s", p, r->plen,
					r->type, r->metric, rxp_ksync_state_name(r->state));
		else
			rxp_sbuf_printf(w->out, "%s/%u%s%s dev %s (kernel %s, metric %u): %s", p,
					r->plen, r->has_gw ? " via " : "", g, r->port, r->ifname,
					r->metric, rxp_ksync_state_name(r->state));
		if (r->error)
			rxp_sbuf_printf(w->out, " (%s)", strerror(-r->error));
		rxp_sbuf_printf(w->out, "\n");
	}
	w->first = false;
	return 0;
}

/* show routes kernel: the kernel's table as mirrored, and what rxpath did with each route. */
static int show_kernel_routes(struct ctl_server *s, bool json, struct rxp_sbuf *out)
{
	struct kernel_routes_walk w = { .out = out, .json = json, .first = true };
	struct rxp_ksync_stats st;

	if (!s->ksync)
		return reply_error(out, json, -EINVAL, "kernel sync is off; turn it on with 'sync kernel [table N]'");
	rxp_ksync_get_stats(s->ksync, &st);
	if (json)
		rxp_sbuf_printf(out, "{\"table\":%u,\"installed\":%llu,\"refused\":%llu,\"routes\":[",
				s->sync_table, (unsigned long long)st.routes_installed,
				(unsigned long long)st.routes_refused);
	else
		rxp_sbuf_printf(out, "kernel table %u: %llu routes, %llu installed in rxpath, %llu refused; "
				"skipped: %llu on other interfaces, %llu kernel-made, %llu unsupported\n",
				s->sync_table, (unsigned long long)st.routes,
				(unsigned long long)st.routes_installed, (unsigned long long)st.routes_refused,
				(unsigned long long)st.last_dump.unmapped, (unsigned long long)st.last_dump.kernel,
				(unsigned long long)st.last_dump.unsupported);
	rxp_ksync_foreach_route(s->ksync, kernel_route_one, &w);
	if (json)
		rxp_sbuf_printf(out, "]}\n");
	return 0;
}

/* ---- capture ---- */

struct capture_work {
	struct ctl_server *s;
	bool start;
	struct rxp_capture_file_spec spec;
	struct rxp_capture_file_stats st;
	char err[300];
};

static int capture_on_datapath(struct dp *dp, void *arg, struct rxp_sbuf *out)
{
	struct capture_work *w = arg;
	struct ctl_server *s = w->s;
	const char *names[DP_PORTS_MAX];
	int ret;

	(void)out;
	if (!w->start) {
		if (!s->capture) {
			snprintf(w->err, sizeof(w->err), "no capture is running");
			return -ENOENT;
		}
		ret = rxp_capture_file_stop(&dp->stack, s->capture, &w->st, w->err, sizeof(w->err));
		s->capture = NULL;
		return ret;
	}
	if (dp->n_workers > 1) {
		snprintf(w->err, sizeof(w->err), "capture needs --workers 1 for now (one capture buffer per stack)");
		return -EINVAL;
	}
	if (s->capture) {
		snprintf(w->err, sizeof(w->err), "a capture to %s is running; 'capture stop' first",
			 rxp_capture_file_path(s->capture));
		return -EBUSY;
	}
	for (unsigned i = 0; i < dp->n_ports; i++)
		names[i] = dp->ports[i].name;
	w->spec.port_names = names;
	w->spec.n_ports = dp->n_ports;
	return rxp_capture_file_start(&dp->stack, &w->spec, &s->capture, w->err, sizeof(w->err));
}

/* "capture start POINT FILE [dev PORT] [count N] [filter EXPR...]", "capture stop" */
static int handle_capture(struct ctl_server *s, char *line, bool json, struct rxp_sbuf *out)
{
	struct capture_work w = { .s = s, .spec = { .port = RXP_CAPTURE_FILE_ALL_PORTS } };
	char *words[10], *save = NULL, *p, *filter = NULL;
	int n = 0, ret;

	for (p = strtok_r(line, " \t", &save); p; p = strtok_r(NULL, " \t", &save)) {
		if (n == (int)RXP_ARRAY_SIZE(words))
			return reply_error(out, json, -EINVAL, "capture: too many words; see 'help'");
		words[n++] = p;
		if (n > 4 && !strcmp(words[n - 1], "filter")) {
			filter = save;	/* the expression is the rest of the line */
			break;
		}
	}
	if (n == 2 && !strcmp(words[1], "stop")) {
		ret = control_call(s->cfg.ctl, capture_on_datapath, &w, out);
		if (ret)
			return reply_error(out, json, ret, ret == -ESHUTDOWN ? "rxpath is stopping" : w.err);
		rxp_sbuf_printf(out, json ? "{\"written\":%llu,\"captured\":%llu,\"lost\":%llu,\"filtered\":%llu}\n" :
				"capture stopped: %llu packets written (%llu captured, %llu lost to a full buffer, %llu filtered out)\n",
				(unsigned long long)w.st.written, (unsigned long long)w.st.captured,
				(unsigned long long)w.st.lost, (unsigned long long)w.st.filtered);
		return 0;
	}
	if (n < 4 || strcmp(words[1], "start"))
		return reply_error(out, json, -EINVAL, "expected 'capture start rx|tx|drop|all FILE [dev PORT] [count N] [filter EXPR]' or 'capture stop'");
	w.start = true;
	if (rxp_capture_points_parse(words[2], &w.spec.points)) {
		char msg[200];

		snprintf(msg, sizeof(msg), "'%s': expected rx, tx, drop, all, or several joined with '+' (rx+drop)", words[2]);
		return reply_error(out, json, -EINVAL, msg);
	}
	w.spec.path = words[3];
	for (int i = 4; i < n; i += 2) {
		char msg[200];
		uint64_t v;

		if (!strcmp(words[i], "filter")) {
			if (!filter || !*filter)
				return reply_error(out, json, -EINVAL, "filter: expected an expression, like 'udp port 53'");
			w.spec.filter = filter;
			break;
		}
		if (i + 1 >= n) {
			snprintf(msg, sizeof(msg), "'%s': expected a value after it", words[i]);
			return reply_error(out, json, -EINVAL, msg);
		}
		if (!strcmp(words[i], "count")) {
			if (rxp_parse_u64(words[i + 1], 1, UINT64_MAX, &v)) {
				snprintf(msg, sizeof(msg), "count '%s': expected a number of packets, 1 or more",
					 words[i + 1]);
				return reply_error(out, json, -EINVAL, msg);
			}
			w.spec.count = v;
		} else if (!strcmp(words[i], "dev")) {
			const struct dp_config *a = s->cfg.active;
			int port = -1;

			for (unsigned k = 0; k < a->n_ports; k++)
				if (!strcmp(a->ports[k].name, words[i + 1]))
					port = (int)k;
			for (unsigned k = 0; port < 0 && k < a->n_vlans; k++)
				if (!strcmp(a->vlans[k].name, words[i + 1])) {
					snprintf(msg, sizeof(msg), "'%s': a VLAN sub-port's frames are captured on its parent: dev %s (filter 'vlan %u' picks them)",
						 words[i + 1], a->vlans[k].parent, a->vlans[k].id);
					return reply_error(out, json, -EINVAL, msg);
				}
			if (port < 0) {
				snprintf(msg, sizeof(msg), "'%s': no such port", words[i + 1]);
				return reply_error(out, json, -EINVAL, msg);
			}
			w.spec.port = port;
		} else {
			snprintf(msg, sizeof(msg), "'%s': expected 'dev PORT', 'count N' or 'filter EXPR'",
				 words[i]);
			return reply_error(out, json, -EINVAL, msg);
		}
	}
	ret = control_call(s->cfg.ctl, capture_on_datapath, &w, out);
	if (ret)
		return reply_error(out, json, ret, ret == -ESHUTDOWN ? "rxpath is stopping" : w.err);
	rxp_sbuf_printf(out, json ? "{\"ok\":true}\n" : "capturing %s to %s\n", words[2], words[3]);
	return 0;
}

static const char help_text[] =
	"commands:\n"
	"  show ports | stats | drops | routes [PREFIX|ADDRESS] | neigh | pool\n"
	"  addr add|del ADDRESS/LENGTH dev PORT\n"
	"  route add PREFIX [via GATEWAY] [dev PORT]  |  route add PREFIX blackhole|unreachable|prohibit\n"
	"  route del PREFIX [via GATEWAY] [dev PORT]    (PREFIX may be default)\n"
	"  neigh add ADDRESS lladdr MAC dev PORT\n"
	"  neigh del ADDRESS dev PORT\n"
	"  port set PORT mtu N\n"
	"  port set PORT redirects on|off  |  port set PORT ra on|off\n"
	"  port set PORT host on|off [gro on|off] [name TAP]\n"
	"  neigh ageing SECONDS  |  ip source-route on|off\n"
	"  icmp ratelimit ERRORS_PER_SECOND [burst N]\n"
	"  sync kernel [table N] [interval SECONDS]  |  sync off\n"
	"  show routes kernel    (the kernel's routes as mirrored, and what rxpath did with each)\n"
	"  capture start rx|tx|drop|all FILE [dev PORT] [count N] [filter EXPR]  |  capture stop\n";

static int handle_show(struct ctl_server *s, char *rest, bool json, struct rxp_sbuf *out)
{
	struct show_request req = { .cfg = s->cfg.active, .json = json };
	char extra[32] = "";
	int n, ret, arg_end = 0;

	n = sscanf(rest, "%15s %79s%n %31s", req.what, req.arg, &arg_end, extra);
	if (n < 1)
		return reply_error(out, json, -EINVAL, "show: expected what to show: ports, stats, drops, routes [PREFIX|ADDRESS|kernel], neigh, pool");
	if (n >= 2 && rest[arg_end] && !isspace((unsigned char)rest[arg_end])) {
		/* %79s stopped inside the word: refuse it rather than read its two halves */
		char msg[200];

		snprintf(msg, sizeof(msg), "show %s: '%.20s...': too long (%zu characters at most): expected a prefix or address",
			 req.what, req.arg, sizeof(req.arg) - 1);
		return reply_error(out, json, -EINVAL, msg);
	}
	if (!show_topic_known(req.what) || extra[0]) {
		char msg[200];

		snprintf(msg, sizeof(msg), "show: '%s': expected %s", extra[0] ? extra : req.what,
			 extra[0] ? "nothing more" : show_topics());
		return reply_error(out, json, -EINVAL, msg);
	}
	ret = control_call(s->cfg.ctl, show_run, &req, out);
	if (ret == -ESHUTDOWN)
		return reply_error(out, json, ret, "rxpath is stopping");
	if (ret)
		return reply_error(out, json, ret, req.err);
	show_finish(&req, out);
	return 0;
}

static int handle_change(struct ctl_server *s, const char *line, bool json, struct rxp_sbuf *out)
{
	struct dp_config scratch;
	struct rxp_sbuf errors = { 0 }, warnings = { 0 };
	struct apply_work w = { 0 };
	char err[512];
	int ret;

	scratch_config(s->cfg.active, &scratch);
	ret = config_apply_line(&scratch, line, "ctl", err, sizeof(err));
	if (ret) {
		if (!strncmp(err, "ctl: '", 6) && strstr(err, "expected a command"))
			snprintf(err, sizeof(err), "'%.*s': expected a command: show, addr, route, neigh, port set, icmp, ip, sync, capture, help",
				 (int)strcspn(line + strspn(line, " \t"), " \t"), line + strspn(line, " \t"));
		else if (!strncmp(err, "ctl: ", 5))
			memmove(err, err + 5, strlen(err + 5) + 1);	/* the client names itself */
		goto fail;
	}
	if (scratch.n_ports != s->cfg.active->n_ports || scratch.n_vlans != s->cfg.active->n_vlans) {
		snprintf(err, sizeof(err), "ports are set up when rxpath starts; add the port to the config file and restart");
		ret = -EINVAL;
		goto fail;
	}
	w.cmds = scratch.cmds;
	w.n_cmds = scratch.n_cmds;
	w.errors = &errors;
	w.warnings = &warnings;
	ret = control_call(s->cfg.ctl, apply_on_datapath, &w, out);
	if (ret && errors.data && !strncmp(errors.data, "ctl: ", 5))
		memmove(errors.data, errors.data + 5, errors.len - 4);	/* the client names itself */
	if (ret) {
		snprintf(err, sizeof(err), "%s", ret == -ESHUTDOWN ? "rxpath is stopping" :
			 errors.data ? errors.data : "failed");
		goto fail;
	}
	sync_after_changes(s, scratch.cmds, scratch.n_cmds, &warnings);
	dp_config_free(&scratch);
	rxp_sbuf_free(&errors);
	/* done; what was taken with a warning says so to whoever asked, not only to the log */
	if (json) {
		rxp_sbuf_printf(out, "{\"ok\":true");
		if (warnings.len) {
			warnings.data[warnings.len - 1] = '\0';	/* the last line break */
			rxp_sbuf_printf(out, ",\"warning\":");
			rxp_sbuf_json_str(out, warnings.data);
		}
		rxp_sbuf_printf(out, "}\n");
	} else if (warnings.len) {
		rxp_sbuf_printf(out, "%s", warnings.data);
	}
	rxp_sbuf_free(&warnings);
	return 0;
fail:
	dp_config_free(&scratch);
	rxp_sbuf_free(&errors);
	rxp_sbuf_free(&warnings);
	return reply_error(out, json, ret, err);
}

int ctl_server_handle(struct ctl_server *s, const char *line, bool json, struct rxp_sbuf *out)
{
	char buf[CTL_REQUEST_MAX], first[16] = "";

	if (strcspn(line, "\r\n") >= sizeof(buf))
		return reply_error(out, json, -E2BIG, "request too long");
	snprintf(buf, sizeof(buf), "%s", line);
	buf[strcspn(buf, "\r\n")] = '\0';
	sscanf(buf, "%15s", first);
	if (!first[0] || first[0] == '#')
		return reply_error(out, json, -EINVAL, "empty command; 'help' lists them");
	if (!strcmp(first, "help")) {
		if (json) {
			rxp_sbuf_printf(out, "{\"help\":");
			rxp_sbuf_json_str(out, help_text);
			rxp_sbuf_printf(out, "}\n");
		} else {
			rxp_sbuf_printf(out, "%s", help_text);
		}
		return 0;
	}
	if (!strcmp(first, "show")) {
		char topic[16] = "", arg[16] = "", more[4] = "";

		if (sscanf(buf, "%*s %15s %15s %3s", topic, arg, more) == 2 &&
		    !strcmp(topic, "routes") && !strcmp(arg, "kernel"))
			return show_kernel_routes(s, json, out);
		return handle_show(s, buf + strspn(buf, " \t") + 4, json, out);
	}
	if (!strcmp(first, "sync"))
		return handle_sync(s, buf, json, out);
	if (!strcmp(first, "capture"))
		return handle_capture(s, buf, json, out);
	return handle_change(s, buf, json, out);
}

/* ---- reload ---- */

/*
 * Applies @diff all or nothing: at the first command that fails, the ones
 * before it are taken back in the same datapath call, so no packet sees
 * half of it. Returns true when all took; else says on stderr what failed.
 */
static bool reload_apply(struct ctl_server *s, const struct dp_cmd *diff, unsigned n,
			 unsigned *applied, struct apply_work *undo)
{
	struct rxp_sbuf errors = { 0 }, out = { 0 };
	struct apply_work w = { .cmds = diff, .n_cmds = n, .all_or_nothing = true,
				.want_undo = undo != NULL, .errors = &errors };
	int ret = n ? control_call(s->cfg.ctl, apply_on_datapath, &w, &out) : 0;

	*applied = w.applied;
	if (undo) {
		undo->cmds = w.undo;
		undo->n_cmds = w.n_undo;
	}
	if (ret && ret != -ESHUTDOWN) {
		fprintf(stderr, "rxpath: reload: failed: %s", errors.data ? errors.data : "(no reason given)\n");
		if (w.undo_failed)
			fprintf(stderr, "rxpath: reload: %u of the %u change%s made before could not be taken back (above)\n",
				w.undo_failed, w.applied, w.applied == 1 ? "" : "s");
		else
			fprintf(stderr, "rxpath: reload: nothing changed\n");
	}
	rxp_sbuf_free(&errors);
	rxp_sbuf_free(&out);
	return !ret;
}

/*
 * After the file's changes went in and its `sync kernel` could not start:
 * takes the changes back with @undo (what reload_apply() handed back: each
 * thing put back as it ran, ctl's changes included), so the reload changes
 * nothing, as one that does not parse. The start stopped any sync there
 * was; it is started again.
 */
static void reload_take_back(struct ctl_server *s, const struct apply_work *undo)
{
	const struct dp_config *a = s->cfg.active;
	struct rxp_sbuf errors = { 0 }, out = { 0 };
	struct apply_work w = { .cmds = undo->cmds, .n_cmds = undo->n_cmds, .keep_going = true,
				.errors = &errors };
	char err[512];
	bool whole = true;

	if (w.n_cmds && control_call(s->cfg.ctl, apply_on_datapath, &w, &out)) {
		fprintf(stderr, "rxpath: reload: %u of the file's %u change%s could not be taken back: %s",
			w.failed, w.n_cmds, w.n_cmds == 1 ? "" : "s",
			errors.data ? errors.data : "(no reason given)\n");
		whole = false;
	}
	rxp_sbuf_free(&errors);
	rxp_sbuf_free(&out);
	if (a->sync.on) {
		int ret = sync_start(s, a->sync.table, a->sync.interval_ms, err, sizeof(err));

		if (ret < 0) {
			fprintf(stderr, "rxpath: reload: the kernel sync that ran before did not restart: %s\n", err);
			s->cfg.active->sync.on = false;	/* the next reload tries again */
			return;
		}
	}
	if (whole)
		fprintf(stderr, "rxpath: reload: taken back; nothing changed\n");
}

static void reload(struct ctl_server *s)
{
	struct dp_config fresh;
	struct dp_cmd *diff = NULL;
	char err[512], where[32];
	unsigned n_exec = 0, applied;
	struct apply_work undo = { 0 };
	bool sync_changes;
	long n;

	dp_config_default(&fresh);
	for (unsigned i = 0; i < s->cfg.n_sources; i++) {
		const struct config_source *src = &s->cfg.sources[i];
		int ret;

		if (src->is_file) {
			ret = config_apply_file(&fresh, src->text, err, sizeof(err));
		} else {
			snprintf(where, sizeof(where), "-e %u", ++n_exec);
			ret = config_apply_line(&fresh, src->text, where, err, sizeof(err));
		}
		if (ret) {
			fprintf(stderr, "rxpath: reload: %s; nothing changed\n", err);
			goto out;
		}
	}
	if (!reload_same_ports(s->cfg.active, &fresh))
		fprintf(stderr, "rxpath: reload: ports differ from the running ones; port changes need a restart, the rest is applied\n");
	n = reload_diff(s->cfg.active, &fresh, &diff);
	if (n < 0) {
		fprintf(stderr, "rxpath: reload: out of memory; nothing changed\n");
		goto out;
	}
	/* `sync kernel` added, removed or changed in the file */
	sync_changes = fresh.sync.on != s->cfg.active->sync.on ||
		       (fresh.sync.on && (fresh.sync.table != s->cfg.active->sync.table ||
					  fresh.sync.interval_ms != s->cfg.active->sync.interval_ms));
	if (sync_changes && fresh.sync.on && !sync_has_ports(s)) {
		sync_no_ports(err, sizeof(err));
		fprintf(stderr, "rxpath: reload: %s: %s; nothing changed\n", fresh.sync.where, err);
		goto out;
	}
	/* a file that cannot be applied whole changes nothing, as one that does not parse */
	if (!reload_apply(s, diff, (unsigned)n, &applied, sync_changes && fresh.sync.on ? &undo : NULL))
		goto out;
	sync_after_changes(s, diff, (unsigned)n, NULL);
	fprintf(stderr, "rxpath: reload: %u change%s applied\n", applied, applied == 1 ? "" : "s");
	if (sync_changes) {
		int ret = 0;

		if (!fresh.sync.on)
			sync_stop(s);
		else
			ret = sync_start(s, fresh.sync.table, fresh.sync.interval_ms, err, sizeof(err));
		if (!fresh.sync.on)
			fprintf(stderr, "rxpath: reload: kernel sync stopped; its routes withdrawn\n");
		else if (ret < 0)
			fprintf(stderr, "rxpath: reload: %s: %s\n", fresh.sync.where, err);
		else
			fprintf(stderr, "rxpath: reload: mirroring kernel table %u: %d change%s applied\n",
				fresh.sync.table, ret, ret == 1 ? "" : "s");
		if (ret < 0) {
			reload_take_back(s, &undo);
			goto out;
		}
		s->cfg.active->sync = fresh.sync;
	}
	fflush(stderr);
	/* the file is now what later reloads compare with */
	dp_config_free(s->cfg.active);
	s->cfg.active->cmds = fresh.cmds;
	s->cfg.active->n_cmds = fresh.n_cmds;
	s->cfg.active->cmds_cap = fresh.cmds_cap;
	fresh.cmds = NULL;
out:
	fflush(stderr);
	free((void *)undo.cmds);
	free(diff);
	dp_config_free(&fresh);
}

/* ---- the socket ---- */

/* Only root and rxpath's own user may steer it, whatever the socket's mode. */
static bool peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return false;
	return cred.uid == 0 || cred.uid == geteuid();
}

static void write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;	/* the client went away: nothing to tell */
		data += n;
		len -= (size_t)n;
	}
}

static void serve_client(struct ctl_server *s, int fd)
{
	struct timeval tv = { .tv_sec = CLIENT_TIMEOUT_S };
	struct timespec deadline;
	struct rxp_sbuf out = { 0 };
	char req[CTL_REQUEST_MAX + 8];
	size_t len = 0;
	bool json;
	int ret;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (!peer_allowed(fd)) {
		static const char denied[] =
			"error\npermission denied: only root and rxpath's user may use this socket\n";

		write_all(fd, denied, sizeof(denied) - 1);
		return;
	}
	/* one deadline for the whole request: a client trickling bytes cannot hold the thread */
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_nsec += REQUEST_TIMEOUT_MS * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	while (len < sizeof(req) - 1 && !memchr(req, '\n', len)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct timespec now;
		long left_ms;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left_ms = (deadline.tv_sec - now.tv_sec) * 1000 + (deadline.tv_nsec - now.tv_nsec) / 1000000;
		if (left_ms <= 0)
			break;
		n = poll(&pfd, 1, (int)left_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		n = recv(fd, req + len, sizeof(req) - 1 - len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	req[len] = '\0';
	if (!memchr(req, '\n', len)) {
		const char *msg = len >= sizeof(req) - 1 ? "error\nrequest too long\n" :
							   "error\nincomplete request\n";

		write_all(fd, msg, strlen(msg));
		return;
	}
	if (!strncmp(req, "json ", 5)) {
		json = true;
	} else if (!strncmp(req, "text ", 5)) {
		json = false;
	} else {
		static const char expected[] = "error\nexpected 'text COMMAND' or 'json COMMAND'\n";

		write_all(fd, expected, sizeof(expected) - 1);
		return;
	}
	ret = ctl_server_handle(s, req + 5, json, &out);
	write_all(fd, ret ? "error\n" : "ok\n", ret ? 6 : 3);
	if (out.oom)
		write_all(fd, "(out of memory: the report is cut short)\n", 41);
	if (out.len)
		write_all(fd, out.data, out.len);
	rxp_sbuf_free(&out);
}

/*
 * accept() failed for want of a file descriptor: the client would stay
 * queued, its socket readable, and poll() would spin on it. The spare
 * descriptor makes room to accept it, tell it why, and close it.
 */
static void turn_away_no_fds(struct ctl_server *s, int why)
{
	static const char msg[] = "error\nrxpath is out of file descriptors and cannot serve this request; raise its limit (ulimit -n, or LimitNOFILE= in its unit) and restart it\n";
	int fd;

	if (!s->told_no_fds) {
		fprintf(stderr, "rxpath: control socket: cannot accept a client: %s; turning clients away until descriptors are free (raise ulimit -n)\n",
			strerror(why));
		fflush(stderr);
		s->told_no_fds = true;
	}
	if (s->spare_fd >= 0) {
		close(s->spare_fd);
		s->spare_fd = -1;
	}
	fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0) {
		write_all(fd, msg, sizeof(msg) - 1);
		close(fd);
	}
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (s->spare_fd < 0)
		usleep(100 * 1000);	/* no spare either: do not spin on the queued client */
}

static void *server_thread(void *arg)
{
	struct ctl_server *s = arg;

	for (;;) {
		struct pollfd fds[4] = {
			{ .fd = s->stop_fd, .events = POLLIN },
			{ .fd = s->signal_fd, .events = POLLIN },
			{ .fd = s->listen_fd, .events = POLLIN },	/* -1: ignored */
			{ .fd = s->ksync ? rxp_ksync_fd(s->ksync) : -1, .events = POLLIN },
		};
		int timeout = s->ksync ? rxp_ksync_timeout_ms(s->ksync) : -1, n;

		n = poll(fds, 4, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "rxpath: control thread: poll: %s; control socket closed\n",
				strerror(errno));
			return NULL;
		}
		if (fds[0].revents)
			return NULL;
		if (fds[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(s->signal_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				reload(s);
		}
		if (s->ksync && (n == 0 || (fds[3].revents & POLLIN))) {
			char err[512];

			if (rxp_ksync_run(s->ksync, err, sizeof(err)) < 0) {
				fprintf(stderr, "rxpath: kernel sync: %s; sync stopped\n", err);
				sync_stop(s);
			}
		}
		if (s->listen_fd >= 0 && (fds[2].revents & POLLIN)) {
			int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0) {
				serve_client(s, fd);
				close(fd);
				s->told_no_fds = false;
			} else if (errno == EMFILE || errno == ENFILE) {
				turn_away_no_fds(s, errno);
			}
		}
	}
}

/* Binds @path; a socket file left by a dead rxpath is replaced, a live one is not. */
static int bind_socket(struct ctl_server *s, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)], *slash;
	struct stat stx;
	int fd, probe;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "control socket path '%s' is longer than %zu characters; give a shorter --ctl PATH",
			 path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			int e = errno;

			snprintf(err, errlen, "control socket: cannot create directory %s: %s%s", dir,
				 strerror(e), e == EACCES ? " (run as root, or give --ctl PATH somewhere writable)" : "");
			return -e;
		}
	}
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && !connect(probe, (struct sockaddr *)&sa, sizeof(sa))) {
		close(probe);
		snprintf(err, errlen, "control socket %s: another rxpath is answering there; stop it or give --ctl PATH", path);
		return -EADDRINUSE;
	}
	if (probe >= 0)
		close(probe);
	/* what is left is a dead one's socket; anything else at that path is not ours to delete */
	if (!lstat(path, &stx) && !S_ISSOCK(stx.st_mode)) {
		snprintf(err, errlen, "control socket %s: a file that is not a socket is there; "
			 "give --ctl a path for the socket (default /run/rxpath/rxpath.sock)", path);
		return -EEXIST;
	}
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0600) ||
	    listen(fd, 16)) {
		int e = errno;

		snprintf(err, errlen, "control socket %s: %s%s", path, strerror(e),
			 e == EACCES ? " (run as root, or give --ctl PATH somewhere writable)" : "");
		if (fd >= 0)
			close(fd);
		return -e;
	}
	s->listen_fd = fd;
	snprintf(s->path, sizeof(s->path), "%s", path);
	return 0;
}

struct ctl_server *ctl_server_start(const struct ctl_server_config *cfg, char *err, size_t errlen)
{
	struct ctl_server *s = calloc(1, sizeof(*s));
	sigset_t hup;
	int ret;

	if (!s) {
		snprintf(err, errlen, "out of memory for the control thread");
		return NULL;
	}
	s->cfg = *cfg;
	s->listen_fd = s->signal_fd = -1;
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	s->stop_fd = eventfd(0, EFD_CLOEXEC);
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	s->signal_fd = signalfd(-1, &hup, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->stop_fd < 0 || s->signal_fd < 0) {
		snprintf(err, errlen, "control thread: %s", strerror(errno));
		goto err;
	}
	if (cfg->socket_path && bind_socket(s, cfg->socket_path, err, errlen)) {
		if (!cfg->socket_optional)
			goto err;
		fprintf(stderr, "rxpath run: %s; running without a control socket\n", err);
	}
	if (cfg->active->sync.on &&
	    sync_start(s, cfg->active->sync.table, cfg->active->sync.interval_ms, err, errlen) < 0)
		goto err_socket;
	ret = pthread_create(&s->thread, NULL, server_thread, s);
	if (ret) {
		snprintf(err, errlen, "control thread: %s", strerror(ret));
		goto err_socket;
	}
	return s;

err_socket:
	sync_stop(s);
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		unlink(s->path);
	}
err:
	if (s->signal_fd >= 0)
		close(s->signal_fd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	free(s);
	return NULL;
}

void ctl_server_stop(struct ctl_server *s)
{
	uint64_t one = 1;

	if (!s)
		return;
	if (write(s->stop_fd, &one, sizeof(one)) != sizeof(one))
		fprintf(stderr, "rxpath: cannot wake the control thread: %s\n", strerror(errno));
	pthread_join(s->thread, NULL);
	if (s->capture) {
		/* the datapath has stopped polling: its stack is ours to detach from */
		char err[300];
		struct rxp_capture_file_stats st;

		if (rxp_capture_file_stop(&s->cfg.ctl->dp->stack, s->capture, &st, err, sizeof(err)))
			fprintf(stderr, "rxpath: capture: %s\n", err);
		else
			fprintf(stderr, "rxpath: capture to the end: %llu packets written, %llu lost\n",
				(unsigned long long)st.written, (unsigned long long)st.lost);
	}
	if (s->ksync)
		rxp_ksync_close(s->ksync);	/* the datapath is gone: nothing to withdraw from */
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		unlink(s->path);
	}
	close(s->signal_fd);
	close(s->stop_fd);
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	free(s);
}
