// The extended resource patch: its text for each kind of difference, and the node it gives
// once the test store (testing/kube/node_status_store.h) applies it as the API server does.
#include "cluster/objects/node_extended_resources.h"

#include <catch2/catch.hpp>

#include "cluster/kube/json_pointer.h"
#include "testing/kube/node_status_store.h"

namespace qrm::cluster {
namespace {

// A node as the kubelet registers it, with a device plugin's GPU and qrm's widget.
const char* const kNode =
    R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a"},"spec":{"podCIDR":"10.0.0.0/24"},)"
    R"("status":{"capacity":{"cpu":"8","memory":"32Gi","nvidia.com/gpu":"2","example.com/widget":"4"},)"
    R"("allocatable":{"cpu":"7","memory":"30Gi","nvidia.com/gpu":"2","example.com/widget":"4"}}})";

ExtendedResource Figures(int64_t capacity, int64_t allocatable) {
  return {Quantity::FromInt(capacity, QuantityFormat::kDecimalSI),
          Quantity::FromInt(allocatable, QuantityFormat::kDecimalSI)};
}

std::string Patch(const std::string& node, const ExtendedResources& desired,
                  const std::set<std::string>& published) {
  auto p = BuildExtendedResourcePatch(node, desired, published);
  REQUIRE(p.ok());
  return p->json;
}

TEST_CASE("extended resource names follow Kubernetes' IsExtendedResourceName") {
  for (const char* ok : {"example.com/widget", "qrm.io/nic", "qrm.io/nic-bandwidth", "a.b/C_d.e-9",
                         "nvidia.com/gpu"}) {
    CAPTURE(ok);
    CHECK(IsExtendedResourceName(ok));
  }
  for (const char* bad :
       {"cpu", "memory", "pods", "ephemeral-storage", "hugepages-2Mi", "kubernetes.io/x",
        "foo.kubernetes.io/x", "requests.example.com/x", "Example.com/x", "example.com/",
        "example.com/-x", "example.com/a/b", "/x", "exa_mple.com/x", ""}) {
    CAPTURE(bad);
    CHECK_FALSE(IsExtendedResourceName(bad));
  }
  // "requests." + the prefix must stay a DNS subdomain of 253 characters at most.
  const std::string label(61, 'a');
  const std::string prefix = label + "." + label + "." + label + "." + label.substr(0, 59);
  CHECK(prefix.size() == 245);
  CHECK_FALSE(IsExtendedResourceName(prefix + "/x"));
  CHECK(IsExtendedResourceName(prefix.substr(1) + "/x"));
  Status s = ValidateExtendedResourceName("memory");
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("resource \"memory\"") && Catch::Contains("kubelet"));
}

TEST_CASE("JSON pointer tokens escape tilde and slash") {
  CHECK(kube::EscapeJsonPointer("example.com/widget") == "example.com~1widget");
  CHECK(kube::EscapeJsonPointer("a~b/c") == "a~0b~1c");
}

TEST_CASE("the first publish adds capacity and allocatable") {
  const std::string patch = Patch(
      kNode, {{"qrm.io/nic", Figures(2, 2)}, {"qrm.io/nic-bandwidth", Figures(25000, 20000)}}, {});
  CHECK(patch ==
        R"([{"op":"add","path":"/status/capacity/qrm.io~1nic","value":"2"},)"
        R"({"op":"add","path":"/status/allocatable/qrm.io~1nic","value":"2"},)"
        R"({"op":"add","path":"/status/capacity/qrm.io~1nic-bandwidth","value":"25k"},)"
        R"({"op":"add","path":"/status/allocatable/qrm.io~1nic-bandwidth","value":"20k"}])");
  auto p = BuildExtendedResourcePatch(kNode, {{"qrm.io/nic", Figures(2, 2)}}, {});
  REQUIRE(p.ok());
  CHECK(p->added == std::vector<std::string>{"qrm.io/nic"});
  CHECK(p->changed.empty());
  CHECK(p->removed.empty());
}

TEST_CASE("a changed figure is replaced and an equal one left alone") {
  // The node spells 4 as "4"; 4000m is the same amount: nothing to do.
  ExtendedResources same{{"example.com/widget", {Quantity::FromMilli(4000), Quantity::FromInt(4)}}};
  auto p = BuildExtendedResourcePatch(kNode, same, {"example.com/widget"});
  REQUIRE(p.ok());
  CHECK(p->json == "[]");
  CHECK(p->empty());
  CHECK(Patch(kNode, {{"example.com/widget", Figures(4, 3)}}, {"example.com/widget"}) ==
        R"([{"op":"replace","path":"/status/allocatable/example.com~1widget","value":"3"}])");
  auto changed = BuildExtendedResourcePatch(kNode, {{"example.com/widget", Figures(4, 3)}}, {});
  REQUIRE(changed.ok());
  CHECK(changed->changed == std::vector<std::string>{"example.com/widget"});
}

TEST_CASE("a resource qrm published and offers no more is removed and no other one") {
  auto p = BuildExtendedResourcePatch(kNode, {}, {"example.com/widget", "qrm.io/gone", "cpu"});
  REQUIRE(p.ok());
  // qrm.io/gone is not on the node; cpu (a corrupt remembered set) is never touched; the GPU
  // was never qrm's.
  CHECK(p->json == R"([{"op":"remove","path":"/status/capacity/example.com~1widget"},)"
                   R"({"op":"remove","path":"/status/allocatable/example.com~1widget"}])");
  CHECK(p->removed == std::vector<std::string>{"example.com/widget"});
  CHECK(Patch(kNode, {}, {}) == "[]");
}

TEST_CASE("a resource the kubelet zeroed is replaced") {
  const char* zeroed =
      R"({"status":{"capacity":{"example.com/widget":"0"},"allocatable":{"example.com/widget":"0"}}})";
  CHECK(Patch(zeroed, {{"example.com/widget", Figures(4, 4)}}, {"example.com/widget"}) ==
        R"([{"op":"replace","path":"/status/capacity/example.com~1widget","value":"4"},)"
        R"({"op":"replace","path":"/status/allocatable/example.com~1widget","value":"4"}])");
}

TEST_CASE("absent resource lists are added before their members") {
  CHECK(Patch(R"({"metadata":{"name":"n"}})", {{"example.com/widget", Figures(1, 1)}}, {}) ==
        R"([{"op":"add","path":"/status","value":{}},)"
        R"({"op":"add","path":"/status/capacity","value":{}},)"
        R"({"op":"add","path":"/status/capacity/example.com~1widget","value":"1"},)"
        R"({"op":"add","path":"/status/allocatable","value":{}},)"
        R"({"op":"add","path":"/status/allocatable/example.com~1widget","value":"1"}])");
}

TEST_CASE("the patch refuses what it must not write and nodes it cannot read") {
  auto native = BuildExtendedResourcePatch(kNode, {{"memory", Figures(1, 1)}}, {});
  CHECK(native.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(native.status().message(), Catch::Contains("\"memory\""));
  auto bad = BuildExtendedResourcePatch(R"({"status":{"capacity":{"x.io/y":"lots"}}})", {}, {});
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(bad.status().message(), Catch::Contains("lots"));
  CHECK_FALSE(BuildExtendedResourcePatch("[1]", {}, {}).ok());
  CHECK_FALSE(BuildExtendedResourcePatch("not json", {}, {}).ok());
}

TEST_CASE("the built patches applied by the test store give the desired node") {
  ExtendedResources desired{{"example.com/widget", Figures(6, 5)}, {"qrm.io/nic", Figures(2, 2)}};
  auto first = BuildExtendedResourcePatch(kNode, desired, {"example.com/widget"});
  REQUIRE(first.ok());
  auto node = testing::ApplyJsonPatch(kNode, first->json);
  REQUIRE(node.ok());
  auto again = BuildExtendedResourcePatch(*node, desired, {"example.com/widget", "qrm.io/nic"});
  REQUIRE(again.ok());
  CHECK(again->empty());  // converged: nothing left to do
  CHECK_THAT(*node, Catch::Contains(R"("nvidia.com/gpu":"2")"));
  auto gone = BuildExtendedResourcePatch(*node, {}, {"example.com/widget", "qrm.io/nic"});
  REQUIRE(gone.ok());
  auto after = testing::ApplyJsonPatch(*node, gone->json);
  REQUIRE(after.ok());
  CHECK(
      *after ==
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a"},"spec":{"podCIDR":"10.0.0.0/24"},)"
      R"("status":{"capacity":{"cpu":"8","memory":"32Gi","nvidia.com/gpu":"2"},)"
      R"("allocatable":{"cpu":"7","memory":"30Gi","nvidia.com/gpu":"2"}}})");
}

TEST_CASE("the test store applies JSON patches as the API server does") {
  const std::string doc = R"({"a":{"b~c/d":1},"list":[1,2]})";
  auto applied = testing::ApplyJsonPatch(
      doc,
      R"([{"op":"test","path":"/a/b~0c~1d","value":1},{"op":"add","path":"/list/1","value":9},)"
      R"({"op":"add","path":"/list/-","value":3},{"op":"remove","path":"/list/0"}])");
  REQUIRE(applied.ok());
  CHECK(*applied == R"({"a":{"b~c/d":1},"list":[9,2,3]})");
  // A failing test, a missing path or an unserved op: nothing applied, the operation named.
  auto failed = testing::ApplyJsonPatch(
      doc, R"([{"op":"remove","path":"/a"},{"op":"test","path":"/list/0","value":5}])");
  CHECK(failed.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(failed.status().message(), Catch::Contains("operation 1") && Catch::Contains("5"));
  CHECK(testing::ApplyJsonPatch(doc, R"([{"op":"replace","path":"/x/y","value":1}])")
            .status()
            .code() == StatusCode::kFailedPrecondition);
  CHECK(
      testing::ApplyJsonPatch(doc, R"([{"op":"move","from":"/a","path":"/b"}])").status().code() ==
      StatusCode::kFailedPrecondition);
  CHECK(testing::ApplyJsonPatch(doc, R"({"op":"add"})").status().code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace qrm::cluster
