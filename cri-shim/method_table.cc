#include "cri-shim/method_table.h"

#include <google/protobuf/descriptor.h>

#include "api/cri_runtime_v1.pb.h"

namespace qrm::shim {
namespace {

constexpr std::string_view kImageServicePrefix = "/runtime.v1.ImageService/";

const std::map<std::string_view, Intercept>& Intercepted() {
  static const auto* table = new std::map<std::string_view, Intercept>{
      {"/runtime.v1.RuntimeService/RunPodSandbox", Intercept::kRunPodSandbox},
      {"/runtime.v1.RuntimeService/StopPodSandbox", Intercept::kStopPodSandbox},
      {"/runtime.v1.RuntimeService/RemovePodSandbox", Intercept::kRemovePodSandbox},
      {"/runtime.v1.RuntimeService/CreateContainer", Intercept::kCreateContainer},
      {"/runtime.v1.RuntimeService/StartContainer", Intercept::kStartContainer},
      {"/runtime.v1.RuntimeService/RemoveContainer", Intercept::kRemoveContainer},
      {"/runtime.v1.RuntimeService/UpdateContainerResources", Intercept::kUpdateContainerResources},
  };
  return *table;
}

}  // namespace

MethodTable::MethodTable() {
  const google::protobuf::FileDescriptor* file =
      ::runtime::v1::VersionRequest::descriptor()->file();
  for (int s = 0; s < file->service_count(); ++s) {
    const google::protobuf::ServiceDescriptor* service = file->service(s);
    for (int m = 0; m < service->method_count(); ++m) {
      const google::protobuf::MethodDescriptor* method = service->method(m);
      MethodInfo info;
      info.full_name = "/" + service->full_name() + "/" + method->name();
      info.unary = !method->client_streaming() && !method->server_streaming();
      info.image_service = IsImageService(info.full_name);
      if (auto it = Intercepted().find(info.full_name); it != Intercepted().end()) {
        info.intercept = it->second;
      }
      methods_.emplace(info.full_name, std::move(info));
    }
  }
}

const MethodInfo* MethodTable::Find(std::string_view full_name) const {
  auto it = methods_.find(full_name);
  return it == methods_.end() ? nullptr : &it->second;
}

bool MethodTable::IsImageService(std::string_view full_name) {
  return full_name.rfind(kImageServicePrefix, 0) == 0;
}

std::vector<std::string> MethodTable::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, info] : methods_) names.push_back(name);
  return names;
}

}  // namespace qrm::shim
