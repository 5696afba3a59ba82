#!/usr/bin/env python3
"""Import circles between the modules of each crate (docs/design.md, "Reading order").

A module here is a crate's top-level module: `src/eval.rs`, or `src/evaluator/` with everything
under it. Module A depends on module B when any file of A names `crate::B` (in a `use` or a
path), or, inside `src/B/`, `super::` reaching the crate root counts as the crate root. Two modules
that depend on each other, directly or through others, form a circle: the house then has no
bottom-up reading order.

The circles that exist today are listed in scripts/import-circles.txt (one per line: the crate,
then its modules sorted). This fails on any circle not listed there, and on a listed one that
no longer exists (so the list only ever shrinks).

A crate's `cli` module is an entry point (docs/design.md, "Reading order"): no other module of the
crate may name it, nor use `clap` (library entry points take plain configuration; the command
line turns its flags into it). Usage: scripts/check-imports.py [--print]
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE = os.path.join(ROOT, "scripts", "import-circles.txt")
CRATE_PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")


def crates():
    """(package name, src dir) of every workspace member with a library or binary."""
    text = open(os.path.join(ROOT, "Cargo.toml")).read()
    members = re.search(r"^members\s*=\s*\[(.*?)\]", text, re.M | re.S).group(1)
    for member in re.findall(r'"([^"]+)"', members):
        manifest = open(os.path.join(ROOT, member, "Cargo.toml")).read()
        name = re.search(r'^name\s*=\s*"([^"]+)"', manifest, re.M).group(1)
        src = os.path.join(ROOT, member, "src")
        if os.path.isdir(src):
            yield name, src


def strip_comments(code):
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in code.splitlines())


def modules(src):
    """Top-level module name -> the text of all its files (root files lib.rs/main.rs apart)."""
    found = {}
    for entry in sorted(os.listdir(src)):
        path = os.path.join(src, entry)
        if entry.endswith(".rs") and entry not in ("lib.rs", "main.rs"):
            found.setdefault(entry[:-3], []).append(path)
        elif os.path.isdir(path) and entry != "bin":
            for folder, _, files in os.walk(path):
                found.setdefault(entry, []).extend(
                    os.path.join(folder, f) for f in files if f.endswith(".rs")
                )
    return {name: strip_comments("\n".join(open(p).read() for p in paths)) for name, paths in found.items()}


def graph(mods):
    return {
        name: {m for m in CRATE_PATH.findall(text) if m in mods and m != name}
        for name, text in mods.items()
    }


def circles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


CLAP = re.compile(r"\bclap::")


def entry_point_breaches(name, mods, edges):
    """Modules of a crate with a `cli` module that import it or use clap."""
    if "cli" not in mods:
        return []
    out = []
    for module, text in sorted(mods.items()):
        if module == "cli":
            continue
        if "cli" in edges[module]:
            out.append(f"{name}: module {module} imports the command line (crate::cli)")
        if CLAP.search(text):
            out.append(f"{name}: module {module} uses clap (only cli/ parses flags)")
    return out


def main():
    found = set()
    breaches = []
    for name, src in crates():
        mods = modules(src)
        edges = graph(mods)
        for component in circles(edges):
            found.add(f"{name}: {' '.join(component)}")
        breaches += entry_point_breaches(name, mods, edges)
    for line in breaches:
        print(line)
    if "--print" in sys.argv:
        print("\n".join(sorted(found)))
        return 0
    known = set()
    if os.path.exists(BASELINE):
        known = {
            line.strip()
            for line in open(BASELINE)
            if line.strip() and not line.startswith("#")
        }
    new, gone = sorted(found - known), sorted(known - found)
    for line in new:
        print(f"import circle not in scripts/import-circles.txt: {line}")
    for line in gone:
        print(f"listed in scripts/import-circles.txt but gone (remove the line): {line}")
    if new or gone or breaches:
        return 1
    print(f"import circles: {len(found)} known, none new")
    return 0


if __name__ == "__main__":
    sys.exit(main())
