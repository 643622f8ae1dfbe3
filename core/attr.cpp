// Keyvals and attribute caching on communicators and datatypes.
//
// MPI-2.2 made the delete order observable: attributes are deleted in the
// reverse order of their setting (MPI_Finalize on MPI_COMM_SELF, and we use
// the same rule for MPI_Comm_free).  Comm::attribute_order and the vectors of
// type attributes keep that order.
#include "core/attr.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/datatype.hpp"
#include "core/group.hpp"

namespace gridmpi::core {

namespace {

std::array<int, GRIDMPI_PREDEFINED_KEYVAL_COUNT>& predefined_values() {
  static std::array<int, GRIDMPI_PREDEFINED_KEYVAL_COUNT> values{};
  return values;
}

bool is_predefined_comm_keyval(int keyval) noexcept {
  return keyval >= MPI_TAG_UB && keyval <= IMPI_HOST_COLOR;
}

// Attributes on one datatype, in the order they were set.
using TypeAttributes = std::vector<std::pair<int, void*>>;
std::map<MPI_Datatype, TypeAttributes>& type_attributes() {
  static std::map<MPI_Datatype, TypeAttributes> attrs;
  return attrs;
}

const char* kind_name(KeyvalKind kind) {
  switch (kind) {
    case KeyvalKind::comm: return "communicator";
    case KeyvalKind::type: return "datatype";
    case KeyvalKind::win: return "window";
  }
  return "?";
}

// A keyval that may be used for a set/get/delete of the given kind.  A keyval
// freed by the user stays usable while attributes still hold it (MPI-3.1
// 6.7.2: it is only actually freed when its last attribute is deleted), as
// MPICH and Open MPI allow; once gone, its handle is invalid.
Keyval& usable_keyval(int keyval, KeyvalKind kind) {
  Keyval* k = keyval_table().find(keyval);
  if (!k) throw MpiError(MPI_ERR_KEYVAL, fmt::format("invalid or freed keyval {}", keyval));
  if (k->kind != kind)
    throw MpiError(MPI_ERR_KEYVAL, fmt::format("keyval {} is a {} keyval, not a {} keyval", keyval,
                                               kind_name(k->kind), kind_name(kind)));
  return *k;
}

// The keyval of an attribute already stored (it may have been freed since).
Keyval& stored_keyval(int keyval) {
  Keyval* k = keyval_table().find(keyval);
  if (!k) throw MpiError(MPI_ERR_INTERN, fmt::format("attribute with a vanished keyval {}", keyval));
  return *k;
}

void drop_keyval_reference(int keyval) {
  Keyval* k = keyval_table().find(keyval);
  if (k && !k->predefined && --k->refcount == 0) keyval_table().release(keyval);
}

int call_comm_delete(const Comm& comm, int keyval, void* value) {
  Keyval& k = stored_keyval(keyval);
  if (!k.comm_delete) return MPI_SUCCESS;
  return k.comm_delete(comm.handle, keyval, value, k.extra_state);
}

int call_type_delete(MPI_Datatype type, int keyval, void* value) {
  Keyval& k = stored_keyval(keyval);
  if (!k.type_delete) return MPI_SUCCESS;
  return k.type_delete(type, keyval, value, k.extra_state);
}

void erase_order(std::vector<int>& order, int keyval) {
  order.erase(std::remove(order.begin(), order.end(), keyval), order.end());
}

struct FortranBox {
  std::unique_ptr<MPI_Aint> value;
  int refs = 0;
};
std::mutex& box_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<void*, FortranBox>& boxes() {
  static std::unordered_map<void*, FortranBox> b;
  return b;
}

// An attribute now stores `value` / no longer stores it.
void retain_value(void* value) {
  std::lock_guard lock(box_mutex());
  auto it = boxes().find(value);
  if (it != boxes().end()) ++it->second.refs;
}
void release_value(void* value) {
  std::lock_guard lock(box_mutex());
  auto it = boxes().find(value);
  if (it != boxes().end() && --it->second.refs <= 0) boxes().erase(it);
}

}  // namespace

void* make_fortran_attr_box(MPI_Aint value) {
  auto v = std::make_unique<MPI_Aint>(value);
  void* key = v.get();
  std::lock_guard lock(box_mutex());
  boxes().emplace(key, FortranBox{std::move(v), 0});
  return key;
}

bool fortran_attr_box_value(void* stored, MPI_Aint* value) noexcept {
  std::lock_guard lock(box_mutex());
  auto it = boxes().find(stored);
  if (it == boxes().end()) return false;
  *value = *it->second.value;
  return true;
}

void discard_unused_fortran_attr_box(void* box) noexcept {
  std::lock_guard lock(box_mutex());
  auto it = boxes().find(box);
  if (it != boxes().end() && it->second.refs <= 0) boxes().erase(it);
}

HandleTable<Keyval>& keyval_table() {
  static HandleTable<Keyval>& table = []() -> HandleTable<Keyval>& {
    static HandleTable<Keyval> t(MPI_ERR_KEYVAL);
    for (int h = 1; h < GRIDMPI_PREDEFINED_KEYVAL_COUNT; ++h) {
      auto k = std::make_unique<Keyval>();
      k->handle = h;
      k->predefined = true;
      k->kind = h >= MPI_WIN_BASE ? KeyvalKind::win : KeyvalKind::comm;
      t.put_at(h, std::move(k));
    }
    return t;
  }();
  return table;
}

void set_predefined_attribute(int keyval, int value) {
  if (keyval <= 0 || keyval >= GRIDMPI_PREDEFINED_KEYVAL_COUNT)
    throw MpiError(MPI_ERR_INTERN, fmt::format("{} is not a predefined keyval", keyval));
  predefined_values()[keyval] = value;
}

int* predefined_attribute(int keyval) noexcept {
  if (!is_predefined_comm_keyval(keyval)) return nullptr;
  return &predefined_values()[keyval];
}

// ---- communicators -------------------------------------------------------

int create_comm_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* del,
                       void* extra_state) {
  auto k = std::make_unique<Keyval>();
  k->kind = KeyvalKind::comm;
  k->comm_copy = copy;
  k->comm_delete = del;
  k->extra_state = extra_state;
  Keyval* raw = k.get();
  raw->handle = keyval_table().add(std::move(k));
  return raw->handle;
}

int create_type_keyval(MPI_Type_copy_attr_function* copy, MPI_Type_delete_attr_function* del,
                       void* extra_state) {
  auto k = std::make_unique<Keyval>();
  k->kind = KeyvalKind::type;
  k->type_copy = copy;
  k->type_delete = del;
  k->extra_state = extra_state;
  Keyval* raw = k.get();
  raw->handle = keyval_table().add(std::move(k));
  return raw->handle;
}

void free_keyval(int* keyval, KeyvalKind kind) {
  require(keyval != nullptr, MPI_ERR_ARG, "keyval pointer is null");
  Keyval* k = keyval_table().find(*keyval);
  if (k && k->predefined)
    throw MpiError(MPI_ERR_KEYVAL, fmt::format("cannot free predefined keyval {}", *keyval));
  Keyval& usable = usable_keyval(*keyval, kind);
  // Freeing again while attributes keep it alive (e.g. from a delete
  // callback) drops nothing more.
  if (!usable.freed) {
    usable.freed = true;
    drop_keyval_reference(*keyval);
  }
  *keyval = MPI_KEYVAL_INVALID;
}

void set_comm_attr(Comm& comm, int keyval, void* value) {
  Keyval& k = usable_keyval(keyval, KeyvalKind::comm);
  if (k.predefined)
    throw MpiError(MPI_ERR_KEYVAL, fmt::format("predefined attribute {} cannot be set", keyval));
  auto it = comm.attributes.find(keyval);
  if (it != comm.attributes.end()) {
    // As if MPI_Comm_delete_attr ran first.
    int rc = call_comm_delete(comm, keyval, it->second);
    if (rc != MPI_SUCCESS)
      throw MpiError(rc, fmt::format("delete callback of keyval {} failed with {}", keyval, rc));
    release_value(it->second);
    it->second = value;
    erase_order(comm.attribute_order, keyval);
  } else {
    comm.attributes.emplace(keyval, value);
    ++k.refcount;
  }
  retain_value(value);
  comm.attribute_order.push_back(keyval);
}

bool get_comm_attr(const Comm& comm, int keyval, void** value) {
  if (int* p = predefined_attribute(keyval)) {
    *value = p;
    return true;
  }
  usable_keyval(keyval, KeyvalKind::comm);
  auto it = comm.attributes.find(keyval);
  if (it == comm.attributes.end()) return false;
  *value = it->second;
  return true;
}

void delete_comm_attr(Comm& comm, int keyval) {
  Keyval& k = usable_keyval(keyval, KeyvalKind::comm);
  if (k.predefined)
    throw MpiError(MPI_ERR_KEYVAL, fmt::format("predefined attribute {} cannot be deleted", keyval));
  auto it = comm.attributes.find(keyval);
  if (it == comm.attributes.end())
    throw MpiError(MPI_ERR_KEYVAL, fmt::format("no attribute for keyval {} on this communicator", keyval));
  int rc = call_comm_delete(comm, keyval, it->second);
  if (rc != MPI_SUCCESS)
    throw MpiError(rc, fmt::format("delete callback of keyval {} failed with {}", keyval, rc));
  release_value(it->second);
  comm.attributes.erase(it);
  erase_order(comm.attribute_order, keyval);
  drop_keyval_reference(keyval);
}

void copy_comm_attributes(const Comm& from, Comm& to) {
  for (int keyval : from.attribute_order) {
    Keyval& k = stored_keyval(keyval);
    if (!k.comm_copy) continue;
    void* out = nullptr;
    int flag = 0;
    int rc = k.comm_copy(from.handle, keyval, k.extra_state, from.attributes.at(keyval), &out, &flag);
    if (rc != MPI_SUCCESS) {
      try {
        delete_all_comm_attributes(to);
      } catch (const MpiError&) {
        // The copy failure is the error to report.
      }
      throw MpiError(rc, fmt::format("copy callback of keyval {} failed with {}", keyval, rc));
    }
    if (flag) {
      to.attributes[keyval] = out;
      retain_value(out);
      to.attribute_order.push_back(keyval);
      ++k.refcount;
    }
  }
}

void delete_all_comm_attributes(Comm& comm) {
  int first_error = MPI_SUCCESS;
  int failed_keyval = 0;
  // Newest first; a callback may itself set or delete attributes, so walk a snapshot.
  std::vector<int> order(comm.attribute_order.rbegin(), comm.attribute_order.rend());
  for (int keyval : order) {
    auto it = comm.attributes.find(keyval);
    if (it == comm.attributes.end()) continue;
    int rc = call_comm_delete(comm, keyval, it->second);
    if (rc != MPI_SUCCESS) {
      if (first_error == MPI_SUCCESS) {
        first_error = rc;
        failed_keyval = keyval;
      }
      continue;
    }
    release_value(it->second);
    comm.attributes.erase(keyval);
    erase_order(comm.attribute_order, keyval);
    drop_keyval_reference(keyval);
  }
  if (first_error != MPI_SUCCESS)
    throw MpiError(first_error,
                   fmt::format("delete callback of keyval {} failed with {}", failed_keyval, first_error));
}

// ---- datatypes -------------------------------------------------------------

void set_type_attr(MPI_Datatype type, int keyval, void* value) {
  datatype(type);  // validates the handle
  Keyval& k = usable_keyval(keyval, KeyvalKind::type);
  auto& attrs = type_attributes()[type];
  auto it = std::find_if(attrs.begin(), attrs.end(), [&](auto& a) { return a.first == keyval; });
  if (it != attrs.end()) {
    int rc = call_type_delete(type, keyval, it->second);
    if (rc != MPI_SUCCESS)
      throw MpiError(rc, fmt::format("delete callback of keyval {} failed with {}", keyval, rc));
    release_value(it->second);
    attrs.erase(it);
  } else {
    ++k.refcount;
  }
  attrs.emplace_back(keyval, value);
  retain_value(value);
}

bool get_type_attr(MPI_Datatype type, int keyval, void** value) {
  datatype(type);
  usable_keyval(keyval, KeyvalKind::type);
  auto found = type_attributes().find(type);
  if (found == type_attributes().end()) return false;
  for (auto& [k, v] : found->second) {
    if (k == keyval) {
      *value = v;
      return true;
    }
  }
  return false;
}

void delete_type_attr(MPI_Datatype type, int keyval) {
  datatype(type);
  usable_keyval(keyval, KeyvalKind::type);
  auto found = type_attributes().find(type);
  auto missing = [&] {
    return MpiError(MPI_ERR_KEYVAL, fmt::format("no attribute for keyval {} on datatype {}", keyval, type));
  };
  if (found == type_attributes().end()) throw missing();
  auto& attrs = found->second;
  auto it = std::find_if(attrs.begin(), attrs.end(), [&](auto& a) { return a.first == keyval; });
  if (it == attrs.end()) throw missing();
  int rc = call_type_delete(type, keyval, it->second);
  if (rc != MPI_SUCCESS)
    throw MpiError(rc, fmt::format("delete callback of keyval {} failed with {}", keyval, rc));
  release_value(it->second);
  attrs.erase(it);
  if (attrs.empty()) type_attributes().erase(found);
  drop_keyval_reference(keyval);
}

void copy_type_attributes(MPI_Datatype from, MPI_Datatype to) {
  auto found = type_attributes().find(from);
  if (found == type_attributes().end()) return;
  TypeAttributes snapshot = found->second;  // callbacks may touch the map
  for (auto& [keyval, value] : snapshot) {
    Keyval& k = stored_keyval(keyval);
    if (!k.type_copy) continue;
    void* out = nullptr;
    int flag = 0;
    int rc = k.type_copy(from, keyval, k.extra_state, value, &out, &flag);
    if (rc != MPI_SUCCESS) {
      try {
        delete_type_attributes(to);
      } catch (const MpiError&) {
      }
      throw MpiError(rc, fmt::format("copy callback of keyval {} failed with {}", keyval, rc));
    }
    if (flag) {
      type_attributes()[to].emplace_back(keyval, out);
      retain_value(out);
      ++k.refcount;
    }
  }
}

void delete_type_attributes(MPI_Datatype type) {
  auto found = type_attributes().find(type);
  if (found == type_attributes().end()) return;
  TypeAttributes snapshot = found->second;
  int first_error = MPI_SUCCESS;
  for (auto it = snapshot.rbegin(); it != snapshot.rend(); ++it) {
    int rc = call_type_delete(type, it->first, it->second);
    if (rc != MPI_SUCCESS) {
      if (first_error == MPI_SUCCESS) first_error = rc;
      continue;
    }
    auto& attrs = type_attributes()[type];
    release_value(it->second);
    std::erase_if(attrs, [&](auto& a) { return a.first == it->first; });
    drop_keyval_reference(it->first);
  }
  auto again = type_attributes().find(type);
  if (again != type_attributes().end() && again->second.empty()) type_attributes().erase(again);
  if (first_error != MPI_SUCCESS)
    throw MpiError(first_error, fmt::format("a datatype attribute delete callback failed with {}", first_error));
}

// ---- windows ----------------------------------------------------------
// Window keyvals keep their callbacks in comm_copy / comm_delete (same C
// signature with an MPI_Win); attributes are kept in setting order.

namespace {

std::map<MPI_Win, std::vector<std::pair<int, void*>>>& win_attributes() {
  static std::map<MPI_Win, std::vector<std::pair<int, void*>>> attrs;
  return attrs;
}

int call_win_delete(MPI_Win win, int keyval, void* value) {
  Keyval& k = stored_keyval(keyval);
  if (!k.comm_delete) return MPI_SUCCESS;
  return reinterpret_cast<MPI_Win_delete_attr_function*>(k.comm_delete)(win, keyval, value, k.extra_state);
}

}  // namespace

int create_win_keyval(MPI_Win_copy_attr_function* copy, MPI_Win_delete_attr_function* del, void* extra_state) {
  auto k = std::make_unique<Keyval>();
  k->kind = KeyvalKind::win;
  k->comm_copy = reinterpret_cast<MPI_Comm_copy_attr_function*>(copy);
  k->comm_delete = reinterpret_cast<MPI_Comm_delete_attr_function*>(del);
  k->extra_state = extra_state;
  Keyval* raw = k.get();
  raw->handle = keyval_table().add(std::move(k));
  return raw->handle;
}

void set_win_attr(MPI_Win win, int keyval, void* value) {
  Keyval& k = usable_keyval(keyval, KeyvalKind::win);
  if (k.predefined)
    throw MpiError(MPI_ERR_KEYVAL, fmt::format("predefined attribute {} cannot be set", keyval));
  auto& attrs = win_attributes()[win];
  auto it = std::find_if(attrs.begin(), attrs.end(), [&](auto& a) { return a.first == keyval; });
  if (it != attrs.end()) {
    int rc = call_win_delete(win, keyval, it->second);
    if (rc != MPI_SUCCESS)
      throw MpiError(rc, fmt::format("delete callback of keyval {} failed with {}", keyval, rc));
    release_value(it->second);
    attrs.erase(it);
  } else {
    ++k.refcount;
  }
  attrs.emplace_back(keyval, value);
  retain_value(value);
}

bool get_win_attr(MPI_Win win, int keyval, void** value) {
  usable_keyval(keyval, KeyvalKind::win);
  auto found = win_attributes().find(win);
  if (found == win_attributes().end()) return false;
  for (auto& [k, v] : found->second) {
    if (k == keyval) {
      *value = v;
      return true;
    }
  }
  return false;
}

void delete_win_attr(MPI_Win win, int keyval) {
  Keyval& k = usable_keyval(keyval, KeyvalKind::win);
  if (k.predefined)
    throw MpiError(MPI_ERR_KEYVAL, fmt::format("predefined attribute {} cannot be deleted", keyval));
  auto found = win_attributes().find(win);
  auto missing = [&] {
    return MpiError(MPI_ERR_KEYVAL, fmt::format("no attribute for keyval {} on window {}", keyval, win));
  };
  if (found == win_attributes().end()) throw missing();
  auto& attrs = found->second;
  auto it = std::find_if(attrs.begin(), attrs.end(), [&](auto& a) { return a.first == keyval; });
  if (it == attrs.end()) throw missing();
  int rc = call_win_delete(win, keyval, it->second);
  if (rc != MPI_SUCCESS)
    throw MpiError(rc, fmt::format("delete callback of keyval {} failed with {}", keyval, rc));
  release_value(it->second);
  attrs.erase(it);
  if (attrs.empty()) win_attributes().erase(found);
  drop_keyval_reference(keyval);
}

void delete_win_attributes(MPI_Win win) {
  auto found = win_attributes().find(win);
  if (found == win_attributes().end()) return;
  auto snapshot = found->second;
  int first_error = MPI_SUCCESS;
  for (auto it = snapshot.rbegin(); it != snapshot.rend(); ++it) {
    int rc = call_win_delete(win, it->first, it->second);
    if (rc != MPI_SUCCESS) {
      if (first_error == MPI_SUCCESS) first_error = rc;
      continue;
    }
    release_value(it->second);
    std::erase_if(win_attributes()[win], [&](auto& a) { return a.first == it->first; });
    drop_keyval_reference(it->first);
  }
  // The handle will be reused: forget what is left.
  win_attributes().erase(win);
  if (first_error != MPI_SUCCESS)
    throw MpiError(first_error, fmt::format("a window attribute delete callback failed with {}", first_error));
}

// ---- end of windows ----

}  // namespace gridmpi::core

// ---- predefined callbacks (C linkage, declared in mpi.h) -------------------

extern "C" {

int MPI_COMM_NULL_COPY_FN(MPI_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_COMM_DUP_FN(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_COMM_NULL_DELETE_FN(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }

int MPI_TYPE_NULL_COPY_FN(MPI_Datatype, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_TYPE_DUP_FN(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype, int, void*, void*) { return MPI_SUCCESS; }

int MPI_WIN_NULL_COPY_FN(MPI_Win, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_WIN_DUP_FN(MPI_Win, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_WIN_NULL_DELETE_FN(MPI_Win, int, void*, void*) { return MPI_SUCCESS; }

}  // extern "C"
