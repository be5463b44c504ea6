// Small helpers for reading sysfs/procfs-style files. Internal to machine (used by
// discovery and the NIC readers); every error names the file and, for parse errors, the
// value that did not parse.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cpu_set.h"
#include "common/status.h"

namespace qrm::machine::sysfs {

// The whole file. Missing files are kNotFound ("read <path>: No such file or directory").
StatusOr<std::string> ReadFile(const std::string& path);
// The file with the trailing newline removed (TrimSysfsValue).
StatusOr<std::string> ReadValue(const std::string& path);
// Like ReadValue, but a missing file (ENOENT, ENOTDIR) is std::nullopt rather than an error.
StatusOr<std::optional<std::string>> ReadOptionalValue(const std::string& path);

// Parse errors read "<path>: value \"<text>\" is not <what>".
StatusOr<int64_t> ParseInt(const std::string& path, std::string_view text);
StatusOr<uint64_t> ParseUint(const std::string& path, std::string_view text);
// "<path>: cpu list \"0-x\": ..." (the CpuSet parser's message with the path in front).
StatusOr<CpuSet> ParseCpuList(const std::string& path, std::string_view text);
// Node ids below 64, ascending.
StatusOr<std::vector<int>> ParseNodeList(const std::string& path, std::string_view text);

// Read + parse in one step.
StatusOr<int64_t> ReadInt(const std::string& path);
StatusOr<uint64_t> ReadUint(const std::string& path);
StatusOr<CpuSet> ReadCpuList(const std::string& path);

bool Exists(const std::string& path);       // follows symlinks
bool IsDirectory(const std::string& path);  // follows symlinks
// Entry names of a directory, sorted; a missing directory is an empty list, other failures
// are errors naming the directory.
StatusOr<std::vector<std::string>> ListDir(const std::string& path);

}  // namespace qrm::machine::sysfs
