// qrmctl usage / prediction / guard / nodemetric: what qrm-advisor measured, predicts, guards
// and reports, read over its socket (api/advisor_v1.proto).
#include <chrono>
#include <cstdio>
#include <iterator>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <grpcpp/grpcpp.h>

#include "api/advisor_v1.grpc.pb.h"
#include "cluster/objects/meta_time.h"
#include "cluster/objects/node_metric_json.h"
#include "qrmctl/commands.h"
#include "qrmctl/output.h"

namespace qrm::ctl {
namespace {

namespace av = ::qrm::advisor::v1;

std::unique_ptr<av::Advisor::Stub> Stub(const GlobalOptions& g) {
  return av::Advisor::NewStub(
      grpc::CreateChannel("unix:" + g.advisor_socket, grpc::InsecureChannelCredentials()));
}

Status Explain(const GlobalOptions& g, const grpc::Status& s) {
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return UnavailableError(
        fmt::format("qrm-advisor does not answer on {} ({}): is it running? (--advisor-socket)",
                    g.advisor_socket, s.error_message()));
  }
  return InternalError(fmt::format("qrm-advisor: {}", s.error_message()));
}

void SetDeadline(grpc::ClientContext& ctx) {
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(15));
}

std::string Cores(double v) {
  return fmt::format("{:.2f}", v);
}
// Memory as people read it: "512Ki", "670.2Mi", "23.5Gi".
std::string Bytes(double v) {
  constexpr const char* kUnits[] = {"", "Ki", "Mi", "Gi", "Ti"};
  size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}{}", v, kUnits[unit]);
}

// "latest" or "avg/p95/max" of a series, as a cell.
std::string Cell(const av::UsageFigures& f, bool window, bool memory) {
  if (f.samples() == 0) return "-";
  auto show = [&](double v) { return memory ? Bytes(v) : Cores(v); };
  if (!window) return show(f.latest());
  return fmt::format("{}/{}/{}", show(f.avg()), show(f.p95()), show(f.max()));
}

void PrintUsage(const av::GetUsageResponse& r) {
  const bool w = r.window_seconds() > 0;
  std::printf(
      "node: %s CPUs, %s memory; %s\n", Cores(r.node().cpu_capacity()).c_str(),
      Bytes(r.node().memory_capacity()).c_str(),
      w ? fmt::format("avg/p95/max over {}s", r.window_seconds()).c_str() : "latest sample");
  std::vector<std::vector<std::string>> rows{{"POD", "CONTAINER", "QOS", "CPU", "MEMORY"}};
  rows.push_back(
      {"(node)", "", "", Cell(r.node().cpu(), w, false), Cell(r.node().memory(), w, true)});
  rows.push_back({"(system)", "", "", Cell(r.node().system_cpu(), w, false),
                  Cell(r.node().system_memory(), w, true)});
  for (const av::PodUsage& p : r.pods()) {
    const std::string pod = p.namespace_().empty() ? p.name() : p.namespace_() + "/" + p.name();
    const std::string qos = p.qos_level().empty() ? "-" : p.qos_level();
    for (const av::ContainerUsage& c : p.containers()) {
      rows.push_back({pod, c.name(), qos, Cell(c.cpu(), w, false), Cell(c.memory(), w, true)});
    }
  }
  PrintTable(rows);
  const av::SamplingStatus& s = r.status();
  std::printf("last sample %s; %llu containers sampled, %llu skipped\n",
              Time(s.last_sample_unix()).c_str(),
              static_cast<unsigned long long>(s.containers_sampled()),
              static_cast<unsigned long long>(s.containers_skipped()));
  if (!s.host_error().empty()) std::printf("qrm-host: %s\n", s.host_error().c_str());
  if (!s.runtime_error().empty()) std::printf("runtime: %s\n", s.runtime_error().c_str());
}

void PrintPrediction(const av::GetPredictionResponse& r) {
  std::vector<std::vector<std::string>> rows{
      {"RESOURCE", "MODEL", "STEPS", "CAPACITY", "PEAK", "RECLAIMABLE", "CLASSES"}};
  for (const av::ResourcePrediction& p : r.resources()) {
    const bool memory = p.resource() == "memory";
    auto show = [&](double v) { return memory ? Bytes(v) : Cores(v); };
    std::string classes;
    for (const auto& [c, v] :
         std::map<std::string, double>(p.classes().begin(), p.classes().end())) {
      classes += fmt::format("{}{}={}", classes.empty() ? "" : " ", c, show(v));
    }
    rows.push_back({p.resource(), p.model(), std::to_string(p.steps_observed()), show(p.capacity()),
                    p.known() ? show(p.peak()) : "unknown", p.known() ? show(p.reclaimable()) : "-",
                    classes.empty() ? "-" : classes});
  }
  PrintTable(rows);
  const av::PoolDecision& pool = r.pool();
  if (!pool.enabled()) {
    std::puts("pools: not sized by the advisor (no --pool-control-file)");
    return;
  }
  std::printf(
      "pools: shared %d, reclaimed %d of %d CPUs (target %d, %s) need %.2f cores "
      "(recent %.2f, predicted %.2f by %s); decided %s; %s\n",
      pool.shared(), pool.reclaimed(), pool.free_cpus(), pool.target(),
      pool.reason().empty() ? "no decision yet" : pool.reason().c_str(), pool.need_cores(),
      pool.reactive_cores(), pool.predicted_cores(), pool.pool_model().c_str(),
      Time(pool.decided_unix()).c_str(), pool.control_file().c_str());
  if (!pool.last_error().empty()) std::printf("last write error: %s\n", pool.last_error().c_str());
}

// A metric's value in its unit: cores, or bytes as GiB.
std::string MetricValue(const std::string& metric, double v) {
  return metric.starts_with("memory") ? Bytes(v) : Cores(v);
}

void PrintEnsurances(const av::GetGuardResponse& r) {
  std::vector<std::vector<std::string>> rows{
      {"ENSURANCE", "METRIC", "USAGE", "WATERMARK", "RESTORE<", "GAP", "ABOVE", "BELOW", "STATE"}};
  for (const av::GuardEnsurance& e : r.ensurances()) {
    auto show = [&](double v) { return MetricValue(e.metric(), v); };
    const std::string state = e.missing()   ? "no sample"
                              : e.fired()   ? (e.preview() ? "fired (preview)" : "fired")
                              : e.preview() ? "preview"
                                            : "-";
    rows.push_back({e.name(), e.metric(), e.missing() ? "-" : show(e.usage()), show(e.watermark()),
                    show(e.restore_below()), show(e.gap()), std::to_string(e.above()),
                    std::to_string(e.below()), state});
  }
  PrintTable(rows);
}

void PrintGuard(const av::GetGuardResponse& r) {
  if (!r.enabled()) {
    std::puts("guard: off (qrm-advisor runs without --guard-policy)");
    return;
  }
  std::printf("policy %s, eviction mode %s, last round %s\n", r.policy_file().c_str(),
              r.eviction_mode().c_str(), Time(r.last_round_unix()).c_str());
  if (!r.policy_error().empty()) std::printf("reload refused: %s\n", r.policy_error().c_str());
  PrintEnsurances(r);
  if (r.throttled_size() > 0) {
    std::vector<std::vector<std::string>> rows{{"THROTTLED POD", "QUOTA", "CEILING", "USAGE"}};
    for (const av::GuardThrottledPod& p : r.throttled()) {
      rows.push_back(
          {p.pod(), Cores(p.quota_cores()), Cores(p.ceiling_cores()), Cores(p.usage_cores())});
    }
    PrintTable(rows);
  }
  for (const av::GuardAction& a : r.recent()) {
    std::printf("%s  %-14s %s  %s\n", Time(a.time_unix()).c_str(), a.action().c_str(),
                a.pod().c_str(), a.detail().c_str());
  }
}

std::string Usage(const cluster::ResourceMap& m) {
  std::string out;
  for (const auto& [name, q] : m.resources) {
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, q.ToString());
  }
  return out.empty() ? "-" : out;
}

void PrintNodeMetricSummary(const cluster::NodeMetric& m) {
  const cluster::NodeMetricStatus& s = m.status;
  std::printf("updated %s\n", s.update_time ? cluster::FormatTime(*s.update_time).c_str() : "-");
  if (s.node_metric) {
    std::printf("node usage    %s\n", Usage(s.node_metric->node_usage).c_str());
    std::printf("system usage  %s\n", Usage(s.node_metric->system_usage).c_str());
    for (const cluster::AggregatedUsage& a : s.node_metric->aggregated_node_usages) {
      for (const auto& [type, usage] : a.usage) {
        std::printf("node %-3s %-6s %s\n", type.c_str(),
                    cluster::FormatDuration(a.duration_ns).c_str(), Usage(usage).c_str());
      }
    }
  }
  if (s.prod_reclaimable_metric) {
    std::printf("prod reclaimable  %s\n", Usage(*s.prod_reclaimable_metric).c_str());
  }
  if (s.prod_peak_metric) std::printf("prod peak         %s\n", Usage(*s.prod_peak_metric).c_str());
  std::printf("%zu pod(s)\n", s.pods_metric.size());
  for (const cluster::PodMetricInfo& p : s.pods_metric) {
    std::printf("  %s/%s  %s %s  %s\n", p.namespace_.c_str(), p.name.c_str(), p.priority.c_str(),
                p.qos.c_str(), Usage(p.pod_usage).c_str());
  }
}

void PrintExtendedResources(const av::GetNodeMetricResponse& r) {
  const std::string published = r.extended_resources().empty()
                                    ? "none"
                                    : fmt::format("{}", fmt::join(r.extended_resources(), ", "));
  std::printf("extended resources: %llu patch(es), %llu check(s) failed, published: %s%s%s\n",
              static_cast<unsigned long long>(r.extended_resource_patches_ok()),
              static_cast<unsigned long long>(r.extended_resource_checks_failed()),
              published.c_str(), r.extended_resources_last_error().empty() ? "" : ", last error: ",
              r.extended_resources_last_error().c_str());
}

}  // namespace

int CmdNodeMetric(const GlobalOptions& g) {
  av::GetNodeMetricResponse r;
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  if (grpc::Status s = Stub(g)->GetNodeMetric(&ctx, {}, &r); !s.ok()) return Fail(Explain(g, s));
  if (r.json().empty()) {
    return Fail(UnavailableError(fmt::format(
        "node {}: no NodeMetric yet (qrm-advisor has not sampled the node)", r.node_name())));
  }
  if (g.output == "json") {
    std::printf("%s\n", r.json().c_str());  // the object itself, as the API server holds it
    return 0;
  }
  auto m = cluster::DecodeNodeMetric(r.json());
  if (!m.ok()) return Fail(m.status());
  std::printf("NodeMetric %s: ", r.node_name().c_str());
  if (!r.publishing()) {
    std::puts("served locally (qrm-advisor runs without --publish-node-report)");
  } else {
    std::printf(
        "%llu write(s), %llu failed, %llu conflict(s) retried, last written %s\n",
        static_cast<unsigned long long>(r.writes_ok()),
        static_cast<unsigned long long>(r.writes_failed()),
        static_cast<unsigned long long>(r.conflicts()),
        r.last_written_unix() ? cluster::FormatTime(r.last_written_unix()).c_str() : "never");
    if (!r.last_error().empty()) std::printf("last error: %s\n", r.last_error().c_str());
    std::printf(
        "NodeResourceTopology: %llu write(s), %llu failed%s%s\n",
        static_cast<unsigned long long>(r.topology_writes_ok()),
        static_cast<unsigned long long>(r.topology_writes_failed()),
        r.topology_last_error().empty() ? "" : ", last error: ", r.topology_last_error().c_str());
    PrintExtendedResources(r);
  }
  if (!r.topology_error().empty()) {
    std::printf("topology not built: %s\n", r.topology_error().c_str());
  }
  PrintNodeMetricSummary(*m);
  return 0;
}

int CmdGuard(const GlobalOptions& g) {
  av::GetGuardResponse r;
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  if (grpc::Status s = Stub(g)->GetGuard(&ctx, {}, &r); !s.ok()) return Fail(Explain(g, s));
  if (g.output == "json") return PrintJson(r);
  PrintGuard(r);
  return 0;
}

int CmdUsage(const GlobalOptions& g, int64_t window_seconds, const std::string& pod) {
  av::GetUsageRequest req;
  req.set_window_seconds(window_seconds);
  req.set_pod(pod);
  av::GetUsageResponse r;
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  if (grpc::Status s = Stub(g)->GetUsage(&ctx, req, &r); !s.ok()) return Fail(Explain(g, s));
  if (g.output == "json") return PrintJson(r);
  PrintUsage(r);
  return 0;
}

int CmdPrediction(const GlobalOptions& g) {
  av::GetPredictionResponse r;
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  if (grpc::Status s = Stub(g)->GetPrediction(&ctx, {}, &r); !s.ok()) return Fail(Explain(g, s));
  if (g.output == "json") return PrintJson(r);
  PrintPrediction(r);
  return 0;
}

}  // namespace qrm::ctl
