#include "checkpoint/base64.h"

#include <string>

#include <catch2/catch.hpp>

namespace qrm::checkpoint {
namespace {

TEST_CASE("base64 encodes the RFC 4648 test vectors", "[base64]") {
  CHECK(Base64Encode("") == "");
  CHECK(Base64Encode("f") == "Zg==");
  CHECK(Base64Encode("fo") == "Zm8=");
  CHECK(Base64Encode("foo") == "Zm9v");
  CHECK(Base64Encode("foob") == "Zm9vYg==");
  CHECK(Base64Encode("fooba") == "Zm9vYmE=");
  CHECK(Base64Encode("foobar") == "Zm9vYmFy");
}

TEST_CASE("base64 round-trips every byte value including >= 0x80", "[base64]") {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (size_t len = 0; len <= all.size(); len += 37) {
    const std::string slice = all.substr(256 - len);
    auto decoded = Base64Decode(Base64Encode(slice));
    REQUIRE(decoded.ok());
    CHECK(*decoded == slice);
  }
  auto decoded = Base64Decode(Base64Encode(all));
  REQUIRE(decoded.ok());
  CHECK(*decoded == all);
}

TEST_CASE("base64 decoding is strict and names the field", "[base64]") {
  for (const char* bad : {"Zg=", "Zg=a", "Z===", "Zm9v!A==", "Zh==", "Zm9=", "=Zg=", "Zg==Zg=="}) {
    INFO(bad);
    auto decoded = Base64Decode(bad, "pod_entries.p1.blob");
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(decoded.status().message(), Catch::Contains("pod_entries.p1.blob"));
  }
}

}  // namespace
}  // namespace qrm::checkpoint
