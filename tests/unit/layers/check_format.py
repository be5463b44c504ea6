#!/usr/bin/env python3
"""Every C++ file of the tree is formatted as the repository's .clang-format says.

    check_format.py <repo root>

Runs `clang-format --dry-run --Werror` over every .h/.cc outside build directories and .git;
exit 0 when all are formatted, 1 naming each file that is not (fix: clang-format -i FILE),
2 when clang-format is missing (scripts/install-deps installs it).
"""
import os
import shutil
import subprocess
import sys

SKIP = {".git", ".ci"}


def sources(root):
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP and not d.startswith("build"))
        for name in sorted(files):
            if name.endswith((".h", ".cc")):
                yield os.path.join(top, name)


def main(root):
    tool = shutil.which("clang-format")
    if tool is None:
        print("clang-format not found (scripts/install-deps installs it)")
        return 2
    files = list(sources(root))
    bad = []
    for i in range(0, len(files), 100):
        batch = files[i:i + 100]
        run = subprocess.run([tool, "--dry-run", "--Werror", *batch], capture_output=True, text=True)
        if run.returncode != 0:
            bad += sorted({line.split(":", 1)[0] for line in run.stderr.splitlines()
                           if ": error:" in line})
    for path in bad:
        print(f"{os.path.relpath(path, root)}: not clang-formatted (clang-format -i {os.path.relpath(path, root)})")
    print(f"clang-format: {len(files) - len(bad)} of {len(files)} files formatted")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
