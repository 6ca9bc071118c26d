/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "metrics.h"
#include "show_filter.h"
#include "show_nat.h"

#define METRICS_CONNECTIONS_MAX 16u	/* scrapers are few; a flood must not cost threads */
#define METRICS_TIMEOUT_S 10u		/* idle connections are closed after this */
#define LABEL_MAX (2 * RXP_PORT_NAME_MAX)	/* a port name with every byte escaped */

struct metrics_server {
	struct MHD_Daemon *daemon;
	struct control *ctl;
	struct metrics_meta meta;
	atomic_uint in_flight;	/* handlers between their look at @stopping and their reply */
	atomic_bool stopping;
	char address[INET6_ADDRSTRLEN + 8];
	char log[256];		/* libmicrohttpd's last message, for start-up errors */
};

/* ---- the page ---- */

/* One counter read at @off in a stats struct. */
struct counter_def {
	const char *name;
	const char *help;
	size_t off;
};

#define COUNTER(type, field, metric, help) { metric, help, offsetof(type, field) },
#define QUEUE_COUNTER(field, metric, help) COUNTER(struct rxp_queue_stats, field, metric, help)
static const struct counter_def queue_counters[] = { RXP_QUEUE_COUNTERS(QUEUE_COUNTER) };

#define STACK_COUNTER(field, metric, help) COUNTER(struct rxp_stack_stats, field, metric, help)
static const struct counter_def stack_counters[] = { RXP_STACK_COUNTERS(STACK_COUNTER) };

#define POOL_COUNTER(field, metric, help) COUNTER(struct rxp_pool_stats, field, metric, help)
static const struct counter_def pool_counters[] = { RXP_POOL_COUNTERS(POOL_COUNTER) };

static uint64_t counter_at(const void *stats, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)stats + off, sizeof(v));
	return v;
}

/* A label value with \, " and newline escaped, as the format asks; cut at @size. */
static void escape_label(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	for (; *src && n + 3 <= size; src++) {
		if (*src == '\\' || *src == '"') {
			dst[n++] = '\\';
			dst[n++] = *src;
		} else if (*src == '\n') {
			dst[n++] = '\\';
			dst[n++] = 'n';
		} else {
			dst[n++] = *src;
		}
	}
	dst[n] = '\0';
}

static void family(struct rxp_sbuf *out, const char *name, const char *type, const char *help)
{
	rxp_sbuf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int metrics_render(struct dp *dp, void *arg, struct rxp_sbuf *out)
{
	const struct metrics_meta *meta = arg;
	struct dp_totals t;
	const struct rxp_stack_stats *ss = &t.stack;
	char port[DP_PORTS_MAX][LABEL_MAX + 1];
	size_t i;

	/* every worker's counters (the others wait between polls while this runs) */
	dp_totals(dp, &t);

	for (unsigned p = 0; p < dp->n_ports; p++)
		escape_label(port[p], sizeof(port[p]), dp->ports[p].name);

	family(out, "rxpath_port_info", "gauge", "Always 1: a configured port, its driver and MAC.");
	for (unsigned p = 0; p < dp->n_ports; p++) {
		const struct rxp_port *pt = &dp->ports[p];
		const uint8_t *m = pt->mac;

		rxp_sbuf_printf(out, "rxpath_port_info{port=\"%s\",driver=\"%s\",queues=\"%u\","
				"mac=\"%02x:%02x:%02x:%02x:%02x:%02x\"} 1\n",
				port[p], pt->ops->driver, pt->n_queues, m[0], m[1], m[2], m[3], m[4],
				m[5]);
	}

	for (i = 0; i < RXP_ARRAY_SIZE(queue_counters); i++) {
		const struct counter_def *c = &queue_counters[i];

		family(out, c->name, "counter", c->help);
		for (unsigned p = 0; p < dp->n_ports; p++)
			for (uint16_t q = 0; q < dp->ports[p].n_queues; q++)
				rxp_sbuf_printf(out, "%s{port=\"%s\",queue=\"%u\"} %" PRIu64 "\n",
						c->name, port[p], q,
						counter_at(&dp->ports[p].queues[q].stats, c->off));
	}

	/* every reason for every port, zeros too: a series exists before its first drop */
	family(out, "rxpath_drops_total", "counter",
	       "Packets dropped by the stack, by ingress port and reason (see rxpath(8)).");
	for (unsigned p = 0; p < dp->n_ports; p++)
		for (int r = 0; r < RXP_DROP_MAX; r++)
			rxp_sbuf_printf(out, "rxpath_drops_total{port=\"%s\",reason=\"%s\"} %" PRIu64 "\n",
					port[p], rxp_drop_name((enum rxp_drop_reason)r),
					dp_port_drops(dp, dp->ports[p].id, (unsigned)r));

	family(out, "rxpath_port_driver_total", "counter",
	       "A port driver's own counters: afpacket and afxdp with the kernel's view (ring full, kicks, wakeups), pcap's input and output files.");
	for (unsigned p = 0; p < dp->n_ports; p++) {
		struct rxp_xstat xs[RXP_XSTATS_MAX];
		unsigned n = rxp_port_xstats(&dp->ports[p], xs, RXP_XSTATS_MAX);

		for (unsigned k = 0; k < n; k++)
			rxp_sbuf_printf(out, "rxpath_port_driver_total{port=\"%s\",driver=\"%s\",counter=\"%s\"} %" PRIu64 "\n",
					port[p], dp->ports[p].ops->driver, xs[k].name, xs[k].value);
	}

	family(out, "rxpath_host_total", "counter",
	       "A port's host path (its TAP twin for the kernel): packets and bytes each way, GRO and GSO, errors.");
	for (unsigned p = 0; p < dp->n_ports; p++) {
		struct rxp_xstat xs[RXP_XSTATS_MAX];
		unsigned n = dp_host_counters(dp, dp->ports[p].id, xs, RXP_XSTATS_MAX);

		for (unsigned k = 0; k < n; k++)
			rxp_sbuf_printf(out, "rxpath_host_total{port=\"%s\",counter=\"%s\"} %" PRIu64 "\n",
					port[p], xs[k].name, xs[k].value);
	}

	family(out, "rxpath_delivered_packets_total", "counter",
	       "Packets delivered locally, by class (udp4, tcp4, echo4, arp, nd, ...).");
	for (int c = 0; c < RXP_SINK_MAX; c++)
		rxp_sbuf_printf(out, "rxpath_delivered_packets_total{class=\"%s\"} %" PRIu64 "\n",
				rxp_sink_name((enum rxp_sink_class)c), ss->delivered[c]);

	for (i = 0; i < RXP_ARRAY_SIZE(stack_counters); i++) {
		if (!stack_counters[i].name)
			continue;	/* a sum that has its own series (by reason) */
		family(out, stack_counters[i].name, "counter", stack_counters[i].help);
		rxp_sbuf_printf(out, "%s %" PRIu64 "\n", stack_counters[i].name,
				counter_at(ss, stack_counters[i].off));
	}

	family(out, "rxpath_pool_buffers", "gauge", "Buffers in the pool.");
	rxp_sbuf_printf(out, "rxpath_pool_buffers %u\n", dp->pool->n_bufs);
	/* exact here: the workers' caches are still while this runs */
	family(out, "rxpath_pool_buffers_free", "gauge",
	       "Buffers free in the shared ring and the workers' caches; the rest are in rings or in flight.");
	rxp_sbuf_printf(out, "rxpath_pool_buffers_free %u\n",
			rxp_pool_ring_count(dp->pool) + t.in_caches);
	family(out, "rxpath_pool_buffer_size_bytes", "gauge", "Stride of one buffer.");
	rxp_sbuf_printf(out, "rxpath_pool_buffer_size_bytes %u\n", dp->pool->buf_size);
	for (i = 0; i < RXP_ARRAY_SIZE(pool_counters); i++) {
		family(out, pool_counters[i].name, "counter", pool_counters[i].help);
		rxp_sbuf_printf(out, "%s %" PRIu64 "\n", pool_counters[i].name,
				counter_at(&t.pool, pool_counters[i].off));
	}

	show_filter_metrics(dp, out);
	show_nat_metrics(dp, out);

	if (meta && meta->start_time > 0) {
		family(out, "rxpath_start_time_seconds", "gauge",
		       "Unix time at which the metrics server started.");
		rxp_sbuf_printf(out, "rxpath_start_time_seconds %.3f\n", meta->start_time);
	}
	return out->oom ? -ENOMEM : 0;
}

/* ---- the listen address ---- */

int metrics_parse_listen(const char *listen, struct sockaddr_storage *addr, socklen_t *addrlen,
			 char *err, size_t errlen)
{
	char host[INET6_ADDRSTRLEN];
	const char *port_text, *colon;
	size_t host_len;
	uint64_t port;
	bool v6 = false;

	memset(addr, 0, sizeof(*addr));
	if (listen[0] == '[') {
		const char *end = strchr(listen, ']');

		if (!end || end[1] != ':')
			goto bad;
		host_len = (size_t)(end - listen - 1);
		if (host_len >= sizeof(host))
			goto bad;
		memcpy(host, listen + 1, host_len);
		host[host_len] = '\0';
		port_text = end + 2;
		v6 = true;
	} else if ((colon = strchr(listen, ':'))) {
		/* a bare IPv6 address has more colons: it needs brackets */
		if (strchr(colon + 1, ':'))
			goto bad;
		host_len = (size_t)(colon - listen);
		if (host_len >= sizeof(host))
			goto bad;
		memcpy(host, listen, host_len);
		host[host_len] = '\0';
		if (!strcmp(host, "localhost"))
			strcpy(host, "127.0.0.1");
		port_text = colon + 1;
	} else {
		/* no address: loopback, never every interface by surprise */
		strcpy(host, "127.0.0.1");
		port_text = listen;
	}
	if (rxp_parse_u64(port_text, 0, UINT16_MAX, &port))
		goto bad;
	if (v6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)addr;

		if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
			goto bad;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*addrlen = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)addr;

		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			goto bad;
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*addrlen = sizeof(*sin);
	}
	return 0;
bad:
	snprintf(err, errlen, "%s: expected %s", listen, METRICS_LISTEN_HELP);
	return -EINVAL;
}

/* "127.0.0.1:9417" or "[::1]:9417" */
static void format_address(char *dst, size_t size, const struct sockaddr_storage *addr,
			   uint16_t port)
{
	char host[INET6_ADDRSTRLEN];

	if (addr->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)addr)->sin6_addr, host, sizeof(host));
		snprintf(dst, size, "[%s]:%u", host, port);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)addr)->sin_addr, host, sizeof(host));
		snprintf(dst, size, "%s:%u", host, port);
	}
}

/* ---- HTTP ---- */

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *text)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result serve_metrics(struct metrics_server *srv, struct MHD_Connection *conn)
{
	struct rxp_sbuf page = { 0 };
	struct MHD_Response *resp;
	enum MHD_Result ret;
	int err;

	/*
	 * Announce the call before looking at @stopping; metrics_stop() sets
	 * @stopping before reading @in_flight. Both sequentially consistent, so
	 * either this handler sees the stop or the stopper waits for it.
	 */
	atomic_fetch_add(&srv->in_flight, 1);
	if (atomic_load(&srv->stopping))
		err = -ESHUTDOWN;
	else
		err = control_call(srv->ctl, metrics_render, &srv->meta, &page);
	atomic_fetch_sub(&srv->in_flight, 1);

	if (err == -ESHUTDOWN) {
		rxp_sbuf_free(&page);
		return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "rxpath is stopping\n");
	}
	if (err || page.oom || !page.data) {
		rxp_sbuf_free(&page);
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory rendering the metrics\n");
	}
	/* the page was malloc'd by the sbuf: libmicrohttpd takes it and free()s it */
	resp = MHD_create_response_from_buffer(page.len, page.data, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		rxp_sbuf_free(&page);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, METRICS_CONTENT_TYPE);
	ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are served\n");
	if (!strcmp(url, "/metrics"))
		return serve_metrics(cls, conn);
	if (!strcmp(url, "/"))
		return reply(conn, MHD_HTTP_OK, "rxpath: Prometheus metrics are at /metrics\n");
	return reply(conn, MHD_HTTP_NOT_FOUND, "not found: rxpath serves /metrics\n");
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
	struct metrics_server *srv = cls;
	size_t n;

	vsnprintf(srv->log, sizeof(srv->log), fmt, ap);
	n = strlen(srv->log);
	while (n && (srv->log[n - 1] == '\n' || srv->log[n - 1] == '.'))
		srv->log[--n] = '\0';
}

/* Says why the daemon did not start and what to do about it. */
static void explain_start_failure(const struct metrics_server *srv, int err_no, char *err,
				  size_t errlen)
{
	const char *addr = srv->address;

	if (err_no == EADDRINUSE || strstr(srv->log, strerror(EADDRINUSE)))
		snprintf(err, errlen,
			 "--metrics %s: address already in use: another program (perhaps another "
			 "rxpath) listens there ('ss -ltnp' names it); stop it or choose another port",
			 addr);
	else if (err_no == EACCES || strstr(srv->log, strerror(EACCES)))
		snprintf(err, errlen,
			 "--metrics %s: permission denied; ports below 1024 need "
			 "CAP_NET_BIND_SERVICE: choose a port above 1023", addr);
	else if (err_no == EADDRNOTAVAIL || strstr(srv->log, strerror(EADDRNOTAVAIL)))
		snprintf(err, errlen,
			 "--metrics %s: no interface here has that address; use 127.0.0.1, [::1], "
			 "0.0.0.0 or an address 'ip addr' lists", addr);
	else
		snprintf(err, errlen, "--metrics %s: cannot start the HTTP server: %s", addr,
			 srv->log[0] ? srv->log : strerror(err_no ? err_no : EIO));
}

struct metrics_server *metrics_start(const char *listen, struct control *ctl, char *err,
				     size_t errlen)
{
	struct sockaddr_storage addr;
	struct metrics_server *srv;
	const union MHD_DaemonInfo *info;
	struct timespec ts;
	socklen_t addrlen;
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	uint16_t port;
	int err_no;

	if (metrics_parse_listen(listen, &addr, &addrlen, err, errlen))
		return NULL;
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		snprintf(err, errlen, "--metrics %s: out of memory", listen);
		return NULL;
	}
	srv->ctl = ctl;
	atomic_init(&srv->in_flight, 0);
	atomic_init(&srv->stopping, false);
	clock_gettime(CLOCK_REALTIME, &ts);
	srv->meta.start_time = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
	port = ntohs(addr.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&addr)->sin6_port
						: ((struct sockaddr_in *)&addr)->sin_port);
	format_address(srv->address, sizeof(srv->address), &addr, port);
	if (addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;

	errno = 0;
	srv->daemon = MHD_start_daemon(flags, port, NULL, NULL, on_request, srv,
				       MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
				       MHD_OPTION_CONNECTION_LIMIT, METRICS_CONNECTIONS_MAX,
				       MHD_OPTION_CONNECTION_TIMEOUT, METRICS_TIMEOUT_S,
				       MHD_OPTION_EXTERNAL_LOGGER, on_log, srv,
				       MHD_OPTION_END);
	err_no = errno;
	if (!srv->daemon) {
		explain_start_failure(srv, err_no, err, errlen);
		free(srv);
		return NULL;
	}
	/* port 0 asked the kernel for one: report the one it gave */
	info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
	if (info && info->port)
		format_address(srv->address, sizeof(srv->address), &addr, info->port);
	return srv;
}

const char *metrics_address(const struct metrics_server *srv)
{
	return srv->address;
}

void metrics_stop(struct metrics_server *srv)
{
	if (!srv)
		return;
	atomic_store(&srv->stopping, true);
	/* a scrape waiting in the mailbox would wait forever: the loop has ended, so serve it here */
	while (atomic_load(&srv->in_flight)) {
		control_run_pending(srv->ctl);
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	MHD_stop_daemon(srv->daemon);
	free(srv);
}
