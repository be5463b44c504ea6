// Builders for the extender service tests: Kubernetes objects as JSON, decoded by the same code
// that decodes kube-scheduler's requests and the informers' objects.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "cluster/extender/extender_codec.h"
#include "cluster/objects/node_metric_json.h"
#include "cluster/scheduler/extender_service.h"

namespace qrm::cluster::scheduler::testing {

// 2026-01-01T00:00:00Z: "now" of every test.
inline const loadaware::TimePoint kNow{std::chrono::seconds(1'767'225'600)};
inline constexpr const char* kFreshUpdate = "2025-12-31T23:59:30Z";

// A node of `cores` cores and `gib` GiB allocatable.
inline std::string NodeJson(const std::string& name, int cores = 96, int gib = 512,
                            const std::string& annotations = "{}") {
  return fmt::format(
      R"({{"metadata":{{"name":"{}","annotations":{}}},"spec":{{"podCIDR":"10.0.0.0/24"}},)"
      R"("status":{{"allocatable":{{"cpu":"{}","memory":"{}Gi","pods":"110"}}}}}})",
      name, annotations, cores, gib);
}

inline extender::Node DecodeNode(const std::string& json) {
  StatusOr<extender::ExtenderArgs> args =
      extender::DecodeExtenderArgs(R"({"Nodes":{"items":[)" + json + "]}}");
  INFO(json);
  REQUIRE(args.ok());
  return args->nodes->items.at(0);
}

// A pod asking `milli_cpu` and `gib` (requests = limits; none when 0).
inline std::string PodJson(const std::string& name, int64_t milli_cpu = 0, int gib = 0,
                           const std::string& node = "", const std::string& extra_meta = "") {
  std::string resources = "{}";
  if (milli_cpu > 0) {
    const std::string list = fmt::format(R"({{"cpu":"{}m","memory":"{}Gi"}})", milli_cpu, gib);
    resources = fmt::format(R"({{"requests":{},"limits":{}}})", list, list);
  }
  return fmt::format(R"({{"metadata":{{"name":"{}","namespace":"default","uid":"uid-{}"{}}},)"
                     R"("spec":{{"nodeName":"{}","containers":[{{"name":"c","resources":{}}}]}},)"
                     R"("status":{{"phase":"{}"}}}})",
                     name, name, extra_meta, node, resources, node.empty() ? "Pending" : "Running");
}

inline extender::Pod DecodePod(const std::string& json) {
  StatusOr<extender::ExtenderArgs> args =
      extender::DecodeExtenderArgs(R"({"Pod":)" + json + R"(,"NodeNames":[]})");
  INFO(json);
  REQUIRE(args.ok());
  return *args->pod;
}

// A fresh NodeMetric with this node usage.
inline NodeMetric Metric(const std::string& node, int cores, int gib,
                         const std::string& update_time = kFreshUpdate) {
  const std::string json = fmt::format(
      R"({{"metadata":{{"name":"{}"}},"status":{{"updateTime":"{}",)"
      R"("nodeMetric":{{"nodeUsage":{{"resources":{{"cpu":"{}","memory":"{}Gi"}}}}}}}}}})",
      node, update_time, cores, gib);
  StatusOr<NodeMetric> metric = DecodeNodeMetric(json);
  INFO(json);
  REQUIRE(metric.ok());
  return *metric;
}

inline extender::ExtenderArgs NamesArgs(const std::string& pod_json,
                                        const std::string& names_json) {
  StatusOr<extender::ExtenderArgs> args =
      extender::DecodeExtenderArgs(R"({"Pod":)" + pod_json + R"(,"NodeNames":)" + names_json + "}");
  REQUIRE(args.ok());
  return *args;
}

inline extender::ExtenderArgs NodesArgs(const std::string& pod_json,
                                        const std::string& items_json) {
  StatusOr<extender::ExtenderArgs> args = extender::DecodeExtenderArgs(
      R"({"Pod":)" + pod_json + R"(,"Nodes":{"metadata":{},"items":)" + items_json + "}}");
  REQUIRE(args.ok());
  return *args;
}

// A service with the default arguments, its own registry and a fixed clock.
struct ServiceFixture {
  metrics::Registry registry;
  std::unique_ptr<ExtenderService> service;

  explicit ServiceFixture(loadaware::LoadAwareArgs args = loadaware::DefaultArgs()) {
    ExtenderServiceOptions options;
    options.registry = &registry;
    options.clock = [] { return kNow; };
    StatusOr<std::unique_ptr<ExtenderService>> created =
        ExtenderService::Create(std::move(args), std::move(options));
    REQUIRE(created.ok());
    service = std::move(created).value();
  }
  ExtenderService& operator*() { return *service; }
  ExtenderService* operator->() { return service.get(); }
};

}  // namespace qrm::cluster::scheduler::testing
