/*
 * fuzz_spec.c - libFuzzer target: the sweep spec loader, then the space
 * of every spec it accepts: 64 ids spread over the space are decoded,
 * checked, evaluated and packed into a /results row, as a rank does
 * (without MPI and HDF5).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "../driver/space.h"
#include "../driver/spec.h"
#include "../worker/output.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    if (space_init(&s, &sp, &le) == 0) {
        output_rows rows;
        output_rows_init(&rows);
        char *row = malloc(rows.t.size);
        space_cursor *cur = malloc(sizeof *cur);
        engine e;
        engine_init(&e, false);
        if (row && cur) {
            space_cursor_init(cur);
            for (int k = 0; k < 64; k++) {
                int64_t id = (int64_t)((double)k / 64.0 * (double)s.total);
                if (id >= s.total)
                    id = s.total - 1;
                if (space_point(&s, cur, id, NULL) != STATUS_OK)
                    continue;
                result_t r;
                memset(&r, 0, sizeof r);
                if (eval_run(sp.ops, &cur->p, &e, &r, NULL) == STATUS_NOMEM)
                    continue;
                output_pack(&rows, row, id, cur->idx, &cur->p, &r, NULL, NULL);
            }
        }
        engine_free(&e);
        free(row);
        free(cur);
    }
    spec_free(&sp);
    return 0;
}
