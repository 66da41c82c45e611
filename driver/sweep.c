/*
 * sweep.c - setup, the file, the count pass, gathering and reporting of a sweep.
 *
 * See sweep.h for the phases. Every branch that returns early is taken
 * by all ranks together (decided by a broadcast or an Allreduce), so no
 * rank is ever left in a collective call.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sweep.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../worker/check.h"
#include "../worker/chunks.h"
#include "../worker/claim.h"
#include "../worker/count.h"
#include "../worker/kept.h"
#include "../worker/output.h"
#include "../worker/sha256.h"
#include "../worker/space.h"
#include "../worker/verify.h"
#include "../worker/worker.h"
#include "job.h"
#include "spec.h"
#include "summary.h"

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

/* A progress line on stderr; `final` ends a terminal's \r line. Off a
 * terminal the final line is left out: the summary on stdout says the
 * same, and mpirun forwards the two streams separately, so a late stderr
 * line would land inside the summary's tables in a `2>&1` log. */
static void sweep_report_progress(sweep_tick *t, int64_t done, bool final)
{
    if (final && !t->tty)
        return;
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

/* Phase 1: spec on rank 0 first, then on the others; 0 or exit code. */
static int sweep_load(MPI_Comm comm, int rank, const sweep_opts *o, spec *sp,
                      FILE *err)
{
    const char *dir = load_configs_dir(o->configs_dir);
    load_err le;
    int bad = 0;
    if (rank == 0) {
        bad = spec_load_stacks(o->spec_path, dir, o->stacks_path, sp, &le) != 0;
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
        bad = spec_load_stacks(o->spec_path, dir, o->stacks_path, sp, &le) != 0;
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
                            int64_t *first, int64_t *rows_done, summary_best *best,
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
static int sweep_agree(MPI_Comm comm, int bad)
{
    int any = 0;
    CHECK_MPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
    return any;
}

/* Progress of the count pass on rank 0 (its share of the blocks). */
typedef struct sweep_count_tick {
    FILE *err;
    bool tty, quiet, kill, stop;
    double t0, last, every;
} sweep_count_tick;

static void sweep_on_count(int64_t done, int64_t mine, void *arg)
{
    sweep_count_tick *t = arg;
    if (t->kill)
        raise(SIGKILL); /* test hook: the file exists, the layout does not */
    if (t->stop) {
        t->stop = false;
        raise(SIGTERM); /* test hook: a stop while counting */
    }
    double now = MPI_Wtime();
    if (t->quiet || (now - t->last < t->every && done < mine))
        return;
    if (done == mine && now - t->t0 < t->every)
        return; /* short passes print nothing */
    fprintf(t->err, "%ssweep: counting the valid points: %lld/%lld blocks "
            "(%.1f%%), %.1f s%s", t->tty ? "\r" : "", (long long)done,
            (long long)mine, mine ? 100.0 * (double)done / (double)mine : 100.0,
            now - t->t0, t->tty && done < mine ? "   " : "\n");
    fflush(t->err);
    t->last = now;
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

/* The checkpoint tables of a reduced sweep's file (the slot keep_slot
 * names), checked against their digests on rank 0; 0, or -1 with msg. */
static int sweep_verify_keep(output *fo, int rank, char *msg, size_t size)
{
    int64_t slot = -1;
    if (output_get_i64(fo, "keep_slot", &slot) != 0)
        return 0; /* no checkpoint yet */
    if (slot != 0 && slot != 1) {
        snprintf(msg, size, "its attribute keep_slot is %lld (damaged)", (long long)slot);
        return -1;
    }
    static const char *const tabs[3] = {"state", "groups", "summary"};
    for (int i = 0; i < 3; i++) {
        char name[32];
        int64_t n;
        kept_name(name, sizeof name, slot, tabs[i]);
        if (verify_table(fo->file, name, rank == 0, &n, msg, size) != 0)
            return -1;
    }
    return 0;
}

/* --resume (also of a complete file): every rank checks its share of the
 * chunks already written (keep = "all"; reduced sweeps: rank 0 checks
 * the checkpoint tables and, keep = { feasible = true; }, streams the
 * rows the checkpoint committed; a complete reduced file: /groups and
 * all its rows), after rank 0 checked the tables (verify.h); the first
 * failure (lowest chunk) is reported by rank 0. Returns 0, or 1 when
 * the file is damaged. */
static int sweep_verify(MPI_Comm comm, int rank, int nranks, output *fo,
                        const space *s, const chunks *ch, const uint8_t *done,
                        spec_keep_mode mode, int64_t complete, FILE *err)
{
    bool all = mode == SPEC_KEEP_ALL;
    char msg[VERIFY_MSG] = "";
    int64_t bad = INT64_MAX; /* chunk of the failure; -1: the file as a whole */
    for (int64_t c = 0; c < ch->n && complete && bad == INT64_MAX; c++)
        if (!done[c]) {
            snprintf(msg, sizeof msg, "it is marked complete but /progress "
                     "says chunk %lld was never written", (long long)c);
            bad = -1;
        }
    verify_shape vs;
    memset(&vs, 0, sizeof vs);
    uint64_t *dg = malloc(((size_t)ch->n + 1) * sizeof *dg);
    if (!dg)
        check_die("out of memory", __FILE__, __LINE__);
    if (bad == INT64_MAX &&
        (verify_shape_read(fo->file, rank == 0, &vs, msg, sizeof msg) != 0 ||
         verify_read_progress(fo->file, ch->n, NULL, dg, msg, sizeof msg) != 0))
        bad = -1;
    for (int a = 0; a < SPACE_NAXES && bad == INT64_MAX; a++)
        if (vs.radix[a] != s->radix[a]) {
            snprintf(msg, sizeof msg, "/axes/%s has %lld rows, the spec %lld",
                     space_axis_names[a], (long long)vs.radix[a],
                     (long long)s->radix[a]);
            bad = -1;
        }
    if (bad == INT64_MAX && !all && !complete &&
        sweep_verify_keep(fo, rank, msg, sizeof msg) != 0)
        bad = -1;
    int64_t kept = -1, ng = 0;
    if (bad == INT64_MAX && !all && complete &&
        (output_get_i64(fo, "rows_kept", &kept) != 0 || kept != vs.rows ||
         verify_table(fo->file, "groups", rank == 0, &ng, msg, sizeof msg) != 0)) {
        if (kept != vs.rows)
            snprintf(msg, sizeof msg, "/results has %lld rows but rows_kept says "
                     "%lld: truncated or damaged", (long long)vs.rows, (long long)kept);
        bad = -1;
    }
    /* the rows only when the file as a whole passed on every rank (rank 0
     * alone reads the tables' data), so that every rank opens the same */
    verify_rows v;
    bool rows_ok = !sweep_agree(comm, bad != INT64_MAX);
    if (rows_ok && verify_rows_open(&v, fo->file, &vs, msg, sizeof msg) != 0) {
        bad = -1;
        rows_ok = false;
    }
    if (rows_ok) {
        if (all) {
            for (int64_t c = rank; c < ch->n && bad == INT64_MAX; c += nranks)
                if (done[c] && verify_chunk(&v, c, dg[c], msg, sizeof msg) != 0)
                    bad = c;
        } else if (rank == 0) {
            int64_t rows = vs.rows, nch = ch->n;
            /* ranked sweeps write rows and digests only when they finish */
            if (!complete && (mode != SPEC_KEEP_FEASIBLE ||
                              kept_committed(fo, &nch, &rows) != 0))
                rows = nch = 0; /* nothing committed */
            if (rows < 0 || rows > vs.rows || nch < 0 || nch > ch->n) {
                snprintf(msg, sizeof msg, "its checkpoint covers rows %lld and "
                         "chunks %lld, more than it holds (damaged)", (long long)rows,
                         (long long)nch);
                bad = -1;
            } else if (verify_stream(&v, rows, nch, dg, msg, sizeof msg) != 0) {
                bad = -1;
            }
        }
        verify_rows_close(&v);
    }
    verify_shape_free(&vs);
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
                "without --resume to start it over\n", fo->path, msg);
    return 1;
}

static const char *sweep_signal_name(int sig)
{
    return sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1"
           : sig == SIGINT ? "SIGINT" : "a signal";
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
    if (space_init(&s, &sp, le.text, sizeof le.text) != 0) {
        if (rank == 0)
            fprintf(err, "madsweep: %s: %s\n", o->spec_path, le.text);
        spec_free(&sp);
        return 2;
    }
    double t_start = MPI_Wtime();
    chunks ch = {0};
    uint8_t *done = NULL;
    int64_t by_code[SPACE_NCODES] = {0};
    int bad = 0;
    summary_best *best = NULL;
    claim cl = {.fd = -1};
    output fo;
    memset(&fo, 0, sizeof fo);
    bool all = sp.keep.mode == SPEC_KEEP_ALL;

    /* phase 2: the output claimed, then the file exists before anything
     * long runs (complete = 0, points_valid -1 until the count pass) */
    bool empty = true;
    rc = sweep_claim(comm, rank, o, &sp, &cl, &empty, err);
    if (rc)
        goto out;
    char t_text[32] = "";
    if (rank == 0)
        sweep_time_text(t_text, sizeof t_text);
    CHECK_MPI(MPI_Bcast(t_text, sizeof t_text, MPI_CHAR, 0, comm));
    char abspath[PATH_MAX];
    provenance prov;
    sweep_provenance(comm, rank, o, &sp, abspath, sizeof abspath, &prov);
    output_meta meta = {
        .prov = &prov,
        .spec_text = sp.text, .spec_path = o->spec_path,
        .start_time = t_text, .end_time = "",
        .fidelity = sp.ops->name, .cost_version = sp.ops->version,
        .ranks = nranks, .total = s.candidates, .valid = -1,
        .invalid = -1, .evaluated = 0, .chunk = sp.chunk,
        .nchunks = 0, .elapsed_s = 0, .evals_per_s = 0, .complete = 0};
    output_rows rows;
    output_rows_init(&rows, sp.fidelity);
    char msg[1200];
    int64_t complete = 0;
    bool resume = o->resume && !empty;
    if (o->resume && empty && rank == 0 && !o->quiet)
        fprintf(err, "madsweep: %s is empty or was never laid out: starting the "
                "sweep\n", o->out_path);
    if (resume)
        bad = output_open(&fo, comm, o->out_path, &meta, &complete, msg, sizeof msg);
    else
        bad = output_create(&fo, comm, o->out_path, &s, &meta, msg, sizeof msg);
    if (bad) {
        if (rank == 0)
            fprintf(err, "madsweep: %s\n", msg);
        rc = resume ? 2 : 1;
        goto close; /* releases the claim; fo is empty */
    }

    /* phase 3: count pass (quiet for a complete file: it is cheap, and
     * the file is verified against it before it is called complete) */
    sweep_count_tick ct = {.err = err, .tty = isatty(fileno(err)) != 0,
                           .quiet = o->quiet || rank != 0 || complete,
                           .kill = o->kill_in_count, .stop = o->stop_in_count,
                           .t0 = MPI_Wtime(), .last = MPI_Wtime(),
                           .every = o->progress_s > 0 ? o->progress_s : 5.0};
    double t_count = MPI_Wtime();
    int counted = count_run(comm, &s, by_code, sweep_on_count, &ct,
                            complete ? NULL : job_stop_signal);
    t_count = MPI_Wtime() - t_count;
    if (counted == 1) {
        rc = sweep_stopped(comm, rank, o, &fo, &meta, -1, !all, err);
        goto close;
    }
    if (counted != 0 ||
        chunks_plan(&ch, &s, sp.chunk, SPEC_MAX_CHUNKS, SPEC_CHUNK_MAX) != 0) {
        if (rank == 0)
            fprintf(err, "madsweep: out of memory (or more than 2^63 points) "
                    "counting the space\n");
        rc = 1;
        goto close;
    }
    done = calloc((size_t)ch.n + 1, 1);
    bad = !done;
    if (sweep_agree(comm, bad)) {
        if (rank == 0)
            fprintf(err, "madsweep: out of memory for %lld chunks\n", (long long)ch.n);
        rc = 1;
        goto close;
    }
    st.total = s.candidates;
    st.valid = s.total;
    st.invalid = s.candidates - s.total;
    meta.valid = st.valid;
    meta.invalid = st.invalid;
    meta.chunk = ch.ids;
    meta.nchunks = ch.n;

    /* phase 3, continued: the datasets, or (resuming) the file checked
     * against this space and verified (verify.h): a damaged file is
     * refused */
    int laid = 1;
    if (resume) {
        laid = output_reopen_layout(&fo, &rows, &meta, ch.lo, done, msg, sizeof msg);
        if (laid < 0 || (laid == 1 && complete)) {
            if (rank == 0)
                fprintf(err, "madsweep: %s: %s\n", o->out_path, laid < 0 ? msg :
                        "cannot resume: it is marked complete but has no datasets "
                        "(damaged); run without --resume to start it over");
            rc = 2;
            goto close;
        }
        if (laid == 0 && sweep_verify(comm, rank, nranks, &fo, &s, &ch, done,
                                      sp.keep.mode, complete, err) != 0) {
            rc = 1;
            goto close;
        }
    }
    if (complete) {
        if (!all) /* killed between the complete mark and the removal */
            kept_drop(&fo);
        output_close(&fo);
        claim_release(&cl);
        st.complete = 1;
        if (rank == 0 && !o->quiet)
            fprintf(err, "madsweep: %s is already complete (%lld points)\n",
                    o->out_path, (long long)st.valid);
        goto report;
    }
    if (laid) {
        output_layout(&fo, &rows, all ? s.total : 0, !all, by_code, ch.lo, &meta);
        char kt[256];
        spec_keep_text(&sp.keep, kt, sizeof kt);
        output_set_str(&fo, "keep", kt);
    }
    best = malloc((size_t)(summary_slots(&s) > 0 ? summary_slots(&s) : 1) * sizeof *best);
    if (sweep_agree(comm, !best)) {
        if (rank == 0)
            fprintf(err, "madsweep: out of memory for the summary\n");
        rc = 1;
        goto close;
    }
    summary_clear(best, summary_slots(&s));
    reduce red;
    memset(&red, 0, sizeof red);
    int64_t first = 0, rows_done = 0;
    if (!all && (rc = sweep_keep_setup(comm, rank, o, &fo, &s, &sp.keep, &red, &first,
                                       &rows_done, best, err)) != 0)
        goto close;
    if (laid) { /* laid out (and, reduced, its first checkpoint): resumable */
        output_flush(&fo);
        int born = rank == 0 ? claim_born(&cl) : 0;
        if (sweep_agree(comm, born != 0)) {
            if (rank == 0)
                fprintf(err, "madsweep: cannot write to %s: %s; run again once the "
                        "cause is gone\n", o->out_path, strerror(errno));
            rc = 1;
            goto close;
        }
    }
    int64_t already = 0, chunks_before = 0;
    for (int64_t c = 0; c < ch.n; c++)
        if (all ? done[c] != 0 : c < first) {
            already += ch.lo[c + 1] - ch.lo[c];
            chunks_before++;
        }

    /* phase 4: evaluate and write */
    sweep_tick tick = {.err = err, .tty = isatty(fileno(err)) != 0,
                       .every = o->progress_s > 0 ? o->progress_s : 0,
                       .valid = st.valid, .todo = st.valid - already};
    if (tick.every <= 0)
        tick.every = tick.tty ? 0.25 : 5.0;
    CHECK_MPI(MPI_Barrier(comm));
    double t_eval = MPI_Wtime();
    tick.t0 = tick.last = t_eval;
    worker w = {.comm = comm, .s = &s, .rows = &rows, .out = &fo,
                .ch = &ch, .done = done, .kill_after = o->kill_after,
                .stop_after = o->stop_after, .delay_ms = o->delay_ms,
                .stop = job_stop_signal,
                .tick = o->quiet ? NULL : sweep_on_tick, .tick_arg = &tick,
                .red = all ? NULL : &red, .first_chunk = first, .rows_done = rows_done,
                .best = best,
                .checkpoint_s = o->checkpoint_s > 0 ? o->checkpoint_s
                                : o->checkpoint_s < 0 ? 0 : SWEEP_CHECKPOINT_S};
    if (worker_run(&w) != 0) {
        if (rank == 0)
            fprintf(err, "madsweep: out of memory for a chunk of rows\n");
        reduce_free(&red);
        rc = 1;
        goto close;
    }
    int64_t mine[5] = {w.evaluated, w.ok, w.infeasible, w.invalid, w.chunks_done}, sum[5];
    CHECK_MPI(MPI_Allreduce(mine, sum, 5, MPI_INT64_T, MPI_SUM, comm));
    /* stopped: keep = "all" when a chunk is left undone (a rank that was
     * asked to stop left early); reduced sweeps agreed at their sync */
    if (all ? chunks_before + sum[4] < ch.n : w.stopped != 0) {
        reduce_free(&red);
        int64_t written = already + sum[0], kc = 0, kr = 0;
        if (!all) /* the ids of the checkpointed chunks */
            written = kept_committed(&fo, &kc, &kr) == 0 ? ch.lo[kc < ch.n ? kc : ch.n]
                                                        : 0;
        rc = sweep_stopped(comm, rank, o, &fo, &meta, written, !all, err);
        st.evaluated_run = sum[0];
        goto close;
    }
    sweep_costs costs;
    sweep_costs_report(comm, &fo, &w, all ? s.total : w.kept, t_count, &costs);
    reduce_free(&red);

    /* phase 5: gather, attributes, report */
    summary_merge(comm, best, summary_slots(&s));
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
    if (o->kill_finish == 1)
        raise(SIGKILL);
    output_set_meta(&fo, &meta);
    if (o->kill_finish == 2)
        raise(SIGKILL);
    if (!all)
        kept_drop(&fo); /* the checkpoints, once the file says complete */
    output_close(&fo);
    claim_release(&cl);
    if (rank == 0 && !o->quiet) {
        sweep_report_progress(&tick, sum[0], true);
        fprintf(out, "sweep %s: %lld combinations of the axes, %lld valid "
                "points (ids), %lld skipped by rule; %lld evaluated by this run (%lld ok, "
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
                "writing rows; count pass %.2f s; the rest is setup and waiting); "
                "peak memory of a rank %.1f MB\n",
                o->out_path, twmax[0], twmax[1], costs.count_s,
                (double)costs.peak_rss / 1e6);
        if (!all) {
            char kt[256];
            spec_keep_text(&sp.keep, kt, sizeof kt);
            fprintf(out, "kept %lld rows (keep: %s); %lld sync points, merges %.3f s "
                    "(slowest rank), final re-evaluation %.3f s, rank 0's root-only "
                    "work %.3f s (%.2f%% of the run)\n",
                    (long long)costs.kept, kt, (long long)w.syncs, costs.merge_s,
                    costs.final_s, costs.root_s,
                    st.elapsed_s > 0 ? 100.0 * costs.root_s / st.elapsed_s : 0.0);
        }
        /* a reduced sweep's winners were restored from its checkpoint;
         * a resumed keep = "all" sweep holds rows of earlier runs, which
         * the summary reads from the file (below) */
        if (!all || !o->resume)
            summary_print(out, &s, best);
    }
    if (!all || !o->resume)
        goto out;
report:
    if (rank == 0 && !o->quiet && o->resume) {
        summary_best *b = malloc((size_t)summary_slots(&s) * sizeof *b);
        if (b) {
            summary_clear(b, summary_slots(&s));
            int sc = summary_scan(o->out_path, &s, b, err);
            if (sc == 0)
                summary_print(out, &s, b);
            else if (sc == 1)
                fprintf(out, "(the summary of a reduced sweep is printed by the run "
                        "that completes it; `madsweep best %s` ranks its kept "
                        "rows)\n", o->out_path);
        }
        free(b);
    }
    goto out;
close:
    output_close(&fo);
    claim_release(&cl);
out:
    if (stats)
        *stats = st;
    free(best);
    chunks_free(&ch);
    free(done);
    space_free(&s);
    spec_free(&sp);
    return rc;
}
