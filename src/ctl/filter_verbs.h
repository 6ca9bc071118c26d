/* SPDX-License-Identifier: MIT */
/* The filter's and connection tracking's lines of the command language (filter_verbs.c). */
#ifndef RXPATH_CTL_FILTER_VERBS_H
#define RXPATH_CTL_FILTER_VERBS_H

#include "engine/dataplane.h"
#include "words.h"

/*
 * Parses a rule's words after its chain, @w[0..@n) ("src 10.0.0.0/8 proto
 * tcp dport 22 accept"), into @f (whose chain is set already): the match,
 * the verdict and the rule's text. Returns 0 or -EINVAL with @e.
 */
/* Parses a port "N" or range "N-M" (N <= M). Returns 0 or -1. */
int filter_parse_range(const char *text, uint16_t *lo, uint16_t *hi);

int filter_rule_parse(char *const *w, int n, struct dp_filter_cmd *f, struct cmd_err *e);

/* "input", "forward", "output" ("all" past them); "accept", "drop", "reject". */
const char *filter_chain_name(unsigned chain);
const char *filter_verdict_name(unsigned verdict);

#endif
