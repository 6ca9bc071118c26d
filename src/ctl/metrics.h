/* SPDX-License-Identifier: MIT */
/*
 * Prometheus metrics: the datapath's counters in the text exposition format
 * (0.0.4), served over HTTP by libmicrohttpd on its own thread. The page is
 * rendered on the datapath thread through the control mailbox, so it reads
 * counters that no one is writing. Names are listed in docs/metrics.md and
 * do not change.
 */
#ifndef RXPATH_CTL_METRICS_H
#define RXPATH_CTL_METRICS_H

#include <sys/socket.h>
#include "engine/control.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define METRICS_LISTEN_HELP "PORT, IPV4:PORT, [IPV6]:PORT or localhost:PORT (e.g. 9417, 127.0.0.1:9417, [::1]:9417)"

struct metrics_server;

/* What a page says about the process besides the counters. */
struct metrics_meta {
	double start_time;	/* Unix time the server started; 0: leave it out */
};

/*
 * Parses a listen address: "PORT" alone means 127.0.0.1:PORT; "IPV4:PORT",
 * "[IPV6]:PORT" and "localhost:PORT" bind where they say. Port 0 picks a
 * free port. Returns 0, or -EINVAL with @err naming the expected form.
 */
int metrics_parse_listen(const char *listen, struct sockaddr_storage *addr, socklen_t *addrlen,
			 char *err, size_t errlen);

/*
 * Starts serving GET /metrics on @listen; every scrape is a control_call()
 * on @ctl. Returns the server, or NULL with @err saying what failed and how
 * to fix it.
 */
struct metrics_server *metrics_start(const char *listen, struct control *ctl, char *err,
				     size_t errlen);

/* Returns the address the server listens on, "127.0.0.1:9417", with the real port. */
const char *metrics_address(const struct metrics_server *srv);

/*
 * Stops the server and frees it (NULL is ignored). Call it on the datapath
 * thread once polling has ended: a scrape still waiting in the mailbox is
 * served, or answered 503 if the mailbox is already stopped.
 */
void metrics_stop(struct metrics_server *srv);

/*
 * A control_fn: appends the exposition page for @dp to @out. @arg is a
 * const struct metrics_meta * or NULL. Returns 0 or -ENOMEM.
 */
int metrics_render(struct dp *dp, void *arg, struct rxp_sbuf *out);

#endif
