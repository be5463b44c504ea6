// What the pod webhook treats as a plugin resource and how it derives a pod's QoS level
// (docs/webhook.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace qrm::webhook {

struct WebhookConfig {
  // Extended resources served by qrm plugins: these names, and every name starting with one of
  // the prefixes. Device-plugin names (nvidia.com/gpu, ...) belong to the kubelet unless listed.
  std::vector<std::string> plugin_resources;
  std::vector<std::string> plugin_resource_prefixes = {"qrm.io/"};
  // Resources only reclaimed_cores pods may use: Katalyst's reclaimed and Koordinator's batch
  // resources. A pod asking any of them is reclaimed_cores.
  std::vector<std::string> reclaimed_resources = {
      "resource.katalyst.kubewharf.io/reclaimed_millicpu",
      "resource.katalyst.kubewharf.io/reclaimed_memory",
      "kubernetes.io/batch-cpu",
      "kubernetes.io/batch-memory",
  };
  // Opt-in: a Guaranteed pod whose CPU limits are all whole cores is dedicated_cores unless it
  // says otherwise. Off by default: Katalyst treats a pod without qos_level as shared_cores.
  bool guaranteed_whole_cores_dedicated = false;
};

// Names the Kubernetes API owns (cpu, memory, ephemeral-storage, storage, pods, hugepages-*,
// requests.*, and names without a domain): never a plugin resource.
bool IsNativeResource(std::string_view name);

// Whether `name` is a plugin resource under `config` (native and reclaimed names never are).
bool IsPluginResource(const WebhookConfig& config, std::string_view name);

// kInvalidArgument naming the key and value: an empty name or prefix, a native resource
// listed as a plugin resource, a name both a plugin and a reclaimed resource.
Status ValidateWebhookConfig(const WebhookConfig& config);

}  // namespace qrm::webhook
