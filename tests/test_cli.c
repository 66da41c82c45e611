/*
 * test_cli.c - `madsweep` end to end: the commands run in-process through
 * cmd_main() with captured streams, and once through the real binary to
 * check exit codes as a shell sees them.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../driver/cli/cmd.h"
#include "../driver/load/load.h"
#include "../driver/query/trace_json.h"
#include "unit.h"

static const char *point_path(const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/points/%s", unit_configs(), name);
    return buf;
}

/* Value of "key": in a one-line JSON object, or NAN-like -1 if absent. */
static double json_num(const char *json, const char *key)
{
    char k[96];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *at = strstr(json, k);
    return at ? strtod(at + strlen(k), NULL) : -1.0;
}

static void test_eval_report(void)
{
    char path[1024];
    unit_cli r;
    const char *argv[] = {"madsweep", "eval",
                          point_path("llama2_70b_dc_A_2048_fsdp.cfg", path, sizeof path)};
    unit_cli_run(&r, 3, argv);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Iteration time"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "exposed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "overlapped"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fsdp:2048"));
}

/* The detailed fidelity has its own report: its inputs and figures, and
 * no figure of the MAD-Max report that it does not compute. */
static void test_eval_detailed_report(void)
{
    char path[1024];
    unit_cli r;
    const char *argv[] = {"madsweep", "eval",
                          point_path("detailed_llama3_70b.cfg", path, sizeof path)};
    unit_cli_run(&r, 3, argv);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "tp8 pp8 vpp5 1f1b-int dp16 zero1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "MFU"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "optimizer states"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "nan"));
    const char *argj[] = {"madsweep", "eval", "--json", path};
    unit_cli_run(&r, 4, argj);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"strategy\":\"tp8 pp8 vpp5"));
    CU_ASSERT(json_num(r.out, "mfu") > 0 && json_num(r.out, "mfu") < 1);
    /* figures a training point does not have are null (valid JSON), never 0 */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"ttft_s\":null"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"compute_emb_s\":null"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "nan"));
    CU_ASSERT(json_num(r.out, "energy_per_token_j") > 0);
    CU_ASSERT(json_num(r.out, "cost_per_million_tokens_usd") > 0);
}

static void test_eval_json_and_trace(void)
{
    char path[1024], trace[1024];
    snprintf(trace, sizeof trace, "%s/trace.json",
             getenv("MADSWEEP_TEST_TMP") ? getenv("MADSWEEP_TEST_TMP") : "/tmp");
    unit_cli r;
    const char *argv[] = {"madsweep", "eval", "--json", "--trace", trace,
                          point_path("dlrm_a_zionex_128.cfg", path, sizeof path)};
    unit_cli_run(&r, 6, argv);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    const char *keys[] = {"iteration_time_s", "throughput_samples_per_s", "global_batch",
                          "compute_gemm_s", "compute_emb_s", "comm_alltoall_s",
                          "comm_allreduce_s", "comm_allgather_s", "comm_reducescatter_s",
                          "comm_exposed_s", "comm_overlapped_s", "events_compute",
                          "events_comm", "mem_weights_bytes_per_device"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CU_ASSERT(json_num(r.out, keys[i]) >= 0);
    double it = json_num(r.out, "iteration_time_s");
    double thr = json_num(r.out, "throughput_samples_per_s");
    /* throughput is global batch / iteration time (65536 samples) */
    CU_ASSERT_EQUAL(json_num(r.out, "global_batch"), 65536);
    CU_ASSERT(unit_close(thr, 65536 / it, 1e-12, 0));
    /* exposed + overlapped = all communication */
    double comm = json_num(r.out, "comm_alltoall_s") + json_num(r.out, "comm_allreduce_s") +
                  json_num(r.out, "comm_allgather_s") +
                  json_num(r.out, "comm_reducescatter_s");
    CU_ASSERT(unit_close(json_num(r.out, "comm_exposed_s") +
                             json_num(r.out, "comm_overlapped_s"),
                         comm, 1e-9, 1e-12));

    /* the trace has one complete event per engine event, both tracks */
    FILE *f = fopen(trace, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"traceEvents\""));
    int x = 0, comp = 0;
    for (const char *p = buf; (p = strstr(p, "\"ph\":\"X\"")); p++) {
        x++;
        if (strncmp(p + 8, ",\"pid\":1,\"tid\":1", 16) == 0)
            comp++;
    }
    CU_ASSERT_EQUAL(x, json_num(r.out, "events_compute") + json_num(r.out, "events_comm"));
    CU_ASSERT_EQUAL(comp, json_num(r.out, "events_compute"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "MLPTop9_b_c_wg_rs"));
}

/* A trace that does not fit (issue 29: a full disk left a 20 MB partial
 * trace behind): under a 256 kB file-size limit (EFBIG, the way a full
 * file system gives ENOSPC; SIGXFSZ would kill the process mid-file) the
 * trace of detailed_llama3_70b.cfg (1.4 MB) fails with a message, exit 1,
 * and no file, whole or partial, temporary or final, is left; an
 * existing trace is kept as it was. A trace named as the point file is
 * refused before anything is printed or written. */
static void test_trace_full(void)
{
    const char *bin = getenv("MADSWEEP_BINARY");
    const char *tmp = getenv("MADSWEEP_TEST_TMP") ? getenv("MADSWEEP_TEST_TMP") : "/tmp";
    char dir[700], path[1024], cmd[4096];
    static char out[1 << 16];
    point_path("detailed_llama3_70b.cfg", path, sizeof path);
    snprintf(dir, sizeof dir, "%s/trace_full", tmp);
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
    CU_ASSERT_EQUAL_FATAL(unit_run_command(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd, "{ ulimit -f 256; %s eval %s --trace %s/t.json >/dev/null; }",
             bin, path, dir);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "cannot write trace"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "File too large"));
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", dir);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 0); /* nothing left */
    snprintf(cmd, sizeof cmd, "echo old > %s/t.json && ulimit -f 256 && %s eval %s --trace "
             "%s/t.json >/dev/null; test \"$(cat %s/t.json)\" = old && test $(ls -A %s | "
             "wc -l) = 1", dir, bin, path, dir, dir, dir);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 0); /* kept as it was */
    snprintf(cmd, sizeof cmd, "{ cp %s %s/p.cfg; %s eval %s/p.cfg --trace %s/p.cfg; rc=$?; "
             "cmp -s %s %s/p.cfg || rc=99; exit $rc; }", path, dir, bin, dir, dir, path,
             dir); /* the point file intact */
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "that is the point file"));
    CU_ASSERT_PTR_NULL(strstr(out, "Iteration time"));
}

static void test_bench(void)
{
    char path[1024];
    unit_cli r;
    const char *argv[] = {"madsweep", "bench", "--count", "500",
                          point_path("dlrm_a_zionex_128.cfg", path, sizeof path)};
    unit_cli_run(&r, 5, argv);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, " evaluations/s\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "ns per evaluation (500 evaluations"));
    /* bounded work (issue 19): runs that would never end are refused */
    const char *bad[][2] = {{"--seconds", "inf"}, {"--seconds", "1e300"},
                            {"--count", "1e30"}, {"--count", "nan"}};
    for (int i = 0; i < 4; i++) {
        const char *av[] = {"madsweep", "bench", bad[i][0], bad[i][1], path};
        unit_cli_run(&r, 5, av);
        CU_ASSERT_EQUAL(r.rc, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "expected a"));
    }
}

/* An option given twice, or a number it would round or never reach, is
 * refused before anything runs (issue 29: -o A -o B wrote B, --top 2
 * --top 3 ranked 3, bench --count 1.5 ran 2, --checkpoint inf never
 * checkpointed). */
static void test_options_twice_and_numbers(void)
{
    char path[1024];
    point_path("dlrm_a_zionex_128.cfg", path, sizeof path);
    unit_cli r;
    const char *a1[] = {"madsweep", "sweep", "spec.cfg", "-o", "a.h5", "--out", "b.h5"};
    unit_cli_run(&r, 7, a1);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "option --out given twice ('a.h5' and 'b.h5')"));
    const char *a2[] = {"madsweep", "best", "x.h5", "--top", "2", "--top=3"};
    unit_cli_run(&r, 6, a2);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "option --top given twice ('2' and '3')"));
    const char *a3[] = {"madsweep", "best", "x.h5", "--by", "tp", "--by", "pp"};
    unit_cli_run(&r, 7, a3);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "option --by given twice"));
    /* --where a --where b kept b's rows only */
    const char *a3w[] = {"madsweep", "best", "x.h5", "--where", "tp==1", "--where", "pp==2"};
    unit_cli_run(&r, 7, a3w);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "go in one, separated by commas"));
    const char *a4[] = {"madsweep", "bench", "--count", "1.5", path};
    unit_cli_run(&r, 5, a4);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--count: expected an integer from 1"));
    const char *bad[] = {"inf", "nan", "", "1e400"};
    for (int i = 0; i < 4; i++) {
        const char *a5[] = {"madsweep", "sweep", "spec.cfg", "-o", "a.h5", "--checkpoint",
                            bad[i]};
        unit_cli_run(&r, 7, a5);
        CU_ASSERT_EQUAL(r.rc, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--checkpoint: expected a finite number"));
    }
}

/* best and point on a file that is not there, a directory, or the empty
 * file a sweep stopped while loading leaves: each says which, exit 1
 * (issue 29: all three were "not an HDF5 file, or truncated or
 * corrupted"). */
static void test_sweep_file_kinds(void)
{
    char empty[1024], dir[1024], missing[1100];
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file("cli_empty.h5", "", empty, sizeof empty));
    snprintf(dir, sizeof dir, "%s", empty);
    char *slash = strrchr(dir, '/');
    CU_ASSERT_PTR_NOT_NULL_FATAL(slash);
    *slash = '\0';
    snprintf(missing, sizeof missing, "%s/cli_no_such_file.h5", dir);
    unit_cli r;
    const char *a1[] = {"madsweep", "best", missing};
    unit_cli_run(&r, 3, a1);
    CU_ASSERT_EQUAL(r.rc, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "cli_no_such_file.h5: No such file or directory"));
    const char *a2[] = {"madsweep", "best", dir};
    unit_cli_run(&r, 3, a2);
    CU_ASSERT_EQUAL(r.rc, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "it is a directory, not a sweep file"));
    const char *a3[] = {"madsweep", "point", empty, "0"};
    unit_cli_run(&r, 4, a3);
    CU_ASSERT_EQUAL(r.rc, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "cli_empty.h5 is empty: a sweep stopped before"));
}

/* eval --trace is bounded (issue 19): past the cap, events are counted,
 * not written, and the JSON still closes. */
static void test_trace_cap(void)
{
    char path[1024];
    point_path("detailed_llama3_70b.cfg", path, sizeof path);
    point_t p;
    load_err le;
    CU_ASSERT_EQUAL_FATAL(load_point(path, unit_configs(), &p, &le), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    int64_t dropped = -1, all = -1;
    status_code st = STATUS_OK;
    CU_ASSERT_EQUAL(trace_json_detailed(f, &p, 1.0, "cap", 10, &dropped, &st), 0);
    fclose(f);
    CU_ASSERT(dropped > 0);
    size_t capped = len;
    CU_ASSERT(len > 3 && strcmp(buf + len - 3, "}}\n") == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"events_dropped\":"));
    free(buf);
    f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(trace_json_detailed(f, &p, 1.0, "cap", TRACE_JSON_MAX_EVENTS, &all, &st), 0);
    fclose(f);
    CU_ASSERT_EQUAL(all, 0);
    CU_ASSERT(len > capped);
    free(buf);
}

static void test_usage_errors(void)
{
    unit_cli r;
    const char *a1[] = {"madsweep", "frobnicate"};
    unit_cli_run(&r, 2, a1);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "unknown command"));
    const char *a2[] = {"madsweep", "eval", "--bogus", "x.cfg"};
    unit_cli_run(&r, 4, a2);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "unknown option '--bogus'"));
    const char *a3[] = {"madsweep", "eval"};
    unit_cli_run(&r, 2, a3);
    CU_ASSERT_EQUAL(r.rc, 2);
    const char *a4[] = {"madsweep", "eval", "/nonexistent.cfg"};
    unit_cli_run(&r, 3, a4);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "/nonexistent.cfg: cannot read"));
    const char *a5[] = {"madsweep", "--help"};
    unit_cli_run(&r, 2, a5);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--trace FILE"));
    /* exit codes and signals are documented in --help */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "exit codes:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "  75  sweep stopped by a signal"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "SIGUSR1"));
    const char *a6[] = {"madsweep", "version"};
    unit_cli_run(&r, 2, a6);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, MADSWEEP_VERSION));
    const char *a7[] = {"madsweep", "keys"};
    unit_cli_run(&r, 2, a7);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "nvlink_bidir_bytes_per_s"));
    /* a flag given twice (valued options: test_options_twice_and_numbers), bench
     * bounded twice (count won before; issue 29); a short option's error
     * names it as typed */
    const char *a8[] = {"madsweep", "eval", "--json", "--json", "x.cfg"};
    unit_cli_run(&r, 5, a8);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "option --json given twice"));
    const char *a9[] = {"madsweep", "bench", "--count", "5", "--seconds", "1",
                        "detailed_llama3_70b.cfg"};
    char point[1024];
    snprintf(point, sizeof point, "%s/points/detailed_llama3_70b.cfg", unit_configs());
    a9[6] = point;
    unit_cli_run(&r, 7, a9);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--seconds and --count"));
    const char *a10[] = {"madsweep", "best", "-o", "x.h5"};
    unit_cli_run(&r, 4, a10);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "unknown option '-o'"));
}

/* The real binary: a bad point exits non-zero with file:line on stderr. */
static void test_binary_exit_codes(void)
{
    const char *bin = getenv("MADSWEEP_BINARY");
    CU_ASSERT_PTR_NOT_NULL_FATAL(bin);
    char path[512], cmd[2048], out[4096];
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file(
        "cli_bad.cfg", "model = \"dlrm_a\";\nsystem = \"zionex_8\";\ntask = {\n"
                       "  type = \"pretrain\";\n  dense = [\"ddp:4\"];\n"
                       "  embedding = [\"mp:8\"];\n  local_batch_dense = 8;\n"
                       "  local_batch_emb = 32;\n};\n",
        path, sizeof path));
    snprintf(cmd, sizeof cmd, "%s eval %s", bin, path);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 2);
    char want[600];
    snprintf(want, sizeof want, "%s:5: dense plan \"ddp:4\"", path);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    snprintf(cmd, sizeof cmd, "%s eval --json %s/points/dlrm_a_inference.cfg", bin,
             unit_configs());
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"status\":\"ok\""));
}

/* madmax2cfg.py: a config madsweep cannot express is refused with a reason
 * and exit status 2, and its usage is printed without arguments. */
static void test_madmax2cfg_errors(void)
{
    const char *py = getenv("MADSWEEP_PYTHON");
    const char *src = getenv("MADSWEEP_SOURCE_DIR");
    CU_ASSERT_PTR_NOT_NULL_FATAL(py);
    CU_ASSERT_PTR_NOT_NULL_FATAL(src);
    char m[512], s[512], t[512], cmd[4096], out[4096];
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file(
        "vit_model.json", "{\"name\": \"ViT\", \"type\": \"ViT\"}", m, sizeof m));
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file(
        "sys.json", "{\"type\": \"GPU\"}", s, sizeof s));
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file(
        "task.json", "{\"type\": \"pretrain\"}", t, sizeof t));
    snprintf(cmd, sizeof cmd, "%s %s/scripts/madmax2cfg.py %s %s %s", py, src, m, s, t);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "model type 'ViT' is not supported"));
    snprintf(cmd, sizeof cmd, "%s %s/scripts/madmax2cfg.py", py, src);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: scripts/madmax2cfg.py"));
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("cli", NULL, NULL);
    CU_add_test(s, "eval report", test_eval_report);
    CU_add_test(s, "eval --json and --trace", test_eval_json_and_trace);
    CU_add_test(s, "eval of a detailed point", test_eval_detailed_report);
    CU_add_test(s, "bench", test_bench);
    CU_add_test(s, "eval --trace capped", test_trace_cap);
    CU_add_test(s, "eval --trace on a full file system", test_trace_full);
    CU_add_test(s, "usage errors", test_usage_errors);
    CU_add_test(s, "best and point on a missing, directory or empty file",
                test_sweep_file_kinds);
    CU_add_test(s, "options twice, rounded or endless numbers",
                test_options_twice_and_numbers);
    CU_add_test(s, "binary exit codes", test_binary_exit_codes);
    CU_add_test(s, "madmax2cfg.py refuses what it cannot convert", test_madmax2cfg_errors);
    return unit_run();
}
