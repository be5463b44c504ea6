#include "examples/demo/cluster_view.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include "cluster/kube/http_client.h"
#include "cluster/objects/node_metric.h"
#include "cluster/objects/node_resource_topology.h"
#include "testing/free_port.h"
#include "testing/temp_dir.h"

namespace qrm::demo {
namespace {

using namespace std::chrono_literals;

// This machine's Node object, as the kubelet would register it (allocatable = capacity).
std::string NodeJson() {
  long kib = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  while (meminfo >> key) {
    if (key == "MemTotal:") {
      meminfo >> kib;
      break;
    }
    meminfo.ignore(256, '\n');
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return fmt::format(R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{0}"}},"spec":{{}},)"
                     R"("status":{{"capacity":{{"cpu":"{1}","memory":"{2}Ki","pods":"110"}},)"
                     R"("allocatable":{{"cpu":"{1}","memory":"{2}Ki","pods":"110"}}}}}})",
                     kNodeName, cpus, kib);
}

// At most `lines` lines of `text`.
std::string Head(const std::string& text, int lines) {
  size_t at = 0;
  for (int i = 0; i < lines && at != std::string::npos; ++i) at = text.find('\n', at + 1);
  return at == std::string::npos ? text : text.substr(0, at) + "\n  ...";
}

}  // namespace

ClusterView::ClusterView(std::string dir)
    : dir_(std::move(dir)),
      nodes_(server_,
             {.path = "/api/v1/nodes", .kind = "Node", .api_version = "v1", .status_patch = true}),
      metrics_(server_, {.path = cluster::kNodeMetricsPath,
                         .kind = cluster::kNodeMetricKind,
                         .api_version = cluster::kNodeMetricApiVersion}),
      topologies_(server_, {.path = cluster::kNrtPath,
                            .kind = cluster::kNrtKind,
                            .api_version = cluster::kNrtApiVersion,
                            .status_subresource = false}),
      pods_(server_, {.path = "/api/v1/pods",
                      .kind = "Pod",
                      .api_version = "v1",
                      .namespaced = true,
                      .binding = true}) {
  started_ = server_.Start().ok();
  nodes_.Seed(kNodeName, NodeJson());
  testing::WriteFile(dir_ + "/kubeconfig", server_.Kubeconfig());
}

ClusterView::~ClusterView() {
  extender_.reset();  // SIGTERM before the server it watches goes
}

std::vector<std::string> ClusterView::AdvisorFlags() const {
  return {"--node-name", kNodeName,      "--publish-node-report",
          "true",        "--kubeconfig", dir_ + "/kubeconfig"};
}

bool ClusterView::WaitForReport() {
  return testing::WaitFor(
      [&] {
        const std::optional<std::string> node = nodes_.Get(kNodeName);
        return metrics_.Get(kNodeName).has_value() && topologies_.Get(kNodeName).has_value() &&
               node && node->find("qrm.io/nic") != std::string::npos;
      },
      30s);
}

void ClusterView::PrintReport() const {
  std::printf("objects in the API server (written by qrm-advisor):\n");
  for (const std::string& name : metrics_.Names()) std::printf("  NodeMetric %s\n", name.c_str());
  for (const std::string& name : topologies_.Names()) {
    std::printf("  NodeResourceTopology %s\n", name.c_str());
  }
  const std::string node = nodes_.Get(kNodeName).value_or("");
  const size_t capacity = node.find("\"capacity\"");
  std::printf("  Node %s status (extended resources from the plugins): %s\n", kNodeName,
              capacity == std::string::npos ? "?" : node.substr(capacity).c_str());
}

bool ClusterView::AskExtender() {
  const kube::Url url{false, "127.0.0.1", static_cast<uint16_t>(port_), ""};
  const auto call = [&](const std::string& method, const std::string& path,
                        const std::string& body) -> std::string {
    kube::HttpRequest request{method, path, body, {{"Content-Type", "application/json"}}};
    StatusOr<kube::HttpResponse> answer = kube::HttpCall(url, {}, request, 5s);
    if (!answer.ok()) return "";
    return answer->status == 200 ? answer->body : "";
  };
  if (!testing::WaitFor([&] { return !call("GET", "/readyz", "").empty(); }, 20s)) return false;
  const std::string pod =
      R"({"metadata":{"name":"web-2","namespace":"demo","uid":"u-web-2"},"spec":{"containers":)"
      R"([{"name":"main","resources":{"requests":{"cpu":"500m","memory":"256Mi"}}}]},)"
      R"("status":{"phase":"Pending"}})";
  const std::string args =
      fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":["{}"]}})", pod, kNodeName);
  const std::string filtered = call("POST", "/filter", args);
  const std::string scores = call("POST", "/prioritize", args);
  std::printf("\nkube-scheduler asks qrm-scheduler-extender about a pod of 500m CPU, 256Mi:\n");
  std::printf("  POST /filter     -> %s\n  POST /prioritize -> %s\n", filtered.c_str(),
              scores.c_str());
  std::printf("  informers: %s", Head(call("GET", "/debug/informers", ""), 1).c_str());
  return !filtered.empty() && !scores.empty();
}

bool ClusterView::Show(const std::string& extender_binary) {
  if (!started_ || !WaitForReport()) return false;
  PrintReport();
  port_ = testing::FreeLoopbackPort();
  extender_ = std::make_unique<testing::ChildProcess>(
      std::vector<std::string>{extender_binary, "--address", fmt::format("127.0.0.1:{}", port_),
                               "--kubeconfig", dir_ + "/kubeconfig"},
      dir_ + "/qrm-scheduler-extender.log");
  return AskExtender();
}

}  // namespace qrm::demo
