#!/usr/bin/env bash
# Fails when a BUILD or .bzl file sets, in copts/cxxopts/conlyopts/linkopts,
# a flag that belongs to the .bazelrc configurations: an optimization level
# (-O*), debug info (-g*), sanitizers (-fsanitize*), target flags (-march,
# -mtune, -m<isa> such as -mavx2), or any other flag a .bazelrc line passes
# with --copt/--cxxopt/--conlyopt/--linkopt. A target's own flag silently
# beats the configuration's (it comes later on the command line), so e.g.
# copts = ["-O2"] turned --config=asan's -O1 and --config=opt's -O3 into -O2.
#
#   tools/build_flags_test.sh [WORKSPACE_DIR]   (also //tools:build_flags_test)
#
# Prints FILE:LINE: FLAG for each offence. A line ending in the comment
# "# build-flags-ok: <reason>" is allowed (e.g. -fsanitize=fuzzer, which only
# the fuzz binaries link and no configuration can set for them).
set -euo pipefail
if [ $# -ge 1 ]; then
  root=$1
elif [ -n "${TEST_SRCDIR:-}" ]; then
  # Under bazel test: the data file WORKSPACE links back into the source tree.
  root=$(dirname "$(readlink -f "$TEST_SRCDIR/mxcore/WORKSPACE")")
else
  root=$(cd "$(dirname "$0")/.." && pwd)
fi
exec python3 - "$root" <<'EOF'
import os
import re
import sys

root = sys.argv[1]
RULE_ATTRS = re.compile(r"\b(copts|cxxopts|conlyopts|linkopts)\s*(\+?=)\s*")
FIXED = re.compile(r"^(-O.*|-g.*|-fsanitize.*|-fno-sanitize.*|-march=.*|-mtune=.*"
                   r"|-mcpu=.*|-m(avx|sse|fma|bmi|f16c|popcnt|lzcnt|arch|native|tune).*)$")

# Flags the .bazelrc files pass to the compiler or linker.
rc_flags = set()
for rc in (".bazelrc",):
    path = os.path.join(root, rc)
    if not os.path.exists(path):
        continue
    for line in open(path):
        line = line.split("#", 1)[0]
        for m in re.finditer(r"--(?:copt|cxxopt|conlyopt|linkopt|host_copt)[= ](\S+)", line):
            rc_flags.add(m.group(1).strip("'\""))

def spans(text):
    """(start, end) of each copts/linkopts value expression."""
    for m in RULE_ATTRS.finditer(text):
        i = m.end()
        depth = 0
        in_str = None
        while i < len(text):
            c = text[i]
            if in_str:
                if c == "\\":
                    i += 2
                    continue
                if c == in_str:
                    in_str = None
            elif c in "\"'":
                in_str = c
            elif c == "#":
                while i < len(text) and text[i] != "\n":
                    i += 1
                continue
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif c in ",\n" and depth == 0:
                break
            i += 1
        yield m.end(), i

bad = []
checked = 0
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = [d for d in dirnames
                   if not d.startswith(("bazel-", ".")) or d == "."]
    for f in filenames:
        if not (f in ("BUILD", "BUILD.bazel") or f.endswith((".bzl", ".BUILD"))):
            continue
        path = os.path.join(dirpath, f)
        rel = os.path.relpath(path, root)
        text = open(path, encoding="utf-8", errors="replace").read()
        lines = text.split("\n")
        checked += 1
        for start, end in spans(text):
            for s in re.finditer(r"\"([^\"\\]*)\"|'([^'\\]*)'", text[start:end]):
                flag = s.group(1) if s.group(1) is not None else s.group(2)
                line_no = text.count("\n", 0, start + s.start()) + 1
                if "# build-flags-ok:" in lines[line_no - 1]:
                    continue
                for word in flag.split():
                    if FIXED.match(word) or word in rc_flags:
                        bad.append(f"{rel}:{line_no}: {word}")

if checked == 0:
    print(f"build_flags_test: no BUILD files found under {root}")
    sys.exit(1)
for b in bad:
    print(b + "  (set it in a .bazelrc config, not in a BUILD file)")
if bad:
    sys.exit(1)
print(f"build_flags_test: {checked} BUILD/.bzl files, no configuration flags in copts/linkopts")
EOF
