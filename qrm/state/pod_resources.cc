#include "qrm/state/pod_resources.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

namespace qrm::state {

namespace pb = ::resourceplugin::v1alpha1;

std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!message.SerializeToCodedStream(&coded)) return {};
  }  // the coded stream flushes into `out` when it is destroyed
  return out;
}

void CacheResourceBytes(ContainerAllocation& container) {
  container.resource_bytes.clear();
  for (const auto& [resource, info] : container.resources) {
    container.resource_bytes.emplace(resource, DeterministicBytes(info));
  }
}

bool SameAsStored(const ContainerAllocation& container, const std::string& resource,
                  const pb::ResourceAllocationInfo& info) {
  auto stored = container.resources.find(resource);
  if (stored == container.resources.end()) return false;
  auto cached = container.resource_bytes.find(resource);
  if (cached != container.resource_bytes.end()) return cached->second == DeterministicBytes(info);
  return DeterministicBytes(stored->second) == DeterministicBytes(info);
}

bool operator==(const ContainerAllocation& a, const ContainerAllocation& b) {
  if (DeterministicBytes(a.request) != DeterministicBytes(b.request)) return false;
  if (a.resources.size() != b.resources.size()) return false;
  for (auto ia = a.resources.begin(), ib = b.resources.begin(); ia != a.resources.end();
       ++ia, ++ib) {
    if (ia->first != ib->first) return false;
    if (DeterministicBytes(ia->second) != DeterministicBytes(ib->second)) return false;
  }
  return true;
}

bool operator==(const PodAllocation& a, const PodAllocation& b) {
  return a.uid == b.uid && a.name == b.name && a.ns == b.ns && a.pod_affinity == b.pod_affinity &&
         a.containers == b.containers;
}

bool SamePods(const PodResources& a, const PodResources& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return false;
    if (ia->second == nullptr || ib->second == nullptr) {
      if (ia->second != ib->second) return false;
      continue;
    }
    if (!(*ia->second == *ib->second)) return false;
  }
  return true;
}

}  // namespace qrm::state
