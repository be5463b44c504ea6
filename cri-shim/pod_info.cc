#include "cri-shim/pod_info.h"

#include "common/protocol_keys.h"

namespace qrm::shim {
namespace {

std::string FirstNonEmpty(const std::string& value,
                          const google::protobuf::Map<std::string, std::string>& labels,
                          const char* label) {
  if (!value.empty()) return value;
  auto it = labels.find(label);
  return it == labels.end() ? std::string() : it->second;
}

}  // namespace

PodInfo PodInfoFromSandboxConfig(const ::runtime::v1::PodSandboxConfig& config) {
  PodInfo pod;
  pod.uid = FirstNonEmpty(config.metadata().uid(), config.labels(), kPodUidLabel);
  pod.name = FirstNonEmpty(config.metadata().name(), config.labels(), kPodNameLabel);
  pod.ns = FirstNonEmpty(config.metadata().namespace_(), config.labels(), kPodNamespaceLabel);
  pod.labels.insert(config.labels().begin(), config.labels().end());
  pod.annotations.insert(config.annotations().begin(), config.annotations().end());
  return pod;
}

PodInfo PodInfoFromListedSandbox(const ::runtime::v1::PodSandbox& sandbox) {
  PodInfo pod;
  pod.uid = FirstNonEmpty(sandbox.metadata().uid(), sandbox.labels(), kPodUidLabel);
  pod.name = FirstNonEmpty(sandbox.metadata().name(), sandbox.labels(), kPodNameLabel);
  pod.ns = FirstNonEmpty(sandbox.metadata().namespace_(), sandbox.labels(), kPodNamespaceLabel);
  pod.labels.insert(sandbox.labels().begin(), sandbox.labels().end());
  pod.annotations.insert(sandbox.annotations().begin(), sandbox.annotations().end());
  pod.runtime_handler = sandbox.runtime_handler();
  return pod;
}

}  // namespace qrm::shim
