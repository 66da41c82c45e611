/*
 * unit.c - CUnit runner, file helpers and the in-process command line
 * shared by the test programs.
 */
#define _POSIX_C_SOURCE 200809L
#include "unit.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../worker/results.h"
#include "../worker/space.h"
#include "../cost/topo.h"
#include "../driver/cli/cmd.h"
#include "../driver/job.h"
#include "../driver/sweep/spec_load.h"

int unit_close(double a, double b, double rel, double abs)
{
    double d = fabs(a - b);
    return d <= abs || d <= rel * fabs(b);
}

int unit_run(void)
{
    CU_basic_set_mode(CU_BRM_VERBOSE);
    if (CU_basic_run_tests() != CUE_SUCCESS) {
        fprintf(stderr, "CUnit error: %s\n", CU_get_error_msg());
        CU_cleanup_registry();
        return 1;
    }
    unsigned failed = CU_get_number_of_failures();
    unsigned tests_failed = CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return (failed || tests_failed) ? 1 : 0;
}

int unit_run_mpi(void)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CU_basic_set_mode(rank == 0 ? CU_BRM_VERBOSE : CU_BRM_SILENT);
    CU_basic_run_tests();
    int mine = (int)(CU_get_number_of_failures() +
                     CU_get_number_of_tests_failed()),
        all = 0;
    CU_cleanup_registry();
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all)
        fprintf(stderr, "%d failure(s) over %d ranks\n", all, size);
    MPI_Finalize();
    return all ? 1 : 0;
}

void unit_mpi_init(int *argc, char ***argv)
{
    job_mpi_defaults();
    MPI_Init(argc, argv);
}

void unit_mpi_start(int *argc, char ***argv, int *rank, int *size)
{
    unit_mpi_init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    if (CU_initialize_registry() != CUE_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
}

void unit_space_load(const char *path, struct spec *sp, struct space *s)
{
    load_err err;
    CU_ASSERT_EQUAL_FATAL(spec_load(path, unit_configs(), sp, &err), 0);
    CU_ASSERT_EQUAL_FATAL(space_init(s, sp, err.text, sizeof err.text), 0);
    space_cursor *cnt = malloc(sizeof *cnt);
    CU_ASSERT_FATAL(cnt && space_cursor_init(cnt, s) == 0);
    CU_ASSERT_EQUAL_FATAL(space_count_all(s, cnt, NULL), 0);
    space_cursor_free(cnt);
    free(cnt);
}

char *unit_read_results(hid_t f, const table *t, hssize_t *n)
{
    *n = 0;
    results r;
    char msg[512];
    if (results_open(&r, f, msg, sizeof msg) != 0) {
        fprintf(stderr, "unit_read_results: %s\n", msg);
        return NULL;
    }
    *n = r.common.rows;
    char *rows = malloc((size_t)(*n > 0 ? *n : 1) * t->size);
    hid_t mt = table_mtype(t);
    if (rows && (mt < 0 || results_read_as(&r, 0, *n, mt, rows, msg, sizeof msg) != 0)) {
        fprintf(stderr, "unit_read_results: %s\n", msg);
        free(rows);
        rows = NULL;
    }
    if (mt >= 0)
        H5Tclose(mt);
    results_close(&r);
    return rows;
}

static const char *unit_tmpdir(void)
{
    const char *d = getenv("MADSWEEP_TEST_TMP");
    if (!d || !*d)
        d = "/tmp";
    mkdir(d, 0755);
    return d;
}

const char *unit_write_file(const char *name, const char *text, char *path,
                            size_t size)
{
    snprintf(path, size, "%s/%s", unit_tmpdir(), name);
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    fputs(text, f);
    if (fclose(f) != 0)
        return NULL;
    return path;
}

result_t unit_eval(const point_t *p)
{
    engine e;
    engine_init(&e, false);
    result_t r;
    status_code st = eval_point(p, &e, &r, NULL);
    engine_free(&e);
    CU_ASSERT_EQUAL_FATAL(st, STATUS_OK);
    return r;
}

point_t unit_point(const char *name)
{
    point_t p;
    load_err err;
    char path[1024];
    snprintf(path, sizeof path, "%s/points/%s", unit_configs(), name);
    int rc = load_point(path, unit_configs(), &p, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.text);
    CU_ASSERT_FATAL(rc == 0);
    return p;
}

const char *unit_configs(void)
{
    const char *d = getenv("MADSWEEP_CONFIGS");
    return d && *d ? d : "configs";
}

int unit_run_command(const char *cmd, char *out, size_t size)
{
    char full[4096];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    /* drain the rest so the child is not blocked on a full pipe */
    char sink[4096];
    while (fread(sink, 1, sizeof sink, p) > 0) {
    }
    int st = pclose(p);
    if (st == -1 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

int unit_row_costs_ok(const point_t *p, const result_t *r)
{
    static const char *const all[] = {
        "samples_per_s_per_device", "energy_per_iteration_j", "energy_per_sample_j",
        "cost_per_iteration_usd", "cost_per_sample_usd", "mem_capacity_bytes_per_device"};
    static const char *const llm[] = {"tokens_per_s_per_device", "energy_per_token_j",
                                      "cost_per_million_tokens_usd"};
    for (int k = 0; k < 2; k++) {
        const char *const *names = k ? llm : all;
        size_t n = k ? sizeof llm / sizeof llm[0] : sizeof all / sizeof all[0];
        if (k && p->model.kind != MODEL_LLM)
            break;
        for (size_t i = 0; i < n; i++) {
            double v = result_get(r, result_find(names[i]));
            if (!(isfinite(v) && v > 0)) {
                fprintf(stderr, "%s on %s: %s = %g\n", p->model.name, p->cluster.name,
                        names[i], v);
                return 0;
            }
        }
    }
    return 1;
}

int unit_cli_capture(int argc, const char **argv, char **out, char *err,
                     size_t errsize)
{
    FILE *o = tmpfile(), *e = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    int rc = cmd_main(argc, (char **)(void *)argv, o, e);
    long n = ftell(o);
    rewind(o);
    rewind(e);
    *out = calloc((size_t)n + 1, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*out);
    size_t got = fread(*out, 1, (size_t)n, o);
    (*out)[got] = '\0';
    got = fread(err, 1, errsize - 1, e);
    err[got] = '\0';
    fclose(o);
    fclose(e);
    return rc;
}

void unit_cli_run(unit_cli *r, int argc, const char **argv)
{
    char *out = NULL;
    r->rc = unit_cli_capture(argc, argv, &out, r->err, sizeof r->err);
    size_t n = strlen(out);
    if (n > sizeof r->out - 1)
        n = sizeof r->out - 1;
    memcpy(r->out, out, n);
    r->out[n] = '\0';
    free(out);
}

hw_t unit_tidy_hw(void)
{
    hw_t h;
    memset(&h, 0, sizeof h);
    strcpy(h.name, "tidy");
    h.peak_flops[HW_FP32] = 10e12;
    h.peak_flops[HW_BF16] = 100e12;
    h.mem_capacity_bytes = 80e9;
    h.mem_bw_bytes_per_s = 1e12;
    h.mem_bw_efficiency = 0.5;
    h.gemm_points = 2;
    h.gemm_log10_flops[0] = 9.0;
    h.gemm_log10_flops[1] = 11.0;
    h.gemm_efficiency[0] = 0.2;
    h.gemm_efficiency[1] = 0.8;
    h.attention_efficiency = 0.5;
    h.scaleup_devices = 8;
    h.scaleup_bytes_per_s = 100e9;
    h.scaleup_latency_s = 1e-6;
    h.scaleup_efficiency = 1.0;
    h.nic_bytes_per_s = 10e9;
    h.nic_latency_s = 5e-6;
    h.nic_efficiency = 1.0;
    return h;
}

/* A GPT-3-like model without position table, ffn = 4h, MHA. */
model_t unit_gpt(int64_t l, int64_t h, int64_t a, int64_t s, int64_t v)
{
    model_t m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "gpt");
    m.kind = MODEL_LLM;
    m.layers = l;
    m.hidden = h;
    m.ffn = 4 * h;
    m.heads = a;
    m.kv_heads = a;
    m.seq_len = s;
    m.vocab = v;
    m.causal = true;
    m.d.position = MODEL_POS_NONE;
    return m;
}

/* A point on the tidy hardware: dp devices of one node. */
point_t unit_tidy_point(int64_t tp, int64_t pp, int64_t dp, int64_t zero)
{
    point_t p;
    memset(&p, 0, sizeof p);
    p.fidelity = EVAL_DETAILED;
    p.model = unit_gpt(8, 1024, 16, 1024, 32000);
    p.system.hw = unit_tidy_hw();
    p.system.devices = tp * pp * dp;
    p.system.devices_per_node = 8;
    const char *bad = NULL;
    CU_ASSERT_EQUAL(topo_system_derive(&p.system, &bad), STATUS_OK);
    p.task.kind = TASK_PRETRAIN;
    p.task.detailed.tp = tp;
    p.task.detailed.pp = pp;
    p.task.detailed.dp = dp;
    p.task.detailed.zero_stage = zero;
    p.task.detailed.dtype = HW_BF16;
    p.task.detailed.micro_batch = 1;
    p.task.detailed.global_batch = 16 * dp;
    p.task.detailed.overlap_dp_comm = true;
    return p;
}

