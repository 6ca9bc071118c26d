/* SPDX-License-Identifier: MIT */
/* Capture control: `capture start POINT FILE ...` and `capture stop`, run on the datapath thread. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl_server_priv.h"
#include "engine/control.h"
#include "verbs.h"

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
	struct rxp_stack *stacks[DP_WORKERS_MAX];
	int ret;

	(void)out;
	/* one ring per worker, attached while they wait between polls */
	for (unsigned k = 0; k < dp->n_workers; k++)
		stacks[k] = dp_stack(dp, k);
	if (!w->start) {
		if (!s->capture) {
			snprintf(w->err, sizeof(w->err), "no capture is running");
			return -ENOENT;
		}
		ret = rxp_capture_file_stop_stacks(stacks, dp->n_workers, s->capture, &w->st, w->err,
						   sizeof(w->err));
		s->capture = NULL;
		return ret;
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
	return rxp_capture_file_start_stacks(stacks, dp->n_workers, &w->spec, &s->capture, w->err,
					     sizeof(w->err));
}

/* "capture start POINT FILE [dev PORT] [count N] [filter EXPR...]", "capture stop" */
int ctl_capture_serve(struct ctl_server *s, const struct cmd_line *l, bool json, struct rxp_sbuf *out)
{
	struct capture_work w = { .s = s, .spec = { .port = RXP_CAPTURE_FILE_ALL_PORTS } };
	char *const *words = l->w;
	int n = l->n, ret;

	if (n == 2 && !strcmp(words[1], "stop")) {
		ret = control_call(s->cfg.ctl, capture_on_datapath, &w, out);
		if (ret)
			return ctl_reply_error(out, json, ret, ret == -ESHUTDOWN ? "rxpath is stopping" : w.err);
		rxp_sbuf_printf(out, json ? "{\"written\":%llu,\"captured\":%llu,\"lost\":%llu,\"filtered\":%llu}\n" :
				"capture stopped: %llu packets written (%llu captured, %llu lost to a full buffer, %llu filtered out)\n",
				(unsigned long long)w.st.written, (unsigned long long)w.st.captured,
				(unsigned long long)w.st.lost, (unsigned long long)w.st.filtered);
		return 0;
	}
	if (n < 4 || strcmp(words[1], "start"))
		return ctl_reply_error(out, json, -EINVAL, "expected 'capture start rx|tx|drop|all FILE [dev PORT] [count N] [filter EXPR]' or 'capture stop'");
	w.start = true;
	if (rxp_capture_points_parse(words[2], &w.spec.points)) {
		char msg[200];

		snprintf(msg, sizeof(msg), "'%s': expected rx, tx, drop, all, or several joined with '+' (rx+drop)", words[2]);
		return ctl_reply_error(out, json, -EINVAL, msg);
	}
	w.spec.path = words[3];
	for (int i = 4; i < n; i += 2) {
		char msg[200];
		uint64_t v;

		if (!strcmp(words[i], "filter")) {
			/* the tokenizer gave the rest of the line after it as one word */
			if (i + 1 >= n)
				return ctl_reply_error(out, json, -EINVAL, "filter: expected an expression, like 'udp port 53'");
			w.spec.filter = words[i + 1];
			break;
		}
		if (i + 1 >= n) {
			snprintf(msg, sizeof(msg), "'%s': expected a value after it", words[i]);
			return ctl_reply_error(out, json, -EINVAL, msg);
		}
		if (!strcmp(words[i], "count")) {
			if (rxp_parse_u64(words[i + 1], 1, UINT64_MAX, &v)) {
				snprintf(msg, sizeof(msg), "count '%s': expected a number of packets, 1 or more",
					 words[i + 1]);
				return ctl_reply_error(out, json, -EINVAL, msg);
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
					return ctl_reply_error(out, json, -EINVAL, msg);
				}
			if (port < 0) {
				snprintf(msg, sizeof(msg), "'%s': no such port", words[i + 1]);
				return ctl_reply_error(out, json, -EINVAL, msg);
			}
			w.spec.port = port;
		} else {
			snprintf(msg, sizeof(msg), "'%s': expected 'dev PORT', 'count N' or 'filter EXPR'",
				 words[i]);
			return ctl_reply_error(out, json, -EINVAL, msg);
		}
	}
	ret = control_call(s->cfg.ctl, capture_on_datapath, &w, out);
	if (ret)
		return ctl_reply_error(out, json, ret, ret == -ESHUTDOWN ? "rxpath is stopping" : w.err);
	rxp_sbuf_printf(out, json ? "{\"ok\":true}\n" : "capturing %s to %s\n", words[2], words[3]);
	return 0;
}

