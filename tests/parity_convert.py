#!/usr/bin/env python3
"""parity_convert.py - prepare the MAD-Max parity cases for test_parity.

usage: tests/parity_convert.py PARITY.json OUTDIR

For every case of PARITY.json (outputs of the MAD-Max reference, see
docs/model.md, "Parity") this writes the case's model, system and
task JSON files, converts them with the real scripts/madmax2cfg.py command
line into OUTDIR/CASE.cfg, and writes the reference's figures, renamed to
madsweep's result names, into OUTDIR/CASE.expected (libconfig). The case
list goes to OUTDIR/index.txt. test_parity then evaluates and compares.
"""
import json
import os
import subprocess
import sys

# reference figure -> madsweep result field
NAMES = {
    "iteration_time_s": "iteration_time_s",
    "throughput_samples_s": "throughput_samples_per_s",
    "global_batch": "global_batch",
    "t_gemm_s": "compute_gemm_s",
    "t_emb_s": "compute_emb_s",
    "t_all2all_s": "comm_alltoall_s",
    "t_allreduce_s": "comm_allreduce_s",
    "t_allgather_s": "comm_allgather_s",
    "t_reducescatter_s": "comm_reducescatter_s",
    "exposed_comm_s": "comm_exposed_s",
    "overlapped_comm_s": "comm_overlapped_s",
    "n_comp_events": "events_compute",
    "n_comm_events": "events_comm",
    "mem_weights_bytes_per_device": "mem_weights_bytes_per_device",
}


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    src, out = argv[1], argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    conv = os.path.join(here, "..", "scripts", "madmax2cfg.py")
    os.makedirs(os.path.join(out, "json"), exist_ok=True)
    with open(src) as f:
        cases = json.load(f)
    names = []
    for c in cases:
        name = c["case"]
        paths = []
        for part in ("model", "system", "task"):
            p = os.path.join(out, "json", "%s.%s.json" % (name, part))
            with open(p, "w") as f:
                json.dump(c[part], f, indent=1)
            paths.append(p)
        res = subprocess.run([sys.executable, conv] + paths,
                             capture_output=True, text=True)
        if res.returncode != 0:
            sys.stderr.write("%s: madmax2cfg failed: %s" % (name, res.stderr))
            return 1
        with open(os.path.join(out, name + ".cfg"), "w") as f:
            f.write(res.stdout)
        lines = ["# reference figures of %s (%s, %s)" % (name, c.get("model_key"),
                                                        c.get("system_file")),
                 "expected = {"]
        for k, v in c["expected"].items():
            if k not in NAMES:
                sys.stderr.write("%s: unknown reference figure %s\n" % (name, k))
                return 1
            lines.append("  %s = %s;" % (NAMES[k], repr(float(v))))
        lines.append("};")
        with open(os.path.join(out, name + ".expected"), "w") as f:
            f.write("\n".join(lines) + "\n")
        names.append(name)
    with open(os.path.join(out, "index.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    print("parity_convert: %d cases written to %s" % (len(names), out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
