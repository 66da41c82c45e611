/*
 * report.c - text and JSON reports of an evaluated point.
 *
 * Every number printed here is computed from the point and its result;
 * the JSON prints doubles with 17 significant digits so that tools
 * reading it (the parity tests, validate.py) see the exact value.
 */
#include "report.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "../../cost/detailed.h"

void report_json_number(FILE *out, double v)
{
    if (!isfinite(v)) {
        fputs("null", out);
        return;
    }
    if (v == floor(v) && fabs(v) < 9.0e15) {
        fprintf(out, "%.1f", v);
        return;
    }
    fprintf(out, "%.17g", v);
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, at most U+10FFFF), or 0 when s[0] starts none. */
static size_t report_utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0)
        return 0;
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f;
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

void report_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char ch = *p;
        size_t n = report_utf8_len(p);
        if (n == 0) { /* not UTF-8 (a Latin-1 name?): U+FFFD, one byte */
            fputs("\\ufffd", out);
            p++;
            continue;
        }
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            fprintf(out, "\\u%04x", ch);
        else
            fwrite(p, 1, n, out);
        p += n;
    }
    fputc('"', out);
}

void report_json(FILE *out, const point_t *p, const result_t *r)
{
    char dense[PLAN_TEXT_MAX], emb[PLAN_TEXT_MAX];
    plan_format(&p->task.dense, dense, sizeof dense);
    plan_format(&p->task.emb, emb, sizeof emb);
    fputs("{\"fidelity\":", out);
    report_json_string(out, eval_fidelity_name(p->fidelity));
    fputs(",\"model\":", out);
    report_json_string(out, p->model.name);
    fputs(",\"system\":", out);
    report_json_string(out, p->cluster.name);
    fputs(",\"task\":", out);
    report_json_string(out, task_kind_name(p->task.kind));
    if (p->fidelity == EVAL_DETAILED) {
        char strat[160];
        detailed_strategy_text(&p->task.detailed, strat, sizeof strat);
        fputs(",\"strategy\":", out);
        report_json_string(out, strat);
        fputs(",\"stack\":", out);
        report_json_string(out, p->stack.name[0] ? p->stack.name : "ideal");
    } else {
        fputs(",\"dense_plan\":", out);
        report_json_string(out, dense);
        fputs(",\"embedding_plan\":", out);
        report_json_string(out, emb);
    }
    fputs(",\"status\":", out);
    report_json_string(out, status_name((status_code)r->status));
    for (size_t i = 0; i < result_nfields; i++) {
        const result_field *f = &result_fields[i];
        fprintf(out, ",\"%s\":", f->name);
        if (f->type == RESULT_I64)
            fprintf(out, "%.0f", result_get(r, f));
        else
            report_json_number(out, result_get(r, f));
    }
    fputs("}\n", out);
}

/* Energy and cost of an evaluated point (cost/energy.h), with the power
 * and price they come from. */
static void report_energy(FILE *out, const point_t *p, const result_t *r)
{
    bool det = p->fidelity == EVAL_DETAILED;
    double board = det ? p->system.hw.board_power_w : p->cluster.board_power_w;
    double idle = det ? p->system.hw.idle_power_w : p->cluster.idle_power_w;
    double price = det ? p->system.hw.price_per_hour_usd : p->cluster.price_per_hour_usd;
    if (!isfinite(r->energy_per_iteration_j) && !isfinite(r->cost_per_iteration_usd)) {
        fprintf(out, "Energy  not known (no board power or price for this system's "
                     "hardware)\n");
        return;
    }
    bool llm = p->model.kind == MODEL_LLM;
    fprintf(out, "Energy  %.4g J per iteration, %.4g J per %s (devices only: "
                 "%.0f W busy, %.0f W waiting)\n",
            r->energy_per_iteration_j,
            llm ? r->energy_per_token_j : r->energy_per_sample_j,
            llm ? "token" : "sample", board, idle > 0 ? idle : 0.3 * board);
    fprintf(out, "Cost    $%.4g per iteration, $%.4g per %s ($%.2f per device-hour)\n",
            r->cost_per_iteration_usd,
            llm ? r->cost_per_million_tokens_usd : r->cost_per_sample_usd * 1e6,
            llm ? "million tokens" : "million samples", price);
}

static void report_pct_line(FILE *out, const char *label, double part,
                            double whole)
{
    if (!isfinite(part))
        return; /* not computed for this point */
    double pct = whole > 0 ? 100.0 * part / whole : 0.0;
    double ms = part * 1e3;
    /* a value that prints as zero prints as 0, never -0 (issue 19) */
    if (ms > -0.0005 && ms < 0.0005)
        ms = 0.0;
    if (pct > -0.005 && pct < 0.005)
        pct = 0.0;
    fprintf(out, "  %-26s %12.3f ms  %6.2f %%\n", label, ms, pct);
}

static void report_mem_line(FILE *out, const char *label, double bytes,
                            double capacity)
{
    if (isnan(bytes))
        return; /* not applicable (serving: no gradients, no optimizer) */
    fprintf(out, "  %-26s %12.3f GB  %6.2f %% of capacity\n", label,
            bytes / 1e9, capacity > 0 ? 100.0 * bytes / capacity : 0.0);
}

static void report_widths(FILE *out, const int64_t *w, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(out, "%s%lld", i ? "-" : "", (long long)w[i]);
}

static void report_system_detailed(FILE *out, const topo_system_t *sys, int dtype)
{
    const hw_t *h = &sys->hw;
    fprintf(out, "System  %s: %lld x %s\n", sys->name, (long long)sys->devices,
            h->name);
    fprintf(out, "  peak %-19s %12.1f TFLOP/s per device\n",
            hw_dtype_name((hw_dtype)dtype), h->peak_flops[dtype] / 1e12);
    fprintf(out, "  memory                   %12.1f GB at %.0f GB/s\n",
            h->mem_capacity_bytes / 1e9, h->mem_bw_bytes_per_s / 1e9);
    for (int i = 0; i < sys->topo.nlevels; i++) {
        const topo_level *l = &sys->topo.level[i];
        fprintf(out, "  network level %d          %12lld devices, %.1f GB/s "
                     "per device, %.1f us per step, 1:%.0f\n",
                i, (long long)l->span, l->bw / 1e9, l->alpha_s * 1e6,
                l->oversub);
    }
}

/* The detailed fidelity's memory breakdown against the device capacity,
 * then the status of an infeasible point; returns -1 when the point was
 * not evaluated (nothing more to report). */
static int report_memory(FILE *out, const result_t *r, double cap, bool dlrm)
{
    fprintf(out, "Memory per device\n");
    report_mem_line(out, dlrm ? "weights (MLPs + tables)" : "weights",
                    r->mem_weights_bytes_per_device, cap);
    report_mem_line(out, dlrm ? "gradients (MLPs)" : "gradients",
                    r->mem_grads_bytes_per_device, cap);
    report_mem_line(out, "optimizer states", r->mem_optimizer_bytes_per_device, cap);
    report_mem_line(out, "activations", r->mem_activations_bytes_per_device, cap);
    if (!dlrm)
        report_mem_line(out, "KV cache", r->mem_kv_cache_bytes_per_device, cap);
    report_mem_line(out, "total", r->mem_total_bytes_per_device, cap);
    if (r->status == STATUS_OK)
        return 0;
    fprintf(out, "Status  %s: %s\n", status_name((status_code)r->status),
            status_text((status_code)r->status));
    return -1;
}

/* The detailed fidelity's DLRM report: tables, MLPs, the embedding
 * shard per device, and the sparse / dense split of time. */
static void report_text_dlrm(FILE *out, const point_t *p, const result_t *r)
{
    const model_t *m = &p->model;
    const task_t *t = &p->task;
    const task_detailed_t *d = &t->detailed;
    double bot, top, emb;
    detailed_dlrm_params(m, &bot, &top, &emb);
    int64_t n = d->dp > 0 ? d->dp : 1;
    detailed_dlrm_emb s;
    detailed_dlrm_shard(m, d, n, (double)r->global_batch, &s);
    char strat[160];
    detailed_strategy_text(d, strat, sizeof strat);
    fprintf(out, "Model   %s (dlrm): %lld tables of %s%lld x %lld, pooling %s%lld, "
                 "%lld B per element\n",
            m->name, (long long)m->tables, m->d.n_tables > 0 ? "(listed; mean) " : "",
            (long long)m->rows_per_table, (long long)m->emb_dim,
            m->d.n_tables > 0 ? "(mean) " : "", (long long)m->pooling,
            (long long)(m->bytes_per_emb_param > 0 ? m->bytes_per_emb_param : 4));
    fprintf(out, "  bottom MLP               ");
    report_widths(out, m->d.bot_mlp, m->d.bot_n);
    bool dcn = m->d.interaction == MODEL_INTERACTION_DCNV2;
    if (dcn)
        fprintf(out, "\n  cross network            %lld layers of rank %lld on %lld",
                (long long)m->d.cross_layers, (long long)m->d.cross_rank,
                (long long)((m->tables + 1) * m->emb_dim));
    fprintf(out, "\n  top MLP                  %lld-",
            (long long)(dcn ? (m->tables + 1) * m->emb_dim
                            : m->emb_dim + m->tables * (m->tables + 1) / 2));
    report_widths(out, m->d.top_mlp, m->d.top_n);
    fprintf(out, dcn ? " (after the DCNv2 cross network)\n" : " (after the dot interaction)\n");
    fprintf(out, "  parameters               %12.3f B (MLPs %.3f M, tables %.3f B)\n",
            (bot + top + emb) / 1e9, (bot + top) / 1e6, emb / 1e9);
    report_system_detailed(out, &p->system, d->dtype);
    fprintf(out, "Task    %s, fidelity %s\n", task_kind_name(t->kind),
            eval_fidelity_name(p->fidelity));
    fprintf(out, "  strategy                 %s\n", strat);
    if (t->kind == TASK_FINETUNE)
        fprintf(out, "  frozen                   %s%s%s\n",
                t->freeze_emb ? "embeddings " : "", t->freeze_bot_mlp ? "bottom-MLP " : "",
                t->freeze_top_mlp ? "top-MLP" : "");
    fprintf(out, "  global batch             %12lld samples (%lld per device)\n",
            (long long)r->global_batch, (long long)(r->global_batch / n));
    if (d->emb_sharding == TASK_EMB_AUTO)
        fprintf(out, "  embedding placement      %lld replicated, %lld whole, %lld split "
                     "(per-table planner)\n",
                (long long)r->emb_dp_tables, (long long)r->emb_whole_tables,
                (long long)r->emb_split_tables);
    else
        fprintf(out, "  embedding shard          %12.0f shards of %.0f rows x %.0f, "
                     "%.3g lookups per iteration\n",
                s.shards, s.rows, s.width, s.lookups);
    if (report_memory(out, r, p->system.hw.mem_capacity_bytes, true) != 0)
        return;
    double it = r->iteration_time_s;
    fprintf(out, "Breakdown (summed per device, share of iteration time)\n");
    report_pct_line(out, "compute: MLPs, interaction", r->compute_gemm_s, it);
    report_pct_line(out, "compute: embeddings", r->compute_emb_s, it);
    report_pct_line(out, "comm: all-to-all", r->comm_alltoall_s, it);
    report_pct_line(out, "comm: reduce-scatter", r->comm_reducescatter_s, it);
    report_pct_line(out, "comm: all-gather", r->comm_allgather_s, it);
    report_pct_line(out, "comm: all-reduce (MLPs)", r->comm_allreduce_s, it);
    report_pct_line(out, "exposed communication", r->comm_exposed_s, it);
    fprintf(out, "Iteration time             %12.3f ms\n", it * 1e3);
    fprintf(out, "MFU                        %12.1f %%\n", 100.0 * r->mfu);
    fprintf(out, "Throughput                 %12.1f samples/s\n",
            r->throughput_samples_per_s);
    report_energy(out, p, r);
}

/* The detailed fidelity's report: its own inputs (hardware, topology,
 * strategy) and figures (memory breakdown, pipeline, MFU, inference). */
/* The model lines of a detailed LLM point: its shape, experts, latent
 * attention, parameters (all and per device) and forward FLOPs. */
static void report_model_detailed(FILE *out, const model_t *m, const task_detailed_t *d)
{
    double params = 0, per_device = 0;
    detailed_params(m, d, &params, &per_device);
    fprintf(out, "Model   %s: %lld layers, hidden %lld, ffn %lld, %lld heads "
                 "(%lld kv), seq %lld, vocab %lld, %s\n",
            m->name, (long long)m->layers, (long long)m->hidden,
            (long long)m->ffn, (long long)m->heads, (long long)m->kv_heads,
            (long long)m->seq_len, (long long)m->vocab,
            m->mlp == MODEL_MLP_SWIGLU ? "SwiGLU" : "GeLU");
    if (m->d.experts > 0)
        fprintf(out, "  experts                  %12lld routed, top-%lld, "
                     "%lld shared, expert ffn %lld\n",
                (long long)m->d.experts, (long long)m->d.top_k,
                (long long)m->d.shared_experts, (long long)m->d.expert_ffn);
    if (m->d.kv_lora_rank > 0)
        fprintf(out, "  latent attention         q rank %lld, kv rank %lld, qk head %lld+%lld "
                     "RoPE, v head %lld\n",
                (long long)m->d.q_lora_rank, (long long)m->d.kv_lora_rank,
                (long long)m->d.qk_nope_head_dim, (long long)m->d.qk_rope_head_dim,
                (long long)m->d.v_head_dim);
    int64_t alt = detailed_alt_layers(m);
    if (alt > 0 && m->d.linear_value_heads > 0)
        fprintf(out, "  attention kinds          %lld Gated DeltaNet (%lld/%lld heads of %lld/%lld), "
                     "%lld full\n",
                (long long)alt, (long long)m->d.linear_key_heads,
                (long long)m->d.linear_value_heads, (long long)m->d.linear_key_head_dim,
                (long long)m->d.linear_value_head_dim, (long long)(m->layers - alt));
    else if (alt > 0)
        fprintf(out, "  attention kinds          %lld sliding window (%lld tokens), %lld full\n",
                (long long)alt, (long long)m->d.sliding_window, (long long)(m->layers - alt));
    if (m->d.attn_sinks || m->d.attn_output_gate || m->d.index_topk > 0) {
        const char *x[3] = {m->d.attn_sinks ? "sinks" : NULL,
                            m->d.attn_output_gate ? "output gate" : NULL,
                            m->d.index_topk > 0 ? "sparse attention (indexer, top-k keys)" : NULL};
        fprintf(out, "  attention extras        ");
        for (int i = 0, n = 0; i < 3; i++)
            if (x[i])
                fprintf(out, "%s %s", n++ ? "," : "", x[i]);
        fprintf(out, "\n");
    }
    fprintf(out, "  parameters               %12.3f B (%.3f B per device)\n",
            params / 1e9, per_device / 1e9);
    fprintf(out, "  forward FLOPs per seq    %12.3f TFLOP\n",
            detailed_model_flops(m, m->causal) / 1e12);
}

/* The serving lines of a detailed LLM inference point: requests in
 * flight, TTFT, TPOT, token rates, the SLA and a disaggregated prefill
 * pool. */
static void report_serving(FILE *out, const point_t *p, const result_t *r)
{
    fprintf(out, "Requests in flight         %12lld (at most %lld: KV cache %.0f %% used)\n",
            (long long)r->concurrency_resolved, (long long)r->concurrency_max,
            100.0 * r->kv_use);
    fprintf(out, "Time to first token        %12.3f ms mean (p90 %.3f, p99 %.3f: model "
                 "estimates)\n",
            r->ttft_s * 1e3, r->ttft_p90_s * 1e3, r->ttft_p99_s * 1e3);
    if (isfinite(r->ttft_wave_max_s))
        fprintf(out, "  in waves                 %12.3f ms for the last of a wave (fixed "
                     "lengths: requests that start together return together; model "
                     "estimate)\n",
                r->ttft_wave_max_s * 1e3);
    fprintf(out, "Time per output token      %12.3f ms (ITL p50 %.3f, p99 %.3f ms; %.1f "
                 "tokens/s per user)\n",
            r->tpot_s * 1e3, r->itl_p50_s * 1e3, r->itl_p99_s * 1e3,
            r->tokens_per_s_per_user);
    fprintf(out, "Output tokens/s            %12.0f (%.1f per GPU; %.0f with the prompts; "
                 "%.2f requests/s)\n",
            r->output_tokens_per_s, r->output_tokens_per_s_per_device,
            r->total_tokens_per_s, r->requests_per_s);
    if (p->task.detailed.ttft_max_s > 0.0 || p->task.detailed.tpot_max_s > 0.0)
        fprintf(out, "SLA                        %12s (goodput %.2f requests/s)\n",
                r->sla_met == 1.0 ? "met" : "missed", r->goodput_requests_per_s);
    if (p->prefill.on) {
        const point_prefill *f = &p->prefill;
        fprintf(out, "Prefill pool               %12.0f x %s (tp%lld pp%lld%s), the system "
                     "decodes\n",
                r->prefill_devices, f->system.hw.name, (long long)f->tp, (long long)f->pp,
                f->rate_matched ? ", rate-matched" : "");
        fprintf(out, "  capacity                 %12.2f requests/s prefill, %.2f decode "
                     "(%s binds; %.0f prefill replicas match the decode pool)\n",
                r->prefill_capacity_requests_per_s, r->decode_capacity_requests_per_s,
                r->prefill_decode_rate_ratio < 1.0 ? "prefill" : "decode",
                r->prefill_replicas_matched);
        fprintf(out, "  KV transfer              %12.3f ms per request (%.3f ms of it in "
                     "TTFT)\n",
                r->kv_transfer_s * 1e3, r->kv_transfer_exposed_s * 1e3);
    }
}

static void report_text_detailed(FILE *out, const point_t *p,
                                 const result_t *r)
{
    if (p->model.kind == MODEL_DLRM) {
        report_text_dlrm(out, p, r);
        return;
    }
    const model_t *m = &p->model;
    const topo_system_t *sys = &p->system;
    const task_detailed_t *d = &p->task.detailed;
    char strat[160];
    detailed_strategy_text(d, strat, sizeof strat);

    report_model_detailed(out, m, d);

    const hw_t *h = &sys->hw;
    report_system_detailed(out, sys, d->dtype);

    fprintf(out, "Task    %s, fidelity %s\n", task_kind_name(p->task.kind),
            eval_fidelity_name(p->fidelity));
    fprintf(out, "  strategy                 %s\n", strat);
    fprintf(out, "  stack                    %s%s%s\n", p->stack.name[0] ? p->stack.name : "ideal",
            p->stack.summary[0] ? ": " : "", p->stack.summary);
    if (p->task.kind != TASK_INFERENCE &&
        (d->micro_batch_auto || d->vpp_auto || d->recompute == TASK_RECOMPUTE_AUTO)) {
        static const char *const rc_names[] = {"none", "selective", "full"};
        fprintf(out, "  resolved                 micro-batch %lld, vpp %lld, recompute %s\n",
                (long long)r->micro_batch_resolved, (long long)r->vpp_resolved,
                r->recompute_resolved >= 0 && r->recompute_resolved < 3
                    ? rc_names[r->recompute_resolved]
                    : "?");
    }
    if (p->task.kind == TASK_FINETUNE)
        fprintf(out, "  frozen                   %lld of %lld layers%s\n",
                (long long)d->frozen_layers, (long long)m->layers,
                p->task.freeze_emb ? ", embeddings" : "");
    fprintf(out, "  global batch             %12lld sequences\n",
            (long long)r->global_batch);
    if (report_memory(out, r, h->mem_capacity_bytes, false) != 0)
        return;
    double it = r->iteration_time_s;
    fprintf(out, "Breakdown (summed per device, share of iteration time)\n");
    report_pct_line(out, "compute", r->compute_gemm_s, it);
    report_pct_line(out, "comm: all-reduce", r->comm_allreduce_s, it);
    report_pct_line(out, "comm: all-gather", r->comm_allgather_s, it);
    report_pct_line(out, "comm: reduce-scatter", r->comm_reducescatter_s, it);
    report_pct_line(out, "comm: all-to-all", r->comm_alltoall_s, it);
    report_pct_line(out, "comm: pipeline sends", r->comm_p2p_s, it);
    report_pct_line(out, "pipeline bubble", r->pipeline_bubble_s, it);
    report_pct_line(out, "exposed communication", r->comm_exposed_s, it);
    if (p->task.kind == TASK_INFERENCE && p->model.kind == MODEL_LLM) {
        report_serving(out, p, r);
    } else if (p->task.kind == TASK_INFERENCE) {
        fprintf(out, "Time to first token        %12.3f ms\n", r->ttft_s * 1e3);
        fprintf(out, "Time per output token      %12.3f ms\n", r->tpot_s * 1e3);
    } else {
        fprintf(out, "Iteration time             %12.3f ms\n", it * 1e3);
        fprintf(out, "MFU                        %12.1f %%\n", 100.0 * r->mfu);
    }
    fprintf(out, "Band                       %12.3f .. %.3f ms (uncertain stack and hardware "
                 "facts at their fast and slow ends)\n",
            r->iteration_time_lo_s * 1e3, r->iteration_time_hi_s * 1e3);
    fprintf(out, "Throughput                 %12.1f sequences/s, %.0f tokens/s "
                 "(%.1f per GPU)\n",
            r->throughput_samples_per_s, r->tokens_per_s, r->tokens_per_s_per_device);
    report_energy(out, p, r);
}

void report_text(FILE *out, const point_t *p, const result_t *r)
{
    if (p->fidelity == EVAL_DETAILED) {
        report_text_detailed(out, p, r);
        return;
    }
    const model_t *m = &p->model;
    const cluster_t *c = &p->cluster;
    const task_t *t = &p->task;
    char dense[PLAN_TEXT_MAX], emb[PLAN_TEXT_MAX];
    plan_format(&t->dense, dense, sizeof dense);
    plan_format(&t->emb, emb, sizeof emb);

    fprintf(out, "Model   %s (%s)\n", m->name, model_kind_name(m->kind));
    fprintf(out, "  parameters               %12.3f B (%.2f %% dense)\n",
            m->total_params / 1e9, 100.0 * m->dense_params / m->total_params);
    fprintf(out, "  size                     %12.3f GB dense, %.3f GB embeddings\n",
            m->dense_params * (double)m->bytes_per_dense_param / 1e9,
            m->emb_params * (double)m->bytes_per_emb_param / 1e9);
    fprintf(out, "  forward FLOPs per sample %12.3f GFLOP\n", m->total_flops / 1e9);
    fprintf(out, "  lookup bytes per sample  %12.3f MB\n", m->lookup_bytes / 1e6);

    fprintf(out, "System  %s: %lld devices, %lld nodes of %lld\n", c->name,
            (long long)c->devices, (long long)c->nodes,
            (long long)c->devices_per_node);
    fprintf(out, "  effective FLOPS (dtype)  %12.2f TFLOP/s per device\n",
            cluster_eff_flops(c, m->bytes_per_dense_param) / 1e12);
    fprintf(out, "  effective memory BW      %12.2f GB/s, capacity %.1f GB\n",
            c->eff_mem_bw / 1e9, c->mem_capacity_bytes / 1e9);
    fprintf(out, "  intra / inter-node BW    %12.2f / %.2f GB/s per device\n",
            c->eff_intra_bw / 1e9, c->eff_inter_bw / 1e9);

    fprintf(out, "Task    %s, fidelity %s\n", task_kind_name(t->kind),
            eval_fidelity_name(p->fidelity));
    fprintf(out, "  dense plan               %s (local batch %lld)\n", dense,
            (long long)t->local_batch_dense);
    fprintf(out, "  embedding plan           %s (local batch %lld)\n", emb,
            (long long)t->local_batch_emb);
    fprintf(out, "  global batch             %12lld samples\n",
            (long long)r->global_batch);
    fprintf(out, "  weights per device       %12.3f GB of %.1f GB%s\n",
            r->mem_weights_bytes_per_device / 1e9, r->mem_capacity_bytes_per_device / 1e9,
            r->mem_fits == 0.0 ? ": EXCEEDS the device memory (the plan does not fit; "
                                 "MAD-Max's figures below are computed regardless)"
                               : "");
    if (r->status != STATUS_OK) {
        fprintf(out, "Status  %s: %s\n", status_name((status_code)r->status),
                status_text((status_code)r->status));
        return;
    }

    double it = r->iteration_time_s;
    double comm = r->comm_alltoall_s + r->comm_allreduce_s +
                  r->comm_allgather_s + r->comm_reducescatter_s;
    fprintf(out, "Breakdown (share of iteration time)\n");
    report_pct_line(out, "compute: GEMM", r->compute_gemm_s, it);
    report_pct_line(out, "compute: embedding", r->compute_emb_s, it);
    report_pct_line(out, "comm: all-to-all", r->comm_alltoall_s, it);
    report_pct_line(out, "comm: all-reduce", r->comm_allreduce_s, it);
    report_pct_line(out, "comm: all-gather", r->comm_allgather_s, it);
    report_pct_line(out, "comm: reduce-scatter", r->comm_reducescatter_s, it);
    fprintf(out, "Communication (share of all communication)\n");
    report_pct_line(out, "exposed", r->comm_exposed_s, comm);
    report_pct_line(out, "overlapped", r->comm_overlapped_s, comm);
    fprintf(out, "Events  %lld compute, %lld communication\n",
            (long long)r->events_compute, (long long)r->events_comm);
    fprintf(out, "Iteration time             %12.3f ms\n", it * 1e3);
    fprintf(out, "Throughput                 %12.1f samples/s\n",
            r->throughput_samples_per_s);
    report_energy(out, p, r);
}
