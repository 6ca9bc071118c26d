/* SPDX-License-Identifier: MIT */
/* Netlink requests on libmnl, shared by the drivers that talk to the kernel that way. */
#ifndef RXPATH_PORT_NL_H
#define RXPATH_PORT_NL_H

#include <libmnl/libmnl.h>

/* Opens and binds a netlink socket on @bus. Returns it, or NULL with errno set. */
struct mnl_socket *rxp_nl_open(int bus);

/*
 * Sends @nlh (its sequence number set to @seq) and reads the answers until
 * the acknowledgement, each message of them handed to @cb (may be NULL).
 * Returns 0 or -errno.
 */
int rxp_nl_request(struct mnl_socket *nl, struct nlmsghdr *nlh, uint32_t seq, mnl_cb_t cb,
		   void *data);

#endif
