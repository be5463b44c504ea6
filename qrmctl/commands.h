// qrmctl's subcommands. Each returns the process exit code: 0 done, 1 the operation failed
// (the error is printed to stderr with what to do), 2 bad usage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qrm::ctl {

struct GlobalOptions {
  std::string admin_socket = "/var/run/qrm/admin.sock";
  std::string advisor_socket = "/var/run/qrm/advisor.sock";
  std::string output = "text";  // text | json
  std::string color = "auto";   // auto | always | never
  std::string sysfs_root = "/sys";
  std::string procfs_root = "/proc";
  std::string netns_dir = "/var/run/netns";
};

int CmdPlugins(const GlobalOptions& g);
int CmdPods(const GlobalOptions& g);
int CmdAllocations(const GlobalOptions& g, const std::string& pod);
int CmdTopology(const GlobalOptions& g, const std::string& svg_path);
int CmdCheckpoint(const GlobalOptions& g, const std::string& action, const std::string& file);
// qrm-advisor's measurements (window 0: the latest sample) and predictions.
int CmdUsage(const GlobalOptions& g, int64_t window_seconds, const std::string& pod);
int CmdPrediction(const GlobalOptions& g);
// The watermark guard: ensurances, throttled pods, recent actions (qrm-advisor).
int CmdGuard(const GlobalOptions& g);
int CmdNodeMetric(const GlobalOptions& g);

}  // namespace qrm::ctl
