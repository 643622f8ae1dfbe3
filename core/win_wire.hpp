// The messages of one-sided communication on a window's private context.
// Owner: core/win*.cpp.
//
// Origin -> target, tag rma_tag::operation, MPI_BYTE:
//   RmaHeader | block_count x RmaBlock | data_bytes of packed data
// Blocks are the target's layout relative to the target address: bytes for
// put and get, elements of `element` for the accumulate family.  The target
// answers on `reply_tag` (when non-zero) with nothing (flush, unlock, a
// granted self-lock) or the packed old data (get and the fetching
// accumulates).  Puts and accumulates are not answered: one origin's
// messages are applied in order, so the answer to a later message (a flush
// at the latest) completes them.  Fields are fixed width in the host's byte order: windows
// span one homogeneous job (no IMPI or heterogeneous peers yet).
#pragma once
#include <cstdint>

namespace gridmpi::core {

namespace rma_tag {
inline constexpr int operation = 1;  // origin -> target server
inline constexpr int post = 2;       // MPI_Win_post -> MPI_Win_start
inline constexpr int complete = 3;   // MPI_Win_complete -> MPI_Win_wait
inline constexpr int first_reply = 16;
inline constexpr std::uint32_t reply_span = 1u << 28;
}  // namespace rma_tag

enum class RmaKind : std::uint32_t {
  put = 1,
  get = 2,
  accumulate = 3,
  get_accumulate = 4,
  compare_and_swap = 5,
  lock = 6,
  unlock = 7,
  flush = 8,  // answered (empty) once everything before it is applied
};

struct RmaHeader {
  std::uint32_t kind = 0;       // RmaKind
  std::uint32_t reply_tag = 0;  // 0: no answer
  std::int64_t target_offset = 0;  // bytes from the window base (absolute address for dynamic windows)
  std::int32_t op = 0;          // MPI_Op of the accumulate family; put/get: MPI_REPLACE/MPI_NO_OP when
                                // they carry an accumulate (then atomic), else MPI_OP_NULL
  std::int32_t element = 0;     // element type of the accumulate family; lock type for lock
  std::uint32_t block_count = 0;
  std::uint32_t reserved = 0;
  std::uint64_t data_bytes = 0;
};

struct RmaBlock {
  std::int64_t displacement = 0;  // bytes from the target address
  std::int64_t length = 0;        // bytes (put/get) or elements (accumulate family)
};

static_assert(sizeof(RmaHeader) == 40);
static_assert(sizeof(RmaBlock) == 16);

}  // namespace gridmpi::core
