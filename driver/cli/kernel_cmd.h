/*
 * kernel_cmd.h - `madsweep kernel`: the kernel layer (cost/kernel/) on
 * kernels given as key=value text, one or a batch per process.
 */
#ifndef MADSWEEP_KERNEL_CMD_H
#define MADSWEEP_KERNEL_CMD_H

#include <stdio.h>

#include "../../cost/kernel/kernel.h"

/* argv[0] is "kernel". Returns the exit code (0; 2 bad usage or input). */
int kernel_cmd_main(int argc, char **argv, FILE *out, FILE *err);

#endif
