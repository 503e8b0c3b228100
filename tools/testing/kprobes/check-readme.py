#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-readme.py REPO: the top-level README's lists against the tree.

The first two fenced blocks after "## What is in the series" list our
files (first word of each line) and the patches; they must be exactly
the files git tracks under our in-tree directories and patches/*.patch.
The README must also stay a manual: under 200 lines. Prints each
difference; exits 1 if there is one.
"""
import os
import subprocess
import sys

OUR_DIRS = ["Documentation", "arch", "include", "kernel", "lib", "samples"]


def fenced_blocks(lines):
    blocks, cur = [], None
    for line in lines:
        if line.startswith("```"):
            if cur is None:
                cur = []
            else:
                blocks.append(cur)
                cur = None
        elif cur is not None and line.strip():
            cur.append(line.split()[0])
    return blocks


def compare(what, listed, actual):
    bad = 0
    for name in sorted(set(actual) - set(listed)):
        print(f"README: {what} {name} is not listed")
        bad = 1
    for name in sorted(set(listed) - set(actual)):
        print(f"README: lists {what} {name}, which does not exist")
        bad = 1
    return bad


def main():
    repo = sys.argv[1]
    with open(os.path.join(repo, "README.md")) as f:
        lines = f.read().split("\n")
    status = 0
    if len(lines) > 200:
        print(f"README: {len(lines)} lines, more than 200")
        status = 1
    try:
        start = lines.index("## What is in the series")
    except ValueError:
        print('README: no "## What is in the series" section')
        return 1
    blocks = fenced_blocks(lines[start:])
    if len(blocks) < 2:
        print("README: the series section needs a block of files and one of patches")
        return 1
    files = subprocess.run(["git", "-C", repo, "ls-files", "--"] + OUR_DIRS,
                           capture_output=True, text=True, check=True).stdout.split()
    patches = [p for p in os.listdir(os.path.join(repo, "patches")) if p.endswith(".patch")]
    status |= compare("file", blocks[0], files)
    status |= compare("patch", blocks[1], patches)
    return status


if __name__ == "__main__":
    sys.exit(main())
