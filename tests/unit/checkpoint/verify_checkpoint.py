#!/usr/bin/env python3
"""Independent verifier for qrm checkpoint files, written only from the format's
definition in checkpoint/canonical_json.h: proves the checksum is portable.
Prints the checksum it computed; exits 1 on mismatch."""
import json
import sys


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


with open(sys.argv[1], "rb") as f:
    doc = json.loads(f.read().decode("utf-8"))
canonical = json.dumps(doc["data"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
computed = "fnv1a64:%016x" % fnv1a64(canonical.encode("utf-8"))
print(computed)
sys.exit(0 if computed == doc["checksum"] else 1)
