#!/usr/bin/env python3
"""scripts/tidy on a small tree of its own (a copy of the script, this repository's .clang-tidy,
a two-file CMake project built with Ninja): a finding fails the run and is never remembered, a
clean file is remembered until it or a header it includes changes, a file the build does not
compile and a tree not built are setup errors, and a spent budget leaves files NOT CHECKED.
(The real tree is checked by CI's `scripts/tidy` stage.)"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

CMAKE = """cmake_minimum_required(VERSION 3.16)
project(tidy_fixture CXX)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
include_directories(${CMAKE_SOURCE_DIR})
add_library(fixture common/moved.cc common/clean.cc)
"""
HEADER = "#pragma once\n#include <string>\nnamespace fx {\nint Size(std::string s);\n}\n"
# bugprone-use-after-move: `s` is read after it was moved from.
MOVED = """#include <string>
#include <utility>
#include "common/text.h"
namespace fx {
int Size(std::string s) {
  std::string t = std::move(s);
  return static_cast<int>(s.size() + t.size());
}
}  // namespace fx
"""
MOVED_FIXED = MOVED.replace("s.size() + t.size()", "t.size()")
CLEAN = '#include "common/text.h"\nnamespace fx {\nint Twice(int x) { return 2 * x; }\n}\n'


class TidyScript(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="qrm-tidy-test-")
        self.root = os.path.join(self.dir, "tree")
        os.makedirs(os.path.join(self.root, "scripts"))
        os.makedirs(os.path.join(self.root, "common"))
        shutil.copy(os.path.join(REPO, "scripts", "tidy"), os.path.join(self.root, "scripts"))
        shutil.copy(os.path.join(REPO, ".clang-tidy"), self.root)
        self.write("CMakeLists.txt", CMAKE)
        self.write("common/text.h", HEADER)
        self.write("common/moved.cc", MOVED)
        self.write("common/clean.cc", CLEAN)
        self.git("init", "-q")
        self.git("add", "-A")
        self.env = dict(os.environ, QRM_TIDY_CACHE=os.path.join(self.dir, "cache"), QRM_JOBS="2")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, rel, text):
        with open(os.path.join(self.root, rel), "w", encoding="utf-8") as f:
            f.write(text)

    def git(self, *args):
        subprocess.run(["git", *args], cwd=self.root, check=True, capture_output=True)

    def build(self):
        subprocess.run(["cmake", "-S", ".", "-B", "build", "-G", "Ninja"], cwd=self.root,
                       check=True, capture_output=True)
        subprocess.run(["ninja", "-C", "build"], cwd=self.root, check=True, capture_output=True)

    def tidy(self, *args):
        proc = subprocess.run([sys.executable, "scripts/tidy", *args], cwd=self.root,
                              env=self.env, capture_output=True, text=True)
        return proc.returncode, proc.stdout + proc.stderr

    def test_finding_fails_and_is_never_remembered(self):
        self.build()
        rc, out = self.tidy()
        self.assertEqual(rc, 1, out)
        self.assertIn("bugprone-use-after-move", out)
        self.assertIn("1 of 2 files with findings", out)
        rc, out = self.tidy()
        self.assertEqual(rc, 1, out)
        self.assertIn("1 unchanged since a clean check, checking 1", out)

    def test_clean_files_are_remembered_until_an_include_changes(self):
        self.write("common/moved.cc", MOVED_FIXED)
        self.build()
        rc, out = self.tidy()
        self.assertEqual(rc, 0, out)
        self.assertIn("checking 2", out)
        rc, out = self.tidy()
        self.assertEqual(rc, 0, out)
        self.assertIn("2 unchanged since a clean check, checking 0", out)
        self.write("common/text.h", HEADER.replace("int Size", "// size\nint Size"))
        self.build()
        rc, out = self.tidy()
        self.assertEqual(rc, 0, out)
        self.assertIn("checking 2", out)  # both include the header
        rc, out = self.tidy("--no-cache")
        self.assertIn("checking 2", out)

    def test_clones_share_clean_results_whatever_their_path(self):
        self.write("common/moved.cc", MOVED_FIXED)
        self.build()
        rc, out = self.tidy()
        self.assertEqual(rc, 0, out)
        # A path with regex characters ('-', '.') still maps to the same keys.
        clone = os.path.join(self.dir, "ci-clone.2")
        shutil.copytree(self.root, clone, ignore=shutil.ignore_patterns("build"))
        self.root = clone
        self.build()
        rc, out = self.tidy()
        self.assertEqual(rc, 0, out)
        self.assertIn("2 unchanged since a clean check, checking 0", out)

    def test_a_spent_budget_leaves_files_not_checked(self):
        self.build()
        rc, out = self.tidy("--budget-minutes", "0")
        self.assertEqual(rc, 0, out)
        self.assertIn("NOT CHECKED", out)
        self.assertIn("0 of 2 files with findings, 2 not checked", out)

    def test_setup_errors(self):
        rc, out = self.tidy()
        self.assertEqual(rc, 2, out)
        self.assertIn("compile_commands.json", out)
        self.build()
        self.write("common/extra.cc", CLEAN)
        self.git("add", "-A")
        rc, out = self.tidy()
        self.assertEqual(rc, 2, out)
        self.assertIn("does not compile common/extra.cc", out)


if __name__ == "__main__":
    unittest.main()
