/* SPDX-License-Identifier: MIT */
#ifndef RXPATH_BENCH_BENCH_VETH_H
#define RXPATH_BENCH_BENCH_VETH_H

/*
 * rxpath bench veth: h1 -- r -- h2 over veth in network namespaces; packets/s
 * delivered to h2 with the kernel, rxpath on afxdp and rxpath on afpacket
 * forwarding in r. Needs root.
 */
int cmd_bench_veth(int argc, char **argv);

#endif
