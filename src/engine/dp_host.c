/* SPDX-License-Identifier: MIT */
/*
 * The datapath's host paths ("port set NAME host on|off [gro on|off]
 * [name TAP]"), kept in step with the router: an address added to or
 * deleted from a port, or its MTU changed, is done on its TAP too, at
 * start-up and while running. With several workers each has its own queue
 * of the TAP (src/net/host.h); the first worker's owns the interface.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include "dataplane.h"

/* The workers with a stack: all of them once they are made, the first alone before (a failed open). */
static unsigned stacks(const struct dp *dp)
{
	return dp->workers ? dp->n_workers : 1;
}

/* Closes port @port's host path on every worker, the first worker's, the TAP's owner, last. */
static void hosts_close_port(struct dp *dp, uint16_t port)
{
	for (unsigned w = stacks(dp); w-- > 0;) {
		struct rxp_stack *st = dp_stack(dp, w);

		rxp_host_close(st, st->host[port]);
	}
}

/*
 * Opens a host path for each worker into @hs (the TAP and a queue per
 * worker after the first). Returns 0, or -errno with @herr and nothing open.
 */
static int hosts_open(struct dp *dp, int ifidx, const struct rxp_host_config *hc,
		      struct rxp_host **hs, char *herr, size_t errlen)
{
	int ret = rxp_host_open(&hs[0], dp->router, ifidx, hc, herr, errlen);

	for (unsigned w = 1; !ret && w < stacks(dp); w++) {
		ret = rxp_host_open_queue(&hs[w], hs[0], herr, errlen);
		if (ret)
			while (w-- > 0)
				rxp_host_close(NULL, hs[w]);
	}
	return ret;
}

int dp_host_apply(struct dp *dp, int ifidx, const struct dp_cmd *c, char *err, size_t errlen)
{
	struct rxp_host *hs[DP_WORKERS_MAX], *h;
	struct rxp_host_config hc;
	const struct rxp_l3if *ifp;
	char herr[RXP_ERR_LEN];
	int ret = 0;

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
		hosts_close_port(dp, ifp->port);
		return 0;
	}
	if (h && (!c->host_name[0] || !strcmp(c->host_name, h->tap.name))) {
		for (unsigned w = 0; w < stacks(dp); w++)
			rxp_host_set_gro(dp_stack(dp, w)->host[ifp->port], c->host_gro);
		return 0;
	}
	/* another name: another TAP, which takes over once it is open (a failure keeps the old one) */
	memset(&hc, 0, sizeof(hc));
	snprintf(hc.name, sizeof(hc.name), "%s", c->host_name);
	hc.gro = c->host_gro;
	hc.multi_queue = stacks(dp) > 1;
	ret = hosts_open(dp, ifidx, &hc, hs, herr, sizeof(herr));
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
	hosts_close_port(dp, ifp->port);
	for (unsigned w = 0; w < stacks(dp); w++)
		if (rxp_host_attach(dp_stack(dp, w), hs[w])) {
			rxp_host_close(NULL, hs[w]);
			ret = -EINVAL;
		}
	if (ret) {
		hosts_close_port(dp, ifp->port);
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
		hosts_close_port(dp, (uint16_t)p);
}

bool dp_host_stats(const struct dp *dp, uint16_t port, struct rxp_host_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	if (port >= RXP_STACK_PORTS_MAX || !dp->stack.host[port])
		return false;
	/* every worker's queue of it, counted together */
	for (unsigned w = 0; w < stacks(dp); w++) {
		const struct rxp_host *q = dp_cstack(dp, w)->host[port];

		if (!q)
			continue;
#define X(f, help) sum->f += q->stats.f;
		RXP_HOST_COUNTERS(X)
#undef X
	}
	return true;
}

unsigned dp_host_counters(const struct dp *dp, uint16_t port, struct rxp_xstat *out, unsigned max)
{
	struct rxp_host_stats sum;
	unsigned n = 0;

	if (!dp_host_stats(dp, port, &sum))
		return 0;
#define X(f, help) if (n < max) out[n++] = (struct rxp_xstat){ #f, sum.f, false };
	RXP_HOST_COUNTERS(X)
#undef X
	return n;
}
