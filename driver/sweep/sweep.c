/*
 * sweep.c - a sweep run in its phases: the spec loaded on every rank,
 * the output claimed and created, the count pass, the layout (or a
 * resumed file verified), the worker loop, and the finish with the
 * report (see sweep.h for the phases; progress lines: sweep_progress.c,
 * verifying a resumed file: sweep_resume.c).
 *
 * Every branch that returns early is taken by all ranks together
 * (decided by a broadcast or an Allreduce), so no rank is ever left in a
 * collective call.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../../worker/check.h"
#include "../../worker/chunks.h"
#include "../../worker/claim.h"
#include "../../worker/count.h"
#include "../../worker/kept.h"
#include "../../worker/output.h"
#include "../../worker/sha256.h"
#include "../../worker/space.h"
#include "../../worker/worker.h"
#include "../job.h"
#include "../load/load.h"
#include "spec_load.h"
#include "summary.h"
#include "sweep_progress.h"
#include "sweep_resume.h"

static void sweep_time_text(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* One digest over the names and digests of the files a spec read. */
static void sweep_sources_digest(const sources *s, char hex[SHA256_HEX_LEN + 1])
{
    sha256_ctx c;
    sha256_init(&c);
    for (int i = 0; i < s->n; i++) {
        sha256_update(&c, s->f[i].name, strlen(s->f[i].name) + 1);
        sha256_update(&c, s->f[i].sha256, SHA256_HEX_LEN);
    }
    unsigned char d[32];
    sha256_final(&c, d);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

static const char *sweep_signal_name(int sig)
{
    return sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1"
           : sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

/* A stop while the spec loaded (its systems generated): rank 0 leaves an
 * empty output file where there was none, so that `--resume` (a
 * requeued job's) starts the sweep instead of refusing a file that does
 * not exist; an existing file, a partial one being resumed above all, is
 * left as it is. */
static void sweep_load_stopped(const sweep_opts *o, int sig, FILE *err)
{
    int fd = open(o->out_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0)
        close(fd);
    fprintf(err, "madsweep: stopped by %s while loading %s (generating its systems): "
            "nothing written to %s yet; `madsweep sweep %s -o %s --resume` starts it\n",
            sweep_signal_name(sig), o->spec_path, o->out_path, o->spec_path, o->out_path);
}

/* Phase 1: spec on rank 0 first, then on the others; 0 or exit code
 * (JOB_EXIT_STOPPED: a stop while rank 0 generated the systems). */
static int sweep_load(MPI_Comm comm, int rank, const sweep_opts *o, spec *sp,
                      FILE *err)
{
    const char *dir = load_configs_dir(o->configs_dir);
    load_err le;
    int bad = 0;
    if (rank == 0) {
        bad = spec_load_stacks(o->spec_path, dir, o->stacks_path, sp, &le) != 0;
        if (bad && job_stop_signal()) { /* stopped while generating its systems */
            sweep_load_stopped(o, job_stop_signal(), err);
            bad = JOB_EXIT_STOPPED;
        } else if (bad) {
            fprintf(err, "madsweep: %s\n", le.text);
            bad = 2;
        } else if (strlen(sp->text) > OUTPUT_SPEC_MAX) {
            fprintf(err, "madsweep: %s: the spec is larger than %d bytes\n",
                    o->spec_path, OUTPUT_SPEC_MAX);
            spec_free(sp);
            bad = 2;
        }
    }
    CHECK_MPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
    if (bad)
        return bad;
    if (rank != 0) {
        bad = spec_load_stacks(o->spec_path, dir, o->stacks_path, sp, &le) != 0;
        if (bad && job_stop_signal()) {
            bad = JOB_EXIT_STOPPED; /* rank 0 says so */
        } else if (bad) {
            fprintf(err, "madsweep: rank %d: %s\n", rank, le.text);
            bad = 2;
        }
    }
    int any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
    if (any) {
        if (!bad)
            spec_free(sp);
        if (any == JOB_EXIT_STOPPED && rank == 0 && !bad)
            sweep_load_stopped(o, SIGTERM, err); /* another rank was stopped */
        return any; /* 2, or JOB_EXIT_STOPPED (the larger) */
    }
    /* every rank must have read the same catalogues (the file stores
     * rank 0's texts, and the datasets' sizes must agree) */
    char mine[SHA256_HEX_LEN + 1], root[SHA256_HEX_LEN + 1];
    sweep_sources_digest(&sp->files, mine);
    memcpy(root, mine, sizeof root);
    CHECK_MPI(MPI_Bcast(root, sizeof root, MPI_CHAR, 0, comm));
    bad = strcmp(root, mine) != 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
    if (any) {
        if (rank == 0)
            fprintf(err, "madsweep: %s: the catalogue files changed while "
                    "the ranks were reading them; run again\n", o->spec_path);
        spec_free(sp);
        return 1;
    }
    return 0;
}

/* Provenance of this run: absolute spec path (rank 0's, broadcast). */
static void sweep_provenance(MPI_Comm comm, int rank, const sweep_opts *o,
                             const spec *sp, char *abspath, size_t size,
                             provenance *pv)
{
    char buf[PATH_MAX] = "";
    if (rank == 0 && !realpath(o->spec_path, buf))
        snprintf(buf, sizeof buf, "%s", o->spec_path);
    snprintf(abspath, size, "%s", buf);
    CHECK_MPI(MPI_Bcast(abspath, (int)size, MPI_CHAR, 0, comm));
    pv->files = &sp->files;
    pv->spec_text = sp->text;
    pv->spec_abspath = abspath;
    pv->command_line = o->command_line ? o->command_line : "(library call)";
}

/* Reduced sweeps: the reducer, and with --resume the last checkpoint
 * (rank 0's state, the chunks it covers, the rows committed); 0 or the
 * exit code, the same on every rank. */
static int sweep_keep_setup(MPI_Comm comm, int rank, const sweep_opts *o, output *fo,
                            const space *s, const spec_keep *k, reduce *red,
                            int64_t *first, int64_t *rows_done, winners_best *best,
                            FILE *err)
{
    char msg[512] = "";
    int bad = reduce_init(red, s, k, msg, sizeof msg) != 0, any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
    if (any) {
        if (rank == 0)
            fprintf(err, "madsweep: %s: %s\n", o->spec_path, msg[0] ? msg : "keep: "
                    "out of memory on a rank");
        if (!bad)
            reduce_free(red);
        return 2;
    }
    *first = *rows_done = 0;
    if (o->resume && kept_restore(fo, red, s, first, rows_done, best) != 0) {
        if (rank == 0)
            fprintf(err, "madsweep: cannot resume: %s: its checkpoint does not read "
                    "as this spec's; run without --resume to start it over\n",
                    o->out_path);
        reduce_free(red);
        return 2;
    }
    /* the first checkpoint, before any chunk: a run killed from here on
     * resumes (rows past the committed count are rewritten, never cut) */
    int64_t c = 0, r = 0;
    if (kept_committed(fo, &c, &r) == 1)
        kept_checkpoint(fo, red, s, 0, 0, best);
    return 0;
}

/* What a finished run measured of itself, for the file and the summary:
 * rows kept, the count pass, peak memory per rank, and for reduced sweeps
 * the merges (slowest rank), the final re-evaluation and rank 0's
 * root-only work. Collective. */
typedef struct sweep_costs {
    int64_t kept, peak_rss; /* bytes, the largest rank's */
    double count_s, merge_s, final_s, root_s;
} sweep_costs;

static void sweep_costs_report(MPI_Comm comm, output *fo, const worker *w, int64_t kept,
                               double count_s, sweep_costs *c)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double t[3] = {w->t_merge, w->t_final, (double)ru.ru_maxrss * 1024.0}, tmax[3];
    CHECK_MPI(MPI_Allreduce(t, tmax, 3, MPI_DOUBLE, MPI_MAX, comm));
    double root = w->t_root;
    CHECK_MPI(MPI_Bcast(&root, 1, MPI_DOUBLE, 0, comm));
    c->kept = kept;
    c->peak_rss = (int64_t)tmax[2];
    c->count_s = count_s;
    c->merge_s = tmax[0];
    c->final_s = tmax[1];
    c->root_s = root;
    output_set_i64(fo, "rows_kept", kept);
    output_set_i64(fo, "peak_rss_bytes", c->peak_rss);
    output_set_f64(fo, "count_s", count_s);
    if (w->red) {
        output_set_i64(fo, "reduce_syncs", w->syncs);
        output_set_f64(fo, "reduce_merge_s", c->merge_s);
        output_set_f64(fo, "reduce_final_s", c->final_s);
        output_set_f64(fo, "reduce_root_s", c->root_s);
    }
}

/* Whether any rank is `bad` (collective). */
static int sweep_any_rank(MPI_Comm comm, int bad)
{
    int any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
    return any;
}

/* Phase 2a: rank 0 claims the output (worker/claim.h: never the spec
 * or a catalogue it read, never a non-HDF5 file, never a file another
 * running sweep holds), before any rank touches it. Returns 0 (*empty:
 * the file is empty, so a --resume starts afresh) or the exit code. */
static int sweep_claim(MPI_Comm comm, int rank, const sweep_opts *o, const spec *sp,
                       claim *cl, bool *empty, FILE *err)
{
    int state[2] = {0, 1}; /* exit code of a refusal; file empty */
    cl->fd = -1;
    if (rank == 0) {
        const char **inputs = calloc((size_t)sp->files.n + 2, sizeof *inputs);
        if (!inputs)
            check_die("out of memory", __FILE__, __LINE__);
        int k = 0;
        inputs[k++] = o->spec_path;
        for (int i = 0; i < sp->files.n; i++)
            inputs[k++] = sp->files.f[i].path;
        char msg[1200] = "";
        bool e = true;
        claim_rc cr = claim_take(cl, o->out_path, !o->resume, inputs, &e, msg,
                                 sizeof msg);
        free(inputs);
        if (cr != CLAIM_OK)
            fprintf(err, "madsweep: %s\n", msg);
        state[0] = cr == CLAIM_REFUSED ? 2 : cr < 0 ? 1 : 0;
        state[1] = e;
    }
    CHECK_MPI(MPI_Bcast(state, 2, MPI_INT, 0, comm));
    *empty = state[1] != 0;
    return state[0];
}

/* A stopped run: the file keeps complete = 0 with the chunks written so
 * far (a reduced sweep: its last checkpoint); rank 0 says how to finish
 * it. `written`: rows in the file, -1 while counting. Returns
 * JOB_EXIT_STOPPED. */
static int sweep_stopped(MPI_Comm comm, int rank, const sweep_opts *o, output *fo,
                         output_meta *m, int64_t written, bool reduced, FILE *err)
{
    int sig = job_stop_signal(), any = 0;
    CHECK_MPI(MPI_Allreduce(&sig, &any, 1, MPI_INT, MPI_MAX, comm));
    char e_text[32] = "";
    if (rank == 0)
        sweep_time_text(e_text, sizeof e_text);
    CHECK_MPI(MPI_Bcast(e_text, sizeof e_text, MPI_CHAR, 0, comm));
    m->end_time = e_text;
    m->complete = 0;
    m->evaluated = written > 0 ? written : 0;
    output_set_meta(fo, m);
    char what[160];
    if (written < 0)
        snprintf(what, sizeof what, "during the count pass, no rows yet in");
    else if (reduced)
        snprintf(what, sizeof what, "%lld of %lld points reduced (checkpointed) in",
                 (long long)written, (long long)m->valid);
    else
        snprintf(what, sizeof what, "%lld of %lld points are in", (long long)written,
                 (long long)m->valid);
    if (rank == 0)
        fprintf(err, "madsweep: stopped by %s: %s %s (complete = 0); finish "
                "it with `madsweep sweep %s -o %s --resume`\n",
                sweep_signal_name(any), what, o->out_path, o->spec_path, o->out_path);
    return JOB_EXIT_STOPPED;
}

/* One run's state, passed through its phases. */
typedef struct sweep_run_state {
    MPI_Comm comm;
    int rank, nranks;
    const sweep_opts *o;
    FILE *out, *err;
    spec sp;
    space s;
    bool all;         /* keep = "all" */
    bool resume;      /* resuming a file that is not empty */
    claim cl;
    output fo;
    char t_text[32];  /* start time */
    char abspath[PATH_MAX];
    provenance prov;
    output_meta meta;
    output_unit *key_units; /* meta.key_units: the load key table's units */
    size_t nkey_units;
    output_rows rows;
    int64_t complete; /* the resumed file was complete */
    int64_t by_code[SPACE_NCODES];
    chunks ch;
    uint8_t *done;    /* per chunk: written */
    winners_best *best;
    reduce red;
    int64_t first, rows_done;     /* reduced: the resumed checkpoint's */
    int64_t already, chunks_before; /* rows and chunks earlier runs wrote */
    double t_start, t_count, t_eval;
    sweep_progress tick;
    sweep_stats st;
} sweep_run_state;

/* load_keys_each_unit's callback: one more input key's unit. */
static void sweep_add_key_unit(const char *key, const char *unit, void *arg)
{
    sweep_run_state *r = arg;
    output_unit *u = realloc(r->key_units, (r->nkey_units + 1) * sizeof *u);
    if (!u)
        check_die("out of memory", __FILE__, __LINE__);
    u[r->nkey_units++] = (output_unit){.column = key, .unit = unit};
    r->key_units = u;
}

/* A resumed file that was complete already (sweep_lay_out). */
#define SWEEP_COMPLETE (-1)

/* Phase 2 (the output claimed by the caller): the run's start time and
 * provenance, and the file created, or reopened to resume, with
 * complete = 0 and points_valid -1 until the count pass, so that it
 * exists before anything long runs. `empty`: the claimed file is empty
 * (a --resume starts afresh). Returns 0 or the exit code. */
static int sweep_open_file(sweep_run_state *r, bool empty)
{
    const sweep_opts *o = r->o;
    if (r->rank == 0)
        sweep_time_text(r->t_text, sizeof r->t_text);
    CHECK_MPI(MPI_Bcast(r->t_text, sizeof r->t_text, MPI_CHAR, 0, r->comm));
    sweep_provenance(r->comm, r->rank, o, &r->sp, r->abspath, sizeof r->abspath, &r->prov);
    r->meta = (output_meta){
        .prov = &r->prov,
        .spec_text = r->sp.text, .spec_path = o->spec_path,
        .start_time = r->t_text, .end_time = "",
        .fidelity = r->sp.ops->name, .cost_version = r->sp.ops->version,
        .ranks = r->nranks, .total = r->s.candidates, .valid = -1,
        .invalid = -1, .evaluated = 0, .chunk = r->sp.chunk,
        .nchunks = 0, .elapsed_s = 0, .evals_per_s = 0, .complete = 0};
    /* the input keys' columns in the units the loader reads them in */
    load_keys_each_unit(sweep_add_key_unit, r);
    r->meta.key_units = (output_units){.u = r->key_units, .n = r->nkey_units};
    output_rows_init(&r->rows, r->sp.fidelity);
    output_rows_plan(&r->rows, &r->sp); /* the lean layout of this spec's kinds */
    char msg[1200];
    r->resume = o->resume && !empty;
    if (o->resume && empty && r->rank == 0 && !o->quiet)
        fprintf(r->err, "madsweep: %s is empty or was never laid out: starting the "
                "sweep\n", o->out_path);
    int bad = r->resume ? output_open(&r->fo, r->comm, o->out_path, &r->meta, &r->complete,
                                      msg, sizeof msg)
                        : output_create(&r->fo, r->comm, o->out_path, &r->s, &r->meta, msg,
                                        sizeof msg);
    if (bad) {
        if (r->rank == 0)
            fprintf(r->err, "madsweep: %s\n", msg);
        return r->resume ? 2 : 1;
    }
    return 0;
}

/* Phase 3: the count pass (worker/count.h; quiet for a complete file:
 * it is cheap, and the file is verified against it before it is called
 * complete), the chunks cut by cost, and the counts in the metadata.
 * Returns 0 or the exit code (JOB_EXIT_STOPPED: a stop while counting). */
static int sweep_count(sweep_run_state *r)
{
    const sweep_opts *o = r->o;
    sweep_progress_count ct = {.err = r->err, .tty = isatty(fileno(r->err)) != 0,
                               .quiet = o->quiet || r->rank != 0 || r->complete,
                               .kill = o->kill_in_count, .stop = o->stop_in_count,
                               .t0 = MPI_Wtime(), .last = MPI_Wtime(),
                               .every = o->progress_s > 0 ? o->progress_s : 5.0};
    double t = MPI_Wtime();
    int counted = count_run(r->comm, &r->s, r->by_code, sweep_progress_on_count, &ct,
                            r->complete ? NULL : job_stop_signal);
    r->t_count = MPI_Wtime() - t;
    if (counted == 1)
        return sweep_stopped(r->comm, r->rank, o, &r->fo, &r->meta, -1, !r->all, r->err);
    if (counted != 0 ||
        chunks_plan(&r->ch, &r->s, r->sp.chunk, SPEC_MAX_CHUNKS, SPEC_CHUNK_MAX) != 0) {
        if (r->rank == 0)
            fprintf(r->err, "madsweep: out of memory (or more than 2^63 points) "
                    "counting the space\n");
        return 1;
    }
    r->done = calloc((size_t)r->ch.n + 1, 1);
    if (sweep_any_rank(r->comm, !r->done)) {
        if (r->rank == 0)
            fprintf(r->err, "madsweep: out of memory for %lld chunks\n",
                    (long long)r->ch.n);
        return 1;
    }
    r->st.total = r->s.candidates;
    r->st.valid = r->s.total;
    r->st.invalid = r->s.candidates - r->s.total;
    r->meta.valid = r->st.valid;
    r->meta.invalid = r->st.invalid;
    r->meta.chunk = r->ch.ids;
    r->meta.nchunks = r->ch.n;
    return 0;
}

/* Phase 3, continued: the datasets laid out, or (resuming) the file
 * checked against this space and verified (sweep_resume.h: a damaged
 * file is refused); then the summary's slots, the reducer of a reduced
 * sweep with its checkpoint, and the file made resumable. Returns 0,
 * the exit code, or SWEEP_COMPLETE for a resumed file complete already. */
static int sweep_lay_out(sweep_run_state *r)
{
    const sweep_opts *o = r->o;
    char msg[1200];
    int laid = 1;
    if (r->resume) {
        laid = output_reopen_layout(&r->fo, &r->rows, &r->meta, r->ch.lo, r->done, msg,
                                    sizeof msg);
        if (laid < 0 || (laid == 1 && r->complete)) {
            if (r->rank == 0)
                fprintf(r->err, "madsweep: %s: %s\n", o->out_path, laid < 0 ? msg :
                        "cannot resume: it is marked complete but has no datasets "
                        "(damaged); run without --resume to start it over");
            return 2;
        }
        if (laid == 0 && sweep_resume_verify(r->comm, r->rank, r->nranks, &r->fo, &r->s,
                                             &r->ch, r->done, r->sp.keep.mode, r->complete,
                                             r->err) != 0)
            return 1;
    }
    if (r->complete)
        return SWEEP_COMPLETE;
    if (laid) {
        output_layout(&r->fo, &r->rows, r->all ? r->s.total : 0, !r->all, r->by_code,
                      r->ch.lo, &r->meta);
        char kt[256];
        spec_keep_text(&r->sp.keep, kt, sizeof kt);
        output_set_str(&r->fo, "keep", kt);
    }
    int64_t slots = winners_slots(&r->s);
    r->best = malloc((size_t)(slots > 0 ? slots : 1) * sizeof *r->best);
    if (sweep_any_rank(r->comm, !r->best)) {
        if (r->rank == 0)
            fprintf(r->err, "madsweep: out of memory for the summary\n");
        return 1;
    }
    winners_clear(r->best, slots);
    int rc = 0;
    if (!r->all && (rc = sweep_keep_setup(r->comm, r->rank, o, &r->fo, &r->s, &r->sp.keep,
                                          &r->red, &r->first, &r->rows_done, r->best,
                                          r->err)) != 0)
        return rc;
    if (laid) { /* laid out (and, reduced, its first checkpoint): resumable */
        output_flush(&r->fo);
        int born = r->rank == 0 ? claim_born(&r->cl) : 0;
        if (sweep_any_rank(r->comm, born != 0)) {
            if (r->rank == 0)
                fprintf(r->err, "madsweep: cannot write to %s: %s; run again once the "
                        "cause is gone\n", o->out_path, strerror(errno));
            return 1;
        }
    }
    for (int64_t c = 0; c < r->ch.n; c++)
        if (r->all ? r->done[c] != 0 : c < r->first) {
            r->already += r->ch.lo[c + 1] - r->ch.lo[c];
            r->chunks_before++;
        }
    return 0;
}

/* Phase 4: the worker loop evaluates and writes (worker/worker.h); *w
 * is what this rank did, sum[] the evaluated, ok, infeasible and
 * invalid rows and the chunks done over every rank. Returns 0, or the
 * exit code (JOB_EXIT_STOPPED: stopped, the file keeps what was
 * written). */
static int sweep_evaluate(sweep_run_state *r, worker *w, int64_t sum[5])
{
    const sweep_opts *o = r->o;
    r->tick = (sweep_progress){.err = r->err, .tty = isatty(fileno(r->err)) != 0,
                               .every = o->progress_s > 0 ? o->progress_s : 0,
                               .valid = r->st.valid, .todo = r->st.valid - r->already};
    if (r->tick.every <= 0)
        r->tick.every = r->tick.tty ? 0.25 : 5.0;
    CHECK_MPI(MPI_Barrier(r->comm));
    r->t_eval = MPI_Wtime();
    r->tick.t0 = r->tick.last = r->t_eval;
    *w = (worker){.comm = r->comm, .s = &r->s, .rows = &r->rows, .out = &r->fo,
                  .ch = &r->ch, .done = r->done, .kill_after = o->kill_after,
                  .stop_after = o->stop_after, .delay_ms = o->delay_ms,
                  .hold_after = o->hold_after,
                  .stop = job_stop_signal,
                  .tick = o->quiet ? NULL : sweep_progress_on_chunk, .tick_arg = &r->tick,
                  .red = r->all ? NULL : &r->red, .first_chunk = r->first,
                  .rows_done = r->rows_done, .best = r->best,
                  .checkpoint_s = o->checkpoint_s > 0 ? o->checkpoint_s
                                  : o->checkpoint_s < 0 ? 0 : SWEEP_CHECKPOINT_S};
    if (worker_run(w) != 0) {
        if (r->rank == 0)
            fprintf(r->err, "madsweep: out of memory for a chunk of rows\n");
        reduce_free(&r->red);
        return 1;
    }
    int64_t mine[5] = {w->evaluated, w->ok, w->infeasible, w->invalid, w->chunks_done};
    CHECK_MPI(MPI_Allreduce(mine, sum, 5, MPI_INT64_T, MPI_SUM, r->comm));
    /* stopped: keep = "all" when a chunk is left undone (a rank that was
     * asked to stop left early); reduced sweeps agreed at their sync */
    if (r->all ? r->chunks_before + sum[4] < r->ch.n : w->stopped != 0) {
        reduce_free(&r->red);
        int64_t written = r->already + sum[0], kc = 0, kr = 0;
        if (!r->all) /* the ids of the checkpointed chunks */
            written = kept_committed(&r->fo, &kc, &kr) == 0
                          ? r->ch.lo[kc < r->ch.n ? kc : r->ch.n] : 0;
        r->st.evaluated_run = sum[0];
        return sweep_stopped(r->comm, r->rank, o, &r->fo, &r->meta, written, !r->all,
                             r->err);
    }
    return 0;
}

/* Rank 0's report of a finished run on `out`: counts, rates, where the
 * time went, a reduced sweep's costs, and (unless a resumed keep = "all"
 * sweep, whose summary reads the file) the summary. */
static void sweep_report(const sweep_run_state *r, const worker *w, const int64_t sum[5],
                         const double slowest[2], const sweep_costs *costs)
{
    const sweep_stats *st = &r->st;
    FILE *out = r->out;
    fprintf(out, "sweep %s: %lld combinations of the axes, %lld valid "
            "points (ids), %lld skipped by rule; %lld evaluated by this run (%lld ok, "
            "%lld infeasible) on %d ranks in %.2f s (%.0f points/s, "
            "%.0f per rank)\n",
            r->sp.name, (long long)st->total, (long long)st->valid,
            (long long)st->invalid, (long long)sum[0], (long long)sum[1],
            (long long)sum[2], r->nranks, st->elapsed_s, st->evals_per_s,
            st->evals_per_s / r->nranks);
    if (sum[3] > 0)
        fprintf(out, "%lld rows have status invalid:non-finite or "
                "invalid:negative (an input outside its physical range; "
                "their figures are zero)\n", (long long)sum[3]);
    fprintf(out, "wrote %s (slowest rank: %.2f s evaluating, %.2f s "
            "writing rows; count pass %.2f s; the rest is setup and waiting); "
            "peak memory of a rank %.1f MB\n",
            r->o->out_path, slowest[0], slowest[1], costs->count_s,
            (double)costs->peak_rss / 1e6);
    if (!r->all) {
        char kt[256];
        spec_keep_text(&r->sp.keep, kt, sizeof kt);
        fprintf(out, "kept %lld rows (keep: %s); %lld sync points, merges %.3f s "
                "(slowest rank), final re-evaluation %.3f s, rank 0's root-only "
                "work %.3f s (%.2f%% of the run)\n",
                (long long)costs->kept, kt, (long long)w->syncs, costs->merge_s,
                costs->final_s, costs->root_s,
                st->elapsed_s > 0 ? 100.0 * costs->root_s / st->elapsed_s : 0.0);
    }
    /* a reduced sweep's winners were restored from its checkpoint; a
     * resumed keep = "all" sweep holds rows of earlier runs, which the
     * summary reads from the file (sweep_report_resumed) */
    if (!r->all || !r->o->resume)
        summary_print(out, &r->s, r->best);
}

/* Phase 5: the run's costs, the summary's winners and the counts
 * gathered, the attributes written with complete = 1, a reduced sweep's
 * checkpoints dropped, the file closed and the claim released; rank 0
 * reports. */
static void sweep_finish(sweep_run_state *r, const worker *w, const int64_t sum[5])
{
    const sweep_opts *o = r->o;
    sweep_costs costs;
    sweep_costs_report(r->comm, &r->fo, w, r->all ? r->s.total : w->kept, r->t_count,
                       &costs);
    reduce_free(&r->red);
    winners_merge(r->comm, r->best, winners_slots(&r->s));
    double tw[2] = {w->t_eval, w->t_write}, twmax[2];
    CHECK_MPI(MPI_Reduce(tw, twmax, 2, MPI_DOUBLE, MPI_MAX, 0, r->comm));
    double t_end = MPI_Wtime();
    double times[2] = {t_end - r->t_start, t_end - r->t_eval};
    CHECK_MPI(MPI_Bcast(times, 2, MPI_DOUBLE, 0, r->comm));
    r->st.evaluated_run = sum[0];
    r->st.ok = sum[1];
    r->st.infeasible = sum[2];
    r->st.invalid_rows = sum[3];
    r->st.elapsed_s = times[0];
    r->st.evals_per_s = times[0] > 0 ? (double)sum[0] / times[0] : 0;
    r->st.complete = 1;
    char e_text[32] = "";
    if (r->rank == 0)
        sweep_time_text(e_text, sizeof e_text);
    CHECK_MPI(MPI_Bcast(e_text, sizeof e_text, MPI_CHAR, 0, r->comm));
    r->meta.end_time = e_text;
    r->meta.evaluated = r->already + sum[0];
    r->meta.elapsed_s = r->st.elapsed_s;
    r->meta.evals_per_s = r->st.evals_per_s;
    r->meta.complete = 1;
    if (o->kill_finish == 1)
        raise(SIGKILL);
    output_set_meta(&r->fo, &r->meta);
    if (o->kill_finish == 2)
        raise(SIGKILL);
    if (!r->all)
        kept_drop(&r->fo); /* the checkpoints, once the file says complete */
    output_close(&r->fo);
    claim_release(&r->cl);
    if (r->rank == 0 && !o->quiet) {
        sweep_progress_line(&r->tick, sum[0], true);
        sweep_report(r, w, sum, twmax, &costs);
    }
}

/* A resumed file that was complete already: a reduced sweep's leftover
 * checkpoints dropped (killed between the complete mark and their
 * removal), the file closed and the claim released. */
static void sweep_already_complete(sweep_run_state *r)
{
    if (!r->all)
        kept_drop(&r->fo);
    output_close(&r->fo);
    claim_release(&r->cl);
    r->st.complete = 1;
    if (r->rank == 0 && !r->o->quiet)
        fprintf(r->err, "madsweep: %s is already complete (%lld points)\n",
                r->o->out_path, (long long)r->st.valid);
}

/* The summary of a resumed file (rank 0): its rows scanned, for a
 * keep = "all" sweep holds rows of earlier runs. */
static void sweep_report_resumed(const sweep_run_state *r)
{
    winners_best *b = malloc((size_t)winners_slots(&r->s) * sizeof *b);
    if (b) {
        winners_clear(b, winners_slots(&r->s));
        int sc = summary_scan(r->o->out_path, &r->s, b, r->err);
        if (sc == 0)
            summary_print(r->out, &r->s, b);
        else if (sc == 1)
            fprintf(r->out, "(the summary of a reduced sweep is printed by the run "
                    "that completes it; `madsweep best %s` ranks its kept "
                    "rows)\n", r->o->out_path);
    }
    free(b);
}

int sweep_run(MPI_Comm comm, const sweep_opts *o, sweep_stats *stats,
              FILE *out, FILE *err)
{
    sweep_run_state *r = calloc(1, sizeof *r);
    if (!r)
        check_die("out of memory", __FILE__, __LINE__);
    r->comm = comm;
    r->o = o;
    r->out = out;
    r->err = err;
    r->cl.fd = -1;
    CHECK_MPI(MPI_Comm_rank(comm, &r->rank));
    CHECK_MPI(MPI_Comm_size(comm, &r->nranks));
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

    /* phase 1: the spec, on every rank, and its space */
    int rc = sweep_load(comm, r->rank, o, &r->sp, err);
    if (rc) {
        free(r);
        return rc;
    }
    load_err le;
    if (space_init(&r->s, &r->sp, le.text, sizeof le.text) != 0) {
        if (r->rank == 0)
            fprintf(err, "madsweep: %s: %s\n", o->spec_path, le.text);
        spec_free(&r->sp);
        free(r);
        return 2;
    }
    r->t_start = MPI_Wtime();
    r->all = r->sp.keep.mode == SPEC_KEEP_ALL;

    bool empty = true;
    rc = sweep_claim(comm, r->rank, o, &r->sp, &r->cl, &empty, err);
    if (rc)
        goto out;
    if ((rc = sweep_open_file(r, empty)) != 0 || (rc = sweep_count(r)) != 0)
        goto close;
    rc = sweep_lay_out(r);
    if (rc == SWEEP_COMPLETE) {
        rc = 0;
        sweep_already_complete(r);
        if (r->rank == 0 && !o->quiet && o->resume)
            sweep_report_resumed(r);
        goto out;
    }
    if (rc)
        goto close;
    worker w;
    int64_t sum[5];
    if ((rc = sweep_evaluate(r, &w, sum)) != 0)
        goto close;
    sweep_finish(r, &w, sum);
    if (r->all && o->resume && r->rank == 0 && !o->quiet)
        sweep_report_resumed(r);
    goto out;
close:
    output_close(&r->fo);
    claim_release(&r->cl);
out:
    if (stats)
        *stats = r->st;
    free(r->best);
    free(r->key_units);
    chunks_free(&r->ch);
    free(r->done);
    space_free(&r->s);
    spec_free(&r->sp);
    free(r);
    return rc;
}
