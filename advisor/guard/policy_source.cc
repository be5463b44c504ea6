#include "advisor/guard/policy_source.h"

#include <cerrno>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace qrm::advisor::guard {
namespace {

// A policy is a few kB; anything this large is not one, and is not read into memory.
constexpr int64_t kMaxPolicyBytes = 1 << 20;

StatusOr<struct stat> StatFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ErrnoError(errno, "stat", path);
  return st;
}

StatusOr<std::string> ReadWhole(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open", path);
  std::string content;
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoError(err, "read", path);
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(content.size()) > kMaxPolicyBytes) {
      ::close(fd);
      return InvalidArgumentError(
          fmt::format("{}: larger than {} bytes: not a guard policy", path, kMaxPolicyBytes));
    }
  }
  ::close(fd);
  return content;
}

}  // namespace

PolicySource::Stamp PolicySource::StampOf(const struct stat& st) {
  return Stamp{static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
               static_cast<int64_t>(st.st_size), static_cast<uint64_t>(st.st_ino)};
}

PolicySource::PolicySource(std::string path) : path_(std::move(path)) {}

Status PolicySource::Load() {
  auto st = StatFile(path_);
  if (!st.ok()) return st.status().WithContext("guard policy");
  auto content = ReadWhole(path_);
  if (!content.ok()) return content.status().WithContext("guard policy");
  auto policy = ParseGuardPolicy(*content);
  if (!policy.ok()) return policy.status().WithContext(fmt::format("guard policy {}", path_));
  policy_ = std::move(*policy);
  good_content_ = std::move(*content);
  stamp_ = StampOf(*st);
  loaded_ = true;
  bad_.reset();
  return Status::Ok();
}

PolicyReload PolicySource::Reload() {
  auto st = StatFile(path_);
  if (!st.ok()) return Reject("error:" + st.status().ToString(), st.status());
  const Stamp stamp = StampOf(*st);
  if (stamp_ && *stamp_ == stamp) {
    return bad_ ? PolicyReload{ReloadResult::kStillRejected, bad_error_} : PolicyReload{};
  }
  auto content = ReadWhole(path_);
  if (!content.ok()) return Reject("error:" + content.status().ToString(), content.status());
  stamp_ = stamp;
  if (loaded_ && *content == good_content_) {
    bad_.reset();
    return {};
  }
  auto policy = ParseGuardPolicy(*content);
  if (!policy.ok()) return Reject("content:" + *content, policy.status());
  bad_.reset();
  good_content_ = std::move(*content);
  if (loaded_ && *policy == policy_) return {};
  loaded_ = true;
  policy_ = std::move(*policy);
  return {ReloadResult::kApplied, Status::Ok()};
}

PolicyReload PolicySource::Reject(std::string key, const Status& error) {
  if (bad_ && *bad_ == key) return {ReloadResult::kStillRejected, bad_error_};
  bad_ = std::move(key);
  bad_error_ = Status(error.code(), fmt::format("guard policy {}: {}: {}", path_,
                                                loaded_ ? "kept the last good policy" : "no policy",
                                                error.message()));
  return {ReloadResult::kRejected, bad_error_};
}

}  // namespace qrm::advisor::guard
