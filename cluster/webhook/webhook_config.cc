#include "cluster/webhook/webhook_config.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::webhook {
namespace {

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool HasPrefix(std::string_view name, std::string_view prefix) {
  return name.substr(0, prefix.size()) == prefix;
}

}  // namespace

bool IsNativeResource(std::string_view name) {
  static constexpr std::string_view kNative[] = {"cpu", "memory", "ephemeral-storage", "storage",
                                                 "pods"};
  if (std::find(std::begin(kNative), std::end(kNative), name) != std::end(kNative)) return true;
  // The API server's rule for names without a domain. Names under kubernetes.io/ are not
  // refused here: Koordinator's batch resources live there and are extended in practice.
  if (HasPrefix(name, "hugepages-") || HasPrefix(name, "requests.")) return true;
  return name.find('/') == std::string_view::npos;
}

bool IsPluginResource(const WebhookConfig& config, std::string_view name) {
  if (IsNativeResource(name) || Contains(config.reclaimed_resources, name)) return false;
  if (Contains(config.plugin_resources, name)) return true;
  return std::any_of(config.plugin_resource_prefixes.begin(), config.plugin_resource_prefixes.end(),
                     [&](const std::string& prefix) { return HasPrefix(name, prefix); });
}

Status ValidateWebhookConfig(const WebhookConfig& config) {
  for (const std::string& name : config.plugin_resources) {
    if (name.empty()) return InvalidArgumentError("plugin_resources: empty resource name");
    if (IsNativeResource(name)) {
      return InvalidArgumentError(fmt::format(
          "plugin_resources: {} is a native Kubernetes resource, not a plugin's", Quote(name)));
    }
    if (Contains(config.reclaimed_resources, name)) {
      return InvalidArgumentError(fmt::format(
          "plugin_resources: {} is also in reclaimed_resources; a name is one or the other",
          Quote(name)));
    }
  }
  for (const std::string& prefix : config.plugin_resource_prefixes) {
    if (prefix.empty()) {
      return InvalidArgumentError(
          "plugin_resource_prefixes: an empty prefix would take every resource");
    }
  }
  for (const std::string& name : config.reclaimed_resources) {
    if (name.empty()) return InvalidArgumentError("reclaimed_resources: empty resource name");
  }
  return Status::Ok();
}

}  // namespace qrm::webhook
