/*
 * test_sweep_detailed.c - the detailed fidelity through the MPI sweep,
 * run in-process under mpiexec (any np).
 *
 * Every rank runs sweep_run() on a small detailed spec (a dense and an
 * MoE model, a catalogue system and a generated one, pretraining and
 * serving, the whole auto set) with small chunks; rank 0 then rebuilds
 * every point serially and compares /results row by row, byte for byte:
 * every valid id is evaluated exactly once, in id order, the row count is
 * the valid count, and rows infeasible for memory keep their breakdown;
 * every ok row's energy and cost are finite and positive, figures the
 * fidelity does not compute are NaN, the strategy columns are the
 * point's; batches apply to their model kind only; the summary ranks per
 * task by throughput per GPU among points that fit.
 * The file is left as dsweep_npN.h5 for the cross-rank h5diff test. A
 * spec naming unknown hardware fails with "file:line:" and exit code 2 on
 * every rank, without a hang. CUnit failures are summed over ranks.
 */
#include <CUnit/Basic.h>
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/detailed.h"
#include "../worker/output.h"
#include "../worker/space.h"
#include "../driver/sweep/spec_load.h"
#include "../driver/sweep/sweep.h"
#include "unit.h"

static int g_rank, g_size;

static const char *const dsweep_spec =
    "name = \"dtest\";\n"
    "fidelity = \"detailed\";\n"
    "models = [\"llama2-7b\", \"mixtral-8x7b\", \"dlrm-mlperf\"];\n"
    "systems = [\"h100-8\"];\n"
    "system_grid = ( { hardware = \"mi300x\"; nodes = [2]; } );\n"
    "tasks = ( \"pretrain\",\n"
    "  { type = \"inference\"; prompt_tokens = 1024; decode_tokens = 32; } );\n"
    "global_batch = { llm = [64]; dlrm = [4096]; };\n"
    "strategies = \"auto\";\n"
    "chunk = 4001;\n";

/* The summary: one table per task, the winner of llama2-7b pretraining on
 * H100 printed with its throughput per GPU (best_h100, found in the file). */
static void check_summary(const char *summary, double best_h100)
{
    char want_thr[64];
    snprintf(want_thr, sizeof want_thr, " %.1f ", best_h100);
    CU_ASSERT(best_h100 > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(summary, "\npretrain: pretraining"));
    CU_ASSERT_PTR_NOT_NULL(strstr(summary, "\ninference: serving"));
    const char *pre = strstr(summary, "\npretrain: pretraining");
    const char *h100 = pre ? strstr(pre, "    h100-sxm-80g ") : NULL;
    const char *eol = h100 ? strchr(h100, '\n') : NULL;
    CU_ASSERT(h100 && eol && strstr(h100, want_thr) && strstr(h100, want_thr) < eol);
    if (!(h100 && eol && strstr(h100, want_thr) && strstr(h100, want_thr) < eol))
        fprintf(stderr, "summary lacks %s:\n%s\n", want_thr, summary);
    CU_ASSERT_PTR_NOT_NULL(strstr(summary, "dlrm-mlperf (batch in samples)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(summary, "TPOT ms"));

}

/* The strategy axis: one row per option of the auto set, the parallel axis
 * one per degree tuple, texts from the candidate. */
static void check_axes(hid_t f)
{
    int64_t tuples, nopt;
    detailed_auto_factors(&tuples, &nopt);
    static const char *const axis[2] = {"axes/strategy", "axes/parallel"};
    const int64_t nrows[2] = {nopt, tuples}, at_row[2] = {5, 8};
    for (int x = 0; x < 2; x++) {
        hid_t ad = H5Dopen2(f, axis[x], H5P_DEFAULT);
        hid_t as = H5Dget_space(ad);
        CU_ASSERT_EQUAL(H5Sget_simple_extent_npoints(as), nrows[x]);
        hid_t st64 = H5Tcopy(H5T_C_S1);
        H5Tset_size(st64, 132);
        hid_t tt = H5Tcreate(H5T_COMPOUND, 132);
        H5Tinsert(tt, "text", 0, st64);
        char text0[132] = "", expect[132];
        hsize_t one = 1, at = (hsize_t)at_row[x];
        H5Sselect_hyperslab(as, H5S_SELECT_SET, &at, NULL, &one, NULL);
        hid_t ms = H5Screate_simple(1, &one, NULL);
        CU_ASSERT(H5Dread(ad, tt, ms, as, H5P_DEFAULT, text0) >= 0);
        task_detailed_t c5;
        if (x == 0) {
            /* option 5: vpp 1, zero 2, no recompute (on tp 2, pp 2) */
            CU_ASSERT(detailed_auto_option(5, &c5) >= 0);
            detailed_option_text(&c5, expect, sizeof expect);
            CU_ASSERT_PTR_NOT_NULL(strstr(text0, "zero2 none"));
        } else {
            /* tuple 8 = tp digit 1 + 7 x pp digit 1: tp 2, pp 2 */
            snprintf(expect, sizeof expect, "tp2 pp2 cp1 ep1");
        }
        CU_ASSERT_STRING_EQUAL(text0, expect);
        H5Sclose(ms);
        H5Tclose(tt);
        H5Tclose(st64);
        H5Sclose(as);
        H5Dclose(ad);
    }
}

static void test_dsweep_file(void)
{
    char spath[512], opath[600];
    if (g_rank == 0)
        unit_write_file("dsweep.cfg", dsweep_spec, spath, sizeof spath);
    MPI_Bcast(spath, sizeof spath, MPI_CHAR, 0, MPI_COMM_WORLD);
    char *slash = strrchr(spath, '/');
    snprintf(opath, sizeof opath, "%.*sdsweep_np%d.h5",
             slash ? (int)(slash - spath + 1) : 0, spath, g_size);
    /* rank 0 keeps the summary (the other ranks print nothing) */
    FILE *sum = g_rank == 0 ? tmpfile() : NULL;
    sweep_opts o = {.spec_path = spath, .out_path = opath,
                    .configs_dir = unit_configs(), .quiet = false,
                    .progress_s = 1e9};
    sweep_stats st;
    int rc = sweep_run(MPI_COMM_WORLD, &o, &st, sum ? sum : stdout, stderr);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(st.total, 3 * 2 * 2 * 2 * detailed_ops.auto_count());
    CU_ASSERT_EQUAL(st.evaluated_run, st.valid);
    CU_ASSERT_EQUAL(st.valid + st.invalid, st.total);
    CU_ASSERT(st.ok > 0);
    CU_ASSERT(st.infeasible > 0);
    if (g_rank != 0)
        return;
    static char summary[1 << 16];
    rewind(sum);
    size_t slen = fread(summary, 1, sizeof summary - 1, sum);
    summary[slen] = '\0';
    fclose(sum);

    spec sp;
    space s;
    unit_space_load(spath, &sp, &s);
    CU_ASSERT_EQUAL(sp.fidelity, EVAL_DETAILED);
    CU_ASSERT_EQUAL(s.total, st.valid);
    output_rows rows;
    output_rows_init(&rows, sp.fidelity);
    size_t rs = rows.t.size;
    hid_t f = H5Fopen(opath, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    hssize_t n = 0;
    char *got = unit_read_results(f, &rows.t, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_EQUAL(n, st.valid);
    char *want = malloc(rs);
    space_cursor *cur = malloc(sizeof *cur);
    CU_ASSERT_FATAL(cur && space_cursor_init(cur, &s) == 0);
    engine e;
    engine_init(&e, false);
    const result_field *mem = result_find("mem_total_bytes_per_device");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
    int64_t row = 0, mismatches = 0, oom = 0, oom_kept = 0, ok = 0, costs_bad = 0;
    int64_t nan_bad = 0, strat_bad = 0, kind_bad = 0;
    /* the summary's pick for llama2-7b pretraining on H100: the most
     * tokens/s per GPU among the rows that are ok and fit */
    double best_h100 = -1.0;
    for (int64_t id = 0; id < s.total; id++) {
        if (space_point(&s, cur, id, NULL) != STATUS_OK) {
            mismatches++; /* every id is a valid point */
            continue;
        }
        result_t r;
        status_code sc = eval_point(&cur->p, &e, &r, NULL);
        CU_ASSERT(status_is_data(sc));
        output_rows_pack(&rows, want, id, cur->idx, &cur->p, &r, NULL);
        if (row >= n || memcmp(got + (size_t)row * rs, want, rs) != 0)
            mismatches++;
        const task_detailed_t *td = &cur->p.task.detailed;
        if (row < n) {
            const char *g = got + (size_t)row * rs;
            strat_bad += table_get_i32(g, rows.strat_int[0]) != (td->tp > 0 ? td->tp : 1) ||
                         table_get_i32(g, rows.strat_int[2]) != td->dp ||
                         table_get_i32(g, rows.strat_int[6]) != td->zero_stage;
        }
        bool llm = cur->p.model.kind == MODEL_LLM;
        kind_bad += (sp.batches[cur->idx[SPACE_BATCH]] == 64) != llm;
        if (sc == STATUS_OK) {
            ok++;
            costs_bad += !unit_row_costs_ok(&cur->p, &r);
            bool serve = cur->p.task.kind == TASK_INFERENCE;
            /* not computed: serving latencies of training and of a DLRM,
             * an LLM's pipeline bubble when serving and its embedding
             * lookups, a DLRM's tokens */
            nan_bad += serve && llm ? !isnan(r.pipeline_bubble_s) || !(r.tpot_s > 0)
                                    : !isnan(r.ttft_s) || !isnan(r.tpot_s);
            nan_bad += llm ? !isnan(r.compute_emb_s) : !isnan(r.tokens_per_s_per_device);
            if (!serve && cur->idx[SPACE_MODEL] == 0 && cur->idx[SPACE_SYSTEM] == 0 &&
                r.mem_fits == 1.0 && r.tokens_per_s_per_device > best_h100)
                best_h100 = r.tokens_per_s_per_device;
        }
        else if (sc == STATUS_INFEASIBLE_MEMORY) {
            oom++;
            double v = table_get_f64(got + (size_t)row * rs,
                                     rows.field[mem - result_fields]);
            oom_kept += v > cur->p.system.hw.mem_capacity_bytes;
        }
        row++;
    }
    CU_ASSERT_EQUAL(row, n);
    CU_ASSERT_EQUAL(mismatches, 0);
    CU_ASSERT(oom > 0);
    CU_ASSERT_EQUAL(oom_kept, oom);
    CU_ASSERT(ok > 0);
    CU_ASSERT_EQUAL(costs_bad, 0);
    CU_ASSERT_EQUAL(nan_bad, 0);
    CU_ASSERT_EQUAL(strat_bad, 0);
    CU_ASSERT_EQUAL(kind_bad, 0);
    engine_free(&e);

    check_summary(summary, best_h100);
    check_axes(f);

    H5Fclose(f);
    space_cursor_free(cur);
    free(cur);
    free(got);
    free(want);
    space_free(&s);
    spec_free(&sp);
}

static void test_dsweep_bad(void)
{
    char spath[512], opath[600], epath[600];
    if (g_rank == 0)
        unit_write_file("dsweep_bad.cfg",
                        "models = [\"llama2-7b\"];\n"
                        "tasks = [\"pretrain\"];\nglobal_batch = [8];\n"
                        "strategies = \"auto\";\n"
                        "system_grid = ( { hardware = \"h100-sxm-80g\"; nodes = [1]; },\n"
                        "  { hardware = \"tpu-v9\"; nodes = [2]; } );\n",
                        spath, sizeof spath);
    MPI_Bcast(spath, sizeof spath, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(opath, sizeof opath, "%s.h5", spath);
    snprintf(epath, sizeof epath, "%s.err%d", spath, g_rank);
    FILE *ef = fopen(epath, "w+");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ef);
    sweep_opts o = {.spec_path = spath, .out_path = opath,
                    .configs_dir = unit_configs(), .quiet = true};
    CU_ASSERT_EQUAL(sweep_run(MPI_COMM_WORLD, &o, NULL, stdout, ef), 2);
    if (g_rank == 0) {
        char msg[2048] = "", prefix[600];
        rewind(ef);
        size_t len = fread(msg, 1, sizeof msg - 1, ef);
        msg[len] = '\0';
        snprintf(prefix, sizeof prefix, "madsweep: %s:6:", spath);
        CU_ASSERT(strncmp(msg, prefix, strlen(prefix)) == 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "\"tpu-v9\" is not in the catalogue"));
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "key 'hardware'"));
    }
    fclose(ef);
    remove(epath);
}

int main(int argc, char **argv)
{
    unit_mpi_start(&argc, &argv, &g_rank, &g_size);
    CU_pSuite s = CU_add_suite("detailed sweep", NULL, NULL);
    CU_add_test(s, "datasets equal a serial evaluation", test_dsweep_file);
    CU_add_test(s, "unknown hardware fails on every rank", test_dsweep_bad);
    return unit_run_mpi();
}
