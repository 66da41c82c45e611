/*
 * test_sweep_resume.c - a sweep SIGKILLed midway, then resumed, equals an
 * uninterrupted run in every dataset.
 *
 * Runs `madsweep sweep` under mpiexec with 2 ranks ($MADSWEEP_MPIRUN):
 * once uninterrupted; once with MADSWEEP_KILL_AFTER_CHUNKS set, so every
 * rank SIGKILLs itself after a few chunks (the job dies, the file says
 * complete = 0 and `best` refuses it); --resume with another spec or
 * another cost-model version is refused; then --resume. Every dataset
 * of the resumed file is compared byte for byte with the reference. Then
 * the same for a run killed during its count pass (after the file exists,
 * before its rows are laid out), and for a reduced sweep (keep top-K)
 * killed after checkpoints and resumed from the last one.
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5read.h"
#include "unit.h"

static const char *const resume_spec =
    "models = [\"dlrm_a\", \"llama2_70b\"];\n"
    "systems = \"all\";\n"
    "tasks = [\"pretrain\", \"inference\"];\n"
    "global_batch = [1024, 65536];\n"
    "strategies = \"auto\";\n"
    "fidelity = \"madmax\";\n"
    "chunk = 64;\n";

static const char *const datasets[] = {
    "results", "progress", "skipped", "axes/model", "axes/system",
    "axes/task", "axes/global_batch", "axes/strategy", "axes/stack",
    "axes/parallel", "axes/status"};

/* Every dataset of `names` holds the same bytes in files ref and got;
 * names each one that does not (" differs" then `after`). */
static void check_same(const char *ref, const char *got,
                       const char *const *names, size_t n, const char *after)
{
    hid_t a = H5Fopen(ref, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t b = H5Fopen(got, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(a >= 0 && b >= 0);
    for (size_t i = 0; i < n; i++) {
        int same = h5read_same(a, b, names[i]);
        if (!same)
            fprintf(stderr, "dataset %s differs%s\n", names[i], after);
        CU_ASSERT(same);
    }
    H5Fclose(a);
    H5Fclose(b);
}

/* Replaces a string attribute of the root group; 0 on success. */
static int set_attr_str(const char *path, const char *name, const char *v)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return -1;
    H5Adelete(f, name);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(v) + 1);
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a >= 0 && H5Awrite(a, t, v) >= 0 ? 0 : -1;
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
    return H5Fclose(f) < 0 ? -1 : rc;
}

/* The chunks the committed checkpoint of a reduced sweep's file covers
 * (the attribute chunks of /keep/slot<keep_slot>/state); -1 when absent. */
static int64_t resume_keep_chunks(const char *path)
{
    int64_t slot = h5read_attr_i64(path, "keep_slot"), v = -1;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return -1;
    char obj[32];
    snprintf(obj, sizeof obj, "keep/slot%lld/state", (long long)slot);
    hid_t a = H5Aopen_by_name(f, obj, "chunks", H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
        if (H5Aread(a, H5T_NATIVE_INT64, &v) < 0)
            v = -1;
        H5Aclose(a);
    }
    H5Fclose(f);
    return v;
}

static void test_resume(void)
{
    const char *mpirun = getenv("MADSWEEP_MPIRUN");
    const char *bin = getenv("MADSWEEP_BINARY");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mpirun);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bin);
    char spec[512], ref[600], res[600], cmd[4096];
    static char out[1 << 16];
    CU_ASSERT_PTR_NOT_NULL_FATAL(
        unit_write_file("resume.cfg", resume_spec, spec, sizeof spec));
    snprintf(ref, sizeof ref, "%s.ref.h5", spec);
    snprintf(res, sizeof res, "%s.res.h5", spec);

    snprintf(cmd, sizeof cmd, "%s %s sweep %s -o %s --quiet", mpirun, bin,
             spec, ref);
    CU_ASSERT_EQUAL_FATAL(unit_run_command(cmd, out, sizeof out), 0);
    CU_ASSERT_EQUAL(h5read_attr_i64(ref, "complete"), 1);

    /* killed: every rank SIGKILLs itself after 5 chunks */
    snprintf(cmd, sizeof cmd,
             "MADSWEEP_KILL_AFTER_CHUNKS=5 %s %s sweep %s -o %s --quiet",
             mpirun, bin, spec, res);
    int rc = unit_run_command(cmd, out, sizeof out);
    CU_ASSERT(rc != 0);
    CU_ASSERT_EQUAL(h5read_attr_i64(res, "complete"), 0);
    snprintf(cmd, sizeof cmd, "%s best %s", bin, res);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "unfinished"));

    /* refused: another spec, or another cost-model version */
    char other[512];
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file(
        "resume_other.cfg", "chunk = 64;\nmodels = [\"dlrm_a\"];\n"
        "systems = \"all\";\ntasks = [\"pretrain\"];\n"
        "global_batch = [1024];\nstrategies = \"auto\";\n"
        "fidelity = \"madmax\";\n", other, sizeof other));
    snprintf(cmd, sizeof cmd, "%s %s sweep %s -o %s --resume", mpirun, bin,
             other, res);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "spec_text differs"));
    CU_ASSERT_EQUAL(set_attr_str(res, "cost_model_version", "madmax-0"), 0);
    snprintf(cmd, sizeof cmd, "%s %s sweep %s -o %s --resume", mpirun, bin,
             spec, res);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "cost-model version"));
    CU_ASSERT_EQUAL(h5read_attr_i64(res, "complete"), 0);
    /* put the version back (read from the reference) */
    hid_t rf = H5Fopen(ref, H5F_ACC_RDONLY, H5P_DEFAULT);
    char *ver = h5read_attr_str(rf, "cost_model_version");
    H5Fclose(rf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ver);
    CU_ASSERT_EQUAL(set_attr_str(res, "cost_model_version", ver), 0);
    free(ver);

    /* resumed */
    snprintf(cmd, sizeof cmd, "%s %s sweep %s -o %s --resume", mpirun, bin,
             spec, res);
    rc = unit_run_command(cmd, out, sizeof out);
    if (rc)
        fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(h5read_attr_i64(res, "complete"), 1);
    CU_ASSERT_EQUAL(h5read_attr_i64(res, "points_evaluated"),
                    h5read_attr_i64(ref, "points_valid"));

    check_same(ref, res, datasets, sizeof datasets / sizeof datasets[0], "");

    /* killed while counting: the file exists (complete = 0, no rows yet)
     * and --resume lays it out and finishes it, identical again */
    char cnt[600];
    snprintf(cnt, sizeof cnt, "%s.cnt.h5", spec);
    snprintf(cmd, sizeof cmd, "MADSWEEP_KILL_IN_COUNT=1 %s %s sweep %s -o %s --quiet",
             mpirun, bin, spec, cnt);
    CU_ASSERT(unit_run_command(cmd, out, sizeof out) != 0);
    CU_ASSERT_EQUAL(h5read_attr_i64(cnt, "complete"), 0);
    snprintf(cmd, sizeof cmd, "%s %s sweep %s -o %s --resume --quiet", mpirun, bin,
             spec, cnt);
    rc = unit_run_command(cmd, out, sizeof out);
    if (rc)
        fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(h5read_attr_i64(cnt, "complete"), 1);
    check_same(ref, cnt, datasets, sizeof datasets / sizeof datasets[0],
               " after a kill in the count pass");

    /* a reduced sweep (top 2 per model and system, checkpointed after
     * every chunk of rank 0), killed and resumed from its checkpoint,
     * equals an uninterrupted run: results, groups and the rest */
    char kspec[512], kref[600], kres[600], ktext[1024];
    snprintf(ktext, sizeof ktext, "%skeep = { top = 2; by = \"iteration_time_s\";\n"
             "  group = [\"model\", \"system\"]; };\n", resume_spec);
    CU_ASSERT_PTR_NOT_NULL_FATAL(unit_write_file("resume_keep.cfg", ktext, kspec,
                                                 sizeof kspec));
    snprintf(kref, sizeof kref, "%s.ref.h5", kspec);
    snprintf(kres, sizeof kres, "%s.res.h5", kspec);
    snprintf(cmd, sizeof cmd, "%s %s sweep %s -o %s --quiet", mpirun, bin, kspec, kref);
    CU_ASSERT_EQUAL_FATAL(unit_run_command(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd,
             "MADSWEEP_KILL_AFTER_CHUNKS=12 %s %s sweep %s -o %s --quiet --checkpoint 0",
             mpirun, bin, kspec, kres);
    CU_ASSERT(unit_run_command(cmd, out, sizeof out) != 0);
    CU_ASSERT_EQUAL(h5read_attr_i64(kres, "complete"), 0);
    CU_ASSERT(resume_keep_chunks(kres) > 0); /* a checkpoint was taken */
    snprintf(cmd, sizeof cmd, "%s %s sweep %s -o %s --resume --quiet", mpirun, bin,
             kspec, kres);
    rc = unit_run_command(cmd, out, sizeof out);
    if (rc)
        fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(h5read_attr_i64(kres, "complete"), 1);
    CU_ASSERT(h5read_attr_i64(kres, "points_evaluated") < h5read_attr_i64(kref, "points_evaluated") ||
              h5read_attr_i64(kres, "points_evaluated") == h5read_attr_i64(kref, "points_valid"));
    static const char *const kdatasets[] = {"results", "groups", "progress", "skipped"};
    check_same(kref, kres, kdatasets, sizeof kdatasets / sizeof kdatasets[0],
               " in the reduced sweep after resume");
    hid_t b = H5Fopen(kres, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(b >= 0);
    CU_ASSERT(H5Lexists(b, "keep", H5P_DEFAULT) == 0);
    H5Fclose(b);

    /* best works on the finished file */
    snprintf(cmd, sizeof cmd, "%s best %s --group model --top 2 --csv", bin,
             res);
    CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "model,system,devices"));
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("resume", NULL, NULL);
    CU_add_test(s, "killed, resumed, identical", test_resume);
    return unit_run();
}
