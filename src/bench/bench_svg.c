/* SPDX-License-Identifier: MIT */
/*
 * SVG rendering of the bench result table: one panel per frame size, one
 * horizontal bar per variant, grouped by family. Plain SVG 1.1 with generic
 * fonts so it opens anywhere without network access.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "bench.h"

#define SVG_MAX_PANELS		8
#define SVG_MAX_FAMILIES	16
#define SVG_MAX_VARIANTS	4	/* bars per family per panel */

/* Layout, in px. Labels live left of the plot, values to the right of it. */
#define SVG_W			960
#define SVG_MARGIN		16
#define SVG_TITLE_H		58	/* title + footnote line */
#define SVG_PLOT_X		250
#define SVG_PLOT_W		560
#define SVG_PANEL_HEAD		30	/* panel heading */
#define SVG_PANEL_AXIS		30	/* tick labels under the bars */
#define SVG_PANEL_GAP		18
#define SVG_ROW_H		22
#define SVG_BAR_H		14
#define SVG_GROUP_GAP		8

#define SVG_GREY		"#a3a3a3"
#define SVG_FONT		"font-family=\"Helvetica, Arial, sans-serif\""

/* Non-baseline bars, in order of appearance within a family. */
static const char *const svg_palette[] = {
	"#3b75c4", "#e08a1e", "#3a9a5b", "#9b59b6",
};

struct svg_panel {
	uint32_t frame_size;
	unsigned n_bars;
	unsigned n_groups;
	double max;		/* largest mpps / mpps_max drawn in the panel */
};

static const char *str_or(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

/* Writes @s as XML character data, safe inside elements and attributes. */
static void svg_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			/* Control characters are not allowed in XML 1.0 at all. */
			fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
			break;
		}
	}
}

/* NaN, infinities and negatives would produce broken or inverted geometry. */
static double clamp_val(double v)
{
	return isfinite(v) && v > 0 ? v : 0;
}

/* Picks a 1/2/2.5/5 x 10^k tick step giving four to six gridlines up to @max. */
static void nice_axis(double max, double *axis_max, double *step, unsigned *n_ticks)
{
	static const double mult[] = { 1, 2, 2.5, 5, 10 };
	double raw, p, s = 1;
	unsigned k;

	if (!(max > 0) || !isfinite(max))
		max = 1;
	raw = max / 6;
	p = pow(10, floor(log10(raw)));
	for (k = 0; k < sizeof(mult) / sizeof(mult[0]); k++) {
		s = mult[k] * p;
		if (s >= raw * (1 - 1e-9))
			break;
	}
	k = (unsigned)ceil(max / s - 1e-9);
	if (k == 0)
		k = 1;
	*step = s;
	*n_ticks = k;
	*axis_max = k * s;
}

static int find_family(const char *const *fams, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(fams[i], name))
			return (int)i;
	return -1;
}

/* True if @r is one of the first SVG_MAX_VARIANTS rows of its family/frame. */
static bool row_drawn(const struct bench_row *rows, unsigned idx)
{
	const struct bench_row *r = &rows[idx];
	const char *fam = str_or(r->family, "?");
	unsigned seen = 0;

	for (unsigned i = 0; i < idx; i++)
		if (rows[i].frame_size == r->frame_size &&
		    !strcmp(str_or(rows[i].family, "?"), fam))
			seen++;
	return seen < SVG_MAX_VARIANTS;
}

/* Collects panels and families in order of first appearance. */
static void svg_layout(const struct bench_row *rows, unsigned n_rows,
		       struct svg_panel *panels, unsigned *n_panels,
		       const char **fams, unsigned *n_fams)
{
	*n_panels = 0;
	*n_fams = 0;
	for (unsigned i = 0; i < n_rows; i++) {
		const char *fam = str_or(rows[i].family, "?");
		unsigned p;

		for (p = 0; p < *n_panels; p++)
			if (panels[p].frame_size == rows[i].frame_size)
				break;
		if (p == *n_panels && *n_panels < SVG_MAX_PANELS) {
			memset(&panels[p], 0, sizeof(panels[p]));
			panels[p].frame_size = rows[i].frame_size;
			(*n_panels)++;
		}
		if (find_family(fams, *n_fams, fam) < 0 && *n_fams < SVG_MAX_FAMILIES)
			fams[(*n_fams)++] = fam;
	}

	for (unsigned p = 0; p < *n_panels; p++) {
		struct svg_panel *pn = &panels[p];

		for (unsigned fi = 0; fi < *n_fams; fi++) {
			unsigned bars = 0;

			for (unsigned i = 0; i < n_rows; i++) {
				const struct bench_row *r = &rows[i];

				if (r->frame_size != pn->frame_size ||
				    strcmp(str_or(r->family, "?"), fams[fi]) ||
				    !row_drawn(rows, i))
					continue;
				bars++;
				if (clamp_val(r->mpps) > pn->max)
					pn->max = clamp_val(r->mpps);
				if (clamp_val(r->mpps_max) > pn->max)
					pn->max = clamp_val(r->mpps_max);
			}
			if (bars) {
				pn->n_bars += bars;
				pn->n_groups++;
			}
		}
	}
}

static unsigned panel_height(const struct svg_panel *pn)
{
	return SVG_PANEL_HEAD + pn->n_bars * SVG_ROW_H +
	       (pn->n_groups ? pn->n_groups - 1 : 0) * SVG_GROUP_GAP + SVG_PANEL_AXIS;
}

static void svg_bar(FILE *f, const struct bench_row *r, unsigned y, double scale,
		    const char *fill)
{
	double mpps = clamp_val(r->mpps);
	double lo = clamp_val(r->mpps_min), hi = clamp_val(r->mpps_max);
	double w = mpps * scale, right = w;
	double cy = y + SVG_ROW_H / 2.0;
	const char *rcol = "#555555";

	if (lo > hi) {
		double t = lo;

		lo = hi;
		hi = t;
	}

	fprintf(f, "<g>\n<title>");
	svg_text(f, str_or(r->family, "?"));
	fputc('/', f);
	svg_text(f, str_or(r->variant, "?"));
	fprintf(f, " @ %u B: median %.3f Mpps (min %.3f, max %.3f), %.1f ns/pkt, %.2f Gbit/s, x%.3f</title>\n",
		r->frame_size, r->mpps, r->mpps_min, r->mpps_max, r->ns_per_packet,
		r->gbps, r->ratio);

	/* Variant name, right-aligned against the plot. */
	fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"12\" fill=\"#333333\">",
		SVG_PLOT_X - 8, cy + 4);
	svg_text(f, str_or(r->variant, "?"));
	fputs("</text>\n", f);

	fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n",
		SVG_PLOT_X, cy - SVG_BAR_H / 2.0, w, SVG_BAR_H, fill);

	/* Whisker: only when there is a spread to show. */
	if (hi > 0 && hi > lo) {
		double x0 = SVG_PLOT_X + lo * scale, x1 = SVG_PLOT_X + hi * scale;

		fprintf(f, "<path d=\"M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f\" stroke=\"#222222\" stroke-width=\"1\" fill=\"none\"/>\n",
			x0, cy, x1, x0, cy - 4, cy + 4, x1, cy - 4, cy + 4);
		if (hi * scale > right)
			right = hi * scale;
	}

	/*
	 * Colour the ratio only where it stands out of the noise: by more than
	 * this variant's own spread, and never for less than 2%.
	 */
	double noise = fmax(0.02, isfinite(r->spread_pct) ? r->spread_pct / 100.0 : 0.0);

	if (isfinite(r->ratio) && r->ratio >= 1.0 + noise)
		rcol = "#1e7b34";
	else if (isfinite(r->ratio) && r->ratio <= 1.0 - noise)
		rcol = "#b22222";

	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#222222\">%.1f Mpps",
		SVG_PLOT_X + right + 6, cy + 4, mpps);
	if (isfinite(r->ratio))
		fprintf(f, "<tspan dx=\"8\" font-weight=\"bold\" fill=\"%s\">x%.2f</tspan>",
			rcol, r->ratio);
	else
		fputs("<tspan dx=\"8\" fill=\"#555555\">x-</tspan>", f);
	fputs("</text>\n</g>\n", f);
}

static void svg_panel(FILE *f, const struct bench_row *rows, unsigned n_rows,
		      const struct svg_panel *pn, const char *const *fams,
		      unsigned n_fams, unsigned y)
{
	unsigned h = panel_height(pn);
	unsigned plot_top = y + SVG_PANEL_HEAD;
	unsigned plot_bot = y + h - SVG_PANEL_AXIS;
	double axis_max, step, scale;
	unsigned n_ticks, group = 0, by = plot_top;

	nice_axis(pn->max, &axis_max, &step, &n_ticks);
	scale = SVG_PLOT_W / axis_max;

	fprintf(f, "<text x=\"%d\" y=\"%u\" font-size=\"15\" font-weight=\"bold\" fill=\"#111111\">%u-byte frames</text>\n",
		SVG_MARGIN, y + 18, pn->frame_size);

	/* Family bands first so gridlines and bars draw on top of them. */
	for (unsigned fi = 0, gy = plot_top; fi < n_fams; fi++) {
		unsigned bars = 0;

		for (unsigned i = 0; i < n_rows; i++)
			if (rows[i].frame_size == pn->frame_size &&
			    !strcmp(str_or(rows[i].family, "?"), fams[fi]) &&
			    row_drawn(rows, i))
				bars++;
		if (!bars)
			continue;
		if (group % 2 == 0)
			fprintf(f, "<rect x=\"%d\" y=\"%u\" width=\"%d\" height=\"%u\" fill=\"#f3f5f8\"/>\n",
				SVG_MARGIN - 6, gy, SVG_W - 2 * SVG_MARGIN + 12,
				bars * SVG_ROW_H);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\" fill=\"#111111\">",
			SVG_MARGIN, gy + SVG_ROW_H / 2.0 + 4);
		svg_text(f, fams[fi]);
		fputs("</text>\n", f);
		gy += bars * SVG_ROW_H + SVG_GROUP_GAP;
		group++;
	}

	for (unsigned t = 0; t <= n_ticks; t++) {
		double x = SVG_PLOT_X + t * step * scale;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%u\" x2=\"%.1f\" y2=\"%u\" stroke=\"%s\" stroke-width=\"1\"/>\n",
			x, plot_top - 4, x, plot_bot + 4, t ? "#d9d9d9" : "#666666");
		fprintf(f, "<text x=\"%.1f\" y=\"%u\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555555\">%g</text>\n",
			x, plot_bot + 18, t * step);
	}
	fprintf(f, "<text x=\"%d\" y=\"%u\" font-size=\"11\" fill=\"#555555\">Mpps</text>\n",
		SVG_PLOT_X + SVG_PLOT_W + 22, plot_bot + 18);

	for (unsigned fi = 0; fi < n_fams; fi++) {
		unsigned bars = 0, colour = 0;

		for (unsigned i = 0; i < n_rows; i++) {
			const struct bench_row *r = &rows[i];
			const char *fill = SVG_GREY;

			if (r->frame_size != pn->frame_size ||
			    strcmp(str_or(r->family, "?"), fams[fi]) ||
			    !row_drawn(rows, i))
				continue;
			if (!r->baseline)
				fill = svg_palette[colour++ % (sizeof(svg_palette) /
							       sizeof(svg_palette[0]))];
			svg_bar(f, r, by, scale, fill);
			by += SVG_ROW_H;
			bars++;
		}
		if (bars)
			by += SVG_GROUP_GAP;
	}
}

static void svg_header(FILE *f, unsigned height, const char *title)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" "
		SVG_FONT ">\n", SVG_W, height, SVG_W, height);
	fputs("<title>", f);
	svg_text(f, title);
	fputs("</title>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"#ffffff\"/>\n",
		SVG_W, height);
	fprintf(f, "<text x=\"%d\" y=\"28\" font-size=\"19\" font-weight=\"bold\" fill=\"#111111\">",
		SVG_MARGIN);
	svg_text(f, title);
	fputs("</text>\n", f);
}

static void svg_body(FILE *f, const struct bench_row *rows, unsigned n_rows,
		     const char *title)
{
	struct svg_panel panels[SVG_MAX_PANELS];
	const char *fams[SVG_MAX_FAMILIES];
	unsigned n_panels, n_fams, height, y;

	svg_layout(rows, n_rows, panels, &n_panels, fams, &n_fams);

	if (!n_panels) {
		height = SVG_TITLE_H + 60;
		svg_header(f, height, title);
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"14\" fill=\"#555555\">no results</text>\n",
			SVG_MARGIN, SVG_TITLE_H + 20);
		fputs("</svg>\n", f);
		return;
	}

	height = SVG_TITLE_H + SVG_MARGIN;
	for (unsigned p = 0; p < n_panels; p++)
		height += panel_height(&panels[p]) + (p ? SVG_PANEL_GAP : 0);
	svg_header(f, height, title);

	/* Legend swatches and the footnote share one line under the title. */
	fprintf(f, "<rect x=\"%d\" y=\"40\" width=\"10\" height=\"10\" fill=\"%s\"/>\n"
		"<text x=\"%d\" y=\"49\" font-size=\"11\" fill=\"#444444\">baseline</text>\n"
		"<rect x=\"%d\" y=\"40\" width=\"10\" height=\"10\" fill=\"%s\"/>\n"
		"<text x=\"%d\" y=\"49\" font-size=\"11\" fill=\"#444444\">variant</text>\n",
		SVG_MARGIN, SVG_GREY, SVG_MARGIN + 14,
		SVG_MARGIN + 72, svg_palette[0], SVG_MARGIN + 86);
	fprintf(f, "<text x=\"%d\" y=\"49\" font-size=\"11\" fill=\"#444444\">bars: median Mpps; whiskers: min..max over %u repetitions; ratio to the family baseline, coloured where it exceeds the spread</text>\n",
		SVG_MARGIN + 140, rows[0].reps);

	y = SVG_TITLE_H;
	for (unsigned p = 0; p < n_panels; p++) {
		if (p) {
			fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#bbbbbb\" stroke-width=\"1\"/>\n",
				SVG_MARGIN, y + SVG_PANEL_GAP / 2.0, SVG_W - SVG_MARGIN,
				y + SVG_PANEL_GAP / 2.0);
			y += SVG_PANEL_GAP;
		}
		svg_panel(f, rows, n_rows, &panels[p], fams, n_fams, y);
		y += panel_height(&panels[p]);
	}
	fputs("</svg>\n", f);
}

int bench_write_svg(const char *path, const struct bench_row *rows, unsigned n_rows,
		    const char *title)
{
	struct stat st;
	bool regular;
	FILE *f;
	int err = 0;

	if (!path || (!rows && n_rows))
		return -EINVAL;
	f = fopen(path, "w");
	if (!f)
		return -errno;

	/* Never unlink a device or fifo (e.g. /dev/stdout) on a failed write. */
	regular = !fstat(fileno(f), &st) && S_ISREG(st.st_mode);
	errno = 0;
	svg_body(f, rows, n_rows, str_or(title, "rxpath bench"));
	if (ferror(f))
		err = errno ? errno : EIO;
	if (fclose(f) && !err)
		err = errno ? errno : EIO;
	if (err) {
		/* A truncated chart is worse than none. */
		if (regular)
			remove(path);
		return -err;
	}
	return 0;
}
