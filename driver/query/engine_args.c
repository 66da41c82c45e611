/*
 * engine_args.c - a serving point's launch command for its engine
 * (engine_args.h). Flags as the engines document them:
 *   vLLM          `vllm serve MODEL`: --tensor-parallel-size,
 *                 --pipeline-parallel-size, --data-parallel-size with
 *                 --enable-expert-parallel (attention DP, the experts over
 *                 DP x TP), --max-num-seqs, --max-num-batched-tokens,
 *                 --kv-cache-dtype, --async-scheduling, --all2all-backend,
 *                 --kv-transfer-config (docs.vllm.ai, "Engine Arguments";
 *                 ai-dynamo/aiconfigurator@095f58a51
 *                 backend_config_mapping.yaml for the DP/EP mapping);
 *   SGLang        `python -m sglang.launch_server --model-path MODEL`:
 *                 --tp-size, --pp-size, --dp-size with --enable-dp-attention,
 *                 --ep-size, --moe-a2a-backend deepep, --max-running-requests,
 *                 --chunked-prefill-size, --kv-cache-dtype, --enable-mixed-chunk,
 *                 --disaggregation-mode, --disaggregation-transfer-backend
 *                 (docs.sglang.ai "Server Arguments"; sgl-project/sglang
 *                 server_args.py);
 *   TensorRT-LLM  `trtllm-serve MODEL --backend pytorch|tensorrt`: --tp_size,
 *                 --pp_size, --ep_size, --max_batch_size, --max_num_tokens,
 *                 and the LLM API options file (--extra_llm_api_options:
 *                 enable_attention_dp, kv_cache_config.dtype,
 *                 disable_overlap_scheduler, cache_transceiver_config);
 *                 disaggregated: `trtllm-serve disaggregated -c FILE`
 *                 (nvidia.github.io/TensorRT-LLM, "trtllm-serve").
 * The limits printed are the ones the evaluation used: the task's (the
 * launch's) or the stack's defaults for the GPU's memory.
 * Invariant: writes nothing but text; the point is not changed.
 */
#include "engine_args.h"

#include <math.h>
#include <string.h>

/* One pool of a deployment as an engine launches it. */
typedef struct ea_pool {
    const char *role;        /* "" colocated, "prefill", "decode" */
    int64_t workers;         /* replicas (servers) of the pool */
    int64_t tp, pp, adp, ep; /* madsweep's degrees: tp counts the attention-DP ranks */
    int64_t seqs, budget;    /* per attention rank; tokens per step */
    const hw_t *hw;
} ea_pool;

/* The limit the evaluation used: the launch's, else the stack's tier for
 * the GPU's memory, else the stack's own. */
static int64_t ea_limit(const stack_desc *s, const hw_t *hw, int64_t given, bool budget)
{
    if (given > 0)
        return given;
    const stack_tier *t = stack_tier_at(s, hw->mem_capacity_bytes);
    int64_t v = t ? (budget ? t->token_budget : t->max_seqs) : 0;
    return v > 0 ? v : budget ? s->token_budget : s->max_seqs;
}

static const char *ea_kv(const task_detailed_t *t, const char *fp8)
{
    if (t->kv_dtype <= 0)
        return NULL; /* the engine's "auto" (the rule the evaluation took) */
    return t->kv_dtype - 1 == HW_FP8 ? fp8 : t->kv_dtype - 1 == HW_INT8 ? "int8" : "auto";
}

static void ea_vllm(FILE *out, const point_t *p, const ea_pool *o)
{
    const task_detailed_t *t = &p->task.detailed;
    fprintf(out, "vllm serve \"$MODEL\" --tensor-parallel-size %lld",
            (long long)(o->tp / o->adp));
    if (o->pp > 1)
        fprintf(out, " --pipeline-parallel-size %lld", (long long)o->pp);
    if (o->adp > 1)
        fprintf(out, " --data-parallel-size %lld", (long long)o->adp);
    if (o->ep > 1 || o->adp > 1)
        fputs(" --enable-expert-parallel", out);
    if (o->adp > 1 && t->moe_flex_dispatch == 1)
        fputs(" --all2all-backend deepep_low_latency", out);
    fprintf(out, " --max-num-seqs %lld --max-num-batched-tokens %lld", (long long)o->seqs,
            (long long)o->budget);
    const char *kv = ea_kv(t, "fp8");
    if (kv)
        fprintf(out, " --kv-cache-dtype %s", kv);
    if (p->stack.overlap)
        fputs(" --async-scheduling", out);
    if (o->role[0])
        fputs(" --kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'",
              out);
    fputc('\n', out);
}

static void ea_sglang(FILE *out, const point_t *p, const ea_pool *o)
{
    const task_detailed_t *t = &p->task.detailed;
    fprintf(out, "python -m sglang.launch_server --model-path \"$MODEL\" --tp-size %lld",
            (long long)o->tp);
    if (o->pp > 1)
        fprintf(out, " --pp-size %lld", (long long)o->pp);
    if (o->adp > 1)
        fprintf(out, " --dp-size %lld --enable-dp-attention", (long long)o->adp);
    if (o->ep > 1)
        fprintf(out, " --ep-size %lld", (long long)o->ep);
    if (o->adp > 1 && o->ep > 1 &&
        (t->moe_flex_dispatch == 1 || (t->moe_flex_dispatch < 0 && p->stack.moe_a2a)))
        fputs(" --moe-a2a-backend deepep", out);
    fprintf(out, " --max-running-requests %lld --chunked-prefill-size %lld",
            (long long)(o->seqs * o->adp), (long long)o->budget);
    const char *kv = ea_kv(t, "fp8_e4m3");
    if (kv)
        fprintf(out, " --kv-cache-dtype %s", kv);
    if (!p->stack.prefill_apart)
        fputs(" --enable-mixed-chunk", out);
    if (o->role[0])
        fprintf(out, " --disaggregation-mode %s --disaggregation-transfer-backend nixl", o->role);
    fputc('\n', out);
}

static void ea_trtllm(FILE *out, const point_t *p, const ea_pool *o)
{
    const task_detailed_t *t = &p->task.detailed;
    const char *backend = p->stack.launch_s.v > 0.0 ? "tensorrt" : "pytorch";
    const char *file = o->role[0] ? o->role : "serve";
    fprintf(out, "trtllm-serve \"$MODEL\" --backend %s --tp_size %lld --pp_size %lld", backend,
            (long long)o->tp, (long long)o->pp);
    if (o->ep > 1)
        fprintf(out, " --ep_size %lld", (long long)o->ep);
    fprintf(out, " --max_batch_size %lld --max_num_tokens %lld --extra_llm_api_options %s.yml\n",
            (long long)o->seqs, (long long)o->budget, file);
    const char *kv = ea_kv(t, "fp8");
    fprintf(out, "#   %s.yml: enable_attention_dp: %s", file, o->adp > 1 ? "true" : "false");
    if (kv)
        fprintf(out, "; kv_cache_config: {dtype: %s}", kv);
    if (!p->stack.overlap || !strcmp(o->role, "prefill"))
        fputs("; disable_overlap_scheduler: true", out);
    if (o->role[0])
        fputs("; cache_transceiver_config: {backend: DEFAULT}", out);
    fputc('\n', out);
}

static void ea_pool_write(FILE *out, const point_t *p, const ea_pool *o)
{
    const char *eng = p->stack.engine;
    fprintf(out, "# %s%s%lld x %s: tp %lld pp %lld attention-DP %lld ep %lld; %lld sequences "
            "per attention rank, %lld tokens a step\n",
            o->role[0] ? o->role : "colocated", o->role[0] ? " pool, " : ", ",
            (long long)o->workers, o->hw->name, (long long)o->tp, (long long)o->pp,
            (long long)o->adp, (long long)o->ep, (long long)o->seqs, (long long)o->budget);
    if (o->workers > 1)
        fprintf(out, "# one server per replica (%lld of them), behind a router\n",
                (long long)o->workers);
    if (!strcmp(eng, "vllm"))
        ea_vllm(out, p, o);
    else if (!strcmp(eng, "sglang"))
        ea_sglang(out, p, o);
    else
        ea_trtllm(out, p, o);
}

int engine_args_write(FILE *out, FILE *err, const point_t *p, const result_t *r)
{
    const char *eng = p->stack.engine;
    if (p->fidelity != EVAL_DETAILED || p->task.kind != TASK_INFERENCE ||
        (strcmp(eng, "vllm") && strcmp(eng, "sglang") && strcmp(eng, "trtllm"))) {
        fprintf(err, "madsweep point --engine-args: the point is no serving point of an engine "
                "with launch flags (stack '%s' names engine '%s'; vllm, sglang, trtllm have "
                "them)\n", p->stack.name, eng);
        return -1;
    }
    const task_detailed_t *t = &p->task.detailed;
    fprintf(out, "# %s on %s, stack %s; MODEL: the checkpoint of model '%s'\n",
            p->model.name, p->system.name, p->stack.name, p->model.name);
    ea_pool d = {.role = p->prefill.on ? "decode" : "",
                 .workers = t->dp > 0 ? t->dp : 1,
                 .tp = t->tp > 0 ? t->tp : 1,
                 .pp = t->pp > 0 ? t->pp : 1,
                 .adp = t->attn_dp > 1 ? t->attn_dp : 1,
                 .ep = t->ep > 1 ? t->ep : 1,
                 .hw = &p->system.hw};
    d.seqs = ea_limit(&p->stack, d.hw, t->max_seqs, false);
    d.budget = ea_limit(&p->stack, d.hw, t->token_budget, true);
    if (p->prefill.on) {
        const point_prefill *f = &p->prefill;
        int64_t per = f->tp * f->pp;
        double dev = isfinite(r->prefill_devices) ? r->prefill_devices : (double)f->system.devices;
        ea_pool q = {.role = "prefill",
                     .workers = per > 0 ? (int64_t)(dev / (double)per + 0.5) : 1,
                     .tp = f->tp,
                     .pp = f->pp,
                     .adp = f->attn_dp > 1 ? f->attn_dp : 1,
                     .ep = f->ep > 1 ? f->ep : 1,
                     .hw = &f->system.hw};
        q.seqs = ea_limit(&p->stack, q.hw, f->max_seqs, false);
        q.budget = ea_limit(&p->stack, q.hw, f->token_budget, true);
        ea_pool_write(out, p, &q);
    }
    ea_pool_write(out, p, &d);
    if (p->prefill.on && !strcmp(eng, "trtllm"))
        fputs("trtllm-serve disaggregated -c disagg.yml  # context_servers: the prefill pool's "
              "urls, generation_servers: the decode pool's\n", out);
    return 0;
}
