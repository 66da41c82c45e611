/*
 * kernel_line.c - one kernel described as KEY=VALUE text, checked at its
 * keys and parsed into a kernel of cost/kernel/ (see kernel_line.h).
 *
 * A key is read once (a repeated key is refused at the split) and every
 * key of a line must be read by its kind's parser (an unknown key is
 * refused, naming the kind's keys). Counts (rows, heads, experts, GPUs)
 * are integers, flags 0 or 1; a precision needs the GPU's peak for it
 * (FP8 formats an FP8 peak, NVFP4 an FP4 peak, FP8 attention math an FP8
 * peak: hardware.cfg), as a design point's precision does. The layer's
 * own domain (cost/kernel/) is the last check; what it refuses is named
 * by kind.
 */
#define _POSIX_C_SOURCE 200809L
#include "kernel_line.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../load/load.h"

#define KL_INT_MAX 9007199254740992.0 /* 2^53: every integer below is exact */

static const char *kl_get(kl_fields *f, const char *key)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->key[i], key) == 0) {
            f->used[i] = 1;
            return f->val[i];
        }
    return NULL;
}

/* A number field: 0 with *v set (default `def` when absent and def is
 * finite), -1 with why set. */
static int kl_num(kl_fields *f, const char *key, double def, double *v, char *why, size_t wn)
{
    const char *s = kl_get(f, key);
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

/* A count: an integer from lo to 2^53 (default def when absent). */
static int kl_int(kl_fields *f, const char *key, double def, double lo, double *v, char *why,
                  size_t wn)
{
    if (kl_num(f, key, def, v, why, wn) != 0)
        return -1;
    if (*v != floor(*v) || *v < lo || *v > KL_INT_MAX) {
        snprintf(why, wn, "%s: '%.17g' is not an integer from %g to 2^53", key, *v, lo);
        return -1;
    }
    return 0;
}

/* A flag: 0 or 1 (default def when absent). */
static int kl_flag(kl_fields *f, const char *key, int def, int *b, char *why, size_t wn)
{
    double v;
    if (kl_num(f, key, def, &v, why, wn) != 0)
        return -1;
    if (v != 0.0 && v != 1.0) {
        snprintf(why, wn, "%s: '%g' is not 0 or 1", key, v);
        return -1;
    }
    *b = v != 0.0;
    return 0;
}

/* A positive number (default def when absent). */
static int kl_pos(kl_fields *f, const char *key, double def, double *v, char *why, size_t wn)
{
    if (kl_num(f, key, def, v, why, wn) != 0)
        return -1;
    if (!(*v > 0)) {
        snprintf(why, wn, "%s: '%g' must be > 0", key, *v);
        return -1;
    }
    return 0;
}

int kl_split(char *line, kl_fields *f, char *why, size_t wn)
{
    f->n = 0;
    for (char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            snprintf(why, wn, "expected KEY=VALUE, got '%s'", tok);
            return -1;
        }
        if (f->n == KL_FIELDS) {
            snprintf(why, wn, "more than %d fields", KL_FIELDS);
            return -1;
        }
        *eq = '\0';
        for (int i = 0; i < f->n; i++)
            if (strcmp(f->key[i], tok) == 0) {
                snprintf(why, wn, "%s: given twice", tok);
                return -1;
            }
        f->key[f->n] = tok;
        f->used[f->n] = 0;
        f->val[f->n++] = eq + 1;
    }
    return 0;
}

/* Index of GPU `name` in g (loaded on first use), or -1 with why. */
static int kl_gpu(kl_gpus *g, const char *name, char *why, size_t wn)
{
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->name[i], name) == 0)
            return i;
    const config_setting_t *e = load_find(g->list, name);
    if (!e || strlen(name) >= HW_NAME_MAX) {
        snprintf(why, wn, "gpu: '%s' is not in hardware.cfg", name);
        return -1;
    }
    if (g->n == KL_GPUS) {
        snprintf(why, wn, "gpu: more than %d GPUs", KL_GPUS);
        return -1;
    }
    load_err err;
    if (load_hw_in(e, g->dir, NULL, &g->hw[g->n], &err) != 0) {
        snprintf(why, wn, "gpu '%s': %s", name, err.text);
        return -1;
    }
    snprintf(g->name[g->n], HW_NAME_MAX, "%s", name);
    return g->n++;
}

static int kl_enum(kl_fields *f, const char *key, const char *def, int (*parse)(const char *),
                   int *out, char *why, size_t wn)
{
    const char *v = kl_get(f, key);
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

/* The peak a format's math needs (-1: BF16 math, every GPU has it). */
static int kl_fmt_peak(kern_fmt fmt)
{
    switch (fmt) {
    case KF_FP8:
    case KF_FP8_BLOCK:
    case KF_MXFP8:
    case KF_MXFP4_W4A8:
        return HW_FP8;
    case KF_NVFP4:
        return HW_FP4;
    default:
        return -1;
    }
}

/* dtype=: a format the GPU has the peak for. */
static int kl_dtype(kl_fields *f, const hw_t *hw, const char *gpu, kern_fmt *out, char *why,
                    size_t wn)
{
    int fmt;
    if (kl_enum(f, "dtype", "bf16", kern_fmt_parse, &fmt, why, wn))
        return -1;
    int peak = kl_fmt_peak((kern_fmt)fmt);
    if (peak >= 0 && !(hw->peak_flops[peak] > 0)) {
        snprintf(why, wn, "dtype: gpu '%s' has no %s peak (hardware.cfg) for '%s'", gpu,
                 hw_dtype_name((hw_dtype)peak), kl_get(f, "dtype"));
        return -1;
    }
    *out = (kern_fmt)fmt;
    return 0;
}

#define KL(call)                                                                   \
    do {                                                                           \
        if ((call) != 0)                                                           \
            return -1;                                                             \
    } while (0)

static int kl_gemm(kern_gemm *g, kl_fields *f, const hw_t *hw, const char *gpu, char *why,
                   size_t wn)
{
    int q;
    KL(kl_int(f, "m", (double)NAN, 1, &g->m, why, wn));
    KL(kl_int(f, "n", (double)NAN, 1, &g->n, why, wn));
    KL(kl_int(f, "k", (double)NAN, 1, &g->k, why, wn));
    KL(kl_int(f, "groups", 1, 1, &g->groups, why, wn));
    KL(kl_flag(f, "quant", 0, &q, why, wn));
    KL(kl_int(f, "reuse", 0, 0, &g->reuse, why, wn));
    KL(kl_dtype(f, hw, gpu, &g->fmt, why, wn));
    g->quant = q;
    return 0;
}

static int kl_moe(kern_moe *m, kl_fields *f, const hw_t *hw, const char *gpu, char *why,
                  size_t wn)
{
    int gated;
    KL(kl_int(f, "tokens", (double)NAN, 1, &m->tokens, why, wn));
    KL(kl_int(f, "hidden", (double)NAN, 1, &m->hidden, why, wn));
    KL(kl_int(f, "inter", (double)NAN, 1, &m->inter, why, wn));
    KL(kl_int(f, "topk", (double)NAN, 1, &m->topk, why, wn));
    KL(kl_int(f, "experts", (double)NAN, 1, &m->experts, why, wn));
    KL(kl_int(f, "tp", 1, 1, &m->tp, why, wn));
    KL(kl_int(f, "ep", 1, 1, &m->ep, why, wn));
    KL(kl_flag(f, "gated", 1, &gated, why, wn));
    KL(kl_dtype(f, hw, gpu, &m->fmt, why, wn));
    m->gated = gated;
    if (m->topk > m->experts) {
        snprintf(why, wn, "topk: %g is more than experts %g", m->topk, m->experts);
        return -1;
    }
    if (fmod(m->experts, m->ep) != 0.0) {
        snprintf(why, wn, "ep: %g does not divide experts %g", m->ep, m->experts);
        return -1;
    }
    return 0;
}

static int kl_phase(const char *s)
{
    return strcmp(s, "decode") == 0 ? 1 : strcmp(s, "prefill") == 0 ? 0 : -1;
}

static int kl_attn(kern_attn *a, kl_fields *f, const hw_t *hw, const char *gpu, char *why,
                   size_t wn)
{
    int dec, fp8, mla, causal;
    KL(kl_enum(f, "phase", NULL, kl_phase, &dec, why, wn));
    a->decode = dec;
    KL(kl_int(f, "batch", (double)NAN, 1, &a->batch, why, wn));
    KL(kl_int(f, "seq", 1, 1, &a->seq, why, wn));
    KL(kl_int(f, "ctx", 0, 0, &a->ctx, why, wn));
    KL(kl_int(f, "heads_q", (double)NAN, 1, &a->heads_q, why, wn));
    KL(kl_int(f, "heads_kv", a->heads_q, 1, &a->heads_kv, why, wn));
    KL(kl_int(f, "head_dim", (double)NAN, 1, &a->head_dim, why, wn));
    KL(kl_int(f, "v_dim", a->head_dim, 1, &a->v_dim, why, wn));
    KL(kl_int(f, "window", 0, 0, &a->window, why, wn));
    KL(kl_pos(f, "kv_bytes", 2, &a->kv_bytes, why, wn));
    KL(kl_flag(f, "fp8_math", 0, &fp8, why, wn));
    KL(kl_flag(f, "mla", 0, &mla, why, wn));
    KL(kl_flag(f, "causal", 1, &causal, why, wn));
    KL(kl_int(f, "reuse", 0, 0, &a->reuse, why, wn));
    a->full = !causal;
    a->fp8_math = fp8;
    a->mla = mla;
    if (fmod(a->heads_q, a->heads_kv) != 0.0) {
        snprintf(why, wn, "heads_kv: %g does not divide heads_q %g", a->heads_kv, a->heads_q);
        return -1;
    }
    if (fp8 && !(hw->peak_flops[HW_FP8] > 0)) {
        snprintf(why, wn, "fp8_math: gpu '%s' has no fp8 peak (hardware.cfg)", gpu);
        return -1;
    }
    return 0;
}

static int kl_coll(kern_coll *x, kl_fields *f, char *why, size_t wn)
{
    int op, algo, proto;
    KL(kl_enum(f, "op", NULL, kern_coll_op_parse, &op, why, wn));
    KL(kl_enum(f, "algo", "auto", kern_coll_algo_parse, &algo, why, wn));
    KL(kl_enum(f, "proto", "auto", kern_proto_parse, &proto, why, wn));
    x->op = (kern_coll_op)op;
    x->algo = (kern_coll_algo)algo;
    x->proto = (kern_proto)proto;
    KL(kl_pos(f, "bytes", (double)NAN, &x->bytes, why, wn));
    KL(kl_int(f, "gpus", (double)NAN, 1, &x->gpus, why, wn));
    KL(kl_int(f, "gpus_per_node", x->gpus, 1, &x->gpus_per_node, why, wn));
    KL(kl_pos(f, "elt_bytes", 2, &x->elt_bytes, why, wn));
    if (fmod(x->gpus, x->gpus_per_node) != 0.0) {
        snprintf(why, wn, "gpus_per_node: %g does not divide gpus %g", x->gpus_per_node,
                 x->gpus);
        return -1;
    }
    return 0;
}
#undef KL

/* The keys a kind reads, for the message on an unknown one. */
static const char *const kl_keys[4] = {
    "m n k groups quant reuse dtype",
    "tokens hidden inter topk experts tp ep gated dtype",
    ("phase batch seq ctx heads_q heads_kv head_dim v_dim window kv_bytes fp8_math mla causal "
     "reuse"),
    "op algo proto bytes gpus gpus_per_node elt_bytes",
};

int kl_parse(kl_gpus *g, const kern_backends *bes, kl_fields *f, kl_spec *sp, char *why,
             size_t wn)
{
    const char *gname = kl_get(f, "gpu"), *kind = kl_get(f, "kind");
    if (!gname || !kind) {
        snprintf(why, wn, "missing %s", gname ? "kind" : "gpu");
        return -1;
    }
    memset(sp, 0, sizeof *sp);
    static const char *const kinds[] = {"gemm", "moe", "attn", "coll"};
    sp->kind = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(kind, kinds[i]) == 0)
            sp->kind = i;
    if (sp->kind < 0) {
        snprintf(why, wn, "kind: unknown '%s' (gemm, moe, attn, coll)", kind);
        return -1;
    }
    if ((sp->gpu = kl_gpu(g, gname, why, wn)) < 0)
        return -1;
    const hw_t *hw = &g->hw[sp->gpu];
    /* clock_hz: the SM clock the measurement ran at (locked or capped):
     * compute, L2 and SFU rates scale with it, HBM does not */
    double clk;
    if (kl_pos(f, "scale_compute", 1, &sp->sc, why, wn) ||
        kl_pos(f, "scale_mem", 1, &sp->sm, why, wn) ||
        kl_pos(f, "scale_link", 1, &sp->sl, why, wn) ||
        (kl_get(f, "clock_hz") && kl_pos(f, "clock_hz", (double)NAN, &clk, why, wn)) ||
        kl_enum(f, "timing", "graph", kern_timing_parse, &sp->timing, why, wn))
        return -1;
    if (kl_get(f, "clock_hz")) {
        if (!(hw->clock_hz > 0)) {
            snprintf(why, wn, "clock_hz: gpu '%s' has no clock_hz in hardware.cfg to scale from",
                     gname);
            return -1;
        }
        sp->sc *= clk / hw->clock_hz;
    }
    const char *bname = kl_get(f, "backend");
    const kern_backend *be = NULL;
    if (bname && !(be = kern_backend_find(bes, bname))) {
        snprintf(why, wn, "backend: '%s' is not in kernels.cfg", bname);
        return -1;
    }
    int rc = sp->kind == 0   ? kl_gemm(&sp->u.g, f, hw, gname, why, wn)
             : sp->kind == 1 ? kl_moe(&sp->u.m, f, hw, gname, why, wn)
             : sp->kind == 2 ? kl_attn(&sp->u.a, f, hw, gname, why, wn)
                             : kl_coll(&sp->u.x, f, why, wn);
    if (rc != 0)
        return -1;
    for (int i = 0; i < f->n; i++)
        if (!f->used[i]) {
            snprintf(why, wn,
                     "%s: unknown key for kind %s (keys: gpu kind scale_compute scale_mem "
                     "scale_link clock_hz timing backend %s)",
                     f->key[i], kind, kl_keys[sp->kind]);
            return -1;
        }
    /* the same member offset in each kernel struct is not assumed */
    if (sp->kind == 0)
        sp->u.g.be = be;
    else if (sp->kind == 1)
        sp->u.m.be = be;
    else if (sp->kind == 2)
        sp->u.a.be = be;
    else
        sp->u.x.be = be;
    return 0;
}

int kl_ctx(const kl_gpus *g, const kern_consts *k, const kl_spec *sp, kern_ctx *ctx,
           char *why, size_t wn)
{
    if (kern_ctx_init(ctx, &g->hw[sp->gpu], k, sp->sc, sp->sm, sp->sl) != 0) {
        snprintf(why, wn, "gpu '%s' lacks the kernel figures (arch, sm_count, clock_hz)",
                 g->name[sp->gpu]);
        return -1;
    }
    return 0;
}

double kl_time(const kern_ctx *c, const kl_spec *sp)
{
    double t = sp->kind == 0   ? kern_gemm_time(c, &sp->u.g)
               : sp->kind == 1 ? kern_moe_time(c, &sp->u.m)
               : sp->kind == 2 ? kern_attn_time(c, &sp->u.a)
                               : kern_coll_time(c, &sp->u.x);
    return t < 0 ? t : kern_harness_s(c, (kern_timing)sp->timing, t);
}
