/*
 * trace_file.c - `eval --trace FILE` written whole or not at all (see
 * trace_file.h): a temporary file beside FILE, renamed over it once
 * complete.
 */
#define _POSIX_C_SOURCE 200809L
#include "trace_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../cost/status.h"
#include "trace_json.h"

/* The trace itself on `out`: the whole iteration of a detailed
 * transformer point, else the engine's two streams. Returns 0, 1 (a
 * write failed) or 2 (the point has no such trace: *why). */
static int trace_file_body(FILE *out, const char *input, const point_t *p,
                           const result_t *r, const engine *e, int64_t *dropped,
                           const char **why)
{
    bool whole = p->fidelity == EVAL_DETAILED && p->model.kind == MODEL_LLM;
    if (whole && r->status != STATUS_OK) {
        *why = status_text((status_code)r->status);
        return 2;
    }
    status_code st = STATUS_OK;
    if (whole ? trace_json_detailed(out, p, r->iteration_time_s, input,
                                    TRACE_JSON_MAX_EVENTS, dropped, &st) != 0
              : trace_json_engine(out, e, input) != 0) {
        if (st != STATUS_OK) {
            *why = status_text(st);
            return 2;
        }
        return 1;
    }
    return fflush(out) != 0 || ferror(out) ? 1 : 0;
}

static int trace_file_fail(char *msg, size_t size, const char *path, int errnum,
                           bool in_place)
{
    snprintf(msg, size, "cannot write trace %s: %s%s", path, strerror(errnum),
             in_place ? "" : " (no file written: a trace is never left half-written)");
    return 1;
}

int trace_file_check(const char *path, const char *input, char *msg, size_t size)
{
    struct stat sp, si;
    if (stat(path, &sp) == 0 && stat(input, &si) == 0 && sp.st_dev == si.st_dev &&
        sp.st_ino == si.st_ino) {
        snprintf(msg, size, "--trace %s: that is the point file; name another file", path);
        return 2;
    }
    return 0;
}

int trace_file_write(const char *path, const char *input, const point_t *p,
                     const result_t *r, const engine *e, int64_t *dropped, char *msg,
                     size_t size)
{
    *dropped = 0;
    if (trace_file_check(path, input, msg, size) != 0)
        return 2;
    struct stat sp;
    const char *why = NULL;
    if (stat(path, &sp) == 0 && !S_ISREG(sp.st_mode)) { /* a pipe, a device: in place */
        FILE *f = fopen(path, "w");
        if (!f)
            return trace_file_fail(msg, size, path, errno, true);
        int rc = trace_file_body(f, input, p, r, e, dropped, &why);
        int errnum = errno;
        if (fclose(f) != 0 && rc == 0) {
            rc = 1;
            errnum = errno;
        }
        if (rc == 2)
            snprintf(msg, size, "no trace of %s: %s", input, why);
        return rc == 1 ? trace_file_fail(msg, size, path, errnum, true) : rc != 0;
    }
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp)
        return trace_file_fail(msg, size, path, ENOMEM, false);
    snprintf(tmp, n, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int errnum = errno;
        free(tmp);
        return trace_file_fail(msg, size, path, errnum, false);
    }
    FILE *f = fdopen(fd, "w");
    int rc = f ? trace_file_body(f, input, p, r, e, dropped, &why) : 1;
    int errnum = errno;
    if (rc == 0 && fsync(fileno(f)) != 0) {
        rc = 1;
        errnum = errno;
    }
    if (f ? fclose(f) != 0 : close(fd) != 0) {
        if (rc == 0) {
            rc = 1;
            errnum = errno;
        }
    }
    if (rc == 0) {
        mode_t um = umask(0); /* mkstemp's 0600 -> what fopen would give */
        umask(um);
        (void)chmod(tmp, 0666 & ~um);
        if (rename(tmp, path) != 0) {
            rc = 1;
            errnum = errno;
        }
    }
    if (rc != 0)
        unlink(tmp);
    free(tmp);
    if (rc == 2)
        snprintf(msg, size, "no trace of %s: %s", input, why);
    return rc == 1 ? trace_file_fail(msg, size, path, errnum, false) : rc != 0;
}
