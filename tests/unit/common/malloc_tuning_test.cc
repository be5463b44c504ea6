// ReleaseFreeMemory: free pages between live blocks go back to the kernel.
#include "common/malloc_tuning.h"

#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

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
