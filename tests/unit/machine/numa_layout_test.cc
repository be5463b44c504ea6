// ReadNumaLayout: the host's view of the NUMA nodes and distances, read by the same code
// Discover uses (so the host and the plugins can never disagree about a machine).
#include "machine/numa_layout.h"

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "machine/discovery.h"
#include "testing/machine/fake_machine.h"
#include "testing/temp_dir.h"
#include "tests/unit/machine/machine_test_util.h"

namespace qrm::machine {
namespace {

using Catch::Contains;
using testing::TempDir;
using testing::WriteFile;

TEST_CASE("the NUMA layout equals what discovery reports for every node", "[machine][layout]") {
  TempDir dir;
  const auto paths = testutil::Generate(fake::Snc4Shape(), dir);
  auto layout = ReadNumaLayout(paths.sysfs_root);
  INFO(layout.status().ToString());
  REQUIRE(layout.ok());
  const MachineTopology topo = testutil::DiscoverOk(paths.Options());
  REQUIRE(layout->nodes.size() == topo.nodes.size());
  REQUIRE(layout->distances.size() == topo.nodes.size());
  for (size_t i = 0; i < topo.nodes.size(); ++i) {
    CHECK(layout->nodes[i] == topo.nodes[i].id);
    for (size_t j = 0; j < topo.nodes.size(); ++j) {
      CHECK(layout->distances[i][j] == topo.nodes[i].distances.at(topo.nodes[j].id));
    }
  }
  CHECK(layout->Mask() == topo.NodeMask());
  auto cpus = ReadOnlineCpus(paths.sysfs_root);
  REQUIRE(cpus.ok());
  CHECK(*cpus == topo.OnlineCpus());
}

TEST_CASE("a node without its distance file leaves the layout without distances",
          "[machine][layout]") {
  TempDir dir;
  const auto paths = testutil::Generate(fake::Doc80Shape(), dir);
  std::filesystem::remove(paths.sysfs_root + "/devices/system/node/node1/distance");
  auto layout = ReadNumaLayout(paths.sysfs_root);
  REQUIRE(layout.ok());
  CHECK(layout->nodes == std::vector<int>{0, 1});
  CHECK(layout->distances.empty());
}

TEST_CASE("a malformed distance or node list names the file and the value", "[machine][layout]") {
  TempDir dir;
  const auto paths = testutil::Generate(fake::Doc80Shape(), dir);
  const std::string node_dir = paths.sysfs_root + "/devices/system/node";
  SECTION("distance out of range") {
    WriteFile(node_dir + "/node1/distance", "21 300\n");
    auto layout = ReadNumaLayout(paths.sysfs_root);
    REQUIRE_FALSE(layout.ok());
    CHECK_THAT(layout.status().message(), Contains("node1/distance"));
    CHECK_THAT(layout.status().message(), Contains("\"300\""));
  }
  SECTION("distance row of the wrong width") {
    WriteFile(node_dir + "/node0/distance", "10\n");
    auto layout = ReadNumaLayout(paths.sysfs_root);
    REQUIRE_FALSE(layout.ok());
    CHECK_THAT(layout.status().message(), Contains("node0/distance"));
    CHECK_THAT(layout.status().message(), Contains("1 distances for 2 nodes"));
  }
  SECTION("node list") {
    WriteFile(node_dir + "/online", "0-x\n");
    auto layout = ReadNumaLayout(paths.sysfs_root);
    REQUIRE_FALSE(layout.ok());
    CHECK(layout.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(layout.status().message(), Contains("node/online"));
    CHECK_THAT(layout.status().message(), Contains("0-x"));
  }
}

TEST_CASE("without a node directory the machine is node 0; without cpu/online it is an error",
          "[machine][layout]") {
  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/devices/system/cpu");
  WriteFile(dir.path() + "/devices/system/cpu/online", "0-3\n");
  auto layout = ReadNumaLayout(dir.path());
  REQUIRE(layout.ok());
  CHECK(layout->nodes == std::vector<int>{0});
  CHECK(layout->distances.empty());

  TempDir empty;
  auto cpus = ReadOnlineCpus(empty.path());
  REQUIRE_FALSE(cpus.ok());
  CHECK(cpus.status().code() == StatusCode::kNotFound);
  CHECK_THAT(cpus.status().message(), Contains("devices/system/cpu/online"));
}

}  // namespace
}  // namespace qrm::machine
