#include "advisor/state/model_checkpointer.h"

#include <cassert>
#include <cstdint>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "advisor/predict/model_state.h"
#include "checkpoint/file_io.h"
#include "common/log.h"
#include "common/quote.h"

namespace qrm::advisor {
namespace {

bool IsNameChar(char c, std::string_view also) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         also.find(c) != std::string_view::npos;
}

std::string FileNamePart(std::string_view text, std::string_view also) {
  std::string out(text);
  for (char& c : out) {
    if (!IsNameChar(c, also)) c = '_';
  }
  return out;
}

}  // namespace

std::string_view RestoreOutcomeName(RestoreOutcome outcome) {
  switch (outcome) {
    case RestoreOutcome::kRestored: return "restored";
    case RestoreOutcome::kMissing: return "missing";
    case RestoreOutcome::kCorrupt: return "corrupt";
    case RestoreOutcome::kConfigChanged: return "config-changed";
    case RestoreOutcome::kUnsupported: return "unsupported";
    case RestoreOutcome::kFailed: return "failed";
  }
  return "failed";
}

ModelCheckpointer::ModelCheckpointer(PeakModel& model, std::string_view scope,
                                     CheckpointerOptions options)
    : model_(model),
      scope_(scope),
      options_(std::move(options)),
      path_(PathFor(options_.dir, scope_, model_.name())),
      log_(Logger("advisor-checkpoint")) {
  assert(!scope_.empty() && FileNamePart(scope_, "-") == scope_);
}

std::string ModelCheckpointer::PathFor(const std::string& dir, std::string_view scope,
                                       std::string_view model) {
  return fmt::format("{}/model-{}-{}.json", dir, FileNamePart(scope, "-"),
                     FileNamePart(model, "-+."));
}

void ModelCheckpointer::RemoveStaleTemps() {
  const StatusOr<int> removed = checkpoint::RemoveStaleTempFiles(path_);
  if (removed.ok() && *removed > 0) {
    log_->info("scope={} model={}: removed {} temp files of an interrupted write", scope_,
               model_.name(), *removed);
  }
  // An error here (most often: no directory yet) is the read's to report.
}

RestoreOutcome ModelCheckpointer::Restore() {
  RemoveStaleTemps();
  checkpoint::ReadOptions read;
  read.min_version = read.max_version = kModelCheckpointVersion;
  read.quarantine_corrupt = true;
  StatusOr<checkpoint::Checkpoint> file = checkpoint::Read(path_, read);
  if (!file.ok()) return ReadFailed(file.status());
  int64_t saved_at = 0;
  const Status restored = RestoreFrom(file->data, &saved_at);
  if (!restored.ok()) return StateRefused(restored);
  log_->info("scope={} model={}: restored from {} (saved at {})", scope_, model_.name(), path_,
             saved_at);
  return RestoreOutcome::kRestored;
}

RestoreOutcome ModelCheckpointer::ReadFailed(const Status& status) {
  if (checkpoint::IsMissing(status)) {
    log_->info("scope={} model={}: no checkpoint at {}: starting afresh", scope_, model_.name(),
               path_);
    return RestoreOutcome::kMissing;
  }
  if (checkpoint::IsCorrupt(status)) {
    ++corrupt_files_;
    log_->error("scope={} model={}: {}: starting afresh", scope_, model_.name(), status.message());
    return RestoreOutcome::kCorrupt;
  }
  if (checkpoint::IsUnsupportedVersion(status)) {
    log_->warn("scope={} model={}: {}: starting afresh", scope_, model_.name(), status.message());
    return RestoreOutcome::kUnsupported;
  }
  log_->error("scope={} model={}: cannot read the checkpoint: {}: starting afresh", scope_,
              model_.name(), status.message());
  return RestoreOutcome::kFailed;
}

Status ModelCheckpointer::RestoreFrom(const rapidjson::Value& data, int64_t* saved_at) {
  QRM_ASSIGN_OR_RETURN(const StateReader in, StateReader::Of(data, "data"));
  QRM_RETURN_IF_ERROR(in.OnlyMembers({"scope", "model", "saved_at", "state"}));
  QRM_ASSIGN_OR_RETURN(const std::string scope, in.String("scope"));
  QRM_ASSIGN_OR_RETURN(const std::string model, in.String("model"));
  QRM_RETURN_IF_ERROR(in.Time("saved_at", saved_at));
  if (scope != scope_) return Malformed(in.PathOf("scope"), data["scope"], Quote(scope_));
  if (model != model_.name()) {
    return Malformed(in.PathOf("model"), data["model"], Quote(model_.name()));
  }
  QRM_ASSIGN_OR_RETURN(const StateReader state, in.Object("state"));
  return model_.RestoreState(state.value());
}

RestoreOutcome ModelCheckpointer::StateRefused(const Status& status) {
  if (status.code() == StatusCode::kFailedPrecondition) {
    log_->warn("scope={} model={}: {}: {}; starting this model afresh", scope_, model_.name(),
               path_, status.message());
    return RestoreOutcome::kConfigChanged;
  }
  if (status.code() != StatusCode::kDataLoss) {  // e.g. a model without a state
    log_->error("scope={} model={}: {}: {}; starting afresh", scope_, model_.name(), path_,
                status.message());
    return RestoreOutcome::kFailed;
  }
  // A file whose checksum holds but whose state does not (a bug, a hand edit): moved aside
  // like a corrupt one, so that the evidence survives the next write.
  ++corrupt_files_;
  const StatusOr<std::string> moved = checkpoint::file_io::MoveAside(path_);
  log_->error("scope={} model={}: checkpoint {}: corrupt: {}; {}; starting afresh", scope_,
              model_.name(), path_, status.message(),
              moved.ok() ? fmt::format("moved aside to {}", *moved)
                         : fmt::format("could not move it aside: {}", moved.status().message()));
  return RestoreOutcome::kCorrupt;
}

Status ModelCheckpointer::MaybeSave(int64_t now) {
  const bool due = !tried_ || now - last_try_ >= options_.save_interval_s || now < last_try_;
  if (!due) return Status::Ok();
  return Save(now);
}

Status ModelCheckpointer::Save(int64_t now) {
  tried_ = true;
  last_try_ = now;
  Status status = Write(now);
  if (!status.ok()) {
    ++write_failures_;
    log_->error("scope={} model={}: cannot write the checkpoint: {}", scope_, model_.name(),
                status.message());
    return status;
  }
  ++writes_;
  log_->debug("scope={} model={}: wrote {}", scope_, model_.name(), path_);
  return Status::Ok();
}

Status ModelCheckpointer::Write(int64_t now) const {
  rapidjson::Document data(rapidjson::kObjectType);
  JsonAllocator& a = data.GetAllocator();
  rapidjson::Value state;
  QRM_RETURN_IF_ERROR(model_.SaveState(state, a));
  data.AddMember("scope", StringValue(scope_, a), a);
  data.AddMember("model", StringValue(model_.name(), a), a);
  data.AddMember("saved_at", now, a);
  data.AddMember("state", state, a);
  std::error_code ec;
  if (!std::filesystem::create_directories(options_.dir, ec) && ec) {
    return ErrnoError(ec.value(), "create directory", options_.dir);
  }
  return checkpoint::Write(path_, kModelCheckpointVersion, data, options_.write);
}

}  // namespace qrm::advisor
