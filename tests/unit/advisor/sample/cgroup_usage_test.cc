// cgroup readers on fake v1 and v2 trees: the counters read, the working set (usage minus
// inactive file, never negative), a vanished cgroup as kNotFound, malformed files as
// kDataLoss naming the file and the value; and the rate: resets and stalled clocks give no
// value.
#include "advisor/sample/cgroup_usage.h"

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "advisor/sample/cpu_rate.h"
#include "testing/temp_dir.h"

namespace qrm::advisor {
namespace {

void Write(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << content;
}

constexpr const char* kPod = "/kubepods/podabc/c1";

TEST_CASE("cgroup v2: usage_usec, memory.current minus inactive_file", "[advisor][sample]") {
  qrm::testing::TempDir root;
  Write(root.File("cgroup.controllers"), "cpuset cpu io memory pids\n");
  Write(root.File("kubepods/podabc/c1/cpu.stat"),
        "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n");
  Write(root.File("kubepods/podabc/c1/memory.current"), "104857600\n");
  Write(root.File("kubepods/podabc/c1/memory.stat"),
        "anon 52428800\nfile 52428800\ninactive_anon 0\nactive_file 10485760\n"
        "inactive_file 41943040\n");
  REQUIRE(DetectCgroupVersion(root.path()) == CgroupVersion::kV2);
  CgroupReader reader(root.path(), CgroupVersion::kV2);
  auto c = reader.Read(kPod);
  REQUIRE(c.ok());
  CHECK(c->cpu_usage_ns == 2500000000ULL);
  CHECK(c->memory_working_set == 104857600ULL - 41943040ULL);
}

TEST_CASE("cgroup v1: cpuacct.usage, usage_in_bytes minus total_inactive_file",
          "[advisor][sample]") {
  qrm::testing::TempDir root;
  Write(root.File("cpuacct/kubepods/podabc/c1/cpuacct.usage"), "123456789\n");
  Write(root.File("memory/kubepods/podabc/c1/memory.usage_in_bytes"), "1000\n");
  // The cgroup's own inactive_file is not the one: total_ includes its children.
  Write(root.File("memory/kubepods/podabc/c1/memory.stat"),
        "cache 900\ninactive_file 10\ntotal_inactive_file 400\n");
  REQUIRE(DetectCgroupVersion(root.path()) == CgroupVersion::kV1);
  auto c = CgroupReader(root.path(), CgroupVersion::kV1).Read(kPod);
  REQUIRE(c.ok());
  CHECK(c->cpu_usage_ns == 123456789ULL);
  CHECK(c->memory_working_set == 600);
}

TEST_CASE("cgroup v1 with cpu and cpuacct mounted together", "[advisor][sample]") {
  qrm::testing::TempDir root;
  Write(root.File("cpu,cpuacct/kubepods/podabc/c1/cpuacct.usage"), "42\n");
  Write(root.File("memory/kubepods/podabc/c1/memory.usage_in_bytes"), "100\n");
  // More inactive file pages than usage (counted at different moments): 0, not a wrap.
  Write(root.File("memory/kubepods/podabc/c1/memory.stat"), "total_inactive_file 300\n");
  auto c = CgroupReader(root.path(), CgroupVersion::kV1).Read(kPod);
  REQUIRE(c.ok());
  CHECK(c->cpu_usage_ns == 42);
  CHECK(c->memory_working_set == 0);
}

TEST_CASE("a vanished cgroup is kNotFound; a malformed file names itself and the value",
          "[advisor][sample]") {
  qrm::testing::TempDir root;
  CgroupReader v1(root.path(), CgroupVersion::kV1);
  auto gone = v1.Read("/kubepods/gone");
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.status().code() == StatusCode::kNotFound);

  Write(root.File("cpuacct/bad/cpuacct.usage"), "12x\n");
  auto bad = v1.Read("/bad");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kDataLoss);
  CHECK(bad.status().message().find("cpuacct.usage") != std::string::npos);
  CHECK(bad.status().message().find("\"12x\"") != std::string::npos);

  Write(root.File("cgroup.controllers"), "cpu memory\n");
  Write(root.File("v2/cpu.stat"), "user_usec 1\n");
  auto missing = CgroupReader(root.path(), CgroupVersion::kV2).Read("/v2");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("usage_usec") != std::string::npos);
}

TEST_CASE("a stat field is matched whole, not by prefix", "[advisor][sample]") {
  auto v = StatField("total_inactive_file_x 5\ntotal_inactive_file 7\n", "total_inactive_file",
                     "memory.stat");
  REQUIRE(v.ok());
  CHECK(*v == 7);
  CHECK_FALSE(StatField("inactive_file -3\n", "inactive_file", "memory.stat").ok());
}

TEST_CASE("cpu rate: cores between readings; first, reset and stalled clock give none",
          "[advisor][sample]") {
  CpuRate rate;
  CHECK_FALSE(rate.Update(1'000'000'000, 0));
  auto cores = rate.Update(2'500'000'000, 1'000'000'000);  // 1.5 s of CPU in 1 s
  REQUIRE(cores);
  CHECK(*cores == Approx(1.5));
  CHECK_FALSE(rate.Update(3'000'000'000, 1'000'000'000));  // no time passed
  CHECK_FALSE(rate.Update(10, 2'000'000'000));             // went back: a new cgroup
  CHECK(rate.resets() == 1);
  auto after = rate.Update(500'000'010, 3'000'000'000);  // from the reset's baseline
  REQUIRE(after);
  CHECK(*after == Approx(0.5));
}

TEST_CASE("this machine's own root cgroup reads", "[advisor][sample]") {
  const std::string root = "/sys/fs/cgroup";
  if (!std::filesystem::exists(root)) return;
  CgroupReader reader(root, DetectCgroupVersion(root));
  auto c = reader.Read("");
  REQUIRE(c.ok());
  CHECK(c->cpu_usage_ns > 0);
}

}  // namespace
}  // namespace qrm::advisor
