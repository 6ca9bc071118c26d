/* SPDX-License-Identifier: MIT */
/*
 * The benchmark lab's receiving host drops the flood at XDP: a program of
 * thirteen instructions, given to the kernel as such (no BPF toolchain at
 * build time), that drops IPv4 UDP and passes everything else (ARP, ICMP,
 * the warm-up ping). veth counts a frame in rx_packets before
 * XDP sees it, so h2's counter still says what reached it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include "xdp_sink.h"

#define INSN(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }

static int load_prog(char *err, size_t errlen)
{
	/*
	 * r2 = data, r3 = data_end; pass unless Ethernet + IPv4 header fit,
	 * the EtherType is IPv4 and the protocol UDP; then drop.
	 */
	const struct bpf_insn insns[] = {
		INSN(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, 0, 0),	/* xdp_md->data */
		INSN(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_3, BPF_REG_1, 4, 0),	/* xdp_md->data_end */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_4, BPF_REG_2, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_4, 0, 0, 34),
		INSN(BPF_JMP | BPF_JGT | BPF_X, BPF_REG_4, BPF_REG_3, 6, 0),	/* short: pass */
		INSN(BPF_LDX | BPF_MEM | BPF_H, BPF_REG_5, BPF_REG_2, 12, 0),
		INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, 4, htons(0x0800)),	/* not IPv4: pass */
		INSN(BPF_LDX | BPF_MEM | BPF_B, BPF_REG_5, BPF_REG_2, 23, 0),
		INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, 2, 17),		/* not UDP: pass */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_DROP),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "rxp_sink_udp", "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		snprintf(err, errlen, "loading the sink's XDP program failed: %s%s", strerror(-fd),
			 fd == -EPERM ? " (needs CAP_BPF and CAP_NET_ADMIN, or root)" : "");
	return fd;
}

int xdp_sink_attach(const char *netns, const char *dev, char *err, size_t errlen)
{
	char path[128];
	int self, target, prog, ifindex, ret = -1;

	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	target = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || target < 0) {
		snprintf(err, errlen, "cannot open %s: %s", self < 0 ? "/proc/self/ns/net" : path,
			 strerror(errno));
		goto out;
	}
	if (setns(target, CLONE_NEWNET)) {
		snprintf(err, errlen, "cannot enter namespace %s: %s", netns, strerror(errno));
		goto out;
	}
	prog = load_prog(err, errlen);
	ifindex = (int)if_nametoindex(dev);
	if (prog >= 0 && !ifindex)
		snprintf(err, errlen, "%s in %s: no such interface", dev, netns);
	if (prog >= 0 && ifindex) {
		/* the attachment holds the program: our descriptor can go */
		ret = bpf_xdp_attach(ifindex, prog, XDP_FLAGS_DRV_MODE, NULL);
		if (ret)
			snprintf(err, errlen, "attaching the sink's XDP program to %s in %s failed: %s",
				 dev, netns, strerror(-ret));
	}
	if (prog >= 0)
		close(prog);
	if (setns(self, CLONE_NEWNET)) {
		snprintf(err, errlen, "cannot return to our namespace: %s", strerror(errno));
		ret = -1;
	}
out:
	if (self >= 0)
		close(self);
	if (target >= 0)
		close(target);
	return ret ? -1 : 0;
}
