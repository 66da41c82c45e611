/*
 * fuzz_results.c - libFuzzer target: `madsweep best` on arbitrary bytes
 * as a sweep file (the reader of finished files: HDF5 open, verify_file,
 * the ranking). Seeds are small real sweep files (scripts/fuzz.sh makes
 * them), so mutations mostly damage a well-formed file.
 */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

#include "../driver/best.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".h5");
    if (!path)
        return 0;
    FILE *out = fopen("/dev/null", "w"), *err = fopen("/dev/null", "w");
    if (out && err) {
        best_opts o = {.path = path, .top = 2, .by = NULL,
                       .group = "model,system", .csv = false};
        best_run(&o, out, err);
        o.by = "iteration_time_s";
        o.group = "task,global_batch,strategy";
        o.csv = true;
        best_run(&o, out, err);
    }
    if (out)
        fclose(out);
    if (err)
        fclose(err);
    return 0;
}
