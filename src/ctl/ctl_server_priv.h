/* SPDX-License-Identifier: MIT */
/*
 * What the control thread's files share: the server's state, and the
 * functions each of them offers the others (the socket and dispatch in
 * ctl_server.c, kernel sync in ctl_sync.c, capture control in
 * ctl_capture.c, reload in reload.c); the verbs' entry points are in verbs.h.
 */
#ifndef RXPATH_CTL_SERVER_PRIV_H
#define RXPATH_CTL_SERVER_PRIV_H

#include <net/if.h>
#include "capture_file.h"
#include "ctl_server.h"
#include "ksync.h"

struct ctl_server {
	struct ctl_server_config cfg;
	char path[108];
	int listen_fd, stop_fd, signal_fd;
	int spare_fd;		/* /dev/null, given up to turn a client away when descriptors run out */
	bool told_no_fds;	/* that has been logged */
	pthread_t thread;
	struct rxp_capture_file *capture;	/* running capture; touched on the datapath thread */
	struct rxp_ksync *ksync;	/* `sync kernel` is on */
	uint32_t sync_table, sync_interval_ms;
	struct ctl_sync_vrfs {		/* the VRFs whose tables the sync mirrors, names kept here */
		uint32_t main_table;
		unsigned n;
		struct rxp_ksync_vrf vrf[RXP_KSYNC_VRFS_MAX];
		char name[RXP_KSYNC_VRFS_MAX][RXP_PORT_NAME_MAX];
	} sync_vrfs;
	unsigned n_map;
	struct rxp_ksync_port_map map[2 * DP_PORTS_MAX];	/* kernel interfaces, then TAPs */
	char map_ifname[2 * DP_PORTS_MAX][IF_NAMESIZE];
};

/* Fills @scratch with the running ports' names (no commands), so that a line can name them. */
void ctl_scratch_config(const struct dp_config *active, struct dp_config *scratch);

/* Replaces @out with @msg as an error reply (text or JSON). Returns @ret. */
int ctl_reply_error(struct rxp_sbuf *out, bool json, int ret, const char *msg);

/* ---- kernel sync (ctl_sync.c) ---- */

/* Withdraws what the sync installed and stops it (nothing when it is off). */
void ctl_sync_stop(struct ctl_server *s);

/* Starts mirroring kernel table @table and runs the first full sync. Returns lines applied or -errno with @err. */
int ctl_sync_start(struct ctl_server *s, uint32_t table, uint32_t interval_ms, char *err,
		   size_t errlen);

/* Writes why sync has nothing to mirror to @err. Returns -EINVAL. */
int ctl_sync_no_ports(char *err, size_t errlen);

/* Returns true when a port is on a kernel interface or has a host path: sync has something to mirror. */
bool ctl_sync_has_ports(struct ctl_server *s);

/* After @cmds went in: restarts or re-offers the sync as they need (warnings to @warnings, if not NULL). */
void ctl_sync_after_changes(struct ctl_server *s, const struct dp_cmd *cmds, unsigned n,
			    struct rxp_sbuf *warnings);

/* `show routes kernel [summary]` (@summary: the counts alone). Returns 0 with the report in @out, or -errno. */
int ctl_sync_show_routes(struct ctl_server *s, bool json, bool summary, struct rxp_sbuf *out);

/* ---- reload (reload.c) ---- */

/* Reads the config sources again and applies the difference, all or nothing; says on stderr what it did. */
void ctl_reload(struct ctl_server *s);

#endif
