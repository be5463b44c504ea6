#!/usr/bin/env python3
"""docs/configuration.md shows each binary's --help exactly as the binary prints it.

  check_config_docs.py <docs/configuration.md> <binary>=<path>... [--write]

Each "## <binary>" section's first fenced block must equal `<binary> --help` (trailing
spaces ignored). A flag added to a binary without the reference changing fails here, so the
reference cannot fall behind the code. `--write` rewrites the blocks from the binaries.
"""
import pathlib
import re
import subprocess
import sys

SECTION = re.compile(r"^## (\S+)\n\n```\n(.*?)```\n", re.S | re.M)


def normalise(text):
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def main():
    doc_path = pathlib.Path(sys.argv[1])
    write = "--write" in sys.argv
    binaries = dict(a.split("=", 1) for a in sys.argv[2:] if a != "--write")
    doc = doc_path.read_text()
    problems, seen = [], set()

    def replace(match):
        name, block = match.group(1), match.group(2)
        if name not in binaries:
            return match.group(0)
        seen.add(name)
        run = subprocess.run([binaries[name], "--help"], capture_output=True, text=True,
                             timeout=30)
        helptext = run.stdout if run.stdout.strip() else run.stderr
        if normalise(block) != normalise(helptext):
            problems.append(f"## {name}: the block differs from `{name} --help`:\n{helptext}")
        return f"## {name}\n\n```\n{normalise(helptext)}\n```\n"

    rewritten = SECTION.sub(replace, doc)
    for name in sorted(set(binaries) - seen):
        problems.append(f"no '## {name}' section with a fenced --help block")
    if write:
        doc_path.write_text(rewritten)
        print(f"rewrote {len(seen)} blocks of {doc_path}")
        return 0
    for problem in problems:
        print(problem)
    print(f"{len(seen)} --help blocks checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
