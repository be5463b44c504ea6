// Host::Stop against its own threads: the registry's directory watch, the reconcile timer and
// the heap trimmer run their handlers on the host's io thread while Stop closes them.
#include <atomic>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {
namespace {

// Closing the directory watch while its handler re-armed it crashed about one stop in 20 in a
// tight loop (one test teardown in ~500 under ctest). Files appearing and going in the plugin
// directory the whole time keep that handler busy, so each stop meets it.
TEST_CASE("the host stops cleanly while directory events are handled", "[host][stop]") {
  HostFixture f;
  HostOptions options = f.Options();
  options.reconcile_period = std::chrono::milliseconds(10);  // timers firing during the stop
  std::atomic<bool> done{false};
  std::thread churn([&] {
    const std::string file = f.plugin_dir() + "/not-a-socket";
    while (!done) {
      std::ofstream(file).put('x');
      ::unlink(file.c_str());
    }
  });
  for (int i = 0; i < 300; ++i) {
    Host& host = f.StartHost(options);
    REQUIRE(host.registry().listening());
    f.StopHost();
  }
  done = true;
  churn.join();
  SUCCEED("300 starts and stops under directory events, no crash");
}

}  // namespace
}  // namespace qrm::host::testing
