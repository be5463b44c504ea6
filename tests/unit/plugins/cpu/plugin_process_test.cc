// qrm-cpu-plugin as a real process on a fake doc80 machine, spoken to over gRPC on its socket,
// its pools resized by a second invocation with --set-pools.
#include <filesystem>

#include <grpcpp/grpcpp.h>
#include <sys/wait.h>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "testing/child_process.h"
#include "testing/subprocess.h"
#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

using qrm::testing::ChildProcess;
using qrm::testing::RunProcess;
using qrm::testing::WaitFor;

class PluginProcess {
 public:
  explicit PluginProcess(const TempDir& dir) : dir_(dir) {
    auto paths = machine::fake::WriteFakeMachine(machine::fake::Doc80Shape(), dir.File("machine"));
    REQUIRE(paths.ok());
    paths_ = *paths;
    process_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{
            QRM_CPU_PLUGIN, "--no-register", "--plugin-dir", dir.File("plugins"), "--state-dir",
            dir.File("state"), "--sysfs-root", paths_.sysfs_root, "--procfs-root",
            paths_.procfs_root, "--netns-dir", paths_.netns_dir, "--reserved-cpus", "0-1,40-41",
            "--reclaimed-pool-size", "4", "--roles", kDocRoles},
        dir.File("plugin.log"));
    const std::string socket = dir.File("plugins") + "/cpu.sock";
    REQUIRE(WaitFor([&] { return std::filesystem::exists(socket) || !process_->running(); }));
    INFO(qrm::testing::ReadFile(dir.File("plugin.log")));
    REQUIRE(process_->running());
    stub_ = pb::ResourcePlugin::NewStub(
        grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
    // The socket exists once bound, a moment before the server answers on it (a call without
    // wait_for_ready in that window fails at once, as it did on a loaded machine).
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ctx.set_wait_for_ready(true);
    pb::ResourcePluginOptions options;
    REQUIRE(stub_->GetResourcePluginOptions(&ctx, pb::Empty(), &options).ok());
  }
  ~PluginProcess() { process_->Kill(SIGTERM); }

  pb::ResourcePlugin::Stub& stub() { return *stub_; }
  ChildProcess& process() { return *process_; }
  const machine::fake::FakeMachinePaths& paths() const { return paths_; }

  std::map<std::string, std::string> Cpusets() {
    grpc::ClientContext ctx;
    pb::GetResourcesAllocationRequest req;
    pb::GetResourcesAllocationResponse resp;
    const grpc::Status s = stub_->GetResourcesAllocation(&ctx, req, &resp);
    REQUIRE(s.ok());
    std::map<std::string, std::string> out;
    for (const auto& [uid, containers] : resp.pod_resources()) {
      for (const auto& [name, alloc] : containers.container_resources()) {
        out[uid] = alloc.resource_allocation().at("cpu").allocation_result();
      }
    }
    return out;
  }

 private:
  const TempDir& dir_;
  machine::fake::FakeMachinePaths paths_;
  std::unique_ptr<ChildProcess> process_;
  std::unique_ptr<pb::ResourcePlugin::Stub> stub_;
};

pb::ResourceAllocationInfo AllocateRpc(pb::ResourcePlugin::Stub& stub,
                                       const pb::ResourceRequest& req) {
  grpc::ClientContext ctx;
  pb::ResourceAllocationResponse resp;
  const grpc::Status s = stub.Allocate(&ctx, req, &resp);
  INFO(s.error_message());
  REQUIRE(s.ok());
  return resp.allocation_result().resource_allocation().at("cpu");
}

TEST_CASE("the plugin binary serves gRPC and follows --set-pools", "[cpu][process]") {
  TempDir dir;
  PluginProcess plugin(dir);

  grpc::ClientContext ctx;
  pb::ResourcePluginOptions options;
  REQUIRE(plugin.stub().GetResourcePluginOptions(&ctx, pb::Empty(), &options).ok());
  CHECK(options.need_reconcile());
  CHECK(options.with_topology_alignment());
  CHECK_FALSE(options.pre_start_required());

  // Hints, then Allocate, for a dedicated NUMA-bound container (example 2).
  {
    grpc::ClientContext hctx;
    pb::ResourceHintsResponse hints;
    REQUIRE(
        plugin.stub().GetTopologyHints(&hctx, Request("s", "storage-service", 20), &hints).ok());
    CHECK(HintText(hints.resource_hints().at("cpu")) == "0* 1* 0-1");
  }
  CHECK(AllocateRpc(plugin.stub(), WithHint(Request("s", "storage-service", 20), {0}))
            .allocation_result() == "2-21");
  CHECK(AllocateRpc(plugin.stub(), Request("web", "online-micro_service", 4)).allocation_result() ==
        "22-37,42-77");
  CHECK(AllocateRpc(plugin.stub(), Request("etl", "ETL", 2)).allocation_result() == "38-39,78-79");

  // Bad input crosses the wire as INVALID_ARGUMENT naming the value.
  {
    grpc::ClientContext bctx;
    pb::ResourceAllocationResponse resp;
    const grpc::Status s = plugin.stub().Allocate(&bctx, Request("x", "no-such-role", 1), &resp);
    CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(s.error_message(), Catch::Contains("no-such-role"));
  }

  // Resize through the CLI; the running plugin notices the file and moves the pools.
  const auto set = RunProcess({QRM_CPU_PLUGIN, "--set-pools", "reclaimed=20", "--state-dir",
                               dir.File("state"), "--sysfs-root", plugin.paths().sysfs_root,
                               "--procfs-root", plugin.paths().procfs_root});
  INFO(set.output);
  REQUIRE(set.exit_code == 0);
  CHECK_THAT(set.output, Catch::Contains("pools.json"));
  REQUIRE(WaitFor([&] { return plugin.Cpusets().at("etl") == "30-39,70-79"; }));
  const auto after = plugin.Cpusets();
  CHECK(after.at("web") == "22-29,42-69");
  CHECK(after.at("s") == "2-21");  // dedicated CPUs never move

  // A bad size is refused by the CLI itself, naming it, and nothing is written.
  const auto bad =
      RunProcess({QRM_CPU_PLUGIN, "--set-pools", "shared=0", "--state-dir", dir.File("state")});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Catch::Contains("key \"shared\": invalid value \"0\""));
  CHECK(plugin.Cpusets().at("etl") == "30-39,70-79");

  // SIGTERM: a clean exit that removes the socket.
  const int status = plugin.process().Kill(SIGTERM);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(std::filesystem::exists(dir.File("plugins") + "/cpu.sock"));
}

TEST_CASE("the plugin binary refuses a bad configuration at start", "[cpu][process]") {
  TempDir dir;
  auto paths = machine::fake::WriteFakeMachine(machine::fake::Doc80Shape(), dir.File("machine"));
  REQUIRE(paths.ok());
  const auto r = RunProcess({QRM_CPU_PLUGIN, "--no-register", "--plugin-dir", dir.File("plugins"),
                             "--state-dir", dir.File("state"), "--sysfs-root", paths->sysfs_root,
                             "--procfs-root", paths->procfs_root, "--reserved-cpus", "0-1,80-81"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("CPUs 80-81 are not online"));

  // --reclaimed-pool-size is auto or a whole number.
  const auto size =
      RunProcess({QRM_CPU_PLUGIN, "--no-register", "--plugin-dir", dir.File("plugins"),
                  "--state-dir", dir.File("state"), "--sysfs-root", paths->sysfs_root,
                  "--procfs-root", paths->procfs_root, "--reclaimed-pool-size", "lots"});
  CHECK(size.exit_code == 2);
  CHECK_THAT(size.output, Catch::Contains("--reclaimed-pool-size \"lots\": expected auto or a "
                                          "whole number"));
}

}  // namespace
}  // namespace qrm::cpu::testing
