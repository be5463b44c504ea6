// Fuzzes the CRI shim's decode-edit-encode of CreateContainer (cri-shim/byte_buffer.h,
// qrm/apply/cri_request_edit.h), the path every admitted container takes: the kubelet's bytes are
// decoded, qrm's cpuset, envs and annotations are written in place, the request re-encoded.
//
// The input is the request's bytes, as the shim receives them. Properties:
//  - an input that decodes re-encodes, after the edit, to bytes that decode again;
//  - every unknown field the decode kept (fields of a newer CRI than ours, in any message at
//    any depth) is in the re-encoded request, at the same place with the same bytes (protobuf
//    keeps no unknown fields inside map entries, which hold only key and value);
//  - qrm's values are in place: cpuset_cpus/cpuset_mems, its env (once, the kubelet's envs
//    first in their order with their keys) and its annotation;
//  - an input that does not decode has a non-empty DecodeError (what the refusal names), and
//    LenientParse of it never fails on readable wire format.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/unknown_field_set.h>

#include "api/cri_runtime_v1.pb.h"
#include "cri-shim/byte_buffer.h"
#include "cri-shim/lenient_decode.h"
#include "qrm/apply/cri_request_edit.h"

namespace {

namespace pb = google::protobuf;
namespace cri = ::runtime::v1;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "cri_edit_fuzz: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

const qrm::apply::ContainerUpdate& Update() {
  static const auto* update = [] {
    resourceplugin::v1alpha1::ResourceAllocationInfo cpu, memory;
    cpu.set_oci_property_name("CpusetCpus");
    cpu.set_allocation_result("2-3");
    (*cpu.mutable_envs())["QRM_CPUS"] = "2-3";
    (*cpu.mutable_annotations())["qrm.io/cpus"] = "2-3";
    memory.set_oci_property_name("CpusetMems");
    memory.set_allocation_result("1");
    auto built = qrm::apply::BuildContainerUpdate({{"cpu", cpu}, {"memory", memory}});
    if (!built.ok()) Fail("the fixed update does not build");
    return new qrm::apply::ContainerUpdate(*built);
  }();
  return *update;
}

// Path of every message instance -> its unknown fields, serialized.
void CollectUnknown(const pb::Message& m, const std::string& path,
                    std::map<std::string, std::string>* out) {
  const pb::Reflection* r = m.GetReflection();
  const pb::UnknownFieldSet& unknown = r->GetUnknownFields(m);
  if (!unknown.empty()) {
    std::string bytes;
    unknown.SerializeToString(&bytes);
    (*out)[path] = bytes;
  }
  const pb::Descriptor* d = m.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || f->is_map()) continue;
    if (f->is_repeated()) {
      for (int k = 0; k < r->FieldSize(m, f); ++k) {
        CollectUnknown(r->GetRepeatedMessage(m, f, k),
                       path + "." + f->name() + "[" + std::to_string(k) + "]", out);
      }
    } else if (r->HasField(m, f)) {
      CollectUnknown(r->GetMessage(m, f), path + "." + f->name(), out);
    }
  }
}

void CheckEdit(const cri::CreateContainerRequest& original, const grpc::ByteBuffer& encoded) {
  cri::CreateContainerRequest again;
  Check(qrm::shim::ParseByteBuffer(encoded, &again), "the edited request does not decode");
  std::map<std::string, std::string> before, after;
  CollectUnknown(original, "", &before);
  CollectUnknown(again, "", &after);
  Check(before == after, "unknown fields changed across decode-edit-encode");

  const auto& resources = again.config().linux().resources();
  Check(resources.cpuset_cpus() == "2-3" && resources.cpuset_mems() == "1", "cpuset not set");
  const auto annotation = again.config().annotations().find("qrm.io/cpus");
  Check(annotation != again.config().annotations().end() && annotation->second == "2-3",
        "annotation not set");
  int ours = 0;
  for (const auto& env : again.config().envs()) ours += env.key() == "QRM_CPUS";
  const int kubelet_had = [&] {
    int n = 0;
    for (const auto& env : original.config().envs()) n += env.key() == "QRM_CPUS";
    return n;
  }();
  Check(ours == (kubelet_had == 0 ? 1 : kubelet_had), "qrm's env missing or duplicated");
  const int kept = original.config().envs_size();
  Check(again.config().envs_size() == kept + (kubelet_had == 0 ? 1 : 0), "envs count");
  for (int i = 0; i < kept; ++i) {
    const auto& was = original.config().envs(i);
    const auto& is = again.config().envs(i);
    Check(was.key() == is.key(), "the kubelet's envs reordered");
    Check(was.key() == "QRM_CPUS" || was.value() == is.value(), "a kubelet env value changed");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  grpc::Slice slice(bytes);
  const grpc::ByteBuffer buffer(&slice, 1);
  cri::CreateContainerRequest request;
  if (!qrm::shim::ParseByteBuffer(buffer, &request)) {
    Check(!qrm::shim::DecodeError(*request.GetDescriptor(), buffer).empty(), "empty DecodeError");
    pb::UnknownFieldSet wire;
    cri::CreateContainerRequest partial;
    const bool readable = wire.ParseFromString(bytes);
    Check(qrm::shim::LenientParse(buffer, &partial) == readable, "LenientParse on readable wire");
    return 0;
  }
  const cri::CreateContainerRequest original = request;
  qrm::apply::ApplyToCreateContainer(Update(), &request);
  CheckEdit(original, qrm::shim::SerializeToByteBuffer(request));
  return 0;
}
