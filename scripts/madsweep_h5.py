#!/usr/bin/python3
"""madsweep_h5.py - a madsweep sweep file as a pandas DataFrame.

    import sys; sys.path.insert(0, "scripts"); import madsweep_h5
    df = madsweep_h5.load("detailed.h5")
    df[df.status_name == "ok"].groupby("hardware").tokens_per_s.max()

load(path) returns one row per row of /results, in id order, with:
  - every column of /results, strings decoded to str;
  - the axis values joined in through the *_idx columns, named as
    `madsweep best` names them: the value's name as model, system, task,
    strategy (its text); status_name from /axes/status; and the text
    columns of the axis tables (hardware, precision, ...) under their own
    name when no other table and no /results column has it, else as
    "AXIS.MEMBER" (task.type, model.type). join="all" joins the number
    columns of the axis tables as well (devices_per_node, params,
    nic_gbps_per_device, ...); join=None joins nothing.
Joined text columns are pandas categoricals (memory: one small code per
row). df.attrs["units"] maps each column to its unit (the files' `units`
attributes), df.attrs["file"] holds the root attributes (spec_text,
fidelity, versions, commit, counts). Unfinished files (complete = 0) are
refused unless complete_only=False.

Needs Debian's python3-h5py and python3-pandas (scripts/setup.sh installs
them); run it with /usr/bin/python3.
"""
import sys

import h5py
import numpy as np
import pandas as pd

GENERIC = ("name", "text")


def _decode(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


def _attrs(obj):
    out = {}
    for k, v in obj.attrs.items():
        if isinstance(v, bytes):
            v = _decode(v)
        elif isinstance(v, np.ndarray) and v.dtype.kind == "S":
            v = [_decode(x) for x in v]
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out


def _units(dset):
    names = dset.dtype.names or ()
    units = [_decode(u) for u in dset.attrs.get("units", [])]
    return dict(zip(names, units))


def _strings(values):
    """A bytes array as a categorical of str (cheap for repeated values)."""
    cat = pd.Categorical(values)
    return cat.rename_categories([_decode(c) for c in cat.categories])


def load(path, join="names", complete_only=True):
    """The sweep file at `path` as a DataFrame (see the module comment)."""
    if join not in ("names", "all", None):
        raise ValueError("join must be 'names', 'all' or None")
    with h5py.File(path, "r") as f:
        if "results" not in f or "complete" not in f.attrs:
            raise ValueError(f"{path} is not a madsweep sweep file")
        if complete_only and int(f.attrs["complete"]) != 1:
            raise ValueError(f"{path} is an unfinished sweep (complete = 0); "
                             "finish it with madsweep sweep --resume")
        res = f["results"]
        rows = res[:]
        units = _units(res)
        cols = {}
        for name in rows.dtype.names:
            col = rows[name]
            cols[name] = _strings(col) if col.dtype.kind == "S" \
                else np.ascontiguousarray(col)
        del rows
        df = pd.DataFrame(cols, copy=False)
        if join is not None and "axes" in f:
            joined = _join_axes(f, df, units, join == "all")
            df = pd.concat([df, pd.DataFrame(joined, index=df.index, copy=False)],
                           axis=1, copy=False)
        df.attrs["units"] = units
        df.attrs["file"] = _attrs(f)
    return df


def _categorical(values, index):
    """values[index] as a categorical, categories in the order of values."""
    values = np.asarray(values, dtype=object)
    cats = pd.unique(values)
    codes = pd.Index(cats).get_indexer(values)
    return pd.Categorical.from_codes(codes[index], categories=cats)


def _join_axes(f, df, units, numbers):
    tables = {}
    for axis in f["axes"]:
        if axis == "status":
            continue
        idx = ("batch" if axis == "global_batch" else axis) + "_idx"
        if idx in df.columns:
            tables[axis] = (f["axes"][axis][:], _units(f["axes"][axis]), idx)
    results = set(df.columns)
    uses = {}
    for axis, (t, _, _) in tables.items():
        for m in t.dtype.names:
            uses[m] = uses.get(m, 0) + 1
    new = {}
    for axis, (t, u, idx) in tables.items():
        index = df[idx].to_numpy()
        primary = next((m for m in ("name", "text", axis) if m in t.dtype.names),
                       None)
        for m in t.dtype.names:
            col = t[m]
            text = col.dtype.kind == "S"
            if m == primary and axis not in results:
                name = axis
            elif uses[m] == 1 and m not in GENERIC and m not in results \
                    and m not in new:
                name = m
            else:
                name = f"{axis}.{m}"
            if name in new or name in results or \
                    not (text or numbers or name == axis):
                continue
            if text:
                new[name] = _categorical([_decode(v) for v in col], index)
            else:
                new[name] = col[index]
            units[name] = u.get(m, "")
    if "status" in df.columns and "status" in f["axes"]:
        st = f["axes"]["status"][:]
        codes = np.asarray(st["code"], dtype=np.int64)
        lookup = np.full(max(256, int(codes.max()) + 1), len(codes))
        lookup[codes] = np.arange(len(codes))
        names = [_decode(n) for n in st["name"]] + ["unknown"]
        status = np.clip(df["status"].to_numpy().astype(np.int64), 0,
                         len(lookup) - 1)
        new["status_name"] = _categorical(names, lookup[status])
        units["status_name"] = "text"
    return new


def main(argv):
    if len(argv) != 2:
        print("usage: scripts/madsweep_h5.py FILE.h5   (prints the DataFrame's "
              "shape, columns and first rows)", file=sys.stderr)
        return 2
    df = load(argv[1])
    print(f"{len(df)} rows, {len(df.columns)} columns")
    print(", ".join(df.columns))
    with pd.option_context("display.width", 200, "display.max_columns", 12):
        print(df.head())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
