// Helpers shared by the host benchmarks (admission_bench, reconcile_bench): figure
// selection and printing, percentiles, scratch directories and what filesystem they are on,
// and a host with real plugin processes. Benchmark-only code.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "qrm/host/host.h"
#include "testing/child_process.h"

namespace qrm::bench {

using Clock = std::chrono::steady_clock;

inline double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// CPU time of the whole process (every thread), in ms.
inline double ProcessCpuMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// CPU time (user + system) of another process from /proc/<pid>/stat, in ms (clock ticks,
// so 10 ms resolution: only meaningful summed over many operations).
inline double OtherProcessCpuMs(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  double utime = 0, stime = 0;
  for (int i = 3; fields >> f; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stod(f);
    if (i == 15) {
      stime = std::stod(f);
      break;
    }
  }
  return (utime + stime) * 1e3 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// Nearest-rank percentile (q in (0, 1]) of `v`.
inline double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

inline std::string Num(double v) {
  char buf[64];
  if (std::fabs(v) >= 1000) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3g", v);
  }
  return buf;
}

// One "ID value unit [ratio=X]" line on stdout.
inline void Figure(const std::string& id, double value, const std::string& unit,
                   std::optional<double> ratio = std::nullopt) {
  if (ratio) {
    std::printf("%s %s %s ratio=%.2f\n", id.c_str(), Num(value).c_str(), unit.c_str(), *ratio);
  } else {
    std::printf("%s %s %s\n", id.c_str(), Num(value).c_str(), unit.c_str());
  }
  std::fflush(stdout);
}

// A "# ..." note on stderr.
template <typename... Args>
void Note(fmt::format_string<Args...> format, Args&&... args) {
  std::fprintf(stderr, "# %s\n", fmt::format(format, std::forward<Args>(args)...).c_str());
}

// Whether `id` names `figure` or one of its family: "P5" selects "P5_p50" and "P5.x";
// "P5_p50" selects "P5_p50" only.
inline bool Covers(const std::string& id, const std::string& figure) {
  if (figure == id) return true;
  return figure.size() > id.size() && figure.compare(0, id.size(), id) == 0 &&
         (figure[id.size()] == '_' || figure[id.size()] == '.');
}

// Whether a group of figures must run for `--only` ids (empty: everything).
inline bool Wanted(const std::set<std::string>& only, const std::vector<std::string>& figures) {
  if (only.empty()) return true;
  for (const auto& id : only) {
    for (const auto& figure : figures) {
      if (Covers(id, figure) || Covers(figure, id)) return true;
    }
  }
  return false;
}

inline std::string ExeDir() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().string();
}

// "ext4 (/dev/vda) on /": the mount that holds `path`, from /proc/self/mountinfo.
inline std::string FilesystemOf(const std::string& path) {
  std::error_code ec;
  const std::string real = std::filesystem::canonical(path, ec).string();
  std::ifstream in("/proc/self/mountinfo");
  std::string best_mount, best_desc = "unknown filesystem";
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string id, parent, dev, root, mount;
    f >> id >> parent >> dev >> root >> mount;
    std::string tok;
    while (f >> tok && tok != "-") {
    }
    std::string type, source;
    f >> type >> source;
    const bool under = real == mount || mount == "/" ||
                       (real.compare(0, mount.size(), mount) == 0 && real[mount.size()] == '/');
    if (under && mount.size() >= best_mount.size()) {
      best_mount = mount;
      best_desc = type + " (" + source + ") on " + mount;
    }
  }
  return best_desc;
}

// A fresh directory "<base>/<prefix>XXXXXX", removed (with its content) at scope exit
// unless kept.
class ScratchDir {
 public:
  ScratchDir(const std::string& base, const std::string& prefix, bool keep) : keep_(keep) {
    std::string templ = base + "/" + prefix + "XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      throw std::runtime_error("cannot create a directory under " + base);
    }
    path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!keep_) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
  bool keep_;
};

// Counts the reconcile loop's pushes (no runtime behind it).
class CountingApplier : public reconcile::RuntimeApplier {
 public:
  Status Apply(const std::string&, const std::string&, const apply::ContainerUpdate&) override {
    std::lock_guard lock(mu_);
    ++calls_;
    return Status::Ok();
  }
  int calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  void reset() {
    std::lock_guard lock(mu_);
    calls_ = 0;
  }

 private:
  std::mutex mu_;
  int calls_ = 0;
};

// The runtime lists exactly the pods it is told (so garbage collection runs, and keeps all).
class FixedRuntimeView : public reconcile::RuntimeView {
 public:
  StatusOr<std::set<std::string>> ListPodUids() override {
    std::lock_guard lock(mu_);
    return pods_;
  }
  void Add(const std::string& uid) {
    std::lock_guard lock(mu_);
    pods_.insert(uid);
  }

 private:
  std::mutex mu_;
  std::set<std::string> pods_;
};

// An in-process qrm host with its checkpoint in `<dir>/state` and plugin sockets in
// `<dir>/plugins`, plus plugin processes whose output goes to `<dir>/plugins.log`.
class HostRig {
 public:
  explicit HostRig(std::string dir) : dir_(std::move(dir)) {
    ::mkdir(PluginDir().c_str(), 0750);
    ::mkdir(StateDir().c_str(), 0750);
  }
  ~HostRig() {
    host_.reset();  // before the plugins, so it does not see them go
    for (auto& p : plugins_) p->Kill(SIGTERM, std::chrono::seconds(5));
  }
  HostRig(const HostRig&) = delete;
  HostRig& operator=(const HostRig&) = delete;

  std::string PluginDir() const { return dir_ + "/plugins"; }
  std::string StateDir() const { return dir_ + "/state"; }

  host::HostOptions Options() const {
    host::HostOptions o;
    o.registry.plugin_dir = PluginDir();
    o.registry.dial_timeout = std::chrono::milliseconds(5000);
    o.state_dir = StateDir();  // the host's pod files go to <dir>/state/pods
    o.reconcile_period = std::chrono::milliseconds(0);  // ticks by hand
    o.numa = *topology::NumaInfo::Create({0, 1});
    return o;  // worker_threads, rpc_timeout: qrm-host's defaults
  }

  Status StartHost(const host::HostOptions& options, reconcile::RuntimeApplier& applier,
                   reconcile::RuntimeView* view) {
    host_ = std::make_unique<host::Host>(options);
    return host_->Start(applier, view);
  }

  // Starts `argv` (the plugin-dir flag is added) and waits until `resource` is registered.
  bool StartPlugin(const std::string& resource, std::vector<std::string> argv) {
    argv.push_back("--plugin-dir");
    argv.push_back(PluginDir());
    plugins_.push_back(std::make_unique<testing::ChildProcess>(argv, dir_ + "/plugins.log"));
    return testing::WaitFor(
        [&] {
          auto e = host_->registry().Find(resource);
          return e != nullptr && !e->stopped();
        },
        std::chrono::seconds(20));
  }

  host::Host& host() { return *host_; }
  testing::ChildProcess& plugin(size_t i) { return *plugins_.at(i); }
  size_t plugins() const { return plugins_.size(); }

 private:
  std::string dir_;
  std::unique_ptr<host::Host> host_;
  std::vector<std::unique_ptr<testing::ChildProcess>> plugins_;
};

inline admission::ContainerRequest BenchRequest(const std::string& uid,
                                                const std::string& container,
                                                const std::map<std::string, double>& resources) {
  admission::ContainerRequest r;
  r.pod_uid = uid;
  r.pod_name = "bench-" + uid;
  r.pod_namespace = "default";
  r.container_name = container;
  r.resources = resources;
  r.native_qos_class = "Guaranteed";
  r.labels = {{"app", "bench"}, {"pod-template-hash", "5d8f7c9b6"}};
  r.annotations = {{"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
                   {"katalyst.kubewharf.io/memory_enhancement", "{\"numa_binding\":\"true\"}"}};
  return r;
}

// Flags every host benchmark takes: "--only ID" (repeatable), "--keep" (leave the scratch
// directories), and its own "--name value" settings. Flags that are not its own are
// ignored with a note: scripts/bench passes the same extra arguments to every benchmark.
struct CommonFlags {
  std::set<std::string> only;
  bool keep = false;
};

inline CommonFlags ParseFlags(int argc, char** argv,
                              const std::map<std::string, std::function<void(const char*)>>& own) {
  CommonFlags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc && argv[i + 1][0] != '-';
    if (arg == "--only" && i + 1 < argc) {
      flags.only.insert(argv[++i]);
    } else if (arg == "--keep") {
      flags.keep = true;
    } else if (auto it = own.find(arg); it != own.end() && i + 1 < argc) {
      it->second(argv[++i]);
    } else {
      Note("{}: ignoring argument '{}{}{}'", argv[0], arg, has_value ? " " : "",
           has_value ? argv[i + 1] : "");
      if (has_value) ++i;
    }
  }
  return flags;
}

}  // namespace qrm::bench
