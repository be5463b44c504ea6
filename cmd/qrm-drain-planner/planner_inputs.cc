#include "cmd/qrm-drain-planner/planner_inputs.h"

#include <iostream>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "checkpoint/file_io.h"
#include "cluster/drain/live_snapshot.h"
#include "cluster/drain/numa_inputs.h"
#include "cluster/drain/planner_state_json.h"
#include "cluster/drain/snapshot_json.h"
#include "common/log.h"

namespace qrm::drain_cmd {
namespace {

using cluster::drain::SnapshotDocument;

StatusOr<SnapshotDocument> ReadDocument(const std::string& path) {
  if (path == "-") {
    std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    return SnapshotDocument{"stdin", std::move(text)};
  }
  QRM_ASSIGN_OR_RETURN(std::string text, checkpoint::file_io::ReadWholeFile(path, "input"));
  return SnapshotDocument{path, std::move(text)};
}

StatusOr<PlannerInput> Decode(const std::vector<SnapshotDocument>& snapshot_docs,
                              const std::vector<SnapshotDocument>& numa_docs,
                              const cluster::drain::DecodeOptions& options) {
  PlannerInput in;
  QRM_ASSIGN_OR_RETURN(in.snapshot, cluster::drain::DecodeSnapshot(snapshot_docs, options));
  QRM_ASSIGN_OR_RETURN(in.numa, cluster::drain::DecodeNumaStates(numa_docs));
  return in;
}

}  // namespace

StatusOr<PlannerInput> ReadPlannerInput(const PlannerConfig& config,
                                        const kube::KubeClient* client) {
  if (!config.inputs.empty()) {
    std::vector<SnapshotDocument> docs;
    for (const std::string& path : config.inputs) {
      QRM_ASSIGN_OR_RETURN(SnapshotDocument doc, ReadDocument(path));
      docs.push_back(std::move(doc));
    }
    // Each file may hold any of the kinds: both decoders read every file.
    return Decode(docs, docs, config.decode);
  }
  QRM_ASSIGN_OR_RETURN(cluster::drain::LiveDocuments live,
                       cluster::drain::ReadLiveDocuments(*client));
  cluster::drain::DecodeOptions options = config.decode;
  options.drop_pods_of_missing_nodes = true;  // a node deleted between the lists
  QRM_ASSIGN_OR_RETURN(PlannerInput in, Decode(live.snapshot, live.topology, options));
  for (auto it = in.numa.begin(); it != in.numa.end();) {
    if (in.snapshot.node_index.contains(it->first)) {
      ++it;
      continue;
    }
    Logger("drain-planner")
        ->warn("node {}: a NodeResourceTopology without its Node; ignored", it->first);
    it = in.numa.erase(it);
  }
  return in;
}

StatusOr<cluster::drain::PlannerState> ReadStateFile(const std::string& path) {
  StatusOr<std::string> text = checkpoint::file_io::ReadWholeFile(path, "state file");
  if (text.status().code() == StatusCode::kNotFound) return cluster::drain::PlannerState{};
  QRM_RETURN_IF_ERROR(text.status());
  return cluster::drain::DecodePlannerState(*text, path);
}

Status WriteStateFile(const std::string& path, const cluster::drain::PlannerState& state) {
  checkpoint::WriteOptions options;
  QRM_ASSIGN_OR_RETURN(int fd, checkpoint::file_io::ReplaceFile(
                                   path, cluster::drain::EncodePlannerState(state), options,
                                   /*keep_open=*/false));
  (void)fd;
  return Status::Ok();
}

}  // namespace qrm::drain_cmd
