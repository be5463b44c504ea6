// MethodTable: what the shim does with each gRPC method it may receive.
//
// Built once from the descriptors of our CRI .proto (runtime.v1 RuntimeService and
// ImageService) and read without locks afterwards. A method the table does not know (a newer
// CRI, a typo, another service) is forwarded as a bidirectional byte stream, which works for
// any arity; known unary methods take the faster unary path.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace qrm::shim {

// Methods the shim decodes and acts on; everything else is kPassThrough.
enum class Intercept {
  kPassThrough,
  kRunPodSandbox,
  kStopPodSandbox,
  kRemovePodSandbox,
  kCreateContainer,
  kStartContainer,
  kRemoveContainer,
  kUpdateContainerResources,
};

struct MethodInfo {
  std::string full_name;  // "/runtime.v1.RuntimeService/Version"
  bool unary = false;
  bool image_service = false;  // goes to the image endpoint
  Intercept intercept = Intercept::kPassThrough;
};

class MethodTable {
 public:
  MethodTable();

  // Null for a method our .proto does not declare.
  const MethodInfo* Find(std::string_view full_name) const;
  // Whether an unknown method belongs to runtime.v1.ImageService (by its service prefix).
  static bool IsImageService(std::string_view full_name);
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, MethodInfo, std::less<>> methods_;  // by full name
};

}  // namespace qrm::shim
