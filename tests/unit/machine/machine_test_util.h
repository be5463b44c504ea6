// Helpers for the machine discovery tests: generate a fake machine in a TempDir and
// discover it.
#pragma once

#include <string>

#include <catch2/catch.hpp>

#include "machine/discovery.h"
#include "testing/machine/fake_machine.h"
#include "testing/temp_dir.h"

namespace qrm::machine::testutil {

inline fake::FakeMachinePaths Generate(const fake::FakeMachineShape& shape,
                                       const qrm::testing::TempDir& dir) {
  auto paths = fake::WriteFakeMachine(shape, dir.path());
  INFO(paths.status().ToString());
  REQUIRE(paths.ok());
  return *paths;
}

inline MachineTopology DiscoverOk(const DiscoveryOptions& options) {
  auto topo = Discover(options);
  INFO(topo.status().ToString());
  REQUIRE(topo.ok());
  return *topo;
}

// Discovery must fail; returns the failure for the caller to inspect.
inline Status DiscoverFails(const DiscoveryOptions& options) {
  auto topo = Discover(options);
  if (topo.ok()) {
    INFO(topo->Describe());
    FAIL("discovery succeeded but was expected to fail");
  }
  return topo.status();
}

}  // namespace qrm::machine::testutil
