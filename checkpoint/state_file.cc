#include "checkpoint/state_file.h"

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>
#include <unistd.h>

#include "checkpoint/checkpoint_file.h"

namespace qrm::checkpoint {

StatusOr<std::optional<rapidjson::Document>> ReadStateFile(const std::string& path,
                                                           uint32_t version) {
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) return ErrnoError(ec.value(), "create state directory", dir.string());
  if (auto removed = RemoveStaleTempFiles(path); !removed.ok()) {
    return removed.status();
  }
  ReadOptions options;
  options.min_version = version;
  options.max_version = version;
  options.quarantine_corrupt = false;
  StatusOr<Checkpoint> cp = Read(path, options);
  if (!cp.ok()) {
    if (IsMissing(cp.status())) return std::optional<rapidjson::Document>();
    return cp.status();
  }
  return std::optional<rapidjson::Document>(std::move(cp->data));
}

StatusOr<std::string> SetStateFileAside(const std::string& path) {
  const long now = static_cast<long>(std::time(nullptr));
  std::string target = fmt::format("{}.reset-{}", path, now);
  for (int n = 1; ::access(target.c_str(), F_OK) == 0; ++n) {
    target = fmt::format("{}.reset-{}-{}", path, now, n);
  }
  if (::rename(path.c_str(), target.c_str()) != 0) {
    return ErrnoError(errno, "rename", path + " to " + target);
  }
  return target;
}

}  // namespace qrm::checkpoint
