// Checkpoints of the advisor's prediction models (docs/advisor.md, "Checkpoints"): each
// model's learned state (PeakModel::SaveState) in its own file, written at a bounded rate and
// restored at start, so that a restarted advisor does not spend a day relearning its
// histograms.
//
//   <dir>/model-<scope>-<model>.json   a checkpoint file, version 1 (checkpoint_file.h), data:
//     {"scope": "cpu", "model": "koordinator", "saved_at": <unix s>, "state": {...}}
//
// `scope` says which series the model watches: the resource's name ("cpu", "memory") for the
// node's models, another word for others (e.g. "pool"), so that two models of one name keep
// two files. Koordinator's loop checkpoints every minute and writes each model at most every
// 10 minutes: the daemon calls MaybeSave every loop and the checkpointer decides.
//
// A restore never stops the daemon: a missing file, a corrupt one (moved aside, the error
// logged), a state of another configuration (logged) or any other failure leave the model
// fresh, as if the advisor had never run. Not thread-safe: use it from the loop that feeds the
// model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/logger.h>

#include "advisor/predict/peak_model.h"
#include "checkpoint/checkpoint_file.h"
#include "common/status.h"

namespace qrm::advisor {

struct CheckpointerOptions {
  std::string dir;                    // created on the first write if missing
  int64_t save_interval_s = 10 * 60;  // >= 0
  checkpoint::WriteOptions write;     // tests inject faults here
};

// What Restore did; the model is fresh in every case but kRestored.
enum class RestoreOutcome {
  kRestored,
  kMissing,        // no file: the first start, or the model is new in the configuration
  kCorrupt,        // moved aside to <path>.corrupt-<unix-time>
  kConfigChanged,  // learned under other options: left to be overwritten at the next write
  kUnsupported,    // a version this build does not read (a newer qrm's): left in place
  kFailed,         // the file could not be read (an I/O error), or the model has no state
};
std::string_view RestoreOutcomeName(RestoreOutcome outcome);

inline constexpr uint32_t kModelCheckpointVersion = 1;

class ModelCheckpointer {
 public:
  // `model` must outlive the checkpointer. `scope`: letters, digits and '-' (asserted; other
  // characters become '_' in the file name).
  ModelCheckpointer(PeakModel& model, std::string_view scope, CheckpointerOptions options);

  // "<dir>/model-<scope>-<model>.json"; characters of the model's name other than letters,
  // digits, '-', '+' and '.' become '_' (max:a+b is "max_a+b").
  static std::string PathFor(const std::string& dir, std::string_view scope,
                             std::string_view model);
  const std::string& path() const { return path_; }

  // At start, before the model observes a step: restores the model from its file if there is
  // a usable one (see RestoreOutcome) and logs what happened. Temp files of a write that
  // crashed are removed first.
  RestoreOutcome Restore();

  // Writes the model's state if no write was tried yet or the last try is at least the
  // interval old (or in the future: the clock went back); `now` in unix seconds. Returns the
  // write's error (also logged and counted); OK when nothing was due. A failed write waits for
  // the next interval like a good one: a full disk is not retried every loop.
  Status MaybeSave(int64_t now);
  // Writes now, whatever the interval (at shutdown).
  Status Save(int64_t now);

  // For the daemon's metrics.
  uint64_t writes() const { return writes_; }
  uint64_t write_failures() const { return write_failures_; }
  uint64_t corrupt_files() const { return corrupt_files_; }
  std::string_view scope() const { return scope_; }
  std::string_view model_name() const { return model_.name(); }

 private:
  RestoreOutcome ReadFailed(const Status& status);
  Status RestoreFrom(const rapidjson::Value& data, int64_t* saved_at);
  RestoreOutcome StateRefused(const Status& status);
  void RemoveStaleTemps();
  Status Write(int64_t now) const;

  PeakModel& model_;
  std::string scope_;
  CheckpointerOptions options_;
  std::string path_;
  std::shared_ptr<spdlog::logger> log_;
  bool tried_ = false;
  int64_t last_try_ = 0;
  uint64_t writes_ = 0;
  uint64_t write_failures_ = 0;
  uint64_t corrupt_files_ = 0;
};

}  // namespace qrm::advisor
