#!/bin/sh
# bad_case.sh - run one case of tests/data/bad and check its outcome.
#
#   tests/bad_case.sh CASE.cfg MADSWEEP TMPDIR MPIRUN-WORDS...
#
# A case is an input with a header of comment lines:
#   # command: eval | eval --json | sweep | sweep-np2 | sweep-self
#   # exit: N                (the exit status wanted)
#   # expect: TEXT           (in stdout or stderr; any number of lines)
#   # expect-out: TEXT       (in stdout)
#   # env: VAR=VALUE ...     (set for the command)
# sweep-np2 runs `sweep` under MPIRUN-WORDS with 2 ranks; sweep-self
# writes the output over the spec itself and checks the spec is intact.
# Every command gets 60 s: a timeout is a hang, and fails. JSON output
# must parse as strict UTF-8 JSON ($MADSWEEP_PYTHON).
set -u
case=${1:?usage: bad_case.sh CASE MADSWEEP TMPDIR MPIRUN...}
bin=$2
tmp=$3
shift 3
mkdir -p "$tmp"
name=$(basename "$case" .cfg)
out="$tmp/$name.out"
err="$tmp/$name.err"
cmd=$(sed -n 's/^# command: //p' "$case" | head -n 1)
want=$(sed -n 's/^# exit: //p' "$case" | head -n 1)
vars=$(sed -n 's/^# env: //p' "$case" | head -n 1)
rm -f "$tmp/$name.h5"
case "$cmd" in
  eval) timeout 60 env $vars "$bin" eval "$case" >"$out" 2>"$err" ;;
  "eval --json") timeout 60 env $vars "$bin" eval --json "$case" >"$out" 2>"$err" ;;
  sweep)
    timeout 60 env $vars "$bin" sweep "$case" -o "$tmp/$name.h5" --quiet >"$out" 2>"$err" ;;
  sweep-np2)
    timeout 60 env $vars "$@" "$bin" sweep "$case" -o "$tmp/$name.h5" --quiet >"$out" 2>"$err" ;;
  sweep-self)
    cp "$case" "$tmp/$name.cfg"
    timeout 60 env $vars "$bin" sweep "$tmp/$name.cfg" -o "$tmp/$name.cfg" --quiet >"$out" 2>"$err" ;;
  *) echo "$case: unknown command '$cmd'"; exit 1 ;;
esac
rc=$?
status=0
if [ "$rc" -eq 124 ]; then
  echo "$case: TIMED OUT after 60 s (a hang)"
  status=1
elif [ "$rc" != "$want" ]; then
  echo "$case: exit status $rc, want $want"
  status=1
fi
sed -n 's/^# expect: //p' "$case" | while IFS= read -r text; do
  if ! grep -qF -- "$text" "$out" "$err"; then
    echo "$case: missing message: $text"
    exit 1
  fi
done || status=1
sed -n 's/^# expect-out: //p' "$case" | while IFS= read -r text; do
  if ! grep -qF -- "$text" "$out"; then
    echo "$case: missing in stdout: $text"
    exit 1
  fi
done || status=1
if [ "$cmd" = "eval --json" ] && [ "$rc" -eq 0 ]; then
  "${MADSWEEP_PYTHON:-python3}" -c 'import json, sys
json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' "$out" ||
    { echo "$case: --json output is not strict UTF-8 JSON"; status=1; }
fi
if [ "$cmd" = "sweep-self" ] && ! cmp -s "$case" "$tmp/$name.cfg"; then
  echo "$case: the spec was overwritten"
  status=1
fi
if [ "$status" -ne 0 ]; then
  echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
else
  echo "$case: ok (exit $rc)"
fi
exit $status
