#!/usr/bin/env python3
"""Every string constant of common/protocol_keys.h appears, in backquotes, in docs/annotations.md.

    protocol_keys_documented.py <repo root>

Exit 0 when all are documented; 1 naming each missing key; 2 when the header has no keys (the
check would otherwise pass on a moved or renamed header).
"""
import re
import sys


def main(root):
    header = open(f"{root}/common/protocol_keys.h", encoding="utf-8").read()
    doc = open(f"{root}/docs/annotations.md", encoding="utf-8").read()
    keys = re.findall(r'^inline constexpr [^=]+=\s*"([^"]+)";', header, re.M)
    keys += re.findall(r'^inline constexpr [^=]+=\n\s*"([^"]+)";', header, re.M)
    if len(keys) < 10:
        print(f"common/protocol_keys.h: found only {len(keys)} keys; is the header moved?")
        return 2
    keys = sorted(set(keys))
    missing = [k for k in keys if f"`{k}" not in doc]
    for key in missing:
        print(f"docs/annotations.md: key \"{key}\" of common/protocol_keys.h is not documented")
    if not missing:
        print(f"protocol keys: all {len(keys)} keys of common/protocol_keys.h are documented")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
