// Derived datatypes: the constructors with the standard's bounds rules,
// reference counting, and the pack/unpack engine over the pack program
// (core/datatype_layout.hpp).
#include "core/datatype.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "core/attr.hpp"
#include "core/datatype_layout.hpp"

namespace gridmpi::core {

namespace {

// Guards creation, reference counts and destruction: pending operations may
// release their types from a progress thread.
std::recursive_mutex& table_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

std::string type_name_for_message(MPI_Datatype handle) {
  if (const Datatype* t = datatype_table().find(handle); t && !t->name.empty()) return t->name;
  return "datatype " + std::to_string(handle);
}

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
std::byte* at(const void* base, MPI_Aint displacement) {
  return reinterpret_cast<std::byte*>(address(base) + static_cast<std::uintptr_t>(displacement));
}

// Address and size arithmetic of the constructors: records an overflow
// instead of wrapping silently (the type is then marked too_large).
struct Checked {
  bool overflow = false;
  MPI_Aint mul(MPI_Aint a, MPI_Aint b) {
    MPI_Aint r;
    overflow |= __builtin_mul_overflow(a, b, &r);
    return r;
  }
  MPI_Aint add(MPI_Aint a, MPI_Aint b) {
    MPI_Aint r;
    overflow |= __builtin_add_overflow(a, b, &r);
    return r;
  }
  std::size_t mul(std::size_t a, std::size_t b) {
    std::size_t r;
    overflow |= __builtin_mul_overflow(a, b, &r);
    return r;
  }
  std::size_t add(std::size_t a, std::size_t b) {
    std::size_t r;
    overflow |= __builtin_add_overflow(a, b, &r);
    return r;
  }
};

// Accumulates the bounds, size and pack program of a type map made of
// copies of other types, following the standard's definition of lb and ub:
// explicit markers (MPI_LB/MPI_UB entries, resized types) win over data
// bounds, and only the struct constructor pads the extent to the alignment.
class TypeBuilder {
 public:
  // n copies of t at displacement, displacement + stride, ...
  void add(const Datatype& t, MPI_Aint displacement, std::size_t n, MPI_Aint stride) {
    if (n == 0) return;
    if (t.too_large) checked.overflow = true;
    MPI_Aint span = checked.mul(static_cast<MPI_Aint>(n - 1), stride);
    MPI_Aint low = checked.add(displacement, std::min<MPI_Aint>(0, span));
    MPI_Aint high = checked.add(displacement, std::max<MPI_Aint>(0, span));
    bool data = t.size > 0;
    if (t.explicit_lb)
      lower(lb_marker_, has_lb_marker_, checked.add(low, t.lb));
    else if (data)
      lower(natural_lb_, has_natural_lb_, checked.add(low, t.lb));
    if (t.explicit_ub)
      raise(ub_marker_, has_ub_marker_, checked.add(high, t.ub));
    else if (data)
      raise(natural_ub_, has_natural_ub_, checked.add(high, t.ub));
    if (!data) return;
    bool no_data_yet = !has_data_;
    MPI_Aint data_low = checked.add(low, t.true_lb), data_high = checked.add(high, t.true_ub);
    if (no_data_yet) {
      true_lb_ = data_low;
      true_ub_ = data_high;
    } else {
      true_lb_ = std::min(true_lb_, data_low);
      true_ub_ = std::max(true_ub_, data_high);
    }
    has_data_ = true;
    layout_.append(t.layout, displacement, n, stride);
    size_ = checked.add(size_, checked.mul(n, t.size));
    elements_ = checked.add(elements_, checked.mul(n, t.basic_elements));
    alignment_ = std::max(alignment_, t.alignment);
    if (no_data_yet)
      reduction_basic_ = t.reduction_basic;
    else if (reduction_basic_ != t.reduction_basic)
      reduction_basic_ = MPI_DATATYPE_NULL;
  }

  // Returns the type's shape (no handle, name or contents yet).
  Datatype finish(bool pad_to_alignment) {
    Datatype t;
    t.size = size_;
    t.basic_elements = elements_;
    // Sizes are MPI_Counts and extents MPI_Aints: both signed.
    if (size_ > static_cast<std::size_t>(PTRDIFF_MAX)) checked.overflow = true;
    if (has_data_) checked.add(true_ub_, true_lb_ < 0 ? -true_lb_ : MPI_Aint{0});
    t.alignment = alignment_;
    t.explicit_lb = has_lb_marker_;
    t.explicit_ub = has_ub_marker_;
    if (has_lb_marker_)
      t.lb = lb_marker_;
    else if (has_natural_lb_)
      t.lb = natural_lb_;
    else if (has_ub_marker_)
      t.lb = ub_marker_;
    if (has_ub_marker_)
      t.ub = ub_marker_;
    else if (has_natural_ub_)
      t.ub = natural_ub_;
    else
      t.ub = t.lb;
    if (pad_to_alignment && !t.explicit_ub && alignment_ > 1) {
      MPI_Aint extent = t.ub - t.lb;
      MPI_Aint align = static_cast<MPI_Aint>(alignment_);
      if (extent > 0 && extent % align != 0) t.ub += align - extent % align;
    }
    if (has_data_) {
      t.true_lb = true_lb_;
      t.true_ub = true_ub_;
    }
    t.reduction_basic = has_data_ ? reduction_basic_ : MPI_DATATYPE_NULL;
    t.layout = layout_.finish();
    checked.add(t.ub, t.lb < 0 ? -t.lb : MPI_Aint{0});  // the extent must fit too
    t.too_large = checked.overflow;
    return t;
  }

  // Overflows of the size and bounds arithmetic; the constructors add
  // theirs (displacement * extent) here too.
  Checked checked;

 private:
  static void lower(MPI_Aint& value, bool& has, MPI_Aint candidate) {
    if (!has || candidate < value) value = candidate;
    has = true;
  }
  static void raise(MPI_Aint& value, bool& has, MPI_Aint candidate) {
    if (!has || candidate > value) value = candidate;
    has = true;
  }

  bool has_lb_marker_ = false, has_ub_marker_ = false;
  bool has_natural_lb_ = false, has_natural_ub_ = false, has_data_ = false;
  MPI_Aint lb_marker_ = 0, ub_marker_ = 0, natural_lb_ = 0, natural_ub_ = 0;
  MPI_Aint true_lb_ = 0, true_ub_ = 0;
  std::size_t size_ = 0, elements_ = 0, alignment_ = 1;
  MPI_Datatype reduction_basic_ = MPI_DATATYPE_NULL;
  LayoutBuilder layout_;
};

// Fills what follows from the layout and bounds: contiguity, the flattened
// blocks, the external32 size.
void finish_shape(Datatype& t) {
  t.basic_elements = t.layout->elements;
  t.external32_size = t.layout->external_size;
  t.external64_size = t.layout->external64_size;
  t.contiguous = t.layout->dense && t.extent() == static_cast<MPI_Aint>(t.size);
  t.blocks.clear();
  t.blocks_complete = true;
  // Upper bound of the number of runs before merging.
  std::size_t runs = 0;
  auto count_runs = [&](auto& self, const Layout& l) -> void {
    for (const LayoutItem& item : l.items) {
      if (runs > Datatype::max_flattened_blocks) return;
      if (item.is_leaf())
        runs += item.repeat;
      else
        for (std::size_t i = 0; i < item.repeat && runs <= Datatype::max_flattened_blocks; ++i)
          self(self, *item.body);
    }
  };
  count_runs(count_runs, *t.layout);
  if (runs > Datatype::max_flattened_blocks) {
    t.blocks_complete = false;
    return;
  }
  walk_elements(*t.layout, 0, t.extent(), 1,
                [&](std::uintptr_t where, MPI_Datatype basic, std::size_t count) {
                  MPI_Aint displacement = static_cast<MPI_Aint>(where);
                  if (!t.blocks.empty()) {
                    TypeBlock& last = t.blocks.back();
                    if (last.basic == basic &&
                        last.displacement + static_cast<MPI_Aint>(
                                                last.count * datatype(basic).size) ==
                            displacement) {
                      last.count += count;
                      return;
                    }
                  }
                  t.blocks.push_back({displacement, basic, count});
                });
}

Datatype shape(TypeBuilder& builder, bool pad) {
  Datatype t = builder.finish(pad);
  finish_shape(t);
  return t;
}

// The same type map with new bounds (MPI_Type_create_resized).
Datatype resized_shape(const Datatype& old, MPI_Aint lb, MPI_Aint extent) {
  Datatype t;
  t.size = old.size;
  t.true_lb = old.true_lb;
  t.true_ub = old.true_ub;
  t.alignment = old.alignment;
  t.reduction_basic = old.reduction_basic;
  t.layout = old.layout;
  t.lb = lb;
  Checked checked;
  t.ub = checked.add(lb, extent);
  t.too_large = old.too_large || checked.overflow;
  t.explicit_lb = t.explicit_ub = true;
  finish_shape(t);
  return t;
}

Datatype contiguous_shape(std::size_t count, const Datatype& old) {
  TypeBuilder b;
  b.add(old, 0, count, old.extent());
  return shape(b, false);
}

Datatype hvector_shape(std::size_t count, std::size_t blocklength, MPI_Aint stride,
                       const Datatype& old) {
  Datatype block = contiguous_shape(blocklength, old);
  TypeBuilder b;
  b.add(block, 0, count, stride);
  return shape(b, false);
}

void check_count(int count, const char* what) {
  if (count < 0)
    throw MpiError(MPI_ERR_COUNT, std::string(what) + " is negative (" + std::to_string(count) + ")");
}
void check_blocklength(int blocklength) {
  if (blocklength < 0)
    throw MpiError(MPI_ERR_ARG,
                   "block length is negative (" + std::to_string(blocklength) + ")");
}
void check_array(const void* p, int count, const char* what) {
  if (count > 0 && p == nullptr) throw MpiError(MPI_ERR_ARG, std::string(what) + " is a null pointer");
}

// Stores a new derived type; takes a reference on every derived type named
// in its contents so that MPI_Type_get_contents stays valid after the user
// frees them.
MPI_Datatype register_type(Datatype&& t, int combiner, std::vector<int> integers,
                           std::vector<MPI_Aint> addresses, std::vector<MPI_Datatype> types) {
  auto object = std::make_unique<Datatype>(std::move(t));
  object->combiner = combiner;
  object->contents_integers = std::move(integers);
  object->contents_addresses = std::move(addresses);
  object->contents_types = std::move(types);
  object->predefined = false;
  object->committed = false;
  object->refcount = 1;
  std::lock_guard lock(table_mutex());
  for (MPI_Datatype child : object->contents_types) retain_datatype(child);
  Datatype* raw = object.get();
  raw->handle = datatype_table().add(std::move(object));
  return raw->handle;
}

}  // namespace

// ---- lookups and reference counts ----

Datatype& datatype_lookup(MPI_Datatype handle) {
  if (handle == MPI_DATATYPE_NULL) throw MpiError(MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  Datatype* t = datatype_table().find(handle);
  if (!t) throw MpiError(MPI_ERR_TYPE, "invalid datatype handle " + std::to_string(handle));
  return *t;
}

Datatype& committed_datatype_lookup(MPI_Datatype handle) {
  Datatype& t = datatype(handle);
  if (!t.committed)
    throw MpiError(MPI_ERR_TYPE, "datatype " + std::to_string(handle) +
                                     " is not committed (call MPI_Type_commit first)");
  if (t.too_large)
    throw MpiError(MPI_ERR_TYPE, "datatype " + std::to_string(handle) +
                                     " is too large: its size or extent overflows MPI_Aint");
  return t;
}

void retain_datatype(MPI_Datatype handle) {
  std::lock_guard lock(table_mutex());
  Datatype& t = datatype(handle);
  if (!t.predefined) ++t.refcount;
}

void release_datatype(MPI_Datatype handle) {
  std::lock_guard lock(table_mutex());
  Datatype& t = datatype(handle);
  if (t.predefined) return;
  if (--t.refcount > 0) return;
  std::vector<MPI_Datatype> children = std::move(t.contents_types);
  datatype_table().release(handle);
  for (MPI_Datatype child : children) release_datatype(child);
}

void type_commit(MPI_Datatype handle) {
  Datatype& t = datatype(handle);
  t.committed = true;
}

void type_free(MPI_Datatype handle) {
  Datatype& t = datatype(handle);
  if (t.predefined)
    throw MpiError(MPI_ERR_TYPE, "cannot free the predefined datatype " + t.name);
  delete_type_attributes(handle);  // the standard: delete callbacks run at MPI_Type_free
  release_datatype(handle);
}

// ---- constructors ----

MPI_Datatype type_contiguous(int count, MPI_Datatype oldtype) {
  check_count(count, "count");
  const Datatype& old = datatype(oldtype);
  return register_type(contiguous_shape(count, old), MPI_COMBINER_CONTIGUOUS, {count}, {},
                       {oldtype});
}

MPI_Datatype type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype) {
  check_count(count, "count");
  check_blocklength(blocklength);
  const Datatype& old = datatype(oldtype);
  Checked checked;
  Datatype t = hvector_shape(count, blocklength, checked.mul(stride, old.extent()), old);
  t.too_large |= checked.overflow;
  return register_type(std::move(t), MPI_COMBINER_VECTOR, {count, blocklength, stride}, {}, {oldtype});
}

MPI_Datatype type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype) {
  check_count(count, "count");
  check_blocklength(blocklength);
  const Datatype& old = datatype(oldtype);
  return register_type(hvector_shape(count, blocklength, stride, old), MPI_COMBINER_HVECTOR,
                       {count, blocklength}, {stride}, {oldtype});
}

MPI_Datatype type_indexed(int count, const int blocklengths[], const int displacements[],
                          MPI_Datatype oldtype) {
  check_count(count, "count");
  check_array(blocklengths, count, "array_of_blocklengths");
  check_array(displacements, count, "array_of_displacements");
  const Datatype& old = datatype(oldtype);
  TypeBuilder b;
  std::vector<int> integers{count};
  for (int i = 0; i < count; ++i) {
    check_blocklength(blocklengths[i]);
    b.add(old, b.checked.mul(displacements[i], old.extent()), blocklengths[i], old.extent());
    integers.push_back(blocklengths[i]);
  }
  integers.insert(integers.end(), displacements, displacements + count);
  return register_type(shape(b, false), MPI_COMBINER_INDEXED, std::move(integers), {}, {oldtype});
}

MPI_Datatype type_hindexed(int count, const int blocklengths[], const MPI_Aint displacements[],
                           MPI_Datatype oldtype) {
  check_count(count, "count");
  check_array(blocklengths, count, "array_of_blocklengths");
  check_array(displacements, count, "array_of_displacements");
  const Datatype& old = datatype(oldtype);
  TypeBuilder b;
  std::vector<int> integers{count};
  for (int i = 0; i < count; ++i) {
    check_blocklength(blocklengths[i]);
    b.add(old, displacements[i], blocklengths[i], old.extent());
    integers.push_back(blocklengths[i]);
  }
  return register_type(shape(b, false), MPI_COMBINER_HINDEXED, std::move(integers),
                       {displacements, displacements + count}, {oldtype});
}

MPI_Datatype type_indexed_block(int count, int blocklength, const int displacements[],
                                MPI_Datatype oldtype) {
  check_count(count, "count");
  check_blocklength(blocklength);
  check_array(displacements, count, "array_of_displacements");
  const Datatype& old = datatype(oldtype);
  TypeBuilder b;
  std::vector<int> integers{count, blocklength};
  for (int i = 0; i < count; ++i)
    b.add(old, b.checked.mul(displacements[i], old.extent()), blocklength, old.extent());
  integers.insert(integers.end(), displacements, displacements + count);
  return register_type(shape(b, false), MPI_COMBINER_INDEXED_BLOCK, std::move(integers), {},
                       {oldtype});
}

MPI_Datatype type_hindexed_block(int count, int blocklength, const MPI_Aint displacements[],
                                 MPI_Datatype oldtype) {
  check_count(count, "count");
  check_blocklength(blocklength);
  check_array(displacements, count, "array_of_displacements");
  const Datatype& old = datatype(oldtype);
  TypeBuilder b;
  for (int i = 0; i < count; ++i) b.add(old, displacements[i], blocklength, old.extent());
  return register_type(shape(b, false), MPI_COMBINER_HINDEXED_BLOCK, {count, blocklength},
                       {displacements, displacements + count}, {oldtype});
}

MPI_Datatype type_struct(int count, const int blocklengths[], const MPI_Aint displacements[],
                         const MPI_Datatype types[]) {
  check_count(count, "count");
  check_array(blocklengths, count, "array_of_blocklengths");
  check_array(displacements, count, "array_of_displacements");
  check_array(types, count, "array_of_types");
  TypeBuilder b;
  std::vector<int> integers{count};
  for (int i = 0; i < count; ++i) {
    check_blocklength(blocklengths[i]);
    const Datatype& t = datatype(types[i]);
    b.add(t, displacements[i], blocklengths[i], t.extent());
    integers.push_back(blocklengths[i]);
  }
  return register_type(shape(b, true), MPI_COMBINER_STRUCT, std::move(integers),
                       {displacements, displacements + count}, {types, types + count});
}

MPI_Datatype type_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent) {
  const Datatype& old = datatype(oldtype);
  return register_type(resized_shape(old, lb, extent), MPI_COMBINER_RESIZED, {}, {lb, extent},
                       {oldtype});
}

MPI_Datatype type_dup(MPI_Datatype oldtype) {
  const Datatype& old = datatype(oldtype);
  Datatype t;
  t.size = old.size;
  t.lb = old.lb;
  t.ub = old.ub;
  t.true_lb = old.true_lb;
  t.true_ub = old.true_ub;
  t.alignment = old.alignment;
  t.explicit_lb = old.explicit_lb;
  t.explicit_ub = old.explicit_ub;
  t.reduction_basic = old.reduction_basic;
  t.layout = old.layout;
  t.too_large = old.too_large;
  finish_shape(t);
  bool committed = old.committed;
  MPI_Datatype handle = register_type(std::move(t), MPI_COMBINER_DUP, {}, {}, {oldtype});
  datatype(handle).committed = committed;
  try {
    copy_type_attributes(oldtype, handle);
  } catch (...) {
    release_datatype(handle);
    throw;
  }
  return handle;
}

MPI_Datatype type_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                           int order, MPI_Datatype oldtype) {
  if (ndims <= 0)
    throw MpiError(MPI_ERR_ARG, "ndims must be positive (got " + std::to_string(ndims) + ")");
  check_array(sizes, ndims, "array_of_sizes");
  check_array(subsizes, ndims, "array_of_subsizes");
  check_array(starts, ndims, "array_of_starts");
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    throw MpiError(MPI_ERR_ARG, "order must be MPI_ORDER_C or MPI_ORDER_FORTRAN (got " +
                                    std::to_string(order) + ")");
  for (int i = 0; i < ndims; ++i) {
    if (sizes[i] <= 0 || subsizes[i] < 0 || subsizes[i] > sizes[i] || starts[i] < 0 ||
        starts[i] > sizes[i] - subsizes[i])
      throw MpiError(MPI_ERR_ARG, "dimension " + std::to_string(i) + ": size " +
                                      std::to_string(sizes[i]) + ", subsize " +
                                      std::to_string(subsizes[i]) + ", start " +
                                      std::to_string(starts[i]) +
                                      " do not describe a subarray inside the array");
  }
  const Datatype& old = datatype(oldtype);
  // Dimension d of the fastest-varying-first order.
  auto dim = [&](int d) { return order == MPI_ORDER_FORTRAN ? d : ndims - 1 - d; };
  MPI_Aint extent = old.extent();
  Checked checked;
  Datatype t = contiguous_shape(subsizes[dim(0)], old);
  MPI_Aint stride = checked.mul(extent, sizes[dim(0)]);
  MPI_Aint displacement = checked.mul(starts[dim(0)], extent);
  for (int d = 1; d < ndims; ++d) {
    t = hvector_shape(subsizes[dim(d)], 1, stride, t);
    displacement = checked.add(displacement, checked.mul(starts[dim(d)], stride));
    stride = checked.mul(stride, sizes[dim(d)]);
  }
  TypeBuilder placed;
  placed.add(t, displacement, 1, 0);
  Datatype result = resized_shape(shape(placed, false), 0, stride);
  result.too_large |= checked.overflow;
  std::vector<int> integers{ndims};
  integers.insert(integers.end(), sizes, sizes + ndims);
  integers.insert(integers.end(), subsizes, subsizes + ndims);
  integers.insert(integers.end(), starts, starts + ndims);
  integers.push_back(order);
  return register_type(std::move(result), MPI_COMBINER_SUBARRAY, std::move(integers), {},
                       {oldtype});
}

MPI_Datatype type_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                         const int dargs[], const int psizes[], int order, MPI_Datatype oldtype) {
  if (size <= 0 || rank < 0 || rank >= size)
    throw MpiError(MPI_ERR_ARG, "rank " + std::to_string(rank) + " is not in a group of size " +
                                    std::to_string(size));
  if (ndims <= 0)
    throw MpiError(MPI_ERR_ARG, "ndims must be positive (got " + std::to_string(ndims) + ")");
  check_array(gsizes, ndims, "array_of_gsizes");
  check_array(distribs, ndims, "array_of_distribs");
  check_array(dargs, ndims, "array_of_dargs");
  check_array(psizes, ndims, "array_of_psizes");
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    throw MpiError(MPI_ERR_ARG, "order must be MPI_ORDER_C or MPI_ORDER_FORTRAN (got " +
                                    std::to_string(order) + ")");
  long long processes = 1;
  for (int i = 0; i < ndims; ++i) {
    if (gsizes[i] <= 0 || psizes[i] <= 0)
      throw MpiError(MPI_ERR_ARG, "dimension " + std::to_string(i) + ": gsize " +
                                      std::to_string(gsizes[i]) + " and psize " +
                                      std::to_string(psizes[i]) + " must be positive");
    processes *= psizes[i];
  }
  if (processes != size)
    throw MpiError(MPI_ERR_ARG, "the process grid has " + std::to_string(processes) +
                                    " processes but size is " + std::to_string(size));
  // Process coordinates: the grid is always in row-major order.
  std::vector<int> coords(ndims);
  for (int i = ndims - 1, r = rank; i >= 0; --i) {
    coords[i] = r % psizes[i];
    r /= psizes[i];
  }
  const Datatype& old = datatype(oldtype);
  Datatype t = resized_shape(old, old.lb, old.extent());  // a copy of old's shape
  MPI_Aint element = old.extent();  // extent of one index step in the current dimension
  Checked checked;
  for (int step = 0; step < ndims; ++step) {
    int d = order == MPI_ORDER_FORTRAN ? step : ndims - 1 - step;
    long long g = gsizes[d], p = psizes[d], c = coords[d];
    TypeBuilder b;
    switch (distribs[d]) {
      case MPI_DISTRIBUTE_NONE:
        b.add(t, 0, g, element);
        break;
      case MPI_DISTRIBUTE_BLOCK: {
        long long darg = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : dargs[d];
        if (darg <= 0 || darg * p < g)
          throw MpiError(MPI_ERR_ARG, "dimension " + std::to_string(d) + ": block size " +
                                          std::to_string(darg) + " times " + std::to_string(p) +
                                          " processes does not cover " + std::to_string(g) +
                                          " elements");
        long long mine = std::clamp(g - c * darg, 0LL, darg);
        b.add(t, c * darg * element, mine, element);
        break;
      }
      case MPI_DISTRIBUTE_CYCLIC: {
        long long darg = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[d];
        if (darg <= 0)
          throw MpiError(MPI_ERR_ARG, "dimension " + std::to_string(d) + ": cyclic block size " +
                                          std::to_string(darg) + " must be positive");
        long long blocks = (g + darg - 1) / darg;
        for (long long j = c; j < blocks; j += p)
          b.add(t, j * darg * element, std::min(darg, g - j * darg), element);
        break;
      }
      default:
        throw MpiError(MPI_ERR_ARG, "dimension " + std::to_string(d) + ": invalid distribution " +
                                        std::to_string(distribs[d]));
    }
    element = checked.mul(element, g);
    t = resized_shape(shape(b, false), 0, element);
  }
  t.too_large |= checked.overflow;
  std::vector<int> integers{size, rank, ndims};
  integers.insert(integers.end(), gsizes, gsizes + ndims);
  integers.insert(integers.end(), distribs, distribs + ndims);
  integers.insert(integers.end(), dargs, dargs + ndims);
  integers.insert(integers.end(), psizes, psizes + ndims);
  integers.push_back(order);
  return register_type(std::move(t), MPI_COMBINER_DARRAY, std::move(integers), {}, {oldtype});
}

// ---- MPI_Type_create_f90_* (MPI-3.1 17.1.9) ----

namespace {

// The kind gfortran's SELECTED_REAL_KIND / SELECTED_INT_KIND picks, as the
// storage size in bytes; 0 when no kind fits.  MPI_UNDEFINED means "not
// given".  Precision beyond double is mapped to the 16-byte REAL16 (gfortran
// also has the x87 REAL(10); it is stored in 16 bytes too, but only the
// binary128 kind has a predefined MPI type).
int real_kind_bytes(int p, int r) {
  long long precision = p == MPI_UNDEFINED ? 0 : p;
  long long range = r == MPI_UNDEFINED ? 0 : r;
  if (precision <= 6 && range <= 37) return 4;
  if (precision <= 15 && range <= 307) return 8;
  if (precision <= 33 && range <= 4931) return 16;
  return 0;
}

int int_kind_bytes(int r) {
  long long range = r == MPI_UNDEFINED ? 0 : r;
  if (range <= 2) return 1;
  if (range <= 4) return 2;
  if (range <= 9) return 4;
  if (range <= 18) return 8;
  if (range <= 38) return 16;  // gfortran INTEGER(KIND=16)
  return 0;
}

}  // namespace

MPI_Datatype type_create_f90(int combiner, int p, int r) {
  MPI_Datatype base = MPI_DATATYPE_NULL;
  std::vector<int> integers;
  std::string what;
  switch (combiner) {
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX: {
      if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        throw MpiError(MPI_ERR_ARG, "p and r are both MPI_UNDEFINED");
      int bytes = real_kind_bytes(p, r);
      bool complex = combiner == MPI_COMBINER_F90_COMPLEX;
      if (bytes == 4) base = complex ? MPI_COMPLEX8 : MPI_REAL4;
      if (bytes == 8) base = complex ? MPI_COMPLEX16 : MPI_REAL8;
      if (bytes == 16) base = complex ? MPI_COMPLEX32 : MPI_REAL16;
      integers = {p, r};
      what = std::string(complex ? "complex" : "real") + " kind with precision " +
             std::to_string(p) + " and range " + std::to_string(r);
      break;
    }
    case MPI_COMBINER_F90_INTEGER: {
      if (r == MPI_UNDEFINED) throw MpiError(MPI_ERR_ARG, "r is MPI_UNDEFINED");
      switch (int_kind_bytes(r)) {
        case 1: base = MPI_INTEGER1; break;
        case 2: base = MPI_INTEGER2; break;
        case 4: base = MPI_INTEGER4; break;
        case 8: base = MPI_INTEGER8; break;
        case 16: base = GRIDMPI_INTEGER16; break;
      }
      integers = {r};
      what = "integer kind with range " + std::to_string(r);
      break;
    }
    default:
      throw MpiError(MPI_ERR_INTERN, "type_create_f90: bad combiner " + std::to_string(combiner));
  }
  if (base == MPI_DATATYPE_NULL) throw MpiError(MPI_ERR_ARG, "no " + what + " exists");
  // The standard makes these types predefined: the same arguments give the
  // same handle, and they cannot be freed.
  std::lock_guard lock(table_mutex());
  static std::map<std::vector<int>, MPI_Datatype> cache;
  std::vector<int> key{combiner};
  key.insert(key.end(), integers.begin(), integers.end());
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const Datatype& old = datatype(base);
  auto t = std::make_unique<Datatype>();
  t->size = old.size;
  t->lb = old.lb;
  t->ub = old.ub;
  t->true_lb = old.true_lb;
  t->true_ub = old.true_ub;
  t->alignment = old.alignment;
  t->reduction_basic = old.reduction_basic;
  t->layout = old.layout;
  finish_shape(*t);
  t->name = old.name;
  t->predefined = true;
  t->committed = true;
  t->combiner = combiner;
  t->contents_integers = std::move(integers);
  Datatype* raw = t.get();
  raw->handle = datatype_table().add(std::move(t));
  cache.emplace(std::move(key), raw->handle);
  return raw->handle;
}

// ---- the pack engine ----

namespace {

// Copies between the packed stream (cursor) and the user's buffer.  Runs of
// the common small sizes get fixed-size copies the compiler turns into
// plain loads and stores.
template <bool Pack>
struct StreamCopy {
  std::byte* cursor;

  void operator()(std::uintptr_t address, std::size_t n) {
    auto* user = reinterpret_cast<std::byte*>(address);
    if constexpr (Pack)
      std::memcpy(cursor, user, n);
    else
      std::memcpy(user, cursor, n);
    cursor += n;
  }

  template <std::size_t N>
  void fixed_runs(std::uintptr_t address, MPI_Aint stride, std::size_t count) {
    for (std::size_t k = 0; k < count; ++k) {
      auto* user = reinterpret_cast<std::byte*>(address + static_cast<std::uintptr_t>(
                                                              static_cast<MPI_Aint>(k) * stride));
      if constexpr (Pack)
        std::memcpy(cursor, user, N);
      else
        std::memcpy(user, cursor, N);
      cursor += N;
    }
  }

  void runs(std::uintptr_t address, MPI_Aint stride, std::size_t run, std::size_t count) {
    switch (run) {
      case 1: return fixed_runs<1>(address, stride, count);
      case 2: return fixed_runs<2>(address, stride, count);
      case 4: return fixed_runs<4>(address, stride, count);
      case 8: return fixed_runs<8>(address, stride, count);
      case 16: return fixed_runs<16>(address, stride, count);
      case 32: return fixed_runs<32>(address, stride, count);
    }
    for (std::size_t k = 0; k < count; ++k)
      (*this)(address + static_cast<std::uintptr_t>(static_cast<MPI_Aint>(k) * stride), run);
  }
};

}  // namespace


void Datatype::pack(const void* buf, std::size_t count, std::byte* out) const {
  pack_range(buf, count, 0, {out, count * size});
}

void Datatype::unpack(const std::byte* in, std::size_t count, void* buf) const {
  unpack_range({in, count * size}, count, 0, buf);
}

void Datatype::pack_range(const void* buf, std::size_t count, std::size_t offset,
                          std::span<std::byte> out) const {
  if (out.empty()) return;
  if (offset + out.size() > count * size)
    throw MpiError(MPI_ERR_INTERN, "pack window [" + std::to_string(offset) + ", " +
                                       std::to_string(offset + out.size()) + ") outside the " +
                                       std::to_string(count * size) + "-byte packed stream");
  if (contiguous) {
    std::memcpy(out.data(), at(buf, true_lb + static_cast<MPI_Aint>(offset)), out.size());
    return;
  }
  walk_window(*layout, address(buf), extent(), count, offset, out.size(),
              StreamCopy<true>{out.data()});
}

void Datatype::unpack_range(std::span<const std::byte> in, std::size_t count, std::size_t offset,
                            void* buf) const {
  if (in.empty()) return;
  if (offset + in.size() > count * size)
    throw MpiError(MPI_ERR_TRUNCATE, "unpacking bytes [" + std::to_string(offset) + ", " +
                                         std::to_string(offset + in.size()) + ") into a " +
                                         std::to_string(count * size) + "-byte receive buffer");
  if (contiguous) {
    std::memcpy(at(buf, true_lb + static_cast<MPI_Aint>(offset)), in.data(), in.size());
    return;
  }
  // The stream is only read when unpacking.
  walk_window(*layout, address(buf), extent(), count, offset, in.size(),
              StreamCopy<false>{const_cast<std::byte*>(in.data())});
}

namespace {

// Basic elements in the first `bytes` packed bytes of one element; -1 when
// the bytes end inside a basic element.
long long elements_in_prefix(const Layout& layout, std::size_t bytes) {
  long long elements = 0;
  for (const LayoutItem& item : layout.items) {
    if (bytes == 0) break;
    if (bytes >= item.bytes()) {
      bytes -= item.bytes();
      elements += static_cast<long long>(item.elements());
      continue;
    }
    std::size_t runs = bytes / item.run_bytes;
    elements += static_cast<long long>(runs * item.run_elements);
    bytes %= item.run_bytes;
    if (item.is_leaf()) {
      if (bytes % item.basic_size != 0) return -1;
      return elements + static_cast<long long>(bytes / item.basic_size);
    }
    long long rest = elements_in_prefix(*item.body, bytes);
    return rest < 0 ? -1 : elements + rest;
  }
  return elements;
}

// Packed bytes of the first `elements` basic elements of one element.
std::size_t bytes_of_prefix(const Layout& layout, std::size_t elements) {
  std::size_t bytes = 0;
  for (const LayoutItem& item : layout.items) {
    if (elements == 0) break;
    if (elements >= item.elements()) {
      elements -= item.elements();
      bytes += item.bytes();
      continue;
    }
    std::size_t runs = elements / item.run_elements;
    bytes += runs * item.run_bytes;
    elements %= item.run_elements;
    if (item.is_leaf()) return bytes + elements * item.basic_size;
    return bytes + bytes_of_prefix(*item.body, elements);
  }
  return bytes;
}

}  // namespace

MPI_Count Datatype::elements_in(std::size_t bytes) const {
  if (size == 0) return 0;
  std::size_t whole = bytes / size;
  long long partial = elements_in_prefix(*layout, bytes % size);
  if (partial < 0) return MPI_UNDEFINED;
  return static_cast<MPI_Count>(whole * basic_elements) + partial;
}

std::size_t Datatype::bytes_for_elements(MPI_Count elements) const {
  if (elements <= 0 || basic_elements == 0) return 0;
  auto n = static_cast<std::size_t>(elements);
  return n / basic_elements * size + bytes_of_prefix(*layout, n % basic_elements);
}

void Datatype::for_each_block(
    std::size_t count, const std::function<void(MPI_Aint, MPI_Datatype, std::size_t)>& fn) const {
  walk_elements(*layout, 0, extent(), count,
                [&](std::uintptr_t where, MPI_Datatype basic, std::size_t n) {
                  fn(static_cast<MPI_Aint>(where), basic, n);
                });
}

void copy_typed(const void* src, int scount, MPI_Datatype stype, void* dst, int rcount,
                MPI_Datatype rtype) {
  if (scount < 0 || rcount < 0) throw MpiError(MPI_ERR_COUNT, "negative count in a local copy");
  const Datatype& s = datatype(stype);
  const Datatype& r = datatype(rtype);
  std::size_t send_bytes = static_cast<std::size_t>(scount) * s.size;
  std::size_t receive_bytes = static_cast<std::size_t>(rcount) * r.size;
  std::size_t n = std::min(send_bytes, receive_bytes);
  if (n > 0) {
    if (s.contiguous && r.contiguous) {
      std::memmove(at(dst, r.true_lb), at(src, s.true_lb), n);
    } else if (s.contiguous) {
      r.unpack_range({at(src, s.true_lb), n}, rcount, 0, dst);
    } else if (r.contiguous) {
      s.pack_range(src, scount, 0, {at(dst, r.true_lb), n});
    } else {
      // Both sides scattered: stage through a bounded buffer.
      constexpr std::size_t chunk = 64 * 1024;
      std::vector<std::byte> staging(std::min(chunk, n));
      for (std::size_t offset = 0; offset < n; offset += staging.size()) {
        std::size_t len = std::min(staging.size(), n - offset);
        s.pack_range(src, scount, offset, {staging.data(), len});
        r.unpack_range({staging.data(), len}, rcount, offset, dst);
      }
    }
  }
  if (send_bytes > receive_bytes)
    throw MpiError(MPI_ERR_TRUNCATE, "message of " + std::to_string(send_bytes) +
                                         " bytes truncated: the receive buffer holds " +
                                         std::to_string(receive_bytes) + " bytes (" +
                                         std::to_string(rcount) + " x " +
                                         type_name_for_message(rtype) + ")");
}

}  // namespace gridmpi::core
