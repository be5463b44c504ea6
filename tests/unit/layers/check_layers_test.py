#!/usr/bin/env python3
"""scripts/check-layers on small trees: each rule fails when broken. (The real tree is the
CTest test `layers:include directions`.)"""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts",
                      "check-layers")

TABLE = """# Architecture
```layers
low:
mid: low
high: low mid
```
"""


def run(root):
    p = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


class Tree:
    def __init__(self, table=TABLE, modules=("low", "mid", "high")):
        self.dir = tempfile.TemporaryDirectory()
        self.write("docs/architecture.md", table)
        for m in modules:
            self.write(f"{m}/{m.replace('/', '_')}.h", "#pragma once\n")

    def write(self, path, text):
        full = os.path.join(self.dir.name, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)


class CheckLayersTest(unittest.TestCase):
    def setUp(self):
        # Each test's tree lives as long as the test.
        self.trees = []

    def tearDown(self):
        for t in self.trees:
            t.dir.cleanup()

    def test_downward_includes_pass(self):
        t = Tree()
        self.trees.append(t)
        t.write("high/a.cc", '#include "mid/mid.h"\n#include "low/low.h"\n#include <vector>\n')
        t.write("mid/b.cc", '#include "low/low.h"\n#include "mid/mid.h"\n')
        code, out = run(t.dir.name)
        self.assertEqual(code, 0, out)

    def test_upward_include_fails_naming_file_line_and_modules(self):
        t = Tree()
        self.trees.append(t)
        t.write("low/c.cc", '// a comment\n#include "high/high.h"\n')
        code, out = run(t.dir.name)
        self.assertEqual(code, 1, out)
        self.assertIn('low/c.cc:2: #include "high/high.h": module low may not include high', out)

    def test_sideways_include_not_listed_fails(self):
        t = Tree("```layers\nlow:\nmid: low\nside: low\n```\n")
        self.trees.append(t)
        t.write("side/s.h", "")
        t.write("side/s.cc", '#include "mid/mid.h"\n')
        code, out = run(t.dir.name)
        self.assertEqual(code, 1, out)
        self.assertIn("module side may not include mid", out)

    def test_file_outside_every_module_fails(self):
        t = Tree()
        self.trees.append(t)
        t.write("stray/x.cc", "int x;\n")
        code, out = run(t.dir.name)
        self.assertEqual(code, 1, out)
        self.assertIn("stray/x.cc: in no module of the layers table", out)

    def test_table_allowing_a_later_module_is_rejected(self):
        t = Tree("```layers\nlow: mid\nmid: low\nhigh: low mid\n```\n")
        self.trees.append(t)
        code, out = run(t.dir.name)
        self.assertEqual(code, 2, out)
        self.assertIn("module 'low' allows 'mid', which is not listed before it", out)

    def test_table_naming_a_missing_folder_is_rejected(self):
        t = Tree("```layers\nlow:\nmid: low\nhigh: low mid\nghost: low\n```\n")
        self.trees.append(t)
        code, out = run(t.dir.name)
        self.assertEqual(code, 2, out)
        self.assertIn("module 'ghost' is not a folder of the tree", out)

    def test_nested_module_and_wildcard(self):
        t = Tree("```layers\nlow:\nlow/sub: low\nhigh: low/*\n```\n", ("low", "low/sub", "high"))
        self.trees.append(t)
        t.write("low/sub/s.h", "")
        t.write("high/h.cc", '#include "low/sub/s.h"\n')
        self.assertEqual(run(t.dir.name)[0], 0)
        t.write("high/h2.cc", '#include "low/low.h"\n')  # low/* is the modules under low/ only
        code, out = run(t.dir.name)
        self.assertEqual(code, 1, out)
        self.assertIn("module high may not include low", out)

    def test_missing_table_is_an_error(self):
        t = Tree("# Architecture\nno table here\n")
        self.trees.append(t)
        code, out = run(t.dir.name)
        self.assertEqual(code, 2, out)
        self.assertIn("no ```layers block", out)


if __name__ == "__main__":
    unittest.main()
