/* SPDX-License-Identifier: MIT */
/*
 * What a device says it can do with XDP, from the kernel's generic netlink
 * "netdev" family (Linux 6.3): the xdp-features of NETDEV_CMD_DEV_GET. The
 * driver declares them, so they hold for drivers nobody has listed yet. And
 * the words that take a program off a device in the mode it is attached in.
 */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <string.h>
#include <time.h>
#include "xdp_features.h"
#include "nl.h"

/* linux/netdev.h (uapi), which Debian 12's kernel headers predate */
#define NETDEV_FAMILY_NAME "netdev"
#define NETDEV_FAMILY_VERSION 1
#define NETDEV_CMD_DEV_GET 1
#define NETDEV_A_DEV_IFINDEX 1
#define NETDEV_A_DEV_XDP_FEATURES 3

struct reply {
	uint16_t attr;		/* the attribute wanted */
	int len;		/* its size: 2 (u16) or 8 (u64) */
	uint64_t value;
	bool found;
};

static int attr_cb(const struct nlattr *a, void *data)
{
	struct reply *r = data;

	if (mnl_attr_get_type(a) != r->attr)
		return MNL_CB_OK;
	if (r->len == 2 && !mnl_attr_validate(a, MNL_TYPE_U16))
		r->value = mnl_attr_get_u16(a);
	else if (r->len == 8 && !mnl_attr_validate(a, MNL_TYPE_U64))
		r->value = mnl_attr_get_u64(a);
	else
		return MNL_CB_OK;
	r->found = true;
	return MNL_CB_OK;
}

static int msg_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), attr_cb, data);
}

static struct nlmsghdr *genl_request(char *buf, uint16_t type, uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

const char *rxp_xdp_detach_words(uint8_t attach_mode)
{
	return attach_mode == XDP_ATTACHED_SKB ? "xdpgeneric off" :
	       attach_mode == XDP_ATTACHED_HW ? "xdpoffload off" : "xdpdrv off";
}

int rxp_xdp_features(unsigned ifindex, uint64_t *features)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct reply family = { .attr = CTRL_ATTR_FAMILY_ID, .len = 2 };
	struct reply dev = { .attr = NETDEV_A_DEV_XDP_FEATURES, .len = 8 };
	struct mnl_socket *nl = rxp_nl_open(NETLINK_GENERIC);
	uint32_t seq = (uint32_t)time(NULL);
	struct nlmsghdr *nlh;
	int ret;

	if (!nl)
		return -errno;
	nlh = genl_request(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME);
	ret = rxp_nl_request(nl, nlh, seq, msg_cb, &family);
	if (ret || !family.found) {
		ret = -ENOENT;	/* no netdev family: a kernel before 6.3 */
		goto out;
	}
	nlh = genl_request(buf, (uint16_t)family.value, NETDEV_CMD_DEV_GET, NETDEV_FAMILY_VERSION);
	mnl_attr_put_u32(nlh, NETDEV_A_DEV_IFINDEX, ifindex);
	ret = rxp_nl_request(nl, nlh, seq + 1, msg_cb, &dev);
	if (!ret && !dev.found)
		ret = -ENOENT;
	if (!ret)
		*features = dev.value;
out:
	mnl_socket_close(nl);
	return ret;
}
