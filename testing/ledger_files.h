// Reading a plugin's ledger files (plugins/sdk/pod_ledger.h) in tests: the snapshot's data
// with the members the plugin adds for operators, one entry as the snapshot and the journal
// hold it together, and both files' bytes to show that a refused call wrote nothing.
// Header-only: tests that use it link the SDK anyway.
#pragma once

#include <cstdint>
#include <string>

#include <rapidjson/document.h>

#include "checkpoint/checkpoint_file.h"
#include "common/status.h"
#include "plugins/sdk/pod_ledger.h"
#include "testing/temp_dir.h"

namespace qrm::testing {

// The snapshot's `data` (call the plugin's WriteSnapshot first for a current view).
inline StatusOr<rapidjson::Document> LedgerSnapshotData(const std::string& path) {
  checkpoint::ReadOptions read;
  read.max_version = UINT32_MAX;
  read.quarantine_corrupt = false;
  QRM_ASSIGN_OR_RETURN(checkpoint::Checkpoint cp, checkpoint::Read(path, read));
  return std::move(cp.data);
}

// One container's entry now (snapshot and journal); a null document when none is held.
inline StatusOr<rapidjson::Document> LedgerEntry(const std::string& path, const std::string& uid,
                                                 const std::string& container) {
  QRM_ASSIGN_OR_RETURN(const sdk::EncodedLedger ledger, sdk::ReadLedger(path));
  rapidjson::Document entry;
  const auto pod = ledger.pods.find(uid);
  if (pod == ledger.pods.end() || pod->second.count(container) == 0) return entry;
  entry.Parse(pod->second.at(container).c_str());
  return entry;
}

// Both files' bytes.
inline std::string LedgerFileBytes(const std::string& path) {
  return ReadFile(path) + "\n--journal--\n" + ReadFile(path + ".journal");
}

}  // namespace qrm::testing
