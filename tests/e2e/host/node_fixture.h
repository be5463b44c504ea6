// A whole qrm node for end-to-end tests: a private containerd (testing/e2e), the
// qrm-host binary in front of it, and the real qrm-cpu-plugin, qrm-memory-plugin and
// qrm-nic-plugin processes on this machine's real topology. The test talks CRI to the shim
// like the kubelet, pod-resources like a monitoring agent and admin like qrmctl.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/admin_v1.grpc.pb.h"
#include "api/podresources_v1.grpc.pb.h"
#include "testing/child_process.h"
#include "testing/e2e/containerd.h"
#include "testing/e2e/cri_client.h"
#include "testing/temp_dir.h"

namespace qrm::e2e {

inline constexpr auto kReconcilePeriod = std::chrono::milliseconds(1000);

class NodeFixture {
 public:
  // Starts containerd; qrm is started by StartQrm so tests can choose plugin flags.
  NodeFixture() {
    auto c = Containerd::Start();
    INFO((c.ok() ? std::string() : c.status().ToString()));
    REQUIRE(c.ok());
    containerd_ = std::move(*c);
    ::mkdir(File("plugins").c_str(), 0750);
  }
  ~NodeFixture() {
    host_.reset();  // the host first: its reconcile must not race the plugins' exit
    plugins_.clear();
  }

  std::string File(const std::string& name) const { return dir_.File(name); }
  std::string CriSocket() const { return File("cri.sock"); }
  std::string PodResourcesSocket() const { return File("pod-resources.sock"); }
  std::string AdminSocket() const { return File("admin.sock"); }
  Containerd& containerd() { return *containerd_; }

  void StartPlugin(const std::string& which, std::vector<std::string> flags = {}) {
    std::vector<std::string> argv = {Binary(which), "--plugin-dir",         File("plugins"),
                                     "--state-dir", File("state-" + which), "--log-level",
                                     "debug"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    plugins_[which] = std::make_unique<testing::ChildProcess>(argv, File(which + ".log"));
  }
  testing::ChildProcess& plugin(const std::string& which) { return *plugins_.at(which); }
  // SIGKILLs the plugin (if running) and forgets it; StartPlugin starts it again.
  void KillPlugin(const std::string& which) {
    if (auto it = plugins_.find(which); it != plugins_.end()) {
      it->second->Kill(SIGKILL);
      plugins_.erase(it);
    }
  }
  // The checkpoint directories the fixture gives qrm-host and each plugin.
  std::string HostStateDir() const { return File("state-host"); }
  std::string PluginStateDir(const std::string& which) const { return File("state-" + which); }

  // Starts qrm-host and waits until its admin socket serves. `state_dir` empty: HostStateDir().
  void StartHost(std::vector<std::string> extra = {}, const std::string& state_dir = "") {
    std::vector<std::string> argv = {QRM_HOST,
                                     "--cri-socket",
                                     CriSocket(),
                                     "--runtime-endpoint",
                                     "unix://" + containerd_->socket(),
                                     "--plugin-dir",
                                     File("plugins"),
                                     "--state-dir",
                                     state_dir.empty() ? HostStateDir() : state_dir,
                                     "--reconcile-period",
                                     std::to_string(kReconcilePeriod.count()) + "ms",
                                     "--pod-resources-socket",
                                     PodResourcesSocket(),
                                     "--admin-socket",
                                     AdminSocket(),
                                     "--metrics-address",
                                     "127.0.0.1:" + std::to_string(metrics_port_),
                                     "--always-consult",
                                     "qrm.io/nic",
                                     "--log-level",
                                     "debug"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    host_ = std::make_unique<testing::ChildProcess>(argv, File("qrm-host.log"));
    const bool serving = testing::WaitFor([&] { return Admin().ok(); }, std::chrono::seconds(30));
    if (!serving) UNSCOPED_INFO(Logs());
    REQUIRE(serving);
  }
  testing::ChildProcess& host() { return *host_; }
  // Whether /readyz answers 200 within `timeout` (ready once the shim resynchronized).
  bool WaitReady(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    return testing::WaitFor([&] { return HttpGet("/readyz").first == 200; }, timeout);
  }
  void KillHost() {
    host_->Kill(SIGKILL);
    host_.reset();
  }
  // A clean stop (SIGTERM): the host compacts its checkpoint on the way out.
  void StopHost() {
    host_->Kill(SIGTERM);
    host_.reset();
  }

  // Starts the three plugins and the host, and waits until every plugin is registered and the
  // host is ready (the shim serves the CRI socket once it resynchronized: the admin socket
  // answering first is no promise of that on a loaded machine).
  void StartQrm(std::vector<std::string> cpu_flags = {}) {
    cpu_flags.push_back("--metrics-address");
    cpu_flags.push_back("127.0.0.1:" + std::to_string(cpu_metrics_port()));
    StartPlugin("cpu", std::move(cpu_flags));
    StartPlugin("memory");
    StartPlugin("nic", {"--include-virtual", "--unknown-nic-speed-mbps", "10000"});
    StartHost();
    const bool healthy = WaitPluginsHealthy(3) && WaitReady();
    if (!healthy) UNSCOPED_INFO(Logs());
    REQUIRE(healthy);
  }

  // The tail of every qrm log, for failure messages.
  std::string Logs() {
    std::string out;
    for (const char* name : {"qrm-host", "cpu", "memory", "nic"}) {
      std::string log = testing::ReadFile(File(std::string(name) + ".log"));
      if (log.size() > 4000) log = log.substr(log.size() - 4000);
      out += std::string("--- ") + name + ".log\n" + log;
    }
    return out;
  }

  bool WaitPluginsHealthy(int n) {
    return testing::WaitFor(
        [&] {
          auto plugins = Plugins();
          if (!plugins.ok()) return false;
          int healthy = 0;
          for (const auto& p : plugins->plugins()) healthy += p.state() == "healthy" ? 1 : 0;
          return healthy == n;
        },
        std::chrono::seconds(30));
  }

  CriClient Shim() const { return CriClient(CriSocket(), containerd_->ClientOptions()); }
  CriClient Direct() const { return containerd_->Client(); }

  grpc::Status Admin() {
    ::qrm::admin::v1::ListPluginsResponse r;
    return AdminStub()->ListPlugins(Context().get(), {}, &r);
  }
  StatusOr<::qrm::admin::v1::ListPluginsResponse> Plugins() {
    ::qrm::admin::v1::ListPluginsResponse r;
    grpc::Status s = AdminStub()->ListPlugins(Context().get(), {}, &r);
    if (!s.ok()) return UnavailableError(s.error_message());
    return r;
  }
  StatusOr<::qrm::admin::v1::ListAllocationsResponse> Allocations() {
    ::qrm::admin::v1::ListAllocationsResponse r;
    grpc::Status s = AdminStub()->ListAllocations(Context().get(), {}, &r);
    if (!s.ok()) return UnavailableError(s.error_message());
    return r;
  }
  StatusOr<::v1::ListPodResourcesResponse> PodResources() {
    auto stub = ::v1::PodResourcesLister::NewStub(
        grpc::CreateChannel("unix:" + PodResourcesSocket(), grpc::InsecureChannelCredentials()));
    ::v1::ListPodResourcesResponse r;
    grpc::Status s = stub->List(Context().get(), {}, &r);
    if (!s.ok()) return UnavailableError(s.error_message());
    return r;
  }

  std::string HostLog() { return testing::ReadFile(File("qrm-host.log")); }

  int cpu_metrics_port() const { return metrics_port_ + 1; }

  // GET http://127.0.0.1:<port><path> (default: qrm-host's metrics port): status code and body
  // (0 if unreachable).
  std::pair<int, std::string> HttpGet(const std::string& path, int port = 0) {
    if (port == 0) port = metrics_port_;
    namespace beast = boost::beast;
    try {
      boost::asio::io_context io;
      beast::tcp_stream stream(io);
      stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                                    static_cast<unsigned short>(port)));
      beast::http::request<beast::http::empty_body> req(beast::http::verb::get, path, 11);
      req.set(beast::http::field::host, "localhost");
      beast::http::write(stream, req);
      beast::flat_buffer buffer;
      beast::http::response<beast::http::string_body> res;
      beast::http::read(stream, buffer, res);
      return {static_cast<int>(res.result_int()), res.body()};
    } catch (const std::exception&) {
      return {0, ""};
    }
  }

  static std::string Binary(const std::string& which) {
    if (which == "cpu") return QRM_CPU_PLUGIN;
    if (which == "memory") return QRM_MEMORY_PLUGIN;
    return QRM_NIC_PLUGIN;
  }

 private:
  static std::unique_ptr<grpc::ClientContext> Context() {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    return ctx;
  }
  std::unique_ptr<::qrm::admin::v1::Admin::Stub> AdminStub() {
    return ::qrm::admin::v1::Admin::NewStub(
        grpc::CreateChannel("unix:" + AdminSocket(), grpc::InsecureChannelCredentials()));
  }

  testing::TempDir dir_;
  std::unique_ptr<Containerd> containerd_;
  std::map<std::string, std::unique_ptr<testing::ChildProcess>> plugins_;
  std::unique_ptr<testing::ChildProcess> host_;
  // A loopback port per test process (tests run in parallel, one process each).
  const int metrics_port_ = 20000 + 2 * (::getpid() % 10000);
};

// These suites start containerd and mount cgroups: root only. Skips with a warning naming
// `suite` otherwise.
inline bool Root(const char* suite = "e2e") {
  if (::geteuid() != 0) {
    WARN("not root: " << suite << " test skipped");
    return false;
  }
  return true;
}

inline std::map<std::string, std::string> Qos(const std::string& level) {
  return {{"katalyst.kubewharf.io/qos_level", level}};
}

// One CPU requested the way the kubelet encodes it (shares 1024, quota = period).
inline ContainerSpec OneCpu(const std::string& name) {
  ContainerSpec spec;
  spec.name = name;
  spec.cpu_shares = 1024;
  spec.cpu_period = 100000;
  spec.cpu_quota = 100000;
  spec.memory_limit_in_bytes = 64LL << 20;
  return spec;
}

}  // namespace qrm::e2e
