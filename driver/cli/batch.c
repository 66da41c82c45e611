/*
 * batch.c - `madsweep eval --batch`: a stream of point records evaluated
 * in one process over catalogues read once (batch.h).
 *
 * Invariants: every record gives exactly one output line, flushed before
 * the next record is read (a script may wait for it); a point record is
 * evaluated exactly as `madsweep eval POINT --json` would evaluate the
 * same text over the same catalogues (%set values included); the
 * catalogue config only ever holds its own lists between records (a
 * point's settings are copied in for its load and removed after).
 */
#define _GNU_SOURCE /* memfd_create */
#include "batch.h"

#include <errno.h>
#include <sys/mman.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../cost/eval.h"
#include "../load/load.h"
#include "../load/load_fit.h"
#include "../load/overlay.h"
#include "../query/report.h"

/* The longest record accepted (a point file is a few kB). */
#define BATCH_RECORD_MAX (1u << 20)

typedef struct batch_ctx {
    const char *configs_dir;
    const char *stacks_path;
    config_t cat;       /* hardware.cfg + stacks.cfg (+ fragment) */
    bool cat_open;
    char tmpdir[64];    /* private directory of the record file ("": a memfd) */
    char tmpfile[96];   /* a point record's text, to load as a file */
    int memfd;          /* the record file in memory (-1: tmpdir's file) */
    engine e;
    FILE *out;
    char *json;         /* one report_json object (open_memstream) */
    size_t json_len;
    long record;        /* records read so far */
} batch_ctx;

/* Prints {"id": ..., "error": text} with the record file's path in text
 * replaced by the record's name. */
static void batch_error(batch_ctx *b, const char *id, const char *text)
{
    char where[160];
    if (id && *id)
        snprintf(where, sizeof where, "point %s", id);
    else
        snprintf(where, sizeof where, "record %ld", b->record);
    size_t n = strlen(b->tmpfile);
    bool tmp = n && strncmp(text, b->tmpfile, n) == 0;
    fputs("{\"id\":", b->out);
    report_json_string(b->out, id ? id : "");
    fputs(",\"error\":", b->out);
    if (tmp) {
        char msg[sizeof((load_err *)0)->text + 200];
        snprintf(msg, sizeof msg, "%s%s", where, text + n);
        report_json_string(b->out, msg);
    } else {
        report_json_string(b->out, text);
    }
    fputs("}\n", b->out);
}

/* Loads point file `path` over the catalogue (or on its own when it has
 * lists of its own, or no catalogue is open). */
static int batch_load(batch_ctx *b, const char *path, point_t *p, load_err *err)
{
    config_t pc;
    if (load_open(&pc, path, b->configs_dir, err) != 0)
        return -1;
    config_setting_t *proot = config_root_setting(&pc);
    bool own = !b->cat_open || config_setting_get_member(proot, "stacks") ||
               config_setting_get_member(proot, "hardware");
    int rc = -1;
    if (!own) {
        config_setting_t *croot = config_root_setting(&b->cat);
        int n = config_setting_length(proot), copied = 0;
        rc = 0;
        for (; copied < n && rc == 0; copied++)
            rc = overlay_copy(croot, config_setting_get_elem(proot, (unsigned)copied));
        if (rc == 0)
            rc = load_point_root(croot, b->configs_dir, p, err);
        else
            load_fail(err, proot, "out of memory laying the point over the catalogue");
        for (int i = 0; i < copied; i++) {
            const char *name = config_setting_name(config_setting_get_elem(proot, (unsigned)i));
            config_setting_remove(croot, name);
        }
        if (rc != 0) {
            /* the message again where the point's settings keep their
             * lines (the catalogue's files, without %set values: its
             * message only when it fails too) */
            load_err again;
            if ((b->stacks_path &&
                 overlay_stacks(proot, b->stacks_path, b->configs_dir, &again) != 0) ||
                load_point_root(proot, b->configs_dir, p, &again) != 0)
                *err = again;
            rc = -1;
        }
    } else {
        rc = b->stacks_path ? overlay_stacks(proot, b->stacks_path, b->configs_dir, err) : 0;
        if (rc == 0)
            rc = load_point_root(proot, b->configs_dir, p, err);
    }
    config_destroy(&pc);
    return rc;
}

static void batch_point(batch_ctx *b, const char *path, const char *id)
{
    point_t p;
    load_err le;
    if (batch_load(b, path, &p, &le) != 0) {
        batch_error(b, id, le.text);
        return;
    }
    result_t r;
    const char *where = NULL;
    status_code st = eval_point(&p, &b->e, &r, &where);
    if (!status_is_data(st)) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s: %s", where ? where : "point", status_text(st));
        batch_error(b, id, msg);
        return;
    }
    free(b->json); /* open_memstream allocates a new buffer each time */
    b->json = NULL;
    FILE *ms = open_memstream(&b->json, &b->json_len);
    if (!ms) {
        batch_error(b, id, "out of memory");
        return;
    }
    report_json(ms, &p, &r);
    fclose(ms);
    fputs("{\"id\":", b->out);
    report_json_string(b->out, id ? id : "");
    fputc(',', b->out);
    fputs(b->json + (b->json[0] == '{'), b->out);
    if (b->json_len == 0 || b->json[b->json_len - 1] != '\n')
        fputc('\n', b->out);
}

/* "%set LIST ENTRY KEY VALUE" lines of a control record. */
static int batch_set(batch_ctx *b, char *line, load_err *err)
{
    char *save = NULL, *w[5];
    int n = 0;
    for (char *t = strtok_r(line, " \t", &save); t && n < 5; t = strtok_r(NULL, " \t", &save))
        w[n++] = t;
    char *end = NULL;
    errno = 0;
    double v = n == 5 ? strtod(w[4], &end) : 0;
    if (n != 5 || errno || !end || end == w[4] || *end) {
        snprintf(err->text, sizeof err->text, "expected %%set LIST ENTRY KEY VALUE");
        return -1;
    }
    if (!b->cat_open) {
        snprintf(err->text, sizeof err->text, "%%set: no catalogue is open");
        return -1;
    }
    return load_fit_set(config_root_setting(&b->cat), w[1], w[2], w[3], v, b->configs_dir,
                        err);
}

/* A control record (%set lines, %reset, %file): its one output line. */
static void batch_control(batch_ctx *b, char *text)
{
    load_err le;
    int sets = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "%set ", 5) == 0) {
            if (batch_set(b, line, &le) != 0) {
                batch_error(b, NULL, le.text);
                return;
            }
            sets++;
        } else if (strcmp(line, "%reset") == 0) {
            if (b->cat_open)
                config_destroy(&b->cat);
            b->cat_open = overlay_catalogue(&b->cat, b->configs_dir, b->stacks_path, &le) == 0;
            if (!b->cat_open) {
                batch_error(b, NULL, le.text);
                return;
            }
            fputs("{\"reset\":true}\n", b->out);
            return;
        } else if (strncmp(line, "%file ", 6) == 0) {
            batch_point(b, line + 6, line + 6);
            return;
        } else {
            batch_error(b, NULL, "a control record holds %set lines, or one %reset or "
                                 "%file line");
            return;
        }
    }
    fprintf(b->out, "{\"set\":%d}\n", sets);
}

/* One record's text (without its "%%" line). */
static void batch_record(batch_ctx *b, char *text, size_t len)
{
    b->record++;
    char id[128] = "";
    char *body = text;
    if (strncmp(body, "%id ", 4) == 0) {
        char *nl = strchr(body, '\n');
        size_t n = nl ? (size_t)(nl - body - 4) : strlen(body + 4);
        snprintf(id, sizeof id, "%.*s", (int)n, body + 4);
        body = nl ? nl + 1 : body + len;
    }
    if (body[0] == '%') {
        batch_control(b, body);
        return;
    }
    size_t blen = strlen(body);
    bool ok;
    if (b->memfd >= 0) {
        ok = ftruncate(b->memfd, 0) == 0 && pwrite(b->memfd, body, blen, 0) == (ssize_t)blen;
    } else {
        FILE *f = fopen(b->tmpfile, "w");
        ok = f && fwrite(body, 1, blen, f) == blen;
        ok = (f && fclose(f) == 0) && ok;
    }
    if (!ok) {
        batch_error(b, id, "cannot write the record's temporary file");
        return;
    }
    batch_point(b, b->tmpfile, id);
}

static int batch_loop(batch_ctx *b, FILE *in)
{
    char *line = NULL, *rec = NULL;
    size_t cap = 0, rlen = 0, rcap = 0;
    ssize_t n;
    bool too_long = false;
    int rc = 0;
    while ((n = getline(&line, &cap, in)) >= 0) {
        if (strcmp(line, "%%\n") == 0 || strcmp(line, "%%") == 0) {
            if (too_long) {
                b->record++;
                batch_error(b, NULL, "record longer than 1 MiB");
            } else {
                batch_record(b, rec ? rec : (char[]){""}, rlen);
            }
            rlen = 0;
            too_long = false;
            if (rec)
                rec[0] = '\0';
            if (fflush(b->out) != 0) {
                rc = 1;
                break;
            }
            continue;
        }
        if (too_long || rlen + (size_t)n + 1 > BATCH_RECORD_MAX) {
            too_long = true;
            continue;
        }
        if (rlen + (size_t)n + 1 > rcap) {
            size_t ncap = rcap ? 2 * rcap : 4096;
            while (ncap < rlen + (size_t)n + 1)
                ncap *= 2;
            char *grown = realloc(rec, ncap);
            if (!grown) {
                rc = 1;
                break;
            }
            rec = grown;
            rcap = ncap;
        }
        memcpy(rec + rlen, line, (size_t)n + 1);
        rlen += (size_t)n;
    }
    /* text after the last "%%": a record cut short (a writer that died,
     * a missing last line) gets its error line, not silence */
    if (rc == 0 && (too_long || (rec && rec[strspn(rec, " \t\r\n")]))) {
        char id[128] = "";
        if (rec && strncmp(rec, "%id ", 4) == 0)
            snprintf(id, sizeof id, "%.*s", (int)strcspn(rec + 4, "\n"), rec + 4);
        b->record++;
        batch_error(b, id, "the input ends inside this record (no line %% after it): not "
                           "evaluated");
        if (fflush(b->out) != 0)
            rc = 1;
    }
    free(line);
    free(rec);
    return rc;
}

int batch_run(const char *in, const char *configs_dir, const char *stacks_path, FILE *out,
              FILE *err)
{
    batch_ctx b;
    memset(&b, 0, sizeof b);
    b.configs_dir = configs_dir;
    b.stacks_path = stacks_path;
    b.out = out;
    load_err le;
    if (overlay_catalogue(&b.cat, configs_dir, stacks_path, &le) != 0) {
        fprintf(err, "madsweep eval --batch: %s\n", le.text);
        return 2;
    }
    b.cat_open = true;
    /* a record is loaded as a file (lint and libconfig read paths): one in
     * memory where the system has them (a file rewritten on a disk file
     * system may be flushed at every close), else in a private directory */
    b.memfd = memfd_create("madsweep-batch-point", 0);
    if (b.memfd >= 0) {
        snprintf(b.tmpfile, sizeof b.tmpfile, "/proc/self/fd/%d", b.memfd);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(b.tmpdir, sizeof b.tmpdir, "%s/madsweep-batch-XXXXXX",
                 tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
        if (!mkdtemp(b.tmpdir)) {
            fprintf(err, "madsweep eval --batch: cannot make a temporary directory: %s\n",
                    strerror(errno));
            config_destroy(&b.cat);
            return 1;
        }
        snprintf(b.tmpfile, sizeof b.tmpfile, "%s/point.cfg", b.tmpdir);
    }
    FILE *f = in && strcmp(in, "-") != 0 ? fopen(in, "r") : stdin;
    int rc = 0;
    if (!f) {
        fprintf(err, "madsweep eval --batch: cannot read %s: %s\n", in, strerror(errno));
        rc = 2;
    } else {
        engine_init(&b.e, false);
        rc = batch_loop(&b, f);
        engine_free(&b.e);
        if (f != stdin)
            fclose(f);
    }
    if (b.memfd >= 0) {
        close(b.memfd);
    } else {
        unlink(b.tmpfile);
        rmdir(b.tmpdir);
    }
    free(b.json);
    if (b.cat_open)
        config_destroy(&b.cat);
    return rc;
}
