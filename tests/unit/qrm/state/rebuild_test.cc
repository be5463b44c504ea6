// The rebuild diff (qrm/reconcile/rebuild.h): which containers the plugins hold that the
// host checkpoint lost, and which stored allocations a plugin lost.
#include "qrm/reconcile/rebuild.h"

#include <catch2/catch.hpp>

namespace qrm::state {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

pb::ResourceAllocationInfo Info(const std::string& result, double quantity = 1) {
  pb::ResourceAllocationInfo info;
  info.set_oci_property_name("CpusetCpus");
  info.set_allocation_result(result);
  info.set_allocated_quantity(quantity);
  return info;
}

// A plugin report: pod -> container -> allocation of `resource`.
pb::GetResourcesAllocationResponse Report(
    const std::string& resource,
    const std::map<std::string, std::map<std::string, std::string>>& pods) {
  pb::GetResourcesAllocationResponse out;
  for (const auto& [uid, containers] : pods) {
    auto& pod = (*out.mutable_pod_resources())[uid];
    for (const auto& [name, result] : containers) {
      (*(*pod.mutable_container_resources())[name].mutable_resource_allocation())[resource] =
          Info(result);
    }
  }
  return out;
}

PodResources Stored(const std::map<std::string, std::map<std::string, std::string>>& cpu_by_pod) {
  PodResources out;
  for (const auto& [uid, containers] : cpu_by_pod) {
    auto pod = std::make_shared<PodAllocation>();
    pod->uid = uid;
    pod->name = "pod-" + uid;
    pod->ns = "default";
    for (const auto& [name, result] : containers) {
      ContainerAllocation c;
      c.request.set_pod_uid(uid);
      c.request.set_container_name(name);
      (*c.request.mutable_resource_requests())["cpu"] = 1;
      (*c.request.mutable_annotations())["katalyst.kubewharf.io/qos_level"] = "dedicated_cores";
      c.resources["cpu"] = Info(result);
      pod->containers[name] = std::move(c);
    }
    out[uid] = pod;
  }
  return out;
}

TEST_CASE("unrecorded: plugin allocations the checkpoint lacks, per pod or per container",
          "[rebuild]") {
  const PodResources stored = Stored({{"known", {{"c0", "1"}}}});
  const auto cpu = Report("cpu", {{"known", {{"c0", "1"}, {"c1", "0"}}}, {"lost", {{"c0", "0"}}}});
  const auto mem = Report("memory", {{"lost", {{"c0", "0"}}}});
  // A plugin's entries for a resource not its own are ignored.
  const auto stray = Report("memory", {{"stray", {{"c0", "0"}}}});

  const auto found = reconcile::FindUnrecorded(
      stored, {{"cpu", &cpu}, {"memory", &mem}, {"cpu", &stray}, {"nic", nullptr}});
  REQUIRE(found.size() == 2);
  CHECK(found[0].pod_uid == "known");
  CHECK(found[0].container == "c1");
  CHECK(found[0].resources.size() == 1);
  CHECK(found[0].resources.at("cpu").allocation_result() == "0");
  CHECK(found[1].pod_uid == "lost");
  CHECK(found[1].resources.size() == 2);  // both plugins' reports, merged
  CHECK(found[1].resources.contains("memory"));

  CHECK(
      reconcile::FindUnrecorded(
          Stored({{"known", {{"c0", "1"}, {"c1", "0"}}}, {"lost", {{"c0", "0"}}}}), {{"cpu", &cpu}})
          .empty());
}

TEST_CASE("lost: stored allocations the resource's answering plugin does not report", "[rebuild]") {
  const PodResources stored = Stored({{"a", {{"c0", "1"}, {"c1", "0"}}}, {"b", {{"c0", "0"}}}});
  const auto partial = Report("cpu", {{"a", {{"c0", "1"}}}});
  const auto lost = reconcile::FindLost(stored, {{"cpu", &partial}});
  REQUIRE(lost.size() == 2);
  CHECK((lost[0].pod_uid == "a" && lost[0].container == "c1" && lost[0].resource == "cpu"));
  CHECK((lost[1].pod_uid == "b" && lost[1].container == "c0"));

  // No report for the resource (plugin down or failing): nothing is called lost.
  CHECK(reconcile::FindLost(stored, {{"cpu", nullptr}}).empty());
  // Another resource's report says nothing about cpu.
  const auto memory = Report("memory", {});
  CHECK(reconcile::FindLost(stored, {{"memory", &memory}}).empty());
  // A complete report: nothing lost.
  const auto full = Report("cpu", {{"a", {{"c0", "1"}, {"c1", "0"}}}, {"b", {{"c0", "0"}}}});
  CHECK(reconcile::FindLost(stored, {{"cpu", &full}}).empty());
}

TEST_CASE("skipped: resources admission left out, once their plugin answers", "[rebuild]") {
  PodResources stored = Stored({{"a", {{"c0", "1"}}}});
  {
    // c1 was admitted without memory and nic (their plugins were down).
    auto pod = std::make_shared<PodAllocation>(*stored.at("a"));
    ContainerAllocation c1 = pod->containers.at("c0");
    c1.request.set_container_name("c1");
    (*c1.request.mutable_annotations())[kSkippedResourcesAnnotation] = "memory,qrm.io/nic";
    pod->containers["c1"] = c1;
    stored["a"] = pod;
  }
  const auto memory = Report("memory", {});
  const auto nic = Report("qrm.io/nic", {{"a", {{"c0", "eth0"}}}});
  const auto cpu = Report("cpu", {{"a", {{"c0", "1"}, {"c1", "1"}}}});
  const auto skipped =
      reconcile::FindSkipped(stored, {{"memory", &memory}, {"qrm.io/nic", &nic}, {"cpu", &cpu}});
  REQUIRE(skipped.size() == 2);
  CHECK((skipped[0].container == "c1" && skipped[0].resource == "memory"));
  CHECK((skipped[1].container == "c1" && skipped[1].resource == "qrm.io/nic"));
  CHECK(skipped[0].skipped);
  // Once the plugins hold them, nothing is skipped (even before the checkpoint has them).
  const auto memory_holds = Report("memory", {{"a", {{"c1", "0"}}}});
  const auto nic_holds = Report("qrm.io/nic", {{"a", {{"c1", "eth0"}}}});
  CHECK(reconcile::FindSkipped(stored, {{"memory", &memory_holds}, {"qrm.io/nic", &nic_holds}})
            .empty());
  // Without the plugin's answer, or for a resource not skipped: nothing. (c0 holds no nic
  // allocation either, but it was never skipped: the plugin answered it with nothing.)
  CHECK(reconcile::FindSkipped(stored, {{"memory", nullptr}}).empty());
  const auto gpu = Report("gpu", {});
  CHECK(reconcile::FindSkipped(stored, {{"gpu", &gpu}}).empty());
}

TEST_CASE("held skipped: a skipped resource its plugin allocated after all (a late answer)",
          "[rebuild]") {
  PodResources stored = Stored({{"a", {{"c0", "1"}}}});
  {
    auto pod = std::make_shared<PodAllocation>(*stored.at("a"));
    ContainerAllocation c1 = pod->containers.at("c0");
    c1.request.set_container_name("c1");
    c1.resources.clear();
    (*c1.request.mutable_annotations())[kSkippedResourcesAnnotation] = "cpu,memory";
    pod->containers["c1"] = c1;
    stored["a"] = pod;
  }
  // cpu holds c1 (late); memory does not; c0 was never skipped.
  const auto cpu = Report("cpu", {{"a", {{"c0", "1"}, {"c1", "2-3"}}}});
  const auto memory = Report("memory", {{"a", {{"c0", "0"}}}});
  const auto held =
      reconcile::FindHeldSkipped(stored, {{"cpu", &cpu}, {"memory", &memory}, {"gpu", nullptr}});
  REQUIRE(held.size() == 1);
  CHECK((held[0].pod_uid == "a" && held[0].container == "c1" && held[0].resource == "cpu"));
  CHECK(held[0].info.allocation_result() == "2-3");
  // Held and skipped exclude each other: memory is still to be sent.
  const auto skipped = reconcile::FindSkipped(stored, {{"cpu", &cpu}, {"memory", &memory}});
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].resource == "memory");
}

TEST_CASE("a resource leaves the skipped list; an empty list leaves the request", "[rebuild]") {
  pb::ResourceRequest r;
  (*r.mutable_annotations())[kSkippedResourcesAnnotation] = "cpu,memory,qrm.io/nic";
  (*r.mutable_annotations())["other"] = "x";
  r = reconcile::WithoutSkipped(r, "memory");
  CHECK(r.annotations().at(kSkippedResourcesAnnotation) == "cpu,qrm.io/nic");
  r = reconcile::WithoutSkipped(r, "gpu");
  CHECK(r.annotations().at(kSkippedResourcesAnnotation) == "cpu,qrm.io/nic");
  r = reconcile::WithoutSkipped(reconcile::WithoutSkipped(r, "cpu"), "qrm.io/nic");
  CHECK_FALSE(r.annotations().contains(kSkippedResourcesAnnotation));
  CHECK(r.annotations().at("other") == "x");
  CHECK(reconcile::WithoutSkipped(r, "cpu").annotations().size() == 1);
}

TEST_CASE("a replay carries the stored request and the previous allocation", "[rebuild]") {
  const PodResources stored = Stored({{"a", {{"c0", "1"}}}});
  const ContainerAllocation& c = stored.at("a")->containers.at("c0");
  const pb::ResourceRequest req = reconcile::ReplayRequest(c, "cpu");
  CHECK(req.resource_name() == "cpu");
  CHECK(req.pod_uid() == "a");
  CHECK(req.resource_requests().at("cpu") == 1);
  CHECK(req.annotations().at("katalyst.kubewharf.io/qos_level") == "dedicated_cores");
  CHECK(req.annotations().at(kPreviousAllocationAnnotation) == "1");
  CHECK_FALSE(
      reconcile::ReplayRequest(c, "memory").annotations().contains(kPreviousAllocationAnnotation));
}

TEST_CASE("an adopted container takes the runtime's identity and the plugins' allocations",
          "[rebuild]") {
  reconcile::UnrecordedContainer u;
  u.pod_uid = "uid-1";
  u.container = "main";
  u.resources["cpu"] = Info("1", 1);
  u.resources["memory"] = Info("0", 67108864);
  const ContainerAllocation a = reconcile::AdoptedAllocation(u, "web", "prod");
  CHECK(a.request.pod_uid() == "uid-1");
  CHECK(a.request.pod_name() == "web");
  CHECK(a.request.pod_namespace() == "prod");
  CHECK(a.request.container_name() == "main");
  CHECK(a.request.resource_requests().at("memory") == 67108864);
  CHECK(a.request.annotations().at(kAdoptedAnnotation) == "true");
  CHECK(a.resources.at("cpu").allocation_result() == "1");
}

}  // namespace
}  // namespace qrm::state
