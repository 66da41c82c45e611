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

#define KC_GPUS 64
#define KC_LINE 4096
#define KC_FIELDS 1024 /* a `set` line carries every constant and back-end field */

/* One parsed kernel of a stored row: its GPU (index into kc_state.gpu),
 * scale factors and shape. */
typedef struct kc_spec {
    int gpu, kind; /* kind: 0 gemm, 1 moe, 2 attn, 3 coll */
    int timing;    /* kern_timing of the measurement (harness floor) */
    double sc, sm, sl;
    union {
        kern_gemm g;
        kern_moe m;
        kern_attn a;
        kern_coll x;
    } u;
} kc_spec;

/* Rows stored for repeated evaluation (`+`/`&` lines, `eval`): a row is
 * the sum of specs [first, first + count); a row that failed to parse has
 * count 0 and its reason in why[]. Subsets list row indices. */
#define KC_SUBSETS 4096
typedef struct kc_store {
    kc_spec *spec;
    int nspec, capspec;
    int *first, *count;
    char **why;
    int nrow, caprow;
    int *sub[KC_SUBSETS];
    int nsub[KC_SUBSETS];
} kc_store;

typedef struct kc_state {
    const char *dir;
    config_t hw_cfg;
    const config_setting_t *hw_list;
    int ngpus;
    char gpu_name[KC_GPUS][HW_NAME_MAX];
    hw_t gpu[KC_GPUS];
    kern_consts consts;
    kern_backends bes;
    kc_store st;
    kern_ctx ctx0[KC_GPUS]; /* `eval`'s contexts at scale 1, rebuilt at each call */
} kc_state;

typedef struct kc_fields {
    int n;
    char *key[KC_FIELDS];
    char *val[KC_FIELDS];
} kc_fields;

static const char *kc_get(const kc_fields *f, const char *key)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->key[i], key) == 0)
            return f->val[i];
    return NULL;
}

/* A number field: 0 with *v set (default `def` when absent and def is
 * finite), -1 with why set. */
static int kc_num(const kc_fields *f, const char *key, double def, double *v,
                  char *why, size_t wn)
{
    const char *s = kc_get(f, key);
    if (!s) {
        if (isnan(def)) {
            snprintf(why, wn, "missing %s", key);
            return -1;
        }
        *v = def;
        return 0;
    }
    char *end = NULL;
    double x = strtod(s, &end);
    if (end == s || *end || !isfinite(x)) {
        snprintf(why, wn, "%s: not a number: '%s'", key, s);
        return -1;
    }
    *v = x;
    return 0;
}

static int kc_split(char *line, kc_fields *f, char *why, size_t wn)
{
    f->n = 0;
    for (char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            snprintf(why, wn, "expected KEY=VALUE, got '%s'", tok);
            return -1;
        }
        if (f->n == KC_FIELDS) {
            snprintf(why, wn, "more than %d fields", KC_FIELDS);
            return -1;
        }
        *eq = '\0';
        f->key[f->n] = tok;
        f->val[f->n++] = eq + 1;
    }
    return 0;
}

/* Index of GPU `name` in s->gpu (loaded on first use), or -1 with why. */
static int kc_gpu(kc_state *s, const char *name, char *why, size_t wn)
{
    for (int i = 0; i < s->ngpus; i++)
        if (strcmp(s->gpu_name[i], name) == 0)
            return i;
    const config_setting_t *g = load_find(s->hw_list, name);
    if (!g || strlen(name) >= HW_NAME_MAX) {
        snprintf(why, wn, "gpu '%s' is not in hardware.cfg", name);
        return -1;
    }
    if (s->ngpus == KC_GPUS) {
        snprintf(why, wn, "more than %d GPUs", KC_GPUS);
        return -1;
    }
    load_err err;
    if (load_hw_in(g, s->dir, NULL, &s->gpu[s->ngpus], &err) != 0) {
        snprintf(why, wn, "%s", err.text);
        return -1;
    }
    snprintf(s->gpu_name[s->ngpus], HW_NAME_MAX, "%s", name);
    return s->ngpus++;
}

static int kc_enum(const kc_fields *f, const char *key, const char *def,
                   int (*parse)(const char *), int *out, char *why, size_t wn)
{
    const char *v = kc_get(f, key);
    if (!v)
        v = def;
    if (!v) {
        snprintf(why, wn, "missing %s", key);
        return -1;
    }
    *out = parse(v);
    if (*out < 0) {
        snprintf(why, wn, "%s: unknown '%s'", key, v);
        return -1;
    }
    return 0;
}

#define KN(key, def, dst)                                                          \
    do {                                                                           \
        if (kc_num(f, key, def, dst, why, wn) != 0)                                \
            return -1;                                                             \
    } while (0)

static int kc_gemm(kern_gemm *out, const kc_fields *f, char *why, size_t wn)
{
    kern_gemm g = {0};
    double q = 0;
    int fmt;
    KN("m", NAN, &g.m);
    KN("n", NAN, &g.n);
    KN("k", NAN, &g.k);
    KN("groups", 1, &g.groups);
    KN("quant", 0, &q);
    KN("reuse", 0, &g.reuse);
    if (kc_enum(f, "dtype", "bf16", kern_fmt_parse, &fmt, why, wn))
        return -1;
    g.fmt = (kern_fmt)fmt;
    g.quant = q != 0;
    *out = g;
    return 0;
}

static int kc_moe(kern_moe *out, const kc_fields *f, char *why, size_t wn)
{
    kern_moe m = {0};
    double gated = 1;
    int fmt;
    KN("tokens", NAN, &m.tokens);
    KN("hidden", NAN, &m.hidden);
    KN("inter", NAN, &m.inter);
    KN("topk", NAN, &m.topk);
    KN("experts", NAN, &m.experts);
    KN("tp", 1, &m.tp);
    KN("ep", 1, &m.ep);
    KN("gated", 1, &gated);
    if (kc_enum(f, "dtype", "bf16", kern_fmt_parse, &fmt, why, wn))
        return -1;
    m.fmt = (kern_fmt)fmt;
    m.gated = gated != 0;
    *out = m;
    return 0;
}

static int kc_phase(const char *s)
{
    return strcmp(s, "decode") == 0 ? 1 : strcmp(s, "prefill") == 0 ? 0 : -1;
}

static int kc_attn(kern_attn *out, const kc_fields *f, char *why, size_t wn)
{
    kern_attn a = {0};
    double fp8 = 0, mla = 0, causal = 1;
    int dec;
    if (kc_enum(f, "phase", NULL, kc_phase, &dec, why, wn))
        return -1;
    a.decode = dec;
    KN("batch", NAN, &a.batch);
    KN("seq", 1, &a.seq);
    KN("ctx", 0, &a.ctx);
    KN("heads_q", NAN, &a.heads_q);
    KN("heads_kv", a.heads_q, &a.heads_kv);
    KN("head_dim", NAN, &a.head_dim);
    KN("v_dim", a.head_dim, &a.v_dim);
    KN("window", 0, &a.window);
    KN("kv_bytes", 2, &a.kv_bytes);
    KN("fp8_math", 0, &fp8);
    KN("mla", 0, &mla);
    KN("causal", 1, &causal);
    KN("reuse", 0, &a.reuse);
    a.full = causal == 0;
    a.fp8_math = fp8 != 0;
    a.mla = mla != 0;
    *out = a;
    return 0;
}

static int kc_coll(kern_coll *out, const kc_fields *f, char *why, size_t wn)
{
    kern_coll x = {0};
    int op, algo, proto;
    if (kc_enum(f, "op", NULL, kern_coll_op_parse, &op, why, wn) ||
        kc_enum(f, "algo", "auto", kern_coll_algo_parse, &algo, why, wn) ||
        kc_enum(f, "proto", "auto", kern_proto_parse, &proto, why, wn))
        return -1;
    x.op = (kern_coll_op)op;
    x.algo = (kern_coll_algo)algo;
    x.proto = (kern_proto)proto;
    KN("bytes", NAN, &x.bytes);
    KN("gpus", NAN, &x.gpus);
    KN("gpus_per_node", x.gpus, &x.gpus_per_node);
    KN("elt_bytes", 2, &x.elt_bytes);
    *out = x;
    return 0;
}
#undef KN

/* Parses one kernel line into *sp: 0, or -1 with why set. */
static int kc_parse(kc_state *s, const kc_fields *f, kc_spec *sp, char *why, size_t wn)
{
    const char *gname = kc_get(f, "gpu"), *kind = kc_get(f, "kind");
    if (!gname || !kind) {
        snprintf(why, wn, "missing %s", gname ? "kind" : "gpu");
        return -1;
    }
    memset(sp, 0, sizeof *sp);
    if ((sp->gpu = kc_gpu(s, gname, why, wn)) < 0)
        return -1;
    if (kc_num(f, "scale_compute", 1, &sp->sc, why, wn) ||
        kc_num(f, "scale_mem", 1, &sp->sm, why, wn) ||
        kc_num(f, "scale_link", 1, &sp->sl, why, wn))
        return -1;
    /* clock_hz: the SM clock the measurement ran at (locked or capped):
     * compute, L2 and SFU rates scale with it, HBM does not */
    double clk;
    if (kc_num(f, "clock_hz", 0, &clk, why, wn) != 0 ||
        kc_enum(f, "timing", "graph", kern_timing_parse, &sp->timing, why, wn) != 0)
        return -1;
    if (clk > 0 && s->gpu[sp->gpu].clock_hz > 0)
        sp->sc *= clk / s->gpu[sp->gpu].clock_hz;
    if (!(sp->sc > 0 && sp->sm > 0 && sp->sl > 0)) {
        snprintf(why, wn, "scale factors must be > 0");
        return -1;
    }
    const char *bname = kc_get(f, "backend");
    const kern_backend *be = NULL;
    if (bname && !(be = kern_backend_find(&s->bes, bname))) {
        snprintf(why, wn, "backend '%s' is not in kernels.cfg", bname);
        return -1;
    }
    static const char *const kinds[] = {"gemm", "moe", "attn", "coll"};
    sp->kind = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(kind, kinds[i]) == 0)
            sp->kind = i;
    int rc = sp->kind == 0   ? kc_gemm(&sp->u.g, f, why, wn)
             : sp->kind == 1 ? kc_moe(&sp->u.m, f, why, wn)
             : sp->kind == 2 ? kc_attn(&sp->u.a, f, why, wn)
             : sp->kind == 3 ? kc_coll(&sp->u.x, f, why, wn)
                             : (snprintf(why, wn, "unknown kind '%s' (gemm, moe, attn, coll)",
                                         kind), -1);
    if (rc == 0) { /* the same member offset in each kernel struct is not assumed */
        if (sp->kind == 0)
            sp->u.g.be = be;
        else if (sp->kind == 1)
            sp->u.m.be = be;
        else if (sp->kind == 2)
            sp->u.a.be = be;
        else
            sp->u.x.be = be;
    }
    return rc;
}

/* The time of a parsed kernel on context c (built for its GPU). */
static double kc_spec_time(const kern_ctx *c, const kc_spec *sp)
{
    double t = sp->kind == 0   ? kern_gemm_time(c, &sp->u.g)
               : sp->kind == 1 ? kern_moe_time(c, &sp->u.m)
               : sp->kind == 2 ? kern_attn_time(c, &sp->u.a)
                               : kern_coll_time(c, &sp->u.x);
    return t < 0 ? t : kern_harness_s(c, (kern_timing)sp->timing, t);
}

static int kc_ctx(kc_state *s, const kc_spec *sp, kern_ctx *ctx, char *why, size_t wn)
{
    if (kern_ctx_init(ctx, &s->gpu[sp->gpu], &s->consts, sp->sc, sp->sm, sp->sl) != 0) {
        snprintf(why, wn, "gpu '%s' lacks the kernel figures (arch, sm_count)",
                 s->gpu_name[sp->gpu]);
        return -1;
    }
    return 0;
}

/* One kernel: its time (s) >= 0, or -1 with why set. */
static double kc_eval(kc_state *s, const kc_fields *f, char *why, size_t wn)
{
    kc_spec sp;
    kern_ctx ctx;
    if (kc_parse(s, f, &sp, why, wn) != 0 || kc_ctx(s, &sp, &ctx, why, wn) != 0)
        return -1.0;
    why[0] = '\0';
    double t = kc_spec_time(&ctx, &sp);
    if (t < 0 && !why[0])
        snprintf(why, wn, "shape out of the layer's domain");
    return t;
}

/* `set NAME=V ...`: a constant (kernels.cfg group `kernel`) or a back
 * end's field (`BACKEND:eff`, `:mem`, `:floor_s`), each within its range. */
static int kc_set(kern_consts *k, kern_backends *bes, const kc_fields *f, char *why,
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
    kc_fields f;
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
    }
    int r = st->nrow - 1;
    if (st->why[r])
        return 0;
    if (kc_grow((void **)&st->spec, &st->capspec, st->nspec, sizeof(kc_spec)))
        return -1;
    if (kc_split(line, &f, why, sizeof why) != 0 ||
        kc_parse(s, &f, &st->spec[st->nspec], why, sizeof why) != 0) {
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

/* `sub K I...`: subset K holds rows I... (replacing what it held). */
static int kc_store_sub(kc_store *st, char *args, FILE *out)
{
    char *save = NULL, *tok = strtok_r(args, " \t\r\n", &save);
    int k = tok ? atoi(tok) : -1, n = 0, cap = 0;
    int *rows = NULL;
    if (k < 0 || k >= KC_SUBSETS) {
        fprintf(out, "error: subset must be 0 to %d\n", KC_SUBSETS - 1);
        return 0;
    }
    while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
        int i = atoi(tok);
        if (i < 0 || i >= st->nrow) {
            free(rows);
            fprintf(out, "error: row %s not stored\n", tok);
            return 0;
        }
        if (kc_grow((void **)&rows, &cap, n, sizeof(int)))
            return -1;
        rows[n++] = i;
    }
    free(st->sub[k]);
    st->sub[k] = rows;
    st->nsub[k] = n;
    fprintf(out, "ok %d\n", n);
    return 0;
}

/* The store's commands print and flush at once (the caller waits on
 * them); kernel and `set` lines are flushed at the next blank line.
 * `eval [K]`: one line, the predicted seconds of every stored row (or of
 * subset K's rows) in order, "nan" where a row cannot be evaluated. One
 * context per GPU per call (rows at scale 1 share it). */
static void kc_store_eval(kc_state *s, const char *arg, FILE *out)
{
    kc_store *st = &s->st;
    int k = -1;
    while (arg && (*arg == ' ' || *arg == '\t'))
        arg++;
    if (arg && *arg && *arg != '\n' && *arg != '\r') {
        k = atoi(arg);
        if (k < 0 || k >= KC_SUBSETS) {
            fprintf(out, "error: subset must be 0 to %d\n", KC_SUBSETS - 1);
            return;
        }
    }
    kern_ctx *ctx0 = s->ctx0;
    int ok0[KC_GPUS];
    char why[256];
    for (int g = 0; g < s->ngpus; g++)
        ok0[g] = kern_ctx_init(&ctx0[g], &s->gpu[g], &s->consts, 1, 1, 1) == 0;
    int n = k < 0 ? st->nrow : st->nsub[k];
    for (int j = 0; j < n; j++) {
        int r = k < 0 ? j : st->sub[k][j];
        double t = st->count[r] > 0 ? 0.0 : -1.0;
        for (int q = 0; q < st->count[r] && t >= 0; q++) {
            const kc_spec *sp = &st->spec[st->first[r] + q];
            kern_ctx own;
            const kern_ctx *c = &ctx0[sp->gpu];
            if (sp->sc != 1 || sp->sm != 1 || sp->sl != 1) {
                if (kc_ctx(s, sp, &own, why, sizeof why) != 0) {
                    t = -1.0;
                    break;
                }
                c = &own;
            } else if (!ok0[sp->gpu]) {
                t = -1.0;
                break;
            }
            double x = kc_spec_time(c, sp);
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
static void kc_store_why(kc_state *s, const char *arg, FILE *out)
{
    kc_store *st = &s->st;
    int r = arg ? atoi(arg) : -1;
    if (r < 0 || r >= st->nrow) {
        fprintf(out, "error: row %s not stored\n", arg ? arg : "");
        return;
    }
    if (st->why[r]) {
        fprintf(out, "error: %s\n", st->why[r]);
        return;
    }
    char why[1100];
    kern_ctx ctx;
    for (int q = 0; q < st->count[r]; q++) {
        const kc_spec *sp = &st->spec[st->first[r] + q];
        why[0] = '\0';
        if (kc_ctx(s, sp, &ctx, why, sizeof why) != 0 || kc_spec_time(&ctx, sp) < 0) {
            fprintf(out, "error: %s\n", why[0] ? why : "shape out of the layer's domain");
            return;
        }
    }
    fputs("ok\n", out);
}

/* One input line of --batch; -1 only when out of memory. */
static int kc_line(kc_state *s, char *line, FILE *out)
{
    char why[1100];
    kc_fields f;
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
    if (kc_split(set ? p + 4 : p, &f, why, sizeof why) != 0) {
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
    s->dir = load_configs_dir(configs);
    char path[LOAD_PATH_MAX];
    snprintf(path, sizeof path, "%s/kernels.cfg", s->dir);
    if (kernel_cfg_read(consts ? consts : path, s->dir, &s->consts, &s->bes, err) != 0)
        return 2;
    if (batch < 0) {
        kc_ranges(s, out);
        return 0;
    }
    snprintf(path, sizeof path, "%s/hardware.cfg", s->dir);
    load_err le;
    if (load_open_catalogue(&s->hw_cfg, path, s->dir, &le) != 0) {
        fprintf(err, "madsweep kernel: %s\n", le.text);
        return 2;
    }
    s->hw_list = config_lookup(&s->hw_cfg, "hardware");
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
        kc_fields f;
        char why[1100];
        double t = kc_split(line, &f, why, sizeof why) == 0 ? kc_eval(s, &f, why, sizeof why)
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
