/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include "control.h"
#include "dp_filter.h"
#include "workers.h"

/* One queued call; it lives on the caller's stack while the caller waits. */
struct control_call {
	control_fn fn;
	void *arg;
	struct rxp_sbuf *out;
	int ret;
	bool finished;
	struct control_call *next;
};

int control_init(struct control *c, struct dp *dp)
{
	int ret;

	c->dp = dp;
	atomic_init(&c->pending, false);
	c->serving = false;	/* until control_serve(): calls run at once */
	c->stopped = false;
	c->head = NULL;
	c->tail = &c->head;
	ret = pthread_mutex_init(&c->lock, NULL);
	if (ret)
		return -ret;
	ret = pthread_cond_init(&c->done, NULL);
	if (ret) {
		pthread_mutex_destroy(&c->lock);
		return -ret;
	}
	return 0;
}

int control_call(struct control *c, control_fn fn, void *arg, struct rxp_sbuf *out)
{
	struct control_call call = { .fn = fn, .arg = arg, .out = out };

	pthread_mutex_lock(&c->lock);
	if (c->stopped) {
		pthread_mutex_unlock(&c->lock);
		return -ESHUTDOWN;
	}
	if (!c->serving) {
		/* no datapath thread yet to wait for: under the lock, nothing else runs either */
		call.ret = fn(c->dp, arg, out);
		pthread_mutex_unlock(&c->lock);
		return call.ret;
	}
	*c->tail = &call;
	c->tail = &call.next;
	/* release: the poll loop that sees the flag finds the call under the lock */
	atomic_store_explicit(&c->pending, true, memory_order_release);
	dp_idle_wake(&c->dp->idle);	/* worker 0 may be asleep in its idle wait */
	while (!call.finished)
		pthread_cond_wait(&c->done, &c->lock);
	pthread_mutex_unlock(&c->lock);
	return call.ret;
}

void control_serve(struct control *c)
{
	pthread_mutex_lock(&c->lock);
	c->serving = true;
	pthread_mutex_unlock(&c->lock);
}

/* Takes the whole queue; the caller holds the lock. */
static struct control_call *take_all(struct control *c)
{
	struct control_call *list = c->head;

	c->head = NULL;
	c->tail = &c->head;
	atomic_store_explicit(&c->pending, false, memory_order_relaxed);
	return list;
}

void control_run_pending(struct control *c)
{
	struct control_call *list, *next;

	pthread_mutex_lock(&c->lock);
	list = take_all(c);
	pthread_mutex_unlock(&c->lock);
	/* the calls run unlocked: a long one must not block callers queueing more */
	dp_barrier_enter(c->dp);	/* the other workers wait between two polls */
	for (struct control_call *call = list; call; call = call->next)
		call->ret = call->fn(c->dp, call->arg, call->out);
	dp_filter_publish(c->dp);	/* rules changed by the calls go in whole, before anyone polls */
	dp_barrier_exit(c->dp);
	pthread_mutex_lock(&c->lock);
	for (struct control_call *call = list; call; call = next) {
		next = call->next;	/* read before the caller may return and free it */
		call->finished = true;
	}
	pthread_cond_broadcast(&c->done);
	pthread_mutex_unlock(&c->lock);
}

void control_stop(struct control *c)
{
	struct control_call *list, *next;

	pthread_mutex_lock(&c->lock);
	c->stopped = true;
	list = take_all(c);
	for (struct control_call *call = list; call; call = next) {
		next = call->next;
		call->ret = -ESHUTDOWN;
		call->finished = true;
	}
	pthread_cond_broadcast(&c->done);
	pthread_mutex_unlock(&c->lock);
}

void control_destroy(struct control *c)
{
	pthread_cond_destroy(&c->done);
	pthread_mutex_destroy(&c->lock);
}
