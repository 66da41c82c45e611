/*
 * cmd.c - subcommands and the option table of the madsweep CLI.
 *
 * One table lists every option: its name, whether it takes a value,
 * which subcommands accept it and its help line. Parsing, validation and
 * `--help` are all generated from it.
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd.h"

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../cost/eval.h"
#include "../job.h"
#include "../load/list.h"
#include "../load/load.h"
#include "../load/overlay.h"
#include "../query/best.h"
#include "../query/pointfile.h"
#include "../query/report.h"
#include "../query/trace_file.h"
#include "../query/trace_json.h"
#include "../suggest.h"
#include "../sweep/speckeys.h"
#include "../sweep/sweep.h"
#include "batch.h"
#include "catjson.h"
#include "kernel_cmd.h"
#include "launch.h"

typedef enum cmd_id {
    CMD_EVAL,
    CMD_BENCH,
    CMD_SWEEP,
    CMD_BEST,
    CMD_POINT,
    CMD_LIST,
    CMD_KEYS,
    CMD_VERSION,
    CMD_N
} cmd_id;

typedef struct cmd_info {
    const char *name;
    const char *args;
    const char *help;
} cmd_info;

static const cmd_info cmd_table[CMD_N] = {
    {"eval", "POINT.cfg", "evaluate one design point and print a report"},
    {"bench", "POINT.cfg", "evaluate a point repeatedly and print evaluations/s"},
    {"sweep", "SPEC.cfg", "evaluate a design space over MPI ranks into one HDF5 file"},
    {"best", "OUT.h5", "print the best points of a finished sweep file"},
    {"point", "OUT.h5 ID", "print the point file of row ID of a sweep file (for eval)"},
    {"list", "WHAT", "list catalogue entries with key figures: models, hardware, "
                     "systems, stacks; json: hardware, stacks and fits for scripts"},
    {"keys", "", "list every configuration and sweep-spec key with its meaning"},
    {"version", "", "print the tool and cost-model versions"},
};

typedef enum opt_id {
    OPT_JSON,
    OPT_TRACE,
    OPT_CONFIGS,
    OPT_SECONDS,
    OPT_COUNT,
    OPT_OUT,
    OPT_RESUME,
    OPT_QUIET,
    OPT_CHECKPOINT,
    OPT_TOP,
    OPT_BY,
    OPT_GROUP,
    OPT_WHERE,
    OPT_BASELINE,
    OPT_ORDER,
    OPT_ALL,
    OPT_COLUMNS,
    OPT_CSV,
    OPT_BATCH,
    OPT_STACKS,
    OPT_ENGINE_ARGS,
    OPT_HELP,
    OPT_N
} opt_id;

#define ON(c) (1u << (c))

typedef struct cmd_opt {
    const char *name;
    const char *arg; /* NULL for a flag */
    unsigned cmds;   /* ON(CMD_...) mask */
    const char *help;
} cmd_opt;

static const cmd_opt opt_table[OPT_N] = {
    {"json", NULL, ON(CMD_EVAL), "print one JSON object instead of the report"},
    {"trace", "FILE", ON(CMD_EVAL),
     "write a Chrome trace-event file (Perfetto): the whole iteration of a detailed "
     "transformer point, one process per pipeline stage; else both streams"},
    {"configs", "DIR", ON(CMD_EVAL) | ON(CMD_BENCH) | ON(CMD_SWEEP) | ON(CMD_POINT) |
                           ON(CMD_LIST),
     "catalogue directory (default $MADSWEEP_CONFIGS or the source tree's)"},
    {"seconds", "S", ON(CMD_BENCH), "bench: run for about S seconds (default 2)"},
    {"count", "N", ON(CMD_BENCH), "bench: run exactly N evaluations"},
    {"out", "FILE", ON(CMD_SWEEP),
     "sweep: the HDF5 file to write (required; replaced unless --resume; "
     "never an input, a non-HDF5 file or one a running sweep holds)"},
    {"resume", NULL, ON(CMD_SWEEP),
     "sweep: continue an interrupted sweep of the same spec in --out"},
    {"quiet", NULL, ON(CMD_SWEEP), "sweep: no progress line and no summary"},
    {"checkpoint", "S", ON(CMD_SWEEP),
     "sweep: reduced sweeps (keep) checkpoint every S seconds (default 60; "
     "0: after every chunk of rank 0)"},
    {"top", "K", ON(CMD_BEST), "best: the K best points per group (default 1)"},
    {"by", "COLUMN", ON(CMD_BEST),
     "best: rank by this number column (default throughput_samples_per_s); "
     "rates and mfu are maximized, the rest minimized (as a sweep's keep); "
     "rows whose figure is NaN are skipped"},
    {"group", "COLUMNS", ON(CMD_BEST),
     "best: group by columns, e.g. model,hardware,devices,stack (any axis or "
     "column)"},
    {"where", "CONDS", ON(CMD_BEST),
     "best: keep rows where every COLUMN OP VALUE holds (OP < <= > >= == !=), "
     "e.g. 'task==pretrain,devices>=1024,tpot_s<=0.03'"},
    {"baseline", "CONDS", ON(CMD_BEST),
     "best: per group also the best row matching CONDS (as --where, e.g. "
     "'tp==1,pp==1,zero_stage==3') and each best row's speedup over it"},
    {"order", "max|min", ON(CMD_BEST), "best: maximize or minimize --by"},
    {"all", NULL, ON(CMD_BEST),
     "best: rank rows of every status (default: ok only; infeasible rows "
     "never win otherwise)"},
    {"columns", NULL, ON(CMD_BEST), "best: list the file's columns with units"},
    {"csv", NULL, ON(CMD_BEST), "best: print CSV with every column"},
    {"batch", NULL, ON(CMD_EVAL),
     "eval: evaluate a stream of point records from FILE (default stdin), one JSON "
     "line each (driver/cli/batch.h: records end with a line %%; %id, %file, %set, %reset)"},
    {"stacks", "FILE", ON(CMD_EVAL) | ON(CMD_SWEEP) | ON(CMD_LIST),
     "a stacks fragment (scripts/calibrate.py --out) searched before the catalogue's "
     "stacks.cfg"},
    {"engine-args", NULL, ON(CMD_POINT),
     "point: print the row's launch command for its serving engine (vllm serve, "
     "python -m sglang.launch_server, trtllm-serve; one per pool when disaggregated)"},
    {"help", NULL, 0xffffffffu, "show this help"},
};

/* Short forms ("-o FILE" for "--out FILE"). */
static char cmd_short_name(int o)
{
    return o == OPT_OUT ? 'o' : '\0';
}

typedef struct cmd_args {
    cmd_id cmd;
    int argc;
    char **argv;
    const char *file;
    const char *file2; /* point: the id */
    bool set[OPT_N];
    const char *val[OPT_N];
} cmd_args;

static void cmd_usage(FILE *f)
{
    fprintf(f, "usage: madsweep COMMAND [OPTIONS] [FILE]\n\ncommands:\n");
    for (int c = 0; c < CMD_N; c++)
        fprintf(f, "  %-8s %-11s %s\n", cmd_table[c].name, cmd_table[c].args,
                cmd_table[c].help);
    fprintf(f, "\noptions:\n");
    for (int o = 0; o < OPT_N; o++) {
        char lhs[48];
        char sn = cmd_short_name(o);
        snprintf(lhs, sizeof lhs, "%s%c%s--%s%s%s", sn ? "-" : "",
                 sn ? sn : ' ', sn ? ", " : "   ", opt_table[o].name,
                 opt_table[o].arg ? " " : "",
                 opt_table[o].arg ? opt_table[o].arg : "");
        fprintf(f, "  %-20s %s", lhs, opt_table[o].help);
        if (opt_table[o].cmds != 0xffffffffu) {
            fputs(" [", f);
            bool first = true;
            for (int c = 0; c < CMD_N; c++)
                if (opt_table[o].cmds & ON(c)) {
                    fprintf(f, "%s%s", first ? "" : ", ", cmd_table[c].name);
                    first = false;
                }
            fputs("]", f);
        }
        fputc('\n', f);
    }
    fprintf(f, "\nexit codes:\n"
            "  0   success\n"
            "  1   runtime failure: I/O (a full file system), a damaged or "
            "foreign sweep file,\n"
            "      an output another running sweep holds, out of memory\n"
            "  2   bad usage or bad input: options, configs, specs (with "
            "FILE:LINE), an output\n"
            "      that is an input, an MPI world that disagrees with "
            "the launcher's task count\n"
            "  %d  sweep stopped by a signal: the file keeps what was "
            "written (complete = 0)\n"
            "      and `madsweep sweep SPEC -o OUT --resume` finishes it\n"
            "\nsignals (sweep): SIGTERM, SIGUSR1 (Slurm's --signal=B:USR1@120, "
            "forwarded by\nscripts/sweep.sbatch; mpirun forwards SIGUSR1) "
            "or SIGINT stop every rank within\none chunk; a second signal "
            "ends the process at once.\n", JOB_EXIT_STOPPED);
}

static int cmd_parse(int argc, char **argv, cmd_args *a, FILE *err)
{
    memset(a, 0, sizeof *a);
    a->argc = argc;
    a->argv = argv;
    if (argc < 2) {
        cmd_usage(err);
        return -1;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
        strcmp(name, "help") == 0) {
        a->cmd = CMD_N;
        return 0;
    }
    if (strcmp(name, "--version") == 0)
        name = "version";
    int c;
    for (c = 0; c < CMD_N; c++)
        if (strcmp(cmd_table[c].name, name) == 0)
            break;
    if (c == CMD_N) {
        suggest sg;
        suggest_init(&sg, name);
        for (int k = 0; k < CMD_N; k++)
            suggest_offer(&sg, cmd_table[k].name);
        char hint[SUGGEST_NAME_MAX + 32];
        fprintf(err, "madsweep: unknown command '%s'%s\n", name,
                suggest_hint(&sg, hint, sizeof hint));
        cmd_usage(err);
        return -1;
    }
    a->cmd = (cmd_id)c;
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        char longform[64];
        if (s[0] == '-' && s[1] != '-' && s[1] != '\0' && s[2] == '\0') {
            for (int o = 0; o < OPT_N; o++)
                if (cmd_short_name(o) == s[1]) {
                    snprintf(longform, sizeof longform, "--%s",
                             opt_table[o].name);
                    s = longform;
                }
        }
        if (strncmp(s, "--", 2) != 0 || s[2] == '\0') {
            if (a->file && c == CMD_POINT && !a->file2) {
                a->file2 = s;
                continue;
            }
            if (a->file) {
                fprintf(err, "madsweep %s: unexpected argument '%s'\n",
                        cmd_table[c].name, s);
                return -1;
            }
            a->file = s;
            continue;
        }
        const char *key = s + 2;
        const char *eq = strchr(key, '=');
        size_t klen = eq ? (size_t)(eq - key) : strlen(key);
        int o;
        for (o = 0; o < OPT_N; o++)
            if (strlen(opt_table[o].name) == klen &&
                strncmp(opt_table[o].name, key, klen) == 0)
                break;
        if (o == OPT_N || !(opt_table[o].cmds & ON(c))) {
            char word[64];
            snprintf(word, sizeof word, "%.*s", (int)klen, key);
            suggest sg;
            suggest_init(&sg, word);
            for (int k = 0; k < OPT_N; k++)
                if (opt_table[k].cmds & ON(c))
                    suggest_offer(&sg, opt_table[k].name);
            const char *near = suggest_result(&sg);
            fprintf(err, "madsweep %s: unknown option '%s'%s%s%s\n",
                    cmd_table[c].name, argv[i], near ? "; did you mean '--" : "",
                    near ? near : "", near ? "'?" : "");
            return -1;
        }
        /* an option given twice: the later one replaced the earlier
         * without a word (issue 29) */
        const char *before = a->set[o] ? (opt_table[o].arg ? a->val[o] : "") : NULL;
        if (before && !opt_table[o].arg) {
            fprintf(err, "madsweep %s: option --%s given twice\n", cmd_table[c].name,
                    opt_table[o].name);
            return -1;
        }
        a->set[o] = true;
        if (opt_table[o].arg) {
            if (eq)
                a->val[o] = eq + 1;
            else if (i + 1 < argc)
                a->val[o] = argv[++i];
            else {
                fprintf(err, "madsweep %s: option --%s needs %s\n",
                        cmd_table[c].name, opt_table[o].name,
                        opt_table[o].arg);
                return -1;
            }
            if (before) {
                fprintf(err, "madsweep %s: option --%s given twice ('%s' and '%s'); "
                        "give it once%s\n", cmd_table[c].name, opt_table[o].name,
                        before, a->val[o],
                        o == OPT_WHERE || o == OPT_BASELINE
                            ? " (conditions that all hold go in one, separated by commas)"
                            : "");
                return -1;
            }
        } else if (eq) {
            fprintf(err, "madsweep %s: option --%s takes no value\n",
                    cmd_table[c].name, opt_table[o].name);
            return -1;
        }
    }
    if (a->set[OPT_HELP])
        return 0;
    bool batch = c == CMD_EVAL && a->set[OPT_BATCH]; /* its FILE is optional */
    bool needs_file = cmd_table[c].args[0] != '\0' && !batch;
    if (needs_file && (!a->file || (c == CMD_POINT && !a->file2))) {
        fprintf(err, "madsweep %s: missing %s\n", cmd_table[c].name,
                cmd_table[c].args);
        return -1;
    }
    if (!needs_file && !batch && a->file) {
        fprintf(err, "madsweep %s: unexpected argument '%s'\n",
                cmd_table[c].name, a->file);
        return -1;
    }
    return 0;
}

/* Loads the point named on the command line; prints the error. */
static int cmd_load_point(const cmd_args *a, point_t *p, FILE *err)
{
    load_err le;
    char what[300];
    snprintf(what, sizeof what, "loading %s", a->file);
    job_init();
    job_guard_begin(what);
    int rc = overlay_load_point(a->file, a->set[OPT_STACKS] ? a->val[OPT_STACKS] : NULL,
                                load_configs_dir(a->val[OPT_CONFIGS]), p, &le);
    job_guard_end();
    if (rc == 0)
        return 0;
    fprintf(err, "madsweep: %s\n", le.text);
    return -1;
}

static int cmd_eval(const cmd_args *a, FILE *out, FILE *err)
{
    if (a->set[OPT_BATCH])
        return batch_run(a->file, load_configs_dir(a->val[OPT_CONFIGS]),
                         a->set[OPT_STACKS] ? a->val[OPT_STACKS] : NULL, out, err);
    char tmsg[1200];
    if (a->set[OPT_TRACE] && trace_file_check(a->val[OPT_TRACE], a->file, tmsg,
                                              sizeof tmsg) != 0) {
        fprintf(err, "madsweep: %s\n", tmsg);
        return 2;
    }
    point_t p;
    if (cmd_load_point(a, &p, err) != 0)
        return 2;
    engine e;
    engine_init(&e, a->set[OPT_TRACE]);
    result_t r;
    const char *where = NULL;
    status_code st = eval_point(&p, &e, &r, &where);
    int rc = 0;
    if (!status_is_data(st)) {
        fprintf(err, "madsweep: %s: %s: %s\n", a->file, where ? where : "point",
                status_text(st));
        rc = st == STATUS_NOMEM ? 1 : 2;
    } else {
        if (a->set[OPT_JSON])
            report_json(out, &p, &r);
        else
            report_text(out, &p, &r);
        if (a->set[OPT_TRACE]) {
            int64_t dropped = 0;
            char msg[1200];
            rc = trace_file_write(a->val[OPT_TRACE], a->file, &p, &r, &e, &dropped, msg,
                                  sizeof msg);
            if (rc != 0)
                fprintf(err, "madsweep: %s\n", msg);
            else if (dropped > 0)
                fprintf(err, "madsweep: trace %s: capped at its first %lld events "
                        "(%lld more left out; events_dropped in otherData)\n",
                        a->val[OPT_TRACE], (long long)TRACE_JSON_MAX_EVENTS, (long long)dropped);
        }
    }
    engine_free(&e);
    return rc;
}

static double cmd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Bench bounds: a run that ends (inf or 1e300 would never return). */
#define CMD_BENCH_MAX_SECONDS 3600.0
#define CMD_BENCH_MAX_COUNT 1e9

static int cmd_number(const char *text, const char *opt, double lo, double hi,
                      bool integer, double *out, FILE *err)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= lo) || !(v <= hi) ||
        (integer && v != floor(v))) { /* --count 1.5 ran 2 (issue 29) */
        fprintf(err, "madsweep bench: --%s: expected %s from %g to %g, got "
                "'%s'\n", opt, integer ? "an integer" : "a number", lo, hi, text);
        return -1;
    }
    *out = v;
    return 0;
}

static int cmd_bench(const cmd_args *a, FILE *out, FILE *err)
{
    point_t p;
    if (cmd_load_point(a, &p, err) != 0)
        return 2;
    double seconds = 2.0, count = 0;
    if (a->set[OPT_SECONDS] && a->set[OPT_COUNT]) {
        fprintf(err, "madsweep bench: --seconds and --count both bound the run; give one\n");
        return 2;
    }
    if (a->set[OPT_SECONDS] &&
        cmd_number(a->val[OPT_SECONDS], "seconds", 0.001, CMD_BENCH_MAX_SECONDS,
                   false, &seconds, err))
        return 2;
    if (a->set[OPT_COUNT] &&
        cmd_number(a->val[OPT_COUNT], "count", 1, CMD_BENCH_MAX_COUNT, true, &count, err))
        return 2;
    engine e;
    engine_init(&e, false);
    result_t r;
    double sink = 0;
    long long n = 0;
    double t0 = cmd_now(), t = t0;
    status_code st = STATUS_OK;
    /* check the clock every `batch` evaluations */
    const long long batch = 64;
    for (;;) {
        for (long long i = 0; i < batch; i++) {
            st = eval_point(&p, &e, &r, NULL);
            sink += r.iteration_time_s;
            n++;
            if (count > 0 && (double)n >= count)
                break;
        }
        t = cmd_now();
        if (!status_is_data(st))
            break;
        if (count > 0 ? (double)n >= count : t - t0 >= seconds)
            break;
    }
    engine_free(&e);
    if (!status_is_data(st)) {
        fprintf(err, "madsweep bench: %s: %s\n", a->file, status_text(st));
        return 2;
    }
    double dt = t - t0;
    fprintf(out, "%.0f evaluations/s\n", (double)n / dt);
    fprintf(out, "%.1f ns per evaluation (%lld evaluations in %.3f s, "
                 "%s on %s, %lld+%lld events, checksum %.6g s)\n",
            1e9 * dt / (double)n, n, dt, p.model.name, p.cluster.name,
            (long long)r.events_compute, (long long)r.events_comm, sink);
    return 0;
}

/* Initializes MPI once per process (finalized at exit by job.c's
 * handler), so `sweep` works under mpirun, srun or as a single process. */
static int cmd_mpi_init(FILE *err)
{
    int up = 0;
    MPI_Initialized(&up);
    if (up)
        return 0;
    job_init();
    job_mpi_defaults();
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        fprintf(err, "madsweep sweep: MPI_Init failed\n");
        return -1;
    }
    return 0;
}

/* The command line, each argument shell-quoted when it needs it (for
 * the provenance of sweep files); malloc'ed, NULL when out of memory. */
static char *cmd_line_text(int argc, char **argv)
{
    size_t cap = 1;
    for (int i = 0; i < argc; i++)
        cap += 4 * strlen(argv[i]) + 3;
    char *s = malloc(cap), *p = s;
    if (!s)
        return NULL;
    for (int i = 0; i < argc; i++) {
        const char *v = argv[i];
        bool plain = *v != '\0';
        for (const char *c = v; *c; c++)
            plain &= strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                            "0123456789-_./=:,+@%", *c) != NULL;
        if (i > 0)
            *p++ = ' ';
        if (plain) {
            memcpy(p, v, strlen(v));
            p += strlen(v);
            continue;
        }
        *p++ = '\'';
        for (const char *c = v; *c; c++) {
            if (*c == '\'') {
                memcpy(p, "'\\''", 4);
                p += 4;
            } else {
                *p++ = *c;
            }
        }
        *p++ = '\'';
    }
    *p = '\0';
    return s;
}

/* A non-negative integer from a test-hook variable, 0 when unset. */
static int64_t cmd_hook(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? strtoll(v, NULL, 10) : 0;
}

static int cmd_sweep(const cmd_args *a, FILE *out, FILE *err)
{
    if (!a->set[OPT_OUT]) {
        fprintf(err, "madsweep sweep: missing -o/--out FILE\n");
        return 2;
    }
    /* usage before MPI starts */
    double checkpoint_s = 0;
    if (a->set[OPT_CHECKPOINT]) {
        char *end = NULL;
        double v = strtod(a->val[OPT_CHECKPOINT], &end);
        if (!end || end == a->val[OPT_CHECKPOINT] || *end || !(v >= 0) || !isfinite(v)) {
            fprintf(err, "madsweep sweep: --checkpoint: expected a finite number of "
                    "seconds >= 0, got '%s'\n", a->val[OPT_CHECKPOINT]);
            return 2;
        }
        checkpoint_s = v > 0 ? v : -1;
    }
    /* the launcher's task count, read before MPI_Init adds variables */
    launch_env le;
    launch_capture(&le);
    char msg[600];
    if (launch_check_env(&le, msg, sizeof msg) != 0) {
        if (launch_reports(&le))
            fprintf(err, "madsweep sweep: %s\n", msg);
        return 2;
    }
    /* the stop handlers before MPI_Init: a SIGTERM or SIGUSR1 while MPI
     * starts (a Slurm time limit) is a stop request, not a death */
    job_signals_install();
    if (cmd_hook("MADSWEEP_STOP_BEFORE_INIT")) /* test hook: a stop as MPI starts */
        raise(SIGTERM);
    if (cmd_mpi_init(err) != 0)
        return 1;
    int world = 1, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (launch_check_world(&le, world, msg, sizeof msg) != 0) {
        if (rank == 0 && launch_reports(&le))
            fprintf(err, "madsweep sweep: %s\n", msg);
        return 2;
    }
    sweep_opts o = {.spec_path = a->file, .out_path = a->val[OPT_OUT],
                    .configs_dir = a->val[OPT_CONFIGS],
                    .stacks_path = a->set[OPT_STACKS] ? a->val[OPT_STACKS] : NULL,
                    .resume = a->set[OPT_RESUME], .quiet = a->set[OPT_QUIET]};
    /* test hooks: every rank SIGKILLs itself after this many chunks;
     * rank 0 raises SIGUSR1 after this many of its chunks */
    o.kill_after = cmd_hook("MADSWEEP_KILL_AFTER_CHUNKS");
    o.kill_finish = cmd_hook("MADSWEEP_KILL_FINISH");
    o.stop_after = cmd_hook("MADSWEEP_STOP_AFTER_CHUNKS");
    /* test hook: every rank sleeps this many ms after each chunk (a sweep
     * slow enough for the stop and fault tests to interrupt) */
    o.delay_ms = cmd_hook("MADSWEEP_CHUNK_DELAY_MS");
    /* test hook: every rank waits after this many of its chunks until it is
     * asked to stop (60 s at most), so a test's signal lands mid-sweep */
    o.hold_after = cmd_hook("MADSWEEP_HOLD_AFTER_CHUNKS");
    o.checkpoint_s = checkpoint_s;
    /* test hook: rank 0 SIGKILLs itself in the count pass */
    const char *kc = getenv("MADSWEEP_KILL_IN_COUNT");
    o.kill_in_count = kc && *kc && strcmp(kc, "0") != 0;
    /* test hook: rank 0 raises SIGTERM in the count pass */
    o.stop_in_count = cmd_hook("MADSWEEP_STOP_IN_COUNT") != 0;
    char *line = cmd_line_text(a->argc, a->argv);
    o.command_line = line;
    char what[300];
    snprintf(what, sizeof what, "sweeping %s into %s", a->file,
             a->val[OPT_OUT]);
    job_guard_begin(what);
    job_file_limit_install();
    int rc = sweep_run(MPI_COMM_WORLD, &o, NULL, out, err);
    job_guard_end();
    free(line);
    return rc;
}

static int cmd_best(const cmd_args *a, FILE *out, FILE *err)
{
    best_opts o = {.path = a->file, .top = 1, .by = a->val[OPT_BY],
                   .group = a->val[OPT_GROUP], .where = a->val[OPT_WHERE],
                   .baseline = a->val[OPT_BASELINE],
                   .order = a->val[OPT_ORDER], .all = a->set[OPT_ALL],
                   .columns = a->set[OPT_COLUMNS], .csv = a->set[OPT_CSV]};
    if (a->set[OPT_TOP]) {
        char *end = NULL;
        errno = 0;
        long long k = strtoll(a->val[OPT_TOP], &end, 10);
        if (errno || end == a->val[OPT_TOP] || *end || k < 1 || k > BEST_MAX_KEPT) {
            fprintf(err, "madsweep best: --top: expected an integer from 1 to "
                    "%lld (the rows best keeps), got '%s'\n",
                    (long long)BEST_MAX_KEPT, a->val[OPT_TOP]);
            return 2;
        }
        o.top = (int64_t)k;
    }
    return best_run(&o, out, err);
}

static int cmd_point(const cmd_args *a, FILE *out, FILE *err)
{
    char *end = NULL;
    errno = 0;
    long long id = strtoll(a->file2, &end, 10);
    if (errno || end == a->file2 || *end || id < 0) {
        fprintf(err, "madsweep point: ID: expected a point id (an integer >= 0, "
                "the id column of /results), got '%s'\n", a->file2);
        return 2;
    }
    return pointfile_from_sweep_as(a->file, (int64_t)id, load_configs_dir(a->val[OPT_CONFIGS]),
                                   a->set[OPT_ENGINE_ARGS], out, err);
}

static int cmd_version(FILE *out)
{
    fprintf(out, "madsweep %s\n", MADSWEEP_VERSION);
    for (int f = 0; f < EVAL_NFIDELITIES; f++) {
        const eval_ops *ops = eval_ops_of((eval_fidelity)f);
        fprintf(out, "fidelity %s: %s\n", ops->name, ops->version);
    }
    return 0;
}

int cmd_main(int argc, char **argv, FILE *out, FILE *err)
{
    cmd_args a;
    if (argc > 1 && strcmp(argv[1], "kernel") == 0)
        return kernel_cmd_main(argc - 1, argv + 1, out, err);
    if (cmd_parse(argc, argv, &a, err) != 0)
        return 2;
    if (a.cmd == CMD_N || a.set[OPT_HELP]) {
        cmd_usage(out);
        return 0;
    }
    switch (a.cmd) {
    case CMD_EVAL:
        return cmd_eval(&a, out, err);
    case CMD_BENCH:
        return cmd_bench(&a, out, err);
    case CMD_SWEEP:
        return cmd_sweep(&a, out, err);
    case CMD_BEST:
        return cmd_best(&a, out, err);
    case CMD_POINT:
        return cmd_point(&a, out, err);
    case CMD_LIST:
        if (strcmp(a.file, "json") == 0)
            return catjson_run(load_configs_dir(a.val[OPT_CONFIGS]),
                               a.set[OPT_STACKS] ? a.val[OPT_STACKS] : NULL, out, err);
        return list_run(a.file, load_configs_dir(a.val[OPT_CONFIGS]), out, err);
    case CMD_KEYS:
        load_keys_print(out);
        speckeys_print(out);
        return 0;
    case CMD_VERSION:
        return cmd_version(out);
    default:
        return 2;
    }
}
