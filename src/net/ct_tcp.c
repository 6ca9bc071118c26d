/* SPDX-License-Identifier: MIT */
/* TCP connection tracking: see ct_tcp.h. */
#include "ct_tcp.h"
#include "rxpath/proto.h"

/* rxp_ct_entry.tcp_flags, per direction (the sender's) */
#define F_WSCALE  0x01u	/* sent the window scale option */
#define F_SACK    0x02u	/* sent SACK permitted */
#define F_CLOSE   0x04u	/* began the close (its FIN moved the connection to FIN_WAIT) */
#define F_LIBERAL 0x08u	/* its packets are not window-checked (fragmented segments seen) */
#define F_MAXACK  0x10u	/* maxack holds its highest ACK */

/* rxp_ct_entry.l4.tcp.last_opt: an ignored SYN's options, and two marks */
#define O_SCALE     0x0fu
#define O_WSCALE    0x10u
#define O_SACK      0x20u
#define O_CHALLENGE 0x40u	/* the ignored SYN came in LAST_ACK: an ACK may be the peer's challenge (RFC 5961) */
#define O_SIMOPEN   0x80u	/* SYNs crossed: simultaneous open */

/* What a segment is to the state machine (Linux's tcp_bit_set). */
enum { I_SYN, I_SYNACK, I_FIN, I_ACK, I_RST, I_NONE };

#define MAX_WSCALE  14		/* RFC 7323 2.3 */
#define MAX_RETRANS 3		/* nf_conntrack_tcp_max_retrans */
#define MAXACKWIN   66000u	/* the least window an ACK may lag behind by */

#define NO RXP_CT_TCP_NONE
#define SS RXP_CT_TCP_SYN_SENT
#define SR RXP_CT_TCP_SYN_RECV
#define ES RXP_CT_TCP_ESTABLISHED
#define FW RXP_CT_TCP_FIN_WAIT
#define CW RXP_CT_TCP_CLOSE_WAIT
#define LA RXP_CT_TCP_LAST_ACK
#define TW RXP_CT_TCP_TIME_WAIT
#define CL RXP_CT_TCP_CLOSE
#define S2 RXP_CT_TCP_SYN_SENT2
#define IV RXP_CT_TCP_MAX		/* invalid here */
#define IG (RXP_CT_TCP_MAX + 1)	/* let through, nothing learnt: we may be out of step */

/*
 * next[direction][segment][state]. We sit between the two ends and see
 * every segment, but a segment may still be lost past us, so a state is
 * our best guess of the sender's. The transitions are Linux's:
 *  - a SYN opens (NONE), is retransmitted (SYN_SENT), or reopens a closed
 *    connection (TIME_WAIT, CLOSE; RFC 1122 4.2.2.13); a SYN from the
 *    reply side after ours is a simultaneous open (SYN_SENT2);
 *  - SYN/ACK answers a SYN (SYN_RECV); the opener cannot send one, except
 *    in a simultaneous open;
 *  - the first ACK after SYN/ACK establishes; FIN starts the close
 *    (FIN_WAIT), its ACK (CLOSE_WAIT), the other FIN (LAST_ACK), the last
 *    ACK (TIME_WAIT);
 *  - RST closes from any state (a RST out of window is caught later);
 *  - what may belong to a connection we lost step with (a SYN in an open
 *    one, a late SYN/ACK, an ACK to a half-open one) is ignored: the
 *    receiver's answer (RST or SYN/ACK) tells us more.
 */
static const uint8_t next_state[2][6][RXP_CT_TCP_MAX] = {
	{	/* original:  NO  SS  SR  ES  FW  CW  LA  TW  CL  S2 */
		[I_SYN]    = { SS, SS, IG, IG, IG, IG, IG, SS, SS, S2 },
		[I_SYNACK] = { IV, IV, SR, IV, IV, IV, IV, IV, IV, SR },
		[I_FIN]    = { IV, IV, FW, FW, LA, LA, LA, TW, CL, IV },
		[I_ACK]    = { ES, IV, ES, ES, CW, CW, TW, TW, CL, IV },
		[I_RST]    = { IV, CL, CL, CL, CL, CL, CL, CL, CL, CL },
		[I_NONE]   = { IV, IV, IV, IV, IV, IV, IV, IV, IV, IV },
	},
	{	/* reply:     NO  SS  SR  ES  FW  CW  LA  TW  CL  S2 */
		[I_SYN]    = { IV, S2, IV, IV, IV, IV, IV, SS, IV, S2 },
		[I_SYNACK] = { IV, SR, IG, IG, IG, IG, IG, IG, IG, SR },
		[I_FIN]    = { IV, IV, FW, FW, LA, LA, LA, TW, CL, IV },
		[I_ACK]    = { IV, IG, SR, ES, CW, CW, TW, TW, CL, IG },
		[I_RST]    = { IV, CL, CL, CL, CL, CL, CL, CL, CL, CL },
		[I_NONE]   = { IV, IV, IV, IV, IV, IV, IV, IV, IV, IV },
	},
};

static const uint8_t state_timeout[RXP_CT_TCP_MAX] = {
	[NO] = RXP_CT_TO_TCP_SYN_SENT, [SS] = RXP_CT_TO_TCP_SYN_SENT, [SR] = RXP_CT_TO_TCP_SYN_RECV,
	[ES] = RXP_CT_TO_TCP_ESTABLISHED, [FW] = RXP_CT_TO_TCP_FIN_WAIT, [CW] = RXP_CT_TO_TCP_CLOSE_WAIT,
	[LA] = RXP_CT_TO_TCP_LAST_ACK, [TW] = RXP_CT_TO_TCP_TIME_WAIT, [CL] = RXP_CT_TO_TCP_CLOSE,
	[S2] = RXP_CT_TO_TCP_SYN_SENT,
};

enum rxp_ct_timeout ct_tcp_timeout_of(unsigned state)
{
	return state < RXP_CT_TCP_MAX ? (enum rxp_ct_timeout)state_timeout[state] : RXP_CT_TO_TCP_CLOSE;
}

static unsigned seg_index(uint8_t f)
{
	if (f & RXP_TCP_F_RST)
		return I_RST;
	if (f & RXP_TCP_F_SYN)
		return (f & RXP_TCP_F_ACK) ? I_SYNACK : I_SYN;
	if (f & RXP_TCP_F_FIN)
		return I_FIN;
	return (f & RXP_TCP_F_ACK) ? I_ACK : I_NONE;
}

bool ct_tcp_can_open(const struct rxp_ct_pkt *p, const struct ct_params *par)
{
	unsigned i = seg_index(p->tcp_flags);

	/* a SYN; or, loose, an ACK of a connection whose start we did not see (Linux's default) */
	return ct_tcp_flags_valid(p->tcp_flags) && (i == I_SYN || (i == I_ACK && RXP_CT_LD(&par->loose)));
}

/* Sequence numbers compare modulo 2^32 (RFC 9293 3.4). */
static inline bool before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool after(uint32_t a, uint32_t b)
{
	return (int32_t)(b - a) < 0;
}

/* One past the segment's last sequence number: SYN and FIN take one each. */
static inline uint32_t seg_end(const struct rxp_ct_pkt *p)
{
	return p->seq + p->payload_len + !!(p->tcp_flags & RXP_TCP_F_SYN) + !!(p->tcp_flags & RXP_TCP_F_FIN);
}

/* The entry's TCP state, copied out to be worked on and written back where it changed. */
struct tcp_st {
	uint32_t end[2], maxend[2], maxwin[2], maxack[2];
	uint32_t last_seq, last_ack, last_end;
	uint16_t last_win;
	uint8_t state, flags[2], scale[2], last, retrans, last_opt, unack;
};

/* Loads the entry's TCP state into @s and @o (o: as it was, to write back only what changed). */
static void st_load(struct tcp_st *s, struct tcp_st *o, const struct rxp_ct_entry *e)
{
	for (unsigned d = 0; d < 2; d++) {
		s->end[d] = o->end[d] = RXP_CT_LD(&e->l4.tcp.end[d]);
		s->maxend[d] = o->maxend[d] = RXP_CT_LD(&e->l4.tcp.maxend[d]);
		s->maxwin[d] = o->maxwin[d] = RXP_CT_LD(&e->l4.tcp.maxwin[d]);
		s->maxack[d] = o->maxack[d] = RXP_CT_LD(&e->l4.tcp.maxack[d]);
		s->flags[d] = o->flags[d] = RXP_CT_LD(&e->tcp_flags[d]);
		s->scale[d] = o->scale[d] = RXP_CT_LD(&e->tcp_scale[d]);
	}
	s->last_seq = o->last_seq = RXP_CT_LD(&e->l4.tcp.last_seq);
	s->last_ack = o->last_ack = RXP_CT_LD(&e->l4.tcp.last_ack);
	s->last_end = o->last_end = RXP_CT_LD(&e->l4.tcp.last_end);
	s->last_win = o->last_win = RXP_CT_LD(&e->l4.tcp.last_win);
	s->last_opt = o->last_opt = RXP_CT_LD(&e->l4.tcp.last_opt);
	s->unack = o->unack = RXP_CT_LD(&e->l4.tcp.unack);
	s->state = o->state = RXP_CT_LD(&e->l4state);
	s->last = o->last = RXP_CT_LD(&e->tcp_last);
	s->retrans = o->retrans = RXP_CT_LD(&e->tcp_retrans);
}

/* Writes what changed only: a lock-free writer then clobbers no more of the other side's work than it must. */
#define PUT(field, v, was) do { if ((v) != (was)) RXP_CT_ST(&(field), (v)); } while (0)

static void st_store(struct rxp_ct_entry *e, const struct tcp_st *s, const struct tcp_st *o)
{
	for (unsigned d = 0; d < 2; d++) {
		PUT(e->l4.tcp.end[d], s->end[d], o->end[d]);
		PUT(e->l4.tcp.maxend[d], s->maxend[d], o->maxend[d]);
		PUT(e->l4.tcp.maxwin[d], s->maxwin[d], o->maxwin[d]);
		PUT(e->l4.tcp.maxack[d], s->maxack[d], o->maxack[d]);
		PUT(e->tcp_flags[d], s->flags[d], o->flags[d]);
		PUT(e->tcp_scale[d], s->scale[d], o->scale[d]);
	}
	PUT(e->l4.tcp.last_seq, s->last_seq, o->last_seq);
	PUT(e->l4.tcp.last_ack, s->last_ack, o->last_ack);
	PUT(e->l4.tcp.last_end, s->last_end, o->last_end);
	PUT(e->l4.tcp.last_win, s->last_win, o->last_win);
	PUT(e->l4.tcp.last_opt, s->last_opt, o->last_opt);
	PUT(e->l4.tcp.unack, s->unack, o->unack);
	PUT(e->l4state, s->state, o->state);
	PUT(e->tcp_last, s->last, o->last);
	PUT(e->tcp_retrans, s->retrans, o->retrans);
}

static inline unsigned last_index(const struct tcp_st *s)
{
	return s->last & 7;
}

static inline unsigned last_dir(const struct tcp_st *s)
{
	return s->last >> 3 & 1;
}

static inline void set_last(struct tcp_st *s, unsigned index, unsigned dir)
{
	s->last = (uint8_t)(index | dir << 3);
}

static inline uint32_t max_ack_win(const struct tcp_st *s, unsigned d)
{
	return s->maxwin[d] > MAXACKWIN ? s->maxwin[d] : MAXACKWIN;
}

/* The sender's options from its SYN: scale and SACK, the liberal mark kept. */
static void syn_options(struct tcp_st *s, unsigned d, const struct rxp_ct_pkt *p)
{
	s->scale[d] = 0;
	s->flags[d] &= F_LIBERAL;
	if (p->wscale != 0xff) {
		s->scale[d] = (uint8_t)RXP_MIN(p->wscale, MAX_WSCALE);
		s->flags[d] |= F_WSCALE;
	}
	if (p->sack_perm)
		s->flags[d] |= F_SACK;
}

/* A SYN (or SYN/ACK) sets its sender's window from scratch. */
static void init_sender(struct tcp_st *s, unsigned dir, const struct rxp_ct_pkt *p, uint32_t end)
{
	s->end[dir] = s->maxend[dir] = end;
	s->maxwin[dir] = p->win ? p->win : 1;
	syn_options(s, dir, p);
	/* scaling is on only when both ends offered it (RFC 7323 2.2) */
	if (dir == 1 && !((s->flags[0] & F_WSCALE) && (s->flags[1] & F_WSCALE)))
		s->scale[0] = s->scale[1] = 0;
}

enum { W_ACCEPT, W_IGNORE, W_INVALID };

/*
 * Is the segment in the window? With sender s and receiver r:
 *   I.   seq <= s.maxend                      (not past what r allows)
 *   II.  seq + len >= s.end - r.maxwin        (not data r acknowledged long ago)
 *   III. sack <= r.end                        (acknowledges only what r sent)
 *   IV.  sack >= r.end - max(s.maxwin, 66000) (not an ACK from long ago)
 * I and III failing make it invalid, II and IV an old duplicate let through
 * unlearnt. Within the window the bounds move on. Liberal: every segment is
 * accepted, and only those within the window teach anything.
 */
static unsigned in_window(struct tcp_st *s, unsigned dir, unsigned index, const struct rxp_ct_pkt *p,
			  bool liberal, unsigned old)
{
	const unsigned r = !dir;
	const bool syn = p->tcp_flags & RXP_TCP_F_SYN, ackf = p->tcp_flags & RXP_TCP_F_ACK;
	const bool rst = p->tcp_flags & RXP_TCP_F_RST;
	uint32_t seq = p->seq, ack = p->ack, sack = p->ack, end = seg_end(p), win = p->win, swin;

	liberal = liberal || (s->flags[dir] & F_LIBERAL);
	if ((s->flags[r] & F_SACK) && ackf && after(p->sack, ack))
		sack = p->sack;
	if (s->maxwin[dir] == 0) {
		if (syn) {
			/* the SYN/ACK, or the reply side's SYN in a simultaneous open */
			init_sender(s, dir, p, end);
			if (!ackf)
				return W_ACCEPT;
		} else {
			/* a sender we never saw open: take what the segment says */
			s->end[dir] = end;
			swin = win << s->scale[dir];
			s->maxwin[dir] = swin ? swin : 1;
			s->maxend[dir] = end + s->maxwin[dir];
			if (s->maxwin[r] == 0)
				s->end[r] = s->maxend[r] = sack;
			else if (sack == s->end[r] + 1)
				s->end[r]++;	/* the answer to a keepalive */
		}
	} else if (syn && after(end, s->end[dir]) && (old == SS || old == SR)) {
		/* a SYN again with a later sequence (RFC 9293 3.10.7.3): the sender starts over */
		init_sender(s, dir, p, end);
		if (dir == 1 && !ackf)
			return W_ACCEPT;
	}
	if (!ackf || (rst && ack == 0))
		ack = sack = s->end[r];	/* no ACK (or a stack's RST with ACK 0): as if it acked all */
	if (rst && seq == 0 && old == SS)
		seq = end = s->end[dir];	/* a RST answering our SYN */

	if (!before(seq, s->maxend[dir] + 1)) {
		uint32_t overshot = end - s->maxend[dir] + 1;
		bool ack_ok = after(sack, s->end[r] - max_ack_win(s, dir) - 1);
		bool in_recv = s->maxwin[r] && after(end, s->end[dir] - s->maxwin[r] - 1);

		if (in_recv && ack_ok && overshot <= s->maxwin[r] && before(sack, s->end[r] + 1)) {
			/* a little past r's window (stacks do that): learn its end, so that its ACK is good */
			s->end[dir] = end;
			s->unack |= (uint8_t)(1u << dir);
			return liberal ? W_ACCEPT : W_IGNORE;
		}
		return liberal ? W_ACCEPT : W_INVALID;
	}
	if (!before(sack, s->end[r] + 1))
		return liberal ? W_ACCEPT : W_INVALID;
	if (s->maxwin[r] && !after(end, s->end[dir] - s->maxwin[r] - 1))
		return liberal ? W_ACCEPT : W_IGNORE;
	if (!after(sack, s->end[r] - max_ack_win(s, dir) - 1))
		return liberal ? W_ACCEPT : W_IGNORE;

	if (!syn)
		win <<= s->scale[dir];
	swin = win + (sack - ack);
	if (s->maxwin[dir] < swin)
		s->maxwin[dir] = swin;
	if (after(end, s->end[dir])) {
		s->end[dir] = end;
		s->unack |= (uint8_t)(1u << dir);
	}
	if (ackf) {
		if (!(s->flags[dir] & F_MAXACK)) {
			s->maxack[dir] = ack;
			s->flags[dir] |= F_MAXACK;
		} else if (after(ack, s->maxack[dir])) {
			s->maxack[dir] = ack;
		}
	}
	if (s->maxwin[r] && after(end, s->maxend[dir]))
		s->maxwin[r] += end - s->maxend[dir];
	if (after(sack + win, s->maxend[r] - 1)) {
		s->maxend[r] = sack + win;
		if (!win)
			s->maxend[r]++;
	}
	if (ack == s->end[r])
		s->unack &= (uint8_t)~(1u << r);
	/* the same segment again and again: the other end may be gone */
	if (index == I_ACK) {
		if (last_dir(s) == dir && s->last_seq == seq && s->last_ack == ack && s->last_end == end &&
		    s->last_win == p->win) {
			if (s->retrans < UINT8_MAX)
				s->retrans++;
		} else {
			s->last_seq = seq;
			s->last_ack = ack;
			s->last_end = end;
			s->last_win = p->win;
			s->retrans = 0;
		}
	}
	return W_ACCEPT;
}

static inline uint32_t to_of(const struct ct_params *par, unsigned t)
{
	return RXP_CT_LD(&par->to[t]);
}

/*
 * An invalid FIN or RST on an assured connection after the other side's
 * FIN or RST: the ends closed while we were out of step. Its timer comes
 * down to tcp_unacknowledged rather than days of ESTABLISHED.
 */
static void handle_invalid(struct rxp_ct_entry *e, struct tcp_st *s, unsigned dir, unsigned index,
			   uint8_t status, const struct ct_params *par, uint32_t now)
{
	int32_t left;

	if (!(status & RXP_CTE_ASSURED) || (index != I_RST && index != I_FIN))
		return;
	if (last_dir(s) != dir && (last_index(s) == I_FIN || last_index(s) == I_RST)) {
		left = (int32_t)(RXP_CT_LD(&e->expires) - now);
		if (left < (int32_t)rxp_ct_ticks_of_s(120))
			return;
		if (left > (int32_t)to_of(par, RXP_CT_TO_TCP_UNACK))
			RXP_CT_ST(&e->expires, now + to_of(par, RXP_CT_TO_TCP_UNACK));
	} else {
		set_last(s, index, dir);
	}
}

/* Linux lets a RST in these states through unchecked: the tuple may be in use again already. */
static inline bool closing(unsigned state)
{
	return state == FW || state == LA || state == TW || state == CL || state == CW;
}

static enum ct_verdict track(struct rxp_ct_entry *e, struct tcp_st *s, unsigned dir,
			     const struct rxp_ct_pkt *p, const struct ct_params *par, uint32_t now,
			     uint8_t status)
{
	const unsigned index = seg_index(p->tcp_flags);
	unsigned old = s->state, new = next_state[dir][index][old], li = last_index(s), ld = last_dir(s);
	uint32_t timeout, tn;
	unsigned res;

	switch (new) {
	case SS:
		if (old < TW)
			break;
		/* a SYN on a closed connection: a new one, unless we never saw this one close */
		if (((s->flags[0] | s->flags[1]) & F_CLOSE) || (ld == dir && li == I_RST))
			return CT_REOPEN;
		/* fall through */
	case IG:
		if (index == I_SYNACK && li == I_SYN && ld != dir && p->ack == s->last_end) {
			/*
			 * The SYN/ACK answers the SYN we ignored: both ends are in
			 * step and we were not. Start over from that SYN.
			 */
			old = SS;
			new = SR;
			s->end[ld] = s->maxend[ld] = s->last_end;
			s->maxwin[ld] = s->last_win ? s->last_win : 1;
			s->scale[ld] = s->last_opt & O_SCALE;
			s->last_opt &= (uint8_t)~O_CHALLENGE;
			s->flags[ld] = (uint8_t)((s->flags[ld] & F_LIBERAL) | (s->last_opt & O_WSCALE ? F_WSCALE : 0) |
						 (s->last_opt & O_SACK ? F_SACK : 0));
			s->end[dir] = s->maxend[dir] = s->maxwin[dir] = s->maxack[dir] = 0;
			s->scale[dir] = 0;
			s->flags[dir] &= F_LIBERAL;
			break;
		}
		/* remember it: the answer may show it was right */
		set_last(s, index, dir);
		s->last_seq = p->seq;
		s->last_end = seg_end(p);
		s->last_win = p->win;
		if (index == I_SYN && dir == 0) {
			uint8_t o = 0;

			if (p->wscale != 0xff)
				o |= (uint8_t)(O_WSCALE | RXP_MIN(p->wscale, MAX_WSCALE));
			if (p->sack_perm)
				o |= O_SACK;
			if (old == LA)
				o |= O_CHALLENGE;
			s->last_opt = o;
		}
		if (old == SS && index == I_ACK && dir == 1)
			s->last_ack = p->ack;	/* maybe a challenge ACK to our SYN */
		return CT_IGNORE;
	case IV:
		return CT_INVALID;
	case TW:
		if (old == LA && index == I_ACK && ld != dir && li == I_SYN && (s->last_opt & O_CHALLENGE)) {
			/* the challenge ACK to a SYN in LAST_ACK acknowledges no FIN */
			s->last_opt &= (uint8_t)~O_CHALLENGE;
			return CT_IGNORE;
		}
		break;
	case S2:
		s->last_opt |= O_SIMOPEN;
		break;
	case SR:
		if (dir == 1 && index == I_ACK && (s->last_opt & O_SIMOPEN))
			new = ES;
		break;
	case CL:
		if (index != I_RST)
			break;
		if (closing(old))
			goto in_window;
		if ((s->flags[!dir] & F_MAXACK) && li != I_SYN) {
			bool est = old == ES && (status & RXP_CTE_ASSURED);

			if (p->seq == 0 && !est)
				break;	/* the answer to a SYN we let through */
			if (before(p->seq, s->maxack[!dir]))
				return CT_INVALID;	/* RST below what the other end acknowledged */
			if (!est || p->seq == s->maxack[!dir])
				break;
			if (li == I_ACK && ld == dir && p->seq == s->last_end)
				break;	/* the RST right after the sender's last segment */
			/* in the window but not where expected: keep the state, a challenge ACK may follow (RFC 5961 3.2) */
			new = old;
		}
		if ((((status & RXP_CTE_SEEN_REPLY) && li == I_SYN) ||
		     (!(status & RXP_CTE_ASSURED) && li == I_ACK)) && p->ack == s->last_end)
			goto in_window;	/* a RST to a SYN or ACK we let through unchecked */
		if (old == SS && li == I_ACK && ld == 1 && p->seq == s->last_ack)
			goto in_window;	/* a RST to the challenge ACK */
		break;
	default:
		break;
	}

	res = in_window(s, dir, index, p, RXP_CT_LD(&par->liberal), old);
	if (res == W_IGNORE)
		return CT_IGNORE;
	if (res == W_INVALID) {
		handle_invalid(e, s, dir, index, status, par, now);
		return CT_INVALID;
	}
in_window:
	set_last(s, index, dir);
	s->state = (uint8_t)new;
	if (old != new && new == FW)
		s->flags[dir] |= F_CLOSE;

	tn = to_of(par, state_timeout[new]);
	if (s->retrans >= MAX_RETRANS && tn > to_of(par, RXP_CT_TO_TCP_RETRANS))
		timeout = to_of(par, RXP_CT_TO_TCP_RETRANS);
	else if (index == I_RST)
		timeout = to_of(par, RXP_CT_TO_TCP_CLOSE);
	else if (s->unack && tn > to_of(par, RXP_CT_TO_TCP_UNACK))
		timeout = to_of(par, RXP_CT_TO_TCP_UNACK);
	else if (s->last_win == 0 && tn > to_of(par, RXP_CT_TO_TCP_RETRANS))
		timeout = to_of(par, RXP_CT_TO_TCP_RETRANS);
	else
		timeout = tn;

	if (!(status & RXP_CTE_SEEN_REPLY)) {
		/* the only answer a RST: no connection worth keeping */
		if (p->tcp_flags & RXP_TCP_F_RST)
			return CT_KILL;
		/* a retransmitted SYN keeps its first timer: a reused port cannot keep an entry alive */
		if (index == I_SYN && old == SS)
			return CT_ACCEPT;
		if (new == ES && timeout > to_of(par, RXP_CT_TO_TCP_UNACK))
			timeout = to_of(par, RXP_CT_TO_TCP_UNACK);
	} else if (!(status & RXP_CTE_ASSURED) && (old == SR || old == ES) && new == ES) {
		__atomic_fetch_or(&e->status, RXP_CTE_ASSURED, __ATOMIC_RELAXED);
	}
	if (RXP_CT_LD(&e->expires) != now + timeout)
		RXP_CT_ST(&e->expires, now + timeout);
	return CT_ACCEPT;
}

bool ct_tcp_first(struct rxp_ct_entry *e, const struct rxp_ct_pkt *p, const struct ct_params *par,
		  uint32_t now)
{
	struct tcp_st s, o;

	if (!ct_tcp_can_open(p, par))
		return false;
	/* the fields as the last user of the entry left them: st_store writes every one that differs */
	st_load(&s, &o, e);
	memset(&s, 0, sizeof(s));
	s.end[0] = s.maxend[0] = seg_end(p);
	s.maxwin[0] = p->win ? p->win : 1;
	syn_options(&s, 0, p);
	/* its windows cannot be known from the middle: both ends' are taken as they come */
	if (p->frag || !(p->tcp_flags & RXP_TCP_F_SYN))
		s.flags[0] = s.flags[1] = F_LIBERAL;
	s.state = NO;
	set_last(&s, I_NONE, 0);
	if (track(e, &s, 0, p, par, now, 0) != CT_ACCEPT)
		return false;
	st_store(e, &s, &o);
	return true;
}

/*
 * The established connection's ACK or data segment, without the lock or
 * the state machine: the windows checked and moved on as in_window() does,
 * the retransmission count, the timer. Whatever is not a plain accept
 * (out of window, a sender not set up, not yet replied) returns -1 for the
 * locked path to decide. Every field is written only when it changes.
 */
static int tcp_fast(struct rxp_ct_entry *e, unsigned dir, const struct rxp_ct_pkt *p,
		    const struct ct_params *par, uint32_t now, uint8_t status)
{
	const unsigned r = !dir;
	const uint8_t fs = RXP_CT_LD(&e->tcp_flags[dir]), fr = RXP_CT_LD(&e->tcp_flags[r]);
	const uint32_t seq = p->seq, ack = p->ack, end = p->seq + p->payload_len;
	uint32_t sack = ack, end_s, maxend_s, maxwin_s, end_r, maxend_r, maxwin_r, win, swin, tn, timeout;
	uint8_t unack, unack0, retrans;
	bool liberal = RXP_CT_LD(&par->liberal) || (fs & F_LIBERAL);

	if (!(status & RXP_CTE_SEEN_REPLY) || !(fs & F_MAXACK))
		return -1;
	maxwin_s = RXP_CT_LD(&e->l4.tcp.maxwin[dir]);
	if (!maxwin_s)
		return -1;
	if ((fr & F_SACK) && after(p->sack, ack))
		sack = p->sack;
	end_s = RXP_CT_LD(&e->l4.tcp.end[dir]);
	maxend_s = RXP_CT_LD(&e->l4.tcp.maxend[dir]);
	end_r = RXP_CT_LD(&e->l4.tcp.end[r]);
	maxend_r = RXP_CT_LD(&e->l4.tcp.maxend[r]);
	maxwin_r = RXP_CT_LD(&e->l4.tcp.maxwin[r]);
	retrans = RXP_CT_LD(&e->tcp_retrans);
	/* in_window()'s bounds I to IV */
	if (!before(seq, maxend_s + 1) || !before(sack, end_r + 1) ||
	    (maxwin_r && !after(end, end_s - maxwin_r - 1)) ||
	    !after(sack, end_r - (maxwin_s > MAXACKWIN ? maxwin_s : MAXACKWIN) - 1)) {
		if (!liberal)
			return -1;
		goto accepted;	/* let through, nothing learnt */
	}
	win = (uint32_t)p->win << RXP_CT_LD(&e->tcp_scale[dir]);
	swin = win + (sack - ack);
	if (maxwin_s < swin)
		RXP_CT_ST(&e->l4.tcp.maxwin[dir], swin);
	unack = unack0 = RXP_CT_LD(&e->l4.tcp.unack);
	if (after(end, end_s)) {
		RXP_CT_ST(&e->l4.tcp.end[dir], end);
		unack |= (uint8_t)(1u << dir);
	}
	if (after(ack, RXP_CT_LD(&e->l4.tcp.maxack[dir])))
		RXP_CT_ST(&e->l4.tcp.maxack[dir], ack);
	if (maxwin_r && after(end, maxend_s))
		RXP_CT_ST(&e->l4.tcp.maxwin[r], maxwin_r + (end - maxend_s));
	if (after(sack + win, maxend_r - 1))
		RXP_CT_ST(&e->l4.tcp.maxend[r], sack + win + !win);
	if (ack == end_r)
		unack &= (uint8_t)~(1u << r);
	if (unack != unack0)
		RXP_CT_ST(&e->l4.tcp.unack, unack);
	/* the same segment again: count it */
	if ((RXP_CT_LD(&e->tcp_last) >> 3 & 1) == dir && RXP_CT_LD(&e->l4.tcp.last_seq) == seq &&
	    RXP_CT_LD(&e->l4.tcp.last_ack) == ack && RXP_CT_LD(&e->l4.tcp.last_end) == end &&
	    RXP_CT_LD(&e->l4.tcp.last_win) == p->win) {
		if (retrans < UINT8_MAX)
			RXP_CT_ST(&e->tcp_retrans, ++retrans);
	} else {
		PUT(e->l4.tcp.last_seq, seq, RXP_CT_LD(&e->l4.tcp.last_seq));
		PUT(e->l4.tcp.last_ack, ack, RXP_CT_LD(&e->l4.tcp.last_ack));
		PUT(e->l4.tcp.last_end, end, RXP_CT_LD(&e->l4.tcp.last_end));
		PUT(e->l4.tcp.last_win, p->win, RXP_CT_LD(&e->l4.tcp.last_win));
		if (retrans)
			RXP_CT_ST(&e->tcp_retrans, retrans = 0);
	}
accepted:
	PUT(e->tcp_last, (uint8_t)(I_ACK | dir << 3), RXP_CT_LD(&e->tcp_last));
	tn = to_of(par, RXP_CT_TO_TCP_ESTABLISHED);
	if (retrans >= MAX_RETRANS && tn > to_of(par, RXP_CT_TO_TCP_RETRANS))
		timeout = to_of(par, RXP_CT_TO_TCP_RETRANS);
	else if (RXP_CT_LD(&e->l4.tcp.unack) && tn > to_of(par, RXP_CT_TO_TCP_UNACK))
		timeout = to_of(par, RXP_CT_TO_TCP_UNACK);
	else if (RXP_CT_LD(&e->l4.tcp.last_win) == 0 && tn > to_of(par, RXP_CT_TO_TCP_RETRANS))
		timeout = to_of(par, RXP_CT_TO_TCP_RETRANS);
	else
		timeout = tn;
	if (!(status & RXP_CTE_ASSURED))
		__atomic_fetch_or(&e->status, RXP_CTE_ASSURED, __ATOMIC_RELAXED);
	if (RXP_CT_LD(&e->expires) != now + timeout)
		RXP_CT_ST(&e->expires, now + timeout);
	return CT_ACCEPT;
}

/* Everything but the fast path, under the entry's seqlock. */
static rxp_noinline enum ct_verdict tcp_locked(struct rxp_ct_entry *e, unsigned dir, const struct rxp_ct_pkt *p,
					       const struct ct_params *par, uint32_t now)
{
	struct tcp_st s, o;
	enum ct_verdict v;

	if (!ct_tcp_flags_valid(p->tcp_flags))
		return CT_INVALID;
	rxp_ct_entry_lock(e);
	if (!(RXP_CT_LD(&e->status) & RXP_CTE_LIVE)) {
		rxp_ct_entry_unlock(e);
		return CT_GONE;
	}
	st_load(&s, &o, e);
	if (p->frag) {
		/* a fragment's segment length is not the segment's: no window checks for this connection */
		s.flags[0] |= F_LIBERAL;
		s.flags[1] |= F_LIBERAL;
	}
	v = track(e, &s, dir, p, par, now, RXP_CT_LDA(&e->status));
	st_store(e, &s, &o);
	rxp_ct_entry_unlock(e);
	return v;
}

enum ct_verdict ct_tcp_packet(struct rxp_ct_entry *e, unsigned dir, const struct rxp_ct_pkt *p,
			      const struct ct_params *par, uint32_t now)
{
	/* an established connection's ACK and data change no state: no lock */
	if ((p->tcp_flags & (RXP_TCP_F_SYN | RXP_TCP_F_FIN | RXP_TCP_F_RST | RXP_TCP_F_ACK)) == RXP_TCP_F_ACK &&
	    !p->frag && RXP_CT_LD(&e->l4state) == ES) {
		int f = tcp_fast(e, dir, p, par, now, RXP_CT_LDA(&e->status));

		if (rxp_likely(f >= 0))
			return (enum ct_verdict)f;
	}
	return tcp_locked(e, dir, p, par, now);
}
