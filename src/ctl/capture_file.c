/* SPDX-License-Identifier: MIT */
/*
 * Capture to a pcapng file (capture_file.h): the file, its
 * header blocks, and the writer thread that drains the datapath's capture
 * ring into Enhanced Packet Blocks.
 *
 * The writer copies each record into a staging buffer and gives its ring
 * space back at once, so the datapath can refill the ring while the staged
 * blocks are written; it writes when the staging buffer is full or the ring
 * is empty, and sleeps a millisecond when there was nothing to do. The
 * datapath never waits for it: what does not fit in the ring is lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "capture_file.h"
#include "pcapng.h"

#define STAGE_BYTES (1u << 20)	/* more than the largest block (snap length 262144) */
#define IDLE_NS 1000000L	/* writer's sleep when the ring is empty */
#define NO_IF UINT32_MAX
#define RELEASE_BATCH 64	/* records copied between two releases of ring space */

struct rxp_capture_file {
	struct rxp_capture *cap[RXP_CAPTURE_FILE_RINGS_MAX];	/* one per worker: each ring has one producer */
	unsigned n_caps;
	_Atomic uint64_t claimed;	/* the count's, over every ring */
	char path[PATH_MAX];
	int fd;
	pthread_t writer;
	_Atomic bool stop;
	uint64_t start_ns;
	unsigned n_ifs;
	uint32_t if_of_port[RXP_PORTS_MAX];	/* interface id by port id; NO_IF: not captured */
	uint16_t port_of_if[RXP_PORTS_MAX];

	/* the writer thread's; the closer's once the writer is joined */
	uint8_t *stage;
	size_t stage_len;
	uint64_t stage_pkts;
	int error;		/* first write error (errno); from then on packets are discarded */

	_Atomic uint64_t written, file_bytes;
	_Atomic int write_errno;
};

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Returns 0 or -errno. */
static int write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes the staged blocks. Returns 0 or -errno (the first error sticks). */
static int stage_flush(struct rxp_capture_file *cf)
{
	int ret;

	if (!cf->stage_len)
		return -cf->error;
	ret = cf->error ? -cf->error : write_all(cf->fd, cf->stage, cf->stage_len);
	if (!ret) {
		atomic_fetch_add_explicit(&cf->file_bytes, cf->stage_len, memory_order_relaxed);
		atomic_fetch_add_explicit(&cf->written, cf->stage_pkts, memory_order_relaxed);
	} else if (!cf->error) {
		cf->error = -ret;
		atomic_store_explicit(&cf->write_errno, -ret, memory_order_relaxed);
		/*
		 * A part of the staged blocks may be in: the file is cut back to
		 * its last whole block, so that it holds what `written` says.
		 * (Should that fail too, the write's error is the one reported.)
		 */
		int cut = ftruncate(cf->fd, (off_t)atomic_load_explicit(&cf->file_bytes,
									memory_order_relaxed));

		(void)cut;
	}
	cf->stage_len = 0;
	cf->stage_pkts = 0;
	return ret;
}

/* Stages one record as an Enhanced Packet Block. */
static void stage_record(struct rxp_capture_file *cf, const struct rxp_capture_rec *rec)
{
	struct rxp_pcapng_packet p;
	char comment[96];
	int len;

	if (rec->port >= RXP_PORTS_MAX || cf->if_of_port[rec->port] == NO_IF)
		return;		/* the capture only selects ports that have an interface */
	p = (struct rxp_pcapng_packet){
		.if_id = cf->if_of_port[rec->port],
		.ts_ns = rec->ts_ns,
		.cap_len = rec->cap_len,
		.orig_len = rec->orig_len,
		.data = rec->data,
		.flags = rec->point == RXP_CAPTURE_TX ? RXP_PCAPNG_DIR_OUTBOUND : RXP_PCAPNG_DIR_INBOUND,
		.comment = rec->point == RXP_CAPTURE_DROP ?
			   rxp_drop_name((enum rxp_drop_reason)rec->reason) : NULL,
	};
	/* a filter's drop names its rule: "filter_drop forward rule 3", "... forward policy" */
	if (rec->point == RXP_CAPTURE_DROP && (rec->rule >> 31)) {
		static const char *const chains[] = { "input", "forward", "output" };
		unsigned chain = RXP_CAPTURE_RULE_CHAIN(rec->rule), num = RXP_CAPTURE_RULE_NUMBER(rec->rule);

		if (num)
			snprintf(comment, sizeof(comment), "%s %s rule %u", p.comment,
				 chain < 3 ? chains[chain] : "?", num);
		else
			snprintf(comment, sizeof(comment), "%s %s policy", p.comment,
				 chain < 3 ? chains[chain] : "?");
		p.comment = comment;
	}
	len = rxp_pcapng_epb(cf->stage + cf->stage_len, STAGE_BYTES - cf->stage_len, &p);
	if (len == -ENOSPC) {
		stage_flush(cf);
		len = rxp_pcapng_epb(cf->stage, STAGE_BYTES, &p);
	}
	if (len > 0) {
		cf->stage_len += (size_t)len;
		cf->stage_pkts++;
	}
}

/* Moves every record the rings hold into the staging buffer, ring after ring (each in its order). Returns how many. */
static uint64_t drain(struct rxp_capture_file *cf)
{
	const struct rxp_capture_rec *rec;
	uint64_t n = 0;

	for (unsigned r = 0; r < cf->n_caps; r++) {
		while ((rec = rxp_capture_peek(cf->cap[r])) != NULL) {
			stage_record(cf, rec);
			/* copied: the datapath may have the space back, a batch at a time */
			if (++n % RELEASE_BATCH == 0)
				rxp_capture_release(cf->cap[r]);
		}
		rxp_capture_release(cf->cap[r]);
	}
	return n;
}

static void *writer_main(void *arg)
{
	struct rxp_capture_file *cf = arg;
	const struct timespec idle = { .tv_sec = 0, .tv_nsec = IDLE_NS };

	for (;;) {
		/*
		 * Pairs with the release store of stop in close: once it is seen,
		 * every record the datapath published is visible to drain().
		 */
		bool stopping = atomic_load_explicit(&cf->stop, memory_order_acquire);

		if (drain(cf))
			continue;
		stage_flush(cf);
		if (stopping)
			break;
		nanosleep(&idle, NULL);
	}
	return NULL;
}

/*
 * Counts in the block just encoded at the end of the staging buffer; @len
 * is what the encoder returned. Returns 0 or -errno.
 */
static int stage_block(struct rxp_capture_file *cf, int len)
{
	if (len < 0)
		return len;
	cf->stage_len += (size_t)len;
	return 0;
}

/* The Section Header and one Interface Description Block per port, written now. */
static int write_header(struct rxp_capture_file *cf, const struct rxp_capture_file_spec *spec,
			char *err, size_t errlen)
{
	uint32_t snaplen = rxp_capture_snaplen(cf->cap[0]);
	int ret;

	ret = stage_block(cf, rxp_pcapng_shb(cf->stage, STAGE_BYTES, "rxpath"));
	for (unsigned i = 0; !ret && i < cf->n_ifs; i++)
		ret = stage_block(cf, rxp_pcapng_idb(cf->stage + cf->stage_len,
						     STAGE_BYTES - cf->stage_len, snaplen,
						     spec->port_names[cf->port_of_if[i]]));
	if (ret) {
		snprintf(err, errlen, "capture file %s: cannot encode its header (%s)", cf->path,
			 strerror(-ret));
		return ret;
	}
	ret = stage_flush(cf);
	if (ret)
		snprintf(err, errlen, "cannot write capture file %s: %s; give a path with space to write",
			 cf->path, strerror(-ret));
	return ret;
}

/* Chooses the ports: sets the interface ids and returns the port mask, or 0 with @err. */
static uint64_t choose_ports(struct rxp_capture_file *cf, const struct rxp_capture_file_spec *spec,
			     char *err, size_t errlen)
{
	uint64_t named = 0, mask;

	for (unsigned i = 0; i < spec->n_ports; i++)
		if (spec->port_names[i] && spec->port_names[i][0])
			named |= 1ull << i;
	if (spec->port == RXP_CAPTURE_FILE_ALL_PORTS) {
		mask = named;
		if (!mask)
			snprintf(err, errlen, "no port to capture on: add a port first");
	} else if (spec->port < 0 || spec->port >= RXP_PORTS_MAX ||
		   !(named >> spec->port & 1)) {
		mask = 0;
		snprintf(err, errlen, "capture on port %d: no such port; name one of the ports, or all",
			 spec->port);
	} else {
		mask = 1ull << spec->port;
	}
	for (unsigned i = 0; i < RXP_PORTS_MAX; i++) {
		cf->if_of_port[i] = NO_IF;
		if (mask >> i & 1) {
			cf->if_of_port[i] = cf->n_ifs;
			cf->port_of_if[cf->n_ifs++] = (uint16_t)i;
		}
	}
	return mask;
}

/* Starts the writer with every signal blocked: they stay the program's other threads' business. */
static int start_writer(struct rxp_capture_file *cf)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&cf->writer, NULL, writer_main, cf);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

int rxp_capture_file_open(struct rxp_capture_file **out, const struct rxp_capture_file_spec *spec,
			  char *err, size_t errlen)
{
	struct rxp_capture_config cfg = {
		.points = spec->points,
		.count = spec->count,
		.snaplen = spec->snaplen,
		.filter = spec->filter,
		.ring_bytes = spec->ring_bytes,
	};
	struct rxp_capture_file *cf;
	int ret;

	if (!spec->path || !spec->path[0]) {
		snprintf(err, errlen, "capture: no file given; name the pcapng file to write");
		return -EINVAL;
	}
	if (strlen(spec->path) >= PATH_MAX) {
		snprintf(err, errlen, "capture file %.32s...: the path is too long (at most %d characters)",
			 spec->path, PATH_MAX - 1);
		return -ENAMETOOLONG;
	}
	if (spec->n_ports > RXP_PORTS_MAX || (spec->n_ports && !spec->port_names)) {
		snprintf(err, errlen, "capture: %u port names given, at most %u", spec->n_ports,
			 RXP_PORTS_MAX);
		return -EINVAL;
	}
	cf = calloc(1, sizeof(*cf));
	if (!cf) {
		snprintf(err, errlen, "capture: out of memory");
		return -ENOMEM;
	}
	cf->fd = -1;
	snprintf(cf->path, sizeof(cf->path), "%s", spec->path);
	cfg.port_mask = choose_ports(cf, spec, err, errlen);
	if (!cfg.port_mask) {
		ret = -ENODEV;
		goto err_free;
	}
	/* the filter and the buffers first: a mistake there leaves an existing file alone */
	cf->n_caps = spec->rings ? spec->rings : 1;
	if (cf->n_caps > RXP_CAPTURE_FILE_RINGS_MAX) {
		snprintf(err, errlen, "capture: %u workers, at most %u", cf->n_caps, RXP_CAPTURE_FILE_RINGS_MAX);
		ret = -EINVAL;
		goto err_free;
	}
	if (cf->n_caps > 1)
		cfg.shared_count = &cf->claimed;
	for (unsigned r = 0; r < cf->n_caps; r++) {
		ret = rxp_capture_create(&cf->cap[r], &cfg, err, errlen);
		if (ret)
			goto err_capture;
	}
	cf->stage = malloc(STAGE_BYTES);
	if (!cf->stage) {
		snprintf(err, errlen, "capture: out of memory");
		ret = -ENOMEM;
		goto err_capture;
	}
	cf->fd = open(cf->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (cf->fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create capture file %s: %s; give a path in a writable directory",
			 cf->path, strerror(errno));
		goto err_stage;
	}
	ret = write_header(cf, spec, err, errlen);
	if (ret)
		goto err_close;
	cf->start_ns = realtime_ns();
	ret = start_writer(cf);
	if (ret) {
		snprintf(err, errlen, "capture: cannot start the writer thread: %s", strerror(-ret));
		goto err_close;
	}
	pthread_setname_np(cf->writer, "rxp-capture");
	*out = cf;
	return 0;

err_close:
	close(cf->fd);
err_stage:
	free(cf->stage);
err_capture:
	for (unsigned r = 0; r < cf->n_caps; r++)
		rxp_capture_destroy(cf->cap[r]);
err_free:
	free(cf);
	return ret;
}

struct rxp_capture *rxp_capture_file_ring(struct rxp_capture_file *cf, unsigned ring)
{
	return ring < cf->n_caps ? cf->cap[ring] : NULL;
}

struct rxp_capture *rxp_capture_file_capture(struct rxp_capture_file *cf)
{
	return cf->cap[0];
}

const char *rxp_capture_file_path(const struct rxp_capture_file *cf)
{
	return cf->path;
}

void rxp_capture_file_stats(const struct rxp_capture_file *cf, struct rxp_capture_file_stats *out)
{
	struct rxp_capture_stats s;

	memset(out, 0, sizeof(*out));
	for (unsigned r = 0; r < cf->n_caps; r++) {
		rxp_capture_stats(cf->cap[r], &s);
		out->captured += s.captured;
		out->lost += s.lost;
		out->filtered += s.filtered;
		out->count_reached |= s.count_reached;
	}
	out->written = atomic_load_explicit(&cf->written, memory_order_relaxed);
	out->file_bytes = atomic_load_explicit(&cf->file_bytes, memory_order_relaxed);
	out->write_errno = atomic_load_explicit(&cf->write_errno, memory_order_relaxed);
}

/* Appends one Interface Statistics Block per interface: when, and what the full ring lost. */
static void write_statistics(struct rxp_capture_file *cf)
{
	uint64_t end_ns = realtime_ns();

	for (unsigned i = 0; i < cf->n_ifs; i++) {
		uint64_t lost = 0;

		for (unsigned r = 0; r < cf->n_caps; r++)
			lost += rxp_capture_lost_on_port(cf->cap[r], cf->port_of_if[i]);
		int len = rxp_pcapng_isb(cf->stage + cf->stage_len, STAGE_BYTES - cf->stage_len, i,
					 end_ns, cf->start_ns, end_ns, lost);

		if (len < 0) {
			stage_flush(cf);
			len = rxp_pcapng_isb(cf->stage, STAGE_BYTES, i, end_ns, cf->start_ns, end_ns,
					     lost);
		}
		stage_block(cf, len);
	}
	stage_flush(cf);
}

int rxp_capture_file_close(struct rxp_capture_file *cf, struct rxp_capture_file_stats *final,
			   char *err, size_t errlen)
{
	struct rxp_capture_file_stats s;
	int ret;

	/* Pairs with the acquire load of stop in writer_main(). */
	atomic_store_explicit(&cf->stop, true, memory_order_release);
	pthread_join(cf->writer, NULL);
	write_statistics(cf);
	if (close(cf->fd) && !cf->error) {
		cf->error = errno;
		atomic_store_explicit(&cf->write_errno, errno, memory_order_relaxed);
	}
	rxp_capture_file_stats(cf, &s);
	ret = -cf->error;
	if (ret)
		snprintf(err, errlen, "writing capture file %s failed: %s; %llu of %llu packets are in it",
			 cf->path, strerror(cf->error), (unsigned long long)s.written,
			 (unsigned long long)s.captured);
	if (final)
		*final = s;
	for (unsigned r = 0; r < cf->n_caps; r++)
		rxp_capture_destroy(cf->cap[r]);
	free(cf->stage);
	free(cf);
	return ret;
}

int rxp_capture_file_start_stacks(struct rxp_stack *const *st, unsigned n,
				  const struct rxp_capture_file_spec *spec, struct rxp_capture_file **out,
				  char *err, size_t errlen)
{
	struct rxp_capture_file_spec one = *spec;
	int ret;

	for (unsigned w = 0; w < n; w++) {
		if (st[w]->capture) {
			snprintf(err, errlen, "a capture is already running: stop it first (capture stop)");
			return -EBUSY;
		}
	}
	one.rings = n;
	ret = rxp_capture_file_open(out, &one, err, errlen);
	if (!ret)
		for (unsigned w = 0; w < n; w++)
			rxp_stack_set_capture(st[w], rxp_capture_file_ring(*out, w));
	return ret;
}

int rxp_capture_file_stop_stacks(struct rxp_stack *const *st, unsigned n, struct rxp_capture_file *cf,
				 struct rxp_capture_file_stats *final, char *err, size_t errlen)
{
	for (unsigned w = 0; w < n; w++)
		if (st[w]->capture == rxp_capture_file_ring(cf, w))
			rxp_stack_set_capture(st[w], NULL);
	return rxp_capture_file_close(cf, final, err, errlen);
}

int rxp_capture_file_start(struct rxp_stack *st, const struct rxp_capture_file_spec *spec,
			   struct rxp_capture_file **out, char *err, size_t errlen)
{
	return rxp_capture_file_start_stacks(&st, 1, spec, out, err, errlen);
}

int rxp_capture_file_stop(struct rxp_stack *st, struct rxp_capture_file *cf,
			  struct rxp_capture_file_stats *final, char *err, size_t errlen)
{
	return rxp_capture_file_stop_stacks(&st, 1, cf, final, err, errlen);
}
