// Keeps long-running qrm processes small.
//
// glibc gives every thread that contends for the heap its own arena (up to 8 per core) and
// keeps freed memory in them. qrm-host and the plugins run dozens of gRPC threads but hold
// little live data (a few KiB per container), so after a burst of admissions most of their
// resident memory would be free memory parked in arenas: bench P7 measured 40 MiB for the
// host with 1,000 containers against 4.7 MiB of live heap. Fewer arenas, mmap for larger
// blocks and a low trim threshold give that memory back without measurable cost to latency.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace qrm {

// Call first thing in main(), before any thread exists.
void TuneMalloc(int max_arenas);

// glibc's per-thread cache (tcache) keeps up to 7 freed blocks of every size up to 1 KiB in
// the thread that freed them, where neither other threads nor ReleaseFreeMemory can reach
// them until that thread exits. A daemon whose pool threads sit idle after a burst strands up
// to ~240 KiB in each (bench P7: 1.1 MiB of qrm-host's heap with 1,000 containers). Caching
// only blocks up to kThreadCacheMaxBytes keeps the lock-free path for the small, frequent
// allocations (strings, map nodes) and bounds what a thread can strand to a few KiB.
inline constexpr int kThreadCacheMaxBytes = 128;

// The GLIBC_TUNABLES value bounding the thread cache, given the current value (null when
// unset), or nullopt when the current value already sets a tcache tunable: an operator's
// explicit choice wins.
std::optional<std::string> TunablesWithBoundedThreadCache(const char* current);

// glibc reads its tunables only when a program starts, so this re-executes the program
// (/proc/self/exe, same argv and pid, the environment plus the bounded GLIBC_TUNABLES) unless
// they are already set. Call first thing in main(), before any thread or descriptor exists.
// Returns only when no exec happened: already bounded, set by the operator, a secure-execution
// (setuid) process where glibc ignores the variable, or the exec failed (said on stderr; the
// program then runs with glibc's default caches).
void ReexecWithBoundedThreadCache(char** argv);

// Hands free pages inside the heap back to the kernel (malloc_trim). The trim threshold only
// returns free space at the top of the heap; after a burst of admissions the free space is
// scattered between live blocks. Call from a quiet periodic point: it holds the arena lock
// while it walks the free lists (well under a millisecond for qrm's heaps). True if any
// memory was released.
bool ReleaseFreeMemory();

// What malloc holds (mallinfo2): bytes in live blocks (heap and mmapped) and free bytes kept
// in the arenas. Tells a leak (in_use grows) from fragmentation (free grows) in a long run.
struct HeapBytes {
  size_t in_use = 0;
  size_t free = 0;
};
HeapBytes CurrentHeapBytes();

}  // namespace qrm
