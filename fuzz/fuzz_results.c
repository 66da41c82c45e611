/*
 * fuzz_results.c - libFuzzer target: the readers of finished sweep files
 * on arbitrary bytes: `madsweep best` (HDF5 open, verify_file, the
 * frame of named columns, grouping, ranking, --where) and `madsweep
 * point` (the same verification, then the stored spec and catalogues,
 * the row's point rebuilt and re-evaluated). Seeds are small real sweep
 * files (fuzz/seeds.sh makes them), so mutations mostly damage a
 * well-formed file.
 */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

#include "../driver/query/best.h"
#include "../driver/query/pointfile.h"
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
        o.where = "status_name==ok,devices>=8";
        o.csv = true;
        best_run(&o, out, err);
        pointfile_from_sweep(path, 1, fuzz_configs(), out, err);
    }
    if (out)
        fclose(out);
    if (err)
        fclose(err);
    return 0;
}
