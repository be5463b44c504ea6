// The host's sockets: modes of the sockets and the directories it creates, SO_PEERCRED
// allowlists on the registration socket (a real client process running as another user),
// the refusal metric, and the flags that configure all of it.
#include <regex>

#include <sys/stat.h>
#include <unistd.h>

#include "cmd/qrm-host/host_config.h"
#include "common/config/config.h"
#include "common/metrics/metrics.h"
#include "testing/subprocess.h"
#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {
namespace {

using Catch::Contains;

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

gid_t GroupOf(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_gid;
}

// qrm_socket_peer_refused_total{socket="<socket>"} as the /metrics page shows it; 0 if absent.
double RefusedCount(const std::string& socket) {
  const std::string page = metrics::Default().Exposition();
  const std::regex line("qrm_socket_peer_refused_total\\{socket=\"" + socket + "\"\\} ([0-9.e+]+)");
  std::smatch m;
  return std::regex_search(page, m, line) ? std::stod(m[1]) : 0;
}

// Runs the probe client as uid/gid; returns the gRPC status code it got.
int ProbeAs(const std::string& socket, uid_t uid, gid_t gid) {
  auto result = qrm::testing::RunProcess(
      {QRM_SOCKET_PROBE, socket, std::to_string(uid), std::to_string(gid)});
  INFO(result.output);
  REQUIRE(result.exit_code >= 0);
  REQUIRE(result.exit_code < 100);  // the probe itself worked
  return result.exit_code;
}

TEST_CASE("the registration socket is 0600 in a 0700 plugin directory the host creates",
          "[security]") {
  HostFixture f;
  auto options = f.Options();
  options.registry.plugin_dir = f.File("fresh/plugins");
  Host& host = f.StartHost(options);
  CHECK(ModeOf(options.registry.plugin_dir) == 0700);
  CHECK(ModeOf(host.registry().registration_socket_path()) == 0600);
}

TEST_CASE("with a socket group: 0660 socket and 0750 directory owned by the group", "[security]") {
  if (::geteuid() != 0) {
    WARN("not root: cannot chown to another group; skipped");
    return;
  }
  HostFixture f;
  auto options = f.Options();
  options.registry.plugin_dir = f.File("grouped/plugins");
  options.registry.socket_permissions = SocketPermissionsFor(gid_t{4242});
  Host& host = f.StartHost(options);
  const std::string socket = host.registry().registration_socket_path();
  CHECK(ModeOf(socket) == 0660);
  CHECK(GroupOf(socket) == 4242);
  CHECK(ModeOf(options.registry.plugin_dir) == 0750);
  CHECK(GroupOf(options.registry.plugin_dir) == 4242);
}

// The host creates its state directory first (lib/state); lib is shared with the plugin
// directory and the pod-resources socket. Created 0700, it locked the socket group out.
TEST_CASE("with a socket group, a group member reaches the socket through directories qrm made",
          "[security]") {
  if (::geteuid() != 0) {
    WARN("not root: cannot run a client as another user; skipped");
    return;
  }
  HostFixture f;
  auto options = f.Options();
  const std::string lib = f.File("lib");  // like /var/lib/qrm, not there yet
  options.state_dir = lib + "/state";
  options.registry.plugin_dir = lib + "/plugins";
  options.registry.socket_permissions = SocketPermissionsFor(kNogroup);
  options.registry.allow.gids = {kNogroup};
  ::chmod(f.File("").c_str(), 0755);  // the test's own temp directory
  Host& host = f.StartHost(options);
  const std::string socket = host.registry().registration_socket_path();
  CHECK(ModeOf(options.registry.plugin_dir) == 0750);
  CHECK(GroupOf(options.registry.plugin_dir) == kNogroup);
  CHECK(ModeOf(options.state_dir) == 0700);  // the state itself stays root's
  // nobody:nogroup passes every directory and reaches validation (INVALID_ARGUMENT).
  CHECK(ProbeAs(socket, kNobody, kNogroup) == grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_CASE("the registration socket refuses peers off the allowlist by their credentials",
          "[security]") {
  if (::geteuid() != 0) {
    WARN("not root: cannot run a client as another user; peer-credential test skipped");
    return;
  }
  HostFixture f;
  auto options = f.Options();
  // Default allowlist (root only), then also nogroup's members by their primary gid.
  const bool nogroup_allowed = GENERATE(false, true);
  if (nogroup_allowed) options.registry.allow.gids = {kNogroup};
  Host& host = f.StartHost(options);
  const std::string socket = host.registry().registration_socket_path();
  // Open the file system path to everybody so that only SO_PEERCRED stands in the way.
  for (const std::string& dir : {f.File(""), f.plugin_dir()}) ::chmod(dir.c_str(), 0755);
  REQUIRE(::chmod(socket.c_str(), 0666) == 0);

  // Root reaches the service: the bogus endpoint is refused by validation (INVALID_ARGUMENT).
  CHECK(ProbeAs(socket, 0, 0) == grpc::StatusCode::INVALID_ARGUMENT);

  const double before = RefusedCount("registration");
  const int nobody = ProbeAs(socket, kNobody, kNogroup);
  if (nogroup_allowed) {
    CHECK(nobody == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(RefusedCount("registration") == before);
  } else {
    // The connection is closed before gRPC reads anything: the client sees UNAVAILABLE.
    CHECK(nobody == grpc::StatusCode::UNAVAILABLE);
    CHECK(RefusedCount("registration") > before);
    CHECK(host.registry().Find("probe.qrm.io/probe") == nullptr);
  }
}

// Flags -> HostConfig, as qrm-host parses them.
StatusOr<HostConfig> ParseFlags(std::vector<std::string> args) {
  args.insert(args.begin(), "qrm-host");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  HostFlags flags;
  auto parsed = qrm::config::Parse(static_cast<int>(argv.size()), argv.data(), flags.description());
  if (!parsed.ok()) return parsed.status();
  return flags.Finish();
}

TEST_CASE("socket flags: defaults are root only, 0600 / 0700", "[security][flags]") {
  auto c = ParseFlags({});
  REQUIRE(c.ok());
  CHECK(c->host.registry.allow.uids == std::set<uid_t>{0});
  CHECK(c->host.registry.allow.gids.empty());
  CHECK(c->host.registry.socket_permissions.mode == 0600);
  CHECK(c->host.registry.socket_permissions.dir_mode == 0700);
  CHECK_FALSE(c->host.registry.socket_permissions.group.has_value());
  CHECK(c->admin.allow.uids == std::set<uid_t>{0});
  CHECK(c->pod_resources.permissions.mode == 0600);
  CHECK(c->host.registry.max_message_bytes == 16 << 20);
  CHECK(c->host.registry.machine_sysfs_root == "/sys");
}

TEST_CASE("socket flags: allowlists, group and message limit reach every socket",
          "[security][flags]") {
  auto c = ParseFlags({"--socket-allowed-uids", "root,1000", "--socket-allowed-gids", "0,4242",
                       "--socket-group", "4242", "--plugin-max-message-size", "1Mi", "--sysfs-root",
                       "/tmp/fake-sys"});
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  CHECK(c->host.registry.allow.uids == std::set<uid_t>{0, 1000});
  CHECK(c->host.registry.allow.gids == std::set<gid_t>{0, 4242});
  for (const SocketPermissions& p :
       {c->host.registry.socket_permissions, c->admin.permissions, c->pod_resources.permissions}) {
    CHECK(p.mode == 0660);
    CHECK(p.dir_mode == 0750);
    CHECK(p.group == std::optional<gid_t>(4242));
  }
  CHECK(c->admin.allow.gids == std::set<gid_t>{0, 4242});
  CHECK(c->host.registry.max_message_bytes == 1 << 20);
  CHECK(c->host.registry.machine_sysfs_root == "/tmp/fake-sys");

  // --admin-allowed-uids still narrows (or widens) the admin socket alone.
  auto admin = ParseFlags({"--socket-allowed-uids", "0,1000", "--admin-allowed-uids", "0"});
  REQUIRE(admin.ok());
  CHECK(admin->admin.allow.uids == std::set<uid_t>{0});
  CHECK(admin->host.registry.allow.uids == std::set<uid_t>{0, 1000});
}

TEST_CASE("bad socket flags name the key and the value", "[security][flags]") {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--socket-allowed-uids", "no-such-user-qrm"},
       "socket_allowed_uids: unknown user \"no-such-user-qrm\""},
      {{"--socket-allowed-uids", "0,,1"}, "socket_allowed_uids: invalid value \"0,,1\""},
      {{"--socket-allowed-gids", "no-such-group-qrm"},
       "socket_allowed_gids: unknown group \"no-such-group-qrm\""},
      {{"--socket-group", "no-such-group-qrm"},
       "socket_group: unknown group \"no-such-group-qrm\""},
      {{"--plugin-max-message-size", "100"}, "plugin_max_message_size: \"100\" is out of range"},
  };
  for (const auto& c : cases) {
    INFO(c.args[0] << " " << c.args[1]);
    auto parsed = ParseFlags(c.args);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(parsed.status().message(), Contains(c.expected));
  }
}

}  // namespace
}  // namespace qrm::host::testing
