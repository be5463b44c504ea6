#!/usr/bin/env bash
# Regenerates the seeds that cannot be written by hand: the checksummed checkpoint files
# (corpus/checkpoint) and the binary CRI requests (corpus/cri_request, encoded by protoc from
# the text protos below). The text seeds of the other targets are plain files in corpus/.
#
#   tests/fuzz/make_seeds.sh
set -euo pipefail
cd "$(dirname "$0")"
api=../../api

encode() {  # encode <message> <proto file>  (text proto on stdin, binary on stdout)
  protoc -I"$api" --encode="$1" "$api/$2"
}
b64() { encode "resourceplugin.v1alpha1.$1" resourceplugin_v1alpha1.proto | base64 -w0; }

# --- checkpoint: host pod files and CPU plugin states, sealed like checkpoint::Write -------
mkdir -p corpus/checkpoint
export REQ CPU MEM
REQ=$(b64 ResourceRequest <<'EOF'
pod_uid: "u1" pod_namespace: "default" pod_name: "web" container_name: "app"
hint { nodes: 0 preferred: true }
resource_requests { key: "cpu" value: 4 } resource_requests { key: "memory" value: 1073741824 }
annotations { key: "katalyst.kubewharf.io/qos_level" value: "dedicated_cores" }
EOF
)
CPU=$(b64 ResourceAllocationInfo <<'EOF'
oci_property_name: "CpusetCpus" is_node_resource: true is_scalar_resource: true
allocated_quantity: 4 allocation_result: "2-5"
resource_hints { hints { nodes: 0 preferred: true } } topology_assignments { key: 0 value: 4 }
EOF
)
MEM=$(b64 ResourceAllocationInfo <<'EOF'
oci_property_name: "CpusetMems" is_node_resource: true is_scalar_resource: true
allocated_quantity: 1073741824 allocation_result: "0"
EOF
)
python3 - <<'EOF'
import json, os
# Canonical bytes and checksum exactly as docs/checkpoint-format.md defines them.
def canon(d): return json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
def fnv(b):
    h = 0xcbf29ce484222325
    for c in b: h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return "fnv1a64:%016x" % h
def seal(data, version=1, checksum=None):
    c = canon(data)
    return b'{"version":%d,"checksum":"%s","data":%s}\n' % (version, (checksum or fnv(c)).encode(), c)
R, C, M = os.environ["REQ"], os.environ["CPU"], os.environ["MEM"]
pod = {"uid": "u1", "name": "web", "namespace": "default", "pod_affinity": "0",
       "containers": {"app": {"request": R, "resources": {"cpu": C, "memory": M}}}}
pod_min = {"uid": "u2", "name": "batch", "namespace": "jobs", "containers": {}}
doc80 = {"cpus": "0-79", "nodes": {"0": "0-39", "1": "40-79"}}  # the fuzzer's machine
cpu = {"machineState": {"0": {"reserved_cpuset": "0-1", "allocated_cpuset": "2-21",
                              "default_cpuset": "22-39", "shared_cpuset": "22-37",
                              "reclaimed_cpuset": "38-39"}},
       "pod_entries": {
           "u1": {"app": {"pod_namespace": "default", "pod_name": "pod1",
                          "qos_level": "dedicated_cores", "role": "storage-service",
                          "numa_binding": True, "request_milli": 20000, "cpuset": "2-21",
                          "numa_nodes": "0"}},
           "u2": {"web": {"pod_namespace": "default", "pod_name": "pod2",
                          "qos_level": "shared_cores", "request_milli": 1500, "cpuset": ""},
                  "etl": {"pod_namespace": "batch", "pod_name": "pod3",
                          "qos_level": "reclaimed_cores", "request_milli": 0, "cpuset": ""}}},
       "pools": {"reclaimed_size": 4}, "machine": doc80}
seeds = {
    "host_pod": seal(pod),
    "host_pod_minimal": seal(pod_min),
    "cpu_state": seal(cpu),
    "cpu_state_empty": seal({"pod_entries": {}, "pools": {"reclaimed_size": 0}, "machine": doc80}),
    "cpu_state_other_machine": seal({"pod_entries": {}, "pools": {"reclaimed_size": 0},
                                     "machine": {"cpus": "0-1", "nodes": {"0": "0-1"}}}),
    "version_2": seal(pod_min, 2),
    "bad_checksum": seal(pod_min, 1, "fnv1a64:0000000000000000"),
    "wrong_algorithm": seal(pod_min, 1, "crc32:00000000"),
    "empty": b"",
    "truncated": seal(pod)[:60],
    "not_object": b"[1,2,3]\n",
    "extra_member": b'{"version":1,"checksum":"x","data":{},"more":1}',
    "float_data": b'{"version":1,"checksum":"fnv1a64:0000000000000000","data":{"a":1.5}}',
    "unsealed_pod": json.dumps(pod).encode(),
    "unicode_keys": seal({"z": "\u00e9", "a": "\u0000\u001f", "\u00e9": [1, -2, {"b": True, "a": None}]}),
}
for name, content in seeds.items():
    open("corpus/checkpoint/" + name, "wb").write(content)
EOF

# --- cri_request: kubelet CreateContainer / RunPodSandbox requests -------------------------
mkdir -p corpus/cri_request
create() { encode runtime.v1.CreateContainerRequest cri_runtime_v1.proto >"corpus/cri_request/$1"; }
sandbox() { encode runtime.v1.RunPodSandboxRequest cri_runtime_v1.proto >"corpus/cri_request/$1"; }
pod='metadata { name: "web" uid: "u1" namespace: "default" }'

create guaranteed <<EOF
pod_sandbox_id: "s1" config { metadata { name: "app" }
  linux { resources { cpu_period: 100000 cpu_quota: 400000 cpu_shares: 4096 memory_limit_in_bytes: 1073741824 } } }
sandbox_config { $pod linux { cgroup_parent: "/kubepods/podu1"
  resources { cpu_shares: 4096 memory_limit_in_bytes: 1073741824 } } }
EOF
create burstable_labels <<EOF
config { labels { key: "io.kubernetes.container.name" value: "side" }
  linux { resources { cpu_shares: 512 cpu_quota: -1 } } }
sandbox_config { labels { key: "io.kubernetes.pod.uid" value: "u2" }
  labels { key: "io.kubernetes.pod.name" value: "p" }
  linux { cgroup_parent: "kubepods-burstable-podu2.slice" } }
EOF
create besteffort <<EOF
config { metadata { name: "app" } linux { resources { cpu_shares: 2 } } }
sandbox_config { $pod linux { cgroup_parent: "/kubepods/besteffort/podu1" } }
EOF
create quota_only <<EOF
config { metadata { name: "app" } linux { resources { cpu_period: 100000 cpu_quota: 150000 } } }
sandbox_config { $pod }
EOF
create overrides <<EOF
config { metadata { name: "app" } annotations { key: "qrm.io/container-type" value: "SIDECAR" } }
sandbox_config { $pod
  annotations { key: "qrm.io/cpu-request.app" value: "1500m" }
  annotations { key: "qrm.io/memory-request" value: "512Mi" }
  annotations { key: "qrm.io/resources" value: "{\"example.com/accel\": 2, \"nic\": \"1\", \"cpu\": 1e3}" }
  annotations { key: "katalyst.kubewharf.io/qos_level" value: "dedicated_cores" } }
EOF
create bad_quantity <<EOF
config { metadata { name: "app" } annotations { key: "qrm.io/cpu-request" value: "-2" } }
sandbox_config { $pod annotations { key: "qrm.io/memory-request" value: "1e400" } }
EOF
create bad_resources_json <<EOF
config { metadata { name: "app" } }
sandbox_config { $pod annotations { key: "qrm.io/resources" value: "{\"\": 1, \"x\": -1, \"y\": [1]}" } }
EOF
create bad_type <<EOF
config { metadata { name: "app" } annotations { key: "qrm.io/container-type" value: "main" } }
sandbox_config { $pod }
EOF
create negative_cgroup <<EOF
config { metadata { name: "app" } linux { resources { cpu_shares: -5 cpu_quota: -7 cpu_period: -1 memory_limit_in_bytes: -1 } } }
sandbox_config { $pod linux { resources { cpu_shares: 9223372036854775807 cpu_quota: 9223372036854775807 cpu_period: 1 } } }
EOF
create no_uid <<EOF
config { metadata { name: "app" } }
EOF
create no_name <<EOF
sandbox_config { $pod }
EOF
sandbox run_pod_sandbox <<EOF
config { $pod annotations { key: "qrm.io/cpu-request" value: "2" }
  linux { cgroup_parent: "/kubepods/burstable/podu1" resources { cpu_shares: 2048 } } }
runtime_handler: "kata"
EOF
printf '' >corpus/cri_request/empty
printf '1.5Gi' >corpus/cri_request/quantity_binary
printf '250m' >corpus/cri_request/quantity_milli
printf '1e3' >corpus/cri_request/quantity_exponent
# CRI after the July 2026 refresh: env values are bytes (not UTF-8 here), mounts carry options.
create binary_env <<EOF
config { metadata { name: "app" } envs { key: "BLOB" value: "\377\000\376bin" }
  mounts { container_path: "/d" host_path: "/h" mount_options: "noexec" mount_options: "nodev" }
  linux { resources { cpu_shares: 1024 } } }
sandbox_config { $pod }
EOF

# --- cri_edit: the CreateContainer seeds above, plus fields of a newer CRI than ours --------
mkdir -p corpus/cri_edit
for f in guaranteed burstable_labels overrides binary_env no_name empty; do
  cp "corpus/cri_request/$f" "corpus/cri_edit/$f"
done
# pod_sandbox_id "sb1"; config { linux.resources { cpuset_cpus "0-1", unknown 50: "x" },
# envs[0] { key "K", value "v", unknown 9: 1 } }; top-level unknown 999: 1.
printf '\x0a\x03sb1\x12\x17\x7a\x0b\x0a\x09\x32\x030-1\x92\x03\x01x\x32\x08\x0a\x01K\x12\x01v\x48\x01\xb8\x3e\x01' \
  >corpus/cri_edit/unknown_fields
# A map entry (sandbox annotations) with an unknown field: protobuf drops it, by design.
printf '\x1a\x0a\x3a\x08\x0a\x01a\x12\x01b\x18\x01' >corpus/cri_edit/map_entry_unknown

# --- cri_calls: [method index][call shape][length] + message ---------------------------------
mkdir -p corpus/cri_calls
for shape in 0 1 2 3 4 5 6 7; do
  for method in 0 7 13 21; do
    { printf "\\x$(printf %02x "$method")\\x0$shape\\x04"; cat corpus/cri_request/guaranteed; } \
      >"corpus/cri_calls/m${method}_s${shape}"
  done
done
