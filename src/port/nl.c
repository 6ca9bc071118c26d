/* SPDX-License-Identifier: MIT */
/* Netlink requests on libmnl: one request, its answers, its acknowledgement. */
#include <errno.h>
#include "nl.h"

struct mnl_socket *rxp_nl_open(int bus)
{
	struct mnl_socket *nl = mnl_socket_open(bus);

	if (nl && mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;

		mnl_socket_close(nl);
		errno = e;
		return NULL;
	}
	return nl;
}

int rxp_nl_request(struct mnl_socket *nl, struct nlmsghdr *nlh, uint32_t seq, mnl_cb_t cb,
		   void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned portid = mnl_socket_get_portid(nl);
	ssize_t n;
	int ret;

	nlh->nlmsg_seq = seq;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, cb, data);
	} while (ret > 0);	/* MNL_CB_OK: not the acknowledgement yet */
	return ret < 0 ? -errno : 0;
}
