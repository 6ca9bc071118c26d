/* SPDX-License-Identifier: MIT */
/*
 * The control thread: serves the Unix control socket (`rxpath ctl`) and
 * reloads the config on SIGHUP. It parses and checks every request itself
 * and hands the datapath only finished work through the mailbox.
 *
 * Protocol, one request per connection: the client sends one line,
 * "text COMMAND" or "json COMMAND"; the reply is "ok" or "error" on the
 * first line, then the report or the message.
 */
#ifndef RXPATH_CTL_CTL_SERVER_H
#define RXPATH_CTL_CTL_SERVER_H

#include "engine/control.h"

#define CTL_SOCKET_DEFAULT "/run/rxpath/rxpath.sock"
#define CTL_REQUEST_MAX 4200	/* a request: a config line (4096) and the format word */

/* Where the config came from, in order: -c files are read again on reload. */
struct config_source {
	bool is_file;
	const char *text;	/* the path, or the -e command */
};

struct ctl_server_config {
	const char *socket_path;	/* NULL: no socket (SIGHUP still reloads) */
	bool socket_optional;		/* a socket that cannot be made is warned about, not fatal */
	struct control *ctl;
	struct dp_config *active;	/* the config as last loaded; reload replaces its commands */
	const struct config_source *sources;
	unsigned n_sources;
};

struct ctl_server;

/*
 * Binds the socket (mode 0600; its directory is made if missing) and starts
 * the thread. SIGHUP must be blocked in every thread before this is called.
 * Returns the server, or NULL with @err naming the step and the fix.
 */
struct ctl_server *ctl_server_start(const struct ctl_server_config *cfg, char *err, size_t errlen);

/* Stops the thread and removes the socket. */
void ctl_server_stop(struct ctl_server *s);

/*
 * Runs one request as the socket would: @line is the command, @json the
 * reply format. Returns 0 with the report in @out, or -errno with the
 * message in @out.
 */
int ctl_server_handle(struct ctl_server *s, const char *line, bool json, struct rxp_sbuf *out);

#endif
