"""The size and comment gates of the house style (docs/architecture.md, "Style gates"; ctest
label layout). Fails, naming each file, line and limit, on:
- a source file (.cc, .h, .cu, .py) over 500 lines;
- a function over 80 lines or with a cyclomatic complexity over 25 (as lizard counts them);
- a C++ header whose opening comment lacks its "Why:" or its threading contract
  ("Thread-safety:", "Threading:" or "Threading contract:").
Usage: python3 check_style.py ROOT. Walks ROOT, skipping hidden folders and build folders."""

import os
import re
import sys

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80
MAX_COMPLEXITY = 25
SOURCE_SUFFIXES = (".cc", ".h", ".cu", ".py")
# Folder names never walked: build trees (build, build-pip, build-asan, ...), caches.
SKIPPED_DIRS = re.compile(r"^(\..*|build.*|__pycache__|node_modules)$")
# Files not held to the gates, each with its reason. Only generated or vendored files belong
# here; real code that fails a gate is split instead.
EXCLUDED = {}

WHY = re.compile(r"(^|\s)Why:")
THREADING = re.compile(r"(^|\s)(Thread-safety|Threading contract|Threading):")


def source_files(root):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not SKIPPED_DIRS.match(d))
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES):
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, root)
                if relative not in EXCLUDED:
                    yield path, relative


def opening_comment(lines):
    """The text of the comment lines a header opens with (before its first line of code; an
    include guard or #pragma once may come first), without the comment markers."""
    text = []
    in_block = False
    for line in lines:
        stripped = line.strip()
        if in_block:
            end = stripped.find("*/")
            text.append(stripped[:end] if end >= 0 else stripped)
            in_block = end < 0
        elif stripped.startswith("//"):
            text.append(stripped[2:])
        elif stripped.startswith("/*"):
            end = stripped.find("*/", 2)
            text.append(stripped[2:end] if end >= 0 else stripped[2:])
            in_block = end < 0
        elif stripped == "" or stripped == "#pragma once" or re.match(
                r"#(ifndef|define) \w+_H_?$", stripped):
            continue
        else:
            break
    return [t.strip().lstrip("*").strip() for t in text]


def header_problems(relative, lines):
    comment = " ".join(opening_comment(lines))
    problems = []
    if not WHY.search(comment):
        problems.append(f"{relative}:1: header without its 'Why:' line in the opening comment")
    if not THREADING.search(comment):
        problems.append(f"{relative}:1: header without its threading contract in the opening "
                        "comment ('Thread-safety:', 'Threading:' or 'Threading contract:')")
    return problems


def function_problems(lizard, path, relative):
    problems = []
    for function in lizard.analyze_file(path).function_list:
        where = f"{relative}:{function.start_line}: {function.name}"
        if function.length > MAX_FUNCTION_LINES:
            problems.append(f"{where} is {function.length} lines long (limit "
                            f"{MAX_FUNCTION_LINES}): split it")
        if function.cyclomatic_complexity > MAX_COMPLEXITY:
            problems.append(f"{where} has cyclomatic complexity {function.cyclomatic_complexity}"
                            f" (limit {MAX_COMPLEXITY}): split it")
    return problems


def check(root):
    try:
        import lizard
    except ImportError:
        print("check_style: lizard is missing: pip install lizard==1.24.3 "
              "(scripts/install_deps.sh installs it)", file=sys.stderr)
        return 2
    problems = []
    files = 0
    for path, relative in source_files(root):
        files += 1
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) > MAX_FILE_LINES:
            problems.append(f"{relative}:1: file is {len(lines)} lines long (limit "
                            f"{MAX_FILE_LINES}): split it along its concepts")
        if relative.endswith(".h"):
            problems.extend(header_problems(relative, lines))
        problems.extend(function_problems(lizard, path, relative))
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_style: {len(problems)} problem(s) above in {files} source files "
              "(docs/architecture.md, 'Style gates')")
        return 1
    print(f"check_style: {files} source files keep the size and comment gates")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: check_style.py ROOT")
    sys.exit(check(sys.argv[1]))
