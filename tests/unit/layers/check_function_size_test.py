#!/usr/bin/env python3
"""scripts/check-function-size on small trees: every kind of definition is measured, and what
is not a function (classes, namespaces, braced initializers, braces in comments and literals)
is not. (The real tree is the CTest test `functions:size`.)"""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts",
                      "check-function-size")


def load_script():
    loader = importlib.machinery.SourceFileLoader("check_function_size", SCRIPT)
    spec = importlib.util.spec_from_loader("check_function_size", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


CHECK = load_script()


def body(n):
    """n statement lines."""
    return "".join(f"  x += {i};\n" for i in range(n))


def lengths(text):
    return [last - first + 1 for first, last in CHECK.functions(text)]


class Measuring(unittest.TestCase):
    def test_free_function(self):
        self.assertEqual(lengths("int F(int x) {\n" + body(3) + "}\n"), [5])

    def test_template_line_counts(self):
        self.assertEqual(lengths("template <typename T, typename U = std::vector<T>>\n"
                                 "T F(T x) {\n  return x;\n}\n"), [4])

    def test_inline_member_after_access_specifier(self):
        text = ("class A : public B {\n public:\n  int F() const override {\n" + body(2) +
                "  }\n\n private:\n  int y_ = 0;\n};\n")
        self.assertEqual(lengths(text), [4])

    def test_constructor_with_braced_member_initializers(self):
        text = ("A::A(int x)\n    : a_{x},\n      b_(x),\n      c_{std::vector<int>{1, 2}} {\n" +
                body(2) + "}\n")
        self.assertEqual(lengths(text), [7])

    def test_default_argument_and_operators(self):
        text = ("void F(int x = 3, bool b = a == c) {\n" + body(1) + "}\n"
                "A& A::operator=(const A& o) {\n  return *this;\n}\n"
                "bool operator==(const A& a, const A& b) {\n  return true;\n}\n")
        self.assertEqual(lengths(text), [3, 3, 3])

    def test_lambdas_and_local_classes_belong_to_their_function(self):
        text = ("void F() {\n  auto g = [&](int y) {\n    return y;\n  };\n"
                "  struct Local {\n    int H() { return 1; }\n  };\n  if (a) {\n  } else {\n  }\n}\n")
        self.assertEqual(lengths(text), [11])

    def test_macro_test_case_is_a_function(self):
        self.assertEqual(lengths('TEST_CASE("a {", "[x]") {\n' + body(4) + "}\n"), [6])

    def test_trailing_return_and_noexcept(self):
        text = "auto F() -> int {\n  return 1;\n}\nvoid G() noexcept {\n}\n"
        self.assertEqual(lengths(text), [3, 2])


class NotFunctions(unittest.TestCase):
    def test_scopes_and_initializers(self):
        text = ("namespace a {\nnamespace {\n"
                "struct S {\n  int x;\n};\n"
                "enum class E : int {\n  kA,\n};\n"
                'extern "C" {\nint C();\n}\n'
                "constexpr std::pair<int, int> kTable[] = {\n    {1, 2},\n    {3, 4},\n};\n"
                "const std::vector<int> kList{1, 2, 3};\n"
                "const Options kDefaults = Make({1, 2});\n"
                "}  // namespace\n}  // namespace a\n")
        self.assertEqual(lengths(text), [])

    def test_braces_in_comments_literals_and_directives(self):
        text = ('// void Fake() {\n/* int G() {\n} */\n#define M(x) { x }\n'
                'const char* kS = "void H() {";\nconst char kC = \'{\';\n'
                'const char* kR = R"(int I() {)";\n'
                "int J() {\n  return 1'000;\n}\n")
        self.assertEqual(lengths(text), [3])


class WholeTree(unittest.TestCase):
    def run_on(self, files, *extra):
        with tempfile.TemporaryDirectory() as root:
            for path, text in files.items():
                full = os.path.join(root, path)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "w") as f:
                    f.write(text)
            p = subprocess.run([sys.executable, SCRIPT, "--root", root, *extra],
                               capture_output=True, text=True)
            return p.returncode, p.stdout

    def test_a_long_function_fails_naming_file_line_and_length(self):
        code, out = self.run_on({"mod/a.cc": "void Long() {\n" + body(80) + "}\n"})
        self.assertEqual(code, 1)
        self.assertIn("mod/a.cc:1: 82 lines: void Long() {", out)

    def test_at_the_limit_passes(self):
        code, out = self.run_on({"mod/a.cc": "void Fits() {\n" + body(78) + "}\n"})
        self.assertEqual(code, 0, out)

    def test_tests_and_bench_are_not_product(self):
        long_one = "void Long() {\n" + body(100) + "}\n"
        code, out = self.run_on({"tests/a.cc": long_one, "bench/b.cc": long_one,
                                 "examples/x/tests/c.cc": long_one, "build/d.cc": long_one})
        self.assertEqual(code, 0, out)

    def test_limit_is_a_flag(self):
        code, _ = self.run_on({"mod/a.cc": "void F() {\n" + body(10) + "}\n"}, "--max-lines", "10")
        self.assertEqual(code, 1)


if __name__ == "__main__":
    unittest.main()
