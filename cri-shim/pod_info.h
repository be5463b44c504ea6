// PodInfo: what the shim knows about one pod, from its PodSandboxConfig.
#pragma once

#include <map>
#include <string>

#include "api/cri_runtime_v1.pb.h"

namespace qrm::shim {

struct PodInfo {
  std::string uid;
  std::string name;
  std::string ns;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string runtime_handler;  // RunPodSandboxRequest.runtime_handler (runtime class)
};

// Identity from config.metadata, falling back to the kubelet's io.kubernetes.pod.* labels
// for any field metadata leaves empty; labels and annotations copied as they are.
PodInfo PodInfoFromSandboxConfig(const ::runtime::v1::PodSandboxConfig& config);
// The same from a ListPodSandbox entry (which also carries the runtime handler).
PodInfo PodInfoFromListedSandbox(const ::runtime::v1::PodSandbox& sandbox);

}  // namespace qrm::shim
