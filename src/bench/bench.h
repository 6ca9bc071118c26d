/* SPDX-License-Identifier: MIT */
/* rxpath bench: the seed A/B matrix on sim ports. */
#ifndef RXPATH_BENCH_BENCH_H
#define RXPATH_BENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One row of the result table: one variant of one family at one frame size. */
struct bench_row {
	const char *family;	/* "handoff", "copy", "prefetch", "rx_offset", "buffer_size", "all" */
	const char *variant;	/* "list", "per-packet", ... */
	bool baseline;		/* the variant the family's ratios are taken against */
	uint32_t frame_size;	/* bytes on the wire including FCS */
	unsigned reps;
	double mpps;		/* median over the repetitions */
	double mpps_min, mpps_max;
	double ns_per_packet;	/* 1000 / mpps */
	double gbps;		/* mpps * frame_size * 8 / 1000 */
	double ratio;		/* mpps / the family baseline's mpps at this frame size */
	double spread_pct;	/* (max - min) / 2 / median * 100 */
};

/*
 * Writes a grouped bar chart of @rows to @path as SVG: one panel per frame
 * size, bars grouped by family, each bar labelled with its variant, Mpps and
 * ratio, min..max shown as a whisker. Returns 0 or -errno.
 */
int bench_write_svg(const char *path, const struct bench_row *rows, unsigned n_rows,
		    const char *title);

int cmd_bench(int argc, char **argv);

/*
 * Reads option --@name's value @text, from @min to @max, into *@out for
 * the command @cmd ("rxpath bench lpm"). Returns 0, or -EINVAL after
 * saying on stderr what was expected.
 */
int bench_opt_u64(const char *cmd, const char *name, const char *text, uint64_t min, uint64_t max,
		  uint64_t *out);

#endif
