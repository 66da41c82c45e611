/*
 * kernel_cfg.h - reads the kernel layer's constants and back ends
 * (configs/kernels.cfg).
 */
#ifndef MADSWEEP_KERNEL_CFG_H
#define MADSWEEP_KERNEL_CFG_H

#include <stdio.h>

#include "../../cost/kernel/kernel.h"

/* Reads the constants file `path` (group `kernel`, every constant of
 * cost/kernel/ctx.c's table, each in its range) into *k and, when bes is
 * not NULL, its optional list `backends` (each a group with a unique name,
 * its source and the back-end fields, each in its range) into *bes; 0, or
 * -1 with a message naming file, line and key on err. */
int kernel_cfg_read(const char *path, const char *dir, kern_consts *k, kern_backends *bes,
                    FILE *err);

#endif
