// The plugin's checkpoint file on disk: read at start, set aside on --reset-state.
//
// (The NIC plugin has the same two helpers in plugins/nic/state_file.h; they would belong in
// a library shared by the plugins once there is one.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <rapidjson/document.h>

#include "common/status.h"

namespace qrm::memory {

// Reads the checkpoint `data` at `path` (version `version`). Creates the directory on first
// start and removes temp files a crashed write left behind. nullopt when there is no file.
// A corrupt file is an error (kDataLoss) and stays where it is: starting empty could hand out
// memory that running containers hold, so that is the operator's decision (--reset-state).
StatusOr<std::optional<rapidjson::Document>> ReadStateFile(const std::string& path,
                                                           uint32_t version);

// Renames `path` to "<path>.reset-<unix time>" (never over an existing file) so a fresh
// start keeps the evidence; returns the new name.
StatusOr<std::string> SetStateFileAside(const std::string& path);

}  // namespace qrm::memory
