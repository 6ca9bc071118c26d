/* SPDX-License-Identifier: MIT */
/*
 * Ports whose device goes away while rxpath runs (an interface deleted or
 * moved to another namespace) or comes back. The drivers notice; here the
 * datapath says so, once, and lets go of what it held for the port. The
 * other ports are not touched: they keep forwarding.
 */
#include <stdio.h>
#include "dataplane.h"
#include "workers.h"

void dp_ports_check(struct dp *dp, uint64_t now_ns)
{
	bool any = false;

	dp->next_port_check_ns = now_ns + DP_PORT_CHECK_NS;
	for (unsigned i = 0; i < dp->n_ports; i++)
		any |= dp->ports[i].ops && dp->ports[i].ops->check;
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
			fprintf(stderr, "rxpath: port %s: %s; port down, other ports keep running",
				port->name, msg);
			if (dropped)
				fprintf(stderr, " (%llu packets waiting for a neighbour there dropped)",
					(unsigned long long)dropped);
			fputc('\n', stderr);
			break;
		case RXP_PORT_BACK:
		case RXP_PORT_NOTE:
			fprintf(stderr, "rxpath: port %s: %s\n", port->name, msg);
			break;
		}
	}
	dp_barrier_exit(dp);
}
