/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "rxpath/port.h"
#include "netdev.h"

extern const struct rxp_port_ops rxp_sim_ops;
extern const struct rxp_port_ops rxp_pcap_ops;
extern const struct rxp_port_ops rxp_afxdp_ops;
extern const struct rxp_port_ops rxp_afpacket_ops;

static const struct rxp_port_ops *const drivers[] = {
	&rxp_sim_ops,
	&rxp_pcap_ops,
	&rxp_afpacket_ops,
	&rxp_afxdp_ops,
};

const struct rxp_port_ops *rxp_port_driver(const char *name)
{
	for (size_t i = 0; i < RXP_ARRAY_SIZE(drivers); i++)
		if (!strcmp(drivers[i]->driver, name))
			return drivers[i];
	return NULL;
}

const char *rxp_port_drivers(void)
{
	return "sim, pcap"
	       ", afpacket"
	       ", afxdp";
}

const struct rxp_port_ops *rxp_port_driver_of_spec(const char *spec)
{
	char driver[32];
	size_t dlen = strcspn(spec, ":");

	if (dlen == 0 || dlen >= sizeof(driver))
		return NULL;
	memcpy(driver, spec, dlen);
	driver[dlen] = '\0';
	return rxp_port_driver(driver);
}

bool rxp_port_spec_kernel_if(const char *spec, char *ifname, size_t len)
{
	const struct rxp_port_ops *ops = rxp_port_driver_of_spec(spec);
	const char *colon = strchr(spec, ':');
	char err[RXP_ERR_LEN];
	struct rxp_args args;
	const char *dev;

	if (!ops || !ops->kernel_dev || !colon || rxp_args_parse(&args, colon + 1, err, sizeof(err)))
		return false;
	dev = rxp_args_get(&args, "dev");
	if (!dev || !dev[0] || strlen(dev) >= len)
		return false;
	snprintf(ifname, len, "%s", dev);
	return true;
}

int rxp_port_open(struct rxp_port *port, uint16_t id, const char *name, const char *spec,
		  struct rxp_pool *pool, char *err, size_t errlen)
{
	char driver[32];
	const char *colon = strchr(spec, ':');
	size_t dlen = colon ? (size_t)(colon - spec) : strlen(spec);
	struct rxp_args args;
	int ret;

	memset(port, 0, sizeof(*port));
	if (id >= RXP_PORTS_MAX) {
		snprintf(err, errlen, "port %s: at most %d ports", name, RXP_PORTS_MAX);
		return -EINVAL;
	}
	if (!name[0] || strlen(name) >= sizeof(port->name)) {
		snprintf(err, errlen, "port name '%s' must be 1 to %d characters", name,
			 RXP_PORT_NAME_MAX - 1);
		return -EINVAL;
	}
	if (dlen == 0 || dlen >= sizeof(driver)) {
		snprintf(err, errlen, "port spec '%s' must start with a driver (%s)", spec,
			 rxp_port_drivers());
		return -EINVAL;
	}
	memcpy(driver, spec, dlen);
	driver[dlen] = '\0';
	port->ops = rxp_port_driver(driver);
	if (!port->ops) {
		snprintf(err, errlen, "unknown driver '%s' (built in: %s)", driver,
			 rxp_port_drivers());
		return -ENOENT;
	}
	ret = rxp_args_parse(&args, colon ? colon + 1 : "", err, errlen);
	if (ret)
		return ret;
	snprintf(port->name, sizeof(port->name), "%s", name);
	port->id = id;
	port->pool = pool;
	port->mtu = 0;		/* no device, unless the driver has one */
	port->n_queues = 1;
	/* A locally administered MAC derived from the port id, unless the driver sets one. */
	port->mac[0] = 0x02;
	port->mac[5] = (uint8_t)(id + 1);
	port->mac[4] = (uint8_t)((id + 1) >> 8);
	ret = port->ops->open(port, &args, err, errlen);
	if (ret)
		return ret;
	for (uint16_t q = 0; q < port->n_queues; q++) {
		port->queues[q].port = port;
		port->queues[q].id = q;
	}
	return 0;
}

int rxp_port_start(struct rxp_port *port, struct rxp_pool_cache *cache, char *err, size_t errlen)
{
	return rxp_port_start_caches(port, &cache, 1, err, errlen);
}

int rxp_port_start_caches(struct rxp_port *port, struct rxp_pool_cache *const *caches,
			  unsigned n_caches, char *err, size_t errlen)
{
	for (uint16_t q = 0; q < port->n_queues; q++) {
		port->queues[q].cache = caches[q % n_caches];
		port->ops->refill(&port->queues[q]);
	}
	return port->ops->start ? port->ops->start(port, err, errlen) : 0;
}

void rxp_port_close(struct rxp_port *port)
{
	if (port->ops) {
		port->ops->close(port);
		port->ops = NULL;
	}
}

enum rxp_port_event rxp_port_check(struct rxp_port *port, char *msg, size_t msglen)
{
	int ev;

	if (!port->ops || !port->ops->check)
		return RXP_PORT_SAME;
	ev = port->ops->check(port, msg, msglen);
	if (ev == RXP_PORT_GONE)
		port->down = true;
	else if (ev == RXP_PORT_BACK)
		port->down = false;
	return (enum rxp_port_event)ev;
}

int rxp_port_device_mtu(const struct rxp_port *port, uint32_t *mtu)
{
	uint32_t dev_mtu;
	int fd, ret;

	if (!port->dev[0])
		return -EOPNOTSUPP;
	fd = rxp_netdev_socket();
	if (fd < 0)
		return fd;
	ret = rxp_netdev_mtu(fd, port->dev, &dev_mtu);
	close(fd);
	if (ret)
		return ret;
	if (dev_mtu == 0)
		return -EINVAL;
	*mtu = dev_mtu;
	return 0;
}

int rxp_port_refresh_mtu(struct rxp_port *port)
{
	return rxp_port_device_mtu(port, &port->mtu);
}

int rxp_queue_wait_fd(struct rxp_queue *q)
{
	const struct rxp_port_ops *ops = q->port->ops;

	return ops && ops->wait_fd ? ops->wait_fd(q) : -1;
}

unsigned rxp_port_xstats(struct rxp_port *port, struct rxp_xstat *out, unsigned max)
{
	return port->ops && port->ops->xstats ? port->ops->xstats(port, out, max) : 0;
}

void rxp_port_stats(const struct rxp_port *port, struct rxp_queue_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (uint16_t q = 0; q < port->n_queues; q++) {
		const struct rxp_queue_stats *s = &port->queues[q].stats;

		sum->rx_packets += s->rx_packets;
		sum->rx_bytes += s->rx_bytes;
		sum->rx_polls += s->rx_polls;
		sum->rx_nonempty += s->rx_nonempty;
		sum->rx_no_buffer += s->rx_no_buffer;
		sum->rx_dropped += s->rx_dropped;
		sum->tx_packets += s->tx_packets;
		sum->tx_bytes += s->tx_bytes;
		sum->tx_ring_full += s->tx_ring_full;
		sum->tx_completed += s->tx_completed;
	}
}
