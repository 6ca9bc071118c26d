/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
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
#include "ctl_server_priv.h"
#include "engine/control.h"
#include "show.h"
#include "show_filter.h"
#include "show_nat.h"
#include "verbs.h"

#define CLIENT_TIMEOUT_S 2	/* a client that stops reading the answer is dropped */
/*
 * A client sends its one line at once (ctl does): one that has not within
 * this is dropped, so that clients that stall cost the others little.
 */
#define REQUEST_TIMEOUT_MS 250

/* A config holding the running ports' names, so that commands can name them. */
void ctl_scratch_config(const struct dp_config *active, struct dp_config *scratch)
{
	dp_config_default(scratch);
	scratch->n_ports = active->n_ports;
	memcpy(scratch->ports, active->ports, sizeof(scratch->ports));
	scratch->n_vlans = active->n_vlans;
	memcpy(scratch->vlans, active->vlans, sizeof(scratch->vlans));
}

int ctl_reply_error(struct rxp_sbuf *out, bool json, int ret, const char *msg)
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

/* "help": the verbs' lines. */
int ctl_help_serve(struct ctl_server *s, const struct cmd_line *l, bool json, struct rxp_sbuf *out)
{
	struct rxp_sbuf help = { 0 };

	(void)s;
	(void)l;
	if (cmd_verbs_help(CMD_IN_CTL, &help))
		return ctl_reply_error(out, json, -ENOMEM, "out of memory");
	if (json) {
		rxp_sbuf_printf(out, "{\"help\":");
		rxp_sbuf_json_str(out, help.data);
		rxp_sbuf_printf(out, "}\n");
	} else {
		rxp_sbuf_printf(out, "%s", help.data);
	}
	rxp_sbuf_free(&help);
	return 0;
}

/* The rest of show_serve for show routes, its vrf words taken out into @req. */
static int show_routes_serve(struct ctl_server *s, const struct cmd_line *l, struct show_request *req,
			     bool json, struct rxp_sbuf *out)
{
	char msg[200];
	int ret;

	if (l->n >= 3 && strlen(l->w[2]) >= sizeof(req->arg)) {
		snprintf(msg, sizeof(msg), "show routes: '%.20s...': too long (%zu characters at most): expected a prefix or address",
			 l->w[2], sizeof(req->arg) - 1);
		return ctl_reply_error(out, json, -EINVAL, msg);
	}
	if (l->n > 3) {
		snprintf(msg, sizeof(msg), "show routes: '%.31s': expected nothing more (show routes [PREFIX|ADDRESS] [vrf NAME])",
			 l->w[3]);
		return ctl_reply_error(out, json, -EINVAL, msg);
	}
	if (l->n == 3)
		snprintf(req->arg, sizeof(req->arg), "%s", l->w[2]);
	ret = control_call(s->cfg.ctl, show_run, req, out);
	if (ret == -ESHUTDOWN)
		return ctl_reply_error(out, json, ret, "rxpath is stopping");
	if (ret)
		return ctl_reply_error(out, json, ret, req->err);
	show_finish(req, out);
	return 0;
}

/* "show WHAT [ARG]": a report made on the datapath; "show routes kernel" is kernel sync's. */
int ctl_show_serve(struct ctl_server *s, const struct cmd_line *l, bool json, struct rxp_sbuf *out)
{
	struct show_request req = { .cfg = s->cfg.active, .json = json };
	char msg[200];
	int ret;

	if (l->n >= 3 && l->n <= 4 && !strcmp(l->w[1], "routes") && !strcmp(l->w[2], "kernel")) {
		if (l->n == 4 && strcmp(l->w[3], "summary"))
			return ctl_reply_error(out, json, -EINVAL, "show routes kernel: expected 'summary' or nothing more");
		return ctl_sync_show_routes(s, json, l->n == 4, out);
	}
	if (l->n >= 2 && !strcmp(l->w[1], "filter")) {
		if (l->n > 2) {
			snprintf(msg, sizeof(msg), "show filter: '%.31s': expected nothing more", l->w[2]);
			return ctl_reply_error(out, json, -EINVAL, msg);
		}
		ret = control_call(s->cfg.ctl, show_filter_run, &json, out);
		return ret == -ESHUTDOWN ? ctl_reply_error(out, json, ret, "rxpath is stopping") : ret;
	}
	if (l->n >= 2 && !strcmp(l->w[1], "nat")) {
		if (l->n > 2) {
			snprintf(msg, sizeof(msg), "show nat: '%.31s': expected nothing more", l->w[2]);
			return ctl_reply_error(out, json, -EINVAL, msg);
		}
		ret = control_call(s->cfg.ctl, show_nat_run, &json, out);
		return ret == -ESHUTDOWN ? ctl_reply_error(out, json, ret, "rxpath is stopping") : ret;
	}
	if (l->n >= 2 && !strcmp(l->w[1], "conntrack")) {
		struct show_ct_request q = { .json = json };

		if (show_conntrack_parse(l, &q, msg, sizeof(msg)))
			return ctl_reply_error(out, json, -EINVAL, msg);
		ret = control_call(s->cfg.ctl, show_conntrack_table, &q, out);
		if (ret)
			return ctl_reply_error(out, json, ret, "rxpath is stopping");
		return q.stats ? show_conntrack_stats(&q, out) : show_conntrack_list(&q, out);
	}
	if (l->n < 2)
		return ctl_reply_error(out, json, -EINVAL, "show: expected what to show: ports, stats, drops, routes [PREFIX|ADDRESS|kernel], neigh, pool, filter, conntrack [...|stats]");
	snprintf(req.what, sizeof(req.what), "%s", l->w[1]);
	/* show routes [PREFIX|ADDRESS] [vrf NAME]: the words of the VRF taken out first */
	if (!strcmp(l->w[1], "routes")) {
		struct cmd_line rest = *l;
		int n = 2;

		for (int i = 2; i < l->n; i++) {
			if (!strcmp(l->w[i], "vrf") && i + 1 < l->n && !req.vrf[0] &&
			    strlen(l->w[i + 1]) < sizeof(req.vrf)) {
				snprintf(req.vrf, sizeof(req.vrf), "%s", l->w[++i]);
				continue;
			}
			rest.w[n++] = l->w[i];
		}
		rest.n = n;
		return show_routes_serve(s, &rest, &req, json, out);
	}
	if (l->n >= 3 && strlen(l->w[2]) >= sizeof(req.arg)) {
		/* refused rather than cut: a prefix read in part would be another one */
		snprintf(msg, sizeof(msg), "show %s: '%.20s...': too long (%zu characters at most): expected a prefix or address",
			 req.what, l->w[2], sizeof(req.arg) - 1);
		return ctl_reply_error(out, json, -EINVAL, msg);
	}
	if (l->n >= 3)
		snprintf(req.arg, sizeof(req.arg), "%s", l->w[2]);
	if (!show_topic_known(req.what) || l->n > 3) {
		snprintf(msg, sizeof(msg), "show: '%.31s': expected %s", l->n > 3 ? l->w[3] : req.what,
			 l->n > 3 ? "nothing more" : show_topics());
		return ctl_reply_error(out, json, -EINVAL, msg);
	}
	ret = control_call(s->cfg.ctl, show_run, &req, out);
	if (ret == -ESHUTDOWN)
		return ctl_reply_error(out, json, ret, "rxpath is stopping");
	if (ret)
		return ctl_reply_error(out, json, ret, req.err);
	show_finish(&req, out);
	return 0;
}

/* A verb that changes the router (addr, route, ...): parsed here, applied on the datapath. */
static int handle_change(struct ctl_server *s, const struct cmd_verb *v, const struct cmd_line *l,
			 bool json, struct rxp_sbuf *out)
{
	struct dp_config scratch;
	struct rxp_sbuf errors = { 0 }, warnings = { 0 };
	struct dp_batch w = { 0 };
	struct cmd_err e = { 0 };
	char err[512];
	int ret;

	ctl_scratch_config(s->cfg.active, &scratch);
	/*
	 * a parse error names no source (the client names itself); the commands
	 * are "ctl"'s, which the log and a warning say, and an error of the engine's
	 * has it cut off below
	 */
	ret = v->parse(&scratch, l, "ctl", &e);
	if (ret) {
		cmd_err_format(&e, err, sizeof(err));
		goto fail;
	}
	if (scratch.n_ports != s->cfg.active->n_ports || scratch.n_vlans != s->cfg.active->n_vlans) {
		snprintf(err, sizeof(err), "ports are set up when rxpath starts; add the port to the config file and restart");
		ret = -EINVAL;
		goto fail;
	}
	if (scratch.ct_max != s->cfg.active->ct_max) {
		snprintf(err, sizeof(err), "conntrack max sizes the connection table when rxpath starts; set it in the config file and restart");
		ret = -EINVAL;
		goto fail;
	}
	w.cmds = scratch.cmds;
	w.n_cmds = scratch.n_cmds;
	w.all_or_nothing = scratch.n_cmds > 1;	/* one line, one change: a set's prefixes all go in or none */
	w.errors = &errors;
	w.warnings = &warnings;
	ret = control_call(s->cfg.ctl, dp_batch_apply, &w, out);
	if (ret && errors.data && !strncmp(errors.data, "ctl: ", 5))
		memmove(errors.data, errors.data + 5, errors.len - 4);	/* the client names itself */
	if (ret) {
		snprintf(err, sizeof(err), "%s", ret == -ESHUTDOWN ? "rxpath is stopping" :
			 errors.data ? errors.data : "failed");
		goto fail;
	}
	ctl_sync_after_changes(s, scratch.cmds, scratch.n_cmds, &warnings);
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
	return ctl_reply_error(out, json, ret, err);
}

int ctl_server_handle(struct ctl_server *s, const char *line, bool json, struct rxp_sbuf *out)
{
	char buf[CTL_REQUEST_MAX], msg[600], verbs[200];
	const struct cmd_verb *v;
	struct cmd_err e = { 0 };
	struct cmd_line l;
	int n;

	if (strcspn(line, "\r\n") >= sizeof(buf))
		return ctl_reply_error(out, json, -E2BIG, "request too long");
	snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(line, "\r\n"), line);
	v = cmd_verb_of(buf, CMD_IN_CTL);
	n = cmd_split(&l, buf, v ? &v->shape : NULL, &e);
	if (n == -E2BIG && v && v->too_many)
		return ctl_reply_error(out, json, -EINVAL, v->too_many);
	if (n < 0)
		return ctl_reply_error(out, json, -EINVAL, cmd_err_format(&e, msg, sizeof(msg)));
	if (n == 0)
		return ctl_reply_error(out, json, -EINVAL, "empty command; 'help' lists them");
	if (!v) {
		char unknown[512];	/* as long as a message of the config's could be */

		snprintf(unknown, sizeof(unknown), "'%s': expected a command: %s", l.w[0],
			 cmd_verbs_list(CMD_IN_CTL, verbs, sizeof(verbs)));
		return ctl_reply_error(out, json, -EINVAL, unknown);
	}
	if (v->serve)
		return v->serve(s, &l, json, out);
	return handle_change(s, v, &l, json, out);
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
				ctl_reload(s);
		}
		if (s->ksync && (n == 0 || (fds[3].revents & POLLIN))) {
			char err[512];

			if (rxp_ksync_run(s->ksync, err, sizeof(err)) < 0) {
				fprintf(stderr, "rxpath: kernel sync: %s; sync stopped\n", err);
				ctl_sync_stop(s);
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
	    ctl_sync_start(s, cfg->active->sync.table, cfg->active->sync.interval_ms, err, errlen) < 0)
		goto err_socket;
	ret = pthread_create(&s->thread, NULL, server_thread, s);
	if (ret) {
		snprintf(err, errlen, "control thread: %s", strerror(ret));
		goto err_socket;
	}
	return s;

err_socket:
	ctl_sync_stop(s);
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

		struct dp *dp = s->cfg.ctl->dp;
		struct rxp_stack *stacks[DP_WORKERS_MAX];

		for (unsigned k = 0; k < dp->n_workers; k++)
			stacks[k] = dp_stack(dp, k);
		if (rxp_capture_file_stop_stacks(stacks, dp->n_workers, s->capture, &st, err, sizeof(err)))
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
