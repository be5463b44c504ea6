// Plugin endpoints named in Register must be plain socket names inside the plugin directory
// (qrm/registry/registration_validation.h); symlinks may not lead anywhere else.
#include <cstring>
#include <filesystem>

#include <catch2/catch.hpp>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "qrm/registry/registration_validation.h"
#include "testing/temp_dir.h"

namespace qrm::registry {
namespace {

using Catch::Matchers::Contains;

// Binds a Unix socket file at `path` (nobody needs to listen for the checks here).
void MakeSocket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  REQUIRE(path.size() < sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  ::close(fd);
}

TEST_CASE("endpoints are confined to the plugin directory", "[registry][confinement]") {
  testing::TempDir dir;
  const std::string plugins = dir.File("plugins");
  std::filesystem::create_directories(plugins + "/nested");
  MakeSocket(plugins + "/good.sock");
  MakeSocket(plugins + "/nested/deep.sock");
  MakeSocket(dir.File("outside.sock"));
  testing::WriteFile(plugins + "/file.sock", "not a socket");
  REQUIRE(::symlink("good.sock", (plugins + "/alias.sock").c_str()) == 0);
  REQUIRE(::symlink((plugins + "/nested/deep.sock").c_str(), (plugins + "/down.sock").c_str()) ==
          0);
  REQUIRE(::symlink(dir.File("outside.sock").c_str(), (plugins + "/out.sock").c_str()) == 0);
  REQUIRE(::symlink("../plugins/../outside.sock", (plugins + "/rel.sock").c_str()) == 0);
  REQUIRE(::symlink("missing.sock", (plugins + "/dangling.sock").c_str()) == 0);

  auto good = ResolveEndpoint(plugins, "good.sock");
  REQUIRE(good.ok());
  CHECK(*good == plugins + "/good.sock");
  CHECK(ResolveEndpoint(plugins, "alias.sock").ok());  // a symlink that stays inside

  struct Case {
    std::string endpoint, expected;
  };
  const std::vector<Case> cases = {
      {"", "endpoint \"\" must be a plain socket file name"},
      {".", "endpoint \".\" must be a plain socket file name"},
      {"..", "endpoint \"..\" must be a plain socket file name"},
      {"../outside.sock", "endpoint \"../outside.sock\" must be a plain socket file name"},
      {"nested/deep.sock", "endpoint \"nested/deep.sock\" must be a plain socket file name"},
      {std::string("good.sock\0x", 11), "must be a plain socket file name"},
      {"out.sock", "endpoint \"out.sock\" is a symlink to " + dir.File("outside.sock") +
                       " outside the plugin directory"},
      {"rel.sock", "outside the plugin directory"},
      {"down.sock", "outside the plugin directory"},  // nested is not "inside" either
      {"dangling.sock", "a missing file"},
      {"file.sock", "endpoint \"file.sock\": " + plugins + "/file.sock is not a Unix socket"},
      {std::string(120, 'x'), "is longer than 107 bytes"},
  };
  for (const auto& c : cases) {
    INFO(c.endpoint);
    auto r = ResolveEndpoint(plugins, c.endpoint);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(r.status().message(), Contains(c.expected));
  }
  // A name that simply is not there yet is a precondition, not bad input.
  CHECK(ResolveEndpoint(plugins, "later.sock").status().code() == StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace qrm::registry
