"""Lists what to hide so that installed Debian packages look absent, for hide_packages.sh.

Why: the GPU kit's self-sufficiency test (gpu_kit_test.sh) builds runrun on this machine with
the kit's packages hidden, as on the GPU machine that lacks them. Every file of the packages is
hidden, not only their -dev parts: a build or a run that still reached one would fail instead of
silently using it.

Usage: python3 hidden_paths.py PACKAGE...
Prints one line per path to hide, "dir PATH" or "file PATH" (a symlink counts as a file): a
folder when everything in it belongs to the packages, else its files one by one. Paths are
canonical (/lib/... is /usr/lib/... on a merged-/usr system). Packages not installed are skipped.
"""

import os
import subprocess
import sys


def canonical(path):
    # A folder is the folder it resolves to (/lib is /usr/lib); otherwise the last component is
    # kept as it is: a symlink of the package is hidden itself, not what it points to.
    if os.path.isdir(path):
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def package_paths(packages):
    paths = set()
    for package in packages:
        listing = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True)
        if listing.returncode != 0:
            continue
        for line in listing.stdout.splitlines():
            if line.startswith("/") and line != "/.":
                paths.add(canonical(line))
    return paths


def hidden(packages):
    owned = package_paths(packages)
    def is_folder(p):
        return os.path.isdir(p) and not os.path.islink(p)

    files = {p for p in owned if os.path.lexists(p) and not is_folder(p)}
    dirs = sorted((p for p in owned if is_folder(p)), key=lambda p: p.count("/"), reverse=True)
    whole = set()
    for d in dirs:  # deepest first, so a folder's subfolders are decided before it
        entries = [os.path.join(d, e) for e in os.listdir(d)]
        if entries and all(e in files or e in whole for e in entries):
            whole.add(d)
    for d in sorted(whole):
        if os.path.dirname(d) not in whole:
            yield "dir", d
    for f in sorted(files):
        if os.path.dirname(f) not in whole:
            yield "file", f


def main():
    for kind, path in hidden(sys.argv[1:]):
        print(kind, path)


if __name__ == "__main__":
    main()
