/* SPDX-License-Identifier: MIT */
/*
 * The datapath's mailbox. Other threads (the control socket, the metrics
 * server, kernel route sync) hand it work that runs on the datapath thread
 * between two polls, so a change to the tables is never seen half made by
 * a packet and a report reads counters that no one is writing. The poll
 * loop pays one relaxed atomic load each time it looks at the clock.
 */
#ifndef RXPATH_ENGINE_CONTROL_H
#define RXPATH_ENGINE_CONTROL_H

#include <pthread.h>
#include <stdatomic.h>
#include "dataplane.h"
#include "core/sbuf.h"

/* Work for the datapath thread: fills @out, returns 0 or -errno. */
typedef int (*control_fn)(struct dp *dp, void *arg, struct rxp_sbuf *out);

struct control_call;

struct control {
	struct dp *dp;
	atomic_bool pending;	/* a call is queued: the poll loop's only look at the mailbox */
	bool serving;		/* the datapath threads run: calls wait for the poll loop */
	bool stopped;		/* the datapath no longer serves calls */
	pthread_mutex_t lock;
	pthread_cond_t done;
	struct control_call *head, **tail;
};

/* Prepares the mailbox of @dp. Returns 0 or -errno. */
int control_init(struct control *c, struct dp *dp);

/*
 * From any thread but the datapath's: runs @fn(dp, @arg, @out) on the
 * datapath thread and waits for it. Returns what @fn returned, or
 * -ESHUTDOWN when the datapath has stopped. Before control_serve(), while
 * no datapath thread runs (start-up: the first kernel sync), @fn runs at
 * once in the caller's thread, one call at a time.
 */
int control_call(struct control *c, control_fn fn, void *arg, struct rxp_sbuf *out);

/* Before the datapath threads start: from now on calls wait for the poll loop. */
void control_serve(struct control *c);

/* Datapath thread: runs the queued calls. */
void control_run_pending(struct control *c);

/* Datapath thread, between polls: cheap when nothing is queued. */
static inline void control_service(struct control *c)
{
	if (atomic_load_explicit(&c->pending, memory_order_relaxed))
		control_run_pending(c);
}

/*
 * Datapath thread, when it stops polling: calls still queued, and any made
 * later, fail with -ESHUTDOWN.
 */
void control_stop(struct control *c);

/* Frees the mailbox; no thread may be calling any more. */
void control_destroy(struct control *c);

/* Router commands parsed on another thread, applied on the datapath's (dp_batch_apply). */
struct dp_batch {
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

/*
 * A control_fn: applies the batch @arg (a struct dp_batch) as it asks; a
 * receive sink becomes a router for it when it adds an address, route or
 * neighbour. Returns 0, or the first command's -errno (messages in ->errors).
 */
int dp_batch_apply(struct dp *dp, void *arg, struct rxp_sbuf *out);

#endif
