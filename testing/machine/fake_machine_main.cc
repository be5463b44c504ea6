// qrm-fake-machine: writes a fake machine's sysfs/procfs/netns tree for manual testing.
//
//   qrm-fake-machine --shape doc80 --out DIR [--describe]
//   qrm-fake-machine --list
//
// With --describe it runs discovery on the written tree and prints what qrm would see.
#include <cstdio>
#include <string>
#include <string_view>

#include "machine/discovery.h"
#include "testing/machine/fake_machine.h"

namespace {

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s --shape NAME --out DIR [--describe]\n"
               "       %s --list\n",
               argv0, argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace qrm::machine;
  std::string shape_name;
  std::string out;
  bool describe = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--list") {
      for (const std::string& name : fake::ShapeNames()) std::printf("%s\n", name.c_str());
      return 0;
    } else if (arg == "--describe") {
      describe = true;
    } else if ((arg == "--shape" || arg == "--out") && i + 1 < argc) {
      (arg == "--shape" ? shape_name : out) = argv[++i];
    } else if (arg.starts_with("--shape=")) {
      shape_name = arg.substr(8);
    } else if (arg.starts_with("--out=")) {
      out = arg.substr(6);
    } else {
      return Usage(argv[0]);
    }
  }
  if (shape_name.empty() || out.empty()) return Usage(argv[0]);

  auto shape = fake::ShapeByName(shape_name);
  if (!shape.ok()) {
    std::fprintf(stderr, "%s\n", shape.status().ToString().c_str());
    return 1;
  }
  auto paths = fake::WriteFakeMachine(*shape, out);
  if (!paths.ok()) {
    std::fprintf(stderr, "%s\n", paths.status().ToString().c_str());
    return 1;
  }
  std::printf("wrote %s: --sysfs-root %s --procfs-root %s --netns-dir %s\n", shape_name.c_str(),
              paths->sysfs_root.c_str(), paths->procfs_root.c_str(), paths->netns_dir.c_str());
  if (describe) {
    auto topo = Discover(paths->Options());
    if (!topo.ok()) {
      std::fprintf(stderr, "%s\n", topo.status().ToString().c_str());
      return 1;
    }
    std::printf("%s\n", topo->Describe().c_str());
  }
  return 0;
}
