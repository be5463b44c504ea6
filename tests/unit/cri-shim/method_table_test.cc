// MethodTable: which path each CRI method takes through the proxy.
#include "cri-shim/method_table.h"

#include <catch2/catch.hpp>

namespace qrm::shim {
namespace {

TEST_CASE("Every runtime.v1 method is known, with its arity and destination",
          "[cri_shim][methods]") {
  MethodTable table;
  const MethodInfo* version = table.Find("/runtime.v1.RuntimeService/Version");
  REQUIRE(version != nullptr);
  CHECK(version->unary);
  CHECK_FALSE(version->image_service);
  CHECK(version->intercept == Intercept::kPassThrough);

  const MethodInfo* events = table.Find("/runtime.v1.RuntimeService/GetContainerEvents");
  REQUIRE(events != nullptr);
  CHECK_FALSE(events->unary);  // server streaming: takes the stream path

  const MethodInfo* pull = table.Find("/runtime.v1.ImageService/PullImage");
  REQUIRE(pull != nullptr);
  CHECK(pull->unary);
  CHECK(pull->image_service);

  // The pod checkpoint/restore calls of the July 2026 CRI: unary, passed through.
  for (const char* name : {"CheckpointPod", "RestorePod"}) {
    const MethodInfo* m = table.Find(std::string("/runtime.v1.RuntimeService/") + name);
    REQUIRE(m != nullptr);
    CHECK(m->unary);
    CHECK_FALSE(m->image_service);
    CHECK(m->intercept == Intercept::kPassThrough);
  }

  CHECK(table.Find("/runtime.v1.RuntimeService/MadeUp") == nullptr);
  CHECK(table.Find("RuntimeService/Version") == nullptr);
  CHECK(MethodTable::IsImageService("/runtime.v1.ImageService/NewImageCall"));
  CHECK_FALSE(MethodTable::IsImageService("/runtime.v1.RuntimeService/NewCall"));
  // Both services, every method: 37+ runtime and 6+ image methods in our .proto.
  CHECK(table.Names().size() > 40);
}

TEST_CASE("Exactly the documented methods are intercepted", "[cri_shim][methods]") {
  MethodTable table;
  std::map<std::string, Intercept> intercepted;
  for (const auto& name : table.Names()) {
    const MethodInfo* m = table.Find(name);
    if (m->intercept != Intercept::kPassThrough) intercepted[name] = m->intercept;
    if (m->intercept != Intercept::kPassThrough) CHECK(m->unary);
  }
  const std::string p = "/runtime.v1.RuntimeService/";
  CHECK(intercepted == std::map<std::string, Intercept>{
                           {p + "RunPodSandbox", Intercept::kRunPodSandbox},
                           {p + "StopPodSandbox", Intercept::kStopPodSandbox},
                           {p + "RemovePodSandbox", Intercept::kRemovePodSandbox},
                           {p + "CreateContainer", Intercept::kCreateContainer},
                           {p + "StartContainer", Intercept::kStartContainer},
                           {p + "RemoveContainer", Intercept::kRemoveContainer},
                           {p + "UpdateContainerResources", Intercept::kUpdateContainerResources},
                       });
}

}  // namespace
}  // namespace qrm::shim
