"""rowfilter.py - the row filters of the catalogues' fit declarations and
serving stacks' matches, evaluated over the rows of measurement files.

A filter selects rows of CSV files by their columns. The same grammar is
parsed by the loader (driver/load/rowfilter.c), which refuses a catalogue with
a filter that does not parse; this module evaluates it:

    expr    := and ("||" and)*
    and     := unary ("&&" unary)*
    unary   := "!" unary | "(" expr ")" | "true" | "false" | compare
    compare := COLUMN OP VALUE
    OP      := "==" | "!=" | "~" | "!~" | "<" | "<=" | ">" | ">="
    COLUMN  := [a-z_][a-z0-9_]*
    VALUE   := 'text' | "text" | a number

Columns are the CSV's, plus `file` (the file's base name) and, for a
serving row, `stack` (the stack it runs on by the matches). A column a
row lacks reads as "". `==` and `!=` compare the stripped text (numbers
as numbers when both sides are numbers); `~` and `!~` match a glob
(`*`, `?`, `[...]`) against the whole cell, ignoring case; `<`, `<=`,
`>`, `>=` compare numbers, or else release versions: the leading
`v?DIGITS(.DIGITS)*` of the cell ("0.14.0 (Triton backend)" -> 0.14.0,
"post-1.0 main" -> none) against the value's; a cell without a number or
version makes the comparison false. Examples:
    stack == 'megatron-core' && gpu ~ 'h100*'
    engine == 'tensorrt-llm' && engine_version >= '0.7' && engine_version < '1.0'
    file ~ 'serving_calibration*.csv' && !(notes ~ '*PyTorch backend*')
Standard library only.
"""
import fnmatch
import re

_TOKEN = re.compile(r"""\s*(?:(\|\||&&|==|!=|!~|<=|>=|[()!~<>])|('[^']*'|"[^"]*")|"""
                    r"""([a-z_][a-z0-9_]*)|([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?))""")
_VERSION = re.compile(r"v?(\d+(?:\.\d+)*)")


class FilterError(ValueError):
    pass


def _tokens(text):
    out, i = [], 0
    text = text.rstrip()
    while i < len(text):
        m = _TOKEN.match(text, i)
        if not m or m.end() == i:
            raise FilterError(f"cannot read {text[i:i + 20]!r} at offset {i}")
        op, s, word, num = m.groups()
        if op:
            out.append(("op", op))
        elif s:
            out.append(("str", s[1:-1]))
        elif word:
            out.append(("word", word))
        else:
            out.append(("num", num))
        i = m.end()
    return out


def _number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _version(text):
    m = _VERSION.match((text or "").strip())
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def _compare(cell, op, value):
    cell = (cell or "").strip()
    if op in ("~", "!~"):
        hit = fnmatch.fnmatchcase(cell.lower(), value.lower())
        return hit if op == "~" else not hit
    a, b = _number(cell), _number(value)
    if op in ("==", "!="):
        same = (a == b) if a is not None and b is not None else cell == value
        return same if op == "==" else not same
    if a is None or b is None:
        a, b = _version(cell), _version(value)
        if a is None or b is None:
            return False
        n = max(len(a), len(b))
        a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


class Filter:
    """A parsed filter: Filter(text)(row) -> bool; row is a dict of columns."""

    def __init__(self, text):
        self.text = text
        self._t = _tokens(text)
        self._i = 0
        self._tree = self._or()
        if self._i != len(self._t):
            raise FilterError(f"unexpected {self._t[self._i][1]!r} in {text!r}")

    def _peek(self):
        return self._t[self._i] if self._i < len(self._t) else (None, None)

    def _take(self, kind, val=None):
        k, v = self._peek()
        if k == kind and (val is None or v == val):
            self._i += 1
            return v
        return None

    def _or(self):
        terms = [self._and()]
        while self._take("op", "||"):
            terms.append(self._and())
        return ("or", terms) if len(terms) > 1 else terms[0]

    def _and(self):
        terms = [self._unary()]
        while self._take("op", "&&"):
            terms.append(self._unary())
        return ("and", terms) if len(terms) > 1 else terms[0]

    def _unary(self):
        if self._take("op", "!"):
            return ("not", self._unary())
        if self._take("op", "("):
            e = self._or()
            if not self._take("op", ")"):
                raise FilterError(f"expected ')' in {self.text!r}")
            return e
        word = self._take("word")
        if word in ("true", "false"):
            return ("const", word == "true")
        if word is None:
            raise FilterError(f"expected a column name in {self.text!r}")
        op = self._take("op")
        if op not in ("==", "!=", "~", "!~", "<", "<=", ">", ">="):
            raise FilterError(f"expected an operator after {word!r} in {self.text!r}")
        k, v = self._peek()
        if k not in ("str", "num"):
            raise FilterError(f"expected a value after {word} {op} in {self.text!r}")
        self._i += 1
        return ("cmp", word, op, v)

    def columns(self, node=None):
        """The column names the filter reads."""
        node = self._tree if node is None else node
        if node[0] == "cmp":
            return {node[1]}
        if node[0] == "not":
            return self.columns(node[1])
        if node[0] in ("and", "or"):
            return set().union(*(self.columns(n) for n in node[1]))
        return set()

    def __call__(self, row, node=None):
        node = self._tree if node is None else node
        kind = node[0]
        if kind == "cmp":
            return _compare(row.get(node[1]), node[2], node[3])
        if kind == "and":
            return all(self(row, n) for n in node[1])
        if kind == "or":
            return any(self(row, n) for n in node[1])
        if kind == "not":
            return not self(row, node[1])
        return node[1]
