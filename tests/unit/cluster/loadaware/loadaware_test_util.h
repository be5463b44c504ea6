// Builders for the load-aware tests, shaped after the upstream test helpers (st.MakePod() and
// the NodeMetric literals of load_aware_test.go) so that ported cases read like the originals.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "cluster/loadaware/args.h"
#include "cluster/loadaware/inputs.h"
#include "cluster/loadaware/node_load_cache.h"
#include "cluster/loadaware/verdict.h"

namespace qrm::cluster::loadaware::testing {

using namespace std::chrono_literals;

inline constexpr int64_t kMi = int64_t{1} << 20;
inline constexpr int64_t kGi = int64_t{1} << 30;
// 2026-01-01T00:00:00Z: "now" of every test.
inline const TimePoint kNow{std::chrono::seconds(1'767'225'600)};

inline constexpr const char* kNodeName = "test-node-1";

// Cores as milli-cores, the unit of "cpu".
constexpr int64_t Cores(int64_t n) {
  return n * 1000;
}

inline ResourceList CpuMem(int64_t milli_cpu, int64_t memory_bytes) {
  return {{"cpu", milli_cpu}, {"memory", memory_bytes}};
}

// st.MakePod(): no containers, Pending, no node.
class PodBuilder {
 public:
  PodBuilder(std::string ns, std::string name) {
    pod_.namespace_ = std::move(ns);
    pod_.name = std::move(name);
    pod_.uid = pod_.namespace_ + "/" + pod_.name + "-uid";
  }
  PodBuilder& Uid(std::string uid) { return Set(pod_.uid, std::move(uid)); }
  PodBuilder& Node(std::string node) { return Set(pod_.node_name, std::move(node)); }
  PodBuilder& Priority(int32_t p) { return Set(pod_.priority, std::optional<int32_t>(p)); }
  PodBuilder& PriorityClassLabel(std::string c) {
    return Set(pod_.priority_class_label, std::optional<std::string>(std::move(c)));
  }
  PodBuilder& QosLabel(std::string q) {
    return Set(pod_.qos_class_label, std::optional<std::string>(std::move(q)));
  }
  PodBuilder& Phase(PodPhase p) { return Set(pod_.phase, p); }
  // st.MakePod().Req(): one more container with these requests.
  PodBuilder& Req(ResourceList requests) { return Container(std::move(requests), {}); }
  PodBuilder& Container(ResourceList requests, ResourceList limits) {
    pod_.containers.push_back(ContainerResources{std::move(requests), std::move(limits)});
    return *this;
  }
  PodBuilder& ScheduledAt(TimePoint t) {
    return Set(pod_.scheduled_time, std::optional<TimePoint>(t));
  }
  PodBuilder& InitializedAt(TimePoint t) {
    return Set(pod_.initialized_time, std::optional<TimePoint>(t));
  }
  PodBuilder& DaemonSet() { return Set(pod_.owned_by_daemonset, true); }
  PodBuilder& ScalingFactors(std::map<std::string, int64_t> f) {
    return Set(pod_.custom_scaling_factors, std::optional<std::map<std::string, int64_t>>(f));
  }
  PodInput Obj() const { return pod_; }
  operator PodInput() const { return pod_; }  // NOLINT(google-explicit-constructor)

 private:
  template <typename T, typename V>
  PodBuilder& Set(T& field, V value) {
    field = std::move(value);
    return *this;
  }
  PodInput pod_;
};

// The node of the upstream filter and score tests: 96 cores, 512 GiB.
inline NodeInput Node96(std::string name = kNodeName) {
  NodeInput node;
  node.name = std::move(name);
  node.allocatable = CpuMem(Cores(96), 512 * kGi);
  return node;
}

// A NodeMetric with reportIntervalSeconds 60, like every upstream literal.
class MetricBuilder {
 public:
  explicit MetricBuilder(std::string node = kNodeName) {
    m_.node_name = std::move(node);
    m_.report_interval_seconds = 60;
  }
  MetricBuilder& Updated(TimePoint t) {
    m_.update_time = t;
    return *this;
  }
  MetricBuilder& NoUpdateTime() {
    m_.update_time.reset();
    return *this;
  }
  MetricBuilder& Interval(std::optional<int64_t> seconds) {
    m_.report_interval_seconds = seconds;
    return *this;
  }
  MetricBuilder& NodeUsage(ResourceList usage) {
    Info().node_usage = std::move(usage);
    return *this;
  }
  MetricBuilder& SystemUsage(ResourceList usage) {
    Info().system_usage = std::move(usage);
    return *this;
  }
  MetricBuilder& Aggregated(std::chrono::seconds duration, std::string type, ResourceList usage) {
    for (AggregatedUsage& a : Info().aggregated_node_usages) {
      if (a.duration == duration) {
        a.usage[type] = std::move(usage);
        return *this;
      }
    }
    AggregatedUsage a;
    a.duration = duration;
    a.usage[std::move(type)] = std::move(usage);
    Info().aggregated_node_usages.push_back(std::move(a));
    return *this;
  }
  MetricBuilder& Pod(std::string ns, std::string name, std::string priority, ResourceList usage) {
    m_.pods_metric.push_back(
        PodMetric{std::move(ns), std::move(name), std::move(priority), std::move(usage)});
    return *this;
  }
  NodeMetricInput Obj() const { return m_; }
  operator NodeMetricInput() const { return m_; }  // NOLINT(google-explicit-constructor)

 private:
  NodeMetricInfo& Info() {
    if (!m_.node_metric) m_.node_metric.emplace();
    return *m_.node_metric;
  }
  NodeMetricInput m_;
};

// Upstream builds its arguments as v1 fields then SetDefaults_LoadAwareSchedulingArgs.
template <typename Edit>
LoadAwareArgs Defaulted(Edit edit) {
  LoadAwareArgs args;
  edit(args);
  SetDefaults(args);
  return args;
}
inline LoadAwareArgs Defaulted() {
  return Defaulted([](LoadAwareArgs&) {});
}

inline std::unique_ptr<NodeLoadCache> MakeCache(LoadAwareArgs args) {
  StatusOr<std::unique_ptr<NodeLoadCache>> cache = NodeLoadCache::Create(std::move(args));
  INFO(cache.status().ToString());
  REQUIRE(cache.ok());
  return std::move(cache).value();
}

inline FilterVerdict FilterOne(const NodeLoadCache& cache, const PodInput& pod,
                               const std::string& node = kNodeName, TimePoint now = kNow) {
  StatusOr<std::vector<FilterVerdict>> v = cache.Filter(pod, {node}, now);
  INFO(v.status().ToString());
  REQUIRE(v.ok());
  REQUIRE(v->size() == 1);
  return v->front();
}

inline NodeScore ScoreOne(const NodeLoadCache& cache, const PodInput& pod,
                          const std::string& node = kNodeName, TimePoint now = kNow) {
  StatusOr<std::vector<NodeScore>> v = cache.Score(pod, {node}, now);
  INFO(v.status().ToString());
  REQUIRE(v.ok());
  REQUIRE(v->size() == 1);
  return v->front();
}

// The empty pod upstream filters with (&corev1.Pod{}): BestEffort, hence batch.
inline PodInput EmptyPod() {
  return PodBuilder("", "").Uid("").Obj();
}

// What is known of the node's load parts; fails the test when the node is unknown.
inline NodeLoadParts PartsOf(const NodeLoadCache& cache, const std::string& node = kNodeName) {
  std::optional<NodeLoadParts> parts = cache.Parts(node);
  REQUIRE(parts.has_value());
  return *parts;
}

}  // namespace qrm::cluster::loadaware::testing

namespace Catch {
template <>
struct StringMaker<qrm::cluster::loadaware::FilterPath> {
  static std::string convert(qrm::cluster::loadaware::FilterPath p) {
    return std::string(qrm::cluster::loadaware::FilterPathName(p));
  }
};
template <>
struct StringMaker<qrm::cluster::loadaware::ScorePath> {
  static std::string convert(qrm::cluster::loadaware::ScorePath p) {
    return std::string(qrm::cluster::loadaware::ScorePathName(p));
  }
};
}  // namespace Catch
