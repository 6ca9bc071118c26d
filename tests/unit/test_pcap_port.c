/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the pcap port (src/port/pcap.c) through the port API:
 * frames come out of rx_burst byte for byte in file order, in bursts no
 * larger than asked; transmitted frames land in the out file in order; a
 * nearly empty pool delays frames but loses none; oversize and truncated
 * records are skipped, counted and reported; bad arguments and files are
 * refused with a message naming the problem. Every test closes its port
 * and then audits the pool: each buffer must be back.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "port/pcap_port.h"
#include "rxpath/port.h"
#include "check.h"

#define ERR_LEN 256
#define BURST 64
#define SPEC_LEN 768


static char tmp_dir[64];

struct fx {
	struct rxp_pool *pool;
	struct rxp_pool_cache cache;
	struct rxp_port port;
	char err[ERR_LEN];
};

/* One record to write: @caplen bytes stored of a frame of @len bytes. */
struct rec {
	uint32_t caplen;
	uint32_t len;
};

static uint8_t frame_byte(unsigned frame, unsigned i)
{
	return (uint8_t)(frame * 53 + i * 11 + (i >> 8) + 1);
}

static void tmp_path(char *path, size_t len, const char *name)
{
	snprintf(path, len, "%s/%s", tmp_dir, name);
}

/* Writes @n records with libpcap; record f holds frame_byte(f, i). Returns 0 or -1. */
static int write_recs(const char *path, int linktype, const struct rec *recs, unsigned n)
{
	pcap_t *pd = pcap_open_dead(linktype, 65535);
	pcap_dumper_t *dump;
	static uint8_t frame[65536];

	if (!pd)
		return -1;
	dump = pcap_dump_open(pd, path);
	if (!dump) {
		printf("  pcap_dump_open(%s): %s\n", path, pcap_geterr(pd));
		pcap_close(pd);
		return -1;
	}
	for (unsigned f = 0; f < n; f++) {
		struct pcap_pkthdr hdr = { .caplen = recs[f].caplen, .len = recs[f].len };

		hdr.ts.tv_sec = 1700000000 + f;
		for (unsigned i = 0; i < recs[f].caplen && i < sizeof(frame); i++)
			frame[i] = frame_byte(f, i);
		pcap_dump((u_char *)dump, &hdr, frame);
	}
	pcap_dump_close(dump);
	pcap_close(pd);
	return 0;
}

/* Lengths of the plain test frames: runts to full size, both ends included. */
static uint32_t test_len(unsigned f)
{
	static const uint32_t fixed[] = { 60, 1518, 14, 64, 1514 };

	if (f < RXP_ARRAY_SIZE(fixed))
		return fixed[f];
	return 14 + (f * 397u) % 1505u;
}

/* Writes @n whole Ethernet frames of test_len() bytes. Returns 0 or -1. */
static int write_frames(const char *path, unsigned n)
{
	struct rec *recs = calloc(n ? n : 1, sizeof(*recs));
	int ret;

	if (!recs)
		return -1;
	for (unsigned f = 0; f < n; f++)
		recs[f].caplen = recs[f].len = test_len(f);
	ret = write_recs(path, DLT_EN10MB, recs, n);
	free(recs);
	return ret;
}

/* Returns true if @pkt holds record @f of @len bytes. */
static bool frame_is(const struct rxp_pkt *pkt, unsigned f, uint32_t len)
{
	const uint8_t *d = rxp_pkt_cdata(pkt);

	if (pkt->len != len)
		return false;
	for (unsigned i = 0; i < len; i++)
		if (d[i] != frame_byte(f, i))
			return false;
	return true;
}

static int fx_try_open(struct fx *f, uint16_t id, const char *spec, uint32_t n_bufs)
{
	struct rxp_pool_config cfg = { .n_bufs = n_bufs, .max_frame = 1518, .rx_offset = 2 };

	memset(f, 0, sizeof(*f));
	f->pool = rxp_pool_create(&cfg, f->err, sizeof(f->err));
	if (!f->pool) {
		printf("  rxp_pool_create: %s\n", f->err);
		return -ENOMEM;
	}
	CHECK_EQ(rxp_pool_cache_init(&f->cache, f->pool, RXP_POOL_CACHE_BATCH), 0);
	return rxp_port_open(&f->port, id, "p0", spec, f->pool, f->err, sizeof(f->err));
}

/* Opens and starts a port that must work; says why when it does not. */
static int fx_open(struct fx *f, uint16_t id, const char *spec, uint32_t n_bufs)
{
	int ret = fx_try_open(f, id, spec, n_bufs);

	if (ret) {
		printf("  rxp_port_open(%s): %d %s\n", spec, ret, f->err);
		return ret;
	}
	ret = rxp_port_start(&f->port, &f->cache, f->err, sizeof(f->err));
	if (ret)
		printf("  rxp_port_start: %d %s\n", ret, f->err);
	return ret;
}

/* Closes the port and checks that every buffer is back in the pool. */
static void fx_close(struct fx *f)
{
	struct rxp_pool_cache *caches[] = { &f->cache };

	rxp_port_close(&f->port);
	if (!f->pool)
		return;
	CHECK_EQ(rxp_pool_audit(f->pool, caches, 1), 0);
	rxp_pool_cache_close(&f->cache);
	CHECK_EQ(rxp_pool_destroy(f->pool), 0);
	f->pool = NULL;
}

static struct rxp_queue *q0(struct fx *f)
{
	return &f->port.queues[0];
}

/*
 * Reads @path back with libpcap and checks it holds exactly the test frames
 * @first .. @first + @n - 1, in order, as Ethernet. Returns the frames that matched.
 */
static unsigned check_out_file(const char *path, unsigned first, unsigned n)
{
	char perr[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, perr);
	struct pcap_pkthdr *hdr;
	const u_char *data;
	unsigned got = 0, good = 0;
	int ret;

	if (!pc) {
		printf("  pcap_open_offline(%s): %s\n", path, perr);
		check_failures++;
		return 0;
	}
	CHECK_EQ(pcap_datalink(pc), DLT_EN10MB);
	CHECK_EQ(pcap_snapshot(pc), 65535);
	while ((ret = pcap_next_ex(pc, &hdr, &data)) == 1) {
		unsigned f = first + got++;
		bool ok = hdr->caplen == hdr->len && hdr->len == test_len(f);

		for (unsigned i = 0; ok && i < hdr->caplen; i++)
			ok = data[i] == frame_byte(f, i);
		if (!ok && got - good <= 3)
			printf("  %s: record %u (%u bytes) is not frame %u\n", path, got - 1,
			       hdr->caplen, f);
		good += ok;
	}
	CHECK_EQ(ret, -2);
	CHECK_EQ(got, n);
	CHECK_EQ(good, n);
	pcap_close(pc);
	return good;
}

/* Sends stderr to a file between capture_begin() and capture_end(), which reads it back. */
struct stderr_capture {
	int saved;
	char path[128];
};

static void capture_begin(struct stderr_capture *c)
{
	int fd;

	tmp_path(c->path, sizeof(c->path), "stderr.txt");
	fflush(stderr);
	c->saved = dup(STDERR_FILENO);
	fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(c->saved >= 0 && fd >= 0);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

static void capture_end(struct stderr_capture *c, char *buf, size_t len)
{
	FILE *fp;
	size_t n = 0;

	fflush(stderr);
	dup2(c->saved, STDERR_FILENO);
	close(c->saved);
	fp = fopen(c->path, "r");
	if (fp) {
		n = fread(buf, 1, len - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
	unlink(c->path);
}

static unsigned count_lines(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* ---- registration ---- */

static void test_registered(void)
{
	const struct rxp_port_ops *ops = rxp_port_driver("pcap");

	CHECK(ops != NULL);
	if (!ops)
		return;
	CHECK(!strcmp(ops->driver, "pcap"));
	CHECK(!strcmp(ops->args_help, "in, out, mac, clock"));
	CHECK(strstr(rxp_port_drivers(), "pcap") != NULL);
	CHECK(rxp_port_driver("sim") != NULL);
}

/* ---- receive ---- */

#define N_FRAMES 300

static void test_rx_file_order(void)
{
	static const uint16_t asks[] = { 1, 2, 0, 7, 64, 3, 33, 5 };
	char in[128], spec[SPEC_LEN];
	struct rxp_pkt *pkts[BURST + 1];
	struct rxp_queue_stats st;
	uint64_t bytes = 0, polls = 0, nonempty = 0;
	unsigned got = 0, wrong = 0, round = 0;
	struct fx f;

	tmp_path(in, sizeof(in), "order.pcap");
	CHECK_EQ(write_frames(in, N_FRAMES), 0);
	snprintf(spec, sizeof(spec), "pcap:in=%s", in);
	if (fx_open(&f, 5, spec, 256)) {
		check_failures++;
		fx_close(&f);
		return;
	}
	CHECK_EQ(f.port.n_queues, 1);
	CHECK(!f.port.ops->rx_finished(q0(&f)));
	CHECK(f.port.ops->tx_idle(q0(&f)));
	while (got < N_FRAMES && round < 10 * N_FRAMES) {
		uint16_t ask = asks[round++ % RXP_ARRAY_SIZE(asks)];
		uint16_t n;

		/* poison the slot just past the request: it must stay untouched */
		pkts[ask] = (struct rxp_pkt *)&f;
		n = rxp_rx_burst(q0(&f), pkts, ask);
		polls++;
		CHECK(n <= ask);
		CHECK(pkts[ask] == (struct rxp_pkt *)&f);
		/* a file with frames left fills every request */
		CHECK_EQ(n, RXP_MIN((unsigned)ask, N_FRAMES - got));
		nonempty += n != 0;
		for (uint16_t i = 0; i < n; i++, got++) {
			struct rxp_pkt *pkt = pkts[i];

			if (!frame_is(pkt, got, test_len(got)) && wrong++ < 3)
				printf("  frame %u (len %u) differs from file frame %u (len %u)\n",
				       got, pkt->len, got, test_len(got));
			CHECK_EQ(pkt->port, 5);
			CHECK_EQ(pkt->queue, 0);
			CHECK_EQ(pkt->data_off, f.pool->data_off);
			CHECK(pkt->pool == f.pool);
			/* NET_IP_ALIGN: the IP header after 14 bytes of Ethernet is 4-byte aligned */
			CHECK_EQ(((uintptr_t)rxp_pkt_cdata(pkt) + 14) % 4, 0);
			bytes += pkt->len;
		}
		/* finished exactly when the last frame has been taken */
		CHECK_EQ(f.port.ops->rx_finished(q0(&f)), got == N_FRAMES);
		rxp_pool_free_bulk(&f.cache, pkts, n);
		f.port.ops->refill(q0(&f));
		f.port.ops->complete(q0(&f));
	}
	CHECK_EQ(got, N_FRAMES);
	CHECK_EQ(wrong, 0);
	/* past the end: nothing more, still finished */
	CHECK_EQ(rxp_rx_burst(q0(&f), pkts, BURST), 0);
	polls++;
	CHECK(f.port.ops->rx_finished(q0(&f)));
	rxp_port_stats(&f.port, &st);
	CHECK_EQ(st.rx_packets, N_FRAMES);
	CHECK_EQ(st.rx_bytes, bytes);
	CHECK_EQ(st.rx_polls, polls);
	CHECK_EQ(st.rx_nonempty, nonempty);
	CHECK_EQ(st.rx_no_buffer, 0);
	fx_close(&f);
}

static void test_rx_empty_file(void)
{
	char in[128], spec[SPEC_LEN];
	struct rxp_pkt *pkts[BURST];
	struct fx f;

	tmp_path(in, sizeof(in), "empty.pcap");
	CHECK_EQ(write_frames(in, 0), 0);
	snprintf(spec, sizeof(spec), "pcap:in=%s", in);
	CHECK_EQ(fx_open(&f, 0, spec, 64), 0);
	CHECK(f.port.ops->rx_finished(q0(&f)));
	CHECK_EQ(rxp_rx_burst(q0(&f), pkts, BURST), 0);
	CHECK_EQ(q0(&f)->stats.rx_polls, 1);
	CHECK_EQ(q0(&f)->stats.rx_nonempty, 0);
	fx_close(&f);
}

/* A pool of a few buffers: every frame still arrives, in order, across many calls. */
static void test_rx_few_buffers(void)
{
	enum { N_BUFS = 5, N = 23 };
	char in[128], spec[SPEC_LEN];
	struct rxp_pkt *pkts[BURST];
	unsigned got = 0, wrong = 0, calls = 0, short_calls = 0;
	struct fx f;

	tmp_path(in, sizeof(in), "few.pcap");
	CHECK_EQ(write_frames(in, N), 0);
	snprintf(spec, sizeof(spec), "pcap:in=%s", in);
	if (fx_open(&f, 0, spec, N_BUFS)) {
		check_failures++;
		fx_close(&f);
		return;
	}
	while (got < N && calls++ < 100) {
		uint16_t n = rxp_rx_burst(q0(&f), pkts, 16);

		CHECK(n <= N_BUFS);
		short_calls += n < RXP_MIN(16u, N - got);
		for (uint16_t i = 0; i < n; i++, got++)
			wrong += !frame_is(pkts[i], got, test_len(got));
		/* every buffer is out: the next call gets nothing and loses nothing */
		if (n == N_BUFS) {
			CHECK_EQ(rxp_rx_burst(q0(&f), pkts + n, 16), 0);
			short_calls += got < N;
			CHECK(got == N || !f.port.ops->rx_finished(q0(&f)));
		}
		rxp_pool_free_bulk(&f.cache, pkts, n);
	}
	CHECK_EQ(got, N);
	CHECK_EQ(wrong, 0);
	CHECK(f.port.ops->rx_finished(q0(&f)));
	CHECK(q0(&f)->stats.rx_no_buffer > 0);
	CHECK_EQ(q0(&f)->stats.rx_no_buffer, short_calls);
	CHECK_EQ(q0(&f)->stats.rx_packets, N);
	fx_close(&f);
}

/*
 * Oversize and truncated records are skipped and counted with one warning
 * each; the frames between them arrive in order. The first and the last
 * records are bad too, so the read-ahead at open and at the end is covered.
 */
static void test_rx_skips(void)
{
	static const struct rec recs[] = {
		{ 1519, 1519 },		/* 0: oversize, read at open */
		{ 60, 60 },		/* 1 */
		{ 60, 100 },		/* 2: truncated */
		{ 1518, 1518 },		/* 3: exactly the maximum */
		{ 9000, 9000 },		/* 4: jumbo, oversize */
		{ 2000, 3000 },		/* 5: both: counted as truncated */
		{ 64, 64 },		/* 6 */
		{ 65535, 65535 },	/* 7: oversize, the last record */
	};
	static const unsigned good[] = { 1, 3, 6 };
	char in[128], spec[SPEC_LEN], log[4096];
	struct rxp_pkt *pkts[BURST];
	struct stderr_capture cap;
	uint64_t oversize = 99, truncated = 99;
	unsigned got = 0;
	bool opened;
	struct fx f;
	uint16_t n;

	tmp_path(in, sizeof(in), "skips.pcap");
	CHECK_EQ(write_recs(in, DLT_EN10MB, recs, RXP_ARRAY_SIZE(recs)), 0);
	snprintf(spec, sizeof(spec), "pcap:in=%s", in);
	capture_begin(&cap);
	opened = fx_open(&f, 0, spec, 64) == 0;
	for (int i = 0; opened && i < 10 && !f.port.ops->rx_finished(q0(&f)); i++) {
		n = rxp_rx_burst(q0(&f), pkts, 2);
		CHECK(n <= 2);
		for (uint16_t k = 0; k < n; k++, got++) {
			if (got < RXP_ARRAY_SIZE(good))
				CHECK(frame_is(pkts[k], good[got], recs[good[got]].len));
		}
		rxp_pool_free_bulk(&f.cache, pkts, n);
	}
	capture_end(&cap, log, sizeof(log));
	if (!opened) {
		check_failures++;
		fx_close(&f);
		return;
	}
	CHECK_EQ(got, RXP_ARRAY_SIZE(good));
	CHECK(f.port.ops->rx_finished(q0(&f)));
	CHECK_EQ(rxp_pcap_port_skipped(&f.port, &oversize, &truncated), 0);
	CHECK_EQ(oversize, 3);
	CHECK_EQ(truncated, 2);
	/* received, all eight; the five skipped wait for the poller to count them as drops */
	CHECK_EQ(q0(&f)->stats.rx_packets, 8);
	CHECK_EQ(q0(&f)->rx_refused[RXP_RX_REFUSED_TOO_LONG], 3);
	CHECK_EQ(q0(&f)->rx_refused[RXP_RX_REFUSED_CUT], 2);
	CHECK_EQ(q0(&f)->stats.rx_bytes, 60 + 1518 + 64);
	/* one line per skipped record, naming the file, the record and the sizes */
	CHECK_EQ(count_lines(log), 5);
	if (count_lines(log) != 5 || oversize != 3)
		printf("  stderr was:\n%s", log);
	CHECK(strstr(log, in) != NULL);
	CHECK(strstr(log, "frame 1 is 1519 bytes") != NULL);
	CHECK(strstr(log, "frame 3 was captured truncated (60 of 100 bytes)") != NULL);
	CHECK(strstr(log, "frame 5 is 9000 bytes") != NULL);
	CHECK(strstr(log, "frame 6 was captured truncated (2000 of 3000 bytes)") != NULL);
	CHECK(strstr(log, "frame 8 is 65535 bytes") != NULL);
	CHECK(strstr(log, "1518-byte") != NULL);
	fx_close(&f);
}

/* Many bad records: a few warnings, then one line saying the rest are only counted. */
static void test_rx_skip_warnings_bounded(void)
{
	enum { N = 100 };
	struct rec recs[N + 1];
	char in[128], spec[SPEC_LEN], log[8192];
	struct rxp_pkt *pkts[BURST];
	struct stderr_capture cap;
	uint64_t oversize = 0, truncated = 0;
	bool opened;
	struct fx f;
	uint16_t n = 0;

	for (unsigned i = 0; i < N; i++)
		recs[i] = (struct rec){ 2000, 2000 };
	recs[N] = (struct rec){ 60, 60 };
	tmp_path(in, sizeof(in), "manybad.pcap");
	CHECK_EQ(write_recs(in, DLT_EN10MB, recs, N + 1), 0);
	snprintf(spec, sizeof(spec), "pcap:in=%s", in);
	capture_begin(&cap);
	opened = fx_open(&f, 0, spec, 64) == 0;
	if (opened)
		n = rxp_rx_burst(q0(&f), pkts, BURST);
	capture_end(&cap, log, sizeof(log));
	if (!opened) {
		check_failures++;
		fx_close(&f);
		return;
	}
	CHECK_EQ(n, 1);
	if (n == 1)
		CHECK(frame_is(pkts[0], N, 60));
	rxp_pool_free_bulk(&f.cache, pkts, n);
	CHECK(f.port.ops->rx_finished(q0(&f)));
	CHECK_EQ(rxp_pcap_port_skipped(&f.port, &oversize, &truncated), 0);
	CHECK_EQ(oversize, N);
	CHECK_EQ(truncated, 0);
	CHECK(count_lines(log) < 20);
	CHECK(strstr(log, "counted, not reported") != NULL);
	fx_close(&f);
}

/* A file cut short in the middle of a record: the whole records arrive, then the end. */
static void test_rx_damaged_file(void)
{
	char in[128], spec[SPEC_LEN], log[2048];
	struct rxp_pkt *pkts[BURST];
	struct stderr_capture cap;
	struct stat st;
	unsigned got = 0;
	bool opened;
	struct fx f;

	tmp_path(in, sizeof(in), "cut.pcap");
	CHECK_EQ(write_frames(in, 4), 0);
	CHECK_EQ(stat(in, &st), 0);
	/* records of 16 + 64 and 16 + 14 bytes end the file: cut into the third one's header */
	CHECK_EQ(truncate(in, st.st_size - 100), 0);
	snprintf(spec, sizeof(spec), "pcap:in=%s", in);
	capture_begin(&cap);
	opened = fx_open(&f, 0, spec, 64) == 0;
	for (int i = 0; opened && i < 5 && !f.port.ops->rx_finished(q0(&f)); i++) {
		uint16_t n = rxp_rx_burst(q0(&f), pkts, 1);

		for (uint16_t k = 0; k < n; k++, got++)
			CHECK(frame_is(pkts[k], got, test_len(got)));
		rxp_pool_free_bulk(&f.cache, pkts, n);
	}
	capture_end(&cap, log, sizeof(log));
	if (!opened) {
		check_failures++;
		fx_close(&f);
		return;
	}
	CHECK_EQ(got, 2);
	CHECK(f.port.ops->rx_finished(q0(&f)));
	CHECK(strstr(log, "read error") != NULL);
	CHECK(strstr(log, in) != NULL);
	fx_close(&f);
}

/* ---- transmit ---- */

/* Receives every frame of in= and transmits it on the same port to out=. */
static void test_rx_to_tx_roundtrip(void)
{
	char in[128], out[128], spec[SPEC_LEN];
	struct rxp_pkt *pkts[BURST];
	struct rxp_queue_stats st;
	uint64_t bytes = 0;
	unsigned got = 0;
	time_t t0 = time(NULL);
	struct fx f;
	char perr[PCAP_ERRBUF_SIZE];
	pcap_t *pc;

	tmp_path(in, sizeof(in), "rt_in.pcap");
	tmp_path(out, sizeof(out), "rt_out.pcap");
	CHECK_EQ(write_frames(in, N_FRAMES), 0);
	snprintf(spec, sizeof(spec), "pcap:in=%s,out=%s", in, out);
	if (fx_open(&f, 1, spec, 128)) {
		check_failures++;
		fx_close(&f);
		return;
	}
	for (int i = 0; i < 1000 && !f.port.ops->rx_finished(q0(&f)); i++) {
		uint16_t n = rxp_rx_burst(q0(&f), pkts, (uint16_t)(1 + i % 40));

		for (uint16_t k = 0; k < n; k++)
			bytes += pkts[k]->len;
		got += n;
		/* tx takes everything; the buffers are the driver's from here on */
		CHECK_EQ(rxp_tx_burst(q0(&f), pkts, n), n);
		CHECK(f.port.ops->tx_idle(q0(&f)));
		f.port.ops->complete(q0(&f));
	}
	CHECK_EQ(got, N_FRAMES);
	/* all buffers are back already, before close */
	CHECK_EQ(rxp_pool_ring_count(f.pool) + f.cache.count, 128);
	rxp_port_stats(&f.port, &st);
	CHECK_EQ(st.tx_packets, N_FRAMES);
	CHECK_EQ(st.tx_bytes, bytes);
	CHECK_EQ(st.tx_completed, N_FRAMES);
	CHECK_EQ(st.tx_ring_full, 0);
	/* flushed per burst: readable while the port is still open */
	CHECK_EQ(check_out_file(out, 0, N_FRAMES), N_FRAMES);
	fx_close(&f);
	CHECK_EQ(check_out_file(out, 0, N_FRAMES), N_FRAMES);
	/* timestamps: the wall clock at transmit, never going backwards in the file */
	pc = pcap_open_offline(out, perr);
	CHECK(pc != NULL);
	if (pc) {
		struct pcap_pkthdr *hdr;
		const u_char *data;
		long long prev = 0;

		while (pcap_next_ex(pc, &hdr, &data) == 1) {
			long long us = (long long)hdr->ts.tv_sec * 1000000 + hdr->ts.tv_usec;

			CHECK(hdr->ts.tv_sec >= t0 - 1 && hdr->ts.tv_sec <= time(NULL) + 1);
			CHECK(us >= prev);
			prev = us;
		}
		pcap_close(pc);
	}
}

/* A port with only out=: receives nothing, writes what it is given. */
static void test_tx_only(void)
{
	enum { N = 70 };
	char out[128], spec[SPEC_LEN];
	struct rxp_pkt *pkts[N];
	struct fx f;

	tmp_path(out, sizeof(out), "txonly.pcap");
	/* an existing file is truncated */
	CHECK_EQ(write_frames(out, 5), 0);
	snprintf(spec, sizeof(spec), "pcap:out=%s", out);
	if (fx_open(&f, 0, spec, 256)) {
		check_failures++;
		fx_close(&f);
		return;
	}
	CHECK(f.port.ops->rx_finished(q0(&f)));
	CHECK_EQ(rxp_rx_burst(q0(&f), pkts, BURST), 0);
	CHECK_EQ(check_out_file(out, 0, 0), 0);
	CHECK_EQ(rxp_pool_alloc_burst(&f.cache, pkts, N), N);
	for (unsigned i = 0; i < N; i++) {
		pkts[i]->len = (uint16_t)test_len(i);
		pkts[i]->data_off = (uint16_t)f.pool->data_off;
		for (unsigned b = 0; b < pkts[i]->len; b++)
			rxp_pkt_data(pkts[i])[b] = frame_byte(i, b);
	}
	/* a frame not at the pool's usual offset (a pushed header) is written from data_off */
	pkts[3]->data_off = (uint16_t)(f.pool->data_off - 4);
	memmove(rxp_pkt_data(pkts[3]), rxp_pkt_data(pkts[3]) + 4, pkts[3]->len);
	CHECK_EQ(rxp_tx_burst(q0(&f), pkts, 0), 0);
	CHECK_EQ(rxp_tx_burst(q0(&f), pkts, 10), 10);
	CHECK_EQ(rxp_tx_burst(q0(&f), pkts + 10, N - 10), N - 10);
	CHECK_EQ(q0(&f)->stats.tx_packets, N);
	CHECK_EQ(q0(&f)->stats.tx_completed, N);
	CHECK_EQ(check_out_file(out, 0, N), N);
	fx_close(&f);
	CHECK_EQ(check_out_file(out, 0, N), N);
}

/* A port with only in=: transmitted frames are counted and freed. */
static void test_tx_without_out(void)
{
	char in[128], spec[SPEC_LEN];
	struct rxp_pkt *pkts[BURST];
	uint16_t n;
	struct fx f;

	tmp_path(in, sizeof(in), "noout.pcap");
	CHECK_EQ(write_frames(in, 10), 0);
	snprintf(spec, sizeof(spec), "pcap:in=%s", in);
	if (fx_open(&f, 0, spec, 64)) {
		check_failures++;
		fx_close(&f);
		return;
	}
	n = rxp_rx_burst(q0(&f), pkts, BURST);
	CHECK_EQ(n, 10);
	CHECK_EQ(rxp_tx_burst(q0(&f), pkts, n), n);
	CHECK_EQ(q0(&f)->stats.tx_packets, 10);
	CHECK_EQ(q0(&f)->stats.tx_completed, 10);
	CHECK_EQ(rxp_pool_ring_count(f.pool) + f.cache.count, 64);
	fx_close(&f);
}

/* ---- arguments and errors ---- */

static void test_mac(void)
{
	char out[128], spec[SPEC_LEN];
	static const uint8_t want[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x0e };
	struct fx f;

	tmp_path(out, sizeof(out), "mac.pcap");
	snprintf(spec, sizeof(spec), "pcap:out=%s,mac=02:aa:bb:cc:dd:0e", out);
	CHECK_EQ(fx_open(&f, 0, spec, 64), 0);
	CHECK(!memcmp(f.port.mac, want, 6));
	fx_close(&f);

	/* without mac= the port keeps the default derived from its id */
	snprintf(spec, sizeof(spec), "pcap:out=%s", out);
	CHECK_EQ(fx_open(&f, 6, spec, 64), 0);
	CHECK_EQ(f.port.mac[0], 0x02);
	CHECK_EQ(f.port.mac[5], 7);
	fx_close(&f);
}

/*
 * Opens @spec, which must fail with @want_ret and a message containing
 * @want1 and @want2; then checks the failed port holds nothing.
 */
static void expect_error(const char *spec, int want_ret, const char *want1, const char *want2)
{
	struct fx f;
	int ret = fx_try_open(&f, 0, spec, 64);

	CHECK_EQ(ret, want_ret);
	if (ret != want_ret)
		printf("  %s: got %d (%s), expected %d\n", spec, ret, f.err, want_ret);
	if (want1 && !strstr(f.err, want1)) {
		printf("  %s: message '%s' does not name '%s'\n", spec, f.err, want1);
		check_failures++;
	}
	if (want2 && !strstr(f.err, want2)) {
		printf("  %s: message '%s' does not name '%s'\n", spec, f.err, want2);
		check_failures++;
	}
	CHECK(strchr(f.err, '\n') == NULL);
	CHECK(f.port.priv == NULL);
	fx_close(&f);	/* closing a port whose open failed is harmless */
}

static void test_errors(void)
{
	char in[128], raw[128], out[128], missing[128], spec[SPEC_LEN];
	static const struct rec one[] = { { 40, 40 } };

	tmp_path(in, sizeof(in), "err_in.pcap");
	tmp_path(raw, sizeof(raw), "err_raw.pcap");
	tmp_path(out, sizeof(out), "err_out.pcap");
	tmp_path(missing, sizeof(missing), "no/such.pcap");
	CHECK_EQ(write_frames(in, 3), 0);
	CHECK_EQ(write_recs(raw, DLT_RAW, one, 1), 0);

	snprintf(spec, sizeof(spec), "pcap:in=%s", missing);
	expect_error(spec, -ENOENT, missing, "No such file");
	snprintf(spec, sizeof(spec), "pcap:in=%s,out=%s", in, missing);
	expect_error(spec, -ENOENT, missing, "out=");
	snprintf(spec, sizeof(spec), "pcap:out=%s", tmp_dir);	/* a directory */
	expect_error(spec, -EISDIR, tmp_dir, "out=");
	snprintf(spec, sizeof(spec), "pcap:in=%s", tmp_dir);
	expect_error(spec, -EISDIR, tmp_dir, "in=");
	snprintf(spec, sizeof(spec), "pcap:in=%s", raw);
	expect_error(spec, -EINVAL, raw, "RAW");
	snprintf(spec, sizeof(spec), "pcap:in=%s,out=%s", raw, out);
	expect_error(spec, -EINVAL, "Ethernet", "EN10MB");
	/* not a pcap file at all: libpcap's text */
	snprintf(spec, sizeof(spec), "pcap:in=%s", "/proc/self/status");
	expect_error(spec, -EINVAL, "/proc/self/status", "format");
	expect_error("pcap", -EINVAL, "in=FILE", "out=FILE");
	expect_error("pcap:", -EINVAL, "in=FILE", "out=FILE");
	expect_error("pcap:mac=02:00:00:00:00:01", -EINVAL, "in=FILE", "out=FILE");
	snprintf(spec, sizeof(spec), "pcap:in=%s,speed=10", in);
	expect_error(spec, -EINVAL, "speed", "in, out, mac");
	snprintf(spec, sizeof(spec), "pcap:in=%s,mac=02:00:00:00:00", in);
	expect_error(spec, -EINVAL, "mac=02:00:00:00:00", "MAC address");
	snprintf(spec, sizeof(spec), "pcap:in=%s,mac=zz:00:00:00:00:01", in);
	expect_error(spec, -EINVAL, "mac=", NULL);
	expect_error("pcap:in=", -EINVAL, "in=", "path");
	expect_error("pcap:in=-", -EINVAL, "in=-", "/dev/stdin");
	expect_error("pcap:out=-", -EINVAL, "out=-", "/dev/stdout");
	snprintf(spec, sizeof(spec), "pcap:in=%s,out=%s", in, in);
	expect_error(spec, -EINVAL, "same file", in);
	/* the refused open did not truncate the input */
	snprintf(spec, sizeof(spec), "pcap:in=%s,out=%s/./err_in.pcap", in, tmp_dir);
	expect_error(spec, -EINVAL, "same file", NULL);
	CHECK_EQ(check_out_file(in, 0, 3), 3);
}

/* ---- fixture ---- */

static void remove_tmp_dir(void)
{
	DIR *d = opendir(tmp_dir);
	struct dirent *e;
	char path[512];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp_dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(tmp_dir);
}

int main(void)
{
	int ret;

	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/rxp_test_pcap_XXXXXX");
	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_registered);
	RUN(test_rx_file_order);
	RUN(test_rx_empty_file);
	RUN(test_rx_few_buffers);
	RUN(test_rx_skips);
	RUN(test_rx_skip_warnings_bounded);
	RUN(test_rx_damaged_file);
	RUN(test_rx_to_tx_roundtrip);
	RUN(test_tx_only);
	RUN(test_tx_without_out);
	RUN(test_mac);
	RUN(test_errors);
	ret = tests_done();
	remove_tmp_dir();
	return ret;
}
