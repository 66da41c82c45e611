/*
 * kernel_cmd.c - `madsweep kernel`: the kernel layer (cost/kernel/) on
 * kernels given as key=value text, one at a time or many in one process.
 *
 *   madsweep kernel [--configs DIR] [--consts FILE] KEY=VALUE...
 *   madsweep kernel [--configs DIR] [--consts FILE] --batch < LINES
 *
 * A kernel is `gpu=NAME` (hardware.cfg) with optional scale factors
 * (scale_compute, scale_mem, scale_link: an invented GPU), `kind=` gemm,
 * moe, attn or coll, and its shape keys (kernel_cmd_help lists them).
 * --batch reads one kernel per line and prints one line per line: the
 * predicted time in seconds, or "error: WHY" (a bad line never stops the
 * batch); a line `set NAME=VALUE...` changes constants for the lines
 * after it (how scripts/validate_kernels.py fits them), and a blank line
 * is echoed blank. Output is flushed at each blank line and at the end.
 * Constants come from configs/kernels.cfg (group `kernel`), each checked
 * against its range. Exit: 0, or 2 on bad usage or catalogue.
 */
#define _POSIX_C_SOURCE 200809L
#include "kernel_cmd.h"

#include <libconfig.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../cost/kernel/kernel.h"
#include "../load/kernel_cfg.h"
#include "../load/load.h"

#include "kernel_line.h"

#define KC_LINE 4096

/* Rows stored for repeated evaluation (`+`/`&` lines, `eval`): a row is
 * the sum of specs [first, first + count); a row that failed to parse has
 * count 0 and its reason in why[]. Subsets list row indices. */
#define KC_SUBSETS 4096
typedef struct kc_store {
    kl_spec *spec;
    int nspec, capspec;
    int *first, *count;
    char **why;
    int nrow, caprow;
    int *sub[KC_SUBSETS];
    int nsub[KC_SUBSETS];
    unsigned char made[KC_SUBSETS]; /* `sub K` has made subset K */
} kc_store;

typedef struct kc_state {
    config_t hw_cfg;
    kl_gpus gpus;
    kern_consts consts;
    kern_backends bes;
    kc_store st;
    kern_ctx ctx0[KL_GPUS]; /* `eval`'s contexts at scale 1, rebuilt at each call */
} kc_state;

/* Why a parsed kernel is outside the layer's domain (cost/kernel/): the
 * cases its keys' own checks leave. */
static void kc_domain(const kl_spec *sp, char *why, size_t wn)
{
    if (sp->kind == 3)
        snprintf(why, wn, "algo: the collective is outside the layer's domain (nvls needs "
                          "NVLink SHARP and elements of 2 bytes or more; custom, oneshot and "
                          "twoshot are all-reduces within a node)");
    else
        snprintf(why, wn, "shape out of the layer's domain");
}

/* One kernel: its time (s) >= 0, or -1 with why set. */
static double kc_eval(kc_state *s, kl_fields *f, char *why, size_t wn)
{
    kl_spec sp;
    kern_ctx ctx;
    if (kl_parse(&s->gpus, &s->bes, f, &sp, why, wn) != 0 ||
        kl_ctx(&s->gpus, &s->consts, &sp, &ctx, why, wn) != 0)
        return -1.0;
    double t = kl_time(&ctx, &sp);
    if (t < 0)
        kc_domain(&sp, why, wn);
    return t;
}

/* `set NAME=V ...`: a constant (kernels.cfg group `kernel`) or a back
 * end's field (`BACKEND:eff`, `:mem`, `:floor_s`), each within its range. */
static int kc_set(kern_consts *k, kern_backends *bes, const kl_fields *f, char *why,
                  size_t wn)
{
    for (int i = 0; i < f->n; i++) {
        char *end = NULL;
        double v = strtod(f->val[i], &end);
        const char *colon = strchr(f->key[i], ':');
        const kern_const_info *inf = NULL;
        double *dst = NULL;
        if (colon) {
            char name[KERN_BE_NAME];
            size_t len = (size_t)(colon - f->key[i]);
            int j = kern_be_index(colon + 1);
            snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : 0), f->key[i]);
            kern_backend *be = NULL;
            for (int b = 0; b < bes->n; b++)
                if (strcmp(bes->name[b], name) == 0)
                    be = &bes->be[b];
            if (!be || j < 0) {
                snprintf(why, wn, "unknown back-end field '%s'", f->key[i]);
                return -1;
            }
            inf = kern_be_info_at(j);
            dst = kern_be_ptr(be, j);
        } else {
            int j = kern_const_index(f->key[i]);
            if (j < 0) {
                snprintf(why, wn, "unknown constant '%s'", f->key[i]);
                return -1;
            }
            inf = kern_const_info_at(j);
            dst = kern_const_ptr(k, j);
        }
        if (end == f->val[i] || *end || !isfinite(v) || v < inf->lo || v > inf->hi) {
            snprintf(why, wn, "constant %s: '%s' not in %g to %g", f->key[i], f->val[i],
                     inf->lo, inf->hi);
            return -1;
        }
        *dst = v;
    }
    return 0;
}

/* Grows an array to hold n + 1 elements of size sz: 0, or -1. */
static int kc_grow(void **p, int *cap, int n, size_t sz)
{
    if (n < *cap)
        return 0;
    int nc = *cap ? 2 * *cap : 1024;
    void *q = realloc(*p, (size_t)nc * sz);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static void kc_store_free(kc_store *st)
{
    for (int i = 0; i < st->nrow; i++)
        free(st->why[i]);
    for (int k = 0; k < KC_SUBSETS; k++)
        free(st->sub[k]);
    free(st->spec);
    free(st->first);
    free(st->count);
    free(st->why);
    memset(st, 0, sizeof *st);
}

/* `+ LINE` (a new row) or `& LINE` (one more kernel in the last row):
 * parsed and stored; prints nothing (a parse error is kept for `why`). */
static int kc_store_add(kc_state *s, char *line, int more)
{
    kc_store *st = &s->st;
    char why[1100];
    kl_fields f;
    if (!more || st->nrow == 0) {
        if (kc_grow((void **)&st->first, &st->caprow, st->nrow, sizeof(int)))
            return -1;
        int cap = st->caprow;
        if (!(st->count = realloc(st->count, (size_t)cap * sizeof(int))) ||
            !(st->why = realloc(st->why, (size_t)cap * sizeof(char *))))
            return -1;
        st->first[st->nrow] = st->nspec;
        st->count[st->nrow] = 0;
        st->why[st->nrow++] = NULL;
        if (more) { /* `&` with no row to add to */
            st->why[st->nrow - 1] = strdup("'&' before any '+' row");
            return st->why[st->nrow - 1] ? 0 : -1;
        }
    }
    int r = st->nrow - 1;
    if (st->why[r])
        return 0;
    if (kc_grow((void **)&st->spec, &st->capspec, st->nspec, sizeof(kl_spec)))
        return -1;
    if (kl_split(line, &f, why, sizeof why) != 0 ||
        kl_parse(&s->gpus, &s->bes, &f, &st->spec[st->nspec], why, sizeof why) != 0) {
        st->why[r] = strdup(why);
        st->count[r] = 0;
        return st->why[r] ? 0 : -1;
    }
    if (st->first[r] + st->count[r] != st->nspec) { /* `&` after a failed row's spec */
        st->why[r] = strdup("a row's kernels must follow it");
        return st->why[r] ? 0 : -1;
    }
    st->nspec++;
    st->count[r]++;
    return 0;
}

/* A command's index: the whole token a decimal integer from 0 to n - 1:
 * 0 with *v set, or -1. */
static int kc_index(const char *tok, int n, int *v)
{
    char *end = NULL;
    long x = tok ? strtol(tok, &end, 10) : -1;
    if (!tok || end == tok || *end || x < 0 || x >= n)
        return -1;
    *v = (int)x;
    return 0;
}

/* `sub K I...`: subset K holds rows I... (replacing what it held). */
static int kc_store_sub(kc_store *st, char *args, FILE *out)
{
    char *save = NULL, *tok = strtok_r(args, " \t\r\n", &save);
    int k, n = 0, cap = 0;
    int *rows = NULL;
    if (kc_index(tok, KC_SUBSETS, &k) != 0) {
        fprintf(out, "error: subset must be 0 to %d\n", KC_SUBSETS - 1);
        return 0;
    }
    while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
        int i;
        if (kc_index(tok, st->nrow, &i) != 0) {
            free(rows);
            fprintf(out, "error: row '%s' not stored (%d rows)\n", tok, st->nrow);
            return 0;
        }
        if (kc_grow((void **)&rows, &cap, n, sizeof(int)))
            return -1;
        rows[n++] = i;
    }
    free(st->sub[k]);
    st->sub[k] = rows;
    st->nsub[k] = n;
    st->made[k] = 1;
    fprintf(out, "ok %d\n", n);
    return 0;
}

/* The store's commands print and flush at once (the caller waits on
 * them); kernel and `set` lines are flushed at the next blank line.
 * `eval [K]`: one line, the predicted seconds of every stored row (or of
 * subset K's rows) in order, "nan" where a row cannot be evaluated. One
 * context per GPU per call (rows at scale 1 share it). */
static void kc_store_eval(kc_state *s, char *arg, FILE *out)
{
    kc_store *st = &s->st;
    int k = -1;
    char *save = NULL, *tok = strtok_r(arg, " \t\r\n", &save);
    if (tok) {
        if (kc_index(tok, KC_SUBSETS, &k) != 0 || strtok_r(NULL, " \t\r\n", &save)) {
            fprintf(out, "error: eval takes one subset from 0 to %d\n", KC_SUBSETS - 1);
            return;
        }
        if (!st->made[k]) {
            fprintf(out, "error: subset %d not made (sub %d ROWS...)\n", k, k);
            return;
        }
    }
    kern_ctx *ctx0 = s->ctx0;
    int ok0[KL_GPUS];
    char why[256];
    for (int g = 0; g < s->gpus.n; g++)
        ok0[g] = kern_ctx_init(&ctx0[g], &s->gpus.hw[g], &s->consts, 1, 1, 1) == 0;
    int n = k < 0 ? st->nrow : st->nsub[k];
    for (int j = 0; j < n; j++) {
        int r = k < 0 ? j : st->sub[k][j];
        double t = st->count[r] > 0 ? 0.0 : -1.0;
        for (int q = 0; q < st->count[r] && t >= 0; q++) {
            const kl_spec *sp = &st->spec[st->first[r] + q];
            kern_ctx own;
            const kern_ctx *c = &ctx0[sp->gpu];
            if (sp->sc != 1 || sp->sm != 1 || sp->sl != 1) {
                if (kl_ctx(&s->gpus, &s->consts, sp, &own, why, sizeof why) != 0) {
                    t = -1.0;
                    break;
                }
                c = &own;
            } else if (!ok0[sp->gpu]) {
                t = -1.0;
                break;
            }
            double x = kl_time(c, sp);
            t = x < 0 ? -1.0 : t + x;
        }
        if (t < 0)
            fputs(j ? " nan" : "nan", out);
        else
            fprintf(out, j ? " %.7g" : "%.7g", t);
    }
    fputc('\n', out);
}

/* `why I`: why stored row I cannot be evaluated ("ok" when it can). */
static void kc_store_why(kc_state *s, char *arg, FILE *out)
{
    kc_store *st = &s->st;
    char *save = NULL, *tok = strtok_r(arg, " \t\r\n", &save);
    int r;
    if (kc_index(tok, st->nrow, &r) != 0 || strtok_r(NULL, " \t\r\n", &save)) {
        fprintf(out, "error: row '%s' not stored (%d rows)\n", tok ? tok : "", st->nrow);
        return;
    }
    if (st->why[r]) {
        fprintf(out, "error: %s\n", st->why[r]);
        return;
    }
    char why[1100];
    kern_ctx ctx;
    for (int q = 0; q < st->count[r]; q++) {
        const kl_spec *sp = &st->spec[st->first[r] + q];
        if (kl_ctx(&s->gpus, &s->consts, sp, &ctx, why, sizeof why) != 0 ||
            (kl_time(&ctx, sp) < 0 && (kc_domain(sp, why, sizeof why), 1))) {
            fprintf(out, "error: %s\n", why);
            return;
        }
    }
    fputs("ok\n", out);
}

/* One input line of --batch; -1 only when out of memory. */
static int kc_line(kc_state *s, char *line, FILE *out)
{
    char why[1100];
    kl_fields f;
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0' || *p == '\n' || *p == '\r') {
        fputc('\n', out);
        fflush(out);
        return 0;
    }
    if ((p[0] == '+' || p[0] == '&') && p[1] == ' ')
        return kc_store_add(s, p + 2, p[0] == '&');
    if (strncmp(p, "sub ", 4) == 0) {
        int rc = kc_store_sub(&s->st, p + 4, out);
        fflush(out);
        return rc;
    }
    if (strncmp(p, "eval", 4) == 0 && (p[4] == ' ' || p[4] == '\n' || !p[4])) {
        kc_store_eval(s, p + 4 + (p[4] == ' '), out);
        fflush(out);
        return 0;
    }
    if (strncmp(p, "why ", 4) == 0) {
        kc_store_why(s, p + 4, out);
        fflush(out);
        return 0;
    }
    if (strncmp(p, "clear", 5) == 0) {
        kc_store_free(&s->st);
        fputs("ok\n", out);
        fflush(out);
        return 0;
    }
    int set = strncmp(p, "set ", 4) == 0;
    if (kl_split(set ? p + 4 : p, &f, why, sizeof why) != 0) {
        fprintf(out, "error: %s\n", why);
        return 0;
    }
    if (set) {
        if (kc_set(&s->consts, &s->bes, &f, why, sizeof why) != 0)
            fprintf(out, "error: %s\n", why);
        else
            fputs("ok\n", out);
        return 0;
    }
    double t = kc_eval(s, &f, why, sizeof why);
    if (t < 0)
        fprintf(out, "error: %s\n", why);
    else
        fprintf(out, "%.9g\n", t);
    return 0;
}

static void kc_help(FILE *f)
{
    fputs("usage: madsweep kernel [--configs DIR] [--consts FILE] KEY=VALUE...\n"
          "       madsweep kernel [--configs DIR] [--consts FILE] --batch < LINES\n"
          "every kernel: gpu=NAME kind=gemm|moe|attn|coll [scale_compute=F scale_mem=F "
          "scale_link=F clock_hz=HZ timing=graph|event|python]\n"
          "  gemm: m n k [groups=1] [dtype=bf16|fp8|fp8_block|mxfp8|nvfp4|int8|int8_wo|"
          "int4_wo|w4a16_mxfp4|w4a8_mxfp4_mxfp8] [quant=0|1 reuse=0]\n"
          "  moe:  tokens hidden inter topk experts [tp=1 ep=1 gated=1 dtype=bf16]\n"
          "  attn: phase=decode|prefill batch heads_q head_dim [heads_kv v_dim seq=1 ctx=0 "
          "window=0 kv_bytes=2 fp8_math=0 mla=0 causal=1 reuse=0]\n"
          "  coll: op=all_reduce|all_gather|reduce_scatter|alltoall bytes gpus "
          "[gpus_per_node algo=auto|ring|nvls|custom proto=auto|ll|ll128|simple "
          "elt_bytes=2]\n"
          "  any kind: [backend=NAME] (kernels.cfg `backends`: the library or engine path)\n"
          "--ranges: print each constant's and back-end field's name, range, value, meaning\n"
          "batch lines 'set NAME=VALUE...' change constants (configs/kernels.cfg; a back "
          "end's field as BACKEND:eff|mem|floor_s) for the lines after them; prints one line "
          "per line: seconds, ok, or 'error: WHY'\n"
          "stored rows: '+ LINE' adds a row, '& LINE' adds a kernel to the last row (its "
          "time is the sum); neither prints. 'eval [K]' prints one line: every stored row's "
          "(or subset K's) seconds, 'nan' where it fails; 'why I' says why row I fails; "
          "'sub K I...' makes subset K (0-4095) of rows I...; 'clear' drops the rows\n",
          f);
}

/* --ranges: every constant and back-end field, its range, value, meaning. */
static void kc_ranges(kc_state *s, FILE *out)
{
    for (int j = 0; j < KERN_NCONSTS; j++) {
        const kern_const_info *inf = kern_const_info_at(j);
        fprintf(out, "%s %g %g %.6g %s\n", inf->name, inf->lo, inf->hi,
                *kern_const_ptr(&s->consts, j), inf->doc);
    }
    for (int b = 0; b < s->bes.n; b++)
        for (int j = 0; j < KERN_BE_NFIELDS; j++) {
            const kern_const_info *inf = kern_be_info_at(j);
            fprintf(out, "%s:%s %g %g %.6g %s\n", s->bes.name[b], inf->name, inf->lo, inf->hi,
                    *kern_be_ptr(&s->bes.be[b], j), inf->doc);
        }
}

static int kc_run(kc_state *s, const char *configs, const char *consts, int batch,
                  int nargs, char **args, FILE *out, FILE *err)
{
    s->gpus.dir = load_configs_dir(configs);
    char path[LOAD_PATH_MAX];
    snprintf(path, sizeof path, "%s/kernels.cfg", s->gpus.dir);
    if (kernel_cfg_read(consts ? consts : path, s->gpus.dir, &s->consts, &s->bes, err) != 0)
        return 2;
    if (batch < 0) {
        kc_ranges(s, out);
        return 0;
    }
    snprintf(path, sizeof path, "%s/hardware.cfg", s->gpus.dir);
    load_err le;
    if (load_open_catalogue(&s->hw_cfg, path, s->gpus.dir, &le) != 0) {
        fprintf(err, "madsweep kernel: %s\n", le.text);
        return 2;
    }
    s->gpus.list = config_lookup(&s->hw_cfg, "hardware");
    char line[KC_LINE];
    int rc = 0;
    if (batch) {
        char *buf = NULL; /* batch lines of any length (`set`, `sub`) */
        size_t cap = 0;
        while (getline(&buf, &cap, stdin) > 0)
            if (kc_line(s, buf, out) != 0) {
                fprintf(err, "madsweep kernel: out of memory\n");
                rc = 1;
                break;
            }
        free(buf);
        kc_store_free(&s->st);
    } else {
        line[0] = '\0';
        for (int i = 0; i < nargs; i++) {
            size_t used = strlen(line);
            snprintf(line + used, sizeof line - used, "%s ", args[i]);
        }
        kl_fields f;
        char why[1100];
        double t = kl_split(line, &f, why, sizeof why) == 0 ? kc_eval(s, &f, why, sizeof why)
                                                            : -1.0;
        if (t < 0) {
            fprintf(err, "madsweep kernel: %s\n", why);
            rc = 2;
        } else {
            fprintf(out, "%.9g\n", t);
        }
    }
    fflush(out);
    config_destroy(&s->hw_cfg);
    return rc;
}

int kernel_cmd_main(int argc, char **argv, FILE *out, FILE *err)
{
    const char *configs = NULL, *consts = NULL;
    int batch = 0, first = argc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--batch") == 0)
            batch = 1;
        else if ((strcmp(argv[i], "--configs") == 0 || strcmp(argv[i], "--consts") == 0) &&
                 i + 1 < argc) {
            *(strcmp(argv[i], "--configs") == 0 ? &configs : &consts) = argv[i + 1];
            i++;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            kc_help(out);
            return 0;
        } else if (strcmp(argv[i], "--ranges") == 0) {
            batch = -1;
        } else if (argv[i][0] == '-') {
            fprintf(err, "madsweep kernel: unknown option '%s'\n", argv[i]);
            kc_help(err);
            return 2;
        } else {
            first = i;
            break;
        }
    }
    if (batch >= 0 && batch == (first < argc)) {
        kc_help(err);
        return 2;
    }
    kc_state *s = calloc(1, sizeof *s); /* large: an hw_t per GPU */
    if (!s) {
        fprintf(err, "madsweep kernel: out of memory\n");
        return 1;
    }
    int rc = kc_run(s, configs, consts, batch, argc - first, argv + first, out, err);
    free(s);
    return rc;
}
