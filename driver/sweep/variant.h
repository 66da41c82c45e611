/*
 * variant.h - the variants of a hardware generation that a detailed
 * system_grid group generates beyond its sizes and NIC (spec_load.h):
 *   scale = { KEY = [factors]; ... }  any numeric hardware key (load.h
 *                                     load_hw_number), crossed;
 *   pod_devices, pod_oversubscription, collective.
 * Invariants: every generated system's name says what was scaled
 * ("h100-sxm-80g/128x8/tree/pod32/bf16x1.5/hbmbwx2"), is at most
 * HW_NAME_MAX - 1 characters (else an error, never a truncation) and
 * differs from every other system's of the spec; spec.scale holds each
 * system's factor per scaled key (1 where it scales none) and
 * spec.scale_fig the figure itself.
 */
#ifndef MADSWEEP_VARIANT_H
#define MADSWEEP_VARIANT_H

#include <libconfig.h>
#include <stddef.h>
#include <stdint.h>

#include "../../worker/spec.h"
#include "../load/load.h"

/* The hardware figures one detailed grid group scales: for each key of
 * its `scale = { KEY = [factors]; ... }`, the key's index in
 * sp->scale_keys and its factors; plus the pod, oversubscription and
 * collective lists it crosses. */
typedef struct variant_axes {
    int nax;
    int key[SPEC_SCALE_MAX];
    double *f[SPEC_SCALE_MAX];
    int nf[SPEC_SCALE_MAX];
    double *pod, *ovs;
    int npod, novs, nalg;
    int alg[4];
} variant_axes;

/* Reads the scale, pod_devices, pod_oversubscription and collective
 * keys of grid group g (registering scaled keys in sp->scale_keys);
 * variant_free releases what it read, also after a failure. */
int variant_read(spec *sp, const config_setting_t *g, variant_axes *x, load_err *err);
void variant_free(variant_axes *x);

/* Combinations of the scale factors (-1 past int64), and combination c
 * of them on
 * hardware hw: the scaled hardware, the factors per sp scale key and the
 * name part ("/bf16x1.5/hbmbwx2"). */
int64_t variant_combos(const variant_axes *x);
/* -1 with err set (at group g's scale key) when a scaled figure is 0 on
 * hw (its variants would be identical) or a whole-number figure (such
 * as scaleup_devices) would not stay whole. */
int variant_combo(const spec *sp, const config_setting_t *g, const variant_axes *x,
                  int64_t c, const hw_t *hw, hw_t *out, double fac[SPEC_SCALE_MAX],
                  char *tail, size_t size, load_err *err);

/* Appends text `fmt` to a system name; -1 with err set (at g) when the
 * name would pass HW_NAME_MAX - 1 characters. */
int variant_name_add(char *name, const config_setting_t *g, load_err *err,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Grows sp's systems and factor rows by `add`; variant_push appends y
 * (sizes and NIC set) as variant v of x's pod, oversubscription and
 * collective axes, with factors fac and name part tail, its topology
 * derived. */
int variant_grow(spec *sp, const config_setting_t *g, int64_t add, load_err *err);
int variant_push(spec *sp, const config_setting_t *g, topo_system_t *y,
                 const variant_axes *x, int64_t v, const double *fac, const char *tail,
                 load_err *err);

/* After every grid group: the scaled figures (spec.scale_fig), and no two
 * systems with one name; first[g] is the index of grid group g's first
 * system (the systems before first[0] come from key 'systems'), so that
 * a clash names both places; the madmax grid checks its names the same
 * way. */
int variant_figures(spec *sp, const config_setting_t *at, load_err *err);
int variant_names_apart(const spec *sp, const config_setting_t *grid,
                        const int64_t *first, int ngroups, load_err *err);

#endif
