#!/usr/bin/env python3
"""check_sizes.py - the house's size rule: no C source or header over 800
lines and no function over 150 lines (issue 30).

Usage: scripts/check_sizes.py [ROOT] [--files N] [--functions N] [--top K]

Scans the C files git tracks under ROOT (default: the source tree; without
git, every .c/.h below ROOT outside build folders). A function is counted
from the line of its opening brace in column 0 to its closing brace in
column 0 (the tree's style: a definition's braces stand alone in column
0); its name is the identifier before the last '(' above the brace.
Prints every file and function over its limit, then the longest ones, then
one summary line; exits 1 when anything is over its limit, 2 when ROOT
holds no C file (an installed copy run without ROOT: it passed, having
checked nothing) or an option lacks its number. Standard library only.
"""
import os
import re
import subprocess
import sys

NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def c_files(root):
    """The tracked .c/.h files below root, sorted."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "*.c", "*.h"],
                             capture_output=True, text=True, check=True).stdout
        return sorted(os.path.join(root, p) for p in out.split())
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, subs, files in os.walk(root):
            subs[:] = [s for s in subs if not s.startswith(("build", ".", "Testing"))]
            found += [os.path.join(d, f) for f in files if f.endswith((".c", ".h"))]
        return sorted(found)


def functions(lines):
    """[(name, first line, length)] of the definitions in a file's lines."""
    out, start, name = [], None, None
    for i, line in enumerate(lines):
        if start is None and line.startswith("{"):
            head = " ".join(lines[max(0, i - 6):i])
            names = NAME.findall(head)
            start, name = i, (names[-1] if names else "?")
        elif start is not None and line.startswith("}"):
            out.append((name, start + 1, i - start + 1))
            start = None
    return out


def main(argv):
    args = list(argv[1:])
    limits = {"--files": 800, "--functions": 150, "--top": 5}
    for flag in limits:
        if flag in args:
            i = args.index(flag)
            try:
                limits[flag] = int(args[i + 1])
            except (IndexError, ValueError):
                print(f"check_sizes: {flag} needs a whole number", file=sys.stderr)
                return 2
            del args[i:i + 2]
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    root = args[0] if args else here
    files = c_files(root)
    if not files:  # a check of nothing passed (an installed copy, a wrong ROOT)
        print(f"check_sizes: no C file under {root} (give the source tree as ROOT)",
              file=sys.stderr)
        return 2
    over, sizes, funcs = 0, [], []
    for path in files:
        with open(path, errors="replace") as f:
            lines = f.read().split("\n")
        n = len(lines) - (lines[-1] == "")
        rel = os.path.relpath(path, root)
        sizes.append((n, rel))
        if n > limits["--files"]:
            print(f"check_sizes: {rel}: {n} lines (limit {limits['--files']})")
            over += 1
        for name, first, length in functions(lines):
            funcs.append((length, f"{rel}:{first} {name}"))
            if length > limits["--functions"]:
                print(f"check_sizes: {rel}:{first}: function {name} has {length} lines "
                      f"(limit {limits['--functions']})")
                over += 1
    top = limits["--top"]
    for n, rel in sorted(sizes, reverse=True)[:top]:
        print(f"check_sizes: longest file {rel}: {n} lines")
    for n, where in sorted(funcs, reverse=True)[:top]:
        print(f"check_sizes: longest function {where}: {n} lines")
    print(f"check_sizes: {len(sizes)} files, {len(funcs)} functions, {over} over the limits "
          f"({limits['--files']} lines a file, {limits['--functions']} a function)")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
