/* SPDX-License-Identifier: MIT */
#ifndef RXPATH_APP_RUN_H
#define RXPATH_APP_RUN_H

#include "engine/dataplane.h"

int cmd_run(int argc, char **argv);

#endif
