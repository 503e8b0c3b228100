#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-layers.py DIR: do the files of kernel/kprobes/ call only down?

The files are meant to form layers, each calling only the files below
it (LAYERS, bottom first). A call is a use in one file of a name that
internal.h declares and another file defines. Prints every call that
goes up and every pair of files that call each other, with the names
involved, and how many names internal.h declares; exits 1 when a file
is missing from LAYERS or more calls go up than ALLOWED_UP allows.
"""
import glob
import os
import re
import sys

LAYERS = [
    "table.c", "counters.c", "slots.c", "place.c",
    "arming.c", "batch.c", "optimizer.c", "deferred.c", "gone.c",
    "kretprobe.c", "core.c", "debugfs.c",
]

# The calls that still go up, each for a reason the code gives there:
# a site's arming asks the optimizer to follow (kprobe_site_sync_armed()
# -> kprobe_site_sync_optimized()); a batch frees retiring optimized
# sites and requeues their neighbours; a deferred release unhooks its
# probe with the core's kprobe_unhook().
ALLOWED_UP = {
    ("arming.c", "optimizer.c"),
    ("batch.c", "optimizer.c"),
    ("deferred.c", "core.c"),
}


# The limits the maintainer's cut asked for.
MAX_PAIRS = 5
MAX_DECLARED = 45


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//.*", "", text)


def declared_names(header):
    text = strip_comments(header)
    funcs = re.findall(r"^(?:static (?:inline|nokprobe_inline|__always_inline) )?"
                       r"[a-z_][a-z0-9_ \*]*?\b\**([a-z_][a-z0-9_]*)\s*\(", text, flags=re.M)
    externs = re.findall(r"^extern [^;]*?\b([a-z_][a-z0-9_]*)\s*(?:\[[^]]*\])?;",
                         text, flags=re.M)
    return {n for n in funcs + externs if n not in ("if", "for", "while", "return")}


def declared_split(header):
    """(functions declared, shared variables, inline helpers) of @header."""
    text = strip_comments(header)
    protos = set(re.findall(r"^(?!static|extern|#)[a-z_][a-z0-9_ \*]*?\b\**([a-z_][a-z0-9_]*)"
                            r"\s*\([^;{]*\);", text, flags=re.M | re.S))
    externs = set(re.findall(r"^extern [^;]*?\b([a-z_][a-z0-9_]*)\s*(?:\[[^]]*\])?;",
                             text, flags=re.M))
    return protos, externs, declared_names(header) - protos - externs


def definer(names, sources):
    where = {}
    for f, text in sources.items():
        for n in names:
            func = r"^[a-z][^;{()]*\b" + n + r"\s*\([^;]*?\)\s*\{"
            var = r"^[a-z][^;(]*\b" + n + r"\s*(=|;|\[)"
            if re.search(func, text, flags=re.M) or re.search(var, text, flags=re.M):
                where.setdefault(n, f)
    return where


def main():
    os.chdir(sys.argv[1])
    # The KUnit suite beside the core (*_kunit.c) is not one of its layers.
    sources = {f: strip_comments(open(f).read()) for f in sorted(glob.glob("*.c"))
               if not f.endswith("_kunit.c")}
    with open("internal.h") as h:
        header = h.read()
    names = declared_names(header)
    protos, externs, inlines = declared_split(header)
    missing = sorted(set(sources) - set(LAYERS))
    if missing:
        print("layers: not placed in LAYERS:", " ".join(missing))
        return 1
    calls = {}
    for n, f_def in definer(names, sources).items():
        for f, text in sources.items():
            if f != f_def and re.search(r"\b" + n + r"\b", text):
                calls.setdefault((f, f_def), set()).add(n)
    level = {f: i for i, f in enumerate(LAYERS)}
    up = sorted(c for c in calls if level[c[1]] > level[c[0]])
    pairs = sorted(c for c in calls if (c[1], c[0]) in calls and c[0] < c[1])
    status = 0
    for a, b in up:
        allowed = (a, b) in ALLOWED_UP
        print(f"layers: {a} calls up into {b}: {', '.join(sorted(calls[(a, b)]))}"
              + ("" if allowed else "  (not allowed)"))
        status |= not allowed
    print(f"layers: {len(up)} calls up, {len(pairs)} pairs of files calling each other"
          f" ({', '.join(a + '/' + b for a, b in pairs)}); internal.h declares"
          f" {len(protos)} functions and {len(externs)} shared variables"
          f" (and {len(inlines)} inline helpers)")
    if len(pairs) > MAX_PAIRS:
        print(f"layers: more than {MAX_PAIRS} pairs of files call each other")
        status = 1
    if len(protos) + len(externs) > MAX_DECLARED:
        print(f"layers: internal.h declares more than {MAX_DECLARED} functions and variables")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
