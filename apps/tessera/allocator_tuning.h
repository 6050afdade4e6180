#pragma once
// Bound propagation allocates and frees many tensors of a few MB each. glibc serves such
// blocks with mmap and hands them back to the kernel on free, so every step pays page faults
// again (on this project's VM, ~5x the arithmetic of CROWN on the oval21 CNN). Keeping freed
// memory in the heap for reuse removes that cost; the price is a resident size that stays at
// its peak instead of shrinking.

#include <malloc.h>

namespace tessera::app {

inline void keep_freed_memory() {
#ifdef M_MMAP_THRESHOLD
  mallopt(M_MMAP_THRESHOLD, 1 << 30);  // blocks below 1 GiB come from the heap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);  // and freed memory is not returned eagerly
  mallopt(M_TOP_PAD, 64 << 20);        // grow the heap in 64 MiB steps
#endif
}

}  // namespace tessera::app
