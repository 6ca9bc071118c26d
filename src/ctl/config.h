/* SPDX-License-Identifier: MIT */
/*
 * The command language:
 *   port add NAME DRIVER[:key=value,...]     (VLAN sub-port: vlan:parent=PORT,id=N)
 *   port set NAME mtu N
 *   port set NAME host on|off [gro on|off] [name TAP]   (the port's TAP twin for the kernel)
 *   addr add|del ADDRESS/LENGTH dev PORT
 *   route add PREFIX [via GATEWAY] [dev PORT]
 *   route del PREFIX
 *   neigh add ADDRESS lladdr MAC dev PORT
 *   neigh del ADDRESS dev PORT
 *   icmp ratelimit ERRORS_PER_SECOND [burst N]
 *   sync kernel [table N] [interval SECONDS]   (mirror the kernel's routes; sync off)
 * Lines come from -c FILE and -e 'CMD'. '#' starts a comment. A bad line is
 * reported with its number, the offending word and what was expected, and
 * nothing is applied.
 */
#ifndef RXPATH_CTL_CONFIG_H
#define RXPATH_CTL_CONFIG_H

#include "engine/dataplane.h"

/*
 * Applies one line to @cfg. @where names the source ("-e 2", "rxpath.conf:3")
 * for the message. Returns 0 or -EINVAL with @err filled in; @cfg is then unchanged.
 */
int config_apply_line(struct dp_config *cfg, const char *line, const char *where, char *err,
		      size_t errlen);

/* Applies every line of @path; all or nothing. Returns 0 or -errno with @err. */
int config_apply_file(struct dp_config *cfg, const char *path, char *err, size_t errlen);

/*
 * Applies one receive-path option shared by run and bench (--handoff,
 * --prefetch, --copy, --copybreak, --rx-offset, --buffers, --max-frame,
 * --budget, --pool, --hugepages). Returns 1 if @name was one, 0 if not,
 * -EINVAL with @err if its value is bad.
 */
int apply_rx_option(struct dp_config *cfg, const char *name, const char *value, char *err,
		    size_t errlen);

/* Parses an IPv4 or IPv6 address; returns its family (4 or 6) or 0. */
int parse_ip_addr(const char *text, uint8_t out[16]);

/* Parses "ADDR/LEN" (a bare address means a host prefix). Returns the family or 0. */
int parse_prefix(const char *text, uint8_t out[16], uint8_t *plen);

#endif
