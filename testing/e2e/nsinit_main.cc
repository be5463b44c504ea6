// qrm-e2e-nsinit: the parent of every containerd an e2e test starts.
//
//   qrm-e2e-nsinit [--cgroup-root REL] [--owned-dir DIR] -- PROGRAM ARGS...
//                                        run PROGRAM in a private mount namespace
//   qrm-e2e-nsinit --probe-overlay DIR   exit 0 if an overlay mount works under DIR
//
// In run mode it
//   * enters a private mount namespace (propagation private) and mounts a tmpfs on /run, so
//     nothing containerd or its shims create under /run (containerd 1.6 puts shim sockets in
//     /run/containerd/s whatever its config says) reaches the host, and every mount they make
//     (overlay rootfs, sandbox shm) dies with the namespace;
//   * becomes a child subreaper, so the shims and container processes (which daemonize) stay
//     its descendants; it reaps them all;
//   * forwards SIGTERM/SIGINT/SIGHUP to PROGRAM, and gets SIGTERM itself if the test dies;
//   * once PROGRAM has exited, SIGKILLs every descendant still alive (a leaked shim or
//     container) and exits when none is left. Its exit therefore means: containerd, its
//     shims and its containers are gone, and so are their mounts;
//   * then removes the cgroup tree REL (runc never removes the pods' parent cgroups) and, if
//     the test that started it has died (it was reparented), the test's directory DIR too,
//     since nobody else will.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing/e2e/host.h"

namespace {

void Die(const std::string& what) {
  std::fprintf(stderr, "qrm-e2e-nsinit: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(125);
}

void EnterPrivateMountNamespace() {
  if (::unshare(CLONE_NEWNS) != 0) Die("unshare(CLONE_NEWNS)");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) Die("make / rprivate");
}

int ProbeOverlay(const std::string& dir) {
  EnterPrivateMountNamespace();
  for (const char* sub : {"lower", "upper", "work", "merged"}) {
    ::mkdir((dir + "/" + sub).c_str(), 0755);
  }
  const std::string options =
      "lowerdir=" + dir + "/lower,upperdir=" + dir + "/upper,workdir=" + dir + "/work";
  if (::mount("overlay", (dir + "/merged").c_str(), "overlay", 0, options.c_str()) != 0) {
    std::fprintf(stderr, "overlay mount under %s failed: %s\n", dir.c_str(), std::strerror(errno));
    return 1;
  }
  return 0;  // the mount dies with this process's namespace
}

// Direct children of this process (after reparenting, shims and containers become ours).
std::vector<pid_t> Children() {
  std::vector<pid_t> result;
  const pid_t self = ::getpid();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...; comm may contain spaces and parentheses.
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) != 2) continue;
    if (ppid == self && state != 'Z') result.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return result;
}

std::string Comm(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string comm;
  std::getline(in, comm);
  return comm;
}

struct RunOptions {
  std::string cgroup_root;
  std::string owned_dir;
};

void CleanUp(const RunOptions& options, pid_t original_parent) {
  if (!options.cgroup_root.empty()) {
    for (const std::string& left : qrm::e2e::RemoveCgroupTree(options.cgroup_root)) {
      std::fprintf(stderr, "qrm-e2e-nsinit: cannot remove cgroup %s\n", left.c_str());
    }
  }
  if (!options.owned_dir.empty() && ::getppid() != original_parent) {
    std::fprintf(stderr, "qrm-e2e-nsinit: test died; removing %s\n", options.owned_dir.c_str());
    qrm::e2e::UnmountAllUnder(options.owned_dir);  // mounts of this (private) namespace
    std::error_code ec;
    std::filesystem::remove_all(options.owned_dir, ec);
  }
}

int Run(const RunOptions& options, char** argv) {
  const pid_t original_parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != original_parent) return 125;  // the test died before we armed the signal
  EnterPrivateMountNamespace();
  if (::mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
    Die("mount tmpfs on /run");
  }
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) Die("PR_SET_CHILD_SUBREAPER");

  sigset_t handled;
  sigemptyset(&handled);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&handled, s);
  sigprocmask(SIG_BLOCK, &handled, nullptr);

  const pid_t program = ::fork();
  if (program < 0) Die("fork");
  if (program == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(argv[0], argv);
    Die(std::string("exec ") + argv[0]);
  }

  bool program_running = true;
  int program_status = 0;
  const timespec tick{0, 100 * 1000 * 1000};
  for (;;) {
    const int sig = sigtimedwait(&handled, nullptr, &tick);
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
      if (program_running) ::kill(program, SIGTERM);
    }
    for (;;) {
      int status = 0;
      const pid_t reaped = ::waitpid(-1, &status, WNOHANG);
      if (reaped <= 0) break;
      if (reaped == program) {
        program_running = false;
        program_status = status;
      }
    }
    if (program_running) continue;
    const std::vector<pid_t> leftovers = Children();
    if (leftovers.empty()) {
      // No child left at all (waitpid agrees): everything we started is gone.
      if (::waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD) break;
      continue;
    }
    for (pid_t pid : leftovers) {
      std::fprintf(stderr, "qrm-e2e-nsinit: killing leftover pid %d (%s)\n", pid,
                   Comm(pid).c_str());
      ::kill(pid, SIGKILL);
    }
  }
  CleanUp(options, original_parent);
  if (WIFEXITED(program_status)) return WEXITSTATUS(program_status);
  return 128 + (WIFSIGNALED(program_status) ? WTERMSIG(program_status) : 0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--probe-overlay") return ProbeOverlay(argv[2]);
  RunOptions options;
  int i = 1;
  for (; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--cgroup-root") {
      options.cgroup_root = argv[i + 1];
    } else if (flag == "--owned-dir") {
      options.owned_dir = argv[i + 1];
    } else {
      break;
    }
  }
  if (i + 1 < argc && std::string(argv[i]) == "--") return Run(options, argv + i + 1);
  std::fprintf(stderr,
               "usage: qrm-e2e-nsinit [--cgroup-root REL] [--owned-dir DIR] -- PROGRAM ARGS...\n"
               "       qrm-e2e-nsinit --probe-overlay DIR\n");
  return 2;
}
