#include "common/status.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

namespace qrm {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("Status basics", "[status]") {
  const Status ok;
  CHECK(ok.ok());
  CHECK(ok.code() == StatusCode::kOk);
  CHECK(ok.ToString() == "OK");
  CHECK(ok == Status::Ok());

  const Status err = InvalidArgumentError("bad thing");
  CHECK_FALSE(err.ok());
  CHECK(err.code() == StatusCode::kInvalidArgument);
  CHECK(err.message() == "bad thing");
  CHECK(err.ToString() == "INVALID_ARGUMENT: bad thing");
  CHECK(err != ok);
  CHECK(NotFoundError("x").ToString() == "NOT_FOUND: x");
  CHECK(StatusCodeName(StatusCode::kResourceExhausted) == "RESOURCE_EXHAUSTED");
}

TEST_CASE("Status::WithContext", "[status]") {
  const Status err = NotFoundError("no such pod");
  const Status wrapped = err.WithContext("allocate pod-1");
  CHECK(wrapped.code() == StatusCode::kNotFound);
  CHECK(wrapped.message() == "allocate pod-1: no such pod");
  CHECK(wrapped.ToString() == "NOT_FOUND: allocate pod-1: no such pod");
  CHECK(Status::Ok().WithContext("anything").ok());
  CHECK(Status::Ok().WithContext("anything").message().empty());
}

TEST_CASE("ErrnoError maps errno to codes", "[status]") {
  CHECK(ErrnoError(ENOENT, "open", "/x").code() == StatusCode::kNotFound);
  CHECK(ErrnoError(EACCES, "open", "/x").code() == StatusCode::kPermissionDenied);
  CHECK(ErrnoError(EPERM, "open", "/x").code() == StatusCode::kPermissionDenied);
  CHECK(ErrnoError(EROFS, "open", "/x").code() == StatusCode::kPermissionDenied);
  CHECK(ErrnoError(ENOSPC, "write", "/x").code() == StatusCode::kResourceExhausted);
  CHECK(ErrnoError(EDQUOT, "write", "/x").code() == StatusCode::kResourceExhausted);
  CHECK(ErrnoError(EIO, "read", "/x").code() == StatusCode::kInternal);

  const Status s = ErrnoError(EACCES, "open", "/var/lib/qrm/x");
  CHECK_THAT(s.message(), StartsWith("open /var/lib/qrm/x: "));
  CHECK_THAT(s.message(), Contains("ermission denied"));
}

TEST_CASE("StatusOr holds a value or an error", "[status]") {
  StatusOr<int> v = 5;
  REQUIRE(v.ok());
  CHECK(*v == 5);
  CHECK(v.status().ok());

  StatusOr<std::string> e = InvalidArgumentError("nope");
  CHECK_FALSE(e.ok());
  CHECK(e.status().code() == StatusCode::kInvalidArgument);

  StatusOr<std::string> s = std::string("abc");
  CHECK(s->size() == 3);
  const std::string moved = std::move(s).value();
  CHECK(moved == "abc");
}

StatusOr<int> ParseDigit(char c) {
  if (c < '0' || c > '9') return InvalidArgumentError(std::string("digit \"") + c + "\"");
  return c - '0';
}

StatusOr<int> SumOfDigits(const std::string& text) {
  int sum = 0;
  for (char c : text) {
    QRM_ASSIGN_OR_RETURN(const int digit, ParseDigit(c));
    sum += digit;
  }
  return sum;
}

Status StoreDigit(char c, std::unique_ptr<int>& out) {
  QRM_ASSIGN_OR_RETURN(const int digit, ParseDigit(c));
  QRM_ASSIGN_OR_RETURN(out, StatusOr<std::unique_ptr<int>>(std::make_unique<int>(digit)));
  return Status::Ok();
}

TEST_CASE("QRM_ASSIGN_OR_RETURN declares, assigns, or returns the error", "[status]") {
  auto sum = SumOfDigits("123");
  REQUIRE(sum.ok());
  CHECK(*sum == 6);

  auto bad = SumOfDigits("1x3");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status() == InvalidArgumentError("digit \"x\""));

  std::unique_ptr<int> stored;
  REQUIRE(StoreDigit('7', stored).ok());
  REQUIRE(stored != nullptr);
  CHECK(*stored == 7);  // a move-only value is moved into an existing variable
  stored.reset();
  CHECK(StoreDigit('y', stored).code() == StatusCode::kInvalidArgument);
  CHECK(stored == nullptr);  // nothing assigned on an error
}

// Runs `body` in a child process with its stderr in a pipe; returns the wait status and
// what the child printed.
std::pair<int, std::string> RunInChild(void (*body)()) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    body();
    _exit(0);
  }
  close(fds[1]);
  std::string output;
  char buffer[512];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) output.append(buffer, n);
  close(fds[0]);
  int wait_status = 0;
  REQUIRE(waitpid(pid, &wait_status, 0) == pid);
  return {wait_status, output};
}

TEST_CASE("StatusOr::value() on an error aborts in every build, naming the error", "[status]") {
  // No assert involved: this test runs in the release (NDEBUG) build too.
  auto [wait_status, output] = RunInChild([] {
    StatusOr<int> e = NotFoundError("no such pod \"web\"");
    std::printf("%d", *e);
  });
  REQUIRE(WIFSIGNALED(wait_status));
  CHECK(WTERMSIG(wait_status) == SIGABRT);
  CHECK_THAT(output,
             Contains("StatusOr::value() read on an error: NOT_FOUND: no such pod \"web\""));

  auto [ok_status, ok_output] = RunInChild([] {
    StatusOr<int> v = 3;
    if (*v != 3) std::abort();
  });
  CHECK(WIFEXITED(ok_status));
  CHECK(WEXITSTATUS(ok_status) == 0);
  CHECK(ok_output.empty());
}

}  // namespace
}  // namespace qrm
