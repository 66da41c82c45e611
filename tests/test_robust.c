/*
 * test_robust.c - unit tests of the modules that keep bad inputs, bad
 * launches and damaged files out (issue 9): launch.c, eval_run's figure
 * check, JSON's UTF-8, lint.c, digest.c and claim.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../worker/claim.h"
#include "../worker/digest.h"
#include "../driver/cli/launch.h"
#include "../driver/load/lint.h"
#include "../driver/load/load.h"
#include "../driver/query/report.h"
#include "unit.h"

/* ------------------------------------------------------------ launch */

static void test_launch(void)
{
    char msg[600];
    launch_env e = {.mpirun_size = -1, .step_tasks = -1, .procid = -1, .pmi = false};
    CU_ASSERT_EQUAL(launch_check_env(&e, msg, sizeof msg), 0);
    CU_ASSERT_EQUAL(launch_check_world(&e, 1, msg, sizeof msg), 0);
    /* srun --mpi=none: 2 tasks, no PMI */
    e.step_tasks = 2;
    CU_ASSERT_EQUAL(launch_check_env(&e, msg, sizeof msg), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "--mpi=pmix"));
    /* srun --mpi=pmix: PMIx present, and a world of 2 */
    e.pmi = true;
    CU_ASSERT_EQUAL(launch_check_env(&e, msg, sizeof msg), 0);
    CU_ASSERT_EQUAL(launch_check_world(&e, 2, msg, sizeof msg), 0);
    /* PMIx present but each task alone in its world */
    CU_ASSERT_EQUAL(launch_check_world(&e, 1, msg, sizeof msg), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "started 2 tasks"));
    /* mpirun's count wins over a Slurm step's (mpirun inside srun) */
    e.mpirun_size = 4;
    CU_ASSERT_EQUAL(launch_check_world(&e, 4, msg, sizeof msg), 0);
    CU_ASSERT_EQUAL(launch_check_world(&e, 2, msg, sizeof msg), -1);
    /* only task 0 reports */
    e.procid = 1;
    CU_ASSERT_FALSE(launch_reports(&e));
    e.procid = 0;
    CU_ASSERT_TRUE(launch_reports(&e));
}

/* ------------------------------------------------------------ eval_run */

/* A detailed point whose hardware figures bypass the loader's ranges:
 * eval_run must turn what they produce into an invalid:* status. */
static void test_eval_figures(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/points/detailed_llama3_70b.cfg", unit_configs());
    point_t p;
    load_err le;
    CU_ASSERT_EQUAL_FATAL(load_point(path, unit_configs(), &p, &le), 0);
    engine e;
    engine_init(&e, false);
    result_t r;
    const char *where = NULL;
    CU_ASSERT_EQUAL(eval_point(&p, &e, &r, &where), STATUS_OK);
    /* a figure the fidelity does not compute is NaN, and no reason to
     * call the point invalid (pretraining has no time to first token) */
    CU_ASSERT(isnan(r.ttft_s));
    CU_ASSERT(isfinite(r.iteration_time_s) && r.iteration_time_s > 0);
    /* a denormal peak: infinite compute times */
    point_t q = p;
    for (int i = 0; i < HW_NDTYPES; i++)
        q.system.hw.peak_flops[i] = 1e-310;
    where = NULL;
    CU_ASSERT_EQUAL(eval_point(&q, &e, &r, &where), STATUS_INVALID_NONFINITE);
    CU_ASSERT_PTR_NOT_NULL(where);
    CU_ASSERT_EQUAL(r.status, STATUS_INVALID_NONFINITE);
    CU_ASSERT_DOUBLE_EQUAL(r.iteration_time_s, 0.0, 0.0); /* zeroed */
    CU_ASSERT_STRING_EQUAL(status_name(STATUS_INVALID_NONFINITE),
                           "invalid:non-finite");
    /* a negative kernel overhead: negative times */
    q = p;
    q.system.hw.kernel_overhead_s = -1.0;
    where = NULL;
    status_code st = eval_point(&q, &e, &r, &where);
    CU_ASSERT_EQUAL(st, STATUS_INVALID_NEGATIVE);
    CU_ASSERT_PTR_NOT_NULL(where);
    for (size_t i = 0; i < result_nfields; i++)
        CU_ASSERT(isfinite(result_get(&r, &result_fields[i])));
    engine_free(&e);
}

/* result_t is the status, then 8-byte words each one figure of
 * result_fields: eval_init writes every figure (and the status) and
 * nothing else; its figure check reads the words. */
static void test_result_words(void)
{
    size_t words = sizeof(result_t) / 8;
    CU_ASSERT_EQUAL(sizeof(result_t) % 8, 0);
    CU_ASSERT_EQUAL(offsetof(result_t, iteration_time_s), 8);
    CU_ASSERT_EQUAL(result_nfields, words - 1);
    int seen[sizeof(result_t) / 8] = {0};
    for (size_t i = 0; i < result_nfields; i++) {
        size_t off = result_fields[i].offset;
        CU_ASSERT(off % 8 == 0 && off >= 8 && off < sizeof(result_t));
        if (off % 8 == 0 && off < sizeof(result_t))
            seen[off / 8]++;
    }
    for (size_t w = 1; w < words; w++)
        CU_ASSERT_EQUAL(seen[w], 1);
}

/* eval_bad_figure (a quick pass over the result's words, then the check
 * figure by figure) finds every bad figure: in the valid results of a
 * DLRM and an LLM point, each figure in turn set to +inf, -inf, -1, NaN
 * and a negative NaN is bad exactly when eval.h says so (infinite;
 * negative, but the headroom; NaN where the point keeps the figure). */
static void test_eval_figure_check(void)
{
    const char *points[] = {"detailed_dlrm_mlperf.cfg", "detailed_llama3_70b.cfg"};
    const double values[] = {(double)INFINITY, -(double)INFINITY, -1.0, (double)NAN,
                             copysign((double)NAN, -1.0), 0.0};
    for (size_t k = 0; k < sizeof points / sizeof points[0]; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/points/%s", unit_configs(), points[k]);
        point_t p;
        load_err le;
        CU_ASSERT_EQUAL_FATAL(load_point(path, unit_configs(), &p, &le), 0);
        engine e;
        engine_init(&e, false);
        result_t r;
        CU_ASSERT_EQUAL_FATAL(eval_point(&p, &e, &r, NULL), STATUS_OK);
        engine_free(&e);
        status_code why = STATUS_OK;
        CU_ASSERT_PTR_NULL(eval_bad_figure(&p, &r, &why));
        for (size_t i = 0; i < result_nfields; i++) {
            const result_field *f = &result_fields[i];
            bool kept = false;
            for (const size_t *o = eval_computed(&p); *o != (size_t)-1; o++)
                kept = kept || *o == f->offset;
            bool headroom = strcmp(f->name, "mem_headroom_bytes_per_device") == 0;
            for (size_t j = 0; j < sizeof values / sizeof values[0]; j++) {
                result_t b = r;
                double v = values[j];
                if (f->type == RESULT_I64) {
                    int64_t n = isfinite(v) ? (int64_t)v : 0;
                    memcpy((char *)&b + f->offset, &n, sizeof n);
                    v = (double)n;
                } else {
                    memcpy((char *)&b + f->offset, &v, sizeof v);
                }
                bool bad = isinf(v) || (v < 0 && !headroom) || (isnan(v) && kept);
                why = STATUS_OK;
                const result_field *g = eval_bad_figure(&p, &b, &why);
                CU_ASSERT_PTR_EQUAL(g, bad ? f : NULL);
                if (bad && g != f)
                    fprintf(stderr, "%s: %s = %g not found bad\n", points[k], f->name, v);
                if (bad) /* -inf is negative */
                    CU_ASSERT_EQUAL(why, v < 0 ? STATUS_INVALID_NEGATIVE
                                               : STATUS_INVALID_NONFINITE);
            }
        }
    }
}

/* The engine never writes past its reservation (a wrong reservation
 * from a huge layer count was a heap overflow). */
static void test_engine_bounds(void)
{
    engine e;
    engine_init(&e, true);
    CU_ASSERT_EQUAL(engine_reserve(&e, 4), 0);
    engine_label lab = {0, 0, 0, 0};
    size_t cap = e.cap;
    for (size_t i = 0; i < cap; i++)
        CU_ASSERT_NOT_EQUAL(engine_add(&e, ENGINE_COMP, 1.0, NULL, 0, lab), ENGINE_NONE);
    CU_ASSERT_FALSE(e.full);
    CU_ASSERT_EQUAL(engine_add(&e, ENGINE_COMP, 1.0, NULL, 0, lab), ENGINE_NONE);
    CU_ASSERT_TRUE(e.full);
    CU_ASSERT_EQUAL(e.len, cap);
    engine_reset(&e);
    CU_ASSERT_FALSE(e.full);
    CU_ASSERT_EQUAL(engine_reserve(&e, ENGINE_MAX_EVENTS + 1), -1);
    CU_ASSERT_EQUAL(engine_reserve(&e, (size_t)-1), -1);
    engine_free(&e);
}

/* ------------------------------------------------------------ JSON */

static void json_of(const char *s, char *out, size_t size)
{
    FILE *f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    report_json_string(f, s);
    rewind(f);
    size_t n = fread(out, 1, size - 1, f);
    out[n] = '\0';
    fclose(f);
}

static void test_json_utf8(void)
{
    char out[256];
    json_of("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    json_of("caf\xe9", out, sizeof out); /* Latin-1 */
    CU_ASSERT_STRING_EQUAL(out, "\"caf\\ufffd\"");
    json_of("\xc0\xaf", out, sizeof out); /* overlong '/' */
    CU_ASSERT_STRING_EQUAL(out, "\"\\ufffd\\ufffd\"");
    json_of("\xed\xa0\x80", out, sizeof out); /* a UTF-16 surrogate */
    CU_ASSERT_STRING_EQUAL(out, "\"\\ufffd\\ufffd\\ufffd\"");
    json_of("\xe2\x82", out, sizeof out); /* truncated sequence */
    CU_ASSERT_STRING_EQUAL(out, "\"\\ufffd\\ufffd\"");
    json_of("\xf4\x90\x80\x80", out, sizeof out); /* above U+10FFFF */
    CU_ASSERT_STRING_EQUAL(out, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    json_of("a\"b\\c\n\x7f", out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "\"a\\\"b\\\\c\\u000a\\u007f\"");
}

/* ------------------------------------------------------------ lint */

/* Every shipped config passes lint (no false positives). */
static int lint_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int bad = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".cfg") != 0)
            continue;
        char path[2048], msg[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lint_config(path, unit_configs(), msg, sizeof msg) != 0) {
            fprintf(stderr, "lint rejects a shipped file: %s\n", msg);
            bad++;
        }
    }
    closedir(d);
    return bad;
}

static void lint_text(const char *text, int want, const char *frag)
{
    char path[512], msg[1024] = "";
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file("lint.cfg", text, path, sizeof path));
    int rc = lint_config(path, unit_configs(), msg, sizeof msg);
    CU_ASSERT_EQUAL(rc, want);
    if (frag)
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, frag));
    if (rc != want)
        fprintf(stderr, "lint of <%s>: %d %s\n", text, rc, msg);
}

static void test_lint(void)
{
    char dir[1024];
    CU_ASSERT_EQUAL(lint_dir(unit_configs()), 0);
    snprintf(dir, sizeof dir, "%s/points", unit_configs());
    CU_ASSERT_EQUAL(lint_dir(dir), 0);
    snprintf(dir, sizeof dir, "%s/sweeps", unit_configs());
    CU_ASSERT_EQUAL(lint_dir(dir), 0);
    /* what libconfig accepts */
    lint_text("a = \"x\" \"y\";\nb = [\"p\", \"q\"];\nc = (\"r\", { d = \"s\"; });\n"
              "e : \"t\", f = 1; # \"quoted\" in a comment\n/* \"x\" */ g = 2;\n",
              0, NULL);
    lint_text("@include \"models.cfg\"\nx = \"a\\\"b\";\n", 0, NULL);
    /* what it exits or leaks on */
    lint_text("a = 1 \"x\";\n", -1, "lint.cfg:1: syntax error: a string");
    lint_text("m\" = x\";\n", -1, "a string where");
    lint_text("a = \"x\", \"y\";\n", -1, "a string where");
    lint_text("a = { b = 1; } \"z\";\n", -1, "a string where");
    lint_text("\n\n@include \"points\"\n", -1, "lint.cfg:3: @include \"points\"");
}

/* ------------------------------------------------------------ digest */

static void test_digest(void)
{
    CU_ASSERT_EQUAL(digest_rows(NULL, 0, 16), DIGEST_SEED);
    unsigned char a[100];
    for (int i = 0; i < 100; i++)
        a[i] = (unsigned char)(i * 37 + 11);
    uint64_t d = digest_bytes(a, sizeof a);
    CU_ASSERT_EQUAL(d, digest_bytes(a, sizeof a));
    /* every single-bit change of the input changes the digest */
    int same = 0;
    for (int i = 0; i < 100 * 8; i++) {
        a[i / 8] ^= (unsigned char)(1u << (i % 8));
        same += digest_bytes(a, sizeof a) == d;
        a[i / 8] ^= (unsigned char)(1u << (i % 8));
    }
    CU_ASSERT_EQUAL(same, 0);
    /* trailing zeros and row boundaries count */
    unsigned char z[101] = {0};
    CU_ASSERT_NOT_EQUAL(digest_bytes(z, 100), digest_bytes(z, 101));
    CU_ASSERT_NOT_EQUAL(digest_rows(a, 2, 50), digest_rows(a, 1, 100));
    CU_ASSERT_EQUAL(digest_rows(a, 2, 50),
                    digest_row(digest_row(DIGEST_SEED, a, 50), a + 50, 50));
}

/* ------------------------------------------------------------ claim */

static void test_claim(void)
{
    char spec[512], out[512], text[512], msg[1024];
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file("claim.cfg", "a = 1;\n", spec, sizeof spec));
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file("claim.txt", "data\n", text, sizeof text));
    snprintf(out, sizeof out, "%s.h5", spec);
    remove(out);
    const char *inputs[] = {spec, NULL};
    claim a, b;
    bool empty = false;
    /* the output is the spec */
    CU_ASSERT_EQUAL(claim_take(&a, spec, true, inputs, &empty, msg, sizeof msg),
                    CLAIM_REFUSED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "is an input"));
    /* a file that is not HDF5 */
    CU_ASSERT_EQUAL(claim_take(&a, text, true, inputs, &empty, msg, sizeof msg),
                    CLAIM_REFUSED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "not an HDF5 file"));
    /* resume of a file that does not exist */
    CU_ASSERT_EQUAL(claim_take(&a, out, false, inputs, &empty, msg, sizeof msg),
                    CLAIM_REFUSED);
    /* a fresh claim holds the lock: a second one (another open file
     * description, as another process would have) is refused */
    claim_rc rc = claim_take(&a, out, true, inputs, &empty, msg, sizeof msg);
    CU_ASSERT(rc == CLAIM_OK || rc == CLAIM_NO_LOCKS);
    CU_ASSERT_TRUE(empty);
    if (rc == CLAIM_OK) {
        CU_ASSERT_EQUAL(claim_take(&b, out, false, inputs, &empty, msg, sizeof msg),
                        CLAIM_BUSY);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "another running sweep"));
    }
    claim_release(&a);
    /* released: claimable again */
    rc = claim_take(&b, out, false, inputs, &empty, msg, sizeof msg);
    CU_ASSERT(rc == CLAIM_OK || rc == CLAIM_NO_LOCKS);
    claim_release(&b);
    remove(out);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("robust", NULL, NULL);
    CU_add_test(s, "launcher task count against the MPI world", test_launch);
    CU_add_test(s, "non-finite and negative figures become invalid:*", test_eval_figures);
    CU_add_test(s, "the figure check finds every bad figure", test_eval_figure_check);
    CU_add_test(s, "result_t: the status, then one figure per word", test_result_words);
    CU_add_test(s, "the engine never writes past its reservation", test_engine_bounds);
    CU_add_test(s, "JSON strings are valid UTF-8", test_json_utf8);
    CU_add_test(s, "lint: shipped configs pass, exits and leaks refused", test_lint);
    CU_add_test(s, "digests see every changed bit", test_digest);
    CU_add_test(s, "claims: inputs, foreign files, one writer", test_claim);
    return unit_run();
}
