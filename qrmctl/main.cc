// qrmctl: the operator's command line for qrm-host.
//
//   qrmctl plugins                      registered plugins and their health
//   qrmctl pods                         pods with allocations
//   qrmctl allocations [POD]            per container: resources, cpuset, mems, envs
//   qrmctl topology [--svg FILE]        the machine, each CPU marked with its pool or pod
//   qrmctl checkpoint verify|show FILE  offline checks of host and plugin checkpoints
//   qrmctl usage [--window 5m] [POD]    measured usage (qrm-advisor)
//   qrmctl prediction                   predicted peaks and the pool decision (qrm-advisor)
//
// Global flags: --admin-socket, -o text|json, --color auto|always|never, and for topology
// --sysfs-root/--procfs-root/--netns-dir (a fake machine in demos and tests).
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "common/config/config.h"
#include "common/config/po_error_text.h"
#include "qrmctl/commands.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kUsage =
    "usage: qrmctl [flags] COMMAND [ARGS]\n"
    "commands:\n"
    "  plugins                       registered resource plugins and their state\n"
    "  pods                          pods with allocations\n"
    "  allocations [POD]             allocations per container (POD: uid, name or ns/name)\n"
    "  topology [--svg FILE]         machine picture with pools and pods\n"
    "  checkpoint verify FILE        check a host or plugin checkpoint file (offline)\n"
    "  checkpoint show FILE          print a checkpoint's data (offline)\n"
    "  usage [--window D] [POD]      measured usage: latest sample, or avg/p95/max over D\n"
    "  prediction                    predicted peaks per node, class and pod; pool sizes\n"
    "  guard                         watermark guard: ensurances, throttled pods, actions\n"
    "  nodemetric                    the NodeMetric this node reports (-o json: the object)\n";

int Usage(const po::options_description& desc, const std::string& error) {
  if (!error.empty()) std::fprintf(stderr, "qrmctl: %s\n", error.c_str());
  std::fprintf(stderr, "%s\n", kUsage);
  std::string flags;
  {
    std::ostringstream os;
    os << desc;
    flags = os.str();
  }
  std::fputs(flags.c_str(), stderr);
  return 2;
}

// The global flags; `svg` and `window` receive the topology and usage commands' values.
po::options_description Flags(qrm::ctl::GlobalOptions& g, std::string& svg, std::string& window) {
  po::options_description desc("flags");
  desc.add_options()("help,h", "print this help")(
      "admin-socket", po::value(&g.admin_socket)->default_value(g.admin_socket),
      "qrm-host's admin socket")("advisor-socket",
                                 po::value(&g.advisor_socket)->default_value(g.advisor_socket),
                                 "qrm-advisor's socket")(
      "window", po::value(&window)->default_value(""), "usage: a window such as 5m, 10m, 30m")(
      "output,o", po::value(&g.output)->default_value(g.output), "text | json")(
      "color", po::value(&g.color)->default_value(g.color), "auto | always | never")(
      "svg", po::value(&svg), "topology: also write an SVG picture to FILE")(
      "sysfs-root", po::value(&g.sysfs_root)->default_value(g.sysfs_root),
      "topology: sysfs of the machine")("procfs-root",
                                        po::value(&g.procfs_root)->default_value(g.procfs_root),
                                        "topology: procfs of the machine")(
      "netns-dir", po::value(&g.netns_dir)->default_value(g.netns_dir),
      "topology: named network namespaces");
  return desc;
}

}  // namespace

int main(int argc, char** argv) {
  qrm::ctl::GlobalOptions g;
  std::string svg;
  std::string window;
  std::vector<std::string> args;
  po::options_description desc = Flags(g, svg, window);
  po::options_description hidden;
  hidden.add_options()("args", po::value(&args));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("args", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Usage(desc, qrm::config::PoErrorText(e));
  }
  if (vm.count("help")) {
    std::printf("%s\n", kUsage);
    std::ostringstream os;
    os << desc;
    std::fputs(os.str().c_str(), stdout);
    return 0;
  }
  if (g.output != "text" && g.output != "json") {
    return Usage(desc, "--output: invalid value \"" + g.output + "\" (text or json)");
  }
  if (g.color != "auto" && g.color != "always" && g.color != "never") {
    return Usage(desc, "--color: invalid value \"" + g.color + "\" (auto, always or never)");
  }
  if (args.empty()) return Usage(desc, "missing COMMAND");
  const std::string& cmd = args[0];
  if (cmd == "plugins" && args.size() == 1) return qrm::ctl::CmdPlugins(g);
  if (cmd == "pods" && args.size() == 1) return qrm::ctl::CmdPods(g);
  if (cmd == "allocations" && args.size() <= 2) {
    return qrm::ctl::CmdAllocations(g, args.size() == 2 ? args[1] : "");
  }
  if (cmd == "topology" && args.size() == 1) return qrm::ctl::CmdTopology(g, svg);
  if (cmd == "usage" && args.size() <= 2) {
    auto w = window.empty() ? qrm::StatusOr<std::chrono::milliseconds>(std::chrono::milliseconds(0))
                            : qrm::config::ParseDuration(window, "window");
    if (!w.ok()) return Usage(desc, std::string(w.status().message()));
    return qrm::ctl::CmdUsage(g, w->count() / 1000, args.size() == 2 ? args[1] : "");
  }
  if (cmd == "prediction" && args.size() == 1) return qrm::ctl::CmdPrediction(g);
  if (cmd == "guard" && args.size() == 1) return qrm::ctl::CmdGuard(g);
  if (cmd == "nodemetric" && args.size() == 1) return qrm::ctl::CmdNodeMetric(g);
  if (cmd == "checkpoint" && args.size() == 3 && (args[1] == "verify" || args[1] == "show")) {
    return qrm::ctl::CmdCheckpoint(g, args[1], args[2]);
  }
  return Usage(desc, "unknown command or wrong arguments: " + cmd);
}
