/* SPDX-License-Identifier: MIT */
#ifndef RXPATH_APP_DOCTOR_H
#define RXPATH_APP_DOCTOR_H

/* rxpath doctor [IFACE]: what this machine and interface allow, and how to fix what is missing. */
int cmd_doctor(int argc, char **argv);

#endif
