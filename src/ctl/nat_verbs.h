/* SPDX-License-Identifier: MIT */
/* The nat verb's words (nat_verbs.c): rules, filtering, timeouts. */
#ifndef RXPATH_CTL_NAT_VERBS_H
#define RXPATH_CTL_NAT_VERBS_H

#include "engine/dataplane.h"
#include "words.h"

/* "endpoint-independent", ... */
const char *nat_filtering_name(unsigned f);

#endif
