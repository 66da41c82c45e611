/*
 * fuzz_spec.c - libFuzzer target: the sweep spec loader (with its
 * catalogues, stacks and keep), then the space of every spec it accepts:
 * when the space is small enough to count quickly (at most 4096 cells),
 * it is counted and 64 ids spread over it are decoded, checked,
 * evaluated and packed into a /results row, as a rank does (without MPI
 * and HDF5); every packed row's figures must be finite or NaN (not
 * computed), never infinite.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../driver/sweep/spec_load.h"
#include "../worker/output.h"
#include "../worker/space.h"
#include "fuzz_util.h"

#define FUZZ_MAX_CELLS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_points(space *s, space_cursor *cur, const output_rows *rows, char *row)
{
    int64_t rejected[SPACE_NCODES];
    if (space_count_all(s, cur, rejected) != 0 || s->total < 1)
        return;
    engine e;
    engine_init(&e, false);
    for (int k = 0; k < 64; k++) {
        int64_t id = (int64_t)((double)k / 64.0 * (double)s->total);
        if (id >= s->total)
            id = s->total - 1;
        if (space_point(s, cur, id, NULL) != STATUS_OK)
            abort(); /* the enumeration and the rules disagree */
        result_t r;
        status_code st = eval_run(&cur->p, &e, &r, NULL);
        if (st == STATUS_NOMEM)
            continue;
        for (size_t i = 0; i < result_nfields; i++)
            if (isinf(result_get(&r, &result_fields[i])))
                abort(); /* eval_run lets no infinity through */
        output_rows_pack(rows, row, id, cur->idx, &cur->p, &r, NULL);
    }
    engine_free(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".cfg");
    if (!path)
        return 0;
    spec sp;
    load_err le;
    if (spec_load(path, fuzz_configs(), &sp, &le) != 0)
        return 0;
    space s;
    char err[600];
    if (space_init(&s, &sp, err, sizeof err) == 0) {
        if (s.nblocks * s.cells <= FUZZ_MAX_CELLS) {
            output_rows rows;
            output_rows_init(&rows, sp.fidelity);
            char *row = malloc(rows.t.size);
            space_cursor *cur = malloc(sizeof *cur);
            if (row && cur && space_cursor_init(cur, &s) == 0) {
                fuzz_points(&s, cur, &rows, row);
                space_cursor_free(cur);
            }
            free(row);
            free(cur);
        }
        space_free(&s);
    }
    spec_free(&sp);
    return 0;
}
