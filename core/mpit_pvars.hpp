// Performance variables of the MPI tool information interface (MPI-3.1
// 14.3.7, core/mpit.cpp): what a layer registers so that MPI_T_pvar_* can
// read it.
//
// A pvar is a process-wide value the owning layer keeps up to date and
// core/mpit.cpp reads through `read` (any thread, without the big lock: the
// owner stores it with relaxed atomics, counters with load + store, no
// locked instruction on the hot path).  Every pvar can be reset but not
// written (readonly = 0: MPI-3.1 counts a reset as a change), is not
// continuous (MPI_T_pvar_start/stop delimit what a handle counts), not
// atomic (no MPI_T_pvar_readreset), bound to no MPI object, one value per
// handle: a counter (MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG) or a
// timer (MPI_T_PVAR_CLASS_TIMER, MPI_DOUBLE seconds).  A handle reads what
// the value grew by while the handle was started, since its allocation or
// its last reset.
//
// Register at static initialisation (a namespace-scope `Registration`) of a
// library source, so that every pvar exists before the first
// MPI_T_init_thread; the tables only grow.  Owner: core/.
#pragma once

namespace gridmpi::core::pvars {

enum class Kind { counter, timer };

struct Pvar {
  const char* name;         // "request.predict.hits": dotted, as the parameters
  const char* description;  // one sentence, units included
  Kind kind;
  int verbosity;            // MPI_T_VERBOSITY_*
  // The value now: a counter's count (read_count) or a timer's seconds
  // (read_seconds); the other is null.
  unsigned long long (*read_count)();
  double (*read_seconds)();
};

void register_pvar(const Pvar& pvar);

struct Registration {
  explicit Registration(const Pvar& pvar) { register_pvar(pvar); }
};

}  // namespace gridmpi::core::pvars
