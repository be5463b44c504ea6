#include "qrm/state/pod_resources.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

namespace qrm::host {

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

}  // namespace qrm::host
