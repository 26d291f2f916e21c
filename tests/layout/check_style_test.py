"""The style gates fire (tests/layout/check_style.py): a tree whose files sit exactly at every
limit passes, and the same tree with one file or function just over each limit fails, naming
each one. Usage: python3 check_style_test.py SCRATCH_FOLDER."""

import os
import shutil
import subprocess
import sys

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_style.py")
HEADER = ["#pragma once", "// Why: a test header.", "// Thread-safety: none needed.", ""]


def write(root, path, lines):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write("\n".join(lines) + "\n")


def cc_function(name, length, branches=0):
    """A C++ function of `length` lines with `branches` ifs (complexity branches + 1)."""
    body = [f"  if (x == {i}) ++x;" for i in range(branches)]
    body += ["  ++x;"] * (length - 3 - len(body))
    return [f"int {name}(int x) {{"] + body + ["  return x;", "}"]


def py_function(name, length, branches=0):
    body = [f"    if x == {i}:\n        x += 1" for i in range(branches)]
    body += ["    x += 1"] * (length - 2 - 2 * branches)
    return [f"def {name}(x):"] + body + ["    return x"]


def padded(lines, total, comment):
    return lines + [comment] * (total - len(lines))


def write_tree(root, over):
    """Each file at its limit, or (over=True) one line or one branch past it."""
    extra = 1 if over else 0
    shutil.rmtree(root, ignore_errors=True)
    write(root, "core/long.cc", padded(["// Why: a file."], 500 + extra, "// line"))
    write(root, "frameworks/long.py", padded(['"""A module."""'], 500 + extra, "# line"))
    write(root, "core/functions.cc", cc_function("long_function", 80 + extra)
          + cc_function("branchy_function", 30, branches=24 + extra))
    write(root, "tests/functions.py", py_function("long_function", 80 + extra)
          + py_function("branchy_function", 60, branches=24 + extra))
    write(root, "core/good.h", HEADER + ["int f();"])
    write(root, "core/block.h", ["/* Why: a C header.", " *", " * Threading contract: any.",
                                 " */", "#ifndef BLOCK_H_", "#define BLOCK_H_", "#endif"])
    if over:
        write(root, "core/no_why.h", ["#pragma once", "// Thread-safety: none.", "int f();"])
        write(root, "ops/no_threading.h", ["#pragma once", "// Why: a header.", "int f();",
                                           "// Thread-safety: too late, after the code."])
    # Never walked: build folders and hidden folders.
    write(root, "build/generated.cc", padded([], 600, "// line"))
    write(root, ".git/x.py", padded([], 600, "# line"))


def run(root):
    result = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def main():
    scratch = sys.argv[1]
    failures = []
    good = os.path.join(scratch, "good")
    write_tree(good, over=False)
    code, output = run(good)
    if code != 0:
        failures.append(f"a tree at every limit failed the check:\n{output}")

    bad = os.path.join(scratch, "bad")
    write_tree(bad, over=True)
    code, output = run(bad)
    if code != 1:
        failures.append(f"a tree over every limit gave exit code {code}, not 1")
    expected = [
        "core/long.cc:1: file is 501 lines long (limit 500)",
        "frameworks/long.py:1: file is 501 lines long (limit 500)",
        "core/functions.cc:1: long_function is 81 lines long (limit 80)",
        "core/functions.cc:82: branchy_function has cyclomatic complexity 26 (limit 25)",
        "tests/functions.py:1: long_function is 81 lines long (limit 80)",
        "tests/functions.py:82: branchy_function has cyclomatic complexity 26 (limit 25)",
        "core/no_why.h:1: header without its 'Why:' line",
        "ops/no_threading.h:1: header without its threading contract",
        "check_style: 8 problem(s)",
    ]
    for line in expected:
        if line not in output:
            failures.append(f"the check did not print: {line}")
    for quiet in ("good.h", "block.h", "build/", ".git/"):
        if quiet in output:
            failures.append(f"the check reported {quiet}, which keeps the rules or is skipped")
    if failures:
        print(f"checker output on the bad tree:\n{output}")
        print("style check test failed:\n  " + "\n  ".join(failures))
        return 1
    print("style check: the tree at the limits passes and every file over them is reported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
