/*
 * servesim.c - step-level simulations of a serving engine (servesim.h):
 * each step formed from the requests' states and costed by sv_step, the
 * requests followed one by one.
 */
#include "servesim.h"

#include <stdlib.h>

#include "unit.h"

/* A request of the closed loop. */
typedef struct sim_req {
    double sent, arrive, first, prefilled, chunk;
    int64_t gen;
    int measured, retired;
} sim_req;

/* The step a closed loop runs next: its prompts' chunks (chunk > 0 in
 * the requests) and decodes, from the requests eligible by `form` (the
 * time its batch is formed). Returns the step's time, 0 when it has
 * nothing to run. */
static double sim_form(const sv_model *k, const sim_cfg *g, sim_req *q, double form)
{
    double d = 0.0, cd = 0.0, np = 0.0, tok = 0.0, ctx = 0.0;
    int waiting = 0;
    for (int64_t i = 0; i < g->C; i++) {
        q[i].chunk = 0.0;
        if (!q[i].retired && q[i].prefilled < g->isl && q[i].arrive <= form)
            waiting = 1;
    }
    int decodes = !(g->prefill_first && waiting);
    if (decodes)
        for (int64_t i = 0; i < g->C; i++)
            if (!q[i].retired && q[i].prefilled >= g->isl && q[i].gen < g->osl) {
                d += 1.0;
                cd += g->isl + (double)q[i].gen;
            }
    cd = d > 0.0 ? cd / d : 0.0;
    double budget = g->K - d;
    /* prompts in arrival order (earliest first) */
    while (budget > 0.0) {
        int64_t best = -1;
        for (int64_t i = 0; i < g->C; i++)
            if (!q[i].retired && q[i].prefilled < g->isl && q[i].arrive <= form &&
                q[i].chunk == 0.0 &&
                (best < 0 || q[i].arrive < q[best].arrive))
                best = i;
        if (best < 0)
            break;
        double c = dt_min(g->isl - q[best].prefilled, budget);
        q[best].chunk = c;
        np += 1.0;
        tok += c;
        ctx += q[best].prefilled;
        budget -= c;
    }
    if (np == 0.0 && d == 0.0)
        return 0.0;
    return sv_step(k, np, np > 0.0 ? tok / np : 0.0, np > 0.0 ? ctx / np : 0.0, d, cd, NULL);
}

sim_out sim_closed(const sv_model *k, const sim_cfg *g)
{
    sim_req *q = calloc((size_t)g->C, sizeof *q);
    CU_ASSERT_FATAL(q != NULL);
    int64_t total = g->rounds > 0 ? g->rounds * g->C : -1, sent = g->C;
    for (int64_t i = 0; i < g->C; i++) {
        q[i].arrive = g->front;
        q[i].measured = g->rounds > 0;
        if (g->rounds == 0) { /* desynchronized: already running */
            q[i].prefilled = g->isl;
            q[i].gen = 1 + i * (g->osl - 1) / g->C;
            q[i].arrive = 0.0;
        }
    }
    double t = 0.0, start_prev = 0.0, tpot = 0.0, ttft = 0.0, t0 = 0.0, out = 0.0;
    int64_t n_tpot = 0, n_ttft = 0, left = g->C;
    for (int64_t s = 0; left > 0 && (g->rounds > 0 || s < g->steps); s++) {
        if (g->rounds == 0 && s == g->warm) {
            t0 = t;
            out = 0.0;
        }
        double form = g->overlap ? start_prev : t;
        double dt = sim_form(k, g, q, form);
        if (dt == 0.0) { /* idle until the next arrival */
            double next = -1.0;
            for (int64_t i = 0; i < g->C; i++)
                if (!q[i].retired && q[i].prefilled < g->isl &&
                    (next < 0.0 || q[i].arrive < next))
                    next = q[i].arrive;
            CU_ASSERT_FATAL(next >= 0.0);
            t = start_prev = dt_max(t, next); /* an idle engine forms a step at once */
            s--;
            continue;
        }
        start_prev = t;
        t += dt;
        int pstep = 0; /* a prefill-first prefill step: no decodes ran */
        for (int64_t i = 0; i < g->C; i++)
            pstep |= g->prefill_first && q[i].chunk > 0.0;
        for (int64_t i = 0; i < g->C; i++) {
            sim_req *r = &q[i];
            if (r->retired)
                continue;
            if (r->chunk > 0.0) {
                r->prefilled += r->chunk;
                if (r->prefilled >= g->isl) { /* its first token */
                    r->gen = 1;
                    r->first = t;
                    out += 1.0;
                    if (r->measured) {
                        ttft += t - r->sent;
                        n_ttft++;
                    }
                }
            } else if (r->prefilled >= g->isl && r->gen < g->osl && !pstep) {
                r->gen++;
                out += 1.0;
            }
            if (r->prefilled < g->isl || r->gen < g->osl)
                continue;
            /* returned: the client sends the next request */
            if (r->measured && g->osl > 1) {
                tpot += (t - r->first) / (double)(g->osl - 1);
                n_tpot++;
            }
            if (total >= 0 && sent >= total) {
                r->retired = 1;
                left--;
                continue;
            }
            sent++;
            *r = (sim_req){.sent = t, .arrive = t + g->front,
                           .measured = g->rounds > 0 || s >= g->warm};
        }
    }
    free(q);
    CU_ASSERT_FATAL(n_ttft > 0);
    return (sim_out){n_tpot > 0 ? tpot / (double)n_tpot : 0.0, ttft / (double)n_ttft,
                     out / (t - t0)};
}

sim_out sim_burst(const sv_model *k, int64_t N, int64_t C, double isl, int64_t osl,
                  const int64_t *out, double K)
{
    double *pre = calloc((size_t)N, sizeof *pre), *first = calloc((size_t)N, sizeof *first);
    int64_t *gen = calloc((size_t)N, sizeof *gen);
    CU_ASSERT_FATAL(pre != NULL && first != NULL && gen != NULL);
    double t = 0.0, tpot = 0.0, ttft = 0.0, tokens = 0.0;
    int64_t left = N, next = C < N ? C : N; /* requests [0, next) admitted */
    while (left > 0) {
        double d = 0.0, cd = 0.0, budget = K, np = 0.0, tok = 0.0, ctx = 0.0;
        for (int64_t i = 0; i < next; i++)
            if (pre[i] >= isl && gen[i] < (out ? out[i] : osl)) {
                d += 1.0;
                cd += isl + (double)gen[i];
            }
        cd = d > 0.0 ? cd / d : 0.0;
        budget -= d;
        int64_t lo = N, hi = 0; /* the prompts this step prefills: [lo, hi) */
        for (int64_t i = 0; i < next && budget > 0.0; i++)
            if (pre[i] < isl) {
                double c = dt_min(isl - pre[i], budget);
                lo = i < lo ? i : lo;
                hi = i + 1;
                np += 1.0;
                tok += c;
                ctx += pre[i];
                budget -= c;
            }
        t += sv_step(k, np, np > 0.0 ? tok / np : 0.0, np > 0.0 ? ctx / np : 0.0, d, cd, NULL);
        budget = K - d;
        int64_t done = 0;
        for (int64_t i = 0; i < next; i++) {
            int64_t o = out ? out[i] : osl;
            if (pre[i] >= isl) {
                if (gen[i] < o && ++gen[i] == o) {
                    tpot += (t - first[i]) / (double)(o - 1);
                    tokens += (double)o;
                    left--;
                    done++;
                }
            } else if (i >= lo && i < hi) {
                double c = dt_min(isl - pre[i], budget);
                pre[i] += c;
                budget -= c;
                if (pre[i] >= isl) {
                    gen[i] = 1;
                    first[i] = t;
                    ttft += k->host_req + t;
                }
            }
        }
        next = next + done < N ? next + done : N;
    }
    free(pre);
    free(first);
    free(gen);
    return (sim_out){tpot / (double)N, ttft / (double)N, tokens / t};
}

