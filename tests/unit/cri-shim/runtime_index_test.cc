// RuntimeIndex: ids <-> pods and containers across restarts, removals and resyncs.
#include "cri-shim/runtime_index.h"

#include <catch2/catch.hpp>

namespace qrm::shim {
namespace {

PodInfo Pod(const std::string& uid) {
  PodInfo pod;
  pod.uid = uid;
  pod.name = "pod-" + uid;
  pod.ns = "default";
  return pod;
}

TEST_CASE(
    "A restarted container: the newest id gets updates, the old one's removal keeps "
    "the allocation",
    "[cri_shim][index]") {
  RuntimeIndex index;
  index.AddSandbox("s1", Pod("u1"));
  const ContainerKey key{"u1", "app"};
  index.AddContainer({"c1", "s1", key});
  index.AddContainer({"c2", "s1", key});  // the kubelet restarted "app"
  CHECK(*index.NewestContainerId(key) == "c2");
  CHECK_FALSE(index.RemoveContainer("c1").has_value());  // c2 still uses the allocation
  CHECK(*index.NewestContainerId(key) == "c2");
  auto released = index.RemoveContainer("c2");
  REQUIRE(released.has_value());
  CHECK(*released == key);
  CHECK_FALSE(index.NewestContainerId(key).has_value());
  CHECK_FALSE(index.RemoveContainer("c2").has_value());  // unknown id
}

TEST_CASE("A create in flight keeps the allocation of its name", "[cri_shim][index]") {
  RuntimeIndex index;
  const ContainerKey key{"u1", "app"};
  index.AddContainer({"old", "s1", key});
  index.BeginCreate(key);
  CHECK_FALSE(index.RemoveContainer("old").has_value());  // garbage collection meanwhile
  CHECK(index.InUse(key));
  const RuntimeIndex::Container created{"new", "s1", key};
  index.EndCreate(key, &created);
  CHECK(*index.NewestContainerId(key) == "new");
  index.BeginCreate({"u1", "other"});
  index.EndCreate({"u1", "other"}, nullptr);  // the runtime refused it
  CHECK_FALSE(index.InUse({"u1", "other"}));
}

TEST_CASE("Sandboxes: readiness per pod, removal takes its containers", "[cri_shim][index]") {
  RuntimeIndex index;
  index.AddSandbox("old", Pod("u1"));
  index.AddSandbox("new", Pod("u1"));
  index.AddSandbox("s2", Pod("u2"));
  index.AddContainer({"c1", "old", {"u1", "app"}});
  index.AddContainer({"c2", "new", {"u1", "app"}});
  CHECK(index.ReadyPodUids() == std::set<std::string>{"u1", "u2"});
  index.MarkSandboxNotReady("old");
  CHECK(index.HasOtherReadySandbox("u1", "old"));
  CHECK_FALSE(index.HasOtherReadySandbox("u2", "s2"));
  index.RemoveSandbox("old");
  CHECK_FALSE(index.FindContainer("c1").has_value());
  CHECK(*index.NewestContainerId({"u1", "app"}) == "c2");
  index.MarkSandboxNotReady("new");
  CHECK(index.ReadyPodUids() == std::set<std::string>{"u2"});
  CHECK(index.FindSandbox("new")->pod.name == "pod-u1");
}

TEST_CASE("Reset replaces ids but keeps creates in flight", "[cri_shim][index]") {
  RuntimeIndex index;
  index.AddContainer({"gone", "s0", {"u0", "x"}});
  index.BeginCreate({"u1", "app"});
  index.Reset({{"s1", Pod("u1"), true}}, {{"c1", "s1", {"u1", "web"}}});
  CHECK_FALSE(index.FindContainer("gone").has_value());
  CHECK(index.FindContainer("c1")->key.name == "web");
  CHECK(index.InUse({"u1", "app"}));
  CHECK(index.sandbox_count() == 1);
  CHECK(index.container_count() == 1);
}

}  // namespace
}  // namespace qrm::shim
