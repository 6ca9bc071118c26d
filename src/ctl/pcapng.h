/* SPDX-License-Identifier: MIT */
/*
 * pcapng blocks (draft-ietf-opsawg-pcapng): the Section Header, Interface
 * Description, Enhanced Packet and Interface Statistics blocks, encoded in
 * host byte order (the section's byte-order magic tells readers which).
 * Each function writes one whole block into a caller's buffer.
 */
#ifndef RXPATH_PCAPNG_H
#define RXPATH_PCAPNG_H

#include <stddef.h>
#include <stdint.h>

#define RXP_PCAPNG_BLOCK_SHB 0x0a0d0d0au
#define RXP_PCAPNG_BLOCK_IDB 0x00000001u
#define RXP_PCAPNG_BLOCK_ISB 0x00000005u
#define RXP_PCAPNG_BLOCK_EPB 0x00000006u
#define RXP_PCAPNG_BYTE_ORDER_MAGIC 0x1a2b3c4du
#define RXP_PCAPNG_LINKTYPE_ETHERNET 1u

/* option codes; the meaning of a code depends on the block */
#define RXP_PCAPNG_OPT_END 0u
#define RXP_PCAPNG_OPT_COMMENT 1u
#define RXP_PCAPNG_SHB_USERAPPL 4u
#define RXP_PCAPNG_IF_NAME 2u
#define RXP_PCAPNG_IF_TSRESOL 9u
#define RXP_PCAPNG_EPB_FLAGS 2u
#define RXP_PCAPNG_ISB_STARTTIME 2u
#define RXP_PCAPNG_ISB_ENDTIME 3u
#define RXP_PCAPNG_ISB_IFDROP 5u

/* epb_flags bits 0-1 (0 the least significant): the direction */
#define RXP_PCAPNG_DIR_INBOUND 0x1u
#define RXP_PCAPNG_DIR_OUTBOUND 0x2u
#define RXP_PCAPNG_DIR_MASK 0x3u

#define RXP_PCAPNG_TSRESOL_NS 9u	/* if_tsresol: 10^-9 s */

/* The fixed parts of the blocks, as laid out in the file. */
struct rxp_pcapng_shb_head {
	uint32_t type;
	uint32_t total_len;
	uint32_t byte_order_magic;
	uint16_t major, minor;
	uint64_t section_len;	/* UINT64_MAX: not given */
};

struct rxp_pcapng_idb_head {
	uint32_t type;
	uint32_t total_len;
	uint16_t linktype;
	uint16_t reserved;
	uint32_t snaplen;
};

struct rxp_pcapng_epb_head {
	uint32_t type;
	uint32_t total_len;
	uint32_t if_id;
	uint32_t ts_high, ts_low;
	uint32_t cap_len;
	uint32_t orig_len;
};

struct rxp_pcapng_isb_head {
	uint32_t type;
	uint32_t total_len;
	uint32_t if_id;
	uint32_t ts_high, ts_low;
};

struct rxp_pcapng_opt_head {
	uint16_t code;
	uint16_t len;		/* of the value, without the padding to 32 bits */
};

_Static_assert(sizeof(struct rxp_pcapng_shb_head) == 24, "pcapng SHB fixed part");
_Static_assert(sizeof(struct rxp_pcapng_idb_head) == 16, "pcapng IDB fixed part");
_Static_assert(sizeof(struct rxp_pcapng_epb_head) == 28, "pcapng EPB fixed part");
_Static_assert(sizeof(struct rxp_pcapng_isb_head) == 20, "pcapng ISB fixed part");
_Static_assert(sizeof(struct rxp_pcapng_opt_head) == 4, "pcapng option header");

/* One packet for an Enhanced Packet Block. */
struct rxp_pcapng_packet {
	uint32_t if_id;		/* the interface's place among the section's IDBs */
	uint64_t ts_ns;		/* nanoseconds since the epoch (the IDB says if_tsresol 9) */
	uint32_t cap_len;	/* bytes at data */
	uint32_t orig_len;
	const uint8_t *data;
	uint32_t flags;		/* epb_flags; 0: no option */
	const char *comment;	/* opt_comment; NULL: none */
};

/* Returns the bytes an Enhanced Packet Block of @pkt takes. */
size_t rxp_pcapng_epb_size(const struct rxp_pcapng_packet *pkt);

/* Writes a Section Header Block naming @userappl. Returns its length, or -ENOSPC / -EINVAL. */
int rxp_pcapng_shb(uint8_t *buf, size_t room, const char *userappl);

/*
 * Writes an Interface Description Block for an Ethernet interface called
 * @if_name with nanosecond time stamps. Returns its length, or -ENOSPC / -EINVAL.
 */
int rxp_pcapng_idb(uint8_t *buf, size_t room, uint32_t snaplen, const char *if_name);

/* Writes an Enhanced Packet Block. Returns its length, or -ENOSPC / -EINVAL. */
int rxp_pcapng_epb(uint8_t *buf, size_t room, const struct rxp_pcapng_packet *pkt);

/*
 * Writes an Interface Statistics Block for interface @if_id at @ts_ns: the
 * capture ran from @start_ns to @end_ns and lost @dropped packets.
 * Returns its length, or -ENOSPC.
 */
int rxp_pcapng_isb(uint8_t *buf, size_t room, uint32_t if_id, uint64_t ts_ns, uint64_t start_ns,
		   uint64_t end_ns, uint64_t dropped);

#endif
