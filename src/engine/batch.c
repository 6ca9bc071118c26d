/* SPDX-License-Identifier: MIT */
/*
 * A batch of router commands applied on the datapath thread in one
 * mailbox call: one at a time with its errors gathered, or all or nothing
 * (at a failure, what went in before is taken back in the same call, so
 * no packet sees half of it).
 */
#include <errno.h>
#include <stdlib.h>
#include "control.h"
#include "dp_filter.h"

int dp_batch_apply(struct dp *dp, void *arg, struct rxp_sbuf *out)
{
	struct dp_batch *w = arg;
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
	/* the rules changed go in whole now: a block that cannot be made fails the batch */
	if (!w->failed && dp_filter_commit(dp, err, sizeof(err))) {
		rxp_sbuf_printf(w->errors, "%s\n", err);
		w->failed++;
		first = first ? first : -ENOMEM;
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
	if (w->failed)
		dp_filter_publish(dp);	/* what was taken back, or kept (keep going), goes in whole */
	/* nothing took, or all was taken back: the sink stays a sink */
	if (was_sink && (!w->applied || (w->all_or_nothing && w->failed)))
		dp_router_disable(dp);
	return first;
}
