/* SPDX-License-Identifier: MIT */
/* pcapng block encoding (pcapng.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "pcapng.h"

#define PAD4(n) (((n) + 3u) & ~(size_t)3u)
#define TRAILER_LEN 4u		/* the block's total length, repeated at its end */

/* A block being written: every write is checked against the room. */
struct block {
	uint8_t *buf;
	size_t room, len;
	bool has_opts;
	bool overflow;
};

static void put(struct block *b, const void *p, size_t n)
{
	if (!n)
		return;
	if (b->overflow || n > b->room - b->len) {
		b->overflow = true;
		return;
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void put_pad4(struct block *b)
{
	static const uint8_t zeros[4];

	put(b, zeros, PAD4(b->len) - b->len);
}

static void put_opt(struct block *b, uint16_t code, const void *val, uint16_t len)
{
	struct rxp_pcapng_opt_head h = { .code = code, .len = len };

	put(b, &h, sizeof(h));
	put(b, val, len);
	put_pad4(b);
	b->has_opts = true;
}

/* Ends the options, appends the trailer and writes the total length. Returns it or -ENOSPC. */
static int finish(struct block *b)
{
	uint32_t total;

	if (b->has_opts) {
		struct rxp_pcapng_opt_head end = { .code = RXP_PCAPNG_OPT_END, .len = 0 };

		put(b, &end, sizeof(end));
	}
	total = (uint32_t)(b->len + TRAILER_LEN);
	put(b, &total, sizeof(total));
	if (b->overflow)
		return -ENOSPC;
	/* the length field is the second word of every block */
	memcpy(b->buf + 4, &total, sizeof(total));
	return (int)total;
}

static uint32_t ts_high(uint64_t ts)
{
	return (uint32_t)(ts >> 32);
}

static uint32_t ts_low(uint64_t ts)
{
	return (uint32_t)ts;
}

int rxp_pcapng_shb(uint8_t *buf, size_t room, const char *userappl)
{
	struct block b = { .buf = buf, .room = room };
	struct rxp_pcapng_shb_head h = {
		.type = RXP_PCAPNG_BLOCK_SHB,
		.byte_order_magic = RXP_PCAPNG_BYTE_ORDER_MAGIC,
		.major = 1,
		.minor = 0,
		.section_len = UINT64_MAX,
	};
	size_t len = userappl ? strlen(userappl) : 0;

	if (len > UINT16_MAX)
		return -EINVAL;
	put(&b, &h, sizeof(h));
	if (len)
		put_opt(&b, RXP_PCAPNG_SHB_USERAPPL, userappl, (uint16_t)len);
	return finish(&b);
}

int rxp_pcapng_idb(uint8_t *buf, size_t room, uint32_t snaplen, const char *if_name)
{
	struct block b = { .buf = buf, .room = room };
	struct rxp_pcapng_idb_head h = {
		.type = RXP_PCAPNG_BLOCK_IDB,
		.linktype = RXP_PCAPNG_LINKTYPE_ETHERNET,
		.snaplen = snaplen,
	};
	uint8_t tsresol = RXP_PCAPNG_TSRESOL_NS;
	size_t len = if_name ? strlen(if_name) : 0;

	if (len > UINT16_MAX)
		return -EINVAL;
	put(&b, &h, sizeof(h));
	if (len)
		put_opt(&b, RXP_PCAPNG_IF_NAME, if_name, (uint16_t)len);
	put_opt(&b, RXP_PCAPNG_IF_TSRESOL, &tsresol, 1);
	return finish(&b);
}

size_t rxp_pcapng_epb_size(const struct rxp_pcapng_packet *pkt)
{
	size_t opts = 0;

	if (pkt->flags)
		opts += sizeof(struct rxp_pcapng_opt_head) + 4;
	if (pkt->comment)
		opts += sizeof(struct rxp_pcapng_opt_head) + PAD4(strlen(pkt->comment));
	if (opts)
		opts += sizeof(struct rxp_pcapng_opt_head);
	return sizeof(struct rxp_pcapng_epb_head) + PAD4((size_t)pkt->cap_len) + opts + TRAILER_LEN;
}

/* Appends @n bytes at @p and zeros up to 32 bits; the caller checked the room. Returns the end. */
static uint8_t *emit_padded(uint8_t *p, const void *src, size_t n)
{
	if (n)
		memcpy(p, src, n);
	memset(p + n, 0, PAD4(n) - n);
	return p + PAD4(n);
}

static uint8_t *emit_opt(uint8_t *p, uint16_t code, const void *val, uint16_t len)
{
	struct rxp_pcapng_opt_head h = { .code = code, .len = len };

	memcpy(p, &h, sizeof(h));
	return emit_padded(p + sizeof(h), val, len);
}

/* The writer's hot path: the size is known up front, so the block is written in one pass. */
int rxp_pcapng_epb(uint8_t *buf, size_t room, const struct rxp_pcapng_packet *pkt)
{
	size_t comment_len = pkt->comment ? strlen(pkt->comment) : 0;
	size_t total = rxp_pcapng_epb_size(pkt);
	struct rxp_pcapng_epb_head h = {
		.type = RXP_PCAPNG_BLOCK_EPB,
		.total_len = (uint32_t)total,
		.if_id = pkt->if_id,
		.ts_high = ts_high(pkt->ts_ns),
		.ts_low = ts_low(pkt->ts_ns),
		.cap_len = pkt->cap_len,
		.orig_len = pkt->orig_len,
	};
	uint32_t trailer = (uint32_t)total;
	uint8_t *p;

	if (pkt->cap_len > pkt->orig_len || comment_len > UINT16_MAX || total > INT32_MAX)
		return -EINVAL;
	if (total > room)
		return -ENOSPC;
	memcpy(buf, &h, sizeof(h));
	p = emit_padded(buf + sizeof(h), pkt->data, pkt->cap_len);
	if (pkt->flags)
		p = emit_opt(p, RXP_PCAPNG_EPB_FLAGS, &pkt->flags, sizeof(pkt->flags));
	if (pkt->comment)
		p = emit_opt(p, RXP_PCAPNG_OPT_COMMENT, pkt->comment, (uint16_t)comment_len);
	if (pkt->flags || pkt->comment)
		p = emit_opt(p, RXP_PCAPNG_OPT_END, NULL, 0);
	memcpy(p, &trailer, sizeof(trailer));
	return (int)total;
}

int rxp_pcapng_isb(uint8_t *buf, size_t room, uint32_t if_id, uint64_t ts_ns, uint64_t start_ns,
		   uint64_t end_ns, uint64_t dropped)
{
	struct block b = { .buf = buf, .room = room };
	struct rxp_pcapng_isb_head h = {
		.type = RXP_PCAPNG_BLOCK_ISB,
		.if_id = if_id,
		.ts_high = ts_high(ts_ns),
		.ts_low = ts_low(ts_ns),
	};
	uint32_t start[2] = { ts_high(start_ns), ts_low(start_ns) };
	uint32_t end[2] = { ts_high(end_ns), ts_low(end_ns) };

	put(&b, &h, sizeof(h));
	put_opt(&b, RXP_PCAPNG_ISB_STARTTIME, start, sizeof(start));
	put_opt(&b, RXP_PCAPNG_ISB_ENDTIME, end, sizeof(end));
	put_opt(&b, RXP_PCAPNG_ISB_IFDROP, &dropped, sizeof(dropped));
	return finish(&b);
}
