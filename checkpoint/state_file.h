// A component's own checkpoint file on disk (each plugin's state): read at start, and what to
// do when it cannot be used.
//
// Policy, shared by every plugin so operators see one behaviour:
//   - no file: start empty;
//   - unreadable (empty, truncated, bit-flipped, not JSON, or another schema version), or
//     readable but malformed inside (the restore callback says kDataLoss): the file is renamed
//     to "<path>.corrupt-<unix time>", one error line and the metric
//     qrm_checkpoint_corrupt_total{component} say so, and the component starts empty. The host
//     holds every running container's allocation and replays it to a plugin that lost it
//     (annotation qrm.io/previous-allocation, common/protocol_keys.h), so nothing is
//     lost; refusing to start would stop every container start on the node instead;
//   - readable but written for another machine (kFailedPrecondition / kResourceExhausted from
//     the callback: other NUMA nodes, a larger reservation): an error that names the way out,
//     unless `reset_state` (the operator's --reset-state), which sets it aside as
//     "<path>.reset-<unix time>" and starts empty.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "common/log.h"
#include "common/status.h"

namespace qrm::checkpoint {

struct StateFileOptions {
  std::string component;  // for the log line and the metric label, e.g. "cpu-plugin"
  uint32_t version = 1;   // the `data` schema version this component writes
  // The oldest version it still reads (upgrades); 0: `version` only.
  uint32_t oldest_version = 0;
  bool reset_state = false;
};

struct StateFileLoad {
  bool restored = false;  // a file was read and the callback accepted it
  bool corrupt = false;   // the file was unusable and was moved aside
  std::string set_aside;  // where a corrupt or reset file went; "" if none
  std::string problem;    // why it was set aside (names the file and the key)
};

// Applies checkpoint `data` to the component's (fresh) state. It must leave the state
// untouched on error (restore into a copy, commit on success).
using RestoreStateFn = std::function<Status(const rapidjson::Value& data)>;

// Loads `path` per the policy above. Creates the directory on first start and removes temp
// files a crashed write left behind. Errors: I/O failures, a file for another machine without
// reset_state, or a file that could not be moved aside.
StatusOr<StateFileLoad> LoadStateFile(const std::string& path, const StateFileOptions& options,
                                      const RestoreStateFn& restore);

// LoadStateFile for a component that reads several versions (oldest_version to version):
// `restore` is told the version of the file it is given.
using RestoreVersionedStateFn =
    std::function<Status(const rapidjson::Value& data, uint32_t version)>;
StatusOr<StateFileLoad> LoadVersionedStateFile(const std::string& path,
                                               const StateFileOptions& options,
                                               const RestoreVersionedStateFn& restore);

// LoadStateFile for a component whose state is one value that
// `restore(data, State& state, std::vector<std::string>* warnings)` fills in: restores into a
// copy of `state` (fresh: built from the machine and the configuration only) and commits the
// copy only on success, so a refused file leaves `state` as it was; warnings are logged.
template <typename State, typename Restore>
StatusOr<StateFileLoad> LoadStateFileInto(const std::string& path, const StateFileOptions& options,
                                          State& state, Restore restore) {
  return LoadStateFile(path, options, [&](const rapidjson::Value& data) -> Status {
    State restored = state;
    std::vector<std::string> warnings;
    QRM_RETURN_IF_ERROR(restore(data, restored, &warnings));
    state = std::move(restored);
    for (const std::string& w : warnings) {
      Logger(options.component)->warn("checkpoint {}: {}", path, w);
    }
    return Status::Ok();
  });
}

// Renames `path` to "<path>.<reason>-<unix time>" (never over an existing file) so a fresh
// start keeps the evidence; returns the new name.
StatusOr<std::string> SetStateFileAside(const std::string& path, const std::string& reason);

}  // namespace qrm::checkpoint
