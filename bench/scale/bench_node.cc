#include "bench/scale/bench_node.h"

#include <cstdlib>
#include <sstream>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>

#include "api/cri_runtime_v1.grpc.pb.h"
#include "bench/scale/probes.h"

namespace qrm::bench {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::unique_ptr<grpc::ClientContext> Context(std::chrono::milliseconds timeout) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
  return ctx;
}

// One CRI Version call on a fresh channel. The channel gets its own subchannel pool: a
// shared subchannel to the killed instance would still be in reconnect backoff (1 s and
// more) and delay the call by far more than qrm-host's start.
bool CriVersionAnswers(const std::string& socket) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto stub = ::runtime::v1::RuntimeService::NewStub(
      grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args));
  ::runtime::v1::VersionResponse response;
  return stub->Version(Context(std::chrono::seconds(2)).get(), {}, &response).ok();
}

std::unique_ptr<admin::v1::Admin::Stub> AdminStub(const std::string& socket) {
  return admin::v1::Admin::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
}

std::string Tail(const std::string& path, size_t bytes) {
  std::string text = testing::ReadFile(path);
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

}  // namespace

StatusOr<std::unique_ptr<BenchNode>> BenchNode::Start(BenchNodeOptions options) {
  std::unique_ptr<BenchNode> node(new BenchNode(std::move(options)));
  auto containerd = e2e::Containerd::Start();
  if (!containerd.ok()) return containerd.status().WithContext("containerd");
  node->containerd_ = std::move(*containerd);
  node->metrics_port_ = FreeLoopbackPort();
  if (node->metrics_port_ <= 0) return UnavailableError("no free loopback port for /metrics");
  ::mkdir(node->File("plugins").c_str(), 0750);
  node->StartPlugins();
  auto started = node->StartHostTimed();
  if (!started.ok()) return started.status();
  QRM_RETURN_IF_ERROR(node->WaitPluginsHealthy());
  return node;
}

BenchNode::~BenchNode() {
  Stop();
}

std::vector<std::string> BenchNode::Stop() {
  host_.reset();  // the host first: its reconcile must not race the plugins' exit
  plugins_.clear();
  if (!containerd_) return {};
  auto leftovers = containerd_->Stop();
  containerd_.reset();
  return leftovers;
}

void BenchNode::StartPlugins() {
  auto start = [&](const std::string& which, const std::string& binary,
                   std::vector<std::string> flags) {
    std::vector<std::string> argv = {binary,        "--plugin-dir",         File("plugins"),
                                     "--state-dir", File("state-" + which), "--log-level",
                                     "warn"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    plugins_[which] = std::make_unique<testing::ChildProcess>(argv, File(which + ".log"));
  };
  // No reclaimed pool: on a 2-CPU machine it would leave no CPU to dedicate.
  start("cpu", QRM_CPU_PLUGIN, {"--reclaimed-pool-size", "0"});
  start("memory", QRM_MEMORY_PLUGIN, {});
  // Virtual NICs count, so the plugin has something to manage on a VM.
  start("nic", QRM_NIC_PLUGIN, {"--include-virtual", "--unknown-nic-speed-mbps", "10000"});
}

std::vector<std::string> BenchNode::HostArgv() const {
  // QRM_BENCH_HOST_WRAPPER="heaptrack -o /tmp/h" (words split on spaces) runs qrm-host under
  // a profiler. Only for profiling: the figures then include the wrapper.
  std::vector<std::string> argv;
  if (const char* wrapper = std::getenv("QRM_BENCH_HOST_WRAPPER")) {
    std::istringstream words(wrapper);
    for (std::string w; words >> w;) argv.push_back(w);
  }
  std::vector<std::string> host = {QRM_HOST,
                                   "--cri-socket",
                                   File("cri.sock"),
                                   "--runtime-endpoint",
                                   "unix://" + containerd_->socket(),
                                   "--plugin-dir",
                                   File("plugins"),
                                   "--state-dir",
                                   File("state-host"),
                                   "--reconcile-period",
                                   std::to_string(options_.reconcile_period.count()) + "ms",
                                   "--pod-resources-socket",
                                   File("pod-resources.sock"),
                                   "--admin-socket",
                                   File("admin.sock"),
                                   "--metrics-address",
                                   "127.0.0.1:" + std::to_string(metrics_port_),
                                   "--always-consult",
                                   "qrm.io/nic",
                                   "--log-level",
                                   options_.host_log_level};
  argv.insert(argv.end(), host.begin(), host.end());
  return argv;
}

StatusOr<HostStartTimes> BenchNode::StartHostTimed() {
  const std::string socket = File("cri.sock");
  const auto start = Clock::now();
  host_ = std::make_unique<testing::ChildProcess>(HostArgv(), File("qrm-host.log"));
  HostStartTimes times;
  bool socket_seen = false, ready_seen = false;
  while (!(socket_seen && ready_seen)) {
    if (!socket_seen && UnixSocketAccepts(socket) && CriVersionAnswers(socket)) {
      times.socket_ms = MsSince(start);
      socket_seen = true;
    }
    if (!ready_seen && HttpGet(metrics_port_, "/readyz", std::chrono::seconds(2)).status == 200) {
      times.ready_ms = MsSince(start);
      ready_seen = true;
    }
    if (!host_->running()) {
      return UnavailableError("qrm-host exited during start-up:\n" + LogTails());
    }
    if (MsSince(start) > 60000) {
      return DeadlineExceededError("qrm-host did not become ready in 60 s:\n" + LogTails());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return times;
}

StatusOr<HostStartTimes> BenchNode::KillAndRestartHost() {
  host_->Kill(SIGKILL);
  host_.reset();
  auto times = StartHostTimed();
  if (!times.ok()) return times.status();
  QRM_RETURN_IF_ERROR(WaitPluginsHealthy());
  return times;
}

Status BenchNode::WaitPluginsHealthy() {
  const bool healthy = testing::WaitFor(
      [&] {
        auto n = HealthyPlugins();
        return n.ok() && *n == 3;
      },
      std::chrono::seconds(30));
  if (!healthy) return UnavailableError("the 3 plugins did not become healthy:\n" + LogTails());
  return Status::Ok();
}

e2e::CriClient BenchNode::Shim() const {
  return e2e::CriClient(File("cri.sock"), containerd_->ClientOptions());
}

e2e::CriClient BenchNode::Direct() const {
  return containerd_->Client();
}

StatusOr<admin::v1::ListAllocationsResponse> BenchNode::Allocations() {
  admin::v1::ListAllocationsResponse r;
  grpc::Status s = AdminStub(File("admin.sock"))
                       ->ListAllocations(Context(std::chrono::seconds(30)).get(), {}, &r);
  if (!s.ok()) return UnavailableError("ListAllocations: " + s.error_message());
  return r;
}

StatusOr<int> BenchNode::HealthyPlugins() {
  admin::v1::ListPluginsResponse r;
  grpc::Status s =
      AdminStub(File("admin.sock"))->ListPlugins(Context(std::chrono::seconds(5)).get(), {}, &r);
  if (!s.ok()) return UnavailableError("ListPlugins: " + s.error_message());
  int healthy = 0;
  for (const auto& p : r.plugins()) healthy += p.state() == "healthy" ? 1 : 0;
  return healthy;
}

StatusOr<long> BenchNode::ReconcileTicks() {
  const HttpResponse r = HttpGet(metrics_port_, "/metrics");
  if (r.status != 200) {
    return UnavailableError("GET /metrics: status " + std::to_string(r.status));
  }
  // The histogram appears with its first observation: absent means no tick yet.
  return static_cast<long>(MetricValue(r.body, "qrm_reconcile_duration_seconds_count").value_or(0));
}

Status BenchNode::WaitReconcileTicks(int n) {
  auto before = ReconcileTicks();
  if (!before.ok()) return before.status();
  const bool done = testing::WaitFor(
      [&] {
        auto now = ReconcileTicks();
        return now.ok() && *now >= *before + n;
      },
      10 * n * options_.reconcile_period + std::chrono::seconds(10));
  if (!done) return DeadlineExceededError("no reconcile tick completed");
  return Status::Ok();
}

std::string BenchNode::LogTails(size_t bytes) const {
  std::string out;
  for (const char* name : {"qrm-host", "cpu", "memory", "nic"}) {
    out += std::string("--- ") + name + ".log\n" + Tail(File(std::string(name) + ".log"), bytes);
  }
  return out;
}

}  // namespace qrm::bench
