#include "checkpoint/checkpoint_file.h"

#include <cerrno>
#include <string_view>

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint/canonical_json.h"
#include "checkpoint/checksum.h"
#include "checkpoint/file_io.h"

namespace qrm::checkpoint {
namespace {

constexpr std::string_view kChecksumPrefix = "fnv1a64:";

using file_io::MoveAside;
using file_io::Split;
using file_io::SplitPath;
using file_io::TempPrefix;

// Verifies the parsed document; returns a description of what is wrong, or
// empty if the file is intact. Unsupported versions are reported separately.
std::string FindCorruption(std::string_view content, rapidjson::Document& doc,
                           std::string* computed_checksum) {
  if (content.empty()) return "empty file";
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(content.data(), content.size());
  if (doc.HasParseError()) {
    if (doc.GetErrorOffset() >= content.size()) {
      return fmt::format("truncated: JSON ends early after {} bytes", content.size());
    }
    return fmt::format("invalid JSON at byte {}: {}", doc.GetErrorOffset(),
                       rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return "top level is not a JSON object";
  for (const char* key : {"version", "checksum", "data"}) {
    if (!doc.HasMember(key)) return fmt::format("missing member \"{}\"", key);
  }
  if (doc.MemberCount() != 3) {
    return fmt::format("unexpected members: expected version, checksum and data, found {}",
                       doc.MemberCount());
  }
  if (!doc["version"].IsUint()) return "member \"version\" is not an unsigned integer";
  if (!doc["checksum"].IsString()) return "member \"checksum\" is not a string";
  if (!doc["data"].IsObject()) return "member \"data\" is not an object";
  const std::string_view stored(doc["checksum"].GetString(), doc["checksum"].GetStringLength());
  if (!stored.starts_with(kChecksumPrefix)) {
    return fmt::format("checksum \"{}\" does not use {}", stored, kChecksumPrefix);
  }
  StatusOr<std::string> canonical = CanonicalJson(doc["data"]);
  if (!canonical.ok()) return canonical.status().message();
  *computed_checksum = FormatChecksum(*canonical);
  if (stored != *computed_checksum) {
    return fmt::format("checksum mismatch: stored {}, computed {}", stored, *computed_checksum);
  }
  return {};
}

}  // namespace

const char* WriteStepName(WriteStep step) {
  switch (step) {
    case WriteStep::kCreateTemp: return "create-temp";
    case WriteStep::kWriteTemp: return "write-temp";
    case WriteStep::kSyncTemp: return "sync-temp";
    case WriteStep::kRename: return "rename";
    case WriteStep::kSyncDir: return "sync-dir";
  }
  return "unknown";
}

Status Write(const std::string& path, uint32_t version, const rapidjson::Value& data,
             const WriteOptions& options) {
  if (!data.IsObject()) {
    return InvalidArgumentError(fmt::format("checkpoint {}: data must be a JSON object", path));
  }
  StatusOr<std::string> canonical = CanonicalJson(data);
  if (!canonical.ok()) return canonical.status().WithContext(fmt::format("checkpoint {}", path));
  const std::string content = fmt::format(R"({{"version":{},"checksum":"{}","data":{}}})", version,
                                          FormatChecksum(*canonical), *canonical) +
                              "\n";

  return file_io::ReplaceFile(path, content, options, /*keep_open=*/false).status();
}

StatusOr<Checkpoint> Parse(std::string_view content, const std::string& name,
                           const ReadOptions& options) {
  Checkpoint result;
  std::string computed;
  const std::string problem = FindCorruption(content, result.data, &computed);
  if (!problem.empty()) {
    return DataLossError(fmt::format("checkpoint {}: corrupt: {}", name, problem));
  }
  result.version = result.data["version"].GetUint();
  if (result.version < options.min_version || result.version > options.max_version) {
    return FailedPreconditionError(fmt::format(
        "checkpoint {}: unsupported version {} (this build reads versions {} to {}); it may "
        "have been written by a newer qrm",
        name, result.version, options.min_version, options.max_version));
  }
  result.checksum = std::move(computed);
  // Keep only `data` as the document root; its allocator stays with the document.
  rapidjson::Value data(std::move(result.data["data"]));
  result.data.SetObject();
  static_cast<rapidjson::Value&>(result.data).Swap(data);
  return result;
}

StatusOr<Checkpoint> Read(const std::string& path, const ReadOptions& options) {
  StatusOr<std::string> content = file_io::ReadWholeFile(path, "checkpoint");
  if (!content.ok()) return content.status();
  StatusOr<Checkpoint> parsed = Parse(*content, path, options);
  if (parsed.ok() || !IsCorrupt(parsed.status()) || !options.quarantine_corrupt) return parsed;
  StatusOr<std::string> moved = MoveAside(path);
  return DataLossError(
      parsed.status().message() +
      (moved.ok() ? fmt::format("; moved aside to {}", *moved)
                  : fmt::format("; could not move it aside: {}", moved.status().message())));
}

namespace {

// Removes the entries of `dir` that `is_temp` accepts; returns how many.
template <typename IsTemp>
StatusOr<int> RemoveTemps(const std::string& dir_path, IsTemp&& is_temp) {
  DIR* dir = ::opendir(dir_path.c_str());
  if (dir == nullptr) return ErrnoError(errno, "open directory", dir_path);
  int removed = 0;
  Status status;
  errno = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name(entry->d_name);
    if (!is_temp(name)) continue;
    const std::string full = dir_path + "/" + std::string(name);
    if (::unlink(full.c_str()) != 0 && errno != ENOENT) {
      status = ErrnoError(errno, "remove stale temp file", full);
      break;
    }
    ++removed;
  }
  ::closedir(dir);
  if (!status.ok()) return status;
  return removed;
}

}  // namespace

StatusOr<int> RemoveStaleTempFiles(const std::string& path) {
  const SplitPath parts = Split(path);
  const std::string prefix = TempPrefix(parts);
  return RemoveTemps(parts.dir, [&](std::string_view name) {
    return name.starts_with(prefix) && name.size() == prefix.size() + 6;
  });
}

StatusOr<int> RemoveStaleTempFilesIn(const std::string& dir) {
  // ".<base>.tmp-XXXXXX" with a non-empty base (TempPrefix + mkostemp's 6 characters).
  constexpr std::string_view kInfix = ".tmp-";
  return RemoveTemps(dir, [&](std::string_view name) {
    const size_t at = name.size() >= kInfix.size() + 6 ? name.size() - kInfix.size() - 6 : 0;
    return name.starts_with('.') && at > 1 && name.substr(at, kInfix.size()) == kInfix;
  });
}

}  // namespace qrm::checkpoint
