// The parts of a Pod (core/v1, as JSON) the webhook reads: its annotations and labels, and each
// container's resource limits and requests. Internal to cluster/webhook.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/quantity.h"
#include "common/status.h"

namespace qrm::webhook {

struct ContainerView {
  std::string name;
  bool init = false;  // spec.initContainers
  std::map<std::string, Quantity> limits;
  std::map<std::string, Quantity> requests;
};

struct PodView {
  std::string name;              // metadata.name, else metadata.generateName (for messages)
  bool has_annotations = false;  // metadata.annotations is a map (possibly empty)
  std::map<std::string, std::string> annotations;
  std::map<std::string, std::string> labels;
  std::vector<ContainerView> containers;  // init containers first, as the kubelet runs them
};

// kInvalidArgument naming the field under "object" and its value: a pod without metadata or
// spec.containers, a container without a name, a quantity that does not parse.
StatusOr<PodView> ReadPod(std::string_view json);

}  // namespace qrm::webhook
