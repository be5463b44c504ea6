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

namespace qrm {

// Call first thing in main(), before any thread exists.
void TuneMalloc(int max_arenas);

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
