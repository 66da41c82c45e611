/*
 * fuzz_kernel.c - libFuzzer target: `madsweep kernel --batch` (the kernel
 * layer's command, driver/cli/kernel_cmd.c and kernel_line.c) on the
 * input as its standard input: kernel lines, `set` lines, the stored
 * rows' commands (+, &, eval, why, sub, clear).
 *
 * Findings are sanitizer reports, hangs, and an exit status other than 0
 * (a bad line never stops a batch: it is an "error:" line).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "../driver/cli/kernel_cmd.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".txt");
    if (!path || !freopen(path, "r", stdin))
        return 0;
    FILE *null = fopen("/dev/null", "w");
    if (!null)
        return 0;
    char a0[] = "kernel", a1[] = "--configs", a3[] = "--batch", dir[4096];
    snprintf(dir, sizeof dir, "%s", fuzz_configs());
    char *argv[] = {a0, a1, dir, a3, NULL};
    int rc = kernel_cmd_main(4, argv, null, null);
    fclose(null);
    if (rc != 0)
        abort(); /* a batch answers every line; only the catalogues fail it */
    return 0;
}
