#include "cri-shim/container_request_builder.h"

#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/json_string.h"
#include "common/protocol_keys.h"
#include "common/quantity.h"

namespace qrm::shim {
namespace {

namespace cri = ::runtime::v1;
namespace pb = ::resourceplugin::v1alpha1;

// Below this the kubelet writes its minimum shares, which mean "no request".
constexpr int64_t kMinShares = 2;

struct Override {
  std::string source;  // where it came from, for error messages: "pod annotation qrm.io/x"
  std::string key;     // the annotation key as found
  std::string value;
};

// The override lookup chain documented in annotations.h.
std::optional<Override> FindOverride(const cri::ContainerConfig& config, const PodInfo& pod,
                                     const std::string& container, const std::string& key) {
  if (auto it = config.annotations().find(key); it != config.annotations().end()) {
    return Override{"container annotation", key, it->second};
  }
  const std::string per_container = key + "." + container;
  if (auto it = pod.annotations.find(per_container); it != pod.annotations.end()) {
    return Override{"pod annotation", per_container, it->second};
  }
  if (auto it = pod.annotations.find(key); it != pod.annotations.end()) {
    return Override{"pod annotation", key, it->second};
  }
  return std::nullopt;
}

StatusOr<double> OverrideQuantity(const Override& o) {
  return ParseAmount(o.source + " " + o.key, o.value);
}

// qrm.io/resources: {"name": 2, "other": "500m"}.
Status ApplyResourcesJson(const Override& o, std::map<std::string, double>& resources) {
  rapidjson::Document doc;
  doc.Parse(o.value.data(), o.value.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError(
        fmt::format("{} {}=\"{}\": must be a JSON object of resource name -> quantity, e.g. "
                    "{{\"example.com/accel\": 2}}",
                    o.source, o.key, o.value));
  }
  std::map<std::string, double> parsed;
  for (const auto& member : doc.GetObject()) {
    const std::string name = JsonString(member.name);
    const std::string where = fmt::format("{} {} entry \"{}\"", o.source, o.key, name);
    if (name.empty()) return InvalidArgumentError(where + ": empty resource name");
    if (member.value.IsNumber()) {
      const double v = member.value.GetDouble();
      if (!std::isfinite(v) || v < 0) {
        return InvalidArgumentError(fmt::format("{}: {} must be finite and >= 0", where, v));
      }
      parsed[name] = v;
    } else if (member.value.IsString()) {
      QRM_ASSIGN_OR_RETURN(auto q, ParseAmount(where, JsonStringView(member.value)));
      parsed[name] = q;
    } else {
      return InvalidArgumentError(where + ": must be a number or a quantity string");
    }
  }
  for (const auto& [name, v] : parsed) resources[name] = v;
  return Status::Ok();
}

StatusOr<pb::ContainerType> ParseContainerType(const Override& o) {
  pb::ContainerType type;
  if (!pb::ContainerType_Parse(o.value, &type)) {
    return InvalidArgumentError(fmt::format(
        "{} {}=\"{}\": must be INIT, MAIN, SIDECAR or EPHEMERAL", o.source, o.key, o.value));
  }
  return type;
}

// CPU cores and memory bytes a LinuxContainerResources asks for; `prefix` names the message
// in errors ("config.linux.resources").
StatusOr<std::map<std::string, double>> CpuAndMemory(const cri::LinuxContainerResources& r,
                                                     const std::string& prefix) {
  const std::string shares_field = prefix + ".cpu_shares";
  QRM_ASSIGN_OR_RETURN(auto request, CpuRequestFromShares(r.cpu_shares(), shares_field.c_str()));
  const std::string quota_field = prefix + ".cpu_quota";
  QRM_ASSIGN_OR_RETURN(auto limit,
                       CpuLimitFromQuota(r.cpu_quota(), r.cpu_period(), quota_field.c_str()));
  if (r.memory_limit_in_bytes() < 0) {
    return InvalidArgumentError(fmt::format("{}.memory_limit_in_bytes={}: must be >= 0", prefix,
                                            r.memory_limit_in_bytes()));
  }
  double cpu = request;
  if (r.cpu_shares() == 0 && limit.has_value()) cpu = *limit;
  return std::map<std::string, double>{{"cpu", cpu},
                                       {"memory", static_cast<double>(r.memory_limit_in_bytes())}};
}

}  // namespace

StatusOr<double> CpuRequestFromShares(int64_t shares, const char* field) {
  if (shares < 0) {
    return InvalidArgumentError(fmt::format("{}={}: must be >= 0", field, shares));
  }
  if (shares <= kMinShares) return 0.0;
  // Integer arithmetic, exact; beyond what the kernel accepts (262144) only overflow matters.
  if (shares > (INT64_MAX - 1023) / 1000) return static_cast<double>(shares) / 1024.0;
  const int64_t milli = (shares * 1000 + 1023) / 1024;
  return static_cast<double>(milli) / 1000.0;
}

StatusOr<std::optional<double>> CpuLimitFromQuota(int64_t quota, int64_t period,
                                                  const char* field) {
  if (period < 0) {
    return InvalidArgumentError(fmt::format("{} period={}: must be >= 0", field, period));
  }
  if (quota < -1) {
    return InvalidArgumentError(
        fmt::format("{}={}: must be -1 (unlimited), 0 (unset) or positive", field, quota));
  }
  if (quota <= 0 || period == 0) return std::optional<double>();
  return std::optional<double>(static_cast<double>(quota) / static_cast<double>(period));
}

std::string NativeQosClassFromCgroupParent(const std::string& cgroup_parent) {
  if (cgroup_parent.find("kubepods") == std::string::npos) return {};
  if (cgroup_parent.find("besteffort") != std::string::npos) return "BestEffort";
  if (cgroup_parent.find("burstable") != std::string::npos) return "Burstable";
  return "Guaranteed";
}

StatusOr<admission::ContainerRequest> BuildContainerRequest(
    const cri::CreateContainerRequest& request, const PodInfo& pod) {
  const cri::ContainerConfig& config = request.config();
  admission::ContainerRequest out;
  out.pod_uid = pod.uid;
  out.pod_name = pod.name;
  out.pod_namespace = pod.ns;
  if (out.pod_uid.empty()) {
    return InvalidArgumentError(fmt::format(
        "CreateContainer for sandbox \"{}\": no pod uid (sandbox_config.metadata.uid or label "
        "{} is empty)",
        request.pod_sandbox_id(), kPodUidLabel));
  }
  out.container_name = config.metadata().name();
  if (out.container_name.empty()) {
    if (auto it = config.labels().find(kContainerNameLabel); it != config.labels().end()) {
      out.container_name = it->second;
    }
  }
  if (out.container_name.empty()) {
    return InvalidArgumentError(
        fmt::format("CreateContainer for pod {}/{}: no container name (config.metadata.name or "
                    "label {} is empty)",
                    pod.ns, pod.name, kContainerNameLabel));
  }
  out.labels = pod.labels;
  out.annotations = pod.annotations;
  out.runtime_class = pod.runtime_handler;
  const std::string context =
      fmt::format("pod {}/{} container {}", pod.ns, pod.name, out.container_name);

  auto resources = CpuAndMemory(config.linux().resources(), "config.linux.resources");
  if (!resources.ok()) return resources.status().WithContext(context);
  out.resources = std::move(*resources);
  if (request.sandbox_config().linux().has_resources()) {
    auto pod_resources = CpuAndMemory(request.sandbox_config().linux().resources(),
                                      "sandbox_config.linux.resources");
    if (!pod_resources.ok()) return pod_resources.status().WithContext(context);
    out.pod_resources = std::move(*pod_resources);
  }
  out.native_qos_class =
      NativeQosClassFromCgroupParent(request.sandbox_config().linux().cgroup_parent());

  if (auto o = FindOverride(config, pod, out.container_name, kResourcesAnnotation)) {
    QRM_RETURN_IF_ERROR(ApplyResourcesJson(*o, out.resources).WithContext(context));
  }
  if (auto o = FindOverride(config, pod, out.container_name, kCpuRequestAnnotation)) {
    auto cpu = OverrideQuantity(*o);
    if (!cpu.ok()) return cpu.status().WithContext(context);
    out.resources["cpu"] = *cpu;
  }
  if (auto o = FindOverride(config, pod, out.container_name, kMemoryRequestAnnotation)) {
    auto memory = OverrideQuantity(*o);
    if (!memory.ok()) return memory.status().WithContext(context);
    out.resources["memory"] = *memory;
  }
  if (auto o = FindOverride(config, pod, out.container_name, kContainerTypeAnnotation)) {
    auto type = ParseContainerType(*o);
    if (!type.ok()) return type.status().WithContext(context);
    out.container_type = *type;
  }
  return out;
}

}  // namespace qrm::shim
