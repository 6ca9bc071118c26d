/* SPDX-License-Identifier: MIT */
/*
 * Traffic source of the simulated NIC: frames built from templates
 * (IPv4/IPv6, UDP/TCP, a number of flows, address ranges, a share of
 * malformed frames) or read from a pcap file, handed out in a fixed
 * schedule so that generating a frame costs one copy.
 */
#ifndef RXPATH_GEN_H
#define RXPATH_GEN_H

#include "rxpath/common.h"
#include "rxpath/args.h"

enum rxp_gen_proto {
	RXP_GEN_UDP4 = 1 << 0,
	RXP_GEN_TCP4 = 1 << 1,
	RXP_GEN_UDP6 = 1 << 2,
	RXP_GEN_TCP6 = 1 << 3,
};

/* The kinds of malformed frame the generator mixes in, each meant to hit one drop reason. */
enum rxp_gen_bad {
	RXP_GEN_BAD_ETH_TRUNCATED,
	RXP_GEN_BAD_NOT_FOR_US,
	RXP_GEN_BAD_ETHERTYPE,
	RXP_GEN_BAD_VLAN,
	RXP_GEN_BAD_IP4_TRUNCATED,
	RXP_GEN_BAD_IP4_VERSION,
	RXP_GEN_BAD_IP4_IHL,
	RXP_GEN_BAD_IP4_CSUM,
	RXP_GEN_BAD_IP4_LEN,
	RXP_GEN_BAD_IP6_TRUNCATED,
	RXP_GEN_BAD_IP6_VERSION,
	RXP_GEN_BAD_IP6_LEN,
	RXP_GEN_BAD_L4_TRUNCATED,
	RXP_GEN_BAD_UDP_LEN,
	RXP_GEN_BAD_TCP_OFFSET,
	RXP_GEN_BAD_KINDS
};

struct rxp_gen_config {
	uint32_t protos;	/* RXP_GEN_* bits */
	uint32_t frame_size;	/* on the wire, with the 4-byte FCS (64 = minimum Ethernet frame) */
	uint32_t flows;
	uint32_t src4, dst4;	/* host byte order */
	uint8_t src4_len, dst4_len;
	uint8_t src6[16], dst6[16];
	uint8_t src6_len, dst6_len;
	double bad_pct;		/* share of malformed frames, percent */
	uint64_t count;		/* frames to send, 0 = no end */
	char pcap[224];		/* replay this file instead of generating */
	uint32_t loops;		/* pcap: times to replay, 0 = no end */
	uint8_t dst_mac[6];	/* the receiving port's MAC */
	uint8_t src_mac[6];
	uint32_t max_frame;	/* largest frame the receiver takes, without FCS */
};

struct rxp_gen {
	uint8_t *frames;	/* templates, each at a cache-line aligned stride */
	uint16_t *lens;
	uint32_t stride;
	uint32_t n_frames;
	uint32_t *sched;	/* template index per step */
	uint32_t sched_len;
	uint32_t pos;
	uint64_t remaining;	/* frames left (UINT64_MAX and counting down when endless) */
	bool finite;
	uint32_t n_good;	/* templates before the malformed ones */
	uint32_t next_bad;	/* kind the next malformed step hands out */
	uint64_t n_bad;		/* malformed frames handed out */
	uint64_t n_bad_kind[RXP_GEN_BAD_KINDS];
	uint8_t *is_bad;	/* per template: 0 good, else 1 + kind */
	/* A schedule step pointing at the first malformed template stands for
	 * "a malformed frame": the kinds take turns, so every kind shows up
	 * however rare malformed frames are. */
};

/* Fills @cfg with defaults (UDP over IPv4, 64-byte frames, 256 flows, RFC 2544 ranges). */
void rxp_gen_config_default(struct rxp_gen_config *cfg);

/* Takes the generator keys from @args. Returns 0 or -EINVAL with @err. */
int rxp_gen_config_parse(struct rxp_gen_config *cfg, struct rxp_args *args, char *err,
			 size_t errlen);

/* Builds the templates. Returns 0 or -errno with @err. */
int rxp_gen_init(struct rxp_gen *gen, const struct rxp_gen_config *cfg, char *err, size_t errlen);
void rxp_gen_free(struct rxp_gen *gen);

/*
 * Keeps only the steps whose frames RSS (the Toeplitz hash, the default
 * key, a round-robin indirection table) sends to @queue of @n_queues, and
 * that queue's share of a finite count: one generator per queue, like a
 * NIC spreading its flows. Returns the steps kept (0: the queue stays quiet).
 */
int rxp_gen_keep_queue(struct rxp_gen *gen, uint16_t queue, uint16_t n_queues);

/* Returns the name of a malformed-frame kind. */
const char *rxp_gen_bad_name(enum rxp_gen_bad kind);

/*
 * A walk over the schedule with its state in a local, for a device that
 * takes many frames at once: the caller's frame copies (stores through byte
 * pointers, which may alias anything) cannot make the compiler reload the
 * schedule for every frame. An endless source starts with UINT64_MAX
 * frames to go.
 */
struct rxp_gen_walk {
	const uint32_t *sched;
	const uint8_t *is_bad;
	const uint16_t *lens;
	const uint8_t *frames;
	uint32_t pos, sched_len, stride;
	uint64_t left;		/* frames the source still has */
};

static inline void rxp_gen_walk_begin(const struct rxp_gen *gen, struct rxp_gen_walk *w)
{
	w->sched = gen->sched;
	w->is_bad = gen->is_bad;
	w->lens = gen->lens;
	w->frames = gen->frames;
	w->pos = gen->pos;
	w->sched_len = gen->sched_len;
	w->stride = gen->stride;
	w->left = gen->remaining;
}

/*
 * Returns how many of the next steps, @want at most, can be taken without
 * the source ending or the schedule wrapping: a run the caller walks with
 * rxp_gen_walk_frame() and then passes with rxp_gen_walk_skip(). 0 when a
 * finite source is done.
 */
static inline uint32_t rxp_gen_walk_run(const struct rxp_gen_walk *w, uint32_t want)
{
	uint32_t run = RXP_MIN(want, w->sched_len - w->pos);

	return w->left < run ? (uint32_t)w->left : run;
}

/* Returns the frame of step @k of the current run, and its length. */
static inline const uint8_t *rxp_gen_walk_frame(struct rxp_gen *gen, const struct rxp_gen_walk *w,
						uint32_t k, uint16_t *len)
{
	uint32_t t = w->sched[w->pos + k];

	if (rxp_unlikely(w->is_bad[t])) {
		t = gen->n_good + gen->next_bad;
		if (++gen->next_bad == RXP_GEN_BAD_KINDS)
			gen->next_bad = 0;
		gen->n_bad++;
		gen->n_bad_kind[w->is_bad[t] - 1]++;
	}
	*len = w->lens[t];
	return w->frames + (size_t)t * w->stride;
}

/* Passes the @run steps just walked. */
static inline void rxp_gen_walk_skip(struct rxp_gen_walk *w, uint32_t run)
{
	w->left -= run;
	w->pos += run;
	if (w->pos == w->sched_len)
		w->pos = 0;
}

/* Returns the next frame and its length, or NULL when a finite source is done. */
static inline const uint8_t *rxp_gen_walk_next(struct rxp_gen *gen, struct rxp_gen_walk *w,
					       uint16_t *len)
{
	const uint8_t *frame;

	if (!rxp_gen_walk_run(w, 1))
		return NULL;
	frame = rxp_gen_walk_frame(gen, w, 0, len);
	rxp_gen_walk_skip(w, 1);
	return frame;
}

/* Writes the walk's position back: the next walk or rxp_gen_next() goes on from there. */
static inline void rxp_gen_walk_end(struct rxp_gen *gen, const struct rxp_gen_walk *w)
{
	gen->pos = w->pos;
	gen->remaining = w->left;
}

/* Returns the next frame and its length, or NULL when a finite source is done. */
static inline const uint8_t *rxp_gen_next(struct rxp_gen *gen, uint16_t *len)
{
	struct rxp_gen_walk w;
	const uint8_t *frame;

	rxp_gen_walk_begin(gen, &w);
	frame = rxp_gen_walk_next(gen, &w, len);
	rxp_gen_walk_end(gen, &w);
	return frame;
}

static inline bool rxp_gen_done(const struct rxp_gen *gen)
{
	return gen->finite && !gen->remaining;
}

#endif
