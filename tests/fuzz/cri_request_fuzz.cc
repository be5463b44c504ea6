// Fuzzes the CRI shim's request extraction (cri-shim/container_request_builder.h): the bytes
// of a kubelet CreateContainer call -> the host's ContainerRequest.
//
// The input is parsed as a runtime.v1.CreateContainerRequest (its sandbox_config gives the
// PodInfo, as in the shim), and the same bytes as a RunPodSandboxRequest, whose config stands
// for what RunPodSandbox recorded when CreateContainer carries no sandbox_config.
// Properties: errors are kInvalidArgument; an accepted request has a pod uid and a container
// name, and every quantity is finite and >= 0 (a negative or NaN request must never reach the
// plugins); the same holds for ParseAmount on the raw bytes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "api/cri_runtime_v1.pb.h"
#include "common/quantity.h"
#include "cri-shim/container_request_builder.h"
#include "cri-shim/pod_info.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "cri_request_fuzz: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

void CheckQuantities(const std::map<std::string, double>& quantities) {
  for (const auto& [name, value] : quantities) {
    Check(!name.empty(), "a resource without a name");
    Check(std::isfinite(value) && value >= 0, "a negative or non-finite quantity was accepted");
  }
}

void Extract(const runtime::v1::CreateContainerRequest& request, const qrm::shim::PodInfo& pod) {
  qrm::StatusOr<qrm::admission::ContainerRequest> out =
      qrm::shim::BuildContainerRequest(request, pod);
  if (!out.ok()) {
    Check(out.status().code() == qrm::StatusCode::kInvalidArgument, "error code");
    return;
  }
  Check(!out->pod_uid.empty() && out->pod_uid == pod.uid, "pod uid not the sandbox's");
  Check(!out->container_name.empty(), "no container name");
  Check(out->resources.contains("cpu") && out->resources.contains("memory"),
        "cpu or memory missing from the request");
  CheckQuantities(out->resources);
  CheckQuantities(out->pod_resources);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > static_cast<size_t>(INT32_MAX)) return 0;
  runtime::v1::CreateContainerRequest create;
  if (create.ParseFromArray(data, static_cast<int>(size))) {
    Extract(create, qrm::shim::PodInfoFromSandboxConfig(create.sandbox_config()));
    // Whatever the parent, the QoS class is one of the kubelet's or empty.
    const std::string qos =
        qrm::shim::NativeQosClassFromCgroupParent(create.sandbox_config().linux().cgroup_parent());
    Check(qos.empty() || qos == "Guaranteed" || qos == "Burstable" || qos == "BestEffort",
          "unknown QoS class");
  }
  runtime::v1::RunPodSandboxRequest sandbox;
  if (sandbox.ParseFromArray(data, static_cast<int>(size))) {
    qrm::shim::PodInfo pod = qrm::shim::PodInfoFromSandboxConfig(sandbox.config());
    pod.runtime_handler = sandbox.runtime_handler();
    Extract(create, pod);  // `create` may be empty: the builder must refuse it cleanly
  }
  // Every quantity the shim reads goes through ParseAmount: the raw bytes as one value.
  qrm::StatusOr<double> q =
      qrm::ParseAmount("fuzz", std::string_view(reinterpret_cast<const char*>(data), size));
  if (q.ok()) {
    Check(std::isfinite(*q) && *q >= 0, "ParseAmount accepted a negative or non-finite value");
  } else {
    Check(q.status().code() == qrm::StatusCode::kInvalidArgument, "ParseAmount error code");
  }
  return 0;
}
