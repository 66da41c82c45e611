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

/* Reads the constants file `path` (group `kernel`, every constant of
 * cost/kernel/ctx.c's table, each in its range) into *k; 0, or -1 with a
 * message naming file, line and key on err. */
int kernel_cmd_consts(const char *path, const char *dir, kern_consts *k, FILE *err);

#endif
