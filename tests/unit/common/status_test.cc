#include "common/status.h"

#include <cerrno>
#include <string>

#include <catch2/catch.hpp>

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

}  // namespace
}  // namespace qrm
