#!/usr/bin/env python3
"""Every shipped configuration, checked with --check-config on fake machines of every shape.

  check_configs_on_machines.py <repo root> <qrm-fake-machine> <binary>=<path>...

Sources: examples/configs/<example>/<binary>.json and the qrm-config ConfigMap in
examples/deploy/kubernetes/configmap.yaml (what a DaemonSet would start with). Each runs as
`<binary> --config F --check-config --sysfs-root ... --procfs-root ... [--netns-dir ...]` on
each shape qrm-fake-machine writes.

Expected:
  * the portable configurations (examples/configs/portable and the ConfigMap) pass on every
    shape: they name no CPU and no NIC;
  * the design document's examples pass on its machine (doc80); on another shape they either
    pass or are refused with exit code 2 and a message naming a key of that file (they name
    the document's CPUs and NICs), never another exit code, a crash or a silent pass of a
    key that does not fit.
Exits 77 (CTest: skipped) without PyYAML.
"""
import json
import pathlib
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("PyYAML is not installed (Debian: python3-yaml): skipped")
    sys.exit(77)

PORTABLE = {"portable", "configmap"}
DOCUMENT_MACHINE = "doc80"


def shapes(fake_machine):
    out = subprocess.run([fake_machine, "--list"], capture_output=True, text=True, check=True)
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def write_machine(fake_machine, shape, where):
    subprocess.run([fake_machine, "--shape", shape, "--out", str(where)], check=True,
                   capture_output=True)
    return where


def config_sources(root, scratch):
    """(origin, binary, path) for every shipped configuration file."""
    sources = []
    for path in sorted((root / "examples/configs").glob("*/*.json")):
        sources.append((path.parent.name, path.stem, path))
    configmap = root / "examples/deploy/kubernetes/configmap.yaml"
    for doc in yaml.safe_load_all(configmap.read_text()):
        if not doc or doc.get("kind") != "ConfigMap":
            continue
        for key, text in sorted(doc["data"].items()):
            path = scratch / "configmap" / key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            sources.append(("configmap", pathlib.Path(key).stem, path))
    return sources


def check(binary, config, machine):
    args = [binary, "--config", str(config), "--check-config",
            "--sysfs-root", str(machine / "sys")]
    if not binary.endswith("qrm-host"):
        args += ["--procfs-root", str(machine / "proc"), "--netns-dir", str(machine / "netns")]
    run = subprocess.run(args, capture_output=True, text=True, timeout=30)
    return run.returncode, (run.stdout + run.stderr).strip()


def judge(origin, shape, config, code, output):
    """None when the result is what the configuration's kind promises, else the problem."""
    if origin in PORTABLE or shape == DOCUMENT_MACHINE:
        return None if code == 0 else f"expected to pass, exit {code}: {output}"
    if code == 0:
        return None
    if code != 2:
        return f"exit {code} (a configuration that does not fit must exit 2): {output}"
    keys = json.loads(pathlib.Path(config).read_text()).keys()
    spellings = {k for key in keys for k in (key, key.replace("_", "-"))}
    if not any(k in output for k in spellings):
        return f"refused without naming a key of the file: {output}"
    return None


def main():
    root = pathlib.Path(sys.argv[1])
    fake_machine = sys.argv[2]
    binaries = dict(arg.split("=", 1) for arg in sys.argv[3:])
    problems, rows = [], []
    with tempfile.TemporaryDirectory(prefix="qrm-configs-") as tmp:
        scratch = pathlib.Path(tmp)
        machines = {s: write_machine(fake_machine, s, scratch / "machines" / s)
                    for s in shapes(fake_machine)}
        for origin, binary, config in config_sources(root, scratch):
            if binary not in binaries:
                problems.append(f"{origin}/{binary}.json: no such binary in this build")
                continue
            for shape, machine in machines.items():
                code, output = check(binaries[binary], config, machine)
                rows.append(f"{origin + '/' + binary:32} {shape:10} exit {code}  "
                            f"{output.splitlines()[-1] if output else ''}")
                problem = judge(origin, shape, config, code, output)
                if problem:
                    problems.append(f"{origin}/{binary}.json on {shape}: {problem}")
    print("\n".join(rows))
    for problem in problems:
        print("PROBLEM", problem)
    print(f"{len(rows)} checks, {len(problems)} problem(s)")
    return 1 if problems or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
