#include "cluster/objects/node_metric_json.h"

#include <fmt/format.h>

#include "cluster/objects/json_io.h"
#include "cluster/objects/meta_time.h"

namespace qrm::cluster {
namespace {

using json::Field;
using json::Writer;

// ---- writing, in the Go types' field order ----

void WriteResourceMap(Writer& w, const char* key, const ResourceMap& m) {
  w.Key(key);
  w.StartObject();
  if (!m.resources.empty()) {
    w.Key("resources");
    w.StartObject();
    for (const auto& [name, q] : m.resources) json::WriteString(w, name.c_str(), q.ToString());
    w.EndObject();
  }
  w.EndObject();
}

void WriteAggregated(Writer& w, const char* key, const std::vector<AggregatedUsage>& list) {
  if (list.empty()) return;
  w.Key(key);
  w.StartArray();
  for (const AggregatedUsage& a : list) {
    w.StartObject();
    if (!a.usage.empty()) {
      w.Key("usage");
      w.StartObject();
      for (const auto& [type, m] : a.usage) WriteResourceMap(w, type.c_str(), m);
      w.EndObject();
    }
    json::WriteString(w, "duration", FormatDuration(a.duration_ns));
    w.EndObject();
  }
  w.EndArray();
}

void WriteNodeMetricInfo(Writer& w, const NodeMetricInfo& info) {
  w.Key("nodeMetric");
  w.StartObject();
  WriteResourceMap(w, "nodeUsage", info.node_usage);
  WriteAggregated(w, "aggregatedNodeUsages", info.aggregated_node_usages);
  WriteResourceMap(w, "systemUsage", info.system_usage);
  WriteAggregated(w, "aggregatedSystemUsages", info.aggregated_system_usages);
  if (!info.numa_usages.empty()) {
    w.Key("numaUsages");
    w.StartArray();
    for (const NumaUsage& n : info.numa_usages) {
      w.StartObject();
      w.Key("numaNodeID");
      w.Int(n.numa_node_id);
      WriteResourceMap(w, "nodeUsage", n.node_usage);
      WriteResourceMap(w, "systemUsage", n.system_usage);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

void WritePods(Writer& w, const std::vector<PodMetricInfo>& pods) {
  if (pods.empty()) return;
  w.Key("podsMetric");
  w.StartArray();
  for (const PodMetricInfo& p : pods) {
    w.StartObject();
    json::WriteStringIfSet(w, "name", p.name);
    json::WriteStringIfSet(w, "namespace", p.namespace_);
    WriteResourceMap(w, "podUsage", p.pod_usage);
    json::WriteStringIfSet(w, "priority", p.priority);
    json::WriteStringIfSet(w, "qos", p.qos);
    w.EndObject();
  }
  w.EndArray();
}

void WriteHostApps(Writer& w, const std::vector<HostApplicationMetricInfo>& apps) {
  if (apps.empty()) return;
  w.Key("hostApplicationMetric");
  w.StartArray();
  for (const HostApplicationMetricInfo& a : apps) {
    w.StartObject();
    json::WriteStringIfSet(w, "name", a.name);
    WriteResourceMap(w, "usage", a.usage);
    json::WriteStringIfSet(w, "priority", a.priority);
    json::WriteStringIfSet(w, "qos", a.qos);
    w.EndObject();
  }
  w.EndArray();
}

void WriteSpec(Writer& w, const std::optional<NodeMetricCollectPolicy>& policy) {
  w.Key("spec");
  w.StartObject();
  if (policy) {
    w.Key("metricCollectPolicy");
    w.StartObject();
    if (policy->aggregate_duration_seconds) {
      w.Key("aggregateDurationSeconds");
      w.Int64(*policy->aggregate_duration_seconds);
    }
    if (policy->report_interval_seconds) {
      w.Key("reportIntervalSeconds");
      w.Int64(*policy->report_interval_seconds);
    }
    if (policy->node_aggregate_durations_ns) {
      w.Key("nodeAggregatePolicy");
      w.StartObject();
      if (!policy->node_aggregate_durations_ns->empty()) {
        w.Key("durations");
        w.StartArray();
        for (int64_t d : *policy->node_aggregate_durations_ns) w.String(FormatDuration(d).c_str());
        w.EndArray();
      }
      w.EndObject();
    }
    if (policy->node_memory_collect_policy) {
      json::WriteString(w, "nodeMemoryCollectPolicy", *policy->node_memory_collect_policy);
    }
    w.EndObject();
  }
  w.EndObject();
}

void WriteStatusObject(Writer& w, const NodeMetricStatus& s) {
  w.StartObject();
  if (s.update_time) json::WriteString(w, "updateTime", FormatTime(*s.update_time));
  if (s.node_metric) WriteNodeMetricInfo(w, *s.node_metric);
  WritePods(w, s.pods_metric);
  WriteHostApps(w, s.host_application_metric);
  if (s.prod_reclaimable_metric) {
    w.Key("prodReclaimableMetric");
    w.StartObject();
    WriteResourceMap(w, "resource", *s.prod_reclaimable_metric);
    w.EndObject();
  }
  if (s.prod_peak_metric) {
    w.Key("prodPeakMetric");
    w.StartObject();
    WriteResourceMap(w, "resource", *s.prod_peak_metric);
    w.EndObject();
  }
  w.EndObject();
}

void WriteStatus(Writer& w, const NodeMetricStatus& s) {
  w.Key("status");
  WriteStatusObject(w, s);
}

// ---- reading ----

StatusOr<ResourceMap> ReadResourceMap(const Field& f) {
  ResourceMap m;
  QRM_ASSIGN_OR_RETURN(std::optional<Field> resources, json::Member(f, "resources"));
  if (resources) {
    if (Status each = json::ForEachMember(*resources,
                                          [&](std::string_view name, const Field& v) -> Status {
                                            QRM_ASSIGN_OR_RETURN(Quantity q,
                                                                 json::NonNegativeQuantity(v));
                                            m.resources.emplace(std::string(name), q);
                                            return Status::Ok();
                                          });
        !each.ok())
      return each;
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> devices, json::Member(f, "devices"));
  if (devices) {
    if (Status each = json::ForEachItem(*devices,
                                        [&](const Field& d) {
                                          ++m.devices;
                                          return json::RequireObject(d);
                                        });
        !each.ok())
      return each;
  }
  return m;
}

Status ReadResourceMapMember(const Field& object, const char* key, ResourceMap* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> member, json::Member(object, key));
  if (!member) return Status::Ok();
  QRM_ASSIGN_OR_RETURN(*out, ReadResourceMap(*member));
  return Status::Ok();
}

Status ReadAggregated(const Field& object, const char* key, std::vector<AggregatedUsage>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> list, json::Member(object, key));
  if (!list) return Status::Ok();
  return json::ForEachItem(*list, [&](const Field& item) -> Status {
    AggregatedUsage a;
    QRM_ASSIGN_OR_RETURN(std::optional<Field> usage, json::Member(item, "usage"));
    if (usage) {
      if (Status each = json::ForEachMember(*usage,
                                            [&](std::string_view type, const Field& v) -> Status {
                                              QRM_ASSIGN_OR_RETURN(a.usage[std::string(type)],
                                                                   ReadResourceMap(v));
                                              return Status::Ok();
                                            });
          !each.ok())
        return each;
    }
    QRM_ASSIGN_OR_RETURN(std::optional<Field> duration, json::Member(item, "duration"));
    if (duration) {
      QRM_ASSIGN_OR_RETURN(a.duration_ns, json::Duration(*duration));
    }
    out->push_back(std::move(a));
    return Status::Ok();
  });
}

StatusOr<NodeMetricInfo> ReadNodeMetricInfo(const Field& f) {
  NodeMetricInfo info;
  QRM_RETURN_IF_ERROR(ReadResourceMapMember(f, "nodeUsage", &info.node_usage));
  QRM_RETURN_IF_ERROR(ReadAggregated(f, "aggregatedNodeUsages", &info.aggregated_node_usages));
  QRM_RETURN_IF_ERROR(ReadResourceMapMember(f, "systemUsage", &info.system_usage));
  QRM_RETURN_IF_ERROR(ReadAggregated(f, "aggregatedSystemUsages", &info.aggregated_system_usages));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> numa, json::Member(f, "numaUsages"));
  if (numa) {
    if (Status each = json::ForEachItem(
            *numa,
            [&](const Field& item) -> Status {
              NumaUsage n;
              QRM_ASSIGN_OR_RETURN(std::optional<Field> id, json::Member(item, "numaNodeID"));
              if (id) {
                QRM_ASSIGN_OR_RETURN(int64_t v, json::Int(*id));
                n.numa_node_id = static_cast<int32_t>(v);
              }
              QRM_RETURN_IF_ERROR(ReadResourceMapMember(item, "nodeUsage", &n.node_usage));
              QRM_RETURN_IF_ERROR(ReadResourceMapMember(item, "systemUsage", &n.system_usage));
              info.numa_usages.push_back(std::move(n));
              return Status::Ok();
            });
        !each.ok())
      return each;
  }
  return info;
}

Status ReadPods(const Field& status, std::vector<PodMetricInfo>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> list, json::Member(status, "podsMetric"));
  if (!list) return Status::Ok();
  return json::ForEachItem(*list, [&](const Field& item) -> Status {
    if (item.value->IsNull()) return Status::Ok();  // a nil *PodMetricInfo
    PodMetricInfo p;
    QRM_RETURN_IF_ERROR(json::ReadString(item, "name", &p.name));
    QRM_RETURN_IF_ERROR(json::ReadString(item, "namespace", &p.namespace_));
    QRM_RETURN_IF_ERROR(ReadResourceMapMember(item, "podUsage", &p.pod_usage));
    QRM_RETURN_IF_ERROR(json::ReadString(item, "priority", &p.priority));
    QRM_RETURN_IF_ERROR(json::ReadString(item, "qos", &p.qos));
    out->push_back(std::move(p));
    return Status::Ok();
  });
}

Status ReadHostApps(const Field& status, std::vector<HostApplicationMetricInfo>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> list, json::Member(status, "hostApplicationMetric"));
  if (!list) return Status::Ok();
  return json::ForEachItem(*list, [&](const Field& item) -> Status {
    if (item.value->IsNull()) return Status::Ok();
    HostApplicationMetricInfo a;
    QRM_RETURN_IF_ERROR(json::ReadString(item, "name", &a.name));
    QRM_RETURN_IF_ERROR(ReadResourceMapMember(item, "usage", &a.usage));
    QRM_RETURN_IF_ERROR(json::ReadString(item, "priority", &a.priority));
    QRM_RETURN_IF_ERROR(json::ReadString(item, "qos", &a.qos));
    out->push_back(std::move(a));
    return Status::Ok();
  });
}

// ProdReclaimableMetric / ProdPeakMetric: {"resource": ResourceMap}.
Status ReadResourceHolder(const Field& status, const char* key, std::optional<ResourceMap>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> holder, json::Member(status, key));
  if (!holder) return Status::Ok();
  ResourceMap m;
  QRM_RETURN_IF_ERROR(ReadResourceMapMember(*holder, "resource", &m));
  *out = std::move(m);
  return Status::Ok();
}

StatusOr<NodeMetricStatus> ReadStatus(const Field& f) {
  NodeMetricStatus s;
  QRM_ASSIGN_OR_RETURN(std::optional<Field> updated, json::Member(f, "updateTime"));
  if (updated) {
    QRM_ASSIGN_OR_RETURN(s.update_time, json::Time(*updated));
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> info, json::Member(f, "nodeMetric"));
  if (info) {
    QRM_ASSIGN_OR_RETURN(s.node_metric, ReadNodeMetricInfo(*info));
  }
  QRM_RETURN_IF_ERROR(ReadPods(f, &s.pods_metric));
  QRM_RETURN_IF_ERROR(ReadHostApps(f, &s.host_application_metric));
  QRM_RETURN_IF_ERROR(ReadResourceHolder(f, "prodReclaimableMetric", &s.prod_reclaimable_metric));
  QRM_RETURN_IF_ERROR(ReadResourceHolder(f, "prodPeakMetric", &s.prod_peak_metric));
  return s;
}

StatusOr<std::optional<NodeMetricCollectPolicy>> ReadSpec(const Field& object) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> spec, json::Member(object, "spec"));
  if (!spec) return std::optional<NodeMetricCollectPolicy>();
  QRM_ASSIGN_OR_RETURN(std::optional<Field> p, json::Member(*spec, "metricCollectPolicy"));
  if (!p) return std::optional<NodeMetricCollectPolicy>();
  NodeMetricCollectPolicy policy;
  QRM_ASSIGN_OR_RETURN(std::optional<Field> agg, json::Member(*p, "aggregateDurationSeconds"));
  if (agg) {
    QRM_ASSIGN_OR_RETURN(policy.aggregate_duration_seconds, json::Int(*agg));
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> report, json::Member(*p, "reportIntervalSeconds"));
  if (report) {
    QRM_ASSIGN_OR_RETURN(policy.report_interval_seconds, json::Int(*report));
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> node_policy, json::Member(*p, "nodeAggregatePolicy"));
  if (node_policy) {
    policy.node_aggregate_durations_ns.emplace();
    QRM_ASSIGN_OR_RETURN(std::optional<Field> durations, json::Member(*node_policy, "durations"));
    if (durations) {
      if (Status each = json::ForEachItem(*durations,
                                          [&](const Field& d) -> Status {
                                            QRM_ASSIGN_OR_RETURN(int64_t ns, json::Duration(d));
                                            policy.node_aggregate_durations_ns->push_back(ns);
                                            return Status::Ok();
                                          });
          !each.ok())
        return each;
    }
  }
  std::string memory;
  QRM_RETURN_IF_ERROR(json::ReadString(*p, "nodeMemoryCollectPolicy", &memory));
  if (!memory.empty()) policy.node_memory_collect_policy = memory;
  return std::optional<NodeMetricCollectPolicy>(std::move(policy));
}

StatusOr<NodeMetric> ReadNodeMetric(const Field& object) {
  NodeMetric m;
  QRM_ASSIGN_OR_RETURN(m.metadata,
                       json::ReadTypeAndObjectMeta(object, kNodeMetricKind, kNodeMetricApiVersion));
  QRM_ASSIGN_OR_RETURN(m.collect_policy, ReadSpec(object));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> status, json::Member(object, "status"));
  if (status) {
    QRM_ASSIGN_OR_RETURN(m.status, ReadStatus(*status));
  }
  return m;
}

// Errors of an object read on its own start with the kind.
Status Named(std::string_view what, const Status& s) {
  return s.ok() ? s : Status(s.code(), fmt::format("{}: {}", what, s.message()));
}

}  // namespace

std::string EncodeNodeMetric(const NodeMetric& metric) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  json::WriteTypeAndObjectMeta(w, kNodeMetricKind, kNodeMetricApiVersion, metric.metadata);
  WriteSpec(w, metric.collect_policy);
  WriteStatus(w, metric.status);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string EncodeNodeMetricStatus(const NodeMetricStatus& status) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  WriteStatusObject(w, status);
  return std::string(buffer.GetString(), buffer.GetSize());
}

StatusOr<NodeMetric> DecodeNodeMetric(std::string_view text) {
  QRM_ASSIGN_OR_RETURN(rapidjson::Document doc, json::Parse(text, "NodeMetric"));
  auto m = ReadNodeMetric(Field{&doc, ""});
  if (!m.ok()) return Named("NodeMetric", m.status());
  return m;
}

StatusOr<NodeMetricList> DecodeNodeMetricList(std::string_view text) {
  QRM_ASSIGN_OR_RETURN(rapidjson::Document doc, json::Parse(text, "NodeMetricList"));
  NodeMetricList list;
  const Field root{&doc, ""};
  Status s = [&]() -> Status {
    QRM_ASSIGN_OR_RETURN(std::optional<Field> meta, json::Member(root, "metadata"));
    if (meta)
      QRM_RETURN_IF_ERROR(json::ReadString(*meta, "resourceVersion", &list.resource_version));
    QRM_ASSIGN_OR_RETURN(std::optional<Field> items, json::Member(root, "items"));
    if (!items) return Status::Ok();
    return json::ForEachItem(*items, [&](const Field& item) -> Status {
      QRM_ASSIGN_OR_RETURN(NodeMetric m, ReadNodeMetric(item));
      list.items.push_back(std::move(m));
      return Status::Ok();
    });
  }();
  if (!s.ok()) return Named("NodeMetricList", s);
  return list;
}

}  // namespace qrm::cluster
