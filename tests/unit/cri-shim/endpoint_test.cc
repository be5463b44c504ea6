// ParseEndpoint: the two spellings of a CRI endpoint, and everything else refused by name.
#include "cri-shim/endpoint.h"

#include <catch2/catch.hpp>

namespace qrm::shim {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("A plain path and a unix:// URL name the same socket", "[cri_shim][endpoint]") {
  auto plain = ParseEndpoint("--runtime-endpoint", "/run/containerd/containerd.sock");
  auto url = ParseEndpoint("--runtime-endpoint", "unix:///run/containerd/containerd.sock");
  REQUIRE(plain.ok());
  REQUIRE(url.ok());
  CHECK(plain->path == "/run/containerd/containerd.sock");
  CHECK(plain->target == "unix:///run/containerd/containerd.sock");
  CHECK(url->path == plain->path);
  CHECK(url->target == plain->target);
}

TEST_CASE("Other endpoint spellings are refused naming the flag and the value",
          "[cri_shim][endpoint]") {
  for (const char* bad : {"", "relative.sock", "unix://relative.sock", "unix:", "tcp://1.2.3.4:10",
                          "npipe:////./pipe/x", "unix://"}) {
    INFO(bad);
    auto e = ParseEndpoint("--cri-socket", bad);
    REQUIRE_FALSE(e.ok());
    CHECK(e.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(e.status().message(),
               Contains("--cri-socket") && Contains(std::string("\"") + bad + "\""));
  }
}

}  // namespace
}  // namespace qrm::shim
