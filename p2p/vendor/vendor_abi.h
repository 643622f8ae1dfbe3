/* The function table between gridmpi and a vendor MPI plug-in.  Owner: p2p/vendor/.
 *
 * The plug-in (plugin.c) is compiled with the vendor's own compiler wrapper
 * and loaded with dlmopen into a link-map namespace of its own
 * (vendor_library.cpp).  Only plain C types cross this boundary: no MPI
 * handle, no MPI constant, no C++.  Vendor requests stay inside the plug-in
 * in a table of slots and are named here by small integers.
 *
 * Every function returns 0 on success and a vendor MPI error code otherwise
 * (the plug-in turns it into text with error_string), unless said otherwise.
 * Ranks are ranks of the vendor's MPI_COMM_WORLD.  Tags are ours, in
 * 0..GRIDMPI_VENDOR_MAX_TAG (MPI guarantees tags up to 32767).
 *
 * Changing this table in an incompatible way: bump GRIDMPI_VENDOR_ABI, so
 * that an old plug-in is refused with a clear message instead of crashing. */
#ifndef GRIDMPI_VENDOR_ABI_H
#define GRIDMPI_VENDOR_ABI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GRIDMPI_VENDOR_ABI 2
#define GRIDMPI_VENDOR_ENTRY "gridmpi_vendor_plugin_v1"
#define GRIDMPI_VENDOR_MAX_TAG 32767

struct gridmpi_vendor_ops {
  /* GRIDMPI_VENDOR_ABI of the header the plug-in was compiled with, and
   * sizeof(struct gridmpi_vendor_ops) there: checked before anything else. */
  int abi_version;
  int struct_size;
  /* The vendor's name as the plug-in was built for ("openmpi", "mpich"). */
  const char* name;

  /* MPI_Init_thread(NULL, NULL, asked, &granted); the MPI_THREAD_* values
   * are the standard's order 0..3 (SINGLE, FUNNELED, SERIALIZED, MULTIPLE)
   * on both sides, translated inside the plug-in. */
  int (*init)(int asked, int* granted, int* rank, int* size);
  /* An identifier of this vendor job, the same in all its processes (rank 0
   * draws it and broadcasts it during init): it tells the ranks of our vendor
   * job from those of another cluster's vendor job in a multi-cluster run. */
  unsigned long long (*job_id)(void);
  int (*finalize)(void);
  void (*abort)(int code);
  /* Writes a NUL-terminated text into buf (at most len bytes). */
  void (*library_version)(char* buf, int len);
  void (*error_string)(int code, char* buf, int len);
  double (*wtime)(void);

  /* MPI_Isend of len bytes to dest with tag; *slot receives a small
   * non-negative integer naming the request until testsome reports it. */
  int (*isend)(const void* buf, size_t len, int dest, int tag, int* slot);
  /* MPI_Testsome over all active send slots: writes up to max completed slot
   * ids into done and their count into *count (0 when none completed).  A
   * failed send is reported through the return value, with *count the slots
   * that did complete and *failed_slot the failing one (else -1). */
  int (*testsome)(int* done, int max, int* count, int* failed_slot);
  /* Number of send slots still active. */
  int (*pending_sends)(void);

  /* MPI_Improbe(MPI_ANY_SOURCE, tag): *flag 1 with *source and *bytes set
   * when a message waits; the plug-in then holds that message until
   * recv_probed receives it (one at a time).  A matched probe, not
   * MPI_Iprobe: MPICH 4.0's MPI_Iprobe with MPI_ANY_SOURCE takes
   * milliseconds (p2p/vendor/README.md). */
  int (*improbe)(int tag, int* flag, int* source, size_t* bytes);
  /* MPI_Mrecv of the message improbe found, exactly len bytes. */
  int (*recv_probed)(void* buf, size_t len);
  /* MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG): blocks until any message waits;
   * reports its source, tag and bytes without receiving it. */
  int (*probe_any)(int* source, int* tag, size_t* bytes);
  /* Blocking MPI_Recv of exactly len bytes from source with tag into buf. */
  int (*recv)(void* buf, size_t len, int source, int tag);
  /* Blocking MPI_Recv of the zero-byte wake message sent by wake(). */
  int (*recv_wake)(void);
  /* A zero-byte send to this process with the wake tag, so that a thread
   * blocked in probe_any returns (only with MPI_THREAD_MULTIPLE). */
  int (*wake)(void);
  /* isend, then one MPI_Test of that request: *slot is -1 when the send
   * completed at once (a short message the vendor sent eagerly), else the
   * slot as isend names it. */
  int (*isend_now)(const void* buf, size_t len, int dest, int tag, int* slot);
  /* MPI_Irecv(buf, len bytes, MPI_ANY_SOURCE, tag): a pre-posted receive,
   * named by *slot (receive slots are separate from send slots; at most
   * GRIDMPI_VENDOR_MAX_RECV_SLOTS at once). */
  int (*post_recv)(void* buf, size_t len, int tag, int* slot);
  /* MPI_Test of a pre-posted receive: *flag 1 with *source and *bytes set
   * when it completed (the slot is then free). */
  int (*test_recv)(int slot, int* flag, int* source, size_t* bytes);
  /* MPI_Cancel and MPI_Wait of a pre-posted receive (shutdown). */
  int (*cancel_recv)(int slot);
};

#define GRIDMPI_VENDOR_MAX_RECV_SLOTS 64

/* The single exported entry point (GRIDMPI_VENDOR_ENTRY). */
typedef const struct gridmpi_vendor_ops* (*gridmpi_vendor_entry_fn)(void);
const struct gridmpi_vendor_ops* gridmpi_vendor_plugin_v1(void);

/* The tag of wake messages (never used for frames). */
#define GRIDMPI_VENDOR_WAKE_TAG 32767

#ifdef __cplusplus
}
#endif
#endif
