/* SPDX-License-Identifier: MIT */
/* Kernel sync wired to the datapath: `sync kernel`, its lines applied like ctl commands, `show routes kernel`. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "ctl_server_priv.h"
#include "engine/control.h"
#include "net/host.h"
#include "verbs.h"

/* Applies one line from kernel sync, like a ctl command. Returns 0 or -errno. */
static int sync_apply(void *ctx, const char *line)
{
	struct ctl_server *s = ctx;
	struct dp_config scratch;
	struct rxp_sbuf errors = { 0 }, out = { 0 };
	struct dp_batch w = { 0 };
	char err[512];
	int ret;

	ctl_scratch_config(s->cfg.active, &scratch);
	ret = config_apply_line(&scratch, line, "sync", err, sizeof(err));
	for (unsigned i = 0; !ret && i < scratch.n_cmds; i++)
		scratch.cmds[i].kernel = true;
	if (!ret) {
		w = (struct dp_batch){ .cmds = scratch.cmds, .n_cmds = scratch.n_cmds,
					 .errors = &errors };
		ret = control_call(s->cfg.ctl, dp_batch_apply, &w, &out);
	}
	dp_config_free(&scratch);
	rxp_sbuf_free(&errors);
	rxp_sbuf_free(&out);
	return ret;
}

void ctl_sync_stop(struct ctl_server *s)
{
	if (!s->ksync)
		return;
	rxp_ksync_withdraw(s->ksync);
	rxp_ksync_close(s->ksync);
	s->ksync = NULL;
}

int ctl_sync_no_ports(char *err, size_t errlen)
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

/* The router's VRFs, as the datapath has them now: their kernel tables are mirrored too. */
static int vrfs_on_datapath(struct dp *dp, void *arg, struct rxp_sbuf *out)
{
	struct ctl_sync_vrfs *l = arg;
	const struct rxp_router *r = dp->router;

	(void)out;
	l->n = 0;
	for (unsigned v = 1; r && v < r->n_vrfs && l->n < RXP_KSYNC_VRFS_MAX; v++) {
		/* one whose table is the one mirrored into the default table: that one it is */
		if (!r->vrfs[v].used || r->vrfs[v].table == l->main_table)
			continue;
		snprintf(l->name[l->n], sizeof(l->name[0]), "%s", r->vrfs[v].name);
		l->vrf[l->n] = (struct rxp_ksync_vrf){ .table = r->vrfs[v].table, .name = l->name[l->n] };
		l->n++;
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

/* Whether ctl_sync_start() would find a port to mirror for: one on a kernel interface, or a host path. */
bool ctl_sync_has_ports(struct ctl_server *s)
{
	const struct dp_config *a = s->cfg.active;
	char ifname[IF_NAMESIZE];
	struct tap_list t;

	for (unsigned i = 0; i < a->n_ports; i++)
		if (rxp_port_spec_kernel_if(a->ports[i].spec, ifname, sizeof(ifname)))
			return true;
	sync_taps(s, &t);
	return t.n > 0;
}

/* Starts mirroring kernel table @table and runs the first full sync. Returns lines applied or -errno. */
int ctl_sync_start(struct ctl_server *s, uint32_t table, uint32_t interval_ms, char *err,
		      size_t errlen)
{
	const struct dp_config *a = s->cfg.active;
	struct rxp_ksync_config kc = { .table = table, .resync_interval_ms = interval_ms,
				       .map = s->map, .apply = sync_apply, .ctx = s };
	int ret;

	struct tap_list taps;

	ctl_sync_stop(s);
	s->n_map = 0;
	for (unsigned i = 0; i < a->n_ports; i++) {
		if (!rxp_port_spec_kernel_if(a->ports[i].spec, s->map_ifname[s->n_map], IF_NAMESIZE))
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
		return ctl_sync_no_ports(err, errlen);
	kc.n_map = s->n_map;
	{
		struct rxp_sbuf out = { 0 };

		s->sync_vrfs.main_table = table ? table : RXP_KSYNC_TABLE_MAIN;
		if (control_call(s->cfg.ctl, vrfs_on_datapath, &s->sync_vrfs, &out))
			s->sync_vrfs.n = 0;
		rxp_sbuf_free(&out);
	}
	kc.vrfs = s->sync_vrfs.vrf;
	kc.n_vrfs = s->sync_vrfs.n;
	ret = rxp_ksync_open(&s->ksync, &kc, err, errlen);
	if (ret)
		return ret;
	s->sync_table = table;
	s->sync_interval_ms = interval_ms;
	ret = rxp_ksync_run(s->ksync, err, errlen);
	if (ret < 0)
		ctl_sync_stop(s);
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

void ctl_sync_after_changes(struct ctl_server *s, const struct dp_cmd *cmds, unsigned n,
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
		if (cmds[i].kind == DP_CMD_HOST || cmds[i].kind == DP_CMD_VRF_ADD ||
		    cmds[i].kind == DP_CMD_VRF_DEL) {
			char err[512];

			/* a VRF made or gone: its kernel table joins or leaves what is mirrored */
			if (cmds[i].kind == DP_CMD_HOST && sync_taps_current(s))
				break;
			if (ctl_sync_start(s, s->sync_table, s->sync_interval_ms, err, sizeof(err)) < 0) {
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

int ctl_sync_serve(struct ctl_server *s, const struct cmd_line *l, bool json, struct rxp_sbuf *out)
{
	struct dp_config scratch;
	struct cmd_err e = { 0 };
	char err[512];
	int ret;

	ctl_scratch_config(s->cfg.active, &scratch);
	ret = verb_sync(&scratch, l, "ctl", &e);
	dp_config_free(&scratch);
	if (ret)
		return ctl_reply_error(out, json, ret, cmd_err_format(&e, err, sizeof(err)));
	if (!scratch.sync.on) {
		ctl_sync_stop(s);
		rxp_sbuf_printf(out, json ? "{\"ok\":true}\n" : "kernel sync off; its routes and neighbours withdrawn\n");
		return 0;
	}
	ret = ctl_sync_start(s, scratch.sync.table, scratch.sync.interval_ms, err, sizeof(err));
	if (ret < 0)
		return ctl_reply_error(out, json, ret, err);
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

/* The kernel interfaces of @r's next hops, each once: "r1" or "r1 r3". */
static void route_ifnames(const struct rxp_ksync_route_info *r, struct rxp_sbuf *out)
{
	for (unsigned i = 0; i < r->n_paths; i++) {
		unsigned j = 0;

		while (j < i && strcmp(r->paths[j].ifname, r->paths[i].ifname))
			j++;
		if (j == i)
			rxp_sbuf_printf(out, "%s%s", i ? " " : "", r->paths[i].ifname);
	}
}

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
		if (r->vrf[0])
			rxp_sbuf_printf(w->out, "\"vrf\":\"%s\",\"table\":%u,", r->vrf, r->table);
		if (r->type)
			rxp_sbuf_printf(w->out, "\"type\":\"%s\",", r->type);
		rxp_sbuf_printf(w->out, "\"via\":\"%s\",\"dev\":\"%s\",\"kernel_dev\":\"%s\",", g,
				r->port, r->ifname);
		if (r->n_paths > 1) {
			rxp_sbuf_printf(w->out, "\"nexthops\":[");
			for (unsigned i = 0; i < r->n_paths; i++) {
				const struct rxp_ksync_path_info *pi = &r->paths[i];

				g[0] = '\0';
				if (pi->has_gw)
					inet_ntop(af, pi->gw, g, sizeof(g));
				rxp_sbuf_printf(w->out, "%s{\"via\":\"%s\",\"dev\":\"%s\",\"kernel_dev\":\"%s\",\"weight\":%u}",
						i ? "," : "", g, pi->port, pi->ifname, pi->weight);
			}
			rxp_sbuf_printf(w->out, "],");
		}
		if (r->nhid)
			rxp_sbuf_printf(w->out, "\"nhid\":%u,", r->nhid);
		rxp_sbuf_printf(w->out, "\"metric\":%u,\"state\":\"%s\"", r->metric,
				rxp_ksync_state_name(r->state));
		if (r->error)
			rxp_sbuf_printf(w->out, ",\"error\":\"%s\"", strerror(-r->error));
		if (r->skipped)
			rxp_sbuf_printf(w->out, ",\"reason\":\"%s\"", r->skipped);
		rxp_sbuf_printf(w->out, "}");
	} else {
		rxp_sbuf_printf(w->out, "%s/%u%s%s", p, r->plen, r->vrf[0] ? " vrf " : "", r->vrf);
		if (r->type) {
			rxp_sbuf_printf(w->out, " %s (kernel", r->type);
		} else if (r->n_paths == 1) {
			rxp_sbuf_printf(w->out, "%s%s dev %s (kernel %s", r->has_gw ? " via " : "", g,
					r->port, r->ifname);
		} else if (r->n_paths) {
			for (unsigned i = 0; i < r->n_paths; i++) {
				const struct rxp_ksync_path_info *pi = &r->paths[i];

				rxp_sbuf_printf(w->out, " nexthop");
				if (pi->has_gw) {
					inet_ntop(af, pi->gw, g, sizeof(g));
					rxp_sbuf_printf(w->out, " via %s", g);
				}
				rxp_sbuf_printf(w->out, " dev %s weight %u", pi->port, pi->weight);
			}
			rxp_sbuf_printf(w->out, " (kernel ");
			route_ifnames(r, w->out);
		} else {
			rxp_sbuf_printf(w->out, " (kernel");
		}
		if (r->nhid)
			rxp_sbuf_printf(w->out, "%snhid %u", r->type || r->n_paths ? ", " : " ", r->nhid);
		rxp_sbuf_printf(w->out, "%smetric %u): %s", r->type || r->n_paths || r->nhid ? ", " : " ",
				r->metric, rxp_ksync_state_name(r->state));
		if (r->error)
			rxp_sbuf_printf(w->out, " (%s)", strerror(-r->error));
		if (r->skipped)
			rxp_sbuf_printf(w->out, " (%s)", r->skipped);
		rxp_sbuf_printf(w->out, "\n");
	}
	w->first = false;
	return 0;
}

/* show routes kernel: the kernel's table as mirrored, and what rxpath did with each route. */
int ctl_sync_show_routes(struct ctl_server *s, bool json, bool summary, struct rxp_sbuf *out)
{
	struct kernel_routes_walk w = { .out = out, .json = json, .first = true };
	struct rxp_ksync_stats st;

	if (!s->ksync)
		return ctl_reply_error(out, json, -EINVAL, "kernel sync is off; turn it on with 'sync kernel [table N]'");
	rxp_ksync_get_stats(s->ksync, &st);
	if (json)
		rxp_sbuf_printf(out, "{\"table\":%u,\"installed\":%llu,\"refused\":%llu,"
				"\"multipath\":%llu,\"skipped\":%llu,\"nexthop_objects\":%llu,\"routes\":[",
				s->sync_table, (unsigned long long)st.routes_installed,
				(unsigned long long)st.routes_refused, (unsigned long long)st.routes_multipath,
				(unsigned long long)st.routes_skipped, (unsigned long long)st.nexthop_objects);
	else
		rxp_sbuf_printf(out, "kernel table %u: %llu routes (%llu multipath), %llu installed in rxpath, "
				"%llu refused, %llu held but skipped; %llu nexthop objects; "
				"skipped: %llu on other interfaces, %llu kernel-made, %llu unsupported\n",
				s->sync_table, (unsigned long long)st.routes,
				(unsigned long long)st.routes_multipath,
				(unsigned long long)st.routes_installed, (unsigned long long)st.routes_refused,
				(unsigned long long)st.routes_skipped, (unsigned long long)st.nexthop_objects,
				(unsigned long long)st.last_dump.unmapped, (unsigned long long)st.last_dump.kernel,
				(unsigned long long)st.last_dump.unsupported);
	if (!summary)	/* the counts alone: a full table's lines are a million */
		rxp_ksync_foreach_route(s->ksync, kernel_route_one, &w);
	if (json)
		rxp_sbuf_printf(out, "]}\n");
	return 0;
}

