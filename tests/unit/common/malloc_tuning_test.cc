// ReleaseFreeMemory: free pages between live blocks go back to the kernel.
// ReexecWithBoundedThreadCache: the program runs again with glibc's thread cache bounded.
#include "common/malloc_tuning.h"

#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "testing/subprocess.h"

namespace qrm {
namespace {

// This process's anonymous resident memory in KiB (RssAnon in /proc/self/status).
[[maybe_unused]] long RssAnonKib() {  // unused under ASan
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("RssAnon:", 0) == 0) return std::stol(line.substr(8));
  }
  return -1;
}

TEST_CASE("ReleaseFreeMemory gives back free pages scattered between live blocks") {
#if defined(__SANITIZE_ADDRESS__)
  // ASan's allocator replaces malloc; glibc's heap, which malloc_trim works on, is unused.
  SUCCEED("not measurable under AddressSanitizer");
#else
  // 32 MiB in 1 KiB blocks, then keep one block in 64: the free space is ~63 KiB holes between
  // live blocks, which free() keeps and only a trim hands back (the top of the heap is live,
  // so the trim threshold cannot release it either).
  constexpr size_t kBlock = 1024, kBlocks = 32 * 1024, kKeepEvery = 64;
  std::vector<char*> blocks(kBlocks);
  for (char*& b : blocks) {
    b = new char[kBlock];
    b[0] = 1;  // resident
  }
  for (size_t i = 0; i < kBlocks; ++i) {
    if (i % kKeepEvery != kKeepEvery - 1) {
      delete[] blocks[i];
      blocks[i] = nullptr;
    }
  }
  const long before = RssAnonKib();
  const bool released = ReleaseFreeMemory();
  const long after = RssAnonKib();
  for (char* b : blocks) delete[] b;

  INFO("RssAnon " << before << " KiB before the trim, " << after << " KiB after");
  REQUIRE(before > 0);
  CHECK(released);
  CHECK(before - after >= 16 * 1024);
#endif
}

TEST_CASE("CurrentHeapBytes follows live blocks, not freed ones") {
  // 8 MiB in 1 KiB blocks is live heap; freed, it stops counting as in use.
  constexpr size_t kBlock = 1024, kBlocks = 8 * 1024;
  const HeapBytes start = CurrentHeapBytes();
  std::vector<char*> blocks(kBlocks);
  for (char*& b : blocks) b = new char[kBlock];
  const HeapBytes full = CurrentHeapBytes();
  for (char* b : blocks) delete[] b;
  const HeapBytes end = CurrentHeapBytes();
  INFO("in use " << start.in_use << " -> " << full.in_use << " -> " << end.in_use);
#if defined(__SANITIZE_ADDRESS__)
  SUCCEED("ASan replaces malloc: mallinfo2 does not see its heap");
#else
  CHECK(full.in_use >= start.in_use + kBlock * kBlocks);
  CHECK(end.in_use + kBlock * kBlocks / 2 <= full.in_use);
#endif
}

}  // namespace
}  // namespace qrm

namespace qrm {
namespace {

TEST_CASE("TunablesWithBoundedThreadCache adds the bound and keeps an operator's own") {
  const std::string bound = "glibc.malloc.tcache_max=" + std::to_string(kThreadCacheMaxBytes);
  CHECK(TunablesWithBoundedThreadCache(nullptr) == bound);
  CHECK(TunablesWithBoundedThreadCache("") == bound);
  CHECK(TunablesWithBoundedThreadCache("glibc.malloc.arena_max=2") ==
        "glibc.malloc.arena_max=2:" + bound);
  CHECK_FALSE(TunablesWithBoundedThreadCache("glibc.malloc.tcache_count=7"));
  CHECK_FALSE(TunablesWithBoundedThreadCache("glibc.malloc.arena_max=2:glibc.malloc.tcache_max=0"));
}

// What the probe printed after it ran: its pid before and after the re-exec, the tunables it
// ran with, its arguments and how many freed bytes reached malloc's bins.
struct ProbeRun {
  std::string start_pid, pid, comm, tunables, args;
  long freed = -1;
};

ProbeRun RunProbe(const std::vector<std::string>& env_args) {
  std::vector<std::string> argv = {"/usr/bin/env"};
  argv.insert(argv.end(), env_args.begin(), env_args.end());
  argv.insert(argv.end(), {QRM_THREAD_CACHE_PROBE, "one", "two words"});
  const testing::ProcessResult result = testing::RunProcess(argv);
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  // "start_pid=P\npid=P comm=C tunables=T args=A freed=N\n" (std::regex is avoided: GCC 12
  // warns in it under the sanitizers). The args may hold blanks, so fields are cut at the
  // following field's name.
  const std::string& out = result.output;
  const auto field = [&](const std::string& name, const std::string& next) {
    const size_t from = out.find(name + "=");
    REQUIRE(from != std::string::npos);
    const size_t start = from + name.size() + 1;
    const size_t end = out.find(next, start);
    REQUIRE(end != std::string::npos);
    return out.substr(start, end - start);
  };
  REQUIRE(out.rfind("start_pid=", 0) == 0);
  return {field("start_pid", "\n"),     field("\npid", " comm="),
          field(" comm", " tunables="), field(" tunables", " args="),
          field(" args", " freed="),    std::stol(field(" freed", "\n"))};
}

TEST_CASE("ReexecWithBoundedThreadCache runs the program again bounded with its pid and argv") {
  const ProbeRun run = RunProbe({"-u", "GLIBC_TUNABLES", "-u", "QRM_PROBE_ANNOUNCED"});
  CHECK(run.pid == run.start_pid);
  // Still named after the program (truncated to 15 characters as every comm), not "exe".
  CHECK(run.comm == "qrm-thread-cach");
  CHECK(run.tunables == "glibc.malloc.tcache_max=" + std::to_string(kThreadCacheMaxBytes));
  CHECK(run.args == "one,two words");
#if defined(__SANITIZE_ADDRESS__)
  SUCCEED("ASan replaces malloc: its caches are not glibc's");
#else
  // 7 freed 512-byte blocks are back in malloc's bins while the freeing thread lives.
  CHECK(run.freed >= 7 * 512);
#endif
}

TEST_CASE("ReexecWithBoundedThreadCache leaves an operator's thread cache tunables alone") {
  const ProbeRun run =
      RunProbe({"-u", "QRM_PROBE_ANNOUNCED", "GLIBC_TUNABLES=glibc.malloc.tcache_count=7"});
  CHECK(run.pid == run.start_pid);
  CHECK(run.tunables == "glibc.malloc.tcache_count=7");
#if defined(__SANITIZE_ADDRESS__)
  SUCCEED("ASan replaces malloc: its caches are not glibc's");
#else
  // glibc's default cache: the 7 blocks stay in the thread's cache, still counted in use. This
  // is what the bounded run above is compared with (the probe can tell the two apart).
  CHECK(run.freed < 7 * 512);
#endif
}

}  // namespace
}  // namespace qrm
