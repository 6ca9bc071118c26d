/* SPDX-License-Identifier: MIT */
/*
 * The datapath's host paths ("port set NAME host on|off [gro on|off]
 * [name TAP]"), kept in step with the router: an address added to or
 * deleted from a port, or its MTU changed, is done on its TAP too, at
 * start-up and while running.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include "dataplane.h"

int dp_host_apply(struct dp *dp, int ifidx, const struct dp_cmd *c, char *err, size_t errlen)
{
	struct rxp_host_config hc;
	const struct rxp_l3if *ifp;
	char herr[RXP_ERR_LEN];
	struct rxp_host *h, *old;
	int ret;

	if (!dp->router || ifidx < 0 || (unsigned)ifidx >= dp->router->n_ifs) {
		snprintf(err, errlen, "%s: host: no such port", c->where);
		return -ENOENT;
	}
	ifp = &dp->router->ifs[ifidx];
	if (ifp->vlan) {
		snprintf(err, errlen, "%s: %s is a VLAN sub-port: a host path belongs to a port",
			 c->where,
			 ifp->name);
		return -EINVAL;
	}
	h = dp->stack.host[ifp->port];
	if (!c->host_on) {
		rxp_host_close(&dp->stack, h);
		return 0;
	}
	if (h && (!c->host_name[0] || !strcmp(c->host_name, h->tap.name))) {
		rxp_host_set_gro(h, c->host_gro);
		return 0;
	}
	/* another name: another TAP, which takes over once it is open (a failure keeps the old one) */
	old = h;
	memset(&hc, 0, sizeof(hc));
	snprintf(hc.name, sizeof(hc.name), "%s", c->host_name);
	hc.gro = c->host_gro;
	ret = rxp_host_open(&h, dp->router, ifidx, &hc, herr, sizeof(herr));
	if (ret == -EPERM && (dp->caps_dropped >> CAP_NET_ADMIN & 1)) {
		snprintf(err, errlen, "%s: host path of %s: rxpath gave up CAP_NET_ADMIN after set-up, as no port had a host path then; "
			 "put 'port set %s host on' in the config, or start rxpath with --keep-caps net_admin",
			 c->where, ifp->name, ifp->name);
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "%s: %s", c->where, herr);
		return ret;
	}
	rxp_host_close(&dp->stack, old);
	ret = rxp_host_attach(&dp->stack, h);
	if (ret) {
		rxp_host_close(&dp->stack, h);
		snprintf(err, errlen, "%s: host path of %s: cannot attach it", c->where, ifp->name);
	}
	return ret;
}

void dp_host_mirror(struct dp *dp, int ifidx, const struct dp_cmd *c)
{
	const struct rxp_l3if *ifp;
	char err[RXP_ERR_LEN];
	struct rxp_host *h;
	int ret = 0;

	if (!dp->router || ifidx < 0 || (unsigned)ifidx >= dp->router->n_ifs)
		return;
	ifp = &dp->router->ifs[ifidx];
	h = ifp->vlan ? NULL : dp->stack.host[ifp->port];
	if (!h)
		return;
	switch (c->kind) {
	case DP_CMD_ADDR_ADD:
		ret = rxp_host_addr_add(h, c->family, c->addr, c->plen, err, sizeof(err));
		break;
	case DP_CMD_ADDR_DEL:
		ret = rxp_host_addr_del(h, c->family, c->addr, err, sizeof(err));
		break;
	case DP_CMD_MTU:
		ret = rxp_host_set_mtu(h, ifp->mtu, err, sizeof(err));
		break;
	default:
		return;
	}
	if (ret)
		dp_log(dp, "%s: the router took it, but its host path did not: %s", c->where,
		       err);
}

void dp_hosts_close(struct dp *dp)
{
	for (unsigned p = 0; p < RXP_STACK_PORTS_MAX; p++)
		rxp_host_close(&dp->stack, dp->stack.host[p]);
}

unsigned dp_host_counters(const struct dp *dp, uint16_t port, struct rxp_xstat *out, unsigned max)
{
	const struct rxp_host *h = port < RXP_STACK_PORTS_MAX ? dp->stack.host[port] : NULL;
	unsigned n = 0;

	if (!h)
		return 0;
#define X(f, help) if (n < max) out[n++] = (struct rxp_xstat){ #f, h->stats.f, false };
	RXP_HOST_COUNTERS(X)
#undef X
	return n;
}
