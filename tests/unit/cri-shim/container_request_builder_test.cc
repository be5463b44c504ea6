// BuildContainerRequest: what the host is asked to admit for a kubelet CreateContainer.
#include "cri-shim/container_request_builder.h"

#include <catch2/catch.hpp>

namespace qrm::shim {
namespace {

namespace cri = ::runtime::v1;
namespace pb = ::resourceplugin::v1alpha1;
using Catch::Matchers::Contains;

// A CreateContainer as the kubelet sends it for container "app" of pod default/web.
cri::CreateContainerRequest KubeletRequest() {
  cri::CreateContainerRequest r;
  r.set_pod_sandbox_id("sandbox-1");
  auto* sandbox = r.mutable_sandbox_config();
  sandbox->mutable_metadata()->set_name("web");
  sandbox->mutable_metadata()->set_uid("6f695526-b07c-4baa-90e3-af1dfed2faf8");
  sandbox->mutable_metadata()->set_namespace_("default");
  (*sandbox->mutable_labels())["app"] = "web";
  (*sandbox->mutable_labels())["io.kubernetes.pod.uid"] = "6f695526-b07c-4baa-90e3-af1dfed2faf8";
  (*sandbox->mutable_annotations())["katalyst.kubewharf.io/qos_level"] = "dedicated_cores";
  sandbox->mutable_linux()->set_cgroup_parent(
      "/kubepods/burstable/pod6f695526-b07c-4baa-90e3-af1dfed2faf8");
  auto* config = r.mutable_config();
  config->mutable_metadata()->set_name("app");
  (*config->mutable_labels())["io.kubernetes.container.name"] = "app";
  auto* res = config->mutable_linux()->mutable_resources();
  res->set_cpu_shares(1536);
  res->set_cpu_period(100000);
  res->set_cpu_quota(200000);
  res->set_memory_limit_in_bytes(512ll << 20);
  return r;
}

StatusOr<admission::ContainerRequest> Build(const cri::CreateContainerRequest& r) {
  return BuildContainerRequest(r, PodInfoFromSandboxConfig(r.sandbox_config()));
}

// The kubelet's milli-CPU -> shares conversion (pkg/kubelet/cm MilliCPUToShares).
int64_t KubeletShares(int64_t milli) {
  const int64_t shares = milli * 1024 / 1000;
  return shares < 2 ? 2 : shares;
}

TEST_CASE("A kubelet CreateContainer becomes the host's request", "[cri_shim][request]") {
  auto r = Build(KubeletRequest());
  REQUIRE(r.ok());
  CHECK(r->pod_uid == "6f695526-b07c-4baa-90e3-af1dfed2faf8");
  CHECK(r->pod_name == "web");
  CHECK(r->pod_namespace == "default");
  CHECK(r->container_name == "app");
  CHECK(r->container_type == pb::MAIN);
  CHECK(r->resources ==
        std::map<std::string, double>{{"cpu", 1.5}, {"memory", 512.0 * 1024 * 1024}});
  CHECK(r->labels.at("app") == "web");
  CHECK(r->annotations.at("katalyst.kubewharf.io/qos_level") == "dedicated_cores");
  CHECK(r->native_qos_class == "Burstable");
  CHECK(r->pod_resources.empty());
}

TEST_CASE("cpu_shares give back exactly the kubelet's milli-CPU request", "[cri_shim][request]") {
  // Every request from 3m (the first above the kubelet's minimum shares) to 64 cores.
  for (int64_t milli = 3; milli <= 64000; ++milli) {
    const int64_t shares = KubeletShares(milli);
    if (shares <= 2) continue;
    auto cores = CpuRequestFromShares(shares, "cpu_shares");
    REQUIRE(cores.ok());
    if (std::llround(*cores * 1000) != milli) {
      FAIL("milli " << milli << " -> shares " << shares << " -> " << *cores << " cores");
    }
  }
  // The kubelet's minimum (and no shares at all) mean no request.
  CHECK(*CpuRequestFromShares(2, "cpu_shares") == 0.0);
  CHECK(*CpuRequestFromShares(0, "cpu_shares") == 0.0);
}

TEST_CASE("The CPU limit comes from quota/period and stands in only without shares",
          "[cri_shim][request]") {
  CHECK(**CpuLimitFromQuota(250000, 100000, "q") == 2.5);
  CHECK_FALSE(CpuLimitFromQuota(-1, 100000, "q")->has_value());  // unlimited
  CHECK_FALSE(CpuLimitFromQuota(0, 100000, "q")->has_value());   // unset
  CHECK_FALSE(CpuLimitFromQuota(50000, 0, "q")->has_value());    // no period

  auto r = KubeletRequest();
  r.mutable_config()->mutable_linux()->mutable_resources()->set_cpu_shares(0);
  auto built = Build(r);
  REQUIRE(built.ok());
  CHECK(built->resources.at("cpu") == 2.0);  // 200000 / 100000
}

TEST_CASE("Containers without requests still ask for cpu and memory, at 0", "[cri_shim][request]") {
  auto r = KubeletRequest();
  r.mutable_config()->mutable_linux()->clear_resources();
  r.mutable_sandbox_config()->mutable_linux()->set_cgroup_parent("/kubepods/besteffort/podx");
  auto built = Build(r);
  REQUIRE(built.ok());
  CHECK(built->resources == std::map<std::string, double>{{"cpu", 0.0}, {"memory", 0.0}});
  CHECK(built->native_qos_class == "BestEffort");
}

TEST_CASE("Native QoS class from the kubelet's cgroup parent", "[cri_shim][request]") {
  CHECK(NativeQosClassFromCgroupParent("/kubepods/podabc") == "Guaranteed");
  CHECK(NativeQosClassFromCgroupParent("/kubepods/burstable/podabc") == "Burstable");
  CHECK(NativeQosClassFromCgroupParent("kubepods-besteffort-podabc.slice") == "BestEffort");
  CHECK(NativeQosClassFromCgroupParent("/qrm-e2e-x/poduid").empty());
  CHECK(NativeQosClassFromCgroupParent("").empty());
}

TEST_CASE("Pod identity falls back to the kubelet's labels", "[cri_shim][request]") {
  auto r = KubeletRequest();
  auto* sandbox = r.mutable_sandbox_config();
  sandbox->clear_metadata();
  (*sandbox->mutable_labels())["io.kubernetes.pod.name"] = "web-from-label";
  (*sandbox->mutable_labels())["io.kubernetes.pod.namespace"] = "prod";
  r.mutable_config()->clear_metadata();
  auto built = Build(r);
  REQUIRE(built.ok());
  CHECK(built->pod_uid == "6f695526-b07c-4baa-90e3-af1dfed2faf8");
  CHECK(built->pod_name == "web-from-label");
  CHECK(built->pod_namespace == "prod");
  CHECK(built->container_name == "app");  // io.kubernetes.container.name
}

TEST_CASE("What RunPodSandbox recorded completes a request without sandbox_config",
          "[cri_shim][request]") {
  auto r = KubeletRequest();
  r.clear_sandbox_config();
  PodInfo recorded;
  recorded.uid = "uid-2";
  recorded.name = "db";
  recorded.ns = "data";
  recorded.annotations["qrm.io/cpu-request"] = "3";
  recorded.runtime_handler = "kata";
  auto built = BuildContainerRequest(r, recorded);
  REQUIRE(built.ok());
  CHECK(built->pod_uid == "uid-2");
  CHECK(built->runtime_class == "kata");
  CHECK(built->resources.at("cpu") == 3.0);
}

TEST_CASE("No pod uid or no container name is refused naming the field", "[cri_shim][request]") {
  auto r = KubeletRequest();
  r.mutable_sandbox_config()->mutable_metadata()->clear_uid();
  r.mutable_sandbox_config()->mutable_labels()->erase("io.kubernetes.pod.uid");
  auto no_uid = Build(r);
  REQUIRE_FALSE(no_uid.ok());
  CHECK(no_uid.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(no_uid.status().message(),
             Contains("sandbox_config.metadata.uid") && Contains("sandbox-1"));

  r = KubeletRequest();
  r.mutable_config()->clear_metadata();
  r.mutable_config()->mutable_labels()->clear();
  auto no_name = Build(r);
  REQUIRE_FALSE(no_name.ok());
  CHECK_THAT(no_name.status().message(), Contains("config.metadata.name"));
}

TEST_CASE("Override annotations: container first, then per-container pod key, then pod key",
          "[cri_shim][request]") {
  auto r = KubeletRequest();
  auto& pod_annotations = *r.mutable_sandbox_config()->mutable_annotations();
  pod_annotations["qrm.io/cpu-request"] = "1";
  auto built = Build(r);
  REQUIRE(built.ok());
  CHECK(built->resources.at("cpu") == 1.0);

  pod_annotations["qrm.io/cpu-request.app"] = "2500m";
  pod_annotations["qrm.io/cpu-request.sidecar"] = "7";  // another container's
  built = Build(r);
  REQUIRE(built.ok());
  CHECK(built->resources.at("cpu") == 2.5);

  (*r.mutable_config()->mutable_annotations())["qrm.io/cpu-request"] = "4";
  built = Build(r);
  REQUIRE(built.ok());
  CHECK(built->resources.at("cpu") == 4.0);
}

TEST_CASE("Memory, arbitrary resources and container type overrides", "[cri_shim][request]") {
  auto r = KubeletRequest();
  auto& pod_annotations = *r.mutable_sandbox_config()->mutable_annotations();
  pod_annotations["qrm.io/memory-request"] = "1Gi";
  pod_annotations["qrm.io/resources"] =
      R"({"example.com/accel": 2, "nic": "1", "cpu": 9, "memory": "1"})";
  pod_annotations["qrm.io/container-type.app"] = "INIT";
  auto built = Build(r);
  REQUIRE(built.ok());
  CHECK(built->resources.at("example.com/accel") == 2.0);
  CHECK(built->resources.at("nic") == 1.0);
  CHECK(built->resources.at("cpu") == 9.0);                      // qrm.io/resources over cpu_shares
  CHECK(built->resources.at("memory") == 1024.0 * 1024 * 1024);  // memory-request wins
  CHECK(built->container_type == pb::INIT);
}

TEST_CASE("Pod-level requests come from sandbox_config.linux.resources", "[cri_shim][request]") {
  auto r = KubeletRequest();
  auto* pod = r.mutable_sandbox_config()->mutable_linux()->mutable_resources();
  pod->set_cpu_shares(4096);
  pod->set_memory_limit_in_bytes(2ll << 30);
  auto built = Build(r);
  REQUIRE(built.ok());
  CHECK(built->pod_resources ==
        std::map<std::string, double>{{"cpu", 4.0}, {"memory", 2.0 * 1024 * 1024 * 1024}});
}

TEST_CASE("Bad values are refused naming the field or annotation and the value",
          "[cri_shim][request]") {
  struct Case {
    std::function<void(cri::CreateContainerRequest&)> edit;
    std::vector<std::string> expected;
  };
  auto pod_annotation = [](const char* key, const char* value) {
    return [=](cri::CreateContainerRequest& r) {
      (*r.mutable_sandbox_config()->mutable_annotations())[key] = value;
    };
  };
  auto resources = [](cri::CreateContainerRequest& r) {
    return r.mutable_config()->mutable_linux()->mutable_resources();
  };
  const std::vector<Case> cases = {
      {[&](auto& r) { resources(r)->set_cpu_shares(-5); },
       {"config.linux.resources.cpu_shares=-5"}},
      {[&](auto& r) { resources(r)->set_cpu_quota(-2); }, {"config.linux.resources.cpu_quota=-2"}},
      {[&](auto& r) { resources(r)->set_cpu_period(-1); }, {"period=-1"}},
      {[&](auto& r) { resources(r)->set_memory_limit_in_bytes(-3); },
       {"config.linux.resources.memory_limit_in_bytes=-3"}},
      {[&](auto& r) {
         r.mutable_sandbox_config()->mutable_linux()->mutable_resources()->set_cpu_shares(-9);
       },
       {"sandbox_config.linux.resources.cpu_shares=-9"}},
      {pod_annotation("qrm.io/cpu-request", "lots"),
       {"pod annotation qrm.io/cpu-request=\"lots\""}},
      {pod_annotation("qrm.io/memory-request.app", "-1Gi"),
       {"pod annotation qrm.io/memory-request.app=\"-1Gi\"", "negative"}},
      {pod_annotation("qrm.io/resources", "[1,2]"), {"qrm.io/resources=\"[1,2]\"", "JSON object"}},
      {pod_annotation("qrm.io/resources", R"({"nic": -1})"), {"entry \"nic\"", "-1"}},
      {pod_annotation("qrm.io/resources", R"({"nic": "1Q"})"), {"entry \"nic\"", "\"1Q\""}},
      {pod_annotation("qrm.io/resources", R"({"nic": true})"), {"entry \"nic\"", "number"}},
      // The whole JSON string counts, not just what precedes an escaped NUL.
      {pod_annotation("qrm.io/resources", R"({"nic": "1\u0000x"})"), {"entry \"nic\""}},
      {pod_annotation("qrm.io/container-type", "WORKER"),
       {"qrm.io/container-type=\"WORKER\"", "INIT, MAIN"}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    auto r = KubeletRequest();
    cases[i].edit(r);
    auto built = Build(r);
    INFO("case " << i << ": " << (built.ok() ? "ok" : built.status().message()));
    REQUIRE_FALSE(built.ok());
    CHECK(built.status().code() == StatusCode::kInvalidArgument);
    for (const auto& text : cases[i].expected) CHECK_THAT(built.status().message(), Contains(text));
    CHECK_THAT(built.status().message(), Contains("default/web"));
  }
}

}  // namespace
}  // namespace qrm::shim
