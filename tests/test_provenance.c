/*
 * test_provenance.c - a sweep file records what it was made from, and
 * --resume refuses a catalogue edited in between, naming it.
 *
 * Runs `madsweep sweep` under mpiexec with 2 ranks ($MADSWEEP_MPIRUN) on
 * a copy of configs/ (MADSWEEP_CONFIGS points at it) with a spec that
 * @includes a file of that directory. The finished file must hold, for
 * every catalogue read (detailed_models.cfg, detailed_systems.cfg,
 * hardware.cfg via the systems, stacks.cfg for the stacks axis' default,
 * and the include), its whole text and a
 * SHA-256 equal to `sha256sum`'s, plus the absolute spec path, the
 * command line and a commit. Then a run is SIGKILLed midway, the copy's
 * hardware.cfg is edited (one NIC efficiency), and --resume must fail
 * with exit code 2 naming hardware.cfg; an edited stacks.cfg and an
 * edited include are refused the same way; with the files restored the resume finishes and equals the
 * uninterrupted run in /results.
 */
#define _XOPEN_SOURCE 700
#include <hdf5.h>
#include <mpi.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../worker/provenance.h"
#include "../worker/sha256.h"
#include "h5read.h"
#include "../driver/sweep/sources_collect.h"
#include "unit.h"

static const char *const prov_spec =
    "@include \"prov_batch.cfg\"\n"
    "fidelity = \"detailed\";\n"
    "models = [\"llama3-8b\"];\n"
    "systems = [\"h100-8\", \"a100-8\"];\n"
    "tasks = [\"pretrain\"];\n"
    "strategies = \"auto\";\n"
    "chunk = 64;\n";

/* Replaces the first `from` in file `path` by `to`; 0 on success. */
static int edit_file(const char *path, const char *from, const char *to)
{
    int64_t n = 0;
    char *text = sources_read(path, &n);
    if (!text)
        return -1;
    char *at = strstr(text, from);
    int rc = -1;
    FILE *f = at ? fopen(path, "w") : NULL;
    if (f) {
        fwrite(text, 1, (size_t)(at - text), f);
        fputs(to, f);
        fputs(at + strlen(from), f);
        rc = fclose(f) == 0 ? 0 : -1;
    }
    free(text);
    return rc;
}

/* The recorded catalogues of a finished file against the files. */
static void check_records(const char *h5, const char *spec, const char *dir)
{
    hid_t f = H5Fopen(h5, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    char *abs = h5read_attr_str(f, "spec_abspath"),
         *line = h5read_attr_str(f, "command_line"),
         *commit = h5read_attr_str(f, "git_commit"),
         *ssha = h5read_attr_str(f, "spec_sha256");
    char real[PATH_MAX];
    CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(spec, real));
    CU_ASSERT_PTR_NOT_NULL_FATAL(abs);
    CU_ASSERT_STRING_EQUAL(abs, real);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, " sweep "));
    CU_ASSERT_PTR_NOT_NULL(strstr(line, spec));
    CU_ASSERT_PTR_NOT_NULL_FATAL(commit);
    CU_ASSERT(strlen(commit) >= 7);
    int64_t sb = 0;
    char *stext = sources_read(spec, &sb), hex[SHA256_HEX_LEN + 1];
    CU_ASSERT_PTR_NOT_NULL_FATAL(stext);
    sha256_hex(stext, (size_t)sb, hex);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ssha);
    CU_ASSERT_STRING_EQUAL(ssha, hex);
    free(stext);
    free(abs);
    free(line);
    free(commit);
    free(ssha);
    /* the build (issue 19): this process's MPI library and HDF5 (the
     * same binaries' libraries), and the compiler with its flags */
    char *bmpi = h5read_attr_str(f, "build_mpi"), *bh5 = h5read_attr_str(f, "build_hdf5"),
         *bcc = h5read_attr_str(f, "build_compiler");
    char mine[MPI_MAX_LIBRARY_VERSION_STRING];
    int mlen = 0;
    MPI_Get_library_version(mine, &mlen);
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    char h5v[64];
    snprintf(h5v, sizeof h5v, "%u.%u.%u (built against", maj, min, rel);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bmpi);
    CU_ASSERT(strlen(bmpi) > 0 && strncmp(bmpi, mine, strlen(bmpi)) == 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bh5);
    CU_ASSERT(strncmp(bh5, h5v, strlen(h5v)) == 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bcc);
    CU_ASSERT_PTR_NOT_NULL(strstr(bcc, "-Wall"));
    free(bmpi);
    free(bh5);
    free(bcc);

    sources s;
    CU_ASSERT_EQUAL_FATAL(provenance_read(f, &s), 0);
    static const char *const want[] = {"prov_batch.cfg", "detailed_models.cfg",
                                       "detailed_systems.cfg", "hardware.cfg",
                                       "stacks.cfg"};
    CU_ASSERT_EQUAL(s.n, 5);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const source_file *r = sources_find(&s, want[i]);
        CU_ASSERT_PTR_NOT_NULL(r);
        if (!r)
            continue;
        char path[1200], cmd[1400], out[256];
        snprintf(path, sizeof path, "%s/%s", dir, want[i]);
        int64_t n = 0;
        char *text = sources_read(path, &n);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        CU_ASSERT_EQUAL(r->bytes, n);
        CU_ASSERT(r->bytes == n && memcmp(r->text, text, (size_t)n) == 0);
        snprintf(cmd, sizeof cmd, "sha256sum %s", path);
        CU_ASSERT_EQUAL(unit_run_command(cmd, out, sizeof out), 0);
        CU_ASSERT(strncmp(out, r->sha256, SHA256_HEX_LEN) == 0);
        CU_ASSERT_PTR_NOT_NULL(realpath(path, real));
        CU_ASSERT_STRING_EQUAL(r->path, real);
        free(text);
    }
    sources_free(&s);
    H5Fclose(f);
}

/* Reads /results as raw bytes in its file type. */
static char *read_results(const char *path, size_t *size)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return NULL;
    char *buf = h5read_dataset(f, "results", size);
    H5Fclose(f);
    return buf;
}

static void test_provenance_and_resume(void)
{
    const char *mpirun = getenv("MADSWEEP_MPIRUN");
    const char *bin = getenv("MADSWEEP_BINARY");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mpirun);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bin);
    char spec[512], dir[600], ref[600], res[600], hw[700], inc[700];
    static char cmd[8192], out[1 << 16];
    CU_ASSERT_PTR_NOT_NULL_FATAL(
        unit_write_file("prov.cfg", prov_spec, spec, sizeof spec));
    snprintf(dir, sizeof dir, "%s.configs", spec);
    snprintf(ref, sizeof ref, "%s.ref.h5", spec);
    snprintf(res, sizeof res, "%s.res.h5", spec);
    snprintf(hw, sizeof hw, "%s/hardware.cfg", dir);
    snprintf(inc, sizeof inc, "%s/prov_batch.cfg", dir);
    snprintf(cmd, sizeof cmd, "rm -rf %s && cp -r %s %s && "
             "printf 'global_batch = [64];\\n' > %s", dir, unit_configs(), dir, inc);
    CU_ASSERT_EQUAL_FATAL(unit_run_command(cmd, out, sizeof out), 0);

    snprintf(cmd, sizeof cmd, "MADSWEEP_CONFIGS=%s %s %s sweep %s -o %s --quiet",
             dir, mpirun, bin, spec, ref);
    int rc = unit_run_command(cmd, out, sizeof out);
    if (rc)
        fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(h5read_attr_i64(ref, "complete"), 1);
    check_records(ref, spec, dir);

    /* killed midway, then a catalogue edited: refused, naming it */
    snprintf(cmd, sizeof cmd, "MADSWEEP_CONFIGS=%s MADSWEEP_KILL_AFTER_CHUNKS=3 "
             "%s %s sweep %s -o %s --quiet", dir, mpirun, bin, spec, res);
    CU_ASSERT(unit_run_command(cmd, out, sizeof out) != 0);
    CU_ASSERT_EQUAL_FATAL(h5read_attr_i64(res, "complete"), 0);
    CU_ASSERT_EQUAL_FATAL(edit_file(hw, "nic_efficiency = 0.85;",
                                    "nic_efficiency = 0.80;"), 0);
    char resume[2048];
    snprintf(resume, sizeof resume, "MADSWEEP_CONFIGS=%s %s %s sweep %s -o %s "
             "--resume --quiet", dir, mpirun, bin, spec, res);
    CU_ASSERT_EQUAL(unit_run_command(resume, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "catalogue hardware.cfg changed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--resume"));
    CU_ASSERT_EQUAL(h5read_attr_i64(res, "complete"), 0);
    CU_ASSERT_EQUAL_FATAL(edit_file(hw, "nic_efficiency = 0.80;",
                                    "nic_efficiency = 0.85;"), 0);
    /* so is an edited stacks catalogue (the stack axis' source) */
    char stk[700];
    snprintf(stk, sizeof stk, "%s/stacks.cfg", dir);
    CU_ASSERT_EQUAL_FATAL(edit_file(stk, "name = \"unknown\";",
                                    "name = \"unknown\"; "), 0);
    CU_ASSERT_EQUAL(unit_run_command(resume, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "catalogue stacks.cfg changed"));
    CU_ASSERT_EQUAL_FATAL(edit_file(stk, "name = \"unknown\"; ",
                                    "name = \"unknown\";"), 0);
    /* an edited @include is refused the same way */
    CU_ASSERT_EQUAL_FATAL(edit_file(inc, "[64]", "[64, 128]"), 0);
    CU_ASSERT_EQUAL(unit_run_command(resume, out, sizeof out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "catalogue prov_batch.cfg changed"));
    CU_ASSERT_EQUAL_FATAL(edit_file(inc, "[64, 128]", "[64]"), 0);

    /* restored: the resume finishes, equal to the uninterrupted run */
    rc = unit_run_command(resume, out, sizeof out);
    if (rc)
        fprintf(stderr, "%s\n", out);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(h5read_attr_i64(res, "complete"), 1);
    size_t na = 0, nb = 0;
    char *a = read_results(ref, &na), *b = read_results(res, &nb);
    CU_ASSERT(a && b && na == nb && na > 0 && memcmp(a, b, na) == 0);
    free(a);
    free(b);
    hid_t f = H5Fopen(res, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT_FATAL(f >= 0);
    char *rl = h5read_attr_str(f, "resume_command_line");
    CU_ASSERT_PTR_NOT_NULL(rl);
    CU_ASSERT(rl && strstr(rl, "--resume"));
    free(rl);
    H5Fclose(f);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("provenance", NULL, NULL);
    CU_add_test(s, "catalogues recorded; an edited one refuses --resume",
                test_provenance_and_resume);
    return unit_run();
}
