/*
 * engine.h - the two-stream event engine (compute stream, comm stream).
 *
 * An event occupies one stream for a duration. It starts when its stream
 * is free and every event it depends on has ended:
 *     start = max(clock[stream], max over deps of end(dep)).
 * Dependencies are event handles returned by engine_add(), so resolving
 * one costs O(1) and a whole evaluation is linear in the number of events
 * (the reference searches the other stream by substring for each one).
 * ENGINE_NONE stands for "no such event" and is ignored.
 *
 * engine_phase() starts a new phase (e.g. the backward pass) with both
 * clocks at a given time; handles of earlier phases stay valid.
 *
 * When created with record = true the engine also keeps, per event, its
 * stream, start, duration and a label (component, collective, pass,
 * layer) for trace output. Without recording no memory is touched but
 * the end-time array, which engine_reserve() sizes once per evaluation so
 * that engine_add() never allocates.
 */
#ifndef MADSWEEP_ENGINE_H
#define MADSWEEP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ENGINE_NONE (-1)

typedef int32_t engine_ev;

typedef enum engine_stream { ENGINE_COMP = 0, ENGINE_COMM = 1 } engine_stream;

/* Labels, used only for traces. Components and collectives are the names
 * of the reference's events ("Attn3_b_c_wg_rs"). */
typedef enum engine_part {
    ENGINE_PART_EMB = 0,
    ENGINE_PART_ATTN,
    ENGINE_PART_FC,
    ENGINE_PART_MLPBOT,
    ENGINE_PART_MLPTOP,
    ENGINE_NPARTS
} engine_part;

typedef enum engine_op {
    ENGINE_OP_COMPUTE = 0, /* the component's own compute */
    ENGINE_OP_WGT_AG,      /* FSDP weight all-gather */
    ENGINE_OP_ACT_AR,      /* TP activation all-reduce */
    ENGINE_OP_WG_AR,       /* DDP gradient all-reduce */
    ENGINE_OP_WG_RS,       /* FSDP gradient reduce-scatter */
    ENGINE_OP_ALL2ALL,     /* embedding all-to-all */
    ENGINE_OP_EMB_AR,      /* embedding gradient all-reduce */
    ENGINE_NOPS
} engine_op;

typedef struct engine_label {
    uint8_t part;  /* engine_part */
    uint8_t op;    /* engine_op */
    uint8_t bwd;   /* 0 forward, 1 backward */
    int32_t layer; /* -1 when the component has no layer index */
} engine_label;

typedef struct engine_record {
    double t_start;
    double duration;
    engine_label label;
    uint8_t stream;
} engine_record;

typedef struct engine {
    double clock[2];
    int64_t count[2];
    double *t_end;          /* per event */
    engine_record *records; /* per event, only when recording */
    size_t len, cap;
    bool record;
    bool full; /* an event was dropped: more than reserved (see engine_add) */
} engine;

/* Initializes an empty engine; no allocation until engine_reserve(). */
void engine_init(engine *e, bool record);
void engine_free(engine *e);

/* Clears all events and sets both clocks to 0. */
void engine_reset(engine *e);

/* Ensures room for n events in total; returns 0 or -1 (out of memory,
 * or more than ENGINE_MAX_EVENTS). */
#define ENGINE_MAX_EVENTS ((size_t)1 << 30)
int engine_reserve(engine *e, size_t n);

/* Sets both clocks to t: the next events start no earlier than t. */
void engine_phase(engine *e, double t);

/* Adds an event (capacity must have been reserved). Past the reserved
 * capacity nothing is written: the event is dropped, ENGINE_NONE
 * returned and e->full set until engine_reset (eval_run then reports
 * STATUS_NOMEM), so a wrong reservation can never write out of bounds.
 * Inline: an evaluation adds every event through it. */
static inline engine_ev engine_add(engine *e, engine_stream s, double duration,
                                   const engine_ev *deps, int ndeps, engine_label label)
{
    size_t len = e->len;
    if (len >= e->cap) { /* never past the reservation */
        e->full = true;
        return ENGINE_NONE;
    }
    double *t_end = e->t_end;
    double start = e->clock[s];
    for (int i = 0; i < ndeps; i++) {
        engine_ev d = deps[i];
        if (d != ENGINE_NONE && t_end[d] > start)
            start = t_end[d];
    }
    double end = start + duration;
    engine_ev id = (engine_ev)len;
    e->len = len + 1;
    e->count[s]++;
    e->clock[s] = end;
    t_end[len] = end;
    if (e->record) {
        engine_record *r = &e->records[id];
        r->t_start = start;
        r->duration = duration;
        r->label = label;
        r->stream = (uint8_t)s;
    }
    return id;
}

/* The later of the two stream clocks. */
double engine_now(const engine *e);

/* Writes the reference-style name of a label ("TransformerFC3_b_c_wg_rs")
 * into buf; returns snprintf's result. */
int engine_label_name(engine_label l, char *buf, size_t size);

#endif
