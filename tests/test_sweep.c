/*
 * test_sweep.c - the MPI sweep, run in-process under mpiexec (any np).
 *
 * Every rank runs sweep_run() on a small spec with tiny chunks (many
 * chunks per rank, drawn dynamically); rank 0 then re-evaluates the whole
 * space serially in-process and compares /results row by row, byte for
 * byte: every valid id appears exactly once, in id order, with the same
 * figures, whatever the rank count — so the files of np 1, 2 and 3 have
 * identical datasets. Also: a bad spec fails on every rank with exit 2
 * and no hang; every table has a `units` attribute per column. CUnit
 * failures are summed over ranks for the exit code.
 */
#include <CUnit/Basic.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../worker/chunks.h"
#include "../worker/output.h"
#include "../worker/space.h"
#include "../driver/sweep/spec_load.h"
#include "../driver/sweep/sweep.h"
#include "unit.h"

static int g_rank, g_size;

static const char *const sweep_spec =
    "name = \"test\";\n"
    "models = [\"dlrm_a\", \"llama2_70b\"];\n"
    "systems = [\"zionex_8\", \"dc_A_128\"];\n"
    "system_grid = ( { base = \"zionex_128\"; nodes = [1, 2, 4];\n"
    "  nic_scale = [0.5, 1.0]; } );\n"
    "tasks = ( \"pretrain\", \"inference\",\n"
    "  { type = \"finetune\"; freeze_emb = true; min_frozen_layer = 10; } );\n"
    "global_batch = [64, 1000, 4096];\n"
    "strategies = \"auto\";\n"
    "fidelity = \"madmax\";\n"
    "chunk = 13;\n";

/* Every compound dataset has a `units` attribute with one non-empty
 * string per member, and /results' figures carry result_fields' units. */
static void test_units(hid_t f, const char *name)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    CU_ASSERT_FATAL(d >= 0);
    hid_t t = H5Dget_type(d);
    int nm = H5Tget_nmembers(t);
    hid_t a = H5Aopen(d, "units", H5P_DEFAULT);
    CU_ASSERT_FATAL(a >= 0);
    hid_t as = H5Aget_space(a);
    CU_ASSERT_EQUAL(H5Sget_simple_extent_npoints(as), nm);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 64);
    char(*u)[64] = calloc((size_t)nm + 1, 64);
    CU_ASSERT(H5Aread(a, st, u) >= 0);
    for (int i = 0; i < nm; i++) {
        char *m = H5Tget_member_name(t, (unsigned)i);
        const result_field *rf = result_find(m);
        CU_ASSERT(u[i][0] != '\0');
        if (rf && strcmp(name, "results") == 0)
            CU_ASSERT_STRING_EQUAL(u[i], rf->unit);
        H5free_memory(m);
    }
    free(u);
    H5Tclose(st);
    H5Sclose(as);
    H5Aclose(a);
    H5Tclose(t);
    H5Dclose(d);
}

static void test_sweep_file(void)
{
    char spath[512], opath[512];
    if (g_rank == 0)
        unit_write_file("sweep_test.cfg", sweep_spec, spath, sizeof spath);
    MPI_Bcast(spath, sizeof spath, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(opath, sizeof opath, "%.*s_np%d.h5", (int)(strlen(spath) - 4),
             spath, g_size);
    sweep_opts o = {.spec_path = spath, .out_path = opath,
                    .configs_dir = unit_configs(), .quiet = true};
    sweep_stats st;
    int rc = sweep_run(MPI_COMM_WORLD, &o, &st, stdout, stderr);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(st.evaluated_run, st.valid);
    CU_ASSERT_EQUAL(st.valid + st.invalid, st.total);
    if (g_rank != 0)
        return;

    /* the serial reference, built in-process */
    spec sp;
    space s;
    unit_space_load(spath, &sp, &s);
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
    space_cursor cur;
    CU_ASSERT_FATAL(space_cursor_init(&cur, &s) == 0);
    engine e;
    engine_init(&e, false);
    int64_t row = 0, mismatches = 0, ok = 0, costs_bad = 0, too_big = 0;
    for (int64_t id = 0; id < s.total; id++) {
        if (space_point(&s, &cur, id, NULL) != STATUS_OK) {
            mismatches++; /* every id is a valid point */
            continue;
        }
        result_t r;
        status_code sc = eval_point(&cur.p, &e, &r, NULL);
        CU_ASSERT(status_is_data(sc));
        if (sc == STATUS_OK) {
            /* every ok row: energy and cost finite and positive; the memory
             * verdict of the weights; no MFU in this fidelity */
            ok++;
            costs_bad += !unit_row_costs_ok(&cur.p, &r);
            CU_ASSERT(r.mem_fits == (r.mem_weights_bytes_per_device <=
                                     cur.p.cluster.mem_capacity_bytes));
            too_big += r.mem_fits == 0.0;
            CU_ASSERT(r.mfu != r.mfu);
        }
        output_rows_pack(&rows, want, id, cur.idx, &cur.p, &r, NULL);
        if (row >= n || memcmp(got + (size_t)row * rs, want, rs) != 0)
            mismatches++;
        row++;
    }
    CU_ASSERT_EQUAL(row, n);
    CU_ASSERT_EQUAL(mismatches, 0);
    CU_ASSERT(ok > 0);
    CU_ASSERT_EQUAL(costs_bad, 0);
    CU_ASSERT(too_big > 0); /* LLaMA2-70B replicated on 40 GB devices */
    engine_free(&e);

    /* progress all set, complete = 1 */
    hid_t pd = H5Dopen2(f, "progress", H5P_DEFAULT);
    hid_t ps = H5Dget_space(pd);
    hssize_t nc = H5Sget_simple_extent_npoints(ps);
    chunks ch;
    CU_ASSERT_EQUAL_FATAL(chunks_plan(&ch, &s, 13, SPEC_MAX_CHUNKS, SPEC_CHUNK_MAX), 0);
    CU_ASSERT_EQUAL(nc, ch.n);
    CU_ASSERT(ch.n >= s.total / (4 * 13));
    chunks_free(&ch);
    unsigned char *prog = malloc((size_t)nc);
    H5Dread(pd, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, prog);
    int64_t set = 0;
    for (hssize_t i = 0; i < nc; i++)
        set += prog[i] == 1;
    CU_ASSERT_EQUAL(set, nc);
    int64_t complete = 0, ranks = 0;
    hid_t a = H5Aopen(f, "complete", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_INT64, &complete);
    H5Aclose(a);
    a = H5Aopen(f, "ranks", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_INT64, &ranks);
    H5Aclose(a);
    CU_ASSERT_EQUAL(complete, 1);
    CU_ASSERT_EQUAL(ranks, g_size);
    static const char *const tables[] = {
        "results", "skipped", "axes/model", "axes/system", "axes/task",
        "axes/global_batch", "axes/strategy", "axes/stack", "axes/parallel", "axes/status"};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        test_units(f, tables[i]);
    free(prog);
    H5Sclose(ps);
    H5Dclose(pd);
    H5Fclose(f);
    free(got);
    free(want);
    space_cursor_free(&cur);
    space_free(&s);
    spec_free(&sp);
}

static void test_bad_spec(void)
{
    char spath[512], opath[512];
    if (g_rank == 0)
        unit_write_file("sweep_bad.cfg",
                        "models = [\"dlrm_a\"];\nsystems = [\"zionex_8\"];\n"
                        "tasks = [\"pretrain\"];\nglobal_batch = [8];\n"
                        "strategies = \"sometimes\";\nfidelity = \"madmax\";\n",
                        spath, sizeof spath);
    MPI_Bcast(spath, sizeof spath, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(opath, sizeof opath, "%s.h5", spath);
    sweep_opts o = {.spec_path = spath, .out_path = opath,
                    .configs_dir = unit_configs(), .quiet = true};
    CU_ASSERT_EQUAL(sweep_run(MPI_COMM_WORLD, &o, NULL, stdout, stderr), 2);
    /* resuming a file that does not exist is an input error too */
    o.spec_path = NULL;
    char gpath[512];
    if (g_rank == 0)
        unit_write_file("sweep_good.cfg",
                        "models = [\"dlrm_a\"];\nsystems = [\"zionex_8\"];\n"
                        "tasks = [\"pretrain\"];\nglobal_batch = [8];\n"
                        "strategies = \"auto\";\nfidelity = \"madmax\";\n",
                        gpath, sizeof gpath);
    MPI_Bcast(gpath, sizeof gpath, MPI_CHAR, 0, MPI_COMM_WORLD);
    o.spec_path = gpath;
    o.out_path = "/nonexistent/dir/out.h5";
    o.resume = true;
    CU_ASSERT_EQUAL(sweep_run(MPI_COMM_WORLD, &o, NULL, stdout, stderr), 2);
    o.resume = false;
    CU_ASSERT_EQUAL(sweep_run(MPI_COMM_WORLD, &o, NULL, stdout, stderr), 1);
}

int main(int argc, char **argv)
{
    unit_mpi_start(&argc, &argv, &g_rank, &g_size);
    CU_pSuite s = CU_add_suite("sweep", NULL, NULL);
    CU_add_test(s, "datasets equal a serial evaluation", test_sweep_file);
    CU_add_test(s, "bad specs fail on every rank", test_bad_spec);
    return unit_run_mpi();
}
