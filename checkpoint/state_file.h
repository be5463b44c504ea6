// A component's own checkpoint file on disk (the memory and NIC plugins' state): read at
// start, set aside on an operator's --reset-state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <rapidjson/document.h>

#include "common/status.h"

namespace qrm::checkpoint {

// Reads the checkpoint `data` at `path` (exactly version `version`). Creates the directory on
// first start and removes temp files a crashed write left behind. nullopt when there is no
// file. A corrupt file is an error (kDataLoss) and stays where it is: starting empty could hand
// out resources that running containers hold, so that is the operator's decision.
StatusOr<std::optional<rapidjson::Document>> ReadStateFile(const std::string& path,
                                                           uint32_t version);

// Renames `path` to "<path>.reset-<unix time>" (never over an existing file) so a fresh
// start keeps the evidence; returns the new name.
StatusOr<std::string> SetStateFileAside(const std::string& path);

}  // namespace qrm::checkpoint
