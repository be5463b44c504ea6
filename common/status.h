// Status and StatusOr: the error currency of every qrm library.
//
// Public APIs return a Status (or StatusOr<T>) instead of throwing, so callers
// decide what a failure means. Codes mirror gRPC's canonical codes so that a
// Status crosses an RPC boundary without translation tables.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace qrm {

enum class StatusCode {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "INVALID_ARGUMENT: cpuset \"3-1\": range start 3 is above its end 1"
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgumentError(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFoundError(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
inline Status AlreadyExistsError(std::string m) {
  return {StatusCode::kAlreadyExists, std::move(m)};
}
inline Status FailedPreconditionError(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status OutOfRangeError(std::string m) {
  return {StatusCode::kOutOfRange, std::move(m)};
}
inline Status InternalError(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}
inline Status UnavailableError(std::string m) {
  return {StatusCode::kUnavailable, std::move(m)};
}
inline Status DataLossError(std::string m) {
  return {StatusCode::kDataLoss, std::move(m)};
}
inline Status DeadlineExceededError(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status PermissionDeniedError(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status ResourceExhaustedError(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status UnimplementedError(std::string m) {
  return {StatusCode::kUnimplemented, std::move(m)};
}

// Builds a Status from errno for a failed system call on `what` (a path or name):
// "open /var/lib/qrm/x: Permission denied". ENOENT maps to kNotFound, EACCES/EPERM/EROFS
// to kPermissionDenied, ENOSPC/EDQUOT to kResourceExhausted, everything else to kInternal.
Status ErrnoError(int err, std::string_view operation, std::string_view what);

namespace status_internal {
// Reading the value of a StatusOr that holds an error is a bug in the caller. It ends the
// process in every build type, printing the error, instead of being undefined behaviour
// where NDEBUG removes an assert.
[[noreturn]] void DieOnValueOfError(const Status& status);
}  // namespace status_internal

// StatusOr<T> holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const T& value) : value_(value) {}             // NOLINT(google-explicit-constructor)
  StatusOr(T&& value) : value_(std::move(value)) {}       // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.ok() && "StatusOr built from an OK status without a value");
    if (status_.ok())
      status_ = InternalError("StatusOr constructed from OK status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // Checked in every build: on an error these print it and abort.
  T& value() & {
    CheckHasValue();
    return *value_;
  }
  const T& value() const& {
    CheckHasValue();
    return *value_;
  }
  T&& value() && {
    CheckHasValue();
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void CheckHasValue() const {
    if (!value_.has_value()) [[unlikely]]
      status_internal::DieOnValueOfError(status_);
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace qrm

// Propagates a non-OK Status to the caller.
#define QRM_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::qrm::Status qrm_status_ = (expr);        \
    if (!qrm_status_.ok()) return qrm_status_; \
  } while (0)

// Declares or assigns `lhs` from the value of the StatusOr `expr`, or returns its error:
//   QRM_ASSIGN_OR_RETURN(auto topology, Discover(options));
//   QRM_ASSIGN_OR_RETURN(config.limit, ParseLimit(text));
// `lhs` may not contain an unparenthesised comma (declare the variable first instead).
#define QRM_ASSIGN_OR_RETURN(lhs, expr) \
  QRM_ASSIGN_OR_RETURN_IMPL_(QRM_STATUS_CONCAT_(qrm_status_or_, __LINE__), lhs, expr)

#define QRM_ASSIGN_OR_RETURN_IMPL_(result, lhs, expr) \
  auto result = (expr);                               \
  if (!result.ok()) return result.status();           \
  lhs = std::move(result).value()

#define QRM_STATUS_CONCAT_INNER_(a, b) a##b
#define QRM_STATUS_CONCAT_(a, b) QRM_STATUS_CONCAT_INNER_(a, b)
