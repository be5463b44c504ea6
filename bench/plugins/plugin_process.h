// A resource plugin binary started on a fake machine for benchmarks, with a gRPC stub on its
// socket. Works for any of the three plugins: they accept the same common flags.
// Benchmark-only code.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "testing/child_process.h"
#include "testing/machine/fake_machine.h"

namespace qrm::bench {

namespace pb = ::resourceplugin::v1alpha1;
using Clock = std::chrono::steady_clock;

inline double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// Value at fraction q (0..1) of `samples` (sorted in place).
inline double Percentile(std::vector<double>& samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(samples.size()))) - 1;
  return samples[std::min(i, samples.size() - 1)];
}

// A scratch directory, on tmpfs (/dev/shm) when `tmpfs` and available, else under $TMPDIR.
class ScratchDir {
 public:
  explicit ScratchDir(bool tmpfs) {
    std::string base = "/tmp";
    if (const char* t = std::getenv("TMPDIR")) base = t;
    if (tmpfs && ::access("/dev/shm", W_OK) == 0) base = "/dev/shm";
    std::string templ = base + "/qrm-plugin-bench-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp in " + base);
    path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `binary` serving on <dir>/plugins/bench.sock, registered with nobody, its state in
// <dir>/state, reading the fake machine `shape` written under <dir>/machine.
class PluginProcess {
 public:
  PluginProcess(const std::string& binary, const std::string& shape, const std::string& dir,
                std::vector<std::string> extra_args = {}) {
    auto s = machine::fake::ShapeByName(shape);
    if (!s.ok()) throw std::runtime_error(s.status().ToString());
    auto paths = machine::fake::WriteFakeMachine(*s, dir + "/machine");
    if (!paths.ok()) throw std::runtime_error(paths.status().ToString());
    const std::string plugin_dir = dir + "/plugins";
    socket_ = plugin_dir + "/bench.sock";
    std::vector<std::string> argv = {
        binary,          "--no-register",   "--plugin-dir",  plugin_dir,
        "--socket-name", "bench.sock",      "--state-dir",   dir + "/state",
        "--sysfs-root",  paths->sysfs_root, "--procfs-root", paths->procfs_root,
        "--netns-dir",   paths->netns_dir,  "--log-level",   "warn"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    log_ = dir + "/plugin.log";
    process_ = std::make_unique<testing::ChildProcess>(argv, log_);
    const bool up =
        testing::WaitFor([&] { return std::filesystem::exists(socket_) || !process_->running(); },
                         std::chrono::seconds(20));
    if (!up || !process_->running()) {
      std::ifstream in(log_);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      throw std::runtime_error(binary + " did not start:\n" + text);
    }
    stub_ = pb::ResourcePlugin::NewStub(
        grpc::CreateChannel("unix:" + socket_, grpc::InsecureChannelCredentials()));
  }
  ~PluginProcess() { process_->Kill(SIGTERM); }

  pb::ResourcePlugin::Stub& stub() { return *stub_; }
  pid_t pid() const { return process_->pid(); }

  // CPU time (user + system) the process used so far, in ms (clock ticks: 10 ms resolution,
  // meaningful over many operations).
  double CpuMs() const {
    std::ifstream in("/proc/" + std::to_string(pid()) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; fields >> field && i <= 15; ++i) {
      if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
    }
    return ticks * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }

  // VmRSS of the process, in MiB.
  double RssMiB() const {
    std::ifstream in("/proc/" + std::to_string(pid()) + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
    }
    return -1;
  }

 private:
  std::string socket_;
  std::string log_;
  std::unique_ptr<testing::ChildProcess> process_;
  std::unique_ptr<pb::ResourcePlugin::Stub> stub_;
};

inline pb::ResourceRequest BenchRequest(
    const std::string& uid, const std::string& resource, double quantity,
    std::vector<std::pair<std::string, std::string>> annotations) {
  pb::ResourceRequest req;
  req.set_pod_uid(uid);
  req.set_pod_namespace("bench");
  req.set_pod_name("pod-" + uid);
  req.set_container_name("c0");
  req.set_container_type(pb::MAIN);
  req.set_resource_name(resource);
  (*req.mutable_resource_requests())[resource] = quantity;
  for (auto& [k, v] : annotations) (*req.mutable_annotations())[k] = v;
  return req;
}

// Hints, then Allocate with the first preferred hint (as the host's merge would pick with one
// provider). Returns the gRPC status of the first failing call.
inline grpc::Status Admit(pb::ResourcePlugin::Stub& stub, pb::ResourceRequest req) {
  pb::ResourceHintsResponse hints;
  {
    grpc::ClientContext ctx;
    grpc::Status s = stub.GetTopologyHints(&ctx, req, &hints);
    if (!s.ok()) return s;
  }
  auto it = hints.resource_hints().find(req.resource_name());
  if (it != hints.resource_hints().end()) {
    for (const auto& h : it->second.hints()) {
      if (h.preferred()) {
        *req.mutable_hint() = h;
        break;
      }
    }
  }
  grpc::ClientContext ctx;
  pb::ResourceAllocationResponse resp;
  return stub.Allocate(&ctx, req, &resp);
}

inline grpc::Status Remove(pb::ResourcePlugin::Stub& stub, const std::string& uid) {
  grpc::ClientContext ctx;
  pb::RemovePodRequest req;
  req.set_pod_uid(uid);
  pb::RemovePodResponse resp;
  return stub.RemovePod(&ctx, req, &resp);
}

// --only ID arguments (scripts/bench's contract): empty means everything.
inline bool Selected(const std::vector<std::string>& only, const std::string& id) {
  if (only.empty()) return true;
  return std::any_of(only.begin(), only.end(), [&](const std::string& o) {
    return id == o || id.rfind(o + "_", 0) == 0 || id.rfind(o + ".", 0) == 0;
  });
}

}  // namespace qrm::bench
