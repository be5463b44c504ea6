// The errors of a whole input, collected so that one message names every problem an operator
// has to fix (up to kMaxReportedErrors of them), instead of one per run.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cluster/drain/snapshot_json.h"
#include "common/status.h"

namespace qrm::cluster::drain {

// Collects the errors of a whole input; the first kMaxReportedErrors are kept verbatim.
class ErrorList {
 public:
  void Add(const Status& s) {
    if (s.ok()) return;
    ++total_;
    if (messages_.size() < kMaxReportedErrors) messages_.push_back(s.message());
  }
  bool empty() const { return total_ == 0; }
  Status Result() const {
    if (total_ == 0) return Status::Ok();
    if (total_ == 1) return InvalidArgumentError(messages_[0]);
    std::string m = fmt::format("{} errors: ", total_);
    for (size_t i = 0; i < messages_.size(); ++i) m += (i ? "; " : "") + messages_[i];
    if (total_ > messages_.size()) m += fmt::format("; and {} more", total_ - messages_.size());
    return InvalidArgumentError(std::move(m));
  }

 private:
  size_t total_ = 0;
  std::vector<std::string> messages_;
};

}  // namespace qrm::cluster::drain
