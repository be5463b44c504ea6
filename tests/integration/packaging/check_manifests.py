#!/usr/bin/env python3
"""Checks the Kubernetes manifests in examples/deploy/kubernetes against what qrm needs.

  check_manifests.py <repo root>

Every DaemonSet: in qrm-system, annotated qrm.io/skip: "true" (qrm must not admit its own
pods), no hostPID, runs /usr/local/bin/<its name> with --config /etc/qrm/<its name>.json from
the qrm-config ConfigMap, every path flag (--sysfs-root, ...) names a mounted directory,
every mount has a volume, hostPath volumes are only the node directories qrm uses, and the
liveness/readiness probes ask /healthz and /readyz at the metrics_address its configuration
sets (hostNetwork when that is the node's loopback). The ConfigMap holds exactly
examples/configs/portable (compared as JSON), and kustomization.yaml lists every manifest. Exits 77 (CTest: skipped) without PyYAML.
"""
import json
import pathlib
import sys

try:
    import yaml
except ImportError:
    print("PyYAML is not installed (Debian: python3-yaml): skipped")
    sys.exit(77)

NAMESPACE = "qrm-system"
SKIP_ANNOTATION = "qrm.io/skip"
ALLOWED_HOST_PATHS = {"/var/run/qrm", "/var/lib/qrm", "/run/containerd", "/sys", "/proc",
                      "/var/run/netns"}
PATH_FLAGS = ("--sysfs-root", "--procfs-root", "--netns-dir")
CONFIG_EXAMPLE = "portable"

errors = []


def fail(where, message):
    errors.append(f"{where}: {message}")


def flag_value(args, flag):
    """The value after `flag` in an argument list (None when absent)."""
    if flag in args:
        at = args.index(flag)
        return args[at + 1] if at + 1 < len(args) else ""
    return None


def mounted(path, mounts):
    return any(path == m["mountPath"] or path.startswith(m["mountPath"].rstrip("/") + "/")
               for m in mounts)


def check_probes(where, spec, container, config):
    """Probes reach the health endpoint the binary's configuration opens."""
    address = config.get("metrics_address", "")
    if ":" not in address:
        fail(where, f"the configuration sets no metrics_address for the probes ({address!r})")
        return
    host, port = address.rsplit(":", 1)
    if host.startswith("127.") and not spec.get("hostNetwork"):
        fail(where, f"metrics_address {address} is the node's loopback but hostNetwork is off")
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        get = container.get(probe, {}).get("httpGet")
        if not get:
            fail(where, f"no {probe} (httpGet {path})")
            continue
        got = (str(get.get("host", "")), str(get.get("port")), get.get("path"))
        if got != (host, port, path):
            fail(where, f"{probe} asks {got}, expected {(host, port, path)}")


def check_daemonset(where, ds, config_keys, configs):
    name = ds["metadata"]["name"]
    if ds["metadata"].get("namespace") != NAMESPACE:
        fail(where, f"namespace is {ds['metadata'].get('namespace')!r}, not {NAMESPACE}")
    template = ds["spec"]["template"]
    labels = template["metadata"].get("labels", {})
    for key, value in ds["spec"]["selector"]["matchLabels"].items():
        if labels.get(key) != value:
            fail(where, f"selector {key}={value} does not match the pod labels {labels}")
    annotations = template["metadata"].get("annotations", {})
    if annotations.get(SKIP_ANNOTATION) != "true":
        fail(where, f'pod template lacks the annotation {SKIP_ANNOTATION}: "true"')
    spec = template["spec"]
    if spec.get("hostPID"):
        fail(where, "hostPID is not needed (procfs is mounted at --procfs-root)")
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    for volume in volumes.values():
        host_path = volume.get("hostPath", {}).get("path")
        if host_path is not None and host_path not in ALLOWED_HOST_PATHS:
            fail(where, f"hostPath {host_path} is not one of {sorted(ALLOWED_HOST_PATHS)}")
        config_map = volume.get("configMap", {}).get("name")
        if config_map is not None and config_map != "qrm-config":
            fail(where, f"volume {volume['name']} mounts ConfigMap {config_map}, not qrm-config")
    containers = spec["containers"]
    if [c["name"] for c in containers] != [name]:
        fail(where, f"expected one container named {name}")
    for container in containers:
        command = container.get("command", [])
        if command != [f"/usr/local/bin/{name}"]:
            fail(where, f"command is {command}, not /usr/local/bin/{name}")
        mounts = container.get("volumeMounts", [])
        for mount in mounts:
            if mount["name"] not in volumes:
                fail(where, f"volumeMount {mount['name']} has no volume")
        args = container.get("args", [])
        config = flag_value(args, "--config")
        if config != f"/etc/qrm/{name}.json":
            fail(where, f"--config is {config}, not /etc/qrm/{name}.json")
        elif not mounted(config, mounts):
            fail(where, f"--config {config} is not in a mounted volume")
        if f"{name}.json" not in config_keys:
            fail(where, f"ConfigMap qrm-config has no key {name}.json")
        for flag in PATH_FLAGS:
            value = flag_value(args, flag)
            if value is not None and not mounted(value, mounts):
                fail(where, f"{flag} {value} is not a mounted directory")
        check_probes(where, spec, container, configs.get(f"{name}.json", {}))


def check_extender(documents):
    """The extender's Deployment: in qrm-system, its binary, probes on its --address port."""
    deployments = [d for _, d in documents.get("Deployment", [])
                   if d["metadata"]["name"] == "qrm-scheduler-extender"]
    if len(deployments) != 1:
        fail("deployments", "expected the Deployment qrm-scheduler-extender")
        return
    where = "qrm-scheduler-extender.yaml"
    deployment = deployments[0]
    if deployment["metadata"].get("namespace") != NAMESPACE:
        fail(where, f"not in {NAMESPACE}")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    if container.get("command") != ["/usr/local/bin/qrm-scheduler-extender"]:
        fail(where, "does not run /usr/local/bin/qrm-scheduler-extender")
    address = flag_value(container.get("args", []), "--address") or ""
    port = int(address.rsplit(":", 1)[1]) if ":" in address else None
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        get = container.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or get.get("port") != port:
            fail(where, f"{probe} does not ask {path} on port {port}")
    mounts = container.get("volumeMounts", [])
    args_file = flag_value(container.get("args", []), "--load-aware-args")
    if args_file and not mounted(args_file, mounts):
        fail(where, f"--load-aware-args {args_file} is not in a mounted volume")


# What qrm-drain-planner lists (cluster/drain/live_snapshot.h): (API group, resource).
DRAIN_PLANNER_READS = [("", "nodes"), ("", "pods"), ("policy", "poddisruptionbudgets"),
                       ("apps", "replicasets"), ("", "replicationcontrollers"),
                       ("", "namespaces"), ("", "persistentvolumeclaims"),
                       ("", "persistentvolumes"), ("storage.k8s.io", "storageclasses"),
                       ("storage.k8s.io", "csinodes"),
                       ("topology.node.k8s.io", "noderesourcetopologies")]


def grants(role, group, resource, verb):
    return any(group in rule.get("apiGroups", []) and resource in rule.get("resources", [])
               and verb in rule.get("verbs", []) for rule in role.get("rules", []))


def check_drain_planner(documents, host_roles):
    """The planner's CronJob runs `plan` with the nodes' role table; its bound role lists
    everything the plan reads; the execute role (unbound) grants the cordon and the evictions."""
    where = "qrm-drain-planner.yaml"
    jobs = [d for _, d in documents.get("CronJob", [])
            if d["metadata"]["name"] == "qrm-drain-planner"]
    if len(jobs) != 1 or jobs[0]["metadata"].get("namespace") != NAMESPACE:
        fail(where, f"expected the CronJob qrm-drain-planner in {NAMESPACE}")
        return
    pod = jobs[0]["spec"]["jobTemplate"]["spec"]["template"]
    container = pod["spec"]["containers"][0]
    if container.get("command") != ["/usr/local/bin/qrm-drain-planner"]:
        fail(where, "does not run /usr/local/bin/qrm-drain-planner")
    if container.get("args", [""])[0] != "plan":
        fail(where, "the CronJob must only plan (execute needs the execute role bound)")
    if pod["metadata"].get("annotations", {}).get(SKIP_ANNOTATION) != "true":
        fail(where, f"the pod lacks {SKIP_ANNOTATION}")
    planner_roles = json.loads(flag_value(container.get("args", []), "--roles") or "{}")
    if planner_roles != host_roles:
        fail(where, "--roles differs from qrm-host.json's roles: pods with a role would be read "
                    "differently from the nodes")
    state = flag_value(container.get("args", []), "--state")
    if state and not mounted(state, container.get("volumeMounts", [])):
        fail(where, f"--state {state} is not in a mounted volume")
    roles = {d["metadata"]["name"]: d for _, d in documents.get("ClusterRole", [])}
    reader = roles.get("qrm-drain-planner", {})
    for group, resource in DRAIN_PLANNER_READS:
        if not grants(reader, group, resource, "list"):
            fail(where, f"the ClusterRole qrm-drain-planner does not let it list {resource}")
    executor = roles.get("qrm-drain-planner-execute", {})
    if not grants(executor, "", "nodes", "patch") or \
            not grants(executor, "", "pods/eviction", "create"):
        fail(where, "the ClusterRole qrm-drain-planner-execute lacks nodes patch or "
                    "pods/eviction create")


def main():
    root = pathlib.Path(sys.argv[1])
    manifests = root / "examples/deploy/kubernetes"
    configs = root / "examples/configs" / CONFIG_EXAMPLE
    documents = {}
    for path in sorted(manifests.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                documents.setdefault(doc["kind"], []).append((path.name, doc))

    kustomization = documents.pop("Kustomization", [])
    listed = set(kustomization[0][1]["resources"]) if kustomization else set()
    for path in manifests.glob("*.yaml"):
        if path.name != "kustomization.yaml" and path.name not in listed:
            fail("kustomization.yaml", f"does not list {path.name}")

    namespaces = [doc["metadata"]["name"] for _, doc in documents.get("Namespace", [])]
    if namespaces != [NAMESPACE]:
        fail("namespace", f"expected the namespace {NAMESPACE}, found {namespaces}")

    config_maps = [(f, d) for f, d in documents.get("ConfigMap", [])
                   if d["metadata"]["name"] != "qrm-scheduler-extender"]
    data = config_maps[0][1].get("data", {}) if len(config_maps) == 1 else {}
    if len(config_maps) != 1 or config_maps[0][1]["metadata"]["name"] != "qrm-config":
        fail("configmap", "expected exactly one ConfigMap, qrm-config")
    expected = {p.name: json.loads(p.read_text()) for p in configs.glob("*.json")}
    if set(data) != set(expected):
        fail("configmap", f"keys {sorted(data)} differ from {configs}: {sorted(expected)}")
    for key, text in data.items():
        if key in expected and json.loads(text) != expected[key]:
            fail(f"configmap {key}", f"differs from {configs / key}")
    host = json.loads(data.get("qrm-host.json", "{}"))
    if NAMESPACE not in host.get("skip_namespaces", []):
        fail("configmap qrm-host.json", f"skip_namespaces lacks {NAMESPACE}")

    daemonsets = documents.get("DaemonSet", [])
    names = sorted(doc["metadata"]["name"] for _, doc in daemonsets)
    if names != sorted(["qrm-host", "qrm-cpu-plugin", "qrm-memory-plugin", "qrm-nic-plugin",
                        "qrm-advisor"]):
        fail("daemonsets", f"unexpected set {names}")
    for file_name, ds in daemonsets:
        parsed = {key: json.loads(text) for key, text in data.items()}
        check_daemonset(f"{file_name} ({ds['metadata']['name']})", ds, set(data), parsed)

    check_extender(documents)
    check_drain_planner(documents, host.get("roles", {}))

    for error in errors:
        print(error)
    print(f"{len(daemonsets)} DaemonSets, {len(data)} configurations checked; "
          f"{len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
