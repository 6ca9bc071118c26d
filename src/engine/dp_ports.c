/* SPDX-License-Identifier: MIT */
/*
 * Ports whose device goes away while rxpath runs (an interface deleted or
 * moved to another namespace) or comes back, or loses its carrier. The
 * drivers notice; here the datapath says so, once, and lets go of what it
 * held for the port. The other ports are not touched: they keep
 * forwarding. A port without its link takes its next hops out of the
 * multipath routes' groups, as does a neighbour that stopped answering.
 */
#include <stdio.h>
#include <unistd.h>
#include "dataplane.h"
#include "port/netdev.h"
#include "workers.h"

/*
 * Which ports' links changed, read before the barrier (a system call per
 * port with a device, off the workers' way): bit set in *@changed, the new
 * state in @down.
 */
static void links_read(struct dp *dp, bool down[DP_PORTS_MAX], uint64_t *changed)
{
	int fd = -1;

	*changed = 0;
	if (!dp->router)
		return;
	for (unsigned i = 0; i < dp->n_ports; i++) {
		const struct rxp_port *port = &dp->ports[i];
		int up;

		down[i] = port->down;
		if (!port->down && port->dev[0]) {
			if (fd < 0 && (fd = rxp_netdev_socket()) < 0)
				return;
			up = rxp_netdev_is_running(fd, port->dev);
			down[i] = up == 0;	/* an error (the device going) is the driver's to tell */
		}
		if (down[i] != dp->router->port_down[port->id])
			*changed |= 1ull << i;
	}
	if (fd >= 0)
		close(fd);
}

/*
 * The device's MTU changed (ip link set dev X mtu N): the port's interfaces
 * that keep the default follow it; one configured above it is said to
 * lose the larger packets, once per change.
 */
static void mtu_follow(struct dp *dp, struct rxp_port *port)
{
	uint32_t old = port->mtu;
	struct rxp_router *r = dp->router;

	if (rxp_port_refresh_mtu(port) || port->mtu == old || !r)
		return;
	for (unsigned i = 0; i < r->n_ifs; i++) {
		const struct rxp_l3if *ifp = &r->ifs[i];
		uint32_t mtu;

		if (ifp->port != port->id)
			continue;
		/* the port's interface comes first (the lower index): its VLANs' stay within it */
		mtu = dp_if_mtu(dp, (int)i);
		if (dp->mtu_cfg[i] && !ifp->vlan && ifp->mtu > port->mtu)
			dp_log(dp, "port %s: the MTU of %s is now %u, below %s's configured %u: "
			       "the kernel drops larger packets unseen; lower it (port set %s mtu %u) or "
			       "raise the device's (ip link set dev %s mtu %u)", port->name, port->dev,
			       port->mtu, ifp->name, ifp->mtu, ifp->name, port->mtu, port->dev, ifp->mtu);
		if (ifp->mtu == mtu || rxp_router_set_mtu(r, (int)i, mtu))
			continue;
		dp_log(dp, "port %s: the MTU of %s went from %u to %u; %s follows: mtu %u",
		       port->name, port->dev, old, port->mtu, ifp->name, mtu);
		dp_host_mirror(dp, (int)i, &(struct dp_cmd){ .kind = DP_CMD_MTU, .where = "mtu" });
	}
}

void dp_ports_check(struct dp *dp, uint64_t now_ns)
{
	bool any = false, down[DP_PORTS_MAX];
	uint64_t links;

	dp->next_port_check_ns = now_ns + DP_PORT_CHECK_NS;
	for (unsigned i = 0; i < dp->n_ports; i++)
		any |= dp->ports[i].ops && dp->ports[i].ops->check;
	links_read(dp, down, &links);
	/* multipath groups: their members' neighbours are looked at too */
	any |= links || (dp->router && dp->router->n_groups);
	if (!any)
		return;
	/* a port may go down under the other workers' polls: they wait between two */
	dp_barrier_enter(dp);
	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct rxp_port *port = &dp->ports[i];
		char msg[256];
		uint64_t dropped;

		switch (rxp_port_check(port, msg, sizeof(msg))) {
		case RXP_PORT_SAME:
			break;
		case RXP_PORT_GONE:
			/* the neighbour table is shared: worker 0's stack empties it for all */
			dropped = rxp_stack_port_down(&dp->stack, port->id);
			if (dropped)
				dp_log(dp, "port %s: %s; port down, other ports keep running "
				       "(%llu packets waiting for a neighbour there dropped)", port->name,
				       msg, (unsigned long long)dropped);
			else
				dp_log(dp, "port %s: %s; port down, other ports keep running",
				       port->name, msg);
			break;
		case RXP_PORT_BACK:
		case RXP_PORT_NOTE:
			dp_log(dp, "port %s: %s", port->name, msg);
			break;
		}
		if (port->dev[0] && !port->down)
			mtu_follow(dp, port);
		/* told when it moves flows (the drivers tell of the device themselves) */
		if (((links >> i) & 1) && rxp_router_set_port_down(dp->router, port->id, down[i]) &&
		    dp->router->n_groups)
			dp_log(dp, "port %s: link %s", port->name,
			       down[i] ? "down (no carrier); its next hops leave the multipath routes"
				       : "up; its next hops are back in the multipath routes");
	}
	if (dp->router)
		rxp_router_groups_check(dp->router);
	dp_barrier_exit(dp);
}
