/*
 * sweep.c - setup, check pass, gathering and reporting of a sweep.
 *
 * See sweep.h for the phases. Every branch that returns early is taken
 * by all ranks together (decided by a broadcast or an Allreduce), so no
 * rank is ever left in a collective call.
 */
#define _POSIX_C_SOURCE 200809L
#include "sweep.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../worker/check.h"
#include "../worker/claim.h"
#include "../worker/output.h"
#include "../worker/verify.h"
#include "../worker/worker.h"
#include "best.h"
#include "job.h"
#include "space.h"
#include "spec.h"

typedef struct sweep_tick {
    FILE *err;
    bool tty;
    double t0, last, every;
    int64_t valid, todo; /* rows in the file, rows this run must write */
} sweep_tick;

static void sweep_time_text(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void sweep_fmt_secs(double s, char *buf, size_t size)
{
    if (!(s >= 0) || s > 1e9)
        snprintf(buf, size, "?");
    else if (s < 60)
        snprintf(buf, size, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, size, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, size, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void sweep_report_progress(sweep_tick *t, int64_t done, bool final)
{
    double now = MPI_Wtime();
    double dt = now - t->t0;
    double rate = dt > 0 ? (double)done / dt : 0;
    char eta[32];
    sweep_fmt_secs(rate > 0 ? (double)(t->todo - done) / rate : -1, eta,
                   sizeof eta);
    fprintf(t->err, "%ssweep: %lld/%lld points (%.1f%%), %.0f points/s, "
            "ETA %s%s", t->tty ? "\r" : "", (long long)done,
            (long long)t->todo,
            t->todo ? 100.0 * (double)done / (double)t->todo : 100.0, rate,
            final ? "0s" : eta, t->tty && !final ? "   " : "\n");
    fflush(t->err);
    t->last = now;
}

static void sweep_on_tick(worker *w, void *arg)
{
    sweep_tick *t = arg;
    if (MPI_Wtime() - t->last < t->every)
        return;
    int64_t drawn, evaluated;
    worker_progress(w, &drawn, &evaluated);
    sweep_report_progress(t, evaluated, false);
}

/* Reduces the per-rank best points to rank 0 (max value, then min id). */
static void sweep_reduce_best(MPI_Comm comm, worker_best *b, int64_t n)
{
    double *v = malloc((size_t)n * sizeof *v);
    double *vmax = malloc((size_t)n * sizeof *vmax);
    int64_t *id = malloc((size_t)n * sizeof *id);
    int64_t *idmin = malloc((size_t)n * sizeof *idmin);
    if (!v || !vmax || !id || !idmin)
        check_die("out of memory", __FILE__, __LINE__);
    for (int64_t i = 0; i < n; i++)
        v[i] = b[i].id >= 0 ? b[i].value : -1.0;
    CHECK_MPI(MPI_Allreduce(v, vmax, (int)n, MPI_DOUBLE, MPI_MAX, comm));
    for (int64_t i = 0; i < n; i++)
        id[i] = b[i].id >= 0 && v[i] == vmax[i] ? b[i].id : INT64_MAX;
    CHECK_MPI(MPI_Allreduce(id, idmin, (int)n, MPI_INT64_T, MPI_MIN, comm));
    for (int64_t i = 0; i < n; i++) {
        b[i].value = vmax[i];
        b[i].id = idmin[i] == INT64_MAX ? -1 : idmin[i];
    }
    free(v);
    free(vmax);
    free(id);
    free(idmin);
}

static void sweep_print_best(FILE *out, const space *s, const worker_best *b)
{
    space_cursor *cur = malloc(sizeof *cur);
    if (!cur)
        return;
    space_cursor_init(cur);
    fprintf(out, "best strategy by throughput for each (model, system):\n");
    bool det = s->sp->fidelity == EVAL_DETAILED;
    int wd = det ? 30 : 20, we = det ? 28 : 16;
    fprintf(out, "%-14s %-28s %7s %-10s %8s %-*s %-*s %14s\n", "model",
            "system", "devices", "task", "batch", wd,
            det ? "parallel" : "dense", we, det ? "options" : "embedding",
            "samples/s");
    int64_t nsys = s->radix[SPACE_SYSTEM];
    for (int64_t i = 0; i < s->radix[SPACE_MODEL] * nsys; i++) {
        const spec *sp = s->sp;
        if (b[i].id < 0) {
            fprintf(out, "%-14s %-28s %7lld (no feasible point)\n",
                    sp->models[i / nsys].name, sp->systems[i % nsys].name,
                    (long long)sp->systems[i % nsys].devices);
            continue;
        }
        space_point(s, cur, b[i].id, NULL);
        char d[PLAN_TEXT_MAX], e[PLAN_TEXT_MAX];
        output_plan_texts(&cur->p, d, e, sizeof d);
        fprintf(out, "%-14s %-28s %7lld %-10s %8lld %-*s %-*s %14.6g\n",
                cur->p.model.name, cur->p.cluster.name,
                (long long)cur->p.cluster.devices,
                sp->tasks[cur->idx[SPACE_TASK]].name,
                (long long)sp->batches[cur->idx[SPACE_BATCH]], wd, d, we, e,
                b[i].value);
    }
    free(cur);
}

/* Phase 1: spec on rank 0 first, then on the others; 0 or exit code. */
static int sweep_load(MPI_Comm comm, int rank, const sweep_opts *o, spec *sp,
                      FILE *err)
{
    const char *dir = load_configs_dir(o->configs_dir);
    load_err le;
    int bad = 0;
    if (rank == 0) {
        bad = spec_load(o->spec_path, dir, sp, &le) != 0;
        if (bad)
            fprintf(err, "madsweep: %s\n", le.text);
        else if (strlen(sp->text) > OUTPUT_SPEC_MAX) {
            fprintf(err, "madsweep: %s: the spec is larger than %d bytes\n",
                    o->spec_path, OUTPUT_SPEC_MAX);
            spec_free(sp);
            bad = 1;
        }
    }
    CHECK_MPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
    if (bad)
        return 2;
    if (rank != 0) {
        bad = spec_load(o->spec_path, dir, sp, &le) != 0;
        if (bad)
            fprintf(err, "madsweep: rank %d: %s\n", rank, le.text);
    }
    int any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
    if (any) {
        if (!bad)
            spec_free(sp);
        return 2;
    }
    return 0;
}

/* The files that must not be the output: the spec and the catalogues. */
static void sweep_inputs(const sweep_opts *o, char paths[][1024],
                         const char *inputs[], size_t n)
{
    static const char *const cats[] = {"models.cfg", "systems.cfg",
                                       "detailed_models.cfg",
                                       "detailed_systems.cfg", "hardware.cfg"};
    const char *dir = load_configs_dir(o->configs_dir);
    size_t k = 0;
    inputs[k++] = o->spec_path;
    for (size_t i = 0; i < sizeof cats / sizeof cats[0] && k + 1 < n; i++) {
        snprintf(paths[i], 1024, "%s/%s", dir, cats[i]);
        inputs[k++] = paths[i];
    }
    inputs[k] = NULL;
}

/* Phase 2: rank 0 claims the output (claim.h), then every rank creates
 * it (or reopens it for --resume: *layout tells whether its datasets
 * exist). From here on the file exists with complete = 0. Returns 0 or
 * the exit code. */
static int sweep_open(MPI_Comm comm, int rank, const sweep_opts *o,
                      const output_meta *m, output *fo, claim *cl, int *layout,
                      FILE *err)
{
    char msg[1200] = "";
    int state[2] = {0, 1}; /* exit code of a refusal; file absent or empty */
    cl->fd = -1;
    if (rank == 0) {
        char paths[8][1024];
        const char *inputs[8];
        sweep_inputs(o, paths, inputs, 8);
        bool empty = true;
        claim_rc cr = claim_take(cl, o->out_path, !o->resume, inputs, &empty,
                                 msg, sizeof msg);
        if (cr != CLAIM_OK)
            fprintf(err, "madsweep: %s\n", msg);
        state[0] = cr == CLAIM_REFUSED ? 2 : cr < 0 ? 1 : 0;
        state[1] = empty;
    }
    CHECK_MPI(MPI_Bcast(state, 2, MPI_INT, 0, comm));
    if (state[0])
        return state[0];
    *layout = 0;
    if (o->resume && !state[1]) {
        if (output_open(fo, comm, o->out_path, m, layout, msg, sizeof msg) == 0)
            return 0;
        if (rank == 0)
            fprintf(err, "madsweep: %s\n", msg);
        claim_release(cl);
        return 2;
    }
    if (o->resume && rank == 0 && !o->quiet)
        fprintf(err, "madsweep: %s is empty: starting the sweep\n",
                o->out_path);
    if (output_create(fo, comm, o->out_path, m, msg, sizeof msg) == 0)
        return 0;
    if (rank == 0)
        fprintf(err, "madsweep: %s\n", msg);
    claim_release(cl);
    return 1;
}

/* Phase 3: the check pass (see sweep.h). Returns the stop signal that
 * any rank received meanwhile (all ranks agree), or 0 once off[] holds
 * every chunk's row offset and by_code the invalid counts. */
static int sweep_check_pass(MPI_Comm comm, int rank, int nranks,
                            const space *s, space_cursor *cur, int64_t chunk,
                            int64_t nchunks, int64_t *off, int64_t *by_code)
{
    for (int64_t c = rank; c < nchunks && !job_stop_signal(); c += nranks) {
        int64_t lo = c * chunk, hi = lo + chunk < s->total ? lo + chunk : s->total;
        off[c + 1] = space_count_valid(s, cur, lo, hi, by_code);
    }
    int sig = job_stop_signal(), any = 0;
    CHECK_MPI(MPI_Allreduce(&sig, &any, 1, MPI_INT, MPI_MAX, comm));
    if (any)
        return any;
    /* in pieces: MPI counts are int */
    for (int64_t at = 0; at < nchunks; at += 1 << 24) {
        int n = (int)(nchunks - at < (1 << 24) ? nchunks - at : (1 << 24));
        CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, off + 1 + at, n, MPI_INT64_T,
                                MPI_SUM, comm));
    }
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, by_code, SPACE_NCODES, MPI_INT64_T,
                            MPI_SUM, comm));
    for (int64_t c = 0; c < nchunks; c++)
        off[c + 1] += off[c];
    return 0;
}

/* --resume: every rank checks the tables and its share of the chunks
 * already written (verify.h); the first failure (lowest chunk) is
 * reported by rank 0. Returns 0, or 1 when the file is damaged. */
static int sweep_verify(MPI_Comm comm, int rank, int nranks, hid_t f,
                        const space *s, const int64_t *off, const uint8_t *done,
                        int64_t nchunks, int64_t complete, const char *path,
                        FILE *err)
{
    char msg[VERIFY_MSG] = "";
    int64_t bad = INT64_MAX; /* chunk of the failure, -1: the tables */
    for (int64_t c = 0; c < nchunks && complete && bad == INT64_MAX; c++)
        if (!done[c]) {
            snprintf(msg, sizeof msg, "it is marked complete but /progress "
                     "says chunk %lld was never written", (long long)c);
            bad = -1;
        }
    verify_shape vs;
    uint64_t *dg = malloc(((size_t)nchunks + 1) * sizeof *dg);
    if (!dg)
        check_die("out of memory", __FILE__, __LINE__);
    if (bad == INT64_MAX &&
        (verify_shape_read(f, &vs, msg, sizeof msg) != 0 ||
         verify_read_progress(f, nchunks, NULL, dg, msg, sizeof msg) != 0))
        bad = -1;
    for (int a = 0; a < SPACE_NAXES && bad == INT64_MAX; a++)
        if (vs.radix[a] != s->radix[a]) {
            snprintf(msg, sizeof msg, "/axes/%s has %lld rows, the spec %lld",
                     space_axis_names[a], (long long)vs.radix[a],
                     (long long)s->radix[a]);
            bad = -1;
        }
    verify_rows v;
    if (bad == INT64_MAX && verify_rows_open(&v, f, &vs, msg, sizeof msg) != 0)
        bad = -1;
    if (bad == INT64_MAX) {
        for (int64_t c = rank; c < nchunks && bad == INT64_MAX; c += nranks)
            if (done[c] && verify_chunk(&v, c, off[c], off[c + 1] - off[c], dg[c],
                                        msg, sizeof msg) != 0)
                bad = c;
        verify_rows_close(&v);
    }
    free(dg);
    int64_t first = INT64_MAX;
    CHECK_MPI(MPI_Allreduce(&bad, &first, 1, MPI_INT64_T, MPI_MIN, comm));
    if (first == INT64_MAX)
        return 0;
    /* the rank that found the first failure tells rank 0 */
    int mine = bad == first ? rank : nranks, who = nranks;
    CHECK_MPI(MPI_Allreduce(&mine, &who, 1, MPI_INT, MPI_MIN, comm));
    CHECK_MPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, who, comm));
    if (rank == 0)
        fprintf(err, "madsweep: cannot resume: %s is corrupted: %s; run "
                "without --resume to start it over\n", path, msg);
    return 1;
}

static const char *sweep_signal_name(int sig)
{
    return sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1"
           : sig == SIGINT ? "SIGINT" : "a signal";
}

/* A stopped run: the file keeps complete = 0 with the chunks written so
 * far; rank 0 says how to finish it. Returns JOB_EXIT_STOPPED. */
static int sweep_stopped(MPI_Comm comm, int rank, const sweep_opts *o,
                         output *fo, output_meta *m, int64_t written, FILE *err)
{
    int sig = job_stop_signal(), any = 0;
    CHECK_MPI(MPI_Allreduce(&sig, &any, 1, MPI_INT, MPI_MAX, comm));
    char e_text[32] = "";
    if (rank == 0)
        sweep_time_text(e_text, sizeof e_text);
    CHECK_MPI(MPI_Bcast(e_text, sizeof e_text, MPI_CHAR, 0, comm));
    m->end_time = e_text;
    m->complete = 0;
    m->evaluated = written;
    output_set_meta(fo, m);
    char what[96];
    if (m->valid >= 0)
        snprintf(what, sizeof what, "%lld of %lld points are in",
                 (long long)written, (long long)m->valid);
    else
        snprintf(what, sizeof what, "during the check pass, no rows yet in");
    if (rank == 0)
        fprintf(err, "madsweep: stopped by %s: %s %s (complete = 0); finish "
                "it with `madsweep sweep %s -o %s --resume`\n",
                sweep_signal_name(any), what, o->out_path, o->spec_path,
                o->out_path);
    return JOB_EXIT_STOPPED;
}

int sweep_run(MPI_Comm comm, const sweep_opts *o, sweep_stats *stats,
              FILE *out, FILE *err)
{
    int rank, nranks;
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    CHECK_MPI(MPI_Comm_size(comm, &nranks));
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    sweep_stats st;
    memset(&st, 0, sizeof st);

    spec sp;
    int rc = sweep_load(comm, rank, o, &sp, err);
    if (rc)
        return rc;
    space s;
    load_err le;
    if (space_init(&s, &sp, &le) != 0) {
        if (rank == 0)
            fprintf(err, "madsweep: %s: %s\n", o->spec_path, le.text);
        spec_free(&sp);
        return 2;
    }

    double t_start = MPI_Wtime();
    /* ceilings without total + d - 1, which overflows near 2^63 ids */
    int64_t chunk = sp.chunk;
    int64_t need = s.total / SPEC_MAX_CHUNKS + (s.total % SPEC_MAX_CHUNKS != 0);
    if (need > chunk)
        chunk = need;
    int64_t nchunks = s.total / chunk + (s.total % chunk != 0);
    int64_t *off = calloc((size_t)nchunks + 1, sizeof *off);
    uint8_t *done = calloc((size_t)nchunks + 1, 1);
    space_cursor *cur = malloc(sizeof *cur);
    int64_t by_code[SPACE_NCODES] = {0};
    int bad = !off || !done || !cur, any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
    output fo;
    claim cl = {.fd = -1};
    memset(&fo, 0, sizeof fo);
    if (any) {
        if (rank == 0)
            fprintf(err, "madsweep: out of memory for %lld chunks\n",
                    (long long)nchunks);
        rc = 1;
        goto out;
    }
    space_cursor_init(cur);
    st.total = s.total;

    /* phase 2: the file, marked incomplete, before any long computation */
    char t_text[32] = "";
    if (rank == 0)
        sweep_time_text(t_text, sizeof t_text);
    CHECK_MPI(MPI_Bcast(t_text, sizeof t_text, MPI_CHAR, 0, comm));
    output_meta meta = {
        .spec_text = sp.text, .spec_path = o->spec_path,
        .start_time = t_text, .end_time = "",
        .fidelity = sp.ops->name, .cost_version = sp.ops->version,
        .ranks = nranks, .total = st.total, .valid = -1,
        .invalid = -1, .evaluated = 0, .chunk = chunk,
        .nchunks = nchunks, .elapsed_s = 0, .evals_per_s = 0, .complete = 0};
    output_rows rows;
    output_rows_init(&rows);
    int layout = 0;
    rc = sweep_open(comm, rank, o, &meta, &fo, &cl, &layout, err);
    if (rc)
        goto out;

    /* phase 3: check pass */
    if (sweep_check_pass(comm, rank, nranks, &s, cur, chunk, nchunks, off,
                         by_code) != 0) {
        rc = sweep_stopped(comm, rank, o, &fo, &meta, 0, err);
        goto close;
    }
    st.valid = off[nchunks];
    st.invalid = s.total - st.valid;
    meta.valid = st.valid;
    meta.invalid = st.invalid;

    /* phase 4: the datasets (or, resuming, the chunks already written) */
    int64_t complete = 0;
    char msg[1200];
    if (!layout) {
        output_layout(&fo, &s, &rows, by_code, &meta);
    } else if (output_resume(&fo, comm, o->out_path, &rows, &meta, done,
                             &complete, msg, sizeof msg) != 0) {
        if (rank == 0)
            fprintf(err, "madsweep: %s\n", msg);
        rc = 2;
        goto close;
    } else if (sweep_verify(comm, rank, nranks, fo.file, &s, off, done, nchunks,
                            complete, o->out_path, err) != 0) {
        rc = 1;
        goto close;
    }
    int64_t already = 0, chunks_before = 0;
    for (int64_t c = 0; c < nchunks; c++)
        if (done[c]) {
            already += off[c + 1] - off[c];
            chunks_before++;
        }
    if (complete) {
        if (rank == 0 && !o->quiet)
            fprintf(err, "madsweep: %s is already complete (%lld points)\n",
                    o->out_path, (long long)st.valid);
        st.complete = 1;
        goto report;
    }

    /* phase 5: evaluate and write */
    sweep_tick tick = {.err = err, .tty = isatty(fileno(err)) != 0,
                       .every = o->progress_s > 0 ? o->progress_s : 0,
                       .valid = st.valid, .todo = st.valid - already};
    if (tick.every <= 0)
        tick.every = tick.tty ? 0.25 : 5.0;
    CHECK_MPI(MPI_Barrier(comm));
    double t_eval = MPI_Wtime();
    tick.t0 = tick.last = t_eval;
    worker w = {.comm = comm, .s = &s, .rows = &rows, .out = &fo,
                .row_off = off, .done = done, .chunk = chunk,
                .nchunks = nchunks, .kill_after = o->kill_after,
                .stop_after = o->stop_after,
                .tick = o->quiet ? NULL : sweep_on_tick, .tick_arg = &tick};
    if (worker_run(&w) != 0) {
        if (rank == 0)
            fprintf(err, "madsweep: out of memory for a chunk of rows\n");
        rc = 1;
        goto close;
    }

    /* phase 6: gather, attributes, report */
    int64_t mine[5] = {w.evaluated, w.ok, w.infeasible, w.invalid,
                       w.chunks_done},
            sum[5];
    CHECK_MPI(MPI_Allreduce(mine, sum, 5, MPI_INT64_T, MPI_SUM, comm));
    if (chunks_before + sum[4] < nchunks) { /* a rank was told to stop */
        rc = sweep_stopped(comm, rank, o, &fo, &meta, already + sum[0], err);
        st.evaluated_run = sum[0];
        free(w.best);
        goto close;
    }
    int64_t npairs = s.radix[SPACE_MODEL] * s.radix[SPACE_SYSTEM];
    sweep_reduce_best(comm, w.best, npairs);
    double tw[2] = {w.t_eval, w.t_write}, twmax[2];
    CHECK_MPI(MPI_Reduce(tw, twmax, 2, MPI_DOUBLE, MPI_MAX, 0, comm));
    double t_end = MPI_Wtime();
    double times[2] = {t_end - t_start, t_end - t_eval};
    CHECK_MPI(MPI_Bcast(times, 2, MPI_DOUBLE, 0, comm));
    st.evaluated_run = sum[0];
    st.ok = sum[1];
    st.infeasible = sum[2];
    st.invalid_rows = sum[3];
    st.elapsed_s = times[0];
    st.evals_per_s = times[0] > 0 ? (double)sum[0] / times[0] : 0;
    st.complete = 1;
    char e_text[32] = "";
    if (rank == 0)
        sweep_time_text(e_text, sizeof e_text);
    CHECK_MPI(MPI_Bcast(e_text, sizeof e_text, MPI_CHAR, 0, comm));
    meta.end_time = e_text;
    meta.evaluated = already + sum[0];
    meta.elapsed_s = st.elapsed_s;
    meta.evals_per_s = st.evals_per_s;
    meta.complete = 1;
    output_set_meta(&fo, &meta);
    output_close(&fo);
    claim_release(&cl);
    if (rank == 0 && !o->quiet) {
        sweep_report_progress(&tick, sum[0], true);
        fprintf(out, "sweep %s: %lld points in the space, %lld valid, %lld "
                "skipped as invalid; %lld evaluated by this run (%lld ok, "
                "%lld infeasible) on %d ranks in %.2f s (%.0f points/s, "
                "%.0f per rank)\n",
                sp.name, (long long)st.total, (long long)st.valid,
                (long long)st.invalid, (long long)sum[0], (long long)sum[1],
                (long long)sum[2], nranks, st.elapsed_s, st.evals_per_s,
                st.evals_per_s / nranks);
        if (sum[3] > 0)
            fprintf(out, "%lld rows have status invalid:non-finite or "
                    "invalid:negative (an input outside its physical range; "
                    "their figures are zero)\n", (long long)sum[3]);
        fprintf(out, "wrote %s (slowest rank: %.2f s evaluating, %.2f s "
                "writing rows; the rest is the check pass, setup and waiting)\n",
                o->out_path, twmax[0], twmax[1]);
        if (!o->resume)
            sweep_print_best(out, &s, w.best);
    }
    free(w.best);
report:
    output_close(&fo);
    claim_release(&cl);
    if (rank == 0 && !o->quiet && o->resume) {
        best_opts bo = {.path = o->out_path, .top = 1, .by = NULL,
                        .group = "model,system", .csv = false};
        fprintf(out, "best strategy by throughput for each (model, system):\n");
        best_run(&bo, out, err);
    }
    goto out;
close:
    output_close(&fo);
    claim_release(&cl);
out:
    if (stats)
        *stats = st;
    free(off);
    free(done);
    free(cur);
    spec_free(&sp);
    return rc;
}
