// The pack program of a datatype: private to core/datatype*.cpp and
// core/op*.cpp.
//
// A Layout lists, in type-map order, the items of ONE element.  An item is
// `repeat` runs placed `stride` bytes apart, starting at `displacement` from
// the element's base; a run is either `count` consecutive basic elements (a
// leaf) or one copy of a nested Layout (a loop).  Constructors keep it small:
// adjacent leaves merge, regular leaves become one strided leaf, and a
// vector of a vector is a loop over a strided leaf.  So a vector of ints is
// one item, a 3-d subarray is a loop over a strided leaf, and nothing is
// ever expanded to one entry per element.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/external_format.hpp"

namespace gridmpi::core {

struct Layout;

struct LayoutItem {
  MPI_Aint displacement = 0;
  std::size_t repeat = 1;
  MPI_Aint stride = 0;
  // Leaf (body == nullptr): `count` basic elements of `basic`.
  MPI_Datatype basic = MPI_DATATYPE_NULL;
  std::size_t count = 0;
  std::size_t basic_size = 0;
  // Loop: one copy of *body per run.
  std::shared_ptr<const Layout> body;
  // Per run: packed bytes, basic elements, external32 and external64 bytes.
  std::size_t run_bytes = 0;
  std::size_t run_elements = 0;
  std::size_t run_external = 0;
  std::size_t run_external64 = 0;

  bool is_leaf() const noexcept { return body == nullptr; }
  std::size_t bytes() const noexcept { return run_bytes * repeat; }
  std::size_t elements() const noexcept { return run_elements * repeat; }
  std::size_t external() const noexcept { return run_external * repeat; }
  std::size_t external64() const noexcept { return run_external64 * repeat; }
  std::size_t run_in(ExternalFormat f) const noexcept {
    return f == ExternalFormat::external64 ? run_external64 : run_external;
  }
};

struct Layout {
  std::vector<LayoutItem> items;
  std::size_t size = 0;           // packed bytes of one element
  std::size_t elements = 0;       // basic elements of one element
  std::size_t external_size = 0;  // external32 bytes of one element
  std::size_t external64_size = 0;  // external64 bytes of one element
  // True when the packed stream is the bytes [dense_start, dense_start+size)
  // of the element, in order (then one memcpy does).
  bool dense = true;
  MPI_Aint dense_start = 0;
};

// External32 / external64 size of a basic (non-pair) predefined type.
std::size_t external32_basic_size(MPI_Datatype basic) noexcept;
std::size_t external64_basic_size(MPI_Datatype basic) noexcept;

// A layout of one leaf: `count` elements of `basic` at displacement 0.
std::shared_ptr<const Layout> leaf_layout(MPI_Datatype basic, std::size_t basic_size,
                                          std::size_t count);
// A layout of two leaves (the predefined pair types).
std::shared_ptr<const Layout> pair_layout(MPI_Datatype first, std::size_t first_size,
                                          MPI_Datatype second, std::size_t second_size,
                                          MPI_Aint second_displacement);

// Builds a layout by appending `n` copies of a child layout, `stride` bytes
// apart, starting at `displacement`; normalises as it goes.
class LayoutBuilder {
 public:
  void append(const std::shared_ptr<const Layout>& child, MPI_Aint displacement, std::size_t n,
              MPI_Aint stride);
  std::shared_ptr<const Layout> finish();

 private:
  void push(LayoutItem item);
  Layout layout_;
};

// Walks the window [offset, offset + length) of the packed stream of `count`
// elements laid out `extent` bytes apart from `base` (an address), in stream
// order, calling copy(address, n) for a contiguous piece and
// copy.runs(address, stride, run_bytes, n) for n whole runs of a strided
// leaf (the hot loop of vector types, kept out of the generic walk).
template <class Copy>
void walk_window(const Layout& layout, std::uintptr_t base, MPI_Aint extent, std::size_t count,
                 std::size_t offset, std::size_t length, Copy&& copy);

// Calls visit(address, basic, n) for every run of n consecutive basic
// elements of `count` elements laid out `extent` bytes apart from `base`, in
// type-map order.
template <class Visit>
void walk_elements(const Layout& layout, std::uintptr_t base, MPI_Aint extent, std::size_t count,
                   Visit&& visit);

// ---- template definitions ----

namespace layout_detail {

template <class Copy>
void walk(const Layout& layout, std::uintptr_t base, std::size_t& skip, std::size_t& length,
          Copy& copy) {
  for (const LayoutItem& item : layout.items) {
    if (length == 0) return;
    std::size_t bytes = item.bytes();
    if (skip >= bytes) {
      skip -= bytes;
      continue;
    }
    std::uintptr_t at = base + static_cast<std::uintptr_t>(item.displacement);
    std::size_t run = item.run_bytes;
    std::size_t i = skip / run;
    if (item.is_leaf()) {
      std::size_t within = skip % run;
      skip = 0;
      auto run_at = [&](std::size_t k) {
        return at + static_cast<std::uintptr_t>(static_cast<MPI_Aint>(k) * item.stride);
      };
      if (within != 0) {  // the window starts inside a run
        std::size_t n = run - within < length ? run - within : length;
        copy(run_at(i) + within, n);
        length -= n;
        ++i;
      }
      std::size_t whole = item.repeat - i < length / run ? item.repeat - i : length / run;
      if (whole > 0) {
        copy.runs(run_at(i), item.stride, run, whole);
        length -= whole * run;
        i += whole;
      }
      if (i < item.repeat && length > 0) {  // the window ends inside a run
        copy(run_at(i), length);
        length = 0;
      }
    } else {
      skip %= run;
      for (; i < item.repeat && length > 0; ++i)
        walk(*item.body, at + static_cast<std::uintptr_t>(static_cast<MPI_Aint>(i) * item.stride),
             skip, length, copy);
    }
  }
}

template <class Visit>
void walk_all(const Layout& layout, std::uintptr_t base, Visit& visit) {
  for (const LayoutItem& item : layout.items) {
    std::uintptr_t at = base + static_cast<std::uintptr_t>(item.displacement);
    for (std::size_t i = 0; i < item.repeat; ++i) {
      std::uintptr_t run = at + static_cast<std::uintptr_t>(static_cast<MPI_Aint>(i) * item.stride);
      if (item.is_leaf())
        visit(run, item.basic, item.count);
      else
        walk_all(*item.body, run, visit);
    }
  }
}

}  // namespace layout_detail

template <class Copy>
void walk_window(const Layout& layout, std::uintptr_t base, MPI_Aint extent, std::size_t count,
                 std::size_t offset, std::size_t length, Copy&& copy) {
  if (length == 0 || layout.size == 0) return;
  std::size_t i = offset / layout.size;
  std::size_t skip = offset % layout.size;
  for (; i < count && length > 0; ++i)
    layout_detail::walk(layout, base + static_cast<std::uintptr_t>(static_cast<MPI_Aint>(i) * extent),
                        skip, length, copy);
}

template <class Visit>
void walk_elements(const Layout& layout, std::uintptr_t base, MPI_Aint extent, std::size_t count,
                   Visit&& visit) {
  if (layout.size == 0) return;
  for (std::size_t i = 0; i < count; ++i)
    layout_detail::walk_all(layout,
                            base + static_cast<std::uintptr_t>(static_cast<MPI_Aint>(i) * extent),
                            visit);
}

}  // namespace gridmpi::core
