// Writing a ContainerUpdate into CRI messages in place.
#include <cctype>
#include <string>

#include <catch2/catch.hpp>
#include <google/protobuf/unknown_field_set.h>
#include <google/protobuf/util/message_differencer.h>

#include "qrm/apply/container_update.h"
#include "qrm/apply/cri_request_edit.h"
#include "tests/unit/qrm/apply/apply_test_util.h"

namespace qrm::apply {
namespace {

using ::runtime::v1::ContainerConfig;
using ::runtime::v1::LinuxContainerResources;
using testing::Alloc;

// Field-by-field: plain serialization orders map entries unpredictably.
bool Same(const LinuxContainerResources& a, const LinuxContainerResources& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

ContainerUpdate MustBuild(const testing::Allocations& a) {
  StatusOr<ContainerUpdate> u = BuildContainerUpdate(a);
  if (!u.ok()) FAIL(u.status().ToString());
  return *std::move(u);
}

// What the kubelet sent: every field set, so each one's survival can be checked.
LinuxContainerResources KubeletResources() {
  LinuxContainerResources r;
  r.set_cpu_period(100000);
  r.set_cpu_quota(200000);
  r.set_cpu_shares(2048);
  r.set_memory_limit_in_bytes(1 << 30);
  r.set_oom_score_adj(-997);
  r.set_cpuset_cpus("0-63");
  r.set_cpuset_mems("0-1");
  auto* h = r.add_hugepage_limits();
  h->set_page_size("2MB");
  h->set_limit(0);
  h = r.add_hugepage_limits();
  h->set_page_size("1GB");
  h->set_limit(0);
  (*r.mutable_unified())["memory.high"] = "max";
  (*r.mutable_unified())["pids.max"] = "100";
  r.set_memory_swap_limit_in_bytes(1 << 30);
  return r;
}

TEST_CASE("Each property is written into its CRI field", "[apply][fields]") {
  struct Case {
    const char* property;
    const char* value;
    void (*check)(const LinuxContainerResources&);
  };
  const Case cases[] = {
      {"CpuPeriod", "50000",
       [](const LinuxContainerResources& r) { CHECK(r.cpu_period() == 50000); }},
      {"CpuQuota", "-1", [](const LinuxContainerResources& r) { CHECK(r.cpu_quota() == -1); }},
      {"CpuShares", "4", [](const LinuxContainerResources& r) { CHECK(r.cpu_shares() == 4); }},
      {"MemoryLimitInBytes", "0",
       [](const LinuxContainerResources& r) { CHECK(r.memory_limit_in_bytes() == 0); }},
      {"OomScoreAdj", "500",
       [](const LinuxContainerResources& r) { CHECK(r.oom_score_adj() == 500); }},
      {"CpusetCpus", "4,5,6",
       [](const LinuxContainerResources& r) { CHECK(r.cpuset_cpus() == "4-6"); }},
      {"CpusetMems", "1", [](const LinuxContainerResources& r) { CHECK(r.cpuset_mems() == "1"); }},
      {"MemorySwapLimitInBytes", "-1",
       [](const LinuxContainerResources& r) { CHECK(r.memory_swap_limit_in_bytes() == -1); }},
      {"HugepageLimits", "2MB:4194304",
       [](const LinuxContainerResources& r) {
         REQUIRE(r.hugepage_limits_size() == 2);
         CHECK(r.hugepage_limits(0).limit() == 4194304);
       }},
      {"Unified", R"({"memory.high":"1073741824"})",
       [](const LinuxContainerResources& r) {
         CHECK(r.unified().at("memory.high") == "1073741824");
       }},
  };
  for (const Case& c : cases) {
    INFO(c.property);
    const ContainerUpdate u = MustBuild({{"res", Alloc(c.property, c.value)}});
    LinuxContainerResources target = KubeletResources();
    ApplyOwnedFields(u, &target);
    c.check(target);

    // Every other field is the kubelet's: blank out the owned one on both sides and compare.
    LinuxContainerResources expected = KubeletResources();
    const auto clear = [&](LinuxContainerResources& r) {
      const auto* field = r.GetDescriptor()->FindFieldByCamelcaseName(
          std::string(1, static_cast<char>(std::tolower(c.property[0]))) + (c.property + 1));
      REQUIRE(field != nullptr);
      r.GetReflection()->ClearField(&r, field);
    };
    clear(target);
    clear(expected);
    CHECK(Same(target, expected));
  }
}

TEST_CASE("Applying an empty update changes nothing", "[apply][fields]") {
  LinuxContainerResources target = KubeletResources();
  ApplyOwnedFields(ContainerUpdate{}, &target);
  CHECK(Same(target, KubeletResources()));
}

TEST_CASE("Owned zero values are written, not skipped", "[apply][fields]") {
  const ContainerUpdate u =
      MustBuild({{"a", Alloc("CpuQuota", "0")}, {"b", Alloc("MemoryLimitInBytes", "0")}});
  LinuxContainerResources target = KubeletResources();
  ApplyOwnedFields(u, &target);
  CHECK(target.cpu_quota() == 0);
  CHECK(target.memory_limit_in_bytes() == 0);
  CHECK(target.cpu_period() == 100000);
}

TEST_CASE("Unknown fields of the target survive ApplyOwnedFields", "[apply][fields]") {
  LinuxContainerResources target = KubeletResources();
  // A field from a newer CRI than ours: number 99, varint 7 (tag 99<<3|0 = 792 = 98 06).
  std::string bytes = target.SerializeAsString() + std::string("\x98\x06\x07", 3);
  REQUIRE(target.ParseFromString(bytes));
  REQUIRE(target.GetReflection()->GetUnknownFields(target).field_count() == 1);
  // And one added through reflection: number 100, length-delimited "new".
  target.GetReflection()->MutableUnknownFields(&target)->AddLengthDelimited(100, "new");

  const ContainerUpdate u = MustBuild({{"cpu", Alloc("CpusetCpus", "2-3")},
                                       {"hp", Alloc("HugepageLimits", "1GB:1073741824")},
                                       {"u", Alloc("Unified", R"({"memory.max":"5"})")}});
  ApplyOwnedFields(u, &target);

  LinuxContainerResources reparsed;
  REQUIRE(reparsed.ParseFromString(target.SerializeAsString()));
  CHECK(reparsed.cpuset_cpus() == "2-3");
  const google::protobuf::UnknownFieldSet& unknown =
      reparsed.GetReflection()->GetUnknownFields(reparsed);
  REQUIRE(unknown.field_count() == 2);
  CHECK(unknown.field(0).number() == 99);
  CHECK(unknown.field(0).varint() == 7);
  CHECK(unknown.field(1).number() == 100);
  CHECK(unknown.field(1).length_delimited() == "new");
}

TEST_CASE("HugepageLimits replace same-size entries and keep the others", "[apply][fields]") {
  LinuxContainerResources target;
  for (auto [size, limit] : {std::pair{"1GB", 5}, {"2MB", 6}, {"64KB", 7}, {"2MB", 8}}) {
    auto* h = target.add_hugepage_limits();
    h->set_page_size(size);
    h->set_limit(limit);
  }
  const ContainerUpdate u = MustBuild({{"hp", Alloc("HugepageLimits", "2MB:100,16GB:200")}});
  ApplyOwnedFields(u, &target);
  // 2MB updated in place (its duplicate dropped), 16GB appended, 1GB and 64KB untouched.
  REQUIRE(target.hugepage_limits_size() == 4);
  CHECK(target.hugepage_limits(0).page_size() == "1GB");
  CHECK(target.hugepage_limits(0).limit() == 5);
  CHECK(target.hugepage_limits(1).page_size() == "2MB");
  CHECK(target.hugepage_limits(1).limit() == 100);
  CHECK(target.hugepage_limits(2).page_size() == "64KB");
  CHECK(target.hugepage_limits(2).limit() == 7);
  CHECK(target.hugepage_limits(3).page_size() == "16GB");
  CHECK(target.hugepage_limits(3).limit() == 200);

  // Applying again is a no-op: reconcile may re-apply the same update.
  const LinuxContainerResources once = target;
  ApplyOwnedFields(u, &target);
  CHECK(Same(target, once));
}

TEST_CASE("Unified sets and overwrites its keys and keeps the others", "[apply][fields]") {
  LinuxContainerResources target;
  (*target.mutable_unified())["memory.high"] = "max";
  (*target.mutable_unified())["pids.max"] = "100";
  const ContainerUpdate u =
      MustBuild({{"mem", Alloc("Unified", R"({"memory.high":"1024","memory.swap.max":"0"})")}});
  ApplyOwnedFields(u, &target);
  CHECK(target.unified_size() == 3);
  CHECK(target.unified().at("memory.high") == "1024");
  CHECK(target.unified().at("memory.swap.max") == "0");
  CHECK(target.unified().at("pids.max") == "100");
}

TEST_CASE("ApplyEnvsAndAnnotations overwrites existing env keys in place and appends new ones",
          "[apply][envs]") {
  ContainerConfig config;
  config.set_working_dir("/app");
  for (auto [k, v] :
       {std::pair{"PATH", "/bin"}, {"CPUS", "old"}, {"HOME", "/root"}, {"CPUS", "older"}}) {
    auto* kv = config.add_envs();
    kv->set_key(k);
    kv->set_value(v);
  }
  (*config.mutable_annotations())["io.kubernetes.pod"] = "p";
  (*config.mutable_annotations())["qrm/cpus"] = "stale";

  const ContainerUpdate u = MustBuild({
      {"cpu", Alloc("CpusetCpus", "0-1", {{"CPUS", "0-1"}, {"Z_NEW", "z"}, {"A_NEW", "a"}},
                    {{"qrm/cpus", "0-1"}, {"qrm/new", "x"}})},
  });
  ApplyEnvsAndAnnotations(u, &config);

  REQUIRE(config.envs_size() == 6);
  const std::pair<const char*, const char*> expected[] = {
      {"PATH", "/bin"}, {"CPUS", "0-1"}, {"HOME", "/root"},
      {"CPUS", "0-1"},  {"A_NEW", "a"},  {"Z_NEW", "z"}};  // new keys appended in key order
  for (int i = 0; i < 6; ++i) {
    INFO(i);
    CHECK(config.envs(i).key() == expected[i].first);
    CHECK(config.envs(i).value() == expected[i].second);
  }
  CHECK(config.annotations_size() == 3);
  CHECK(config.annotations().at("io.kubernetes.pod") == "p");
  CHECK(config.annotations().at("qrm/cpus") == "0-1");
  CHECK(config.annotations().at("qrm/new") == "x");
  CHECK(config.working_dir() == "/app");
  // Resources are ApplyOwnedFields' job, not this function's.
  CHECK_FALSE(config.has_linux());
}

}  // namespace
}  // namespace qrm::apply
