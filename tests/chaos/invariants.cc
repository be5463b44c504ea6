#include "tests/chaos/invariants.h"

#include <thread>

#include <dirent.h>
#include <fmt/format.h>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "common/cpu_set.h"

namespace qrm::chaos {

namespace pb = ::resourceplugin::v1alpha1;

StatusOr<std::vector<RunningContainer>> ListRunning(e2e::CriClient& direct) {
  e2e::cri::ListContainersRequest request;
  request.mutable_filter()->mutable_state()->set_state(e2e::cri::CONTAINER_RUNNING);
  e2e::cri::ListContainersResponse response;
  grpc::Status s = direct.runtime().ListContainers(direct.Context().get(), request, &response);
  if (!s.ok()) return UnavailableError("ListContainers: " + s.error_message());
  std::vector<RunningContainer> out;
  for (const auto& c : response.containers()) {
    RunningContainer r;
    r.id = c.id();
    r.name = c.metadata().name();
    if (auto it = c.labels().find("io.kubernetes.pod.uid"); it != c.labels().end()) {
      r.pod_uid = it->second;
    }
    auto cpus = direct.ContainerCgroupCpus(c.id());
    if (!cpus.ok()) continue;  // exited since the listing
    r.cpus = *cpus;
    out.push_back(std::move(r));
  }
  return out;
}

StatusOr<std::set<std::string>> ReadyPods(e2e::CriClient& direct) {
  e2e::cri::ListPodSandboxRequest request;
  request.mutable_filter()->mutable_state()->set_state(e2e::cri::SANDBOX_READY);
  e2e::cri::ListPodSandboxResponse response;
  grpc::Status s = direct.runtime().ListPodSandbox(direct.Context().get(), request, &response);
  if (!s.ok()) return UnavailableError("ListPodSandbox: " + s.error_message());
  std::set<std::string> out;
  for (const auto& p : response.items()) out.insert(p.metadata().uid());
  return out;
}

StatusOr<std::set<std::string>> PluginPods(e2e::NodeFixture& node, int* answered) {
  const std::string dir = node.File("plugins");
  std::vector<std::string> sockets;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.ends_with(".sock") && name != "qrm.sock") sockets.push_back(dir + "/" + name);
    }
    ::closedir(d);
  }
  std::set<std::string> out;
  int n = 0;
  for (const std::string& socket : sockets) {
    auto stub = pb::ResourcePlugin::NewStub(
        grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
    pb::GetResourcesAllocationResponse response;
    if (!stub->GetResourcesAllocation(&ctx, {}, &response).ok()) continue;
    ++n;
    for (const auto& [uid, containers] : response.pod_resources()) out.insert(uid);
  }
  if (answered != nullptr) *answered = n;
  return out;
}

std::vector<std::string> Violations(e2e::NodeFixture& node, e2e::CriClient& direct) {
  std::vector<std::string> out;
  auto allocations = node.Allocations();
  auto running = ListRunning(direct);
  auto ready = ReadyPods(direct);
  if (!allocations.ok()) out.push_back("admin ListAllocations: " + allocations.status().ToString());
  if (!running.ok()) out.push_back(running.status().ToString());
  if (!ready.ok()) out.push_back(ready.status().ToString());
  if (!out.empty()) return out;

  // (pod uid, container) -> its allocation.
  std::map<std::pair<std::string, std::string>, const ::qrm::admin::v1::ContainerAllocation*>
      by_key;
  for (const auto& pod : allocations->pods()) {
    if (!ready->contains(pod.uid())) {
      out.push_back(
          fmt::format("host holds an allocation for pod {} ({}) the runtime no longer has",
                      pod.uid(), pod.name()));
    }
    for (const auto& c : pod.containers()) by_key[{pod.uid(), c.name()}] = &c;
  }
  for (const RunningContainer& r : *running) {
    auto it = by_key.find({r.pod_uid, r.name});
    if (it == by_key.end()) {
      out.push_back(fmt::format("running container {}/{} has no allocation", r.pod_uid, r.name));
      continue;
    }
    const std::string& want = it->second->cpuset_cpus();
    if (!want.empty() && want != r.cpus) {
      out.push_back(fmt::format("container {}/{}: cgroup cpuset {} but allocation {}", r.pod_uid,
                                r.name, r.cpus, want));
    }
    if (it->second->qos_level() != "dedicated_cores") continue;
    auto mine = CpuSet::Parse(r.cpus);
    for (const RunningContainer& other : *running) {
      if (other.id == r.id) continue;
      auto theirs = CpuSet::Parse(other.cpus);
      if (mine.ok() && theirs.ok() && mine->Overlaps(*theirs)) {
        out.push_back(fmt::format("dedicated container {}/{} (cpus {}) overlaps {}/{} (cpus {})",
                                  r.pod_uid, r.name, r.cpus, other.pod_uid, other.name,
                                  other.cpus));
      }
    }
  }
  int answered = 0;
  auto held = PluginPods(node, &answered);
  if (answered < 3) out.push_back(fmt::format("only {} of 3 plugins answered", answered));
  if (held.ok()) {
    for (const std::string& uid : *held) {
      if (!ready->contains(uid)) {
        out.push_back(
            fmt::format("a plugin holds an allocation for pod {} the runtime no longer has", uid));
      }
    }
  }
  return out;
}

bool WaitConsistent(e2e::NodeFixture& node, e2e::CriClient& direct,
                    std::chrono::milliseconds timeout, std::vector<std::string>* last) {
  return testing::WaitFor(
      [&] {
        *last = Violations(node, direct);
        if (!last->empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return last->empty();
      },
      timeout);
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

}  // namespace qrm::chaos
