#include "common/malloc_tuning.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <malloc.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "common/errno_text.h"

namespace qrm {

// Both functions run first thing in main, before any thread exists (malloc_tuning.h), which is
// what mallopt and the environment functions need: nothing else can read or change the
// allocator's settings or the environment meanwhile.
// NOLINTBEGIN(concurrency-mt-unsafe)

void TuneMalloc(int max_arenas) {
  mallopt(M_ARENA_MAX, max_arenas);
  // Blocks from 64 KiB up (large protobuf messages, gRPC slices) go to mmap and back to the
  // kernel on free; 128 KiB of free space at the top of a heap is returned at once.
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
}

std::optional<std::string> TunablesWithBoundedThreadCache(const char* current) {
  const std::string_view value = current ? current : "";
  if (value.find("glibc.malloc.tcache_") != std::string_view::npos) return std::nullopt;
  std::string bounded(value);
  if (!bounded.empty()) bounded += ':';
  bounded += "glibc.malloc.tcache_max=" + std::to_string(kThreadCacheMaxBytes);
  return bounded;
}

void ReexecWithBoundedThreadCache(char** argv) {
  const char* previous = std::getenv("GLIBC_TUNABLES");
  const std::optional<std::string> tunables = TunablesWithBoundedThreadCache(previous);
  if (!tunables || getauxval(AT_SECURE) != 0) return;
  // Copied now: setenv may free the string `previous` points to.
  const bool had_previous = previous != nullptr;
  const std::string restore = had_previous ? previous : "";
  if (setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) return;
  // The program's own path rather than /proc/self/exe, whose name would become the process
  // name (comm) that ps, pgrep and systemd show. /proc/self/exe only if that path is gone.
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length > 0) {
    path[length] = '\0';
    execv(path, argv);
  }
  execv("/proc/self/exe", argv);
  const int error = errno;
  std::fprintf(stderr,
               "%s: cannot re-execute with GLIBC_TUNABLES=%s (%s); running with glibc's default "
               "per-thread malloc caches\n",
               argv[0] ? argv[0] : "qrm", tunables->c_str(), ErrnoText(error).c_str());
  if (had_previous) {
    setenv("GLIBC_TUNABLES", restore.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
}
// NOLINTEND(concurrency-mt-unsafe)

bool ReleaseFreeMemory() {
  return malloc_trim(0) == 1;
}

HeapBytes CurrentHeapBytes() {
  const struct mallinfo2 info = mallinfo2();
  return {info.uordblks + info.hblkhd, info.fordblks};
}

}  // namespace qrm
