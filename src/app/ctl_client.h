/* SPDX-License-Identifier: MIT */
#ifndef RXPATH_APP_CTL_CLIENT_H
#define RXPATH_APP_CTL_CLIENT_H

/* `rxpath ctl`. Returns the exit status: 0, 1 when the command failed, 2 for bad usage. */
int cmd_ctl(int argc, char **argv);

#endif
