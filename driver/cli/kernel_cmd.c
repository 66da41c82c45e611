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
#include "../load/load.h"

#define KC_GPUS 64
#define KC_LINE 4096
#define KC_FIELDS 40

typedef struct kc_state {
    const char *dir;
    config_t hw_cfg;
    const config_setting_t *hw_list;
    int ngpus;
    char gpu_name[KC_GPUS][HW_NAME_MAX];
    hw_t gpu[KC_GPUS];
    kern_consts consts;
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

static const hw_t *kc_gpu(kc_state *s, const char *name, char *why, size_t wn)
{
    for (int i = 0; i < s->ngpus; i++)
        if (strcmp(s->gpu_name[i], name) == 0)
            return &s->gpu[i];
    const config_setting_t *g = load_find(s->hw_list, name);
    if (!g || strlen(name) >= HW_NAME_MAX) {
        snprintf(why, wn, "gpu '%s' is not in hardware.cfg", name);
        return NULL;
    }
    if (s->ngpus == KC_GPUS) {
        snprintf(why, wn, "more than %d GPUs", KC_GPUS);
        return NULL;
    }
    load_err err;
    hw_t *h = &s->gpu[s->ngpus];
    if (load_hw_in(g, s->dir, NULL, h, &err) != 0) {
        snprintf(why, wn, "%s", err.text);
        return NULL;
    }
    snprintf(s->gpu_name[s->ngpus++], HW_NAME_MAX, "%s", name);
    return h;
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
            return -1.0;                                                           \
    } while (0)

static double kc_gemm(const kern_ctx *c, const kc_fields *f, char *why, size_t wn)
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
        return -1.0;
    g.fmt = (kern_fmt)fmt;
    g.quant = q != 0;
    return kern_gemm_time(c, &g);
}

static double kc_moe(const kern_ctx *c, const kc_fields *f, char *why, size_t wn)
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
        return -1.0;
    m.fmt = (kern_fmt)fmt;
    m.gated = gated != 0;
    return kern_moe_time(c, &m);
}

static int kc_phase(const char *s)
{
    return strcmp(s, "decode") == 0 ? 1 : strcmp(s, "prefill") == 0 ? 0 : -1;
}

static double kc_attn(const kern_ctx *c, const kc_fields *f, char *why, size_t wn)
{
    kern_attn a = {0};
    double fp8 = 0, mla = 0, causal = 1;
    int dec;
    if (kc_enum(f, "phase", NULL, kc_phase, &dec, why, wn))
        return -1.0;
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
    return kern_attn_time(c, &a);
}

static double kc_coll(const kern_ctx *c, const kc_fields *f, char *why, size_t wn)
{
    kern_coll x = {0};
    int op, algo, proto;
    if (kc_enum(f, "op", NULL, kern_coll_op_parse, &op, why, wn) ||
        kc_enum(f, "algo", "auto", kern_coll_algo_parse, &algo, why, wn) ||
        kc_enum(f, "proto", "auto", kern_proto_parse, &proto, why, wn))
        return -1.0;
    x.op = (kern_coll_op)op;
    x.algo = (kern_coll_algo)algo;
    x.proto = (kern_proto)proto;
    KN("bytes", NAN, &x.bytes);
    KN("gpus", NAN, &x.gpus);
    KN("gpus_per_node", x.gpus, &x.gpus_per_node);
    return kern_coll_time(c, &x);
}
#undef KN

/* One kernel: its time (s) >= 0, or -1 with why set. */
static double kc_eval(kc_state *s, const kc_fields *f, char *why, size_t wn)
{
    const char *gname = kc_get(f, "gpu"), *kind = kc_get(f, "kind");
    if (!gname || !kind) {
        snprintf(why, wn, "missing %s", gname ? "kind" : "gpu");
        return -1.0;
    }
    const hw_t *h = kc_gpu(s, gname, why, wn);
    if (!h)
        return -1.0;
    double sc = 1, sm = 1, sl = 1;
    if (kc_num(f, "scale_compute", 1, &sc, why, wn) || kc_num(f, "scale_mem", 1, &sm, why, wn) ||
        kc_num(f, "scale_link", 1, &sl, why, wn))
        return -1.0;
    if (!(sc > 0 && sm > 0 && sl > 0)) {
        snprintf(why, wn, "scale factors must be > 0");
        return -1.0;
    }
    kern_ctx ctx;
    if (kern_ctx_init(&ctx, h, &s->consts, sc, sm, sl) != 0) {
        snprintf(why, wn, "gpu '%s' lacks the kernel figures (arch, sm_count)", gname);
        return -1.0;
    }
    why[0] = '\0';
    double t = strcmp(kind, "gemm") == 0   ? kc_gemm(&ctx, f, why, wn)
               : strcmp(kind, "moe") == 0  ? kc_moe(&ctx, f, why, wn)
               : strcmp(kind, "attn") == 0 ? kc_attn(&ctx, f, why, wn)
               : strcmp(kind, "coll") == 0 ? kc_coll(&ctx, f, why, wn)
                                           : -2.0;
    if (t == -2.0)
        snprintf(why, wn, "unknown kind '%s' (gemm, moe, attn, coll)", kind);
    else if (t < 0 && !why[0])
        snprintf(why, wn, "shape out of the layer's domain");
    return t;
}

static int kc_set(kern_consts *k, const kc_fields *f, char *why, size_t wn)
{
    for (int i = 0; i < f->n; i++) {
        int j = kern_const_index(f->key[i]);
        char *end = NULL;
        double v = strtod(f->val[i], &end);
        if (j < 0) {
            snprintf(why, wn, "unknown constant '%s'", f->key[i]);
            return -1;
        }
        const kern_const_info *inf = kern_const_info_at(j);
        if (end == f->val[i] || *end || !isfinite(v) || v < inf->lo || v > inf->hi) {
            snprintf(why, wn, "constant %s: '%s' not in %g to %g", f->key[i], f->val[i],
                     inf->lo, inf->hi);
            return -1;
        }
        *kern_const_ptr(k, j) = v;
    }
    return 0;
}

/* Reads the constants file: group `kernel`, every constant given. */
int kernel_cmd_consts(const char *path, const char *dir, kern_consts *k, FILE *err)
{
    config_t cfg;
    load_err le;
    if (load_open(&cfg, path, dir, &le) != 0) {
        fprintf(err, "madsweep kernel: %s\n", le.text);
        return -1;
    }
    int rc = 0;
    const config_setting_t *g = config_lookup(&cfg, "kernel");
    if (!g || !config_setting_is_group(g)) {
        fprintf(err, "madsweep kernel: %s: no group 'kernel'\n", path);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < KERN_NCONSTS; i++) {
        const kern_const_info *inf = kern_const_info_at(i);
        const config_setting_t *s = config_setting_get_member(g, inf->name);
        double v = 0;
        if (!s || (config_setting_type(s) != CONFIG_TYPE_FLOAT &&
                   config_setting_type(s) != CONFIG_TYPE_INT)) {
            fprintf(err, "madsweep kernel: %s:%d: key '%s' missing or not a number (%s)\n",
                    path, config_setting_source_line(s ? s : g), inf->name, inf->doc);
            rc = -1;
            break;
        }
        v = config_setting_type(s) == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
                                                        : (double)config_setting_get_int(s);
        if (!(v >= inf->lo && v <= inf->hi)) {
            fprintf(err, "madsweep kernel: %s:%d: key '%s' = %g not in %g to %g\n", path,
                    config_setting_source_line(s), inf->name, v, inf->lo, inf->hi);
            rc = -1;
            break;
        }
        *kern_const_ptr(k, i) = v;
    }
    config_destroy(&cfg);
    return rc;
}

static void kc_line(kc_state *s, char *line, FILE *out)
{
    char why[1100];
    kc_fields f;
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0' || *p == '\n' || *p == '\r') {
        fputc('\n', out);
        fflush(out);
        return;
    }
    int set = strncmp(p, "set ", 4) == 0;
    if (kc_split(set ? p + 4 : p, &f, why, sizeof why) != 0) {
        fprintf(out, "error: %s\n", why);
        return;
    }
    if (set) {
        if (kc_set(&s->consts, &f, why, sizeof why) != 0)
            fprintf(out, "error: %s\n", why);
        else
            fputs("ok\n", out);
        return;
    }
    double t = kc_eval(s, &f, why, sizeof why);
    if (t < 0)
        fprintf(out, "error: %s\n", why);
    else
        fprintf(out, "%.9g\n", t);
}

static void kc_help(FILE *f)
{
    fputs("usage: madsweep kernel [--configs DIR] [--consts FILE] KEY=VALUE...\n"
          "       madsweep kernel [--configs DIR] [--consts FILE] --batch < LINES\n"
          "every kernel: gpu=NAME kind=gemm|moe|attn|coll [scale_compute=F scale_mem=F "
          "scale_link=F]\n"
          "  gemm: m n k [groups=1] [dtype=bf16|fp8|fp8_block|mxfp8|nvfp4|int8|int8_wo|"
          "int4_wo|w4a16_mxfp4|w4a8_mxfp4_mxfp8] [quant=0|1 reuse=0]\n"
          "  moe:  tokens hidden inter topk experts [tp=1 ep=1 gated=1 dtype=bf16]\n"
          "  attn: phase=decode|prefill batch heads_q head_dim [heads_kv v_dim seq=1 ctx=0 "
          "window=0 kv_bytes=2 fp8_math=0 mla=0 causal=1 reuse=0]\n"
          "  coll: op=all_reduce|all_gather|reduce_scatter|alltoall bytes gpus "
          "[gpus_per_node algo=auto|ring|nvls|custom proto=auto|ll|ll128|simple]\n"
          "--ranges: print each constant's name, range and meaning\n"
          "batch lines 'set NAME=VALUE...' change constants (configs/kernels.cfg) for the "
          "lines after them; prints one line per line: seconds, ok, or 'error: WHY'\n",
          f);
}

static int kc_run(kc_state *s, const char *configs, const char *consts, int batch,
                  int nargs, char **args, FILE *out, FILE *err)
{
    s->dir = load_configs_dir(configs);
    char path[LOAD_PATH_MAX];
    snprintf(path, sizeof path, "%s/kernels.cfg", s->dir);
    if (kernel_cmd_consts(consts ? consts : path, s->dir, &s->consts, err) != 0)
        return 2;
    snprintf(path, sizeof path, "%s/hardware.cfg", s->dir);
    load_err le;
    if (load_open(&s->hw_cfg, path, s->dir, &le) != 0) {
        fprintf(err, "madsweep kernel: %s\n", le.text);
        return 2;
    }
    s->hw_list = config_lookup(&s->hw_cfg, "hardware");
    char line[KC_LINE];
    int rc = 0;
    if (batch) {
        while (fgets(line, sizeof line, stdin))
            kc_line(s, line, out);
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
            *(argv[i][3] == 'o' ? &configs : &consts) = argv[i + 1];
            i++;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            kc_help(out);
            return 0;
        } else if (strcmp(argv[i], "--ranges") == 0) {
            for (int j = 0; j < KERN_NCONSTS; j++) {
                const kern_const_info *inf = kern_const_info_at(j);
                fprintf(out, "%s %g %g %s\n", inf->name, inf->lo, inf->hi, inf->doc);
            }
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(err, "madsweep kernel: unknown option '%s'\n", argv[i]);
            kc_help(err);
            return 2;
        } else {
            first = i;
            break;
        }
    }
    if (batch == (first < argc)) {
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
