/*
 * spec_load.h - sweep specifications: the axes of a design space.
 *
 * A spec is a libconfig file (configs/sweeps/) with these keys:
 *   name        label of the sweep (optional)
 *   fidelity    "detailed" (default) or "madmax"; the fidelity selects the
 *               catalogues: madmax models.cfg and systems.cfg, detailed
 *               detailed_models.cfg, detailed_systems.cfg and hardware.cfg
 *   models      list of catalogue names or inline model groups, or "all"
 *   systems     list of catalogue names or inline system groups, or "all"
 *               (optional when system_grid is given); a group may start
 *               from a catalogue entry, { name = "h100-2048"; base =
 *               "h100-1024"; devices = 2048; } (load.h)
 *   system_grid list of groups generating systems from a catalogue base:
 *               { base = "dc_A_128"; nodes = [2, 16, 256];
 *                 devices_per_node = [8];           (default: the base's)
 *                 nic_scale = [0.5, 1.0, 2.0]; }    (default [1.0])
 *               each combination is a system named
 *               "BASE/NODESxDPN/nicSCALE" with devices = nodes x dpn and the
 *               NIC bandwidth scaled; one-node systems use intra-node
 *               bandwidth only (allreduce_intra_fraction = 1).
 *               Both fidelities' groups also take board_power_w,
 *               idle_power_w and price_per_hour_usd, overriding the
 *               hardware's for the systems they generate.
 *               Detailed fidelity: groups over hardware generations,
 *               { hardware = ["a100-80g", "h100-sxm-80g"];
 *                                (names: the spec's list `hardware`, then
 *                                 hardware.cfg; or a list with groups)
 *                 nodes = [1, 8, 64];   or devices = [1024, 2048];
 *                                (whole numbers of devices_per_node; an
 *                                 error names the nearest valid sizes)
 *                 devices_per_node = [8];   (default: the scale-up domain)
 *                 nic_gbps_per_device = [400.0];  (default: the hw's) or
 *                 nic_scale = [1.0, 2.0]; }  (times the hw's NIC) }
 *               each combination a system "HW/NODESxDPN" (+ "/nicG" for
 *               nic_gbps_per_device, "/nicxS" for nic_scale), devices =
 *               nodes x dpn, the scale-up domain dpn devices (topology as
 *               load_system_detailed). Detailed groups also cross
 *                 scale = { peak_bf16_flops = [1.0, 1.5];
 *                           mem_bw_bytes_per_s = [1.0, 2.0]; ... };
 *                                (any numeric hardware key, load.h
 *                                 load_hw_number; factors on the hw's)
 *                 pod_devices = [...]; pod_oversubscription = [...];
 *                 collective = ["ring", "tree", "hierarchical"];
 *               named "+/tree/ovsO/podP/bf16x1.5/hbmbwx2" (a short name
 *               per key, in the order given); the factors go to
 *               spec.scale (worker/spec.h) and /axes/system scale_KEY. A
 *               generated name longer than HW_NAME_MAX - 1 or equal to
 *               another system's is an error.
 *   hardware    detailed: custom hardware generations for system_grid,
 *               groups with every hardware key or a `base` and the keys
 *               it overrides: { name = "h100-2xnic"; base = "h100-sxm-80g";
 *               nic_bytes_per_s = 100e9; }
 *   stacks      software stacks (cost/stack.h) the points run on: a list
 *               of names of configs/stacks.cfg or inline stack groups, or
 *               "all"; default ["unknown"] (the catalogue's default stack,
 *               as for a point without a `stack` key). Detailed fidelity
 *               only: a madmax spec has one stack "none" and refuses the
 *               key. The stack holds the facts a strategy does not state
 *               (attention kernel, overlaps, launch and element-wise costs,
 *               stage split, gradient-reduction bytes; cost/stack.h); the
 *               auto candidates state their ZeRO stage, sequence
 *               parallelism, interleaving and micro-batch themselves. Every
 *               row names its stack (column `stack`, and stack_idx).
 *   elasticities  detailed: true to give every ok row the elasticities
 *               of its step time to compute, HBM, scale-up and scale-out
 *               bandwidth (cost/elastic.h; four more evaluations a point)
 * The keys and their help (`madsweep keys`) are the tables of speckeys.h;
 * an unknown key is an error naming the closest one.
 *   tasks       list of task types ("pretrain", "finetune", "inference")
 *               or groups { type = "finetune"; name = "ft_emb";
 *               freeze_emb = true; freeze_dense = false;
 *               min_frozen_layer = 40; freeze_top_mlp = false;
 *               freeze_bot_mlp = false; } (freeze keys default to false,
 *               min_frozen_layer to the model's layers, capped at them).
 *               Detailed tasks take instead of freeze_dense and
 *               min_frozen_layer: frozen_layers = N (the first N layers
 *               frozen, capped at the model's), with freeze_emb,
 *               freeze_top_mlp, freeze_bot_mlp; and precision = "bf16"
 *               (default) / "fp16" / "fp8" / "tf32" / "fp32", and for
 *               inference prompt_tokens (default the model's seq_len) and
 *               decode_tokens (default 128); serving concurrency
 *               (requests in flight, "max" or "sla") with ttft_max_s and
 *               tpot_max_s, and prefill = { hardware = "h100-sxm-80g";
 *               devices = "auto"; tp = 8; ... } (a disaggregated prefill
 *               pool, the keys of a point's with tp required; the row's
 *               system, strategy and stack are the decode pool; without
 *               hardware, the system's; load.h load_point_prefill_pool).
 *   global_batch  array of global batch sizes (samples per step;
 *               detailed: sequences per iteration, or for inference the
 *               sequences decoded concurrently), or a group of such
 *               arrays per model kind, { llm = [2304]; dlrm = [55296]; }:
 *               a batch applies to the models of the kinds that list it
 *               (the others skip it, rule invalid:batch-kind)
 *   strategies  "auto" (every candidate of the fidelity's auto set) or a
 *               list of groups { dense = "fsdp:node,ddp:rest";
 *               embedding = "mp:all"; } with degrees that are numbers or
 *               node / all / rest (see cost/autoplan.h); the detailed
 *               fidelity takes "auto" (its candidates: cost/detailed/auto.c)
 *               or a list of groups of a task's strategy keys { tp = 8;
 *               pp = 4; vpp = 5; zero_stage = 1; ... } (load_task_strategy;
 *               dp the rest of the devices, vpp and micro_batch may be
 *               "auto", the stack's defaults for what a group leaves out);
 *               only the candidates valid for a point's model, system,
 *               stack, task and batch become points (worker/space.h)
 *   chunk       ids per work chunk on average, 1 to 2^20 (default 4096;
 *               raised so that a sweep has at most 2^22 chunks); chunks
 *               are cut by estimated cost (worker/chunks.h), none longer
 *               than 4 x chunk ids; a rank buffers one chunk of rows
 *   keep        what the sweep keeps of its points (default "all": one row
 *               per point, in id order). Reduced in situ, in memory
 *               bounded by the answer:
 *               { top = K; by = "FIGURE"; group = [...]; }  the K best
 *                 feasible points per group by one figure of `madsweep
 *                 eval --json` (default throughput_samples_per_s);
 *               { pareto = ["F1", "F2"]; group = [...]; }  the Pareto
 *                 frontier of the feasible points per group over 2 to 4
 *                 figures;
 *               { feasible = true; group = [...]; }  the rows with status
 *                 ok, and the per-group counts;
 *               feasible = true may be added to top and pareto (which rank
 *               feasible points only anyway). Figures are ranked in their
 *               direction (cost/result.h result_direction: rates and mfu
 *               maximized, times, bytes and counts minimized); ties go to
 *               the lower point id; points whose figure is NaN are not
 *               kept. group lists keys: model, system, stack, task,
 *               global_batch (or batch), strategy, devices, nodes, and for
 *               the detailed fidelity hardware (the system's generation);
 *               none: one group. The kept rows go to /results in id order
 *               (for top, the ids `madsweep best --top K --by FIGURE
 *               --group ...` prints for the same sweep with keep = "all");
 *               /groups counts per group the points evaluated, per status
 *               code, and kept (worker/kept.h).
 * Every error is one line "FILE:LINE: ... (key 'k')". The spec owns its
 * axis arrays (freed by spec_free); it keeps the whole file text, which
 * sweep output files store verbatim, and the text and SHA-256 of every
 * catalogue file and @include it read (`files`, see sources_collect.h; the
 * stacks.cfg of the stacks axis among them).
 */
#ifndef MADSWEEP_SPEC_LOAD_H
#define MADSWEEP_SPEC_LOAD_H

#include "../../worker/spec.h"
#include "../load/load.h"
#include "sources_collect.h"

/* spec_load with a stacks fragment (overlay.h; NULL: none) laid over
 * the catalogue's stacks.cfg, where the spec's stack names are found. */
int spec_load_stacks(const char *path, const char *configs_dir, const char *stacks_path,
                     spec *s, load_err *err);

/* Loads a spec; returns 0, or -1 with err set (s left empty). */
int spec_load(const char *path, const char *configs_dir, spec *s,
              load_err *err);

#endif
