/* SPDX-License-Identifier: MIT */
/* `rxpath ctl`: sends one command to a running rxpath and prints the answer. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "ctl_client.h"
#include "ctl/ctl_server.h"
#include "core/sbuf.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rxpath ctl [--socket PATH] [--json] COMMAND...\n"
		"\n"
		"Sends COMMAND to the rxpath running with that control socket (default %s)\n"
		"and prints the answer; exits 1 when the command fails.\n"
		"\n"
		"  show ports | stats | drops | routes [PREFIX|ADDRESS|kernel] | neigh | pool\n"
		"  addr add|del ADDRESS/LENGTH dev PORT\n"
		"  route add|del PREFIX [via GATEWAY] [dev PORT]  (del with them: only a route that has them)\n"
		"  route add PREFIX blackhole|unreachable|prohibit\n"
		"  neigh add ADDRESS lladdr MAC dev PORT          neigh del ADDRESS dev PORT\n"
		"  port set PORT mtu N                            icmp ratelimit N [burst N]\n"
		"  port set PORT redirects|ra on|off              neigh ageing SECONDS\n"
		"  port set PORT host on|off [gro on|off] [name TAP]\n"
		"  ip source-route on|off                         sync kernel [table N] [interval S] | sync off\n"
		"  capture start rx|tx|drop|all FILE [dev PORT] [count N] [filter EXPR] | capture stop\n"
		"  help\n",
		CTL_SOCKET_DEFAULT);
}

/* Connects to @path. Returns the socket, or -1 having said why and what to do. */
static int connect_ctl(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "rxpath ctl: socket path '%s' is too long\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return fd;
	int e = errno;

	if (fd >= 0)
		close(fd);
	if (e == ENOENT || e == ECONNREFUSED)
		fprintf(stderr, "rxpath ctl: no rxpath is answering on %s: is it running? "
			"(start one with: rxpath run --ctl %s ...; or give --socket PATH)\n", path, path);
	else if (e == EACCES)
		fprintf(stderr, "rxpath ctl: %s: permission denied; run as root or as rxpath's user\n", path);
	else
		fprintf(stderr, "rxpath ctl: %s: %s\n", path, strerror(e));
	return -1;
}

int cmd_ctl(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *path = CTL_SOCKET_DEFAULT;
	struct rxp_sbuf req = { 0 }, reply = { 0 };
	bool json = false;
	char buf[4096], *body;
	int opt, fd, ret = 1;
	ssize_t sent;

	optind = 1;
	/* '+': words after the command are the command's, even when they look like options */
	while ((opt = getopt_long(argc, argv, "+s:jh", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "rxpath ctl: expected a command, like 'show stats'\n\n");
		usage(stderr);
		return 2;
	}
	rxp_sbuf_printf(&req, "%s", json ? "json" : "text");
	for (int i = optind; i < argc; i++) {
		if (strchr(argv[i], '\n')) {
			fprintf(stderr, "rxpath ctl: a command is one line; '%s' has a line break\n", argv[i]);
			goto out;
		}
		rxp_sbuf_printf(&req, " %s", argv[i]);
	}
	rxp_sbuf_printf(&req, "\n");
	if (req.oom)
		goto out;
	if (req.len > CTL_REQUEST_MAX) {
		fprintf(stderr, "rxpath ctl: the command is %zu bytes; rxpath takes %d at most\n",
			req.len, CTL_REQUEST_MAX);
		goto out;
	}
	fd = connect_ctl(path);
	if (fd < 0)
		goto out;
	/* a server that answers before it reads (a client turned away) closes first: read its answer */
	sent = send(fd, req.data, req.len, MSG_NOSIGNAL);
	if (sent != (ssize_t)req.len && !(sent < 0 && (errno == EPIPE || errno == ECONNRESET))) {
		fprintf(stderr, "rxpath ctl: sending to %s: %s\n", path,
			sent < 0 ? strerror(errno) : "the request went out cut short");
		close(fd);
		goto out;
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		rxp_sbuf_append(&reply, buf, (size_t)n);
	}
	close(fd);
	body = reply.data ? strchr(reply.data, '\n') : NULL;
	if (!body) {
		fprintf(stderr, "rxpath ctl: no answer from %s (rxpath stopped?)\n", path);
		goto out;
	}
	*body++ = '\0';
	if (!strcmp(reply.data, "ok")) {
		fputs(body, stdout);
		ret = 0;
	} else if (json && body[0] != '{') {
		/* what the server says before it knows the format (a request it could not read) */
		struct rxp_sbuf wrapped = { 0 };

		body[strcspn(body, "\n")] = '\0';
		rxp_sbuf_printf(&wrapped, "{\"error\":");
		rxp_sbuf_json_str(&wrapped, body);
		rxp_sbuf_printf(&wrapped, "}\n");
		fputs(wrapped.data ? wrapped.data : "{\"error\":\"out of memory\"}\n", stdout);
		rxp_sbuf_free(&wrapped);
	} else {
		fprintf(json ? stdout : stderr, "%s%s", json ? "" : "rxpath ctl: ", body);
	}
out:
	rxp_sbuf_free(&req);
	rxp_sbuf_free(&reply);
	return ret;
}
