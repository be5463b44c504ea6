#include "testing/e2e/containerd.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "testing/child_process.h"
#include "testing/e2e/busybox_image.h"
#include "testing/e2e/host.h"
#include "testing/temp_dir.h"

#ifndef QRM_E2E_NSINIT
#error "QRM_E2E_NSINIT must name the qrm-e2e-nsinit binary"
#endif

namespace qrm::e2e {
namespace fs = std::filesystem;
namespace {

std::string Quote(const std::string& s) {
  return "\"" + s + "\"";
}

std::string Executable(const std::string& name, const std::string& fallback) {
  std::string path = qrm::testing::FindExecutable(name);
  return path.empty() ? fallback : path;
}

std::string Joined(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) line += (line.empty() ? "" : " ") + a;
  return line;
}

}  // namespace

std::string ContainerdConfig(const std::string& dir, const std::string& snapshotter,
                             const std::string& sandbox_image) {
  const std::string cri = R"([plugins."io.containerd.grpc.v1.cri")";
  std::ostringstream c;
  c << "# Written by qrm's e2e harness (testing/e2e/containerd.cc).\n"
    << "version = 2\n"
    << "root = " << Quote(dir + "/root") << "\n"
    << "state = " << Quote(dir + "/state") << "\n"
    << "temp = " << Quote(dir + "/tmp") << "\n"
    << "oom_score = 0\n"
    // Snapshotters and tracing this harness never uses. (io.containerd.runtime.v1.linux
    // must stay: 1.6's tasks service requires it.)
    << "disabled_plugins = [\"io.containerd.snapshotter.v1.aufs\", "
       "\"io.containerd.snapshotter.v1.btrfs\", \"io.containerd.snapshotter.v1.zfs\", "
       "\"io.containerd.snapshotter.v1.devmapper\", "
       "\"io.containerd.tracing.processor.v1.otlp\", \"io.containerd.internal.v1.tracing\"]\n"
    << "\n[grpc]\n"
    << "  address = " << Quote(dir + "/containerd.sock") << "\n"
    << "  max_recv_message_size = 16777216\n"
    << "  max_send_message_size = 16777216\n"
    << "\n[ttrpc]\n"
    << "  address = " << Quote(dir + "/containerd-ttrpc.sock") << "\n"
    << "\n[debug]\n"
    << "  address = \"\"\n"
    << "  level = \"info\"\n"
    << "\n[metrics]\n"
    << "  address = \"\"\n"
    << "\n[plugins]\n"
    // Defaults to /opt/containerd on the host.
    << "  [plugins.\"io.containerd.internal.v1.opt\"]\n"
    << "    path = " << Quote(dir + "/opt") << "\n"
    << "  [plugins.\"io.containerd.runtime.v1.linux\"]\n"
    << "    runtime_root = " << Quote(dir + "/runc-v1") << "\n"
    << "  " << cri
    << "]\n"
    // No CAP_SYS_RESOURCE on these machines: without this every sandbox fails in runc.
    << "    restrict_oom_score_adj = true\n"
    << "    sandbox_image = " << Quote(sandbox_image) << "\n"
    << "    stream_server_address = \"127.0.0.1\"\n"
    << "    stream_server_port = \"0\"\n"
    << "    disable_tcp_service = true\n"
    << "    systemd_cgroup = false\n"
    << "    netns_mounts_under_state_dir = true\n"
    << "    enable_selinux = false\n"
    // Host-network pods need no CNI; the dirs only keep containerd off /etc/cni, /opt/cni.
    << "    " << cri << ".cni]\n"
    << "      bin_dir = " << Quote(dir + "/cni/bin") << "\n"
    << "      conf_dir = " << Quote(dir + "/cni/net.d") << "\n"
    << "    " << cri << ".containerd]\n"
    << "      snapshotter = " << Quote(snapshotter) << "\n"
    << "      default_runtime_name = \"runc\"\n"
    << "      " << cri << ".containerd.runtimes.runc]\n"
    << "        runtime_type = \"io.containerd.runc.v2\"\n"
    << "        " << cri << ".containerd.runtimes.runc.options]\n"
    << "          BinaryName = " << Quote(Executable("runc", "/usr/sbin/runc"))
    << "\n"
    // runc's state defaults to /run/containerd/runc.
    << "          Root = " << Quote(dir + "/runc") << "\n"
    << "          SystemdCgroup = false\n";
  return c.str();
}

StatusOr<std::unique_ptr<Containerd>> Containerd::Start(ContainerdOptions options) {
  std::unique_ptr<Containerd> c(new Containerd());
  Status s = c->Launch(options);
  if (!s.ok()) {
    const std::string log = c->Log();
    std::fprintf(stderr, "=== containerd failed to start: %s\n=== containerd log (%s):\n%s\n",
                 s.ToString().c_str(), c->log_path_.c_str(), log.c_str());
    c->Stop();
    return s;
  }
  return c;
}

Status Containerd::Launch(const ContainerdOptions& options) {
  if (::geteuid() != 0) return PermissionDeniedError("the e2e containerd needs root");
  const std::string containerd = Executable("containerd", "/usr/bin/containerd");
  if (::access(containerd.c_str(), X_OK) != 0) {
    return NotFoundError("no containerd binary (install the containerd package)");
  }
  dir_ = std::make_unique<qrm::testing::TempDir>();
  dir_path_ = dir_->path();
  socket_ = dir_path_ + "/containerd.sock";
  config_path_ = dir_path_ + "/config.toml";
  log_path_ = dir_path_ + "/containerd.log";
  const std::string base = fs::path(dir_path_).filename();
  cgroup_root_ = "/qrm-e2e-" + base.substr(base.rfind('-') + 1);
  image_ = kBusyboxImage;

  std::error_code ec;
  for (const char* sub : {"root", "state", "tmp", "opt", "cni/bin", "cni/net.d", "pod-logs"}) {
    fs::create_directories(dir_path_ + "/" + sub, ec);
    if (ec) return InternalError("mkdir " + dir_path_ + "/" + sub + ": " + ec.message());
  }

  snapshotter_ = options.snapshotter;
  if (snapshotter_.empty()) {
    const char* env = std::getenv("QRM_E2E_SNAPSHOTTER");
    snapshotter_ = env != nullptr ? env : "";
  }
  if (snapshotter_.empty()) {
    const std::string probe = dir_path_ + "/overlay-probe";
    fs::create_directories(probe, ec);
    const qrm::testing::ProcessResult r =
        qrm::testing::RunProcess({QRM_E2E_NSINIT, "--probe-overlay", probe});
    snapshotter_ = r.exit_code == 0 ? "overlayfs" : "native";
    if (r.exit_code != 0) {
      std::fprintf(stderr, "e2e containerd: overlay mounts fail here (%s); using native\n",
                   r.output.c_str());
    }
    fs::remove_all(probe, ec);
  }

  try {
    qrm::testing::WriteFile(config_path_, ContainerdConfig(dir_path_, snapshotter_, image_));
  } catch (const std::exception& e) {
    return InternalError(e.what());
  }
  try {
    process_ = std::make_unique<qrm::testing::ChildProcess>(
        std::vector<std::string>{QRM_E2E_NSINIT, "--cgroup-root", cgroup_root_, "--owned-dir",
                                 dir_path_, "--", containerd, "--config", config_path_},
        log_path_);
  } catch (const std::exception& e) {
    return InternalError(e.what());
  }
  QRM_RETURN_IF_ERROR(WaitUntilServing(options.start_timeout));
  QRM_RETURN_IF_ERROR(CheckSnapshotter());

  if (options.import_busybox) {
    StatusOr<BusyboxImage> image = BuildBusyboxImage(dir_path_, image_);
    if (!image.ok()) return image.status().WithContext("building the busybox image");
    QRM_RETURN_IF_ERROR(ImportImage(image->tar_path, image->name));
    fs::remove(image->tar_path, ec);
  }
  return Status::Ok();
}

Status Containerd::WaitUntilServing(std::chrono::milliseconds timeout) {
  CriClient::Options o;
  o.rpc_timeout = std::chrono::seconds(1);
  CriClient client(socket_, o);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Status last = UnavailableError("not tried");
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_->running()) {
      return UnavailableError("containerd exited before serving CRI on " + socket_ + "\n" +
                              LogTail());
    }
    if (::access(socket_.c_str(), F_OK) == 0) {
      StatusOr<cri::VersionResponse> v = client.Version();
      if (v.ok()) return Status::Ok();
      last = v.status();
      // containerd serves, but without CRI: the CRI plugin failed to load (bad config).
      if (last.code() == StatusCode::kUnimplemented) {
        return FailedPreconditionError("containerd serves " + socket_ +
                                       " without the CRI plugin (see its log): " + last.ToString() +
                                       "\n" + LogTail());
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return DeadlineExceededError("containerd did not answer CRI Version on " + socket_ + " within " +
                               std::to_string(timeout.count()) + " ms (last: " + last.ToString() +
                               ")\n" + LogTail());
}

Status Containerd::CheckSnapshotter() {
  const qrm::testing::ProcessResult r = Ctr({"plugins", "ls"});
  if (r.exit_code != 0) return InternalError("ctr plugins ls: " + r.output);
  std::istringstream lines(r.output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    std::string type, id, platforms, status;
    f >> type >> id >> platforms >> status;
    if (type == "io.containerd.snapshotter.v1" && id == snapshotter_) {
      if (status == "ok") return Status::Ok();
      return FailedPreconditionError("snapshotter " + snapshotter_ + " did not load (" + status +
                                     "); set QRM_E2E_SNAPSHOTTER=native\n" + LogTail());
    }
  }
  return NotFoundError("containerd has no snapshotter " + snapshotter_);
}

qrm::testing::ProcessResult Containerd::Ctr(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{Executable("ctr", "/usr/bin/ctr"), "-a", socket_, "-n", "k8s.io"};
  argv.insert(argv.end(), args.begin(), args.end());
  return qrm::testing::RunProcess(argv);
}

Status Containerd::ImportImage(const std::string& tar_path, const std::string& name) {
  const std::vector<std::string> args{"images",        "import",     "--index-name", name,
                                      "--snapshotter", snapshotter_, tar_path};
  const qrm::testing::ProcessResult r = Ctr(args);
  if (r.exit_code != 0) {
    return InternalError("ctr " + Joined(args) + " exited with " + std::to_string(r.exit_code) +
                         ": " + r.output);
  }
  // The CRI plugin learns about images from containerd's events: wait until it lists it,
  // or RunPodSandbox would try to pull the sandbox image from a registry.
  CriClient client = Client();
  cri::ImageStatusRequest request;
  request.mutable_image()->set_image(name);
  const bool seen = qrm::testing::WaitFor(
      [&] {
        cri::ImageStatusResponse response;
        return client.images().ImageStatus(client.Context().get(), request, &response).ok() &&
               response.has_image();
      },
      std::chrono::seconds(10));
  if (!seen) return DeadlineExceededError("CRI does not list imported image " + name);
  return Status::Ok();
}

pid_t Containerd::nsinit_pid() const {
  return process_ ? process_->pid() : -1;
}

bool Containerd::running() const {
  return process_ && !stopped_ && process_->running();
}

std::string Containerd::Log() const {
  if (log_path_.empty()) return {};
  try {
    return qrm::testing::ReadFile(log_path_);
  } catch (const std::exception&) {
    return {};
  }
}

std::string Containerd::LogTail(size_t bytes) const {
  std::string log = Log();
  if (log.size() > bytes) log = "..." + log.substr(log.size() - bytes);
  return log;
}

CriClient::Options Containerd::ClientOptions() const {
  CriClient::Options o;
  o.default_image = image_;
  o.cgroup_root = cgroup_root_;
  o.log_root = dir_path_ + "/pod-logs";
  return o;
}

CriClient Containerd::Client() const {
  return CriClient(socket_, ClientOptions());
}

std::vector<std::string> Containerd::Stop() {
  std::vector<std::string> problems;
  if (stopped_) return problems;
  stopped_ = true;
  if (process_ && process_->running()) {
    // 1. Through CRI, as the kubelet would: every container, then every sandbox.
    CriClient::Options o = ClientOptions();
    o.rpc_timeout = std::chrono::seconds(15);
    CriClient client(socket_, o);
    const Status removed = client.RemoveEverything();
    // (UNIMPLEMENTED: containerd runs without CRI, so there are no pods.)
    if (!removed.ok() && removed.code() != StatusCode::kUnimplemented) {
      problems.push_back("removing pods: " + removed.ToString());
    }
    // 2. containerd: nsinit forwards SIGTERM, then kills any shim or container left and
    //    exits once none is; its exit means the private mount namespace is gone.
    if (process_->Kill(SIGTERM, std::chrono::seconds(30)) == -1) {
      problems.push_back("qrm-e2e-nsinit did not exit within 30 s; killed");
    }
    const std::string log = Log();
    if (log.find("qrm-e2e-nsinit: killing leftover") != std::string::npos) {
      problems.push_back("leftover shim/container processes had to be killed (see log)");
    }
  }
  process_.reset();
  // 3. Anything that escaped (only if nsinit itself was killed): shims name our socket.
  if (!socket_.empty()) {
    for (pid_t pid : PidsWithArgument(socket_)) {
      problems.push_back("killed leftover process " + std::to_string(pid));
      ::kill(pid, SIGKILL);
    }
  }
  // 4. cgroups runc created under our root (it never removes the parents).
  if (!cgroup_root_.empty()) {
    for (const std::string& left : RemoveCgroupTree(cgroup_root_)) {
      problems.push_back("cannot remove cgroup " + left);
    }
  }
  // 5. Mounts: containerd's live in its private namespace, which is gone by now; anything
  //    under our directory in this namespace would be a leak through propagation.
  if (!dir_path_.empty()) {
    if (const int n = UnmountAllUnder(dir_path_); n > 0) {
      problems.push_back(std::to_string(n) + " mounts under " + dir_path_ + " had to be detached");
    }
  }
  if (!problems.empty()) {
    std::fprintf(stderr, "e2e containerd cleanup (%s):\n", dir_path_.c_str());
    for (const auto& p : problems) std::fprintf(stderr, "  %s\n", p.c_str());
    std::fprintf(stderr, "containerd log tail:\n%s\n", LogTail().c_str());
  }
  // Keep containerd's log when asked (CI artifacts): $QRM_E2E_LOG_DIR/<dir name>.log.
  if (const char* keep = std::getenv("QRM_E2E_LOG_DIR"); keep != nullptr && *keep != '\0') {
    std::error_code ec;
    fs::create_directories(keep, ec);
    fs::copy_file(log_path_,
                  std::string(keep) + "/" + fs::path(dir_path_).filename().string() + ".log",
                  fs::copy_options::overwrite_existing, ec);
  }
  dir_.reset();
  return problems;
}

Containerd::~Containerd() {
  Stop();
}

}  // namespace qrm::e2e
