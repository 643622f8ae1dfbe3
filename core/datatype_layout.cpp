// Building and normalising pack programs (see core/datatype_layout.hpp).
#include "core/datatype_layout.hpp"

#include <utility>

namespace gridmpi::core {

namespace {

// A loop over a child of at most this many items is inlined when it runs
// once (struct members, indexed blocks); larger children are shared.
constexpr std::size_t inline_limit = 16;

MPI_Aint as_aint(std::size_t n) { return static_cast<MPI_Aint>(n); }

// A strided leaf whose runs touch is one longer run.
void fold(LayoutItem& item) {
  if (item.is_leaf() && item.repeat > 1 && item.stride == as_aint(item.run_bytes)) {
    item.count *= item.repeat;
    item.run_bytes *= item.repeat;
    item.run_elements *= item.repeat;
    item.run_external *= item.repeat;
    item.run_external64 *= item.repeat;
    item.repeat = 1;
    item.stride = 0;
  }
}

}  // namespace

std::shared_ptr<const Layout> leaf_layout(MPI_Datatype basic, std::size_t basic_size,
                                          std::size_t count) {
  Layout one;
  LayoutItem item;
  item.basic = basic;
  item.count = count;
  item.basic_size = basic_size;
  item.run_bytes = basic_size * count;
  item.run_elements = count;
  item.run_external = external32_basic_size(basic) * count;
  item.run_external64 = external64_basic_size(basic) * count;
  one.items.push_back(item);
  one.size = item.run_bytes;
  one.elements = count;
  one.external_size = item.run_external;
  one.external64_size = item.run_external64;
  return std::make_shared<const Layout>(std::move(one));
}

std::shared_ptr<const Layout> pair_layout(MPI_Datatype first, std::size_t first_size,
                                          MPI_Datatype second, std::size_t second_size,
                                          MPI_Aint second_displacement) {
  LayoutBuilder builder;
  builder.append(leaf_layout(first, first_size, 1), 0, 1, 0);
  builder.append(leaf_layout(second, second_size, 1), second_displacement, 1, 0);
  return builder.finish();
}

void LayoutBuilder::append(const std::shared_ptr<const Layout>& child, MPI_Aint displacement,
                           std::size_t n, MPI_Aint stride) {
  if (n == 0 || child->size == 0) return;
  if (n == 1) stride = 0;
  if (child->items.size() == 1) {
    LayoutItem item = child->items.front();
    item.displacement += displacement;
    if (n == 1) return push(std::move(item));
    if (item.repeat == 1) {
      item.repeat = n;
      item.stride = stride;
      return push(std::move(item));
    }
    if (as_aint(item.repeat) * item.stride == stride) {
      item.repeat *= n;
      return push(std::move(item));
    }
  } else if (n == 1 && child->items.size() <= inline_limit) {
    for (LayoutItem item : child->items) {
      item.displacement += displacement;
      push(std::move(item));
    }
    return;
  }
  LayoutItem loop;
  loop.displacement = displacement;
  loop.repeat = n;
  loop.stride = stride;
  loop.body = child;
  loop.run_bytes = child->size;
  loop.run_elements = child->elements;
  loop.run_external = child->external_size;
  loop.run_external64 = child->external64_size;
  push(std::move(loop));
}

void LayoutBuilder::push(LayoutItem item) {
  fold(item);
  layout_.size += item.bytes();
  layout_.elements += item.elements();
  layout_.external_size += item.external();
  layout_.external64_size += item.external64();
  if (!layout_.items.empty() && item.repeat == 1) {
    LayoutItem& prev = layout_.items.back();
    bool same_leaf = prev.is_leaf() && item.is_leaf() && prev.basic == item.basic;
    bool same_loop = !prev.is_leaf() && !item.is_leaf() && prev.body == item.body;
    // The next run right after a single run: one longer run.
    if (same_leaf && prev.repeat == 1 &&
        prev.displacement + as_aint(prev.run_bytes) == item.displacement) {
      prev.count += item.count;
      prev.run_bytes += item.run_bytes;
      prev.run_elements += item.run_elements;
      prev.run_external += item.run_external;
      prev.run_external64 += item.run_external64;
      return;
    }
    // An equal run continuing a regular pattern: one more repetition.
    if ((same_leaf && prev.count == item.count) || same_loop) {
      if (prev.repeat == 1) {
        prev.stride = item.displacement - prev.displacement;
        prev.repeat = 2;
        fold(prev);
        return;
      }
      if (prev.displacement + as_aint(prev.repeat) * prev.stride == item.displacement) {
        ++prev.repeat;
        return;
      }
    }
  }
  layout_.items.push_back(std::move(item));
}

std::shared_ptr<const Layout> LayoutBuilder::finish() {
  Layout& l = layout_;
  l.dense = true;
  l.dense_start = 0;
  MPI_Aint next = 0;
  bool first = true;
  for (const LayoutItem& item : l.items) {
    bool dense;
    MPI_Aint start;
    if (item.is_leaf()) {
      dense = item.repeat == 1;
      start = item.displacement;
    } else {
      dense = item.body->dense && (item.repeat == 1 || item.stride == as_aint(item.body->size));
      start = item.displacement + item.body->dense_start;
    }
    if (!dense || (!first && start != next)) {
      l.dense = false;
      break;
    }
    if (first) l.dense_start = start;
    first = false;
    next = start + as_aint(item.bytes());
  }
  auto result = std::make_shared<const Layout>(std::move(layout_));
  layout_ = Layout{};
  return result;
}

}  // namespace gridmpi::core
