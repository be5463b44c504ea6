#!/usr/bin/env python3
"""Checks that a guide's code blocks are the code the build compiles.

    check_guide_snippets.py REPO_ROOT GUIDE [DIR...]

In the guide (Markdown), a code block is tied to a marked region of a source file by an HTML
comment right above it:

    <!-- snippet: examples/accelerator-slots/accel_plugin.cc allocate -->
    ```cpp
    ...
    ```

and in the source file the region is bracketed by lines containing `[guide:allocate]` and
`[guide:end]` (in a comment of the file's language: `// [guide:allocate]`, `# [guide:end]`).
The check fails when
  * a block differs from its region (compared after removing common indentation),
  * a `cpp` or `cmake` block has no snippet comment (code that nothing compiles),
  * a region is unterminated, nested or named twice in one file,
  * a file tied to the guide, or any file under a DIR (relative to REPO_ROOT), has a region
    the guide does not show (a stale marker),
  * a relative link of the guide names a file or directory that does not exist.
Each problem is printed as GUIDE:LINE: message; the exit code is the number of problems
(capped at 1).
"""
import difflib
import pathlib
import re
import sys
import textwrap

SNIPPET = re.compile(r"^<!--\s*snippet:\s*(\S+)\s+(\S+)\s*-->\s*$")
FENCE = re.compile(r"^```(\S*)\s*$")
MARKER = re.compile(r"\[guide:([A-Za-z0-9_.-]+)\]")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
CHECKED_LANGUAGES = {"cpp", "c++", "cmake"}


def regions(path):
    """name -> text of each marked region of `path`; raises ValueError on bad markers."""
    found, current, lines = {}, None, []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        marker = MARKER.search(line)
        if not marker:
            if current:
                lines.append(line)
            continue
        name = marker.group(1)
        if name == "end":
            if not current:
                raise ValueError(f"{path}:{number}: [guide:end] without a region")
            found[current] = "\n".join(lines)
            current, lines = None, []
        elif current:
            raise ValueError(f"{path}:{number}: region {name} starts inside region {current}")
        elif name in found:
            raise ValueError(f"{path}:{number}: region {name} appears twice")
        else:
            current = name
    if current:
        raise ValueError(f"{path}: region {current} has no [guide:end]")
    return found


def blocks(guide_lines):
    """(line number, language, snippet (file, name) or None, text) of each fenced block."""
    pending, index = None, 0
    while index < len(guide_lines):
        line = guide_lines[index]
        snippet = SNIPPET.match(line)
        fence = FENCE.match(line)
        if snippet:
            pending = (index + 1, snippet.group(1), snippet.group(2))
        elif fence:
            start = index
            index += 1
            while index < len(guide_lines) and guide_lines[index].strip() != "```":
                index += 1
            text = "\n".join(guide_lines[start + 1:index])
            yield start + 1, fence.group(1), pending, text
            pending = None
        elif line.strip() and pending:
            yield pending[0], None, pending, None  # a snippet comment with no block below
            pending = None
        index += 1


def check(root, guide_name, scanned_dirs):
    guide = root / guide_name
    guide_lines = guide.read_text().splitlines()
    problems, used, parsed = [], {}, {}

    def report(line, message):
        problems.append(f"{guide_name}:{line}: {message}")

    for line, language, snippet, text in blocks(guide_lines):
        if snippet is None:
            if language.lower() in CHECKED_LANGUAGES:
                report(line, f"a {language} block without a <!-- snippet: FILE NAME --> comment")
            continue
        _, file_name, name = snippet
        if text is None:
            report(line, f"snippet {file_name} {name} is not followed by a code block")
            continue
        path = root / file_name
        if file_name not in parsed:
            try:
                parsed[file_name] = regions(path) if path.is_file() else None
            except ValueError as error:
                report(line, str(error))
                parsed[file_name] = {}
        if parsed[file_name] is None:
            report(line, f"snippet file {file_name} does not exist")
            continue
        used.setdefault(file_name, set()).add(name)
        if name not in parsed[file_name]:
            report(line, f"{file_name} has no region [guide:{name}]")
            continue
        want = textwrap.dedent(parsed[file_name][name]).strip("\n")
        have = textwrap.dedent(text).strip("\n")
        if want != have:
            diff = "\n".join(difflib.unified_diff(
                want.splitlines(), have.splitlines(), f"{file_name} [guide:{name}]",
                f"{guide_name} block at line {line}", lineterm=""))
            report(line, f"the block differs from {file_name} [guide:{name}]:\n{diff}")

    for directory in scanned_dirs:
        for path in sorted((root / directory).rglob("*")):
            file_name = path.relative_to(root).as_posix()
            if path.is_file() and file_name not in parsed:
                try:
                    parsed[file_name] = regions(path)
                except (ValueError, UnicodeDecodeError) as error:
                    problems.append(str(error))
    for file_name, found in parsed.items():
        for name in sorted(set(found or {}) - used.get(file_name, set())):
            problems.append(f"{file_name}: region [guide:{name}] is not shown by {guide_name}")

    for number, line in enumerate(guide_lines, 1):
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:
            if not (guide.parent / target).exists():
                report(number, f"link target {target} does not exist")
    return problems


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    problems = check(pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3:])
    for problem in problems:
        print(problem)
    print(f"{sys.argv[2]}: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
