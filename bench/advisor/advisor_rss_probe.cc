// advisor_rss_probe: qrm-advisor as it runs, for advisor_bench's P10_rss: its resident memory
// with 1,000 containers after an hour of 1 s sampling, the store's windows (30 minutes) and the
// models' histograms full.
//
// It is the daemon's Serve (cmd/qrm-advisor/run_command.cc) with two things replaced: the
// runtime and qrm-host are FakeNode's in-process sources, and the clock is simulated (the
// ticks run back to back). Everything else is the daemon's, linked from the same libraries:
// the configuration from its own flags and defaults (DaemonFlags), the models, their
// checkpointers (a write every 10 simulated minutes), the gRPC service (queried at the end
// like qrmctl) and the /metrics server (scraped every 15 simulated seconds like Prometheus).
// A helper process, forked before any thread exists, owns the fake node (writes its files,
// checks the samples against its rates, a minute apart between memory writes) and runs the clients:
// none of that is in the measured memory. CPU counters are rewritten every tick (the rates are
// exact and checked every minute); memory files every --memory-every ticks (a working set is a
// level: an unchanged file is a valid reading).
//
// Prints "key value" lines: VmRSS_kB, RssAnon_kB, RssFile_kB, RssShmem_kB, VmHWM_kB, threads
// (/proc/self/status), heap_live_kB, heap_free_kB (mallinfo2), VmRSS_trimmed_kB (after
// malloc_trim, measured last), series, ring_kB, model_pods, steps, checkpoint_writes, scrapes.
// Flags: --containers N (1000), --ticks N (3600), --memory-every N (10).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "advisor/agent/advisor_service.h"
#include "advisor/agent/agent_metrics.h"
#include "advisor/state/model_checkpointer.h"
#include "api/advisor_v1.grpc.pb.h"
#include "bench/advisor/fake_node.h"
#include "bench/scale/bench_args.h"
#include "common/http/http_server.h"
#include "common/malloc_tuning.h"
#include "common/metrics/metrics.h"

namespace {

namespace qa = ::qrm::advisor;
using qrm::bench::advisor::FakeNode;

constexpr int64_t kNsPerSecond = 1'000'000'000;

// ---- the helper process: the fake node and the clients ----

// GET /metrics over a fresh connection; the body's size, or -1.
long ScrapeMetrics(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  std::string response;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
    char buffer[65536];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) response.append(buffer, n);
  }
  ::close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.0 200", 0) != 0 || body == std::string::npos ||
      response.find("qrm_advisor_", body) == std::string::npos) {
    return -1;
  }
  return static_cast<long>(response.size() - body - 4);
}

// qrmctl usage and qrmctl prediction; the number of pods in the usage answer, or -1.
long QueryAdvisor(const std::string& socket) {
  namespace v1 = ::qrm::advisor::v1;
  auto stub = v1::Advisor::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext usage_ctx, prediction_ctx;
  usage_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  prediction_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::GetUsageRequest usage_request;
  usage_request.set_window_seconds(300);
  v1::GetUsageResponse usage;
  v1::GetPredictionResponse prediction;
  if (!stub->GetUsage(&usage_ctx, usage_request, &usage).ok() ||
      !stub->GetPrediction(&prediction_ctx, v1::GetPredictionRequest{}, &prediction).ok()) {
    return -1;
  }
  return usage.pods_size();
}

// The samples of the agent's last tick, for the helper to check: "<index> <key> <cpu> <memory>"
// lines (-1: no CPU value), written under the agent's lock straight to the pipe.
void WriteSamples(const qa::Agent& agent, FILE* out) {
  agent.Read([&](const qa::AgentState& s, auto&&...) {
    std::fprintf(out, " %.17g %zu\n", s.last_tick.node_cpu.value_or(-1),
                 s.last_tick.containers.size());
    for (const qa::ContainerSample& c : s.last_tick.containers) {
      std::fprintf(out, "%zu %s %.17g %.17g\n", c.index, s.containers.at(c.index).Key().c_str(),
                   c.cpu.value_or(-1), c.memory);
    }
    return 0;
  });
}

// Reads what WriteSamples wrote and checks it against the node; 0, or -1 (said on stderr).
long CheckSamples(const FakeNode& node, int64_t second, int64_t memory_second, FILE* in) {
  double node_cpu = 0;
  size_t n = 0;
  if (std::fscanf(in, "%lf %zu", &node_cpu, &n) != 2) return -1;
  std::vector<qrm::bench::advisor::SampledContainer> samples(n);
  char key[512];
  for (auto& c : samples) {
    double cpu = 0;
    if (std::fscanf(in, "%zu %511s %lf %lf", &c.index, key, &cpu, &c.memory) != 4) return -1;
    c.key = key;
    if (cpu >= 0) c.cpu = cpu;
  }
  const std::string wrong = qrm::bench::advisor::CheckSamples(
      node, samples, node_cpu >= 0 ? std::optional<double>(node_cpu) : std::nullopt, second,
      memory_second);
  if (wrong.empty()) return 0;
  std::fprintf(stderr, "advisor_rss_probe: sampled values wrong: %s\n", wrong.c_str());
  return -1;
}

// One request: "advance SECOND MEMORY", "check SECOND MEMORY_SECOND" (samples follow),
// "metrics PORT" or "grpc SOCKET". The answer: a number, -1 for a failure.
long Respond(FakeNode& node, const std::string& verb, FILE* in) {
  char target[4096];
  if (verb == "advance" || verb == "check") {
    long second = 0, memory = 0;
    if (std::fscanf(in, "%ld %ld", &second, &memory) != 2) return -1;
    if (verb == "check") return CheckSamples(node, second, memory, in);
    node.AdvanceTo(second, memory != 0);
    return 0;
  }
  if (std::fscanf(in, "%4095s", target) != 1) return -1;
  if (verb == "metrics") return ScrapeMetrics(std::atoi(target));
  if (verb == "grpc") return QueryAdvisor(target);
  return -1;
}

// The probe's helper process, forked before any thread or channel exists: it owns the fake
// node (writes its files, knows its rates) and runs the daemon's clients, so that none of
// this is in the measured process's memory.
class Helper {
 public:
  explicit Helper(std::unique_ptr<FakeNode>& node) {
    int to_child[2], from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
      throw std::runtime_error("pipe");
    }
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      ::close(to_child[1]);
      ::close(from_child[0]);
      Serve(node, ::fdopen(to_child[0], "r"), ::fdopen(from_child[1], "w"));
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    requests_ = ::fdopen(to_child[1], "w");
    answers_ = ::fdopen(from_child[0], "r");
    node->KeepFiles();  // the helper removes them
    node.reset();
  }
  ~Helper() {
    std::fclose(requests_);  // the helper sees the end and exits
    std::fclose(answers_);
    ::waitpid(pid_, nullptr, 0);
  }

  long Ask(const std::string& request) {
    std::fprintf(requests_, "%s\n", request.c_str());
    return Answer();
  }
  long Check(const qa::Agent& agent, int64_t second, int64_t memory_second) {
    std::fprintf(requests_, "check %ld %ld", static_cast<long>(second),
                 static_cast<long>(memory_second));
    WriteSamples(agent, requests_);
    return Answer();
  }

 private:
  long Answer() {
    std::fflush(requests_);
    long answer = -1;
    if (std::fscanf(answers_, "%ld", &answer) != 1) return -1;
    return answer;
  }

  [[noreturn]] static void Serve(std::unique_ptr<FakeNode>& node, FILE* in, FILE* out) {
    char verb[16];
    while (std::fscanf(in, "%15s", verb) == 1) {
      long answer = -1;
      try {
        answer = Respond(*node, verb, in);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "advisor_rss_probe: %s\n", e.what());
      }
      std::fprintf(out, "%ld\n", answer);
      std::fflush(out);
    }
    node.reset();  // removes the files
    ::_exit(0);
  }

  pid_t pid_ = -1;
  FILE* requests_ = nullptr;
  FILE* answers_ = nullptr;
};

// ---- the daemon ----

// The checkpointers as the daemon makes them (run_command.cc's Checkpoints).
std::vector<std::unique_ptr<qa::ModelCheckpointer>> MakeCheckpointers(
    const qrm::advisor_cmd::DaemonConfig& config, qa::Predictors& p) {
  std::vector<std::unique_ptr<qa::ModelCheckpointer>> out;
  qa::CheckpointerOptions o;
  o.dir = config.state_dir;
  o.save_interval_s = config.checkpoint_interval_s;
  out.push_back(std::make_unique<qa::ModelCheckpointer>(p.cpu(), "cpu", o));
  out.push_back(std::make_unique<qa::ModelCheckpointer>(p.memory(), "memory", o));
  if (p.pool() != nullptr)
    out.push_back(std::make_unique<qa::ModelCheckpointer>(*p.pool(), "pool", o));
  return out;
}

using Checkpointers = std::vector<std::unique_ptr<qa::ModelCheckpointer>>;

// /metrics as the daemon renders it (run_command.cc's AddCheckpointMetrics).
void AddMetrics(const Checkpointers& checkpointers, const qa::Agent& agent) {
  qrm::metrics::Default().AddCollector([&checkpointers, &agent](std::string& out) {
    qa::AppendAgentMetrics(agent, out);
    out += "# TYPE qrm_advisor_checkpoint_writes_total counter\n";
    agent.Read([&](auto&&...) {
      for (const auto& cp : checkpointers) {
        out += fmt::format("qrm_advisor_checkpoint_writes_total{{scope=\"{}\",model=\"{}\"}} {}\n",
                           cp->scope(), cp->model_name(), cp->writes());
      }
      return 0;
    });
  });
}

bool Ready(const qa::Agent& agent) {
  return agent.Read([](const qa::AgentState& s, auto&&...) { return s.last_node_sample > 0; });
}

// /proc/self/status's "Key:   N kB" lines (and Threads), in kB.
std::map<std::string, long> ProcStatus() {
  std::map<std::string, long> out;
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    out[line.substr(0, colon)] = std::atol(line.c_str() + colon + 1);
  }
  return out;
}

}  // namespace

namespace {

struct Totals {
  long scrapes = 0;
  long usage_pods = 0;
};

// What the measured process keeps of the fake node: the daemon's sources and configuration.
struct NodeView {
  std::unique_ptr<qa::HostSource> host;
  std::unique_ptr<qa::RuntimeSource> runtime;
  qrm::advisor_cmd::DaemonConfig config;
  int pods = 0;
};

// The sampling loop as the daemon runs it (run_command.cc's Loop), in simulated time that ends
// about now (the service answers for the real clock). Empty, or what went wrong.
std::string RunTicks(qa::Agent& agent, Checkpointers& checkpointers, Helper& helper, int port,
                     const qrm::bench::BenchArgs& args, Totals& totals) {
  const int64_t ticks = args.Int("ticks"), memory_every = std::max(args.Int("memory-every"), 1);
  const int64_t start = std::time(nullptr) - ticks;
  int64_t memory_second = 0;
  for (int64_t k = 1; k <= ticks; ++k) {
    const bool memory = k == 1 || k % memory_every == 0;
    if (helper.Ask(fmt::format("advance {} {}", k, memory ? 1 : 0)) != 0) {
      return "the fake node's files could not be written";
    }
    if (memory) memory_second = k;
    agent.Tick(start + k, k * kNsPerSecond);
    agent.WithModels([&](qa::Predictors&) {
      for (auto& c : checkpointers) (void)c->MaybeSave(start + k);  // failures are counted
    });
    if ((start + k) % 60 == 0) qrm::ReleaseFreeMemory();  // as the daemon's loop
    if (k % 15 == 0) {
      if (helper.Ask(fmt::format("metrics {}", port)) < 0) return "a /metrics scrape failed";
      totals.scrapes++;
    }
    if ((k % 60 == 5 || k == ticks) && helper.Check(agent, k, memory_second) != 0) {
      return "the samples were not the fake node's";
    }
  }
  return "";
}

// The "key value" lines advisor_bench reads; the process's memory is read first.
void Report(const qa::Agent& agent, const Checkpointers& checkpointers,
            const qrm::advisor_cmd::DaemonConfig& config, const Totals& totals) {
  std::map<std::string, long> status = ProcStatus();
  const qrm::HeapBytes heap = qrm::CurrentHeapBytes();
  for (const char* key : {"VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM"}) {
    std::printf("%s_kB %ld\n", key, status[key]);
  }
  std::printf("threads %ld\nheap_live_kB %zu\nheap_free_kB %zu\n", status["Threads"],
              heap.in_use / 1024, heap.free / 1024);
  const qa::RingOptions& ring = config.agent.store.ring;
  const int64_t ring_bytes =
      ring.raw_horizon_s / ring.interval_s * 2 + ring.bucket_horizon_s / ring.bucket_s * 4;
  agent.Read([&](const qa::AgentState& s, const qa::Predictors& p, auto&&...) {
    std::printf("series %zu\nring_kB %ld\nmodel_pods %zu\nsteps %ld\n", s.store.series_count(),
                static_cast<long>(s.store.series_count() * ring_bytes / 1024), s.cpu.pods.size(),
                static_cast<long>(p.steps_observed()));
    return 0;
  });
  uint64_t writes = 0;
  for (const auto& c : checkpointers) writes += c->writes();
  std::printf("checkpoint_writes %lu\nscrapes %ld\n", static_cast<unsigned long>(writes),
              totals.scrapes);
  qrm::ReleaseFreeMemory();
  std::printf("VmRSS_trimmed_kB %ld\n", ProcStatus()["VmRSS"]);
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "advisor_rss_probe: %s\n", what.c_str());
  return 1;
}

// Serve (run_command.cc) on the fake node: checkpoints restored, the agent, the gRPC service,
// /metrics; then the ticks, one query like qrmctl's, and the report.
int RunProbe(const qrm::bench::BenchArgs& args, NodeView& node, Helper& helper) {
  const qrm::advisor_cmd::DaemonConfig& config = node.config;
  qrm::ConfigureLogging(config.log_level, config.log_format);
  auto predictors = qa::Predictors::Make(config.predictors);
  if (!predictors.ok()) return Fail(predictors.status().ToString());
  Checkpointers checkpointers = MakeCheckpointers(config, *predictors);
  for (auto& c : checkpointers) c->Restore();
  qa::Agent agent(config.agent, std::move(*predictors), std::move(node.host),
                  std::move(node.runtime));
  qa::AdvisorServer server(config.server, agent, config.agent.pools.control_file);
  if (qrm::Status s = server.Start(); !s.ok()) return Fail(s.ToString());
  AddMetrics(checkpointers, agent);
  qrm::http::HttpServer http(config.metrics_address,
                             qrm::http::StandardRoutes([&agent] { return Ready(agent); }));
  if (qrm::Status s = http.Start(); !s.ok()) return Fail(s.ToString());
  Totals totals;
  std::string wrong = RunTicks(agent, checkpointers, helper, http.port(), args, totals);
  if (!wrong.empty()) return Fail(wrong);
  totals.usage_pods = helper.Ask("grpc " + config.server.socket);
  if (totals.usage_pods != node.pods) {
    return Fail(
        fmt::format("qrmctl usage: {} pods answered, {} run", totals.usage_pods, node.pods));
  }
  Report(agent, checkpointers, config, totals);
  http.Stop();
  server.Stop();
  return 0;
}

// The fake node, its sources and the daemon's configuration for it; then the helper takes
// the node away (the measured process keeps only what the daemon would).
int StartProbe(const qrm::bench::BenchArgs& args) {
  qrm::bench::advisor::FakeNodeOptions options;
  options.containers = args.Int("containers");
  auto fake = std::make_unique<FakeNode>(options);
  NodeView node;
  node.host = fake->MakeHostSource();
  node.runtime = fake->MakeRuntimeSource();
  node.pods = fake->pods();
  auto config = qrm::bench::advisor::DaemonConfigFor(
      *fake, {"--metrics-address", "127.0.0.1:0", "--log-level", "warn"});
  if (!config.ok()) return Fail(config.status().ToString());
  node.config = std::move(*config);
  Helper helper(fake);  // forked here: no thread exists yet
  return RunProbe(args, node, helper);
}

}  // namespace

int main(int argc, char** argv) {
  qrm::TuneMalloc(1);  // as qrm-advisor's RunDaemon, before any thread
  qrm::bench::BenchArgs args({{"containers", 1000}, {"ticks", 3600}, {"memory-every", 10}});
  if (std::string error = args.Parse(argc, argv); !error.empty()) {
    std::fprintf(stderr, "advisor_rss_probe: %s\n", error.c_str());
    return 2;
  }
  try {
    return StartProbe(args);
  } catch (const std::exception& e) {
    return Fail(e.what());
  }
}
