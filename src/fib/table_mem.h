/* SPDX-License-Identifier: MIT */
/* Memory for the big lookup tables of src/fib: mapped lazily, on huge pages where there are any. */
#ifndef RXPATH_FIB_TABLE_MEM_H
#define RXPATH_FIB_TABLE_MEM_H

#include <stddef.h>

#define RXP_TABLE_HUGE ((size_t)2 << 20)	/* 2 MiB */
#define RXP_TABLE_PAGE 4096u

/*
 * Maps @len bytes of zeroed memory on a 2 MiB boundary and asks for
 * transparent huge pages: random lookups then miss the TLB far less. Without
 * THP the advice fails and the table works on 4 KiB pages. Pages no one
 * touches cost nothing. Returns NULL on failure.
 */
void *rxp_table_map(size_t len);

/* Returns the bytes of [p, p + len) that are in memory. */
size_t rxp_table_resident(const void *p, size_t len);

#endif
