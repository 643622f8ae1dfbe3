/* The vendor MPI plug-in: compiled with the vendor's own mpicc (CMake does it
 * once per vendor found, see p2p/vendor/CMakeLists.txt) and loaded by
 * vendor_library.cpp with dlmopen into a namespace of its own.  It turns the
 * C table of vendor_abi.h into vendor MPI calls; nothing of the vendor's
 * (handles, constants, status objects) leaves this file.
 *
 * GRIDMPI_VENDOR_NAME is defined on the compiler's command line. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vendor_abi.h"

#ifndef GRIDMPI_VENDOR_NAME
#define GRIDMPI_VENDOR_NAME "vendor"
#endif

/* The RTLD_GLOBAL interposer.  Open MPI dlopen()s its MCA components with
 * RTLD_GLOBAL, which glibc refuses (it crashes in ld.so) for objects in a
 * namespace other than the base one.  Symbol lookup inside our namespace
 * finds this definition first (the plug-in is the namespace's first object),
 * so every dlopen of the vendor library comes here; we drop the flag and call
 * the real one.  The components still resolve their symbols: they link
 * against libmpi/libopen-pal themselves, which are loaded in the namespace. */
void* dlopen(const char* file, int flags) {
  static void* (*real)(const char*, int);
  if (!real) real = (void* (*)(const char*, int))dlsym(RTLD_NEXT, "dlopen");
  return real(file, flags & ~RTLD_GLOBAL);
}

/* The send slots: vendor requests named by their index.  Accessed by one
 * thread at a time (the caller serialises everything but probe_any/wake). */
static MPI_Request* slots;
static int* free_list;
static int slot_count;  /* allocated */
static int free_count;
static int active;
static int* done_indices;

/* The pre-posted receives, named by their index; separate from the send
 * slots so that testsome never completes them. */
static MPI_Request recv_slots[GRIDMPI_VENDOR_MAX_RECV_SLOTS];
static int recv_used[GRIDMPI_VENDOR_MAX_RECV_SLOTS];
static int v_cancel_recv(int slot);

static int grow(void) {
  int n = slot_count ? slot_count * 2 : 64;
  MPI_Request* s = realloc(slots, (size_t)n * sizeof *s);
  if (!s) return -1;
  slots = s;
  int* f = realloc(free_list, (size_t)n * sizeof *f);
  if (!f) return -1;
  free_list = f;
  int* d = realloc(done_indices, (size_t)n * sizeof *d);
  if (!d) return -1;
  done_indices = d;
  /* New slots go on the free list highest first, so low ids are reused. */
  for (int i = n - 1; i >= slot_count; --i) {
    slots[i] = MPI_REQUEST_NULL;
    free_list[free_count++] = i;
  }
  slot_count = n;
  return 0;
}

static int level_to_vendor(int l) {
  switch (l) {
    case 0: return MPI_THREAD_SINGLE;
    case 1: return MPI_THREAD_FUNNELED;
    case 2: return MPI_THREAD_SERIALIZED;
    default: return MPI_THREAD_MULTIPLE;
  }
}

static int level_from_vendor(int l) {
  if (l == MPI_THREAD_SINGLE) return 0;
  if (l == MPI_THREAD_FUNNELED) return 1;
  if (l == MPI_THREAD_SERIALIZED) return 2;
  return 3;
}

static unsigned long long job;

/* Not cryptographic: only two vendor jobs of one gridmpi job must differ. */
static unsigned long long draw_job_id(void) {
  unsigned long long x = 0;
  FILE* f = fopen("/dev/urandom", "rb");
  if (f) {
    if (fread(&x, sizeof x, 1, f) != 1) x = 0;
    fclose(f);
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  x ^= ((unsigned long long)ts.tv_sec << 32) ^ (unsigned long long)ts.tv_nsec ^
       ((unsigned long long)getpid() << 16);
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  for (const char* p = host; *p; ++p) x = (x ^ (unsigned char)*p) * 0x100000001b3ULL;
  return x;
}

static int v_init(int asked, int* granted, int* rank, int* size) {
  int provided = MPI_THREAD_SINGLE;
  int rc = MPI_Init_thread(NULL, NULL, level_to_vendor(asked), &provided);
  if (rc != MPI_SUCCESS) return rc;
  /* Errors come back as codes (we report them with ranks and causes). */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  *granted = level_from_vendor(provided);
  if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, rank)) != MPI_SUCCESS) return rc;
  if ((rc = MPI_Comm_size(MPI_COMM_WORLD, size)) != MPI_SUCCESS) return rc;
  if (*rank == 0) job = draw_job_id();
  return MPI_Bcast(&job, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
}

static unsigned long long v_job_id(void) { return job; }

static int v_finalize(void) {
  /* Sends not yet completed would make MPI_Finalize hang or complain: the
   * transport flushes them first; whatever is left is cancelled here. */
  for (int i = 0; i < slot_count; ++i)
    if (slots[i] != MPI_REQUEST_NULL) MPI_Request_free(&slots[i]);
  for (int i = 0; i < GRIDMPI_VENDOR_MAX_RECV_SLOTS; ++i)
    if (recv_used[i]) v_cancel_recv(i);
  int rc = MPI_Finalize();
  free(slots);
  free(free_list);
  free(done_indices);
  slots = NULL;
  free_list = done_indices = NULL;
  slot_count = free_count = active = 0;
  return rc;
}

static void v_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

static void v_library_version(char* buf, int len) {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int n = 0;
  if (len <= 0) return;
  if (MPI_Get_library_version(text, &n) != MPI_SUCCESS) n = 0;
  text[n < (int)sizeof text ? n : (int)sizeof text - 1] = '\0';
  snprintf(buf, (size_t)len, "%s", text);
}

static void v_error_string(int code, char* buf, int len) {
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  if (len <= 0) return;
  if (MPI_Error_string(code, text, &n) != MPI_SUCCESS)
    snprintf(text, sizeof text, "vendor MPI error %d", code);
  else
    text[n < (int)sizeof text ? n : (int)sizeof text - 1] = '\0';
  snprintf(buf, (size_t)len, "%s", text);
}

static double v_wtime(void) { return MPI_Wtime(); }

static int v_isend(const void* buf, size_t len, int dest, int tag, int* slot) {
  if (len > (size_t)INT_MAX) return MPI_ERR_COUNT;
  if (free_count == 0 && grow() != 0) return MPI_ERR_NO_MEM;
  int s = free_list[--free_count];
  int rc = MPI_Isend(buf, (int)len, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &slots[s]);
  if (rc != MPI_SUCCESS) {
    slots[s] = MPI_REQUEST_NULL;
    free_list[free_count++] = s;
    return rc;
  }
  ++active;
  *slot = s;
  return MPI_SUCCESS;
}

static int v_testsome(int* done, int max, int* count, int* failed_slot) {
  *count = 0;
  *failed_slot = -1;
  if (active == 0 || slots == NULL) return MPI_SUCCESS;
  int outcount = 0;
  /* MPI_Testsome may complete more than max; we only ask when the caller can
   * take every slot (max >= slot_count) or fall back to single tests. */
  if (max >= slot_count) {
    /* Open MPI declares MPI_STATUSES_IGNORE as a null MPI_Status* and GCC
     * then warns about the array parameter; ignoring statuses is legal. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
    int rc = MPI_Testsome(slot_count, slots, &outcount, done_indices, MPI_STATUSES_IGNORE);
#pragma GCC diagnostic pop
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return rc;
    if (outcount == MPI_UNDEFINED) outcount = 0;
    for (int i = 0; i < outcount; ++i) {
      done[i] = done_indices[i];
      free_list[free_count++] = done_indices[i];
    }
    active -= outcount;
    *count = outcount;
    return rc == MPI_ERR_IN_STATUS ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
  }
  for (int i = 0; i < slot_count && outcount < max; ++i) {
    if (slots[i] == MPI_REQUEST_NULL) continue;
    int flag = 0;
    int rc = MPI_Test(&slots[i], &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      *failed_slot = i;
      *count = outcount;
      return rc;
    }
    if (flag) {
      done[outcount++] = i;
      free_list[free_count++] = i;
      --active;
    }
  }
  *count = outcount;
  return MPI_SUCCESS;
}

static int v_pending_sends(void) { return active; }

static int v_isend_now(const void* buf, size_t len, int dest, int tag, int* slot) {
  int rc = v_isend(buf, len, dest, tag, slot);
  if (rc != MPI_SUCCESS) return rc;
  int flag = 0;
  rc = MPI_Test(&slots[*slot], &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return rc;
  if (flag) {
    free_list[free_count++] = *slot;
    --active;
    *slot = -1;
  }
  return MPI_SUCCESS;
}


static int v_post_recv(void* buf, size_t len, int tag, int* slot) {
  if (len > (size_t)INT_MAX) return MPI_ERR_COUNT;
  int s = 0;
  while (s < GRIDMPI_VENDOR_MAX_RECV_SLOTS && recv_used[s]) ++s;
  if (s == GRIDMPI_VENDOR_MAX_RECV_SLOTS) return MPI_ERR_NO_MEM;
  int rc = MPI_Irecv(buf, (int)len, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &recv_slots[s]);
  if (rc != MPI_SUCCESS) return rc;
  recv_used[s] = 1;
  *slot = s;
  return MPI_SUCCESS;
}

static int v_test_recv(int slot, int* flag, int* source, size_t* bytes) {
  *flag = 0;
  if (slot < 0 || slot >= GRIDMPI_VENDOR_MAX_RECV_SLOTS || !recv_used[slot]) return MPI_ERR_REQUEST;
  MPI_Status st;
  int rc = MPI_Test(&recv_slots[slot], flag, &st);
  if (rc != MPI_SUCCESS) return rc; /* a failed receive completed: its request is freed */
  if (!*flag) return MPI_SUCCESS;
  recv_used[slot] = 0;
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  *source = st.MPI_SOURCE;
  *bytes = (size_t)n;
  return MPI_SUCCESS;
}

static int v_cancel_recv(int slot) {
  if (slot < 0 || slot >= GRIDMPI_VENDOR_MAX_RECV_SLOTS || !recv_used[slot]) return MPI_ERR_REQUEST;
  int rc = MPI_Cancel(&recv_slots[slot]);
  if (rc == MPI_SUCCESS) rc = MPI_Wait(&recv_slots[slot], MPI_STATUS_IGNORE);
  recv_used[slot] = 0;
  return rc;
}

static MPI_Message probed = MPI_MESSAGE_NULL;

static int v_improbe(int tag, int* flag, int* source, size_t* bytes) {
  MPI_Status st;
  if (probed != MPI_MESSAGE_NULL) return MPI_ERR_OTHER; /* the caller skipped recv_probed */
  int rc = MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, flag, &probed, &st);
  if (rc != MPI_SUCCESS || !*flag) return rc;
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  *source = st.MPI_SOURCE;
  *bytes = (size_t)n;
  return MPI_SUCCESS;
}

static int v_recv_probed(void* buf, size_t len) {
  if (len > (size_t)INT_MAX) return MPI_ERR_COUNT;
  return MPI_Mrecv(buf, (int)len, MPI_BYTE, &probed, MPI_STATUS_IGNORE);
}

static int v_probe_any(int* source, int* tag, size_t* bytes) {
  MPI_Status st;
  int rc = MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
  if (rc != MPI_SUCCESS) return rc;
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  *source = st.MPI_SOURCE;
  *tag = st.MPI_TAG;
  *bytes = (size_t)n;
  return MPI_SUCCESS;
}

static int v_recv(void* buf, size_t len, int source, int tag) {
  if (len > (size_t)INT_MAX) return MPI_ERR_COUNT;
  return MPI_Recv(buf, (int)len, MPI_BYTE, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static int v_recv_wake(void) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  return MPI_Recv(NULL, 0, MPI_BYTE, me, GRIDMPI_VENDOR_WAKE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static int v_wake(void) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  /* A buffered-size zero-byte message: MPI_Send of 0 bytes completes
   * eagerly in every implementation we know, but Isend + Request_free is
   * certain not to block the waker. */
  MPI_Request r;
  int rc = MPI_Isend(NULL, 0, MPI_BYTE, me, GRIDMPI_VENDOR_WAKE_TAG, MPI_COMM_WORLD, &r);
  if (rc == MPI_SUCCESS) rc = MPI_Request_free(&r);
  return rc;
}

static const struct gridmpi_vendor_ops ops = {
    .abi_version = GRIDMPI_VENDOR_ABI,
    .struct_size = (int)sizeof(struct gridmpi_vendor_ops),
    .name = GRIDMPI_VENDOR_NAME,
    .init = v_init,
    .job_id = v_job_id,
    .finalize = v_finalize,
    .abort = v_abort,
    .library_version = v_library_version,
    .error_string = v_error_string,
    .wtime = v_wtime,
    .isend = v_isend,
    .testsome = v_testsome,
    .pending_sends = v_pending_sends,
    .improbe = v_improbe,
    .recv_probed = v_recv_probed,
    .probe_any = v_probe_any,
    .recv = v_recv,
    .recv_wake = v_recv_wake,
    .wake = v_wake,
    .isend_now = v_isend_now,
    .post_recv = v_post_recv,
    .test_recv = v_test_recv,
    .cancel_recv = v_cancel_recv,
};

__attribute__((visibility("default"))) const struct gridmpi_vendor_ops* gridmpi_vendor_plugin_v1(void) {
  return &ops;
}
