/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>
#include "bench/bench.h"
#include "core/simd.h"
#include "fib/acl.h"
#include "ctl_client.h"
#include "doctor.h"
#include "run.h"

#define RXPATH_VERSION "0.1.0"

static void usage(FILE *out)
{
	fprintf(out,
		"rxpath %s: a userspace Ethernet datapath\n"
		"\n"
		"usage: rxpath COMMAND [OPTIONS]\n"
		"\n"
		"commands:\n"
		"  run     receive on ports and report rates, deliveries and drops\n"
		"          (with no port given: two simulated ports with generated traffic)\n"
		"  bench   measure each receive-path technique on and off (the seed A/B matrix);\n"
		"          bench l3fwd, bench lpm: forwarding and FIB lookups;\n"
		"          bench veth: real interfaces against the kernel (root)\n"
		"  ctl     send a command to a running rxpath: ctl 'show stats', ctl 'route add ...'\n"
		"  doctor  check what AF_XDP and AF_PACKET ports need here: doctor [IFACE]\n"
		"  help    this text; 'rxpath COMMAND --help' for a command's options\n"
		"  version print the version\n",
		RXPATH_VERSION);
}

int main(int argc, char **argv)
{
	char err[256];

	/* a lookup's choice is made where it is first built: a bad RXPATH_SIMD is said now */
	if (rxp_simd_check(rxp_acl_simd_have(), err, sizeof(err))) {
		fprintf(stderr, "rxpath: %s\n", err);
		return 2;
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	static const struct {
		const char *name, *full;	/* full: what getopt's messages start with */
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "run", "rxpath run", cmd_run },
		{ "bench", "rxpath bench", cmd_bench },
		{ "ctl", "rxpath ctl", cmd_ctl },
		{ "doctor", "rxpath doctor", cmd_doctor },
	};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		argv[1] = (char *)cmds[i].full;
		return cmds[i].fn(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("rxpath %s\n", RXPATH_VERSION);
		return 0;
	}
	fprintf(stderr, "rxpath: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
