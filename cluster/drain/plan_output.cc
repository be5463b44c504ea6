#include "cluster/drain/plan_output.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cluster/objects/json_io.h"

namespace qrm::cluster::drain {
namespace {

using json::WriteKey;
using json::Writer;
using json::WriteString;
using json::WriteStringIfSet;
using json::WriteStringValue;

void StrArray(Writer& w, const char* key, const std::vector<std::string>& values) {
  WriteKey(w, key);
  w.StartArray();
  for (const std::string& v : values) WriteStringValue(w, v);
  w.EndArray();
}

void WriteMove(Writer& w, const PodMove& move) {
  w.StartObject();
  WriteString(w, "pod", move.pod);
  WriteStringIfSet(w, "uid", move.uid);
  WriteString(w, "destination", move.destination);
  if (!move.numa.empty()) {
    WriteKey(w, "numaNodes");
    w.StartArray();
    for (int n : move.numa.Nodes()) w.Int(n);
    w.EndArray();
  }
  WriteKey(w, "numaChecked");
  w.Bool(move.numa_checked);
  WriteKey(w, "fromHint");
  w.Bool(move.from_hint);
  w.EndObject();
}

void WriteNodePlan(Writer& w, const NodePlan& node) {
  w.StartObject();
  WriteString(w, "node", node.node);
  WriteKey(w, "empty");
  w.Bool(node.empty);
  WriteKey(w, "utilization");
  w.Double(node.utilization);
  WriteKey(w, "moves");
  w.StartArray();
  for (const PodMove& move : node.moves) WriteMove(w, move);
  w.EndArray();
  StrArray(w, "skipped", node.skipped);
  StrArray(w, "awaited", node.awaited);
  w.EndObject();
}

void WriteNodePlans(Writer& w, const char* key, const std::vector<NodePlan>& nodes) {
  WriteKey(w, key);
  w.StartArray();
  for (const NodePlan& node : nodes) WriteNodePlan(w, node);
  w.EndArray();
}

void WriteNotDrainable(Writer& w, const std::vector<NotDrainable>& nodes) {
  WriteKey(w, "notDrainable");
  w.StartArray();
  for (const NotDrainable& n : nodes) {
    w.StartObject();
    WriteString(w, "node", n.node);
    WriteString(w, "kind", std::string(NotDrainableKindName(n.kind)));
    WriteString(w, "reasonCode", n.reason_code);
    WriteStringIfSet(w, "pod", n.pod);
    WriteStringIfSet(w, "pdb", n.pdb);
    WriteString(w, "reason", n.reason);
    w.EndObject();
  }
  w.EndArray();
}

void WritePdbUse(Writer& w, const std::vector<PdbUse>& pdbs) {
  WriteKey(w, "pdbUse");
  w.StartArray();
  for (const PdbUse& p : pdbs) {
    w.StartObject();
    WriteString(w, "pdb", p.pdb);
    WriteKey(w, "disruptionsAllowed");
    w.Int64(p.disruptions_allowed);
    WriteKey(w, "used");
    w.Int64(p.used);
    w.EndObject();
  }
  w.EndArray();
}

void WriteStranded(Writer& w, const std::vector<StrandedPod>& pods) {
  WriteKey(w, "stranded");
  w.StartArray();
  for (const StrandedPod& p : pods) {
    w.StartObject();
    WriteString(w, "pod", p.pod);
    WriteString(w, "source", p.source);
    WriteString(w, "destination", p.destination);
    WriteString(w, "reason", p.reason);
    WriteString(w, "message", p.message);
    w.EndObject();
  }
  w.EndArray();
}

size_t MoveCount(const std::vector<NodePlan>& nodes) {
  size_t n = 0;
  for (const NodePlan& node : nodes) n += node.moves.size();
  return n;
}

void WriteSummary(Writer& w, const Plan& plan) {
  WriteKey(w, "summary");
  w.StartObject();
  auto count = [&](const char* key, size_t n) {
    WriteKey(w, key);
    w.Uint64(n);
  };
  count("candidates", plan.candidates.size());
  count("deleteEmpty", plan.delete_empty.size());
  count("drain", plan.drain.size());
  count("moves", MoveCount(plan.drain));
  count("notDrainable", plan.not_drainable.size());
  count("stranded", plan.stranded.size());
  count("nodesEvaluated", plan.nodes_evaluated);
  w.EndObject();
}

std::string Percent(double share) {
  return fmt::format("{:.0f}%", share * 100);
}

std::string NumaText(const PodMove& move) {
  if (!move.numa_checked) return "-";
  return move.numa.empty() ? "any" : move.numa.ToString();
}

void AppendNodes(std::string& out, const char* title, const std::vector<NodePlan>& nodes) {
  out += fmt::format("{} ({}):\n", title, nodes.size());
  for (const NodePlan& node : nodes) {
    out +=
        fmt::format("  {:<24} utilization {:>4}  {} pod(s) to move, {} go with the node{}\n",
                    node.node, Percent(node.utilization), node.moves.size(), node.skipped.size(),
                    node.awaited.empty() ? "" : fmt::format(", {} awaited", node.awaited.size()));
    for (const PodMove& move : node.moves) {
      out += fmt::format("    {:<40} -> {:<24} NUMA {}{}\n", move.pod, move.destination,
                         NumaText(move), move.from_hint ? "  (hint)" : "");
    }
  }
}

}  // namespace

std::string PlanJson(const Plan& plan) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteKey(w, "numaBlind");
  w.Bool(plan.numa_blind);
  WriteStringIfSet(w, "aborted", plan.aborted);
  WriteKey(w, "timedOut");
  w.Bool(plan.timed_out);
  WriteSummary(w, plan);
  WriteNodePlans(w, "deleteEmpty", plan.delete_empty);
  WriteNodePlans(w, "drain", plan.drain);
  WriteNodePlans(w, "candidates", plan.candidates);
  WriteKey(w, "reinjected");
  w.StartArray();
  for (const PodMove& move : plan.reinjected) WriteMove(w, move);
  w.EndArray();
  WriteNotDrainable(w, plan.not_drainable);
  WritePdbUse(w, plan.pdb_use);
  WriteStranded(w, plan.stranded);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

std::string PlanTable(const Plan& plan) {
  std::string out =
      fmt::format("{} plan: {} candidate node(s), {} evaluated{}\n",
                  plan.numa_blind ? "NUMA-blind" : "qrm (NUMA-aware)", plan.candidates.size(),
                  plan.nodes_evaluated, plan.timed_out ? ", simulation time budget ran out" : "");
  if (!plan.aborted.empty()) out += fmt::format("no candidates: {}\n", plan.aborted);
  AppendNodes(out, "Delete now (empty)", plan.delete_empty);
  AppendNodes(out, "Drain now", plan.drain);
  if (plan.candidates.size() > plan.delete_empty.size() + plan.drain.size()) {
    out += fmt::format("Further candidates beyond the parallelism limits: {}\n",
                       plan.candidates.size() - plan.delete_empty.size() - plan.drain.size());
  }
  if (!plan.reinjected.empty()) {
    out += fmt::format("Pods of nodes being drained, recently evicted pods ({}):\n",
                       plan.reinjected.size());
    for (const PodMove& move : plan.reinjected)
      out +=
          fmt::format("    {:<40} -> {:<24} NUMA {}\n", move.pod, move.destination, NumaText(move));
  }
  out += fmt::format("Not drainable ({}):\n", plan.not_drainable.size());
  for (const NotDrainable& n : plan.not_drainable) {
    out += fmt::format("  {:<24} {:<24} {}\n", n.node, n.reason_code, n.reason);
  }
  if (!plan.pdb_use.empty()) {
    out += "PodDisruptionBudgets used:\n";
    for (const PdbUse& p : plan.pdb_use)
      out += fmt::format("  {:<40} {} of {} disruption(s)\n", p.pdb, p.used, p.disruptions_allowed);
  }
  if (plan.numa_blind) {
    out += fmt::format("Pods this plan strands (the kubelet would refuse them) ({}):\n",
                       plan.stranded.size());
    for (const StrandedPod& p : plan.stranded) {
      out += fmt::format("  {:<40} {} -> {}: {}: {}\n", p.pod, p.source, p.destination, p.reason,
                         p.message);
    }
  }
  return out;
}

std::string ExecutionJson(const ExecuteReport& report) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteKey(w, "complete");
  w.Bool(report.complete());
  WriteKey(w, "nodes");
  w.StartArray();
  for (const NodeExecution& node : report.nodes) {
    w.StartObject();
    WriteString(w, "node", node.node);
    WriteKey(w, "cordoned");
    w.Bool(node.cordoned);
    WriteKey(w, "complete");
    w.Bool(node.complete);
    WriteStringIfSet(w, "error", node.error);
    WriteKey(w, "pods");
    w.StartArray();
    for (const PodEvictionReport& pod : node.pods) {
      w.StartObject();
      WriteString(w, "pod", pod.pod);
      WriteString(w, "outcome", std::string(kube::EvictionOutcomeName(pod.outcome)));
      WriteKey(w, "attempts");
      w.Int(pod.attempts);
      WriteKey(w, "leftNode");
      w.Bool(pod.left_node);
      WriteStringIfSet(w, "message", pod.message);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

std::string ExecutionTable(const ExecuteReport& report) {
  std::string out = fmt::format("Execution: {}\n", report.complete() ? "complete" : "incomplete");
  for (const NodeExecution& node : report.nodes) {
    out += fmt::format("  {:<24} {}{}{}\n", node.node, node.cordoned ? "cordoned, " : "",
                       node.complete ? "drained" : "incomplete",
                       node.error.empty() ? "" : ": " + node.error);
    for (const PodEvictionReport& pod : node.pods) {
      out += fmt::format("    {:<40} {} after {} attempt(s){}{}\n", pod.pod,
                         kube::EvictionOutcomeName(pod.outcome), pod.attempts,
                         pod.left_node ? ", gone from the node" : "",
                         pod.message.empty() ? "" : ": " + pod.message);
    }
  }
  return out;
}

std::string ComparisonTable(const Plan& blind, const Plan& aware) {
  std::string out = "Comparison of the two plans for the same input:\n";
  out += fmt::format("  {:<22} {:>10} {:>12} {:>12} {:>9}\n", "plan", "candidates", "drain now",
                     "pods moved", "stranded");
  for (const Plan* plan : {&blind, &aware}) {
    out += fmt::format("  {:<22} {:>10} {:>12} {:>12} {:>9}\n",
                       plan->numa_blind ? "NUMA-blind (CA)" : "qrm (NUMA-aware)",
                       plan->candidates.size(), plan->delete_empty.size() + plan->drain.size(),
                       MoveCount(plan->drain), plan->stranded.size());
  }
  for (const StrandedPod& p : blind.stranded) {
    std::string instead = "stays where it is (qrm does not drain " + p.source + ")";
    for (const NodePlan& node : aware.candidates) {
      for (const PodMove& move : node.moves) {
        if (move.pod == p.pod) {
          instead =
              fmt::format("goes to {} NUMA {} in qrm's plan", move.destination, NumaText(move));
        }
      }
    }
    out += fmt::format("  {} would be refused on {} ({}); it {}\n", p.pod, p.destination, p.reason,
                       instead);
  }
  return out;
}

}  // namespace qrm::cluster::drain
