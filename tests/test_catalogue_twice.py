#!/usr/bin/env python3
"""test_catalogue_twice.py MADSWEEP SRC TMP - an entry named twice in any
catalogue (every list of every file of configs/) is refused by every
command that reads that catalogue, naming both lines (issue 29: `eval`
read a hardware.cfg with one entry twice and used one of the two).

For each catalogue file and list, a copy of configs/ gets the entry a
command uses appended a second time; each command that reads the file
must exit 2 with "is listed twice (first at FILE:LINE)". The commands
first run on the intact catalogues and must succeed there, so a case
cannot pass because its command fails for another reason. A point's or
a spec's own list with a name twice is refused the same way.
"""
import os
import re
import shutil
import subprocess
import sys

BIN, SRC, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
CONFIGS = os.path.join(SRC, "configs")
POINTS = os.path.join(CONFIGS, "points")
os.makedirs(TMP, exist_ok=True)
failures = []


def group_span(text, list_name, name):
    """(start, end) of the group of list `list_name` whose name is `name`
    (brace matching that skips strings and # comments)."""
    m = re.search(r"^%s\s*=\s*\(" % re.escape(list_name), text, re.M)
    assert m, (list_name, name)
    at = text.index('name = "%s"' % name, m.end())
    depth, i, start = 0, at, None
    while i > 0:  # back to the group's opening brace
        i -= 1
        if text[i] == "{":
            start = i
            break
    return start, matched(text, start, "{", "}", 0)


def matched(text, i, opening, closing, depth):
    """The index after the `closing` that brings `depth` (the brackets open
    at i) to 0, skipping strings and # comments."""
    while True:
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1)
        elif c == "#":
            i = text.index("\n", i)
        elif c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1


def twice(file, list_name, name):
    """A copy of configs/ whose `file` has entry `name` of `list_name`
    again at the end of the list; returns the copy's path."""
    d = os.path.join(TMP, "twice_%s_%s" % (file.replace(".cfg", ""), name))
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(CONFIGS, d)
    path = os.path.join(d, file)
    text = open(path, encoding="utf-8").read()
    a, b = group_span(text, list_name, name)
    m = re.search(r"^%s\s*=\s*\(" % re.escape(list_name), text, re.M)
    close = matched(text, m.end(), "(", ")", 1) - 1  # the list's closing parenthesis
    body = text[:close].rstrip()
    sep = "" if body.endswith(",") else ","
    text = body + sep + "\n  " + text[a:b] + "\n" + text[close:]
    open(path, "w", encoding="utf-8").write(text)
    return d


def run(args, stdin=None):
    p = subprocess.run([BIN] + args, input=stdin, capture_output=True, text=True,
                       timeout=120, cwd=TMP)
    return p.returncode, p.stdout + p.stderr


def spec(name, text):
    path = os.path.join(TMP, name)
    open(path, "w", encoding="utf-8").write(text)
    return path


DSPEC = spec("twice_detailed.cfg", """name = "twice";
models = ["llama2-7b"];
systems = ["h100-8"];
tasks = ["pretrain"];
global_batch = [64];
strategies = ( { tp = 8; } );
stacks = ["megatron-core"];
""")
MSPEC = spec("twice_madmax.cfg", """name = "twice";
fidelity = "madmax";
models = ["llama2_70b"];
systems = ["dc_A_2048"];
tasks = ["pretrain"];
global_batch = [2048];
strategies = "auto";
""")
DSYS = spec("twice_dsystem.cfg", """fidelity = "detailed";
model = "llama2-7b";
system = "h100-8";
task = { type = "pretrain"; tp = 8; pp = 1; dp = 1; micro_batch = 1; global_batch = 64; };
""")


def ev(point):
    return ["eval", os.path.join(POINTS, point)]


def sweep(path, out):
    return ["sweep", path, "-o", os.path.join(TMP, out), "--quiet"]


KERNEL = ["kernel", "gpu=h100-sxm-80g", "kind=gemm", "m=4096", "n=4096", "k=4096"]
BATCH = "%%file %s\n%%%%\n" % os.path.join(POINTS, "detailed_llama2_7b_finetune.cfg")
CASES = [
    ("hardware.cfg", "hardware", "h100-sxm-80g",
     [ev("detailed_llama2_7b_finetune.cfg"), sweep(DSPEC, "twice_d.h5"),
      ["list", "hardware"], KERNEL, ["eval", "--batch"]]),
    ("detailed_models.cfg", "models", "llama2-7b",
     [ev("detailed_llama2_7b_finetune.cfg"), sweep(DSPEC, "twice_d.h5"),
      ["list", "models"]]),
    ("detailed_systems.cfg", "systems", "h100-8",
     [["eval", DSYS], sweep(DSPEC, "twice_d.h5")]),
    ("stacks.cfg", "stacks", "unknown",
     [ev("detailed_llama2_7b_finetune.cfg"), ["list", "stacks"]]),
    ("stacks.cfg", "stacks", "vllm",
     [ev("detailed_llama2_70b_inference.cfg"), ["eval", "--batch"]]),
    ("stacks.cfg", "stacks", "megatron-core", [sweep(DSPEC, "twice_d.h5")]),
    ("models.cfg", "models", "llama2_70b",
     [ev("llama2_70b_dc_A_2048_fsdp.cfg"), sweep(MSPEC, "twice_m.h5")]),
    ("systems.cfg", "systems", "dc_A_2048",
     [ev("llama2_70b_dc_A_2048_fsdp.cfg"), sweep(MSPEC, "twice_m.h5"),
      ["list", "systems"]]),
    ("kernels.cfg", "backends", "cudnn", [KERNEL]),
]

for file, lst, name, commands in CASES:
    d = twice(file, lst, name)
    for args in commands:
        stdin = BATCH if args[-1] == "--batch" else None
        rc, text = run(args[:1] + ["--configs", CONFIGS] + args[1:], stdin)
        if rc != 0:
            failures.append("%s: fails on the intact catalogues (%d): %s" %
                            (" ".join(args), rc, text[-400:]))
            continue
        rc, text = run(args[:1] + ["--configs", d] + args[1:], stdin)
        if args[-1] == "--batch":  # one error line for the record, or exit 2
            ok = "is listed twice" in text
        else:
            ok = rc == 2 and re.search(r'"%s" is listed twice \(first at [^:]+%s:\d+\)' %
                                       (re.escape(name), re.escape(file)), text)
        if not ok:
            failures.append("%s with %s's '%s' twice: exit %d: %s" %
                            (" ".join(args), file, name, rc, text[-400:]))
        else:
            print("ok: %s refuses %s with '%s' twice" % (args[0], file, name))

# a point's own list and a spec's own list
hw = """{ name = "mine"; base = "h100-sxm-80g"; }"""
own = spec("twice_own_point.cfg", """fidelity = "detailed";
hardware = ( %s, %s );
model = "llama2-7b";
system = { name = "s"; hardware = "mine"; devices = 8; };
task = { type = "pretrain"; tp = 8; pp = 1; dp = 1; micro_batch = 1; global_batch = 64; };
""" % (hw, hw))
own_spec = spec("twice_own_spec.cfg", """name = "twice";
hardware = ( %s, %s );
models = ["llama2-7b"];
system_grid = ( { hardware = "mine"; nodes = [1]; } );
tasks = ["pretrain"];
global_batch = [64];
strategies = ( { tp = 8; } );
""" % (hw, hw))
for args in (["eval", own], sweep(own_spec, "twice_own.h5")):
    rc, text = run(args)
    if rc != 2 or '"mine" is listed twice' not in text:
        failures.append("%s: exit %d: %s" % (" ".join(args), rc, text[-400:]))
    else:
        print("ok: %s refuses its own list with 'mine' twice" % args[0])

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
