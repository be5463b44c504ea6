#include "common/malloc_tuning.h"

#include <malloc.h>

namespace qrm {

void TuneMalloc(int max_arenas) {
  mallopt(M_ARENA_MAX, max_arenas);
  // Blocks from 64 KiB up (large protobuf messages, gRPC slices) go to mmap and back to the
  // kernel on free; 128 KiB of free space at the top of a heap is returned at once.
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
}

bool ReleaseFreeMemory() {
  return malloc_trim(0) == 1;
}

HeapBytes CurrentHeapBytes() {
  const struct mallinfo2 info = mallinfo2();
  return {info.uordblks + info.hblkhd, info.fordblks};
}

}  // namespace qrm
