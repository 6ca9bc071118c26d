/* SPDX-License-Identifier: MIT */
/*
 * The command language's one table of verbs. Each verb says where it is
 * taken (config files and -e, the control socket, or both), its help
 * line, and its functions: a parser that turns a line into changes of a
 * config (router commands the engine applies and takes back, see
 * engine/cmd.c, or ports and sync settings), or for what the control
 * thread answers itself (show, capture, help) a server. Adding a verb is
 * adding an entry here and its functions in the file of their job.
 */
#ifndef RXPATH_CTL_VERBS_H
#define RXPATH_CTL_VERBS_H

#include "core/sbuf.h"
#include "engine/dataplane.h"
#include "words.h"

enum cmd_context {
	CMD_IN_CONFIG = 1,	/* config files, -e, reload, kernel sync's lines */
	CMD_IN_CTL = 2,		/* `rxpath ctl` */
};

struct ctl_server;

struct cmd_verb {
	const char *word;	/* the line's first word */
	const char *listed_as;	/* how the ctl's list of commands names it, if not the word ("port set") */
	unsigned ctl_rank;	/* its place in ctl's list of commands and its help, from 0 */
	unsigned in;		/* enum cmd_context bits */
	const char *help;	/* its lines of `rxpath ctl help` (NULL: none) */
	struct cmd_shape shape;	/* how cmd_split() cuts its lines */
	const char *too_many;	/* the message for too many words; NULL: the tokenizer's */
	/* Parses @l into @cfg (@where: the line's source, for the commands). Returns 0 or -EINVAL with @e. */
	int (*parse)(struct dp_config *cfg, const struct cmd_line *l, const char *where,
		     struct cmd_err *e);
	/* ctl: answers @l itself (preferred to parse there). Returns 0 with the reply in @out, or -errno. */
	int (*serve)(struct ctl_server *s, const struct cmd_line *l, bool json, struct rxp_sbuf *out);
};

/* Returns the verb @line starts with that is taken in @in, or NULL. */
const struct cmd_verb *cmd_verb_of(const char *line, unsigned in);

/* Writes the verbs taken in @in to @buf, for a message: "addr, route, neigh, ...". Returns @buf. */
char *cmd_verbs_list(unsigned in, char *buf, size_t len);

/* Appends the help lines of the verbs taken in @in to @out. Returns 0 or -ENOMEM. */
int cmd_verbs_help(unsigned in, struct rxp_sbuf *out);

/* ---- the verbs' functions, each in the file of its job ---- */

/* config.c: the router, port and sync lines. Each returns 0 or -EINVAL with @e (as ->parse). */
int verb_addr(struct dp_config *cfg, const struct cmd_line *l, const char *where, struct cmd_err *e);
int verb_route(struct dp_config *cfg, const struct cmd_line *l, const char *where, struct cmd_err *e);
int verb_neigh(struct dp_config *cfg, const struct cmd_line *l, const char *where, struct cmd_err *e);
int verb_port(struct dp_config *cfg, const struct cmd_line *l, const char *where, struct cmd_err *e);
int verb_icmp(struct dp_config *cfg, const struct cmd_line *l, const char *where, struct cmd_err *e);
int verb_ip(struct dp_config *cfg, const struct cmd_line *l, const char *where, struct cmd_err *e);
int verb_sync(struct dp_config *cfg, const struct cmd_line *l, const char *where, struct cmd_err *e);
int verb_vrf(struct dp_config *cfg, const struct cmd_line *l, const char *where, struct cmd_err *e);

/* filter_verbs.c: the filter's rules, policies and sets, and connection tracking. */
int verb_filter(struct dp_config *cfg, const struct cmd_line *l, const char *where, struct cmd_err *e);
int verb_conntrack(struct dp_config *cfg, const struct cmd_line *l, const char *where,
		   struct cmd_err *e);
int verb_nat(struct dp_config *cfg, const struct cmd_line *l, const char *where, struct cmd_err *e);

/*
 * ctl_server.c, ctl_sync.c, ctl_capture.c: what the control thread answers
 * itself. Each returns 0 with the reply in @out, or -errno (as ->serve).
 */
int ctl_show_serve(struct ctl_server *s, const struct cmd_line *l, bool json, struct rxp_sbuf *out);
int ctl_help_serve(struct ctl_server *s, const struct cmd_line *l, bool json, struct rxp_sbuf *out);
int ctl_sync_serve(struct ctl_server *s, const struct cmd_line *l, bool json, struct rxp_sbuf *out);
int ctl_capture_serve(struct ctl_server *s, const struct cmd_line *l, bool json,
		      struct rxp_sbuf *out);

#endif
