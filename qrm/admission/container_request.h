// ContainerRequest: what the host needs to know to admit one container,
// independent of where it came from (the CRI shim builds it from a
// CreateContainer call; tests build it directly).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "api/resourceplugin_v1alpha1.pb.h"

namespace qrm::admission {

struct ContainerRequest {
  std::string pod_uid;
  std::string pod_name;
  std::string pod_namespace;
  std::string container_name;
  ::resourceplugin::v1alpha1::ContainerType container_type =
      ::resourceplugin::v1alpha1::ContainerType::MAIN;
  uint64_t container_index = 0;
  std::map<std::string, std::string> labels;       // pod labels
  std::map<std::string, std::string> annotations;  // pod annotations (QoS, roles, overrides)
  // Requested quantities by resource name: "cpu" in cores (1.5), "memory" in
  // bytes, extended resources in their own units.
  std::map<std::string, double> resources;
  std::string native_qos_class;  // Guaranteed, Burstable or BestEffort
  std::string runtime_class;
  // The whole pod's requests, used under the pod scope for pod-level hints.
  // Empty means "only this container is known": its own requests are used.
  std::map<std::string, double> pod_resources;
};

}  // namespace qrm::admission
