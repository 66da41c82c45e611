/*
 * unit.h - shared helpers of the CUnit test programs.
 *
 * unit_run() runs every registered suite and turns the failure count
 * into the exit code, so CTest sees each failing assertion. Helpers to
 * build points from text keep the tests close to what users write, and
 * unit_cli_* run the command line in-process with its streams captured.
 */
#ifndef MADSWEEP_UNIT_H
#define MADSWEEP_UNIT_H

#include <CUnit/CUnit.h>
#include <stddef.h>

#include <hdf5.h>

#include "../cost/eval.h"
#include "../worker/table.h"

/* Relative-or-absolute closeness: |a-b| <= rel*|b| or |a-b| <= abs. */
int unit_close(double a, double b, double rel, double abs);

#define UNIT_ASSERT_CLOSE(a, b, rel)                                       \
    CU_ASSERT(unit_close((a), (b), (rel), 1e-12))

/* Runs all registered suites; returns the process exit code. */
int unit_run(void);

/* The same under MPI (after MPI_Init): rank 0 reports, failures are
 * summed over all ranks so every rank returns the same exit code, then
 * MPI_Finalize. A failing assertion must not skip a collective. */
int unit_run_mpi(void);

/* MPI_Init after the settings every madsweep rank takes first
 * (job_mpi_defaults, driver/job.h). */
void unit_mpi_init(int *argc, char ***argv);

/* The start of an MPI test program: MPI_Init, this rank and the number of
 * ranks, and the CUnit registry (MPI_Abort when it cannot be made). */
void unit_mpi_start(int *argc, char ***argv, int *rank, int *size);

/* Loads spec file `path` (catalogues of unit_configs()) and lays out its
 * space with the count pass, as a sweep does before its rows, for a
 * serial reference; a failure is a FATAL assertion. (Struct tags, so
 * that tests which do not use them keep the names spec and space free.) */
struct spec;
struct space;
void unit_space_load(const char *path, struct spec *sp, struct space *s);

/* Reads all logical rows of file f (worker/results.h: /results joined
 * with its parts) in the memory layout of table t (as the sweep packed
 * them); returns a malloc'ed buffer of *n rows (at least one byte), or
 * NULL when they do not read (the reason on stderr). */
char *unit_read_results(hid_t f, const table *t, hssize_t *n);

/* Writes text to a fresh temporary file under $MADSWEEP_TEST_TMP (or
 * /tmp) named after `name`; returns its path in a static-free buffer the
 * caller provides. */
const char *unit_write_file(const char *name, const char *text, char *path,
                            size_t size);

/* 1 when the figures every ok row carries are finite and positive:
 * throughput per device, energy and cost per iteration and per sample,
 * and for an LLM per token; 0 otherwise (the failing figure is named on
 * stderr). */
int unit_row_costs_ok(const point_t *p, const result_t *r);

/* Evaluates p (its own engine, no events kept) and asserts STATUS_OK;
 * its result. */
result_t unit_eval(const point_t *p);

/* The point file configs/points/NAME of unit_configs() (a failure to
 * load is a FATAL assertion). */
point_t unit_point(const char *name);

/* Catalogue directory of the source tree ($MADSWEEP_CONFIGS). */
const char *unit_configs(void);

/* Runs a shell command; captures stdout and stderr (merged into `out`),
 * returns the exit status or -1. */
int unit_run_command(const char *cmd, char *out, size_t size);

/* Runs `madsweep` in-process: cmd_main on argv (argv[0] is the program
 * name) with stdout and stderr captured in temporary files. Returns its
 * exit code; *out is all of stdout (malloc'ed, NUL-terminated, the caller
 * frees it), err the first errsize - 1 bytes of stderr. A failure to
 * capture is a FATAL assertion. */
int unit_cli_capture(int argc, const char **argv, char **out, char *err,
                     size_t errsize);

/* The same into fixed buffers: the first 64 KiB of stdout, 8 KiB of
 * stderr (nothing to free). */
typedef struct unit_cli {
    int rc;
    char out[1 << 16];
    char err[8192];
} unit_cli;

void unit_cli_run(unit_cli *r, int argc, const char **argv);

/* A tidy hardware generation for cost-model tests: BF16 100 TFLOP/s
 * (FP32 10), 80 GB at 1 TB/s and 0.5 efficiency, a BF16 GEMM table
 * (9, 0.2) (11, 0.8), attention 0.5, scale-up 8 x 100 GB/s at 1 us,
 * NIC 10 GB/s at 5 us; no FP8 or FP4 peak. */
hw_t unit_tidy_hw(void);

/* A GPT-3-like model without position table, ffn = 4h, MHA. */
model_t unit_gpt(int64_t l, int64_t h, int64_t a, int64_t s, int64_t v);

/* A point on the tidy hardware: a gpt(8, 1024, 16, 1024, 32000) pretraining
 * on tp x pp x dp devices of 8-device nodes, BF16, micro-batch 1, global
 * batch 16 per replica, ZeRO stage zero. */
point_t unit_tidy_point(int64_t tp, int64_t pp, int64_t dp, int64_t zero);

#endif
