// A program that bounds its thread caches as qrm-host does (ReexecWithBoundedThreadCache),
// then shows whether they are bounded: a second thread frees 7 blocks of 512 bytes and stays
// alive while the main thread reads malloc's free bytes. With the cache bounded the blocks are
// back in malloc's bins (free grows by them); with glibc's default cache they stay in that
// thread's cache and still count as in use.
//
// Prints "pid=<pid> comm=<process name> tunables=<GLIBC_TUNABLES> args=<argv[1..] joined by
// ','> freed=<bytes>".
// The pid is printed once before the re-exec ("start_pid=<pid>") so a test can see it kept.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <malloc.h>
#include <unistd.h>

#include "common/malloc_tuning.h"

namespace {

constexpr int kBlocks = 7;
constexpr size_t kBlockBytes = 512;

// Starts a thread that allocates kBlocks blocks, then frees them when told; returns how many
// of malloc's free bytes the frees added, measured while the thread is still alive.
size_t FreedBytesSeenByMalloc() {
  std::atomic<int> step{0};
  std::thread holder([&step] {
    void* blocks[kBlocks];
    for (void*& b : blocks) b = std::malloc(kBlockBytes);
    step = 1;
    while (step.load() != 2) std::this_thread::yield();
    for (void* b : blocks) std::free(b);
    step = 3;
    while (step.load() != 4) std::this_thread::yield();
  });
  while (step.load() != 1) std::this_thread::yield();
  const size_t before = mallinfo2().fordblks;
  step = 2;
  while (step.load() != 3) std::this_thread::yield();
  const size_t after = mallinfo2().fordblks;
  step = 4;
  holder.join();
  return after > before ? after - before : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("QRM_PROBE_ANNOUNCED") == nullptr) {
    std::printf("start_pid=%d\n", static_cast<int>(getpid()));
    std::fflush(stdout);
    setenv("QRM_PROBE_ANNOUNCED", "1", 1);
  }
  qrm::ReexecWithBoundedThreadCache(argv);
  std::string args;
  for (int i = 1; i < argc; ++i) args += (i > 1 ? "," : "") + std::string(argv[i]);
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  std::string comm;
  std::getline(std::ifstream("/proc/self/comm"), comm);
  std::printf("pid=%d comm=%s tunables=%s args=%s freed=%zu\n", static_cast<int>(getpid()),
              comm.c_str(), tunables ? tunables : "", args.c_str(), FreedBytesSeenByMalloc());
  return 0;
}
