#include "qrmctl/commands.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <unistd.h>

#include "checkpoint/checkpoint_file.h"
#include "machine/discovery.h"
#include "qrmctl/admin_client.h"
#include "qrmctl/cpu_map.h"
#include "qrmctl/output.h"
#include "qrmctl/table_cells.h"
#include "qrmctl/topology_render.h"

namespace qrm::ctl {

namespace adm = ::qrm::admin::v1;
namespace {

std::string Envs(const adm::ContainerAllocation& c) {
  std::string out;
  std::map<std::string, std::string> sorted(c.envs().begin(), c.envs().end());
  for (const auto& [k, v] : sorted) out += fmt::format("{}{}={}", out.empty() ? "" : " ", k, v);
  return out.empty() ? "-" : out;
}

}  // namespace

int CmdPlugins(const GlobalOptions& g) {
  AdminClient client(g.admin_socket);
  auto r = client.ListPlugins();
  if (!r.ok()) return Fail(r.status());
  if (g.output == "json") return PrintJson(*r);
  std::vector<std::vector<std::string>> rows = {
      {"RESOURCE", "STATE", "STYLE", "REGISTERED", "LAST-ERROR", "SOCKET"}};
  for (const auto& p : r->plugins()) {
    rows.push_back({p.resource_name(), p.state(), p.registration_style(),
                    Time(p.registered_at_unix()), ErrorCell(p.last_error()), p.socket_path()});
  }
  PrintTable(rows);
  return 0;
}

int CmdPods(const GlobalOptions& g) {
  AdminClient client(g.admin_socket);
  auto r = client.ListAllocations("");
  if (!r.ok()) return Fail(r.status());
  if (g.output == "json") return PrintJson(*r);
  std::vector<std::vector<std::string>> rows = {{"POD", "UID", "CONTAINERS", "QOS"}};
  for (const auto& p : r->pods()) {
    std::string containers, qos;
    for (const auto& c : p.containers()) {
      containers += (containers.empty() ? "" : ",") + c.name();
      if (qos.empty()) {
        qos = c.pod_role().empty() ? c.qos_level() : c.qos_level() + "/" + c.pod_role();
      }
    }
    rows.push_back({p.namespace_() + "/" + p.name(), p.uid(), containers, qos});
  }
  PrintTable(rows);
  return 0;
}

int CmdAllocations(const GlobalOptions& g, const std::string& pod) {
  AdminClient client(g.admin_socket);
  auto r = client.ListAllocations(pod);
  if (!r.ok()) return Fail(r.status());
  if (g.output == "json") return PrintJson(*r);
  std::vector<std::vector<std::string>> rows = {
      {"POD", "CONTAINER", "QOS", "CPUSET", "MEMS", "RESOURCES", "ENVS"}};
  for (const auto& p : r->pods()) {
    for (const auto& c : p.containers()) {
      rows.push_back({p.namespace_() + "/" + p.name(), c.name(),
                      c.pod_role().empty() ? c.qos_level() : c.qos_level() + "/" + c.pod_role(),
                      c.cpuset_cpus().empty() ? "-" : c.cpuset_cpus(),
                      c.cpuset_mems().empty() ? "-" : c.cpuset_mems(), ResourcesCell(c), Envs(c)});
    }
  }
  PrintTable(rows);
  return 0;
}

int CmdTopology(const GlobalOptions& g, const std::string& svg_path) {
  machine::DiscoveryOptions opts;
  opts.sysfs_root = g.sysfs_root;
  opts.procfs_root = g.procfs_root;
  opts.netns_dir = g.netns_dir;
  auto topo = machine::Discover(opts);
  if (!topo.ok()) return Fail(topo.status());
  AdminClient client(g.admin_socket);
  auto allocations = client.ListAllocations("");
  if (!allocations.ok()) return Fail(allocations.status());
  auto allocatable = client.GetAllocatable();
  if (!allocatable.ok()) return Fail(allocatable.status());
  CpuMap map = BuildCpuMap(*topo, *allocations, *allocatable);
  if (!svg_path.empty()) {
    std::ofstream out(svg_path);
    out << RenderTopologySvg(*topo, map);
    if (!out.flush()) return Fail(ErrnoError(errno, "write", svg_path));
  }
  const bool color = g.color == "always" || (g.color == "auto" && ::isatty(STDOUT_FILENO));
  std::fputs(RenderTopologyText(*topo, map, color).c_str(), stdout);
  return 0;
}

int CmdCheckpoint(const GlobalOptions& g, const std::string& action, const std::string& file) {
  checkpoint::ReadOptions opts;
  opts.quarantine_corrupt = false;  // offline inspection never moves files
  opts.max_version = 1000;          // report the version instead of refusing it
  auto cp = checkpoint::Read(file, opts);
  if (!cp.ok()) {
    std::fprintf(stderr, "qrmctl: %s: %s\n", file.c_str(), cp.status().ToString().c_str());
    if (checkpoint::IsCorrupt(cp.status())) {
      std::fprintf(stderr,
                   "qrmctl: the file is corrupt. qrm-host moves a corrupt pod file aside and "
                   "rebuilds that pod at its next start; a plugin refuses to start on a corrupt "
                   "checkpoint until it is restarted with --reset-state (drain the node first). "
                   "See docs/operating.md (troubleshooting)\n");
    }
    return 1;
  }
  if (action == "verify") {
    if (g.output == "json") {
      std::printf("{\"file\":\"%s\",\"ok\":true,\"version\":%u,\"checksum\":\"%s\"}\n",
                  file.c_str(), cp->version, cp->checksum.c_str());
    } else {
      std::printf("%s: ok (version %u, checksum %s)\n", file.c_str(), cp->version,
                  cp->checksum.c_str());
    }
    return 0;
  }
  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
  cp->data.Accept(w);
  std::printf("%s\n", buf.GetString());
  return 0;
}

}  // namespace qrm::ctl
