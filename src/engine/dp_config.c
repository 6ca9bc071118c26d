/* SPDX-License-Identifier: MIT */
/* The datapath's configuration as parsed: ports, VLAN sub-ports and router commands, before it opens. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dataplane.h"

void dp_config_default(struct dp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pool.max_frame = RXP_FRAME_DEFAULT;
	cfg->pool.rx_offset = 2;
	cfg->tuning = rxp_rx_tuning_default();
}

void dp_config_free(struct dp_config *cfg)
{
	free(cfg->cmds);
	cfg->cmds = NULL;
	cfg->n_cmds = cfg->cmds_cap = 0;
}

int dp_config_add_cmd(struct dp_config *cfg, const struct dp_cmd *cmd)
{
	if (cfg->n_cmds == cfg->cmds_cap) {
		unsigned cap = cfg->cmds_cap ? cfg->cmds_cap * 2 : 64;
		struct dp_cmd *c = realloc(cfg->cmds, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		cfg->cmds = c;
		cfg->cmds_cap = cap;
	}
	cfg->cmds[cfg->n_cmds++] = *cmd;
	return 0;
}

bool dp_config_has_name(const struct dp_config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->n_ports; i++)
		if (!strcmp(cfg->ports[i].name, name))
			return true;
	for (unsigned i = 0; i < cfg->n_vlans; i++)
		if (!strcmp(cfg->vlans[i].name, name))
			return true;
	return false;
}

/* "vlan:parent=p0,id=100": a VLAN sub-port, an L3 interface on its parent. */
static int add_vlan(struct dp_config *cfg, const char *name, const char *args, char *err,
		    size_t errlen)
{
	struct rxp_args a;
	const char *parent;
	uint32_t id = 0;
	struct dp_vlan_config *v;
	bool parent_known = false;

	if (rxp_args_parse(&a, args, err, errlen))
		return -EINVAL;
	parent = rxp_args_get(&a, "parent");
	if (rxp_args_u32(&a, "id", 1, 4094, &id, err, errlen))
		return -EINVAL;
	if (!parent || !id) {
		snprintf(err, errlen, "a VLAN sub-port needs parent=PORT and id=1..4094");
		return -EINVAL;
	}
	if (rxp_args_check_unused(&a, "parent, id", err, errlen))
		return -EINVAL;
	for (unsigned i = 0; i < cfg->n_ports; i++)
		parent_known |= !strcmp(cfg->ports[i].name, parent);
	if (!parent_known) {
		snprintf(err, errlen, "parent=%s: no such port (add the port first)", parent);
		return -ENOENT;
	}
	for (unsigned i = 0; i < cfg->n_vlans; i++) {
		if (!strcmp(cfg->vlans[i].parent, parent) && cfg->vlans[i].id == id) {
			snprintf(err, errlen, "VLAN %u on %s is already %s", id, parent,
				 cfg->vlans[i].name);
			return -EEXIST;
		}
	}
	if (cfg->n_vlans == DP_VLANS_MAX) {
		snprintf(err, errlen, "too many VLAN sub-ports (at most %d)", DP_VLANS_MAX);
		return -ENOSPC;
	}
	v = &cfg->vlans[cfg->n_vlans++];
	snprintf(v->name, sizeof(v->name), "%s", name);
	snprintf(v->parent, sizeof(v->parent), "%s", parent);
	v->id = (uint16_t)id;
	return 0;
}

int dp_config_add_port(struct dp_config *cfg, const char *name, const char *spec, char *err,
		       size_t errlen)
{
	struct dp_port_config *pc;

	if (!name[0] || strlen(name) >= sizeof(pc->name)) {
		snprintf(err, errlen, "port name '%s' must be 1 to %zu characters", name,
			 sizeof(pc->name) - 1);
		return -EINVAL;
	}
	/* names appear in JSON, metrics labels and shell commands: nothing to escape */
	if (name[strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")]) {
		snprintf(err, errlen, "port name '%s': only letters, digits, '.', '_' and '-'", name);
		return -EINVAL;
	}
	if (dp_config_has_name(cfg, name)) {
		snprintf(err, errlen, "port %s is already defined", name);
		return -EEXIST;
	}
	if (!strncmp(spec, "vlan:", 5) || !strcmp(spec, "vlan"))
		return add_vlan(cfg, name, spec[4] ? spec + 5 : "", err, errlen);
	if (cfg->n_ports == DP_PORTS_MAX) {
		snprintf(err, errlen, "too many ports (at most %d)", DP_PORTS_MAX);
		return -EINVAL;
	}
	if (strlen(spec) >= sizeof(pc->spec)) {
		snprintf(err, errlen, "port spec for %s is longer than %zu characters", name,
			 sizeof(pc->spec) - 1);
		return -EINVAL;
	}
	pc = &cfg->ports[cfg->n_ports++];
	pc->where[0] = '\0';
	snprintf(pc->name, sizeof(pc->name), "%s", name);
	snprintf(pc->spec, sizeof(pc->spec), "%s", spec);
	return 0;
}
