// A fake node for the agent's tests: a cgroup v1 tree and a procfs under a temp dir whose
// counters the test advances, and in-process HostSource/RuntimeSource that answer from the
// test's own lists.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "advisor/agent/agent.h"
#include "testing/temp_dir.h"

namespace qrm::advisor::fake {

inline void Write(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << content;
}

class Tree {
 public:
  std::string cgroup_root() const { return dir_.File("cgroup"); }
  std::string procfs_root() const { return dir_.File("proc"); }
  std::string File(const std::string& name) const { return dir_.File(name); }

  // The container's counters: total CPU seconds used so far and its working set.
  void SetContainer(const std::string& path, double cpu_seconds, uint64_t working_set) {
    Write(cgroup_root() + "/cpuacct" + path + "/cpuacct.usage",
          fmt::format("{}\n", static_cast<uint64_t>(cpu_seconds * 1e9)));
    Write(cgroup_root() + "/memory" + path + "/memory.usage_in_bytes",
          fmt::format("{}\n", working_set + 1000));
    Write(cgroup_root() + "/memory" + path + "/memory.stat", "total_inactive_file 1000\n");
  }
  void RemoveContainer(const std::string& path) {
    std::filesystem::remove_all(cgroup_root() + "/cpuacct" + path);
    std::filesystem::remove_all(cgroup_root() + "/memory" + path);
  }
  // A 4-CPU node with `busy_seconds` of busy time of `total_seconds` (USER_HZ 100).
  void SetNode(double busy_seconds, double total_seconds, uint64_t used_bytes) {
    const auto busy = static_cast<uint64_t>(busy_seconds * 100);
    const auto idle = static_cast<uint64_t>(total_seconds * 100) - busy;
    std::string stat = fmt::format("cpu  {} 0 0 {} 0 0 0 0 0 0\n", busy, idle);
    for (int i = 0; i < 4; ++i) stat += fmt::format("cpu{} 0 0 0 0 0 0 0 0 0 0\n", i);
    Write(procfs_root() + "/stat", stat);
    Write(procfs_root() + "/meminfo", fmt::format("MemTotal: {} kB\nMemAvailable: {} kB\n",
                                                  kMemTotalKb, kMemTotalKb - used_bytes / 1024));
  }
  static constexpr uint64_t kMemTotalKb = 16 * 1024 * 1024;

 private:
  testing::TempDir dir_;
};

class Runtime : public RuntimeSource {
 public:
  explicit Runtime(std::vector<TrackedContainer>* containers) : containers_(containers) {}
  StatusOr<std::vector<TrackedContainer>> ListContainers() override {
    if (fail) return UnavailableError("runtime down");
    return *containers_;
  }
  bool fail = false;

 private:
  std::vector<TrackedContainer>* containers_;
};

class Host : public HostSource {
 public:
  explicit Host(HostView* view) : view_(view) {}
  StatusOr<HostView> Fetch() override {
    if (*fail) return UnavailableError("qrm-host down");
    return *view_;
  }
  std::shared_ptr<bool> fail = std::make_shared<bool>(false);

 private:
  HostView* view_;
};

// An agent sampling `tree` (inventory every second, the Koordinator node model, no pool model)
// whose runtime lists `running` and whose qrm-host answers `view`: the test's own, read at each
// inventory refresh.
inline std::unique_ptr<Agent> MakeAgent(const Tree& tree, HostView* view,
                                        std::vector<TrackedContainer>* running) {
  AgentOptions o;
  o.sampler = {tree.cgroup_root(), tree.procfs_root()};
  o.inventory_period_s = 1;
  auto predictors = Predictors::Make({"koordinator", "none"});
  REQUIRE(predictors.ok());
  return std::make_unique<Agent>(o, std::move(*predictors), std::make_unique<Host>(view),
                                 std::make_unique<Runtime>(running));
}

inline TrackedContainer Container(const std::string& pod, const std::string& name) {
  TrackedContainer c;
  c.pod_uid = pod + "-uid";
  c.pod_name = pod;
  c.pod_namespace = "default";
  c.name = name;
  c.container_id = pod + "-" + name;
  c.cgroup_path = "/kubepods/pod" + pod + "/" + name;
  return c;
}

}  // namespace qrm::advisor::fake
