// File surgery for the corrupted-state tests: the four ways a checkpoint goes bad, and
// finding the files a state directory holds.
#pragma once

#include <string>
#include <vector>

namespace qrm::chaos {

enum class Damage { kTruncated, kBitFlipped, kEmpty, kWrongVersion };
const char* DamageName(Damage d);

// Rewrites `path` damaged as `d` (kWrongVersion: "version" -> 7, checksum still valid). A
// ledger journal (*.journal) is damaged in its header line.
void DamageFile(const std::string& path, Damage d);

// Names of the regular files directly in `dir` (not starting with '.').
std::vector<std::string> FilesIn(const std::string& dir);
// Names of files in `dir` that are moved-aside checkpoints (".corrupt-" or
// ".unsupported-version-" in the name).
std::vector<std::string> MovedAside(const std::string& dir);

// How many lines of `text` contain `needle`.
int CountLines(const std::string& text, const std::string& needle);

}  // namespace qrm::chaos
