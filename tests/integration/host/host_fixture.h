// A qrm host (in-process, real sockets) and real plugin processes built on the
// SDK (qrm-test-plugin), all in a private temp directory.
#pragma once

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <spdlog/sinks/ringbuffer_sink.h>

#include "common/log.h"
#include "qrm/host/host.h"
#include "testing/child_process.h"
#include "testing/temp_dir.h"

namespace qrm::host::testing {

using qrm::testing::ChildProcess;
using qrm::testing::TempDir;
using qrm::testing::WaitFor;

// Records every update the reconcile loop pushes.
class RecordingApplier : public reconcile::RuntimeApplier {
 public:
  Status Apply(const std::string& uid, const std::string& container,
               const apply::ContainerUpdate& update) override {
    std::function<void()> hook;
    {
      std::lock_guard lock(mu_);
      hook = std::exchange(before_next_, nullptr);
    }
    if (hook) hook();  // outside the lock: other writes may race this one meanwhile
    std::lock_guard lock(mu_);
    calls_.push_back({uid, container, update});  // in the order the writes land
    if (missing_.contains(uid)) return NotFoundError("no such container (test)");
    return fail_ ? UnavailableError("runtime down (test)") : Status::Ok();
  }
  // Containers of `uid` are reported as not in the runtime (kNotFound).
  void set_missing(const std::string& uid) {
    std::lock_guard lock(mu_);
    missing_.insert(uid);
  }
  struct Call {
    std::string uid, container;
    apply::ContainerUpdate update;
  };
  std::vector<Call> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  void clear() {
    std::lock_guard lock(mu_);
    calls_.clear();
  }
  void set_fail(bool fail) { fail_ = fail; }
  // Runs `hook` inside the next Apply, before that write lands (a test holds it there).
  void set_before_next(std::function<void()> hook) {
    std::lock_guard lock(mu_);
    before_next_ = std::move(hook);
  }

 private:
  std::mutex mu_;
  std::vector<Call> calls_;
  std::set<std::string> missing_;
  std::function<void()> before_next_;
  bool fail_ = false;
};

// The runtime's pods, as the test says.
class FakeRuntimeView : public reconcile::RuntimeView {
 public:
  StatusOr<std::set<std::string>> ListPodUids() override {
    std::lock_guard lock(mu_);
    return pods_;
  }
  void Set(std::set<std::string> pods) {
    std::lock_guard lock(mu_);
    pods_ = std::move(pods);
  }
  StatusOr<std::vector<reconcile::RuntimeContainer>> ListContainers() override {
    std::lock_guard lock(mu_);
    return containers_;
  }
  // Also lists the pod.
  void AddContainer(reconcile::RuntimeContainer c) {
    std::lock_guard lock(mu_);
    pods_.insert(c.pod_uid);
    containers_.push_back(std::move(c));
  }

 private:
  std::mutex mu_;
  std::set<std::string> pods_;
  std::vector<reconcile::RuntimeContainer> containers_;
};

class HostFixture {
 public:
  HostFixture() { ::mkdir(plugin_dir().c_str(), 0750); }

  std::string plugin_dir() const { return dir_.File("plugins"); }
  std::string state_dir() const { return dir_.File("state"); }
  std::string File(const std::string& name) const { return dir_.File(name); }

  HostOptions Options() const {
    HostOptions o;
    o.registry.plugin_dir = plugin_dir();
    o.registry.dial_timeout = std::chrono::milliseconds(3000);
    o.admission.rpc_timeout = std::chrono::milliseconds(2000);
    o.state_dir = state_dir();
    o.reconcile_period = std::chrono::milliseconds(0);  // tests tick by hand
    o.worker_threads = 8;
    o.numa = *topology::NumaInfo::Create({0, 1});
    return o;
  }

  Host& StartHost(HostOptions options) {
    host_ = std::make_unique<Host>(std::move(options));
    const Status s = host_->Start(applier_, &view_);
    INFO(s.ToString());
    REQUIRE(s.ok());
    return *host_;
  }
  Host& StartHost() { return StartHost(Options()); }
  void StopHost() { host_.reset(); }
  Host& host() { return *host_; }

  // Starts a test plugin for `resource` with extra flags; its calls go to
  // CallLog(resource).
  ChildProcess& StartPlugin(const std::string& resource, std::vector<std::string> flags = {}) {
    std::vector<std::string> argv = {QRM_TEST_PLUGIN,      "--resource", resource,
                                     "--plugin-dir",       plugin_dir(), "--call-log",
                                     CallLogPath(resource)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    plugins_[resource] = std::make_unique<ChildProcess>(argv, File("plugins.log"));
    return *plugins_[resource];
  }
  ChildProcess& plugin(const std::string& resource) { return *plugins_.at(resource); }
  void StopPlugin(const std::string& resource) { plugins_.erase(resource); }

  std::string CallLogPath(const std::string& resource) const {
    std::string safe = resource;
    for (char& c : safe) {
      if (c == '/') c = '_';
    }
    return dir_.File("calls-" + safe + ".log");
  }
  // Calls of `method` recorded by the plugin of `resource`.
  int Calls(const std::string& resource, const std::string& method) const {
    std::ifstream in(CallLogPath(resource));
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(method + " ", 0) == 0) ++n;
    }
    return n;
  }

  bool WaitRegistered(const std::string& resource) {
    return WaitFor([&] {
      auto e = host_->registry().Find(resource);
      return e != nullptr && !e->stopped();
    });
  }

  RecordingApplier& applier() { return applier_; }
  FakeRuntimeView& view() { return view_; }

 private:
  TempDir dir_;
  RecordingApplier applier_;
  FakeRuntimeView view_;
  std::map<std::string, std::unique_ptr<ChildProcess>> plugins_;
  std::unique_ptr<Host> host_;  // destroyed before the plugins
};

// Messages of a component's logger at a level, while attached. Attach before the host starts:
// spdlog's sink list is not safe to change while other threads log.
class LogCapture {
 public:
  explicit LogCapture(const std::string& component)
      : logger_(Logger(component)),
        sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(512)) {
    logger_->sinks().push_back(sink_);
  }
  ~LogCapture() { std::erase(logger_->sinks(), sink_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // The messages at `level` that contain `needle`.
  std::vector<std::string> At(spdlog::level::level_enum level, const std::string& needle) {
    std::vector<std::string> out;
    for (const auto& m : sink_->last_raw()) {
      std::string text(m.payload.data(), m.payload.size());
      if (m.level == level && text.find(needle) != std::string::npos) out.push_back(text);
    }
    return out;
  }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

inline admission::ContainerRequest Request(const std::string& uid, const std::string& container,
                                           std::map<std::string, double> resources,
                                           const std::string& qos = "dedicated_cores") {
  admission::ContainerRequest r;
  r.pod_uid = uid;
  r.pod_name = "pod-" + uid;
  r.pod_namespace = "default";
  r.container_name = container;
  r.resources = std::move(resources);
  r.annotations["katalyst.kubewharf.io/qos_level"] = qos;
  return r;
}

}  // namespace qrm::host::testing
