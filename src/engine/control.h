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

#endif
