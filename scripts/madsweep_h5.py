#!/usr/bin/python3
"""madsweep_h5.py - a madsweep sweep file as a pandas DataFrame.

    import sys; sys.path.insert(0, "scripts"); import madsweep_h5
    df = madsweep_h5.load("detailed.h5")
    df[df.status_name == "ok"].groupby("hardware").tokens_per_s.max()

load(path) returns one row per row of the file, in id order, with:
  - every column of its logical row (the file's /parts/row type in format
    2: /results joined with /parts/KIND of each row's kind, a column a
    row's tables do not store as its fill, NaN, 0 or ""; and 0 for every
    number of an invalid:* row; format 1: /results itself), strings
    decoded to str;
  - the axis values joined in through the *_idx columns, named as
    `madsweep best` names them: the value's name as model, system, task,
    strategy (its text); status_name from /axes/status; and the text
    columns of the axis tables (hardware, precision, ...) under their own
    name when no other table and no /results column has it, else as
    "AXIS.MEMBER" (task.type, model.type). join="all" joins the number
    columns of the axis tables as well (devices_per_node, params,
    nic_gbps_per_device, ...); join=None joins nothing.
Joined text columns are pandas categoricals (memory: one small code per
row).

load(path, columns=[...], where="...") reads a large file in a bounded
memory: only the named columns (any /results column, any joined axis
column, text or number, e.g. "model", "task", "hardware",
"nic_gbps_per_device", "status_name") and only the rows the conditions
keep, in the language of `madsweep best --where`: comma-separated
"COLUMN OP VALUE" terms, all of which hold, OP one of < <= > >= == !=,
numbers compared as numbers (NaN satisfies only !=), texts as texts,
status also by name (status==infeasible:memory), a VALUE quoted ('...')
to hold commas. The rows are read chunk by chunk (chunk_rows rows, only
the fields needed), conditions on axis columns are decided once per axis
entry, and only the kept rows of the named columns are held. Either
argument alone works too (columns=None: every column of the file that
the join mode gives; where=None: every row). There is no Parquet export:
pyarrow is not packaged in Debian 12 (apt-cache policy python3-pyarrow
finds no candidate); df.to_csv() or HDF5 itself serve other tools. df.attrs["units"] maps each column to its unit (the files' `units`
attributes), df.attrs["file"] holds the root attributes (spec_text,
fidelity, versions, commit, counts). Unfinished files (complete = 0) are
refused unless complete_only=False, which reads the rows of the chunks
written (/progress) and no other.

load() checks every row against its chunk's digest (/digests, the 64-bit
digest of worker/digest.c, as `madsweep best` does) and raises ValueError
naming the file, the chunk and its rows when one does not match: a flipped
bit is refused, not read. The check reads every byte of every row once
(4 to 7 s for a file of 1 M detailed rows, 640 MB, on a loaded 2-core
machine, where load(columns=[3 columns]) itself takes 0.2 s and a whole
load 17 s); a file is checked once per process while it is unchanged
(inode, size, modification time); verify=False skips it.
verify_digests(f) checks an open file.

rows(f, fields=None, start=0, stop=None) reads logical rows of an open
h5py file as a numpy structured array without pandas (scripts/plot.py).

Needs Debian's python3-h5py and python3-pandas (scripts/setup.sh installs
them; rows() needs only h5py and numpy); run it with /usr/bin/python3.
"""
import bisect
import os
import sys

import h5py
import numpy as np

try:
    import pandas as pd
except ImportError:  # rows() works without it
    pd = None

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


class Rows:
    """The logical rows of an open sweep file (file format 1 or 2).

    Format 2 stores a row's common part in /results and the figures of its
    kind (training, serving, serving_disagg, dlrm: /parts/kind_of by model
    and task) in /parts/KIND, one row per row of that kind in row order;
    /parts/index holds, per chunk, its first row and the part rows before
    it. A sequential read continues each part where the last one ended.
    """

    def __init__(self, f):
        self.f = f
        self.res = f["results"]
        self.format = int(f.attrs.get("format_version", 1))
        if self.format not in (1, 2):
            raise ValueError(f"{f.filename}: file format {self.format}; this "
                             "script reads formats 1 and 2 (a newer madsweep wrote it)")
        self.n = self.res.shape[0]
        self.parts = []
        if self.format == 1:
            self.row = self.res
        else:
            self.row = f["parts/row"]
            nm, nt = f["axes/model"].shape[0], f["axes/task"].shape[0]
            self.part_of = np.full((nm, nt), -1, dtype=np.int64)
            for r in f["parts/kind_of"][:]:
                kind = _decode(r["kind"])
                if "parts/" + kind not in f:
                    continue
                if kind not in self.parts:
                    self.parts.append(kind)
                self.part_of[int(r["model_idx"]), int(r["task_idx"])] = \
                    self.parts.index(kind)
        self.dtype = self.row.dtype
        self.names = self.dtype.names
        self.stored = [set(f["parts/" + k].dtype.names) for k in self.parts]
        self.common = set(self.res.dtype.names)
        self.next, self.pos = 0, np.zeros(len(self.parts), dtype=np.int64)

    def units(self):
        return _units(self.row)

    def _kinds(self, blk):
        return self.part_of[blk["model_idx"], blk["task_idx"]]

    def spans(self):
        """The row ranges [(start, stop)] that hold rows: every row, but in
        an unfinished file of keep = "all" (rows at their ids, the space
        allocated in advance) only those of the chunks written (/progress
        1); the others are zeros, not points."""
        f = self.f
        if int(f.attrs.get("complete", 1)) == 1 or \
                _decode(f.attrs.get("keep", b"all")) != "all" or \
                "progress" not in f or "chunk_starts" not in f:
            return [(0, self.n)] if self.n else []
        done = f["progress"][:] == 1
        lo = np.minimum(f["chunk_starts"][:].astype(np.int64), self.n)
        out = []
        for c in np.flatnonzero(done[:len(lo) - 1]):
            a, b = int(lo[c]), int(lo[c + 1])
            if out and out[-1][1] == a:
                out[-1] = (out[-1][0], b)
            elif b > a:
                out.append((a, b))
        return out

    def _seek(self, start):
        """Positions the parts at row `start` from /parts/index (the entries
        of the chunks written: an unfinished file has no other)."""
        idx = self.f["parts/index"][:]
        if "progress" in self.f:
            done = self.f["progress"][:]
            keep = np.zeros(len(idx), dtype=bool)
            keep[0] = len(idx) > 0
            keep[:len(done)] |= done[:len(idx)] == 1
            idx = idx[keep]
        c = max(bisect.bisect_right(idx["row"].tolist(), start) - 1, 0)
        row = int(idx["row"][c]) if len(idx) else 0
        pos = np.array([int(idx[k][c]) if len(idx) else 0 for k in self.parts],
                       dtype=np.int64)
        if row < start:
            k = self._kinds(self.res.fields(["model_idx", "task_idx"])[row:start])
            pos += np.bincount(k[k >= 0], minlength=len(self.parts))
        self.next, self.pos = start, pos

    def read(self, start=0, stop=None, fields=None):
        """Rows [start, stop) with the given fields (all: None)."""
        stop = self.n if stop is None else min(stop, self.n)
        fields = list(self.names if fields is None else fields)
        if self.format == 1:
            return self.res.fields(fields)[start:stop] if fields else \
                np.zeros(stop - start, dtype=[])
        out = np.zeros(max(stop - start, 0), dtype=[(c, self.dtype[c]) for c in fields])
        if stop <= start:
            return out
        if self.parts and start != self.next:
            self._seek(start)
        need = [c for c in fields if c in self.common]
        need += [c for c in ("model_idx", "task_idx", "status") if c not in need]
        blk = self.res.fields(need)[start:stop]
        kinds = self._kinds(blk) if self.parts else np.full(len(blk), -1)
        zero = blk["status"] >= 100  # invalid:*: its numbers are 0
        for c in fields:
            if c in self.common:
                out[c] = blk[c]
            elif out[c].dtype.kind == "f":
                out[c] = np.where(zero, 0.0, np.nan)
        for p, kind in enumerate(self.parts):
            sel = kinds == p
            cnt = int(sel.sum())
            mine = [c for c in fields if c in self.stored[p]]
            if cnt and mine:
                part = self.f["parts/" + kind].fields(mine)[self.pos[p]:self.pos[p] + cnt]
                if len(part) != cnt:
                    raise ValueError(f"{self.f.filename}: /parts/{kind} is short "
                                     "(truncated or damaged)")
                for c in mine:
                    out[c][sel] = part[c]
            self.pos[p] += cnt
        self.next = stop
        return out


# worker/digest.c's 64-bit digest (digest.h: each row as stored, its
# /results bytes then its part row's, folded into a running digest per
# chunk from DIGEST_SEED), run over every chunk at once: the digest of one
# chunk is a chain through its rows, so the lanes of the numpy arithmetic
# are the chunks, and the rows are read in slices of steps (the j-th rows
# of every chunk), about VERIFY_BYTES at a time: the numpy calls grow with
# the longest chunk times the words of a row, not with the number of
# chunks (uint64 arithmetic wraps mod 2^64).
_SEED = np.uint64(0x6d61647377656570)  # "madsweep"
_K1, _K2 = np.uint64(0x9e3779b97f4a7c15), np.uint64(0xc2b2ae3d27d4eb4f)
_F1, _F2 = np.uint64(0xff51afd7ed558ccd), np.uint64(0xc4ceb9fe1a85ec53)
_R31, _R33 = np.uint64(31), np.uint64(33)
VERIFY_BYTES = 1 << 27  # rows held at once while verifying (bytes, about)


def _raw(dset, ranges):
    """The rows of dset in `ranges` ([(start, count)], ascending and apart)
    as stored, in file order: an (n, row bytes) uint8 array read in the
    dataset's own type (no conversion: the bytes the digests cover)."""
    tid = dset.id.get_type()
    n = sum(c for _, c in ranges)
    buf = np.empty((n, tid.get_size()), dtype=np.uint8)
    if n:
        fs = dset.id.get_space()
        fs.select_none()
        for start, count in ranges:
            if count:
                fs.select_hyperslab((int(start),), (int(count),), op=h5py.h5s.SELECT_OR)
        dset.id.read(h5py.h5s.create_simple((n,)), fs, buf, mtype=tid)
    return buf


def _words(raw):
    """Each row's bytes as little-endian 64-bit words (a short tail padded
    with zeros), times K1, one row of words per column: (words, n) uint64."""
    n, size = raw.shape
    if size % 8:
        raw = np.concatenate([raw, np.zeros((n, -size % 8), np.uint8)], axis=1)
    w = np.ascontiguousarray(raw).view("<u8").reshape(n, raw.shape[1] // 8)
    return np.ascontiguousarray((w * _K1).T)


def _fold(h, t, words, nbytes):
    """digest_row over h (a state per lane) of one row per lane: words
    (row words x lanes, times K1), the row nbytes long; t: scratch."""
    for w in words:
        np.bitwise_xor(h, w, out=h)
        np.left_shift(h, _R31, out=t)
        np.right_shift(h, _R33, out=h)
        np.bitwise_or(h, t, out=h)
        np.multiply(h, _K2, out=h)
    np.bitwise_xor(h, np.uint64(nbytes), out=h)
    for k in (_F1, _F2, None):
        np.right_shift(h, _R33, out=t)
        np.bitwise_xor(h, t, out=h)
        if k is not None:
            np.multiply(h, k, out=h)


class _Digests:
    """The running digests of the written chunks of a file, one lane per
    chunk, lanes in decreasing length so that the lanes with a row at step
    j (its j-th row) are the first ones; fed in slices of steps."""

    def __init__(self, f, reader, first, chunks):
        self.f, self.reader = f, reader
        self.chunks = chunks  # chunk of each lane
        lens = first[chunks + 1] - first[chunks]
        self.order = np.argsort(-lens, kind="stable")
        self.lens, self.first = lens[self.order], first[chunks][self.order]
        self.h = np.full(len(chunks), _SEED, dtype=np.uint64)
        self.t = np.empty(len(chunks), dtype=np.uint64)
        self.pos = np.zeros((len(chunks), len(reader.parts)), dtype=np.int64)
        if reader.parts:
            index = f["parts/index"][:]
            if len(index) < (chunks.max() + 1 if len(chunks) else 0):
                raise _damaged(f, "/parts/index is short")
            for lane, c in enumerate(chunks[self.order]):
                if int(index["row"][c]) != first[c]:
                    raise _damaged(f, f"the /parts/index entry of chunk {c} does not "
                                   f"name its first row {first[c]}")
                for p, kind in enumerate(reader.parts):
                    self.pos[lane, p] = int(index[kind][c])

    def steps(self, j0, j1):
        """Folds in the rows of steps [j0, j1) of every lane."""
        reader = self.reader
        m = int((self.lens > j0).sum())
        cnt = np.clip(self.lens[:m] - j0, 0, j1 - j0)
        byfile = np.argsort(self.first[:m])  # HDF5 returns rows in file order
        raw = _raw(reader.res, [(self.first[k] + j0, cnt[k]) for k in byfile])
        lane = np.repeat(byfile, cnt[byfile])
        step = j0 + np.arange(len(lane)) - np.repeat(np.cumsum(cnt[byfile]) -
                                                     cnt[byfile], cnt[byfile])
        kinds = np.full(len(lane), -1, dtype=np.int64)
        if reader.parts:
            kinds = reader._kinds(raw.view(reader.res.dtype).reshape(-1))
        parts = []
        for p, kind in enumerate(reader.parts):
            mine = kinds == p
            per = np.bincount(lane[mine], minlength=m)
            dset = self.f["parts/" + kind]
            ranges = [(self.pos[k, p], per[k]) for k in byfile]
            if any(s + c > dset.shape[0] for s, c in ranges):
                raise _damaged(self.f, f"/parts/{kind} is short (truncated)")
            prow = _raw(dset, ranges)
            self.pos[:m, p] += per
            parts.append((mine, _words(prow), prow.shape[1]))
        perm = np.argsort(step * len(self.h) + lane, kind="stable")  # step-major
        off = np.concatenate([[0], np.cumsum(np.bincount(step - j0, minlength=j1 - j0))])
        common, size = _words(raw)[:, perm], raw.shape[1]
        pw = []
        for mine, words, _ in parts:
            rank = np.cumsum(mine) - 1
            sel = perm[mine[perm]]
            pw.append((mine[perm], words[:, rank[sel]],
                       np.concatenate([[0], np.cumsum(np.bincount(
                           step[sel] - j0, minlength=j1 - j0))])))
        h, t = self.h, self.t
        for j in range(j1 - j0):
            a, b = off[j], off[j + 1]
            _fold(h[:b - a], t[:b - a], common[:, a:b], size)
            for p, (mine, words, poff) in enumerate(pw):
                pa, pb = poff[j], poff[j + 1]
                if pb > pa:
                    sel = np.flatnonzero(mine[a:b])
                    hp = h[sel]
                    _fold(hp, t[:len(sel)], words[:, pa:pb], parts[p][2])
                    h[sel] = hp

    def result(self):
        out = np.empty_like(self.h)
        out[self.order] = self.h
        return out


def _damaged(f, what):
    return ValueError(f"{f.filename}: {what}: the file is corrupted")


def verify_digests(f, budget=VERIFY_BYTES):
    """Checks the rows of the open sweep file f against their digests
    (/digests, as worker/verify.c does) and raises ValueError naming the
    file and the chunk, with its rows, that does not match. Chunks not
    written yet (/progress 0: an unfinished file, and every chunk of an
    unfinished top or pareto sweep, whose rows come at its end) are
    skipped. Reads every
    byte of every row once, about `budget` bytes of rows at a time."""
    for name in ("chunk_starts", "digests", "progress"):
        if name not in f:
            raise ValueError(f"{f.filename}: /{name} is missing (a file without "
                             "checksums, written by an older madsweep, or damaged): "
                             "it cannot be verified (load(..., verify=False), "
                             "--no-verify: read it unchecked)")
    lo = f["chunk_starts"][:].astype(np.int64)
    want, done = f["digests"][:], f["progress"][:]
    nch = len(want)
    reader = Rows(f)
    n = reader.n
    if len(lo) != nch + 1 or len(done) != nch or lo[0] != 0 or \
            (nch and (np.diff(lo) <= 0).any()):
        raise _damaged(f, "/chunk_starts, /digests and /progress disagree")
    if _decode(f.attrs.get("keep", b"all")) == "all":
        if n != lo[-1]:
            raise _damaged(f, f"/results has {n} rows, the chunks {lo[-1]}")
        first = lo
    else:  # a reduced sweep keeps some ids, in id order
        ids = reader.res.fields(["id"])[:]["id"]
        if (np.diff(ids) <= 0).any():
            raise _damaged(f, "the ids of /results are out of order")
        first = np.searchsorted(ids, lo)
    chunks = np.flatnonzero(done == 1)
    keep = _decode(f.attrs.get("keep", b"all"))
    if int(f.attrs.get("complete", 1)) != 1 and keep != "all" and \
            not keep.startswith("feasible"):
        chunks = chunks[:0]  # a ranked sweep writes rows and digests as it ends
    dg = _Digests(f, reader, first, chunks)
    size = reader.res.dtype.itemsize + sum(
        f["parts/" + k].dtype.itemsize for k in reader.parts)
    per = max(int(budget) // (3 * size * max(len(chunks), 1)), 1)
    top = int(dg.lens.max()) if len(chunks) else 0
    for j in range(0, top, per):
        dg.steps(j, min(j + per, top))
    got = dg.result()
    bad = np.flatnonzero(got != want[chunks])
    if len(bad):
        k = int(chunks[bad[0]])
        raise _damaged(f, f"chunk {k} (rows {first[k]}-{first[k + 1] - 1} of "
                       "/results) fails its checksum")


def rows(f, fields=None, start=0, stop=None):
    """Logical rows [start, stop) of the open sweep file f (h5py), only
    `fields` when given, as a numpy structured array (see Rows)."""
    return Rows(f).read(start, stop, fields)


_VERIFIED = set()  # files verified in this process: (path, device, inode, size, mtime)


def _verify_once(path, f):
    """verify_digests(f), once per process for a file unchanged since (the
    same inode, size and modification time): loads of some columns of a
    large file cost a fraction of the verification."""
    try:
        st = os.stat(path)
        key = (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    except TypeError:  # an open file object, as h5py takes too: no name to remember
        key = None
    if key is None or key not in _VERIFIED:
        verify_digests(f)
        if key is not None:
            _VERIFIED.add(key)


def load(path, columns=None, where=None, join="names", complete_only=True,
         chunk_rows=1 << 20, verify=True):
    """The sweep file at `path` as a DataFrame (see the module comment)."""
    if join not in ("names", "all", None):
        raise ValueError("join must be 'names', 'all' or None")
    # a negative chunk_rows read no row (an empty frame), 0 ended in range()'s
    # error; columns=[] read no column and so no row, columns="id" its letters
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) \
            or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be a whole number >= 1, not {chunk_rows!r}")
    if columns is not None and (isinstance(columns, (str, bytes)) or not len(columns)):
        raise ValueError(f"columns must be a list of column names, not {columns!r}")
    with h5py.File(path, "r") as f:
        if "results" not in f or "complete" not in f.attrs:
            raise ValueError(f"{path} is not a madsweep sweep file")
        if complete_only and int(f.attrs["complete"]) != 1:
            raise ValueError(f"{path} is an unfinished sweep (complete = 0); "
                             "finish it with madsweep sweep --resume")
        if verify:
            _verify_once(path, f)
        if columns is not None or where is not None:
            return _load_some(f, columns, where, join, chunk_rows)
        reader = Rows(f)
        got = [reader.read(a, b) for a, b in reader.spans()]
        got = np.concatenate(got) if got else reader.read(0, 0)
        units = reader.units()
        cols = {}
        for name in got.dtype.names:
            col = got[name]
            cols[name] = _strings(col) if col.dtype.kind == "S" \
                else np.ascontiguousarray(col)
        del got
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


def _axis_columns(f, results, numbers):
    """The joined axis columns of a file whose /results has the columns
    `results`: {name: (axis table, member, index column, units)}, named as
    the module comment says; number columns only when `numbers`."""
    tables = {}
    for axis in f["axes"] if "axes" in f else ():
        if axis == "status":
            continue
        idx = ("batch" if axis == "global_batch" else axis) + "_idx"
        if idx in results:
            tables[axis] = (f["axes"][axis][:], _units(f["axes"][axis]), idx)
    uses = {}
    for axis, (t, _, _) in tables.items():
        for m in t.dtype.names:
            uses[m] = uses.get(m, 0) + 1
    out = {}
    for axis, (t, u, idx) in tables.items():
        primary = next((m for m in ("name", "text", axis) if m in t.dtype.names),
                       None)
        for m in t.dtype.names:
            text = t[m].dtype.kind == "S"
            if m == primary and axis not in results:
                name = axis
            elif uses[m] == 1 and m not in GENERIC and m not in results \
                    and m not in out:
                name = m
            else:
                name = f"{axis}.{m}"
            if name in out or name in results or \
                    not (text or numbers or name == axis):
                continue
            out[name] = (t, m, idx, u)
    return out


def _axis_values(t, m):
    col = t[m]
    return [_decode(v) for v in col] if col.dtype.kind == "S" else col


def _join_axes(f, df, units, numbers):
    new = {}
    for name, (t, m, idx, u) in _axis_columns(f, set(df.columns), numbers).items():
        index = df[idx].to_numpy()
        col = t[m]
        if col.dtype.kind == "S":
            new[name] = _categorical(_axis_values(t, m), index)
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


OPS = ("<=", ">=", "==", "!=", "<", ">")


def _parse_where(text):
    """[(column, op, value text)] of a condition list (best --where): no
    condition empty, as best refuses them (an empty text, two commas, a
    comma at an end)."""
    if not text.strip():
        raise ValueError("where: expected conditions such as 'task==pretrain,tp==1', got ''")
    conds, i = [], 0
    while i <= len(text):
        if not text[i:].split(",", 1)[0].strip():
            raise ValueError("where: an empty condition (two commas, or a comma at an end)")
        j = i
        while j < len(text) and not any(text.startswith(o, j) for o in OPS):
            j += 1
        col = text[i:j].strip()
        op = next((o for o in OPS if text.startswith(o, j)), None)
        if not col or op is None:
            raise ValueError(f"where: expected COLUMN OP VALUE at '{text[i:]}' "
                             f"(OP one of {' '.join(OPS)})")
        j += len(op)
        if j < len(text) and text[j] in "'\"":
            q = text[j]
            k = text.find(q, j + 1)
            if k < 0:
                raise ValueError(f"where: unclosed quote in '{text[i:]}'")
            val, j = text[j + 1:k], k + 1
        else:
            k = text.find(",", j)
            k = len(text) if k < 0 else k
            val, j = text[j:k].strip(), k
        conds.append((col, op, val))
        if j < len(text) and text[j] != ",":
            raise ValueError(f"where: expected ',' at '{text[j:]}'")
        i = j + 1
    return conds


def _compare(values, op, val):
    """Boolean mask of `values` (numbers, or a list of str) OP val."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        try:
            v = float(val)
        except ValueError:
            raise ValueError(f"where: '{val}' is not a number") from None
        x = values.astype(np.float64)
        return {"<": x < v, "<=": x <= v, ">": x > v, ">=": x >= v,
                "==": x == v, "!=": ~(x == v)}[op]
    if isinstance(values, np.ndarray) and values.dtype.kind == "S":
        x, v = values, val.encode()
        return {"<": x < v, "<=": x <= v, ">": x > v, ">=": x >= v,
                "==": x == v, "!=": x != v}[op]
    x = np.asarray(values, dtype=object)
    return np.array([{"<": a < val, "<=": a <= val, ">": a > val,
                      ">=": a >= val, "==": a == val, "!=": a != val}[op]
                     for a in x], dtype=bool)


def _status_table(f):
    st = f["axes"]["status"][:]
    return {_decode(n): int(c) for c, n in zip(st["code"], st["name"])}


def _load_some(f, columns, where, join, chunk_rows):
    """load() of some columns and rows, chunk by chunk."""
    reader = Rows(f)
    results = reader.names
    units = reader.units()
    axcols = _axis_columns(f, set(results), True)
    status = _status_table(f) if "axes" in f and "status" in f["axes"] else {}
    if columns is None:
        named = _axis_columns(f, set(results), join == "all") if join else {}
        columns = list(results) + list(named) + \
            (["status_name"] if join and status and "status" in results else [])
    known = set(results) | set(axcols) | ({"status_name"} if status else set())
    for c in columns:
        if c not in known:
            raise ValueError(f"column '{c}' is not in {f.filename}")
    # conditions: on /results columns per row, on axis columns per entry
    row_conds, axis_ok = [], {}
    for col, op, val in (_parse_where(where) if where is not None else []):
        if col == "status_name" or (col == "status" and not _isnum(val)):
            if val not in status and op in ("==", "!="):
                raise ValueError(f"where: '{val}' is not a status name "
                                 f"({', '.join(status)})")
            col, val = "status", str(status.get(val, val))
        if col in results:
            row_conds.append((col, op, val))
        elif col in axcols:
            t, m, idx, _ = axcols[col]
            ok = _compare(_axis_values(t, m), op, val)
            axis_ok[idx] = axis_ok[idx] & ok if idx in axis_ok else ok
        else:
            raise ValueError(f"where: column '{col}' is not in {f.filename}")
    need = [c for c in columns if c in results]
    need += [axcols[c][2] for c in columns if c in axcols]
    need += ["status"] if "status_name" in columns else []
    need += [c for c, _, _ in row_conds] + list(axis_ok)
    need = [c for c in dict.fromkeys(need)]
    keep = {c: [] for c in need}
    for at, stop in ((a, min(b, a + chunk_rows)) for lo, hi in reader.spans()
                     for a, b in ((x, hi) for x in range(lo, hi, chunk_rows))):
        blk = reader.read(at, stop, need)
        mask = np.ones(len(blk), dtype=bool)
        for idx, ok in axis_ok.items():
            mask &= ok[blk[idx]]
        for col, op, val in row_conds:
            mask &= _compare(blk[col], op, val)
        for c in need:
            keep[c].append(blk[c][mask])
        del blk
    got = {c: (np.concatenate(v) if v else np.zeros(0)) for c, v in keep.items()}
    out = {}
    for c in columns:
        if c in results:
            col = got[c]
            out[c] = _strings(col) if col.dtype.kind == "S" else col
        elif c in axcols:
            t, m, idx, u = axcols[c]
            index = got[idx].astype(np.int64)
            out[c] = _categorical(_axis_values(t, m), index) \
                if t[m].dtype.kind == "S" else t[m][index]
            units[c] = u.get(m, "")
        else:  # status_name
            names = sorted(status, key=status.get)
            codes = np.array([status[s] for s in names])
            pos = np.searchsorted(codes, got["status"])
            out[c] = _categorical(names, np.clip(pos, 0, len(names) - 1))
            units[c] = "text"
    df = pd.DataFrame(out, copy=False)
    df.attrs["units"] = {c: units.get(c, "") for c in columns}
    df.attrs["file"] = _attrs(f)
    return df


def _isnum(v):
    try:
        float(v)
        return True
    except ValueError:
        return False


def main(argv):
    args = argv[1:]
    verify = "--no-verify" not in args
    args = [a for a in args if a != "--no-verify"]
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: scripts/madsweep_h5.py [--no-verify] FILE.h5   (prints the "
              "DataFrame's shape, columns and first rows; --no-verify: skip the "
              "rows' checksums)", file=sys.stderr)
        return 2
    path = args[0]
    try:
        df = load(path, verify=verify)
    except (OSError, KeyError, ValueError) as e:
        # a missing, truncated, foreign, unfinished or corrupted file: one
        # line, no traceback
        msg = str(e)
        print(f"madsweep_h5: {msg if msg.startswith(path + ':') else path + ': ' + msg}",
              file=sys.stderr)
        return 2
    print(f"{len(df)} rows, {len(df.columns)} columns")
    print(", ".join(df.columns))
    with pd.option_context("display.width", 200, "display.max_columns", 12):
        print(df.head())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
