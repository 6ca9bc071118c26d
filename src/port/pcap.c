/* SPDX-License-Identifier: MIT */
/*
 * The pcap port: "pcap:in=FILE,out=FILE,mac=MAC".
 *
 * Every frame of @in is received on the port's one queue, in file order;
 * every frame transmitted is appended to @out. Either file may be left out,
 * not both. This driver feeds conformance tests and replays, not line rate:
 * it copies each frame out of libpcap's buffer into a pool buffer, and
 * writes synchronously, so nothing is ever in flight and tx_idle() is
 * always true.
 *
 * Receive reads one frame ahead. The frame libpcap returned last stays in
 * libpcap's buffer (valid until the next pcap_next_ex() call) until a pool
 * buffer is free for it, so an empty pool delays a frame but never loses
 * it, and rx_finished() knows the file is done as soon as the last frame
 * was taken.
 *
 * Output timestamps are the wall clock (CLOCK_REALTIME), read once per
 * tx_burst: every frame of one burst carries the same time.
 *
 * clock=packets makes the input's timestamps the stack's clock (the
 * engine asks next_time_ns before each poll): a test then runs timeouts of
 * minutes or hours in the time its file says, without waiting for them.
 */
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "pcap_port.h"

#define PCAPPORT_KEYS "in, out, mac, clock"
#define PCAPPORT_SNAPLEN 65535
#define PCAPPORT_WARN_MAX 8u	/* skip warnings per port; later skips are only counted */
#define PCAPPORT_PATH_MAX 256u

struct pcapport {
	/* input */
	pcap_t *in;
	const uint8_t *next;	/* next frame to receive, in libpcap's buffer; NULL: none left */
	uint32_t next_len;
	uint64_t next_ts_ns;	/* its capture time */
	bool packet_clock;	/* clock=packets */
	uint64_t n_read;	/* records read from @in, skipped ones included */
	uint64_t skipped_oversize;
	uint64_t skipped_truncated;
	uint32_t refused[RXP_RX_REFUSED_MAX];	/* skipped since the last rx_burst handed them on */
	bool in_failed;		/* the file ended in a read error, not at its end */
	unsigned n_warned;
	/* output */
	pcap_t *out_dead;	/* pcap_dump_fopen() needs a handle to take the link type from */
	FILE *out_file;		/* opened at open, emptied and written from start */
	bool out_created;	/* open made the file: close removes it if the port never started */
	pcap_dumper_t *out;
	bool out_failed;	/* a flush failed; warned once */
	/* for messages */
	char port_name[RXP_PORT_NAME_MAX];
	uint32_t max_frame;
	char in_path[PCAPPORT_PATH_MAX];
	char out_path[PCAPPORT_PATH_MAX];
};

/*
 * The files pcap ports have open (ports open and close on one thread), so
 * that one port's out= never truncates what another port reads or writes.
 */
struct open_file {
	dev_t dev;
	ino_t ino;
	bool out;
	const struct pcapport *pp;
};

static struct open_file open_files[2 * RXP_PORTS_MAX];
static unsigned n_open_files;

/* The port that has the file @st open (for writing only, with @out_only), or NULL. */
static const struct pcapport *file_user(const struct stat *st, bool out_only)
{
	for (unsigned i = 0; i < n_open_files; i++)
		if (open_files[i].dev == st->st_dev && open_files[i].ino == st->st_ino &&
		    (open_files[i].out || !out_only))
			return open_files[i].pp;
	return NULL;
}

static void file_opened(const struct pcapport *pp, FILE *f, bool out)
{
	struct stat st;

	/* only files are emptied: /dev/null, a pipe or a terminal can serve several ports */
	if (f && !fstat(fileno(f), &st) && S_ISREG(st.st_mode) &&
	    n_open_files < RXP_ARRAY_SIZE(open_files))
		open_files[n_open_files++] = (struct open_file){ st.st_dev, st.st_ino, out, pp };
}

static void files_closed(const struct pcapport *pp)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < n_open_files; i++)
		if (open_files[i].pp != pp)
			open_files[kept++] = open_files[i];
	n_open_files = kept;
}

/* Slow path: says why a frame of @in was skipped, up to PCAPPORT_WARN_MAX times per port. */
static rxp_noinline void warn_skip(struct pcapport *pp, const struct pcap_pkthdr *hdr,
				   bool truncated)
{
	if (pp->n_warned > PCAPPORT_WARN_MAX)
		return;
	if (pp->n_warned++ == PCAPPORT_WARN_MAX) {
		fprintf(stderr, "rxpath: port %s: pcap in=%s: more frames dropped; counted, not reported\n",
			pp->port_name, pp->in_path);
		return;
	}
	if (truncated)
		fprintf(stderr, "rxpath: port %s: pcap in=%s: frame %llu was captured truncated (%u of %u bytes); dropped (capture_truncated), capture with a larger snap length\n",
			pp->port_name, pp->in_path, (unsigned long long)pp->n_read, hdr->caplen,
			hdr->len);
	else
		fprintf(stderr, "rxpath: port %s: pcap in=%s: frame %llu is %u bytes, larger than the pool's %u-byte maximum frame; dropped (frame_too_long), raise it with --max-frame\n",
			pp->port_name, pp->in_path, (unsigned long long)pp->n_read, hdr->caplen,
			pp->max_frame);
}

/*
 * Reads ahead to the next frame of @in that fits a buffer, skipping (and
 * counting) the others. Sets pp->next to NULL at the end of the file or on
 * a read error. Invalidates the previous pp->next.
 */
static void read_ahead(struct pcapport *pp)
{
	struct pcap_pkthdr *hdr;
	const u_char *data;
	int ret;

	pp->next = NULL;
	if (!pp->in)
		return;
	while ((ret = pcap_next_ex(pp->in, &hdr, &data)) == 1) {
		pp->n_read++;
		if (hdr->caplen < hdr->len) {
			pp->skipped_truncated++;
			pp->refused[RXP_RX_REFUSED_CUT]++;
			warn_skip(pp, hdr, true);
			continue;
		}
		if (hdr->caplen > pp->max_frame) {
			pp->skipped_oversize++;
			pp->refused[RXP_RX_REFUSED_TOO_LONG]++;
			warn_skip(pp, hdr, false);
			continue;
		}
		pp->next = data;
		pp->next_len = hdr->caplen;
		pp->next_ts_ns = (uint64_t)hdr->ts.tv_sec * 1000000000ull + (uint64_t)hdr->ts.tv_usec * 1000ull;
		return;
	}
	/* -2 is the clean end of the file; -1 a damaged one (cut short, say). */
	pp->in_failed = ret == -1;
	if (ret == -1)
		fprintf(stderr, "rxpath: port %s: pcap in=%s: read error after frame %llu: %s; no more frames from this file\n",
			pp->port_name, pp->in_path, (unsigned long long)pp->n_read,
			pcap_geterr(pp->in));
	/* Nothing is read after the end, so libpcap's buffers can go now. */
	pcap_close(pp->in);
	pp->in = NULL;
}

static uint16_t pcapport_rx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	struct pcapport *pp = q->port->priv;
	uint64_t rx_meta = rxp_pkt_rx_meta((uint16_t)q->port->pool->data_off, q->port->id, q->id);
	uint64_t bytes = 0;
	uint16_t i = 0;

	while (i < n && pp->next) {
		struct rxp_pkt *pkt = rxp_pool_alloc(q->cache);

		if (rxp_unlikely(!pkt)) {
			/* The frame stays in pp->next for a later call. */
			q->stats.rx_no_buffer++;
			break;
		}
		rxp_pkt_set_rx(pkt, rx_meta, (uint16_t)pp->next_len);
		memcpy(rxp_pkt_data(pkt), pp->next, pp->next_len);
		bytes += pp->next_len;
		pkts[i++] = pkt;
		read_ahead(pp);
	}
	/* skipped frames were received too: the poller counts them as drops */
	for (unsigned k = 0; k < RXP_RX_REFUSED_MAX; k++) {
		q->rx_refused[k] += pp->refused[k];
		q->stats.rx_packets += pp->refused[k];
		pp->refused[k] = 0;
	}
	q->stats.rx_polls++;
	q->stats.rx_nonempty += i != 0;
	q->stats.rx_packets += i;
	q->stats.rx_bytes += bytes;
	return i;
}

/* Slow path: a write to out= failed; said once, and the run ends with an error. */
static rxp_noinline void out_failed(struct pcapport *pp, int e)
{
	pp->out_failed = true;
	fprintf(stderr, "rxpath: port %s: pcap out=%s: write failed: %s; frames are being lost\n",
		pp->port_name, pp->out_path, strerror(e ? e : EIO));
}

/* Takes all @n frames: writes them to @out (if any) and frees their buffers. */
static uint16_t pcapport_tx_burst(struct rxp_queue *q, struct rxp_pkt **pkts, uint16_t n)
{
	struct pcapport *pp = q->port->priv;
	uint64_t bytes = 0;

	if (pp->out && n) {
		struct pcap_pkthdr hdr;
		struct timespec now;

		/* One clock read per burst, not per frame. */
		clock_gettime(CLOCK_REALTIME, &now);
		hdr.ts.tv_sec = now.tv_sec;
		hdr.ts.tv_usec = now.tv_nsec / 1000;
		for (uint16_t i = 0; i < n; i++) {
			hdr.caplen = hdr.len = pkts[i]->len;
			pcap_dump((u_char *)pp->out, &hdr, rxp_pkt_cdata(pkts[i]));
			bytes += pkts[i]->len;
		}
		/*
		 * Keep the file whole if the program is killed; this is no fast
		 * path. pcap_dump() does not say when its write fails: the
		 * stream's error flag does.
		 */
		if ((pcap_dump_flush(pp->out) || ferror(pcap_dump_file(pp->out))) && !pp->out_failed)
			out_failed(pp, errno);
	} else {
		for (uint16_t i = 0; i < n; i++)
			bytes += pkts[i]->len;
	}
	rxp_pool_free_bulk(q->cache, pkts, n);
	q->stats.tx_packets += n;
	q->stats.tx_bytes += bytes;
	q->stats.tx_completed += n;
	return n;
}

/* Nothing to post: buffers are taken from the cache as frames are read. */
static uint32_t pcapport_refill(struct rxp_queue *q)
{
	(void)q;
	return 0;
}

/* Nothing to reap: tx_burst frees buffers as it writes them. */
static uint32_t pcapport_complete(struct rxp_queue *q)
{
	(void)q;
	return 0;
}

static bool pcapport_rx_finished(struct rxp_queue *q)
{
	const struct pcapport *pp = q->port->priv;

	return !pp->next;
}

static bool pcapport_tx_idle(struct rxp_queue *q)
{
	(void)q;
	return true;
}

static void pcapport_close(struct rxp_port *port)
{
	struct pcapport *pp = port->priv;

	if (!pp)
		return;
	/* No buffers are held: frames wait in libpcap's, flushed here before the close. */
	if (pp->out) {
		FILE *f = pcap_dump_file(pp->out);

		if ((fflush(f) || ferror(f)) && !pp->out_failed)
			out_failed(pp, errno);
		pcap_dump_close(pp->out);
	}
	if (pp->out_file) {	/* never started: as it was, or gone again if open made it */
		fclose(pp->out_file);
		if (pp->out_created)
			unlink(pp->out_path);
	}
	files_closed(pp);
	if (pp->out_dead)
		pcap_close(pp->out_dead);
	if (pp->in)
		pcap_close(pp->in);
	free(pp);
	port->priv = NULL;
}

/*
 * Copies the value of @key to @path. Returns 0 (an absent key leaves @path
 * empty) or -errno with @err explained.
 */
static int get_path(struct rxp_args *args, const char *key, char *path, size_t len, char *err,
		    size_t errlen)
{
	const char *v = rxp_args_get(args, key);

	if (!v)
		return 0;
	if (!v[0]) {
		snprintf(err, errlen, "%s= is empty: give the path of a pcap file", key);
		return -EINVAL;
	}
	/* libpcap reads "-" as stdin/stdout and would fclose() them at close. */
	if (!strcmp(v, "-")) {
		snprintf(err, errlen, "%s=-: standard streams are not supported; use %s",
			 key, !strcmp(key, "in") ? "in=/dev/stdin" : "out=/dev/stdout");
		return -EINVAL;
	}
	if (strlen(v) >= len) {
		snprintf(err, errlen, "%s=%.32s...: the path is too long (at most %zu characters)",
			 key, v, len - 1);
		return -ENAMETOOLONG;
	}
	snprintf(path, len, "%s", v);
	return 0;
}

/* Returns -errno for a libpcap open that failed, with errno sampled by the caller. */
static int open_errno(int e)
{
	return e > 0 ? -e : -EINVAL;
}

/* Returns libpcap's message without the "PATH: " it may start with: ours names the path. */
static const char *strip_path(const char *msg, const char *path)
{
	size_t len = strlen(path);

	if (!strncmp(msg, path, len) && !strncmp(msg + len, ": ", 2))
		return msg + len + 2;
	return msg;
}

static int open_in(struct pcapport *pp, char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	const struct pcapport *user;
	struct stat st;
	int linktype;

	if (!stat(pp->in_path, &st) && (user = file_user(&st, true))) {
		snprintf(err, errlen, "pcap in=%s is port %s's out= file, which the run empties as it starts; name another file",
			 pp->in_path, user->port_name);
		return -EINVAL;
	}
	errno = 0;
	pp->in = pcap_open_offline(pp->in_path, perr);
	if (!pp->in) {
		int ret = open_errno(errno);

		snprintf(err, errlen, "pcap in=%s: cannot read it: %s; give a readable pcap file",
			 pp->in_path, strip_path(perr, pp->in_path));
		return ret;
	}
	linktype = pcap_datalink(pp->in);
	if (linktype != DLT_EN10MB) {
		const char *name = pcap_datalink_val_to_name(linktype);
		const char *desc = pcap_datalink_val_to_description(linktype);

		snprintf(err, errlen, "pcap in=%s: link type %s (%s, %d) is not Ethernet; only EN10MB captures can be received (convert with editcap -T ether)",
			 pp->in_path, name ? name : "?", desc ? desc : "unknown", linktype);
		return -EINVAL;
	}
	file_opened(pp, pcap_file(pp->in), false);
	return 0;
}

static int open_out(struct pcapport *pp, char *err, size_t errlen)
{
	struct stat st_in, st_out;
	const struct pcapport *user;
	int fd;

	/* The run empties out: it must not be the file being read. */
	if (pp->in_path[0] && !stat(pp->in_path, &st_in) && !stat(pp->out_path, &st_out) &&
	    st_in.st_dev == st_out.st_dev && st_in.st_ino == st_out.st_ino) {
		snprintf(err, errlen, "pcap out=%s is the same file as in=%s; writing would destroy the input, name another file",
			 pp->out_path, pp->in_path);
		return -EINVAL;
	}
	if (!stat(pp->out_path, &st_out) && (user = file_user(&st_out, false))) {
		snprintf(err, errlen, "pcap out=%s is a file port %s has open; writing would destroy it, name another file",
			 pp->out_path, user->port_name);
		return -EINVAL;
	}
	pp->out_dead = pcap_open_dead(DLT_EN10MB, PCAPPORT_SNAPLEN);
	if (!pp->out_dead) {
		snprintf(err, errlen, "pcap out=%s: out of memory", pp->out_path);
		return -ENOMEM;
	}
	/*
	 * Opened, not emptied: a command that fails after the ports open ends
	 * the run before it starts, and must leave the file as it was.
	 */
	fd = open(pp->out_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	pp->out_created = fd >= 0;
	if (fd < 0 && errno == EEXIST)	/* there already, or a symbolic link to make it through */
		fd = open(pp->out_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0 || !(pp->out_file = fdopen(fd, "w"))) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "pcap out=%s: cannot create it: %s; give a writable path",
			 pp->out_path, strerror(e));
		return -e;
	}
	file_opened(pp, pp->out_file, true);
	return 0;
}

/* The run starts: out= is emptied and gets its file header, so a port that never transmits leaves a valid file. */
static int pcapport_start(struct rxp_port *port, char *err, size_t errlen)
{
	struct pcapport *pp = port->priv;
	struct stat st;

	if (!pp->out_file)
		return 0;
	/* a pipe or a terminal has nothing to empty */
	if (!fstat(fileno(pp->out_file), &st) && S_ISREG(st.st_mode) &&
	    ftruncate(fileno(pp->out_file), 0)) {
		int e = errno;

		snprintf(err, errlen, "pcap out=%s: cannot empty it: %s", pp->out_path, strerror(e));
		return -e;
	}
	pp->out = pcap_dump_fopen(pp->out_dead, pp->out_file);
	if (!pp->out) {
		snprintf(err, errlen, "pcap out=%s: cannot write it: %s", pp->out_path,
			 pcap_geterr(pp->out_dead));
		return -EIO;
	}
	pp->out_file = NULL;	/* the dumper's now: pcap_dump_close() closes it */
	pp->out_created = false;
	if (pcap_dump_flush(pp->out)) {
		int e = errno;

		snprintf(err, errlen, "pcap out=%s: cannot write it: %s; give a writable path with space",
			 pp->out_path, strerror(e));
		return e > 0 ? -e : -EIO;
	}
	return 0;
}

/* clock=wall (the default) or clock=packets. */
static int get_clock(struct rxp_args *args, struct pcapport *pp, char *err, size_t errlen)
{
	const char *v = rxp_args_get(args, "clock");

	if (!v || !strcmp(v, "wall"))
		return 0;
	if (strcmp(v, "packets")) {
		snprintf(err, errlen, "clock=%s: expected clock=packets (the input's timestamps drive the clock) or clock=wall", v);
		return -EINVAL;
	}
	pp->packet_clock = true;
	return 0;
}

static int pcapport_next_time(struct rxp_port *port, uint64_t *ns)
{
	const struct pcapport *pp = port->priv;

	if (!pp->packet_clock)
		return -ENOTSUP;
	if (!pp->next)
		return -ENOENT;
	*ns = pp->next_ts_ns;
	return 0;
}

static int pcapport_open(struct rxp_port *port, struct rxp_args *args, char *err, size_t errlen)
{
	struct pcapport *pp;
	int ret;

	pp = calloc(1, sizeof(*pp));
	if (!pp) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(pp->port_name, sizeof(pp->port_name), "%s", port->name);
	pp->max_frame = port->pool->max_frame;
	if ((ret = get_path(args, "in", pp->in_path, sizeof(pp->in_path), err, errlen)) ||
	    (ret = get_path(args, "out", pp->out_path, sizeof(pp->out_path), err, errlen)) ||
	    (ret = rxp_args_mac(args, "mac", port->mac, err, errlen)) ||
	    (ret = get_clock(args, pp, err, errlen)) ||
	    (ret = rxp_args_check_unused(args, PCAPPORT_KEYS, err, errlen)))
		goto err_free;
	if (pp->packet_clock && !pp->in_path[0]) {
		snprintf(err, errlen, "clock=packets takes its time from an input: give in=FILE");
		ret = -EINVAL;
		goto err_free;
	}
	if (!pp->in_path[0] && !pp->out_path[0]) {
		snprintf(err, errlen, "a pcap port needs a file: give in=FILE to receive, out=FILE to transmit, or both");
		ret = -EINVAL;
		goto err_free;
	}
	port->priv = pp;
	if (pp->in_path[0]) {
		ret = open_in(pp, err, errlen);
		if (ret)
			goto err_close;
	}
	if (pp->out_path[0]) {
		ret = open_out(pp, err, errlen);
		if (ret)
			goto err_close;
	}
	/* The first frame is read now: an empty input is finished from the start. */
	read_ahead(pp);
	return 0;

err_close:
	pcapport_close(port);
	return ret;
err_free:
	free(pp);
	return ret;
}

/* What the frame counters do not show: input frames skipped, output lost. */
static unsigned pcapport_xstats(struct rxp_port *port, struct rxp_xstat *out, unsigned max)
{
	const struct pcapport *pp = port->priv;
	const struct rxp_xstat all[] = {
		/* counted as drops too (capture_truncated, frame_too_long): not lost */
		{ "rx_skipped_truncated", pp->skipped_truncated, false },
		{ "rx_skipped_oversize", pp->skipped_oversize, false },
		{ "rx_read_error", pp->in_failed, true },
		{ "tx_write_failed", pp->out_failed, false },
	};
	unsigned n = 0;

	for (; n < RXP_ARRAY_SIZE(all) && n < max; n++)
		out[n] = all[n];
	return n;
}

const struct rxp_port_ops rxp_pcap_ops = {
	.driver = "pcap",
	.args_help = PCAPPORT_KEYS,
	.open = pcapport_open,
	.next_time_ns = pcapport_next_time,
	.rx_burst = pcapport_rx_burst,
	.tx_burst = pcapport_tx_burst,
	.refill = pcapport_refill,
	.complete = pcapport_complete,
	.rx_finished = pcapport_rx_finished,
	.tx_idle = pcapport_tx_idle,
	.start = pcapport_start,
	.close = pcapport_close,
	.xstats = pcapport_xstats,
};

int rxp_pcap_port_skipped(const struct rxp_port *port, uint64_t *oversize, uint64_t *truncated)
{
	const struct pcapport *pp = port->priv;

	if (port->ops != &rxp_pcap_ops || !pp)
		return -EINVAL;
	*oversize = pp->skipped_oversize;
	*truncated = pp->skipped_truncated;
	return 0;
}

bool rxp_pcap_port_read_failed(const struct rxp_port *port)
{
	const struct pcapport *pp = port->priv;

	return port->ops == &rxp_pcap_ops && pp && pp->in_failed;
}

bool rxp_pcap_port_flush(struct rxp_port *port)
{
	struct pcapport *pp = port->priv;

	if (port->ops != &rxp_pcap_ops || !pp || !pp->out)
		return true;
	if ((pcap_dump_flush(pp->out) || ferror(pcap_dump_file(pp->out))) && !pp->out_failed)
		out_failed(pp, errno);
	return !pp->out_failed;
}
