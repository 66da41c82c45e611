/*
 * kernel_line.h - one kernel described as KEY=VALUE text (the arguments
 * of `madsweep kernel`, a line of its --batch): the fields split, each
 * checked at its key (unknown or repeated keys, integers where the layer
 * counts things, 0/1 flags, a precision the GPU has no peak for, shapes
 * that do not divide), and parsed into a kernel of cost/kernel/ with its
 * GPU (hardware.cfg, loaded on first use) and scale factors.
 */
#ifndef MADSWEEP_KERNEL_LINE_H
#define MADSWEEP_KERNEL_LINE_H

#include <libconfig.h>
#include <stddef.h>

#include "../../cost/hw.h"
#include "../../cost/kernel/kernel.h"

#define KL_GPUS 64
#define KL_FIELDS 1024 /* a `set` line carries every constant and back-end field */

/* A line's fields, in order; used[i] is set when a parser read key i. */
typedef struct kl_fields {
    int n;
    char *key[KL_FIELDS];
    char *val[KL_FIELDS];
    unsigned char used[KL_FIELDS];
} kl_fields;

/* The GPUs named so far: catalogue entries of dir's hardware.cfg (list),
 * loaded when a line first names them. */
typedef struct kl_gpus {
    const char *dir;
    const config_setting_t *list;
    int n;
    char name[KL_GPUS][HW_NAME_MAX];
    hw_t hw[KL_GPUS];
} kl_gpus;

/* One parsed kernel: its GPU (index into kl_gpus), scale factors, how
 * the measurement was timed, and its shape. */
typedef struct kl_spec {
    int gpu, kind; /* kind: 0 gemm, 1 moe, 2 attn, 3 coll */
    int timing;    /* kern_timing of the measurement (harness floor) */
    double sc, sm, sl;
    union {
        kern_gemm g;
        kern_moe m;
        kern_attn a;
        kern_coll x;
    } u;
} kl_spec;

/* Splits `line` (modified) into fields: 0, or -1 with why set (a token
 * without '=', a key given twice, too many fields). */
int kl_split(char *line, kl_fields *f, char *why, size_t wn);

/* Parses a kernel line: 0, or -1 with why naming the key at fault. */
int kl_parse(kl_gpus *g, const kern_backends *bes, kl_fields *f, kl_spec *sp, char *why,
             size_t wn);

/* The context of sp's GPU at sp's scale: 0, or -1 with why. */
int kl_ctx(const kl_gpus *g, const kern_consts *k, const kl_spec *sp, kern_ctx *ctx,
           char *why, size_t wn);

/* The time (s) of a parsed kernel on context c (built for its GPU),
 * with its harness floor; < 0 outside the layer's domain. */
double kl_time(const kern_ctx *c, const kl_spec *sp);

#endif
