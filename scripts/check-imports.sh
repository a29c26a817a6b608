#!/usr/bin/env bash
# Checks that the modules of crates/mosaic/src import each other without a
# circle.
#   scripts/check-imports.sh [--edges] [src-dir]
# Default src-dir: crates/mosaic/src. --edges also prints every edge found.
#
# What counts as an edge A -> B (A and B files of the crate):
#  - a `use` whose path starts with `crate::`, `super::`, `self::` or a child
#    module of the file (use trees with braces and `as` are expanded);
#  - a path in the code (not in a comment or string) starting with
#    `crate::`, `super::`, `self::`, a child module, or a module the file
#    imported by name (`use super::closure;` then `closure::weak_phases(..)`).
# A path is followed down the module tree to the file that defines the
# name. Re-exports are followed too: `crate::collect::HeapCore` is an edge
# to the file `collect/mod.rs` re-exports `HeapCore` from. A `mod.rs` that
# only declares modules and re-exports (and lib.rs) is not a node of its
# own; declaring a child module (`mod x;`) is not an edge. Inline modules
# (`mod tests { ... }`) belong to their file: their `super::` is the file.
#
# The graph is checked at every level of the tree: the files, then each
# folder taken as one module (all of `collect/compact/` as
# `collect::compact`, all of `collect/` as `collect`, ...), ignoring edges
# inside one module. Exits 1 and prints each circle with the lines that
# make its edges; exits 0 with a summary otherwise. Needs python3 only.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PY'
import os
import re
import sys

args = [a for a in sys.argv[1:] if a != "--edges"]
show_edges = "--edges" in sys.argv[1:]
SRC = args[0] if args else "crates/mosaic/src"

# ---------------------------------------------------------------- lexing

TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<line>//[^\n]*)
      | (?P<block>/\*)
      | (?P<raw>b?r(?P<hashes>\#*)")
      | (?P<str>b?"(?:\\.|[^"\\])*")
      | (?P<char>b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'])')
      | (?P<lifetime>'[A-Za-z_]\w*)
      | (?P<ident>r\#[A-Za-z_]\w*|[A-Za-z_]\w*)
      | (?P<num>\d[\w.]*)
      | (?P<path>::)
      | (?P<punct>.)""",
    re.VERBOSE | re.DOTALL,
)


def lex(text):
    """Tokens (kind, value, line) with comments dropped, strings kept whole."""
    out, i, line = [], 0, 1
    while i < len(text):
        m = TOKEN.match(text, i)
        kind = m.lastgroup if m.lastgroup != "hashes" else "raw"
        for k in ("block", "raw"):
            if m.group(k) is not None:
                kind = k
        if kind == "block":
            depth, j = 1, m.end()
            while depth and j < len(text):
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            end, value, kind = j, None, None
        elif kind == "raw":
            close = '"' + m.group("hashes")
            end = text.index(close, m.end()) + len(close)
            value, kind = text[m.end():end - len(close)], "str"
        else:
            end, value = m.end(), m.group(0)
            if kind == "str":
                value = value[value.index('"') + 1:-1]
            if kind in ("ws", "line"):
                kind = None
        if kind:
            out.append((kind, value, line))
        line += text.count("\n", i, end)
        i = end
    return out


# ---------------------------------------------------------------- use trees


def parse_use_tree(toks, i, prefix, out, line):
    """Expands a use tree starting at toks[i]; appends (path, name, glob)."""
    path = list(prefix)
    while i < len(toks):
        kind, v, _ = toks[i]
        if v == "{":
            i += 1
            while toks[i][1] != "}":
                i = parse_use_tree(toks, i, path, out, line)
                if toks[i][1] == ",":
                    i += 1
            return i + 1
        if v == "*":
            out.append((path, None, True, line))
            return i + 1
        if kind == "ident":
            path.append(v)
            i += 1
            if i < len(toks) and toks[i][1] == "::":
                i += 1
                continue
            name = path[-1]
            if i + 1 < len(toks) and toks[i][1] == "as":
                name = toks[i + 1][1]
                i += 2
            if path[-1] == "self":
                path = path[:-1]
                if name == "self":
                    name = path[-1]
            out.append((path, name, False, line))
            return i
        i += 1  # a leading `::`
    return i


# ---------------------------------------------------------------- modules


class Module:
    def __init__(self, key, file, inline):
        self.key = key  # tuple of names from the crate root
        self.file = file  # key of the file module this one lives in
        self.inline = inline
        self.children = {}  # name -> key
        self.uses = []  # (path, name, glob, line)
        self.refs = []  # (path, line)
        self.transparent = False


modules = {}


def declared_file(dir_of_children, name, path_attr, own_dir):
    if path_attr:
        return os.path.join(own_dir, path_attr)
    for cand in (os.path.join(dir_of_children, name + ".rs"),
                 os.path.join(dir_of_children, name, "mod.rs")):
        if os.path.exists(cand):
            return cand
    sys.exit(f"check-imports: cannot find module {name} in {dir_of_children}")


def load(path, key):
    toks = lex(open(path, encoding="utf-8").read())
    base = os.path.basename(path)
    own_dir = os.path.dirname(path)
    if base in ("mod.rs", "lib.rs"):
        child_dir = own_dir
    else:
        child_dir = os.path.join(own_dir, base[:-3])
    top = Module(key, key, False)
    modules[key] = top
    stack = [(top, 0)]  # (module, brace depth at which it is open)
    depth = 0
    only_decls = True
    path_attr = None
    i = 0
    while i < len(toks):
        kind, v, line = toks[i]
        cur = stack[-1][0]
        at_top = len(stack) == 1 and depth == 0
        if v == "#" and i + 1 < len(toks) and toks[i + 1][1] in ("[", "!"):
            j = i + 1 if toks[i + 1][1] == "[" else i + 2
            d = 0
            while True:
                if toks[j][1] == "[":
                    d += 1
                elif toks[j][1] == "]":
                    d -= 1
                    if d == 0:
                        break
                j += 1
            attr = toks[i:j + 1]
            if len(attr) > 4 and attr[2][1] == "path" and attr[4][0] == "str":
                path_attr = attr[4][1]
            i = j + 1
            continue
        if v == "{":
            depth += 1
        elif v == "}":
            depth -= 1
            if len(stack) > 1 and depth < stack[-1][1]:
                stack.pop()
        elif kind == "ident" and v == "mod" and toks[i + 1][0] == "ident":
            name = toks[i + 1][1]
            if toks[i + 2][1] == ";":
                child_key = cur.key + (name,)
                cur.children[name] = child_key
                if cur is top:
                    load(declared_file(child_dir, name, path_attr, own_dir), child_key)
                path_attr = None
                i += 3
                continue
            if toks[i + 2][1] == "{":
                inner = Module(cur.key + (name,), key, True)
                modules[inner.key] = inner
                cur.children[name] = inner.key
                depth += 1
                stack.append((inner, depth))
                only_decls = only_decls and name != "tests"
                path_attr = None
                i += 3
                continue
        elif kind == "ident" and v == "use" and (i == 0 or toks[i - 1][1] != "::"):
            j = i + 1
            while toks[j][1] != ";":
                j += 1
            parse_use_tree(toks[i + 1:j] + [("punct", ";", line)], 0, [], cur.uses, line)
            i = j + 1
            continue
        elif kind == "ident" and (i == 0 or toks[i - 1][1] != "::") and \
                i + 2 < len(toks) and toks[i + 1][1] == "::" and toks[i + 2][0] == "ident":
            j, segs = i, [v]
            while j + 2 < len(toks) and toks[j + 1][1] == "::" and toks[j + 2][0] == "ident":
                segs.append(toks[j + 2][1])
                j += 2
            cur.refs.append((segs, line))
            i = j + 1
            continue
        if at_top and kind == "ident" and v not in ("pub", "crate", "super", "in", "mod", "use"):
            only_decls = False
        path_attr = None if kind == "ident" and v not in ("pub", "crate") else path_attr
        i += 1
    top.transparent = base == "lib.rs" or (base == "mod.rs" and only_decls)


load(os.path.join(SRC, "lib.rs"), ())

# ---------------------------------------------------------------- resolution


def bindings(mod):
    """name -> (scope module, path, glob) for the `use` items of a module."""
    b = {}
    for path, name, glob, _ in mod.uses:
        if not glob:
            b[name] = (mod, path)
    return b


BINDINGS = {k: bindings(m) for k, m in modules.items()}
SEEN = set()


def start(mod, seg0):
    """Where a path's first segment leads: a module key, or None (extern)."""
    if seg0 == "crate":
        return ()
    if seg0 == "self":
        return mod.key
    if seg0 == "super":
        return mod.key[:-1]
    if seg0 in mod.children:
        return mod.children[seg0]
    return None


def resolve(mod, path, depth=0):
    """The file a path names (a module path counts as its file, or None if
    that module is transparent). Returns None for paths outside the crate."""
    if depth > 20 or not path:
        return None
    seg0 = path[0]
    at = start(mod, seg0)
    if at is None:
        if seg0 in BINDINGS[mod.key] and seg0 not in ("self", "super", "crate"):
            scope, target = BINDINGS[mod.key][seg0]
            return resolve(scope, target + path[1:], depth + 1)
        return None
    rest = path[1:]
    while rest and rest[0] == "super":
        at, rest = at[:-1], rest[1:]
    while rest:
        m = modules[at]
        name = rest[0]
        if name in m.children:
            at, rest = m.children[name], rest[1:]
            continue
        if name in BINDINGS[at]:
            scope, target = BINDINGS[at][name]
            return resolve(scope, target + rest[1:], depth + 1)
        break
    f = modules[at].file
    if modules[f].transparent:
        return None
    return f


edges = {}  # (from file, to file) -> first evidence


def add(frm, to, where):
    if to is None or to == frm or modules[frm].transparent:
        return
    edges.setdefault((frm, to), where)


def rel(key):
    return "crate" if not key else "::".join(key)


for key, mod in modules.items():
    src = rel(mod.file)
    for path, name, glob, line in mod.uses:
        if not path:
            continue
        add(mod.file, resolve(mod, path), f"{src}:{line}: use {'::'.join(path)}{'::*' if glob else ''}")
    for segs, line in mod.refs:
        add(mod.file, resolve(mod, segs), f"{src}:{line}: {'::'.join(segs)}")

files = sorted({m.file for m in modules.values() if not modules[m.file].transparent})

# ---------------------------------------------------------------- cycles


def sccs(nodes, succ):
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(succ.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def a_cycle(comp, succ):
    """A shortest circle through the first node of a strongly connected set."""
    comp = set(comp)
    first = min(comp)
    prev, frontier = {first: None}, [first]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(succ.get(v, ())):
                if w == first:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [first]
                if w in comp and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return [first]


max_depth = max(len(f) for f in files)
failed = False
for level in range(max_depth, 0, -1):
    def up(k):
        return k[:level]

    succ, why = {}, {}
    for (a, b), where in edges.items():
        ua, ub = up(a), up(b)
        if ua == ub:
            continue
        succ.setdefault(ua, set()).add(ub)
        why.setdefault((ua, ub), where)
    nodes = {up(f) for f in files}
    bad = sccs(nodes, succ)
    what = "files" if level == max_depth else f"modules {level} deep"
    for comp in bad:
        failed = True
        cyc = a_cycle(comp, succ)
        print(f"import circle ({what}): " + " -> ".join(rel(c) for c in cyc))
        if len(comp) > len(cyc) - 1:
            print("  (one of the circles among: " + ", ".join(sorted(rel(c) for c in comp)) + ")")
        for a, b in zip(cyc, cyc[1:]):
            print(f"    {rel(a)} -> {rel(b)}: {why[(a, b)]}")

if show_edges:
    for (a, b), where in sorted(edges.items()):
        print(f"{rel(a)} -> {rel(b)}    ({where})")

if failed:
    sys.exit(1)
print(f"check-imports: {len(files)} files, {len(edges)} edges between them, no import circle")
PY
