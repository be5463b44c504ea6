#include "checkpoint/state_file.h"

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>
#include <unistd.h>

#include "checkpoint/checkpoint_file.h"
#include "common/log.h"
#include "common/metrics/metrics.h"

namespace qrm::checkpoint {
namespace {

// A file for another machine: only the operator may throw it away.
bool ForAnotherMachine(const Status& s) {
  return s.code() == StatusCode::kFailedPrecondition || s.code() == StatusCode::kResourceExhausted;
}

StatusOr<StateFileLoad> MoveCorruptAside(const std::string& path, const StateFileOptions& options,
                                         const Status& problem) {
  StatusOr<std::string> aside = SetStateFileAside(path, "corrupt");
  if (!aside.ok()) {
    return aside.status().WithContext(
        fmt::format("state file {} is unusable ({})", path, problem.message()));
  }
  metrics::Default()
      .GetCounter("qrm_checkpoint_corrupt_total",
                  "Checkpoint files found unusable at start and moved aside",
                  {{"component", options.component}})
      .Inc();
  Logger(options.component)
      ->error(
          "state file unusable, moved to {} and starting empty; the host replays the "
          "allocations of running containers: {}",
          *aside, problem.message());
  StateFileLoad load;
  load.corrupt = true;
  load.set_aside = *aside;
  load.problem = problem.message();
  return load;
}

}  // namespace

StatusOr<StateFileLoad> LoadStateFile(const std::string& path, const StateFileOptions& options,
                                      const RestoreStateFn& restore) {
  return LoadVersionedStateFile(
      path, options, [&](const rapidjson::Value& data, uint32_t) { return restore(data); });
}

StatusOr<StateFileLoad> LoadVersionedStateFile(const std::string& path,
                                               const StateFileOptions& options,
                                               const RestoreVersionedStateFn& restore) {
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) return ErrnoError(ec.value(), "create state directory", dir.string());
  if (auto removed = RemoveStaleTempFiles(path); !removed.ok()) return removed.status();

  ReadOptions read;
  read.min_version = options.oldest_version == 0 ? options.version : options.oldest_version;
  read.max_version = options.version;
  read.quarantine_corrupt = false;  // moved aside below, with our own name and log line
  StatusOr<Checkpoint> cp = Read(path, read);
  if (!cp.ok()) {
    if (IsMissing(cp.status())) {
      Logger(options.component)->info("no state file {}: starting empty", path);
      return StateFileLoad{};
    }
    if (IsCorrupt(cp.status()) || IsUnsupportedVersion(cp.status())) {
      return MoveCorruptAside(path, options, cp.status());
    }
    return cp.status();
  }

  const Status restored = restore(cp->data, cp->version);
  if (restored.ok()) {
    StateFileLoad load;
    load.restored = true;
    return load;
  }
  const Status problem = restored.WithContext(fmt::format("state file {}", path));
  if (problem.code() == StatusCode::kDataLoss) return MoveCorruptAside(path, options, problem);
  if (!ForAnotherMachine(problem)) return problem;
  if (!options.reset_state) {
    if (problem.message().find("--reset-state") != std::string::npos) return problem;
    return Status(problem.code(), fmt::format("{} (start once with --reset-state to set the "
                                              "state file aside and start empty)",
                                              problem.message()));
  }
  StatusOr<std::string> aside = SetStateFileAside(path, "reset");
  if (!aside.ok()) return aside.status();
  Logger(options.component)
      ->warn("{}; --reset-state: moved it to {} and starting empty", problem.message(), *aside);
  StateFileLoad load;
  load.set_aside = *aside;
  load.problem = problem.message();
  return load;
}

StatusOr<std::string> SetStateFileAside(const std::string& path, const std::string& reason) {
  const long now = static_cast<long>(std::time(nullptr));
  std::string target = fmt::format("{}.{}-{}", path, reason, now);
  for (int n = 1; ::access(target.c_str(), F_OK) == 0; ++n) {
    target = fmt::format("{}.{}-{}-{}", path, reason, now, n);
  }
  if (::rename(path.c_str(), target.c_str()) != 0) {
    return ErrnoError(errno, "rename", path + " to " + target);
  }
  return target;
}

}  // namespace qrm::checkpoint
