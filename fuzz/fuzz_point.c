/*
 * fuzz_point.c - libFuzzer target: the point loader (both fidelities,
 * bases, inline hardware and software stacks), then the cost model and
 * both reports on every point it accepts.
 *
 * Findings are sanitizer reports, hangs, and any --json output that is
 * not valid UTF-8 or not one JSON-shaped line (fuzz_check_json). A point
 * that loads must evaluate to data or to an invalid:* status, never to a
 * crash or a non-finite figure.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../cost/eval.h"
#include "../driver/load/load.h"
#include "../driver/query/report.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".cfg");
    if (!path)
        return 0;
    point_t p;
    load_err le;
    if (load_point(path, fuzz_configs(), &p, &le) != 0)
        return 0;
    engine e;
    engine_init(&e, false);
    result_t r;
    status_code st = eval_point(&p, &e, &r, NULL);
    for (size_t i = 0; status_is_data(st) && i < result_nfields; i++)
        if (isinf(result_get(&r, &result_fields[i])))
            abort(); /* eval_run lets no infinity through */
    if (status_is_data(st)) {
        char *buf = NULL;
        size_t n = 0;
        FILE *out = open_memstream(&buf, &n);
        if (out) {
            report_json(out, &p, &r);
            fclose(out);
            fuzz_check_json(buf, n);
            free(buf);
        }
        out = open_memstream(&buf, &n);
        if (out) {
            report_text(out, &p, &r);
            fclose(out);
            free(buf);
        }
    }
    engine_free(&e);
    return 0;
}
