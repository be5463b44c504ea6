#include "qrmctl/topology_render.h"

#include <fmt/format.h>

namespace qrm::ctl {
namespace {

constexpr int kCoresPerLine = 10;

std::string XmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string GiB(double bytes) {
  return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024));
}

const char* AnsiColor(const CpuCell& cell) {
  switch (cell.owner) {
    case Owner::kReserved: return "\033[90m";
    case Owner::kShared: return "\033[32m";
    case Owner::kReclaimed: return "\033[33m";
    case Owner::kDedicated: {
      static const char* kColors[] = {"\033[1;31m", "\033[1;34m", "\033[1;35m", "\033[1;36m"};
      return kColors[static_cast<unsigned char>(cell.key) % 4];
    }
    case Owner::kUnknown: break;
  }
  return "";
}

const char* SvgColor(const CpuCell& cell) {
  switch (cell.owner) {
    case Owner::kReserved: return "#bdbdbd";
    case Owner::kShared: return "#a5d6a7";
    case Owner::kReclaimed: return "#ffe082";
    case Owner::kDedicated: {
      static const char* kColors[] = {"#ef9a9a", "#90caf9", "#ce93d8", "#80deea"};
      return kColors[static_cast<unsigned char>(cell.key) % 4];
    }
    case Owner::kUnknown: break;
  }
  return "#ffffff";
}

CpuCell CellOf(const CpuMap& map, int cpu) {
  auto it = map.cpus.find(cpu);
  return it == map.cpus.end() ? CpuCell{} : it->second;
}

std::string NodeSummary(const machine::MachineTopology& machine, const CpuMap& map,
                        const machine::NumaNodeInfo& node) {
  std::string line = fmt::format("NUMA node {}  cpus {}", node.id,
                                 node.cpus.Empty() ? "none" : node.cpus.ToString());
  double capacity = static_cast<double>(node.memory_total_bytes);
  double allocated = 0;
  if (auto it = map.memory.find(node.id); it != map.memory.end()) {
    if (it->second.capacity > 0) capacity = it->second.capacity;
    allocated = it->second.allocated;
  }
  line += fmt::format("  memory {}: {} allocated, {} free", GiB(capacity), GiB(allocated),
                      GiB(capacity - allocated));
  std::string nics;
  for (const auto* nic : machine.NicsOnNode(node.id)) {
    nics += fmt::format("{}{}{}", nics.empty() ? "" : ", ", nic->name,
                        nic->netns.empty() ? "" : " (netns " + nic->netns + ")");
  }
  if (!nics.empty()) line += "  NICs: " + nics;
  return line;
}

std::string Legend(const CpuMap& map) {
  std::string out = "legend: R reserved  S shared pool  C reclaimed pool";
  for (const auto& [key, pod] : map.legend) out += fmt::format("  {} {}", key, pod);
  if (!map.cpu_plugin_reported) {
    out += "\n(no allocatable report from the CPU plugin: reserved CPUs are not shown)";
  }
  return out + "\n";
}

}  // namespace

std::string RenderTopologyText(const machine::MachineTopology& machine, const CpuMap& map,
                               bool color) {
  std::string out = "machine: " + machine.Summary() + "\n";
  const std::vector<machine::Core> cores = machine.Cores();
  for (const auto& [socket, socket_cpus] : machine.Sockets()) {
    out += fmt::format("\nsocket {}\n", socket);
    for (const auto& node : machine.nodes) {
      if (!node.cpus.Empty() && !node.cpus.Overlaps(socket_cpus)) continue;
      if (node.cpus.Empty() && socket != machine.Sockets().begin()->first) continue;
      out += "  " + NodeSummary(machine, map, node) + "\n";
      int on_line = 0;
      for (const auto& core : cores) {
        if (core.node != node.id || core.key.package_id != socket) continue;
        if (on_line == 0) out += fmt::format("    {:>4}: ", *core.threads.First());
        out += "[";
        for (int cpu : core.threads) {
          CpuCell cell = CellOf(map, cpu);
          if (color) {
            out += fmt::format("{}{}\033[0m", AnsiColor(cell), cell.key);
          } else {
            out += cell.key;
          }
        }
        out += "] ";
        if (++on_line == kCoresPerLine) {
          out += "\n";
          on_line = 0;
        }
      }
      if (on_line != 0) out += "\n";
    }
  }
  return out + "\n" + Legend(map);
}

std::string RenderTopologySvg(const machine::MachineTopology& machine, const CpuMap& map) {
  constexpr int kCell = 22, kGap = 6, kMargin = 16, kHeader = 26;
  const std::vector<machine::Core> cores = machine.Cores();
  const int threads = std::max(1, machine.ThreadsPerCore());
  const int core_width = threads * kCell + kGap;
  const int width = kMargin * 2 + kCoresPerLine * core_width;
  std::string body;
  int y = kMargin;
  body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
                      kMargin, y + 12, machine.Summary());
  y += kHeader;
  for (const auto& node : machine.nodes) {
    body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>\n", kMargin, y + 12,
                        XmlEscape(NodeSummary(machine, map, node)));
    y += kHeader - 6;
    int col = 0;
    for (const auto& core : cores) {
      if (core.node != node.id) continue;
      int x = kMargin + col * core_width;
      for (int cpu : core.threads) {
        CpuCell cell = CellOf(map, cpu);
        body += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#555\">"
            "<title>cpu {} {}</title></rect>\n"
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
            x, y, kCell, kCell, SvgColor(cell), cpu, XmlEscape(cell.pod), x + kCell / 2, y + 15,
            cell.key);
        x += kCell;
      }
      if (++col == kCoresPerLine) {
        col = 0;
        y += kCell + kGap;
      }
    }
    if (col != 0) y += kCell + kGap;
    y += kGap;
  }
  std::string legend = Legend(map);
  for (size_t start = 0; start < legend.size();) {
    size_t nl = legend.find('\n', start);
    body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>\n", kMargin, y + 12,
                        XmlEscape(legend.substr(start, nl - start)));
    y += 16;
    start = nl == std::string::npos ? legend.size() : nl + 1;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"monospace\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n{}</svg>\n",
      width, y + kMargin, body);
}

}  // namespace qrm::ctl
