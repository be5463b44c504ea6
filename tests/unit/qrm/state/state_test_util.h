// Shared fixtures for the host checkpoint tests: a realistic state to store, a state
// directory and a store holding the sample.
#pragma once

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <dirent.h>
#include <sys/stat.h>

#include "checkpoint/checkpoint_file.h"
#include "qrm/state/pod_resources.h"
#include "qrm/state/state_store.h"
#include "testing/temp_dir.h"

namespace qrm::state::testutil {

namespace pb = ::resourceplugin::v1alpha1;

// What a plugin returns for a resource: every field type, including doubles that are not
// integers (why allocation infos are protobuf, not JSON numbers).
inline pb::ResourceAllocationInfo CpuInfo(const std::string& cpus, double quantity) {
  pb::ResourceAllocationInfo info;
  info.set_oci_property_name("CpusetCpus");
  info.set_is_node_resource(true);
  info.set_is_scalar_resource(true);
  info.set_allocated_quantity(quantity);
  info.set_allocation_result(cpus);
  (*info.mutable_envs())["QRM_CPUS"] = cpus;
  (*info.mutable_envs())["OMP_NUM_THREADS"] = "2";
  (*info.mutable_annotations())["qrm.io/cpuset"] = cpus;
  auto* hint = info.mutable_resource_hints()->add_hints();
  hint->add_nodes(0);
  hint->add_nodes(1);
  hint->set_preferred(true);
  (*info.mutable_topology_assignments())[0] = 1;
  (*info.mutable_topology_assignments())[1] = 1;
  return info;
}

inline pb::ResourceAllocationInfo MemoryInfo(uint64_t bytes) {
  pb::ResourceAllocationInfo info;
  info.set_oci_property_name("CpusetMems");
  info.set_is_node_resource(true);
  info.set_is_scalar_resource(true);
  info.set_allocated_quantity(static_cast<double>(bytes));
  info.set_allocation_result("0");
  (*info.mutable_topology_assignments())[0] = bytes;
  return info;
}

inline pb::ResourceAllocationInfo NicInfo() {
  pb::ResourceAllocationInfo info;
  info.set_is_scalar_resource(true);
  info.set_allocated_quantity(0.5);  // half a NIC's bandwidth share
  info.set_allocation_result("eth0");
  auto* mount = info.add_mounts();
  mount->set_container_path("/dev/net");
  mount->set_host_path("/var/lib/qrm/net/eth0");
  mount->set_read_only(true);
  auto* device = info.add_devices();
  device->set_container_path("/dev/vfio/7");
  device->set_host_path("/dev/vfio/7");
  device->set_permissions("rw");
  return info;
}

inline ContainerAllocation Container(const std::string& uid, const std::string& ns,
                                     const std::string& pod, const std::string& container,
                                     double cpus) {
  ContainerAllocation c;
  pb::ResourceRequest& r = c.request;
  r.set_pod_uid(uid);
  r.set_pod_namespace(ns);
  r.set_pod_name(pod);
  r.set_container_name(container);
  r.set_container_type(pb::ContainerType::MAIN);
  r.set_pod_role("inference");
  r.set_pod_type("dedicated");
  (*r.mutable_resource_requests())["cpu"] = cpus;
  (*r.mutable_resource_requests())["memory"] = 1073741824;
  (*r.mutable_labels())["app"] = pod;
  (*r.mutable_annotations())["qrm.io/qos"] = "dedicated_cores";
  r.mutable_hint()->add_nodes(0);
  r.mutable_hint()->add_nodes(1);
  r.mutable_hint()->set_preferred(true);
  r.set_native_qos_class("Guaranteed");
  c.resources["cpu"] = CpuInfo("2-3", cpus);
  c.resources["memory"] = MemoryInfo(1073741824);
  return c;
}

// Three pods, one under the pod scope (with affinity and an init container), one with a
// NIC allocation, one with an empty container (admitted, nothing allocated).
inline PodResources SampleState() {
  PodAllocation a;
  a.uid = "uid-a";
  a.name = "web";
  a.ns = "default";
  a.pod_affinity = NumaMask::FromBits(0b11);
  a.containers["main"] = Container("uid-a", "default", "web", "main", 2);
  ContainerAllocation init = Container("uid-a", "default", "web", "init", 0.5);
  init.request.set_container_type(pb::ContainerType::INIT);
  a.containers["init"] = init;

  PodAllocation b;
  b.uid = "uid-b";
  b.name = "db";
  b.ns = "prod";
  b.containers["pg"] = Container("uid-b", "prod", "db", "pg", 4);
  b.containers["pg"].resources["nic"] = NicInfo();

  PodAllocation c;
  c.uid = "uid-c";
  c.name = "ünïcödé \"pod\"";
  c.ns = "kube-system";
  c.containers["sidecar"].request.set_pod_uid("uid-c");

  PodResources s;
  for (PodAllocation* pod : {&a, &b, &c}) {
    const std::string uid = pod->uid;
    s[uid] = std::make_shared<const PodAllocation>(std::move(*pod));
  }
  return s;
}

inline std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  REQUIRE(d != nullptr);
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  return names;
}

inline bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

inline std::vector<std::string> Sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

// The state directory of a test and the paths in it.
struct StateDir {
  ::qrm::testing::TempDir tmp;
  std::string dir = tmp.File("state");
  std::string pods = dir + "/pods";
  std::string Pod(const std::string& uid) const { return pods + "/" + uid + ".json"; }
  std::vector<std::string> Files() const { return Sorted(ListDir(pods)); }
  // Every file of pods/ with its bytes and inode (a rewrite renames a new inode in).
  struct File {
    std::string bytes;
    ino_t inode;
    bool operator==(const File&) const = default;
  };
  std::map<std::string, File> Contents() const {
    std::map<std::string, File> out;
    for (const std::string& name : ListDir(pods)) {
      struct stat st;
      REQUIRE(::stat((pods + "/" + name).c_str(), &st) == 0);
      out[name] = {::qrm::testing::ReadFile(pods + "/" + name), st.st_ino};
    }
    return out;
  }
};

inline const std::vector<std::string> kSampleFiles = {"uid-a.json", "uid-b.json", "uid-c.json"};

// Stores `state` through the public API, the way admission builds it up.
inline void Store(StateStore& store, const PodResources& state) {
  for (const auto& [uid, pod] : state) {
    if (pod->pod_affinity) {
      REQUIRE(store.SetPodAffinity(uid, pod->name, pod->ns, *pod->pod_affinity).ok());
    }
    for (const auto& [name, container] : pod->containers) {
      REQUIRE(store.PutContainer(uid, pod->name, pod->ns, name, container).ok());
    }
  }
}

// A store in `dir`, loaded, holding the sample state, compacted (the pods are in their files
// and the journal is empty).
inline void LoadSample(StateStore& store) {
  REQUIRE(store.Load().ok());
  Store(store, SampleState());
  REQUIRE(store.Compact().ok());
}

// Counts completed renames, i.e. durable writes (or removals) that reached the file.
struct WriteCounter {
  std::shared_ptr<std::atomic<int>> renames = std::make_shared<std::atomic<int>>(0);
  ::qrm::checkpoint::FaultHook Hook() const {
    return [renames = renames](::qrm::checkpoint::WriteStep step) {
      if (step == ::qrm::checkpoint::WriteStep::kRename) ++*renames;
      return Status::Ok();
    };
  }
  int count() const { return renames->load(); }
};

// Counts journal records appended, i.e. the mutations that reached the journal (each then
// synced; the pod files wait for the compaction).
struct RecordCounter {
  std::shared_ptr<std::atomic<int>> appends = std::make_shared<std::atomic<int>>(0);
  ::qrm::checkpoint::JournalFaultHook Hook() const {
    return [appends = appends](::qrm::checkpoint::JournalStep step) {
      if (step == ::qrm::checkpoint::JournalStep::kAppend) ++*appends;
      return Status::Ok();
    };
  }
  int count() const { return appends->load(); }
};

}  // namespace qrm::state::testutil
