/* gridmpi — the MPI C interface (MPI-3.1 names and semantics).
 *
 * Handles are plain ints (as in MPICH) so that they are compile-time
 * constants, cheap to pass to Fortran and trivially convertible with the
 * *_c2f / *_f2c functions.  Every function is declared twice: MPI_xxx (a weak
 * alias) and PMPI_xxx (the real entry point) for profiling tools.
 */
#ifndef GRIDMPI_MPI_H
#define GRIDMPI_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 3
#define MPI_SUBVERSION 1
#define GRIDMPI 1
#define GRIDMPI_VERSION_STRING "0.1.0"

/* ---- handle types ---------------------------------------------------- */
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Request;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Win;
typedef int MPI_File;
typedef int MPI_Message;
typedef int MPI_Session;
typedef long MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    /* private: bytes received; bit 0 the cancelled flag, bit 1 set when
     * the bytes are external32 (a probed message of another cluster) */
    int gridmpi_cancelled;
    long long gridmpi_count;
} MPI_Status;

/* ---- null handles and predefined communicators ----------------------- */
#define MPI_COMM_NULL ((MPI_Comm)0)
#define MPI_COMM_WORLD ((MPI_Comm)1)
#define MPI_COMM_SELF ((MPI_Comm)2)
#define MPI_GROUP_NULL ((MPI_Group)0)
#define MPI_GROUP_EMPTY ((MPI_Group)1)
#define MPI_DATATYPE_NULL ((MPI_Datatype)0)
#define MPI_OP_NULL ((MPI_Op)0)
#define MPI_REQUEST_NULL ((MPI_Request)0)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)1)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)2)
#define MPI_INFO_NULL ((MPI_Info)0)
#define MPI_INFO_ENV ((MPI_Info)1)
#define MPI_WIN_NULL ((MPI_Win)0)
#define MPI_FILE_NULL ((MPI_File)0)
#define MPI_MESSAGE_NULL ((MPI_Message)0)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)1)
#define MPI_SESSION_NULL ((MPI_Session)0)
/* MPI-4.0: like MPI_ERRORS_ARE_FATAL (gridmpi ends the whole job either way). */
#define MPI_ERRORS_ABORT ((MPI_Errhandler)3)

/* ---- predefined datatypes (numbering is part of the ABI; see
 *      core/datatype_predefined.cpp, which must list them in this order) -- */
#define MPI_CHAR ((MPI_Datatype)1)
#define MPI_SIGNED_CHAR ((MPI_Datatype)2)
#define MPI_UNSIGNED_CHAR ((MPI_Datatype)3)
#define MPI_BYTE ((MPI_Datatype)4)
#define MPI_WCHAR ((MPI_Datatype)5)
#define MPI_SHORT ((MPI_Datatype)6)
#define MPI_UNSIGNED_SHORT ((MPI_Datatype)7)
#define MPI_INT ((MPI_Datatype)8)
#define MPI_UNSIGNED ((MPI_Datatype)9)
#define MPI_LONG ((MPI_Datatype)10)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)11)
#define MPI_LONG_LONG_INT ((MPI_Datatype)12)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)13)
#define MPI_FLOAT ((MPI_Datatype)14)
#define MPI_DOUBLE ((MPI_Datatype)15)
#define MPI_LONG_DOUBLE ((MPI_Datatype)16)
#define MPI_C_BOOL ((MPI_Datatype)17)
#define MPI_INT8_T ((MPI_Datatype)18)
#define MPI_INT16_T ((MPI_Datatype)19)
#define MPI_INT32_T ((MPI_Datatype)20)
#define MPI_INT64_T ((MPI_Datatype)21)
#define MPI_UINT8_T ((MPI_Datatype)22)
#define MPI_UINT16_T ((MPI_Datatype)23)
#define MPI_UINT32_T ((MPI_Datatype)24)
#define MPI_UINT64_T ((MPI_Datatype)25)
#define MPI_C_COMPLEX ((MPI_Datatype)26)
#define MPI_C_FLOAT_COMPLEX MPI_C_COMPLEX
#define MPI_C_DOUBLE_COMPLEX ((MPI_Datatype)27)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)28)
#define MPI_AINT ((MPI_Datatype)29)
#define MPI_OFFSET ((MPI_Datatype)30)
#define MPI_COUNT ((MPI_Datatype)31)
#define MPI_PACKED ((MPI_Datatype)32)
#define MPI_UB ((MPI_Datatype)33)
#define MPI_LB ((MPI_Datatype)34)
/* pair types for MINLOC / MAXLOC */
#define MPI_FLOAT_INT ((MPI_Datatype)35)
#define MPI_DOUBLE_INT ((MPI_Datatype)36)
#define MPI_LONG_INT ((MPI_Datatype)37)
#define MPI_2INT ((MPI_Datatype)38)
#define MPI_SHORT_INT ((MPI_Datatype)39)
#define MPI_LONG_DOUBLE_INT ((MPI_Datatype)40)
/* Fortran types, usable from C */
#define MPI_CHARACTER ((MPI_Datatype)41)
#define MPI_LOGICAL ((MPI_Datatype)42)
#define MPI_INTEGER ((MPI_Datatype)43)
#define MPI_REAL ((MPI_Datatype)44)
#define MPI_DOUBLE_PRECISION ((MPI_Datatype)45)
#define MPI_COMPLEX ((MPI_Datatype)46)
#define MPI_DOUBLE_COMPLEX ((MPI_Datatype)47)
#define MPI_2REAL ((MPI_Datatype)48)
#define MPI_2DOUBLE_PRECISION ((MPI_Datatype)49)
#define MPI_2INTEGER ((MPI_Datatype)50)
#define MPI_INTEGER1 ((MPI_Datatype)51)
#define MPI_INTEGER2 ((MPI_Datatype)52)
#define MPI_INTEGER4 ((MPI_Datatype)53)
#define MPI_INTEGER8 ((MPI_Datatype)54)
#define MPI_REAL4 ((MPI_Datatype)55)
#define MPI_REAL8 ((MPI_Datatype)56)
#define MPI_REAL16 ((MPI_Datatype)57)
#define MPI_COMPLEX8 ((MPI_Datatype)58)
#define MPI_COMPLEX16 ((MPI_Datatype)59)
#define MPI_COMPLEX32 ((MPI_Datatype)60)
/* C++ types, usable from C */
#define MPI_CXX_BOOL ((MPI_Datatype)61)
#define MPI_CXX_FLOAT_COMPLEX ((MPI_Datatype)62)
#define MPI_CXX_DOUBLE_COMPLEX ((MPI_Datatype)63)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)64)
/* Fortran INTEGER(KIND=16) (gfortran), a 128-bit two's complement integer:
 * MPI_INTEGER16 in Fortran (mpif.h, the mpi module, fortran/gen_fortran.py).
 * In C, MPI_INTEGER16 is MPI_DATATYPE_NULL, as in Open MPI (MPICH leaves it
 * out; the type is optional, MPI-3.1 3.2.2): C programs take a named
 * MPI_INTEGER16 for a type they can map to a C or NumPy one, and none has 16
 * bytes (mpi4py's util.dtlib fails with "data type 'i16' not understood").
 * C reaches the type as GRIDMPI_INTEGER16 or through
 * MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &type). */
#define GRIDMPI_INTEGER16 ((MPI_Datatype)65)
#define MPI_INTEGER16 MPI_DATATYPE_NULL
#define GRIDMPI_PREDEFINED_DATATYPE_COUNT 66 /* handles below this are predefined */

/* ---- predefined reduction operations ---------------------------------- */
#define MPI_MAX ((MPI_Op)1)
#define MPI_MIN ((MPI_Op)2)
#define MPI_SUM ((MPI_Op)3)
#define MPI_PROD ((MPI_Op)4)
#define MPI_LAND ((MPI_Op)5)
#define MPI_BAND ((MPI_Op)6)
#define MPI_LOR ((MPI_Op)7)
#define MPI_BOR ((MPI_Op)8)
#define MPI_LXOR ((MPI_Op)9)
#define MPI_BXOR ((MPI_Op)10)
#define MPI_MINLOC ((MPI_Op)11)
#define MPI_MAXLOC ((MPI_Op)12)
#define MPI_REPLACE ((MPI_Op)13)
#define MPI_NO_OP ((MPI_Op)14)
#define GRIDMPI_PREDEFINED_OP_COUNT 15

/* ---- special values ---------------------------------------------------- */
#define MPI_ANY_SOURCE (-2)
#define MPI_PROC_NULL (-1)
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID 0
#define MPI_BSEND_OVERHEAD 96
#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_PORT_NAME 256
#define MPI_MAX_DATAREP_STRING 128
#define MPI_MAX_PSET_NAME_LEN 256
#define MPI_MAX_STRINGTAG_LEN 256

#define MPI_IN_PLACE ((void *)-1)
#define MPI_BOTTOM ((void *)0)
#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)
/* The topology sentinels are addresses of two library-owned ints (the
 * COMMON blocks behind MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY of mpif.h, so C and
 * Fortran share them): a small integer cast to a pointer makes gcc warn
 * (-Wstringop-overread) in programs that pass it. */
extern int mpi_fortran_unweighted_[1];
extern int mpi_fortran_weights_empty_[1];
#define MPI_UNWEIGHTED ((int *)mpi_fortran_unweighted_)
#define MPI_WEIGHTS_EMPTY ((int *)mpi_fortran_weights_empty_)

/* thread levels */
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* results of comparisons */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* topology kinds */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

/* datatype combiners */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR_INTEGER 5
#define MPI_COMBINER_HVECTOR 6
#define MPI_COMBINER_INDEXED 7
#define MPI_COMBINER_HINDEXED_INTEGER 8
#define MPI_COMBINER_HINDEXED 9
#define MPI_COMBINER_INDEXED_BLOCK 10
#define MPI_COMBINER_STRUCT_INTEGER 11
#define MPI_COMBINER_STRUCT 12
#define MPI_COMBINER_SUBARRAY 13
#define MPI_COMBINER_DARRAY 14
#define MPI_COMBINER_F90_REAL 15
#define MPI_COMBINER_F90_COMPLEX 16
#define MPI_COMBINER_F90_INTEGER 17
#define MPI_COMBINER_RESIZED 18
#define MPI_COMBINER_HINDEXED_BLOCK 19

#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57
#define MPI_DISTRIBUTE_BLOCK 121
#define MPI_DISTRIBUTE_CYCLIC 122
#define MPI_DISTRIBUTE_NONE 123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

#define MPI_TYPECLASS_REAL 1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3

#define MPI_COMM_TYPE_SHARED 1
/* MPI-4.0 */
#define MPI_COMM_TYPE_HW_GUIDED 2
#define MPI_COMM_TYPE_HW_UNGUIDED 3

/* predefined attribute keys */
#define MPI_TAG_UB 1
#define MPI_HOST 2
#define MPI_IO 3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_UNIVERSE_SIZE 5
#define MPI_LASTUSEDCODE 6
#define MPI_APPNUM 7
#define IMPI_CLIENT_SIZE 8
#define IMPI_CLIENT_COLOR 9
#define IMPI_HOST_SIZE 10
#define IMPI_HOST_COLOR 11
#define MPI_WIN_BASE 12
#define MPI_WIN_SIZE 13
#define MPI_WIN_DISP_UNIT 14
#define MPI_WIN_CREATE_FLAVOR 15
#define MPI_WIN_MODEL 16
#define GRIDMPI_PREDEFINED_KEYVAL_COUNT 17

/* ---- error classes ------------------------------------------------------ */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_ACCESS 20
#define MPI_ERR_AMODE 21
#define MPI_ERR_ASSERT 22
#define MPI_ERR_BAD_FILE 23
#define MPI_ERR_BASE 24
#define MPI_ERR_CONVERSION 25
#define MPI_ERR_DISP 26
#define MPI_ERR_DUP_DATAREP 27
#define MPI_ERR_FILE_EXISTS 28
#define MPI_ERR_FILE_IN_USE 29
#define MPI_ERR_FILE 30
#define MPI_ERR_INFO_KEY 31
#define MPI_ERR_INFO_NOKEY 32
#define MPI_ERR_INFO_VALUE 33
#define MPI_ERR_INFO 34
#define MPI_ERR_IO 35
#define MPI_ERR_KEYVAL 36
#define MPI_ERR_LOCKTYPE 37
#define MPI_ERR_NAME 38
#define MPI_ERR_NO_MEM 39
#define MPI_ERR_NOT_SAME 40
#define MPI_ERR_NO_SPACE 41
#define MPI_ERR_NO_SUCH_FILE 42
#define MPI_ERR_PORT 43
#define MPI_ERR_QUOTA 44
#define MPI_ERR_READ_ONLY 45
#define MPI_ERR_RMA_CONFLICT 46
#define MPI_ERR_RMA_SYNC 47
#define MPI_ERR_SERVICE 48
#define MPI_ERR_SIZE 49
#define MPI_ERR_SPAWN 50
#define MPI_ERR_UNSUPPORTED_DATAREP 51
#define MPI_ERR_UNSUPPORTED_OPERATION 52
#define MPI_ERR_WIN 53
#define MPI_ERR_RMA_RANGE 54
#define MPI_ERR_RMA_ATTACH 55
#define MPI_ERR_RMA_SHARED 56
#define MPI_ERR_RMA_FLAVOR 57
#define MPI_T_ERR_INVALID_HANDLE 58
/* the tool information interface's return codes (core/mpit.cpp); MPI_T
   functions return them and never call an error handler */
#define MPI_T_ERR_MEMORY 59
#define MPI_T_ERR_NOT_INITIALIZED 60
#define MPI_T_ERR_CANNOT_INIT 61
#define MPI_T_ERR_INVALID_INDEX 62
#define MPI_T_ERR_INVALID_ITEM 63
#define MPI_T_ERR_OUT_OF_HANDLES 64
#define MPI_T_ERR_OUT_OF_SESSIONS 65
#define MPI_T_ERR_INVALID_SESSION 66
#define MPI_T_ERR_CVAR_SET_NOT_NOW 67
#define MPI_T_ERR_CVAR_SET_NEVER 68
#define MPI_T_ERR_PVAR_NO_STARTSTOP 69
#define MPI_T_ERR_PVAR_NO_WRITE 70
#define MPI_T_ERR_PVAR_NO_ATOMIC 71
#define MPI_T_ERR_INVALID_NAME 72
#define MPI_T_ERR_INVALID 73
/* MPI-4.0 */
#define MPI_ERR_SESSION 74
#define MPI_ERR_PROC_ABORTED 75
#define MPI_ERR_VALUE_TOO_LARGE 76
#define MPI_ERR_ERRHANDLER 77
#define MPI_ERR_LASTCODE 78

/* ---- callback types ---------------------------------------------------- */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
/* MPI-4.0 large counts */
typedef void MPI_User_function_c(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm *, int *, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_Comm_errhandler_function MPI_Handler_function;
typedef void MPI_Win_errhandler_function(MPI_Win *, int *, ...);
typedef void MPI_File_errhandler_function(MPI_File *, int *, ...);
typedef void MPI_Session_errhandler_function(MPI_Session *, int *, ...);
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void *attribute_val,
                                          void *extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval,
                                          void *attribute_val, void *extra_state);
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void *extra_state,
                                       void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void *attribute_val,
                                         void *extra_state);
typedef MPI_Comm_copy_attr_function MPI_Copy_function;
typedef MPI_Comm_delete_attr_function MPI_Delete_function;
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);

/* predefined attribute callbacks (functions, defined by the library) */
int MPI_COMM_NULL_COPY_FN(MPI_Comm, int, void *, void *, void *, int *);
int MPI_COMM_DUP_FN(MPI_Comm, int, void *, void *, void *, int *);
int MPI_COMM_NULL_DELETE_FN(MPI_Comm, int, void *, void *);
int MPI_TYPE_NULL_COPY_FN(MPI_Datatype, int, void *, void *, void *, int *);
int MPI_TYPE_DUP_FN(MPI_Datatype, int, void *, void *, void *, int *);
int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype, int, void *, void *);
int MPI_WIN_NULL_COPY_FN(MPI_Win, int, void *, void *, void *, int *);
int MPI_WIN_DUP_FN(MPI_Win, int, void *, void *, void *, int *);
int MPI_WIN_NULL_DELETE_FN(MPI_Win, int, void *, void *);
#define MPI_NULL_COPY_FN MPI_COMM_NULL_COPY_FN
#define MPI_DUP_FN MPI_COMM_DUP_FN
#define MPI_NULL_DELETE_FN MPI_COMM_NULL_DELETE_FN

/* ---- one-sided communication (MPI-3.1 chapter 11): constants ---------- */
#define MPI_LOCK_EXCLUSIVE 234
#define MPI_LOCK_SHARED 235
#define MPI_MODE_NOCHECK 1024
#define MPI_MODE_NOSTORE 2048
#define MPI_MODE_NOPUT 4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384
#define MPI_WIN_FLAVOR_CREATE 1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC 3
#define MPI_WIN_FLAVOR_SHARED 4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED 2
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
/* ---- end of one-sided constants ---- */

/* ---- MPI-IO (MPI-3.1 chapter 13): constants ---------------------------- */
#define MPI_MODE_CREATE 1
#define MPI_MODE_RDONLY 2
#define MPI_MODE_WRONLY 4
#define MPI_MODE_RDWR 8
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN 32
#define MPI_MODE_EXCL 64
#define MPI_MODE_APPEND 128
#define MPI_MODE_SEQUENTIAL 256
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604
#define MPI_DISPLACEMENT_CURRENT ((MPI_Offset)-54278278)
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef int MPI_Datarep_conversion_function(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                                            MPI_Offset position, void *extra_state);
typedef int MPI_Datarep_extent_function(MPI_Datatype datatype, MPI_Aint *file_extent, void *extra_state);
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)
/* ---- end of MPI-IO constants ---- */

/* ---- tool information interface (MPI-3.1 chapter 14): constants ------ */
typedef struct gridmpi_T_enum_s *MPI_T_enum;
typedef struct gridmpi_T_cvar_handle_s *MPI_T_cvar_handle;
typedef struct gridmpi_T_pvar_handle_s *MPI_T_pvar_handle;
typedef struct gridmpi_T_pvar_session_s *MPI_T_pvar_session;
/* (void *) keeps these pointer constants out of mpif.h */
#define MPI_T_ENUM_NULL ((MPI_T_enum)(void *)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)(void *)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)(void *)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)(void *)0)
#define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)(void *)-1)
#define MPI_T_VERBOSITY_USER_BASIC 221
#define MPI_T_VERBOSITY_USER_DETAIL 222
#define MPI_T_VERBOSITY_USER_ALL 223
#define MPI_T_VERBOSITY_TUNER_BASIC 224
#define MPI_T_VERBOSITY_TUNER_DETAIL 225
#define MPI_T_VERBOSITY_TUNER_ALL 226
#define MPI_T_VERBOSITY_MPIDEV_BASIC 227
#define MPI_T_VERBOSITY_MPIDEV_DETAIL 228
#define MPI_T_VERBOSITY_MPIDEV_ALL 229
#define MPI_T_BIND_NO_OBJECT 0
#define MPI_T_BIND_MPI_COMM 1
#define MPI_T_BIND_MPI_DATATYPE 2
#define MPI_T_BIND_MPI_ERRHANDLER 3
#define MPI_T_BIND_MPI_FILE 4
#define MPI_T_BIND_MPI_GROUP 5
#define MPI_T_BIND_MPI_OP 6
#define MPI_T_BIND_MPI_REQUEST 7
#define MPI_T_BIND_MPI_WIN 8
#define MPI_T_BIND_MPI_MESSAGE 9
#define MPI_T_BIND_MPI_INFO 10
#define MPI_T_SCOPE_CONSTANT 0
#define MPI_T_SCOPE_READONLY 1
#define MPI_T_SCOPE_LOCAL 2
#define MPI_T_SCOPE_GROUP 3
#define MPI_T_SCOPE_GROUP_EQ 4
#define MPI_T_SCOPE_ALL 5
#define MPI_T_SCOPE_ALL_EQ 6
#define MPI_T_PVAR_CLASS_STATE 0
#define MPI_T_PVAR_CLASS_LEVEL 1
#define MPI_T_PVAR_CLASS_SIZE 2
#define MPI_T_PVAR_CLASS_PERCENTAGE 3
#define MPI_T_PVAR_CLASS_HIGHWATERMARK 4
#define MPI_T_PVAR_CLASS_LOWWATERMARK 5
#define MPI_T_PVAR_CLASS_COUNTER 6
#define MPI_T_PVAR_CLASS_AGGREGATE 7
#define MPI_T_PVAR_CLASS_TIMER 8
#define MPI_T_PVAR_CLASS_GENERIC 9
/* ---- end of tool information interface constants ---- */

/* ---- functions: every one has a PMPI_ twin --------------------------- */
#define GRIDMPI_DECL(ret, name, args) ret MPI_##name args; ret PMPI_##name args;

/* environment */
GRIDMPI_DECL(int, Init, (int *argc, char ***argv))
GRIDMPI_DECL(int, Init_thread, (int *argc, char ***argv, int required, int *provided))
GRIDMPI_DECL(int, Initialized, (int *flag))
GRIDMPI_DECL(int, Finalized, (int *flag))
GRIDMPI_DECL(int, Finalize, (void))
GRIDMPI_DECL(int, Query_thread, (int *provided))
GRIDMPI_DECL(int, Is_thread_main, (int *flag))
GRIDMPI_DECL(int, Abort, (MPI_Comm comm, int errorcode))
GRIDMPI_DECL(double, Wtime, (void))
GRIDMPI_DECL(double, Wtick, (void))
GRIDMPI_DECL(int, Get_processor_name, (char *name, int *resultlen))
GRIDMPI_DECL(int, Get_version, (int *version, int *subversion))
GRIDMPI_DECL(int, Get_library_version, (char *version, int *resultlen))
GRIDMPI_DECL(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
GRIDMPI_DECL(int, Free_mem, (void *base))
GRIDMPI_DECL(int, Pcontrol, (const int level, ...))

/* error handling */
GRIDMPI_DECL(int, Comm_create_errhandler, (MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler))
GRIDMPI_DECL(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
GRIDMPI_DECL(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler))
GRIDMPI_DECL(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
GRIDMPI_DECL(int, Errhandler_create, (MPI_Handler_function *fn, MPI_Errhandler *errhandler))
GRIDMPI_DECL(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
GRIDMPI_DECL(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler *errhandler))
GRIDMPI_DECL(int, Errhandler_free, (MPI_Errhandler *errhandler))
GRIDMPI_DECL(int, Error_string, (int errorcode, char *string, int *resultlen))
GRIDMPI_DECL(int, Error_class, (int errorcode, int *errorclass))
GRIDMPI_DECL(int, Add_error_class, (int *errorclass))
GRIDMPI_DECL(int, Add_error_code, (int errorclass, int *errorcode))
GRIDMPI_DECL(int, Add_error_string, (int errorcode, const char *string))

/* point to point */
GRIDMPI_DECL(int, Send, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
GRIDMPI_DECL(int, Bsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
GRIDMPI_DECL(int, Ssend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
GRIDMPI_DECL(int, Rsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
GRIDMPI_DECL(int, Recv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status))
GRIDMPI_DECL(int, Isend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ibsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Issend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Irsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Irecv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Send_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Bsend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ssend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Rsend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Recv_init, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Start, (MPI_Request *request))
GRIDMPI_DECL(int, Startall, (int count, MPI_Request array_of_requests[]))
GRIDMPI_DECL(int, Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
GRIDMPI_DECL(int, Sendrecv_replace, (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
GRIDMPI_DECL(int, Isendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Isendrecv_replace, (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Buffer_attach, (void *buffer, int size))
GRIDMPI_DECL(int, Buffer_detach, (void *buffer_addr, int *size))
GRIDMPI_DECL(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status))
GRIDMPI_DECL(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status))
GRIDMPI_DECL(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status))
GRIDMPI_DECL(int, Improbe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status))
GRIDMPI_DECL(int, Mrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status))
GRIDMPI_DECL(int, Imrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request))
GRIDMPI_DECL(int, Cancel, (MPI_Request *request))
GRIDMPI_DECL(int, Test_cancelled, (const MPI_Status *status, int *flag))
GRIDMPI_DECL(int, Wait, (MPI_Request *request, MPI_Status *status))
GRIDMPI_DECL(int, Test, (MPI_Request *request, int *flag, MPI_Status *status))
GRIDMPI_DECL(int, Waitany, (int count, MPI_Request array_of_requests[], int *index, MPI_Status *status))
GRIDMPI_DECL(int, Testany, (int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status))
GRIDMPI_DECL(int, Waitall, (int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]))
GRIDMPI_DECL(int, Testall, (int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]))
GRIDMPI_DECL(int, Waitsome, (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]))
GRIDMPI_DECL(int, Testsome, (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]))
GRIDMPI_DECL(int, Request_free, (MPI_Request *request))
GRIDMPI_DECL(int, Request_get_status, (MPI_Request request, int *flag, MPI_Status *status))
GRIDMPI_DECL(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype, int *count))
GRIDMPI_DECL(int, Get_elements, (const MPI_Status *status, MPI_Datatype datatype, int *count))
GRIDMPI_DECL(int, Get_elements_x, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count))
GRIDMPI_DECL(int, Status_set_elements, (MPI_Status *status, MPI_Datatype datatype, int count))
GRIDMPI_DECL(int, Status_set_elements_x, (MPI_Status *status, MPI_Datatype datatype, MPI_Count count))
GRIDMPI_DECL(int, Status_set_cancelled, (MPI_Status *status, int flag))
GRIDMPI_DECL(int, Grequest_start, (MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn, MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request))
GRIDMPI_DECL(int, Grequest_complete, (MPI_Request request))

/* datatypes */
GRIDMPI_DECL(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_indexed, (int count, const int array_of_blocklengths[], const int array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_hindexed, (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_hindexed, (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_indexed_block, (int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_hindexed_block, (int count, int blocklength, const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_struct, (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[], MPI_Datatype array_of_types[], MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_struct, (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[], MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_subarray, (int ndims, const int array_of_sizes[], const int array_of_subsizes[], const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_darray, (int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_commit, (MPI_Datatype *datatype))
GRIDMPI_DECL(int, Type_free, (MPI_Datatype *datatype))
GRIDMPI_DECL(int, Type_size, (MPI_Datatype datatype, int *size))
GRIDMPI_DECL(int, Type_size_x, (MPI_Datatype datatype, MPI_Count *size))
GRIDMPI_DECL(int, Type_extent, (MPI_Datatype datatype, MPI_Aint *extent))
GRIDMPI_DECL(int, Type_lb, (MPI_Datatype datatype, MPI_Aint *displacement))
GRIDMPI_DECL(int, Type_ub, (MPI_Datatype datatype, MPI_Aint *displacement))
GRIDMPI_DECL(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent))
GRIDMPI_DECL(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent))
GRIDMPI_DECL(int, Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent))
GRIDMPI_DECL(int, Type_get_true_extent_x, (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent))
GRIDMPI_DECL(int, Type_get_envelope, (MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes, int *combiner))
GRIDMPI_DECL(int, Type_get_contents, (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]))
GRIDMPI_DECL(int, Type_set_name, (MPI_Datatype datatype, const char *type_name))
GRIDMPI_DECL(int, Type_get_name, (MPI_Datatype datatype, char *type_name, int *resultlen))
GRIDMPI_DECL(int, Type_match_size, (int typeclass, int size, MPI_Datatype *datatype))
GRIDMPI_DECL(int, Type_create_f90_real, (int p, int r, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_f90_complex, (int p, int r, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_f90_integer, (int r, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Address, (void *location, MPI_Aint *address))
GRIDMPI_DECL(int, Get_address, (const void *location, MPI_Aint *address))
GRIDMPI_DECL(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
GRIDMPI_DECL(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))
GRIDMPI_DECL(int, Pack, (const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position, MPI_Comm comm))
GRIDMPI_DECL(int, Unpack, (const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype, MPI_Comm comm))
GRIDMPI_DECL(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int *size))
GRIDMPI_DECL(int, Pack_external, (const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, MPI_Aint outsize, MPI_Aint *position))
GRIDMPI_DECL(int, Unpack_external, (const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype))
GRIDMPI_DECL(int, Pack_external_size, (const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size))

/* reduction operations */
GRIDMPI_DECL(int, Op_create, (MPI_User_function *user_fn, int commute, MPI_Op *op))
GRIDMPI_DECL(int, Op_free, (MPI_Op *op))
GRIDMPI_DECL(int, Op_commutative, (MPI_Op op, int *commute))
GRIDMPI_DECL(int, Reduce_local, (const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op))

/* groups */
GRIDMPI_DECL(int, Group_size, (MPI_Group group, int *size))
GRIDMPI_DECL(int, Group_rank, (MPI_Group group, int *rank))
GRIDMPI_DECL(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]))
GRIDMPI_DECL(int, Group_compare, (MPI_Group group1, MPI_Group group2, int *result))
GRIDMPI_DECL(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
GRIDMPI_DECL(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
GRIDMPI_DECL(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
GRIDMPI_DECL(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
GRIDMPI_DECL(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
GRIDMPI_DECL(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
GRIDMPI_DECL(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
GRIDMPI_DECL(int, Group_free, (MPI_Group *group))

/* communicators */
GRIDMPI_DECL(int, Comm_size, (MPI_Comm comm, int *size))
GRIDMPI_DECL(int, Comm_rank, (MPI_Comm comm, int *rank))
GRIDMPI_DECL(int, Comm_group, (MPI_Comm comm, MPI_Group *group))
GRIDMPI_DECL(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result))
GRIDMPI_DECL(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
GRIDMPI_DECL(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm))
GRIDMPI_DECL(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request))
/* MPI-4.0 (provided ahead of MPI_VERSION 4). */
GRIDMPI_DECL(int, Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request))
GRIDMPI_DECL(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm))
GRIDMPI_DECL(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm))
/* ---- MPI-4.0 large-count ("_c") functions (core/src/api_large_count.cpp):
 *      C only.  Counts above INT_MAX are supported by the point-to-point
 *      calls, the datatype constructors' block lengths, and the collectives
 *      with one count per process; v/w collectives, Pack and the buffer
 *      functions take MPI_Count arguments but refuse values above INT_MAX
 *      (MPI_ERR_COUNT), as do nonblocking reductions. ---- */
GRIDMPI_DECL(int, Send_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
GRIDMPI_DECL(int, Bsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
GRIDMPI_DECL(int, Ssend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
GRIDMPI_DECL(int, Rsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
GRIDMPI_DECL(int, Recv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status))
GRIDMPI_DECL(int, Isend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ibsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Issend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Irsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Irecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Send_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Bsend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ssend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Rsend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Recv_init_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Sendrecv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
GRIDMPI_DECL(int, Sendrecv_replace_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
GRIDMPI_DECL(int, Mrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status))
GRIDMPI_DECL(int, Imrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request))
GRIDMPI_DECL(int, Get_count_c, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count))
GRIDMPI_DECL(int, Get_elements_c, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count))
GRIDMPI_DECL(int, Buffer_attach_c, (void *buffer, MPI_Count size))
GRIDMPI_DECL(int, Buffer_detach_c, (void *buffer_addr, MPI_Count *size))
GRIDMPI_DECL(int, Type_contiguous_c, (MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_vector_c, (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_hvector_c, (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_indexed_c, (MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_hindexed_c, (MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_indexed_block_c, (MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_hindexed_block_c, (MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_struct_c, (MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[], MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_create_resized_c, (MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype))
GRIDMPI_DECL(int, Type_size_c, (MPI_Datatype datatype, MPI_Count *size))
GRIDMPI_DECL(int, Type_get_extent_c, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent))
GRIDMPI_DECL(int, Type_get_true_extent_c, (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent))
GRIDMPI_DECL(int, Type_get_envelope_c, (MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses, MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner))
GRIDMPI_DECL(int, Type_get_contents_c, (MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses, MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[]))
GRIDMPI_DECL(int, Pack_c, (const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm))
GRIDMPI_DECL(int, Unpack_c, (const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm))
GRIDMPI_DECL(int, Pack_size_c, (MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size))
GRIDMPI_DECL(int, Pack_external_c, (const char datarep[], const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize, MPI_Count *position))
GRIDMPI_DECL(int, Unpack_external_c, (const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype datatype))
GRIDMPI_DECL(int, Pack_external_size_c, (const char datarep[], MPI_Count incount, MPI_Datatype datatype, MPI_Count *size))
GRIDMPI_DECL(int, Op_create_c, (MPI_User_function_c *user_fn, int commute, MPI_Op *op))
GRIDMPI_DECL(int, Reduce_local_c, (const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op))
GRIDMPI_DECL(int, Bcast_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm))
GRIDMPI_DECL(int, Gather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
GRIDMPI_DECL(int, Gatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm))
GRIDMPI_DECL(int, Scatter_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
GRIDMPI_DECL(int, Scatterv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
GRIDMPI_DECL(int, Allgather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm))
GRIDMPI_DECL(int, Allgatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm))
GRIDMPI_DECL(int, Alltoall_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm))
GRIDMPI_DECL(int, Alltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
GRIDMPI_DECL(int, Alltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
GRIDMPI_DECL(int, Reduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
GRIDMPI_DECL(int, Allreduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
GRIDMPI_DECL(int, Reduce_scatter_c, (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
GRIDMPI_DECL(int, Reduce_scatter_block_c, (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
GRIDMPI_DECL(int, Scan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
GRIDMPI_DECL(int, Exscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
GRIDMPI_DECL(int, Ibcast_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Igather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Igatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iscatter_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iscatterv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iallgather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iallgatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ialltoall_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ialltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ialltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ireduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iallreduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ireduce_scatter_c, (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ireduce_scatter_block_c, (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iexscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
/* MPI-4.0 partitioned communication (core/src/api_partitioned.cpp) */
GRIDMPI_DECL(int, Psend_init, (const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request))
GRIDMPI_DECL(int, Precv_init, (void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request))
GRIDMPI_DECL(int, Pready, (int partition, MPI_Request request))
GRIDMPI_DECL(int, Pready_range, (int partition_low, int partition_high, MPI_Request request))
GRIDMPI_DECL(int, Pready_list, (int length, const int array_of_partitions[], MPI_Request request))
GRIDMPI_DECL(int, Parrived, (MPI_Request request, int partition, int *flag))
/* MPI-4.0 sessions (core/src/api_session.cpp) */
GRIDMPI_DECL(int, Session_init, (MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session))
GRIDMPI_DECL(int, Session_finalize, (MPI_Session *session))
GRIDMPI_DECL(int, Session_get_num_psets, (MPI_Session session, MPI_Info info, int *npset_names))
GRIDMPI_DECL(int, Session_get_nth_pset, (MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name))
GRIDMPI_DECL(int, Session_get_info, (MPI_Session session, MPI_Info *info_used))
GRIDMPI_DECL(int, Session_get_pset_info, (MPI_Session session, const char *pset_name, MPI_Info *info))
GRIDMPI_DECL(int, Session_create_errhandler, (MPI_Session_errhandler_function *session_errhandler_fn, MPI_Errhandler *errhandler))
GRIDMPI_DECL(int, Session_set_errhandler, (MPI_Session session, MPI_Errhandler errhandler))
GRIDMPI_DECL(int, Session_get_errhandler, (MPI_Session session, MPI_Errhandler *errhandler))
GRIDMPI_DECL(int, Session_call_errhandler, (MPI_Session session, int errorcode))
GRIDMPI_DECL(int, Group_from_session_pset, (MPI_Session session, const char *pset_name, MPI_Group *newgroup))
GRIDMPI_DECL(int, Comm_create_from_group, (MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler, MPI_Comm *newcomm))
GRIDMPI_DECL(int, Intercomm_create_from_groups, (MPI_Group local_group, int local_leader, MPI_Group remote_group, int remote_leader, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler, MPI_Comm *newintercomm))
GRIDMPI_DECL(MPI_Fint, Session_c2f, (MPI_Session session))
GRIDMPI_DECL(MPI_Session, Session_f2c, (MPI_Fint session))
GRIDMPI_DECL(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm))
GRIDMPI_DECL(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm))
GRIDMPI_DECL(int, Comm_free, (MPI_Comm *comm))
GRIDMPI_DECL(int, Comm_set_name, (MPI_Comm comm, const char *comm_name))
GRIDMPI_DECL(int, Comm_get_name, (MPI_Comm comm, char *comm_name, int *resultlen))
GRIDMPI_DECL(int, Comm_test_inter, (MPI_Comm comm, int *flag))
GRIDMPI_DECL(int, Comm_remote_size, (MPI_Comm comm, int *size))
GRIDMPI_DECL(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
GRIDMPI_DECL(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm *newintercomm))
GRIDMPI_DECL(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm))
GRIDMPI_DECL(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
GRIDMPI_DECL(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info_used))

/* process creation and management (MPI-3.1 chapter 10): not supported yet;
   MPI_Comm_get_parent gives MPI_COMM_NULL, MPI_Comm_disconnect frees, the
   others report MPI_ERR_SPAWN / MPI_ERR_PORT / MPI_ERR_NAME / MPI_ERR_SERVICE /
   MPI_ERR_UNSUPPORTED_OPERATION (core/src/api_dynamic.cpp) */
GRIDMPI_DECL(int, Comm_spawn, (const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]))
GRIDMPI_DECL(int, Comm_spawn_multiple, (int count, char *array_of_commands[], char **array_of_argv[], const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]))
GRIDMPI_DECL(int, Comm_get_parent, (MPI_Comm *parent))
GRIDMPI_DECL(int, Open_port, (MPI_Info info, char *port_name))
GRIDMPI_DECL(int, Close_port, (const char *port_name))
GRIDMPI_DECL(int, Comm_accept, (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm))
GRIDMPI_DECL(int, Comm_connect, (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm))
GRIDMPI_DECL(int, Comm_disconnect, (MPI_Comm *comm))
GRIDMPI_DECL(int, Comm_join, (int fd, MPI_Comm *intercomm))
GRIDMPI_DECL(int, Publish_name, (const char *service_name, MPI_Info info, const char *port_name))
GRIDMPI_DECL(int, Unpublish_name, (const char *service_name, MPI_Info info, const char *port_name))
GRIDMPI_DECL(int, Lookup_name, (const char *service_name, MPI_Info info, char *port_name))

/* attributes */
GRIDMPI_DECL(int, Comm_create_keyval, (MPI_Comm_copy_attr_function *comm_copy_attr_fn, MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval, void *extra_state))
GRIDMPI_DECL(int, Comm_free_keyval, (int *comm_keyval))
GRIDMPI_DECL(int, Comm_set_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val))
GRIDMPI_DECL(int, Comm_get_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag))
GRIDMPI_DECL(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval))
GRIDMPI_DECL(int, Keyval_create, (MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state))
GRIDMPI_DECL(int, Keyval_free, (int *keyval))
GRIDMPI_DECL(int, Attr_put, (MPI_Comm comm, int keyval, void *attribute_val))
GRIDMPI_DECL(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val, int *flag))
GRIDMPI_DECL(int, Attr_delete, (MPI_Comm comm, int keyval))
GRIDMPI_DECL(int, Type_create_keyval, (MPI_Type_copy_attr_function *type_copy_attr_fn, MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval, void *extra_state))
GRIDMPI_DECL(int, Type_free_keyval, (int *type_keyval))
GRIDMPI_DECL(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val))
GRIDMPI_DECL(int, Type_get_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag))
GRIDMPI_DECL(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval))

/* info */
GRIDMPI_DECL(int, Info_create, (MPI_Info *info))
GRIDMPI_DECL(int, Info_set, (MPI_Info info, const char *key, const char *value))
GRIDMPI_DECL(int, Info_get, (MPI_Info info, const char *key, int valuelen, char *value, int *flag))
GRIDMPI_DECL(int, Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag))
GRIDMPI_DECL(int, Info_get_nkeys, (MPI_Info info, int *nkeys))
GRIDMPI_DECL(int, Info_get_nthkey, (MPI_Info info, int n, char *key))
GRIDMPI_DECL(int, Info_delete, (MPI_Info info, const char *key))
GRIDMPI_DECL(int, Info_dup, (MPI_Info info, MPI_Info *newinfo))
GRIDMPI_DECL(int, Info_free, (MPI_Info *info))
/* MPI-4.0 */
GRIDMPI_DECL(int, Info_get_string, (MPI_Info info, const char *key, int *buflen, char *value, int *flag))
GRIDMPI_DECL(int, Info_create_env, (int argc, char *argv[], MPI_Info *info))

/* blocking collectives */
GRIDMPI_DECL(int, Barrier, (MPI_Comm comm))
GRIDMPI_DECL(int, Bcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm))
GRIDMPI_DECL(int, Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
GRIDMPI_DECL(int, Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm))
GRIDMPI_DECL(int, Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
GRIDMPI_DECL(int, Scatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
GRIDMPI_DECL(int, Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
GRIDMPI_DECL(int, Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
GRIDMPI_DECL(int, Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
GRIDMPI_DECL(int, Alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
GRIDMPI_DECL(int, Alltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
GRIDMPI_DECL(int, Reduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
GRIDMPI_DECL(int, Allreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
GRIDMPI_DECL(int, Reduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
GRIDMPI_DECL(int, Reduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
GRIDMPI_DECL(int, Scan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
GRIDMPI_DECL(int, Exscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))

/* non-blocking collectives */
GRIDMPI_DECL(int, Ibarrier, (MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ibcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Igather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Igatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iscatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iscatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iallgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iallgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ialltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ialltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ialltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ireduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iallreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ireduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ireduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Iexscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))

/* handle conversion (Fortran) */
GRIDMPI_DECL(MPI_Fint, Comm_c2f, (MPI_Comm comm))
GRIDMPI_DECL(MPI_Comm, Comm_f2c, (MPI_Fint comm))
GRIDMPI_DECL(MPI_Fint, Type_c2f, (MPI_Datatype datatype))
GRIDMPI_DECL(MPI_Datatype, Type_f2c, (MPI_Fint datatype))
GRIDMPI_DECL(MPI_Fint, Group_c2f, (MPI_Group group))
GRIDMPI_DECL(MPI_Group, Group_f2c, (MPI_Fint group))
GRIDMPI_DECL(MPI_Fint, Op_c2f, (MPI_Op op))
GRIDMPI_DECL(MPI_Op, Op_f2c, (MPI_Fint op))
GRIDMPI_DECL(MPI_Fint, Request_c2f, (MPI_Request request))
GRIDMPI_DECL(MPI_Request, Request_f2c, (MPI_Fint request))
GRIDMPI_DECL(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler))
GRIDMPI_DECL(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler))
GRIDMPI_DECL(MPI_Fint, Info_c2f, (MPI_Info info))
GRIDMPI_DECL(MPI_Info, Info_f2c, (MPI_Fint info))
GRIDMPI_DECL(MPI_Fint, Message_c2f, (MPI_Message message))
GRIDMPI_DECL(MPI_Message, Message_f2c, (MPI_Fint message))
GRIDMPI_DECL(int, Status_c2f, (const MPI_Status *c_status, MPI_Fint *f_status))
GRIDMPI_DECL(int, Status_f2c, (const MPI_Fint *f_status, MPI_Status *c_status))

/* ---- process topologies (MPI-3.1 chapter 7) ---- */
GRIDMPI_DECL(int, Dims_create, (int nnodes, int ndims, int dims[]))
GRIDMPI_DECL(int, Cart_create, (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *comm_cart))
GRIDMPI_DECL(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]))
GRIDMPI_DECL(int, Cartdim_get, (MPI_Comm comm, int *ndims))
GRIDMPI_DECL(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank))
GRIDMPI_DECL(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
GRIDMPI_DECL(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest))
GRIDMPI_DECL(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm))
GRIDMPI_DECL(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank))
GRIDMPI_DECL(int, Graph_create, (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *comm_graph))
GRIDMPI_DECL(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
GRIDMPI_DECL(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]))
GRIDMPI_DECL(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors))
GRIDMPI_DECL(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]))
GRIDMPI_DECL(int, Graph_map, (MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank))
GRIDMPI_DECL(int, Dist_graph_create_adjacent, (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[], int outdegree, const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph))
GRIDMPI_DECL(int, Dist_graph_create, (MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[], const int weights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph))
GRIDMPI_DECL(int, Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree, int *outdegree, int *weighted))
GRIDMPI_DECL(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree, int destinations[], int destweights[]))
GRIDMPI_DECL(int, Topo_test, (MPI_Comm comm, int *status))
GRIDMPI_DECL(int, Neighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
GRIDMPI_DECL(int, Neighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
GRIDMPI_DECL(int, Neighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
GRIDMPI_DECL(int, Neighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
GRIDMPI_DECL(int, Neighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
GRIDMPI_DECL(int, Ineighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ineighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ineighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ineighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
GRIDMPI_DECL(int, Ineighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))
/* ---- end of process topologies ---- */

/* ---- one-sided communication (MPI-3.1 chapter 11) ---- */
GRIDMPI_DECL(int, Win_create, (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win))
GRIDMPI_DECL(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
GRIDMPI_DECL(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win))
GRIDMPI_DECL(int, Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
GRIDMPI_DECL(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr))
GRIDMPI_DECL(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size))
GRIDMPI_DECL(int, Win_detach, (MPI_Win win, const void *base))
GRIDMPI_DECL(int, Win_free, (MPI_Win *win))
GRIDMPI_DECL(int, Win_get_group, (MPI_Win win, MPI_Group *group))
GRIDMPI_DECL(int, Win_set_name, (MPI_Win win, const char *win_name))
GRIDMPI_DECL(int, Win_get_name, (MPI_Win win, char *win_name, int *resultlen))
GRIDMPI_DECL(int, Win_set_info, (MPI_Win win, MPI_Info info))
GRIDMPI_DECL(int, Win_get_info, (MPI_Win win, MPI_Info *info_used))
GRIDMPI_DECL(int, Win_fence, (int assert, MPI_Win win))
GRIDMPI_DECL(int, Win_post, (MPI_Group group, int assert, MPI_Win win))
GRIDMPI_DECL(int, Win_start, (MPI_Group group, int assert, MPI_Win win))
GRIDMPI_DECL(int, Win_complete, (MPI_Win win))
GRIDMPI_DECL(int, Win_wait, (MPI_Win win))
GRIDMPI_DECL(int, Win_test, (MPI_Win win, int *flag))
GRIDMPI_DECL(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
GRIDMPI_DECL(int, Win_unlock, (int rank, MPI_Win win))
GRIDMPI_DECL(int, Win_lock_all, (int assert, MPI_Win win))
GRIDMPI_DECL(int, Win_unlock_all, (MPI_Win win))
GRIDMPI_DECL(int, Win_flush, (int rank, MPI_Win win))
GRIDMPI_DECL(int, Win_flush_all, (MPI_Win win))
GRIDMPI_DECL(int, Win_flush_local, (int rank, MPI_Win win))
GRIDMPI_DECL(int, Win_flush_local_all, (MPI_Win win))
GRIDMPI_DECL(int, Win_sync, (MPI_Win win))
GRIDMPI_DECL(int, Put, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
GRIDMPI_DECL(int, Get, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
GRIDMPI_DECL(int, Accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
GRIDMPI_DECL(int, Get_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
GRIDMPI_DECL(int, Fetch_and_op, (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win))
GRIDMPI_DECL(int, Compare_and_swap, (const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win))
GRIDMPI_DECL(int, Rput, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
GRIDMPI_DECL(int, Rget, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
GRIDMPI_DECL(int, Raccumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request))
GRIDMPI_DECL(int, Rget_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request))
GRIDMPI_DECL(int, Win_create_keyval, (MPI_Win_copy_attr_function *win_copy_attr_fn, MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state))
GRIDMPI_DECL(int, Win_free_keyval, (int *win_keyval))
GRIDMPI_DECL(int, Win_set_attr, (MPI_Win win, int win_keyval, void *attribute_val))
GRIDMPI_DECL(int, Win_get_attr, (MPI_Win win, int win_keyval, void *attribute_val, int *flag))
GRIDMPI_DECL(int, Win_delete_attr, (MPI_Win win, int win_keyval))
GRIDMPI_DECL(int, Win_create_errhandler, (MPI_Win_errhandler_function *win_errhandler_fn, MPI_Errhandler *errhandler))
GRIDMPI_DECL(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
GRIDMPI_DECL(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler))
GRIDMPI_DECL(int, Win_call_errhandler, (MPI_Win win, int errorcode))
GRIDMPI_DECL(MPI_Fint, Win_c2f, (MPI_Win win))
GRIDMPI_DECL(MPI_Win, Win_f2c, (MPI_Fint win))
/* ---- end of one-sided communication ---- */

/* ---- MPI-IO (MPI-3.1 chapter 13) ---- */
GRIDMPI_DECL(int, File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh))
GRIDMPI_DECL(int, File_close, (MPI_File *fh))
GRIDMPI_DECL(int, File_delete, (const char *filename, MPI_Info info))
GRIDMPI_DECL(int, File_set_size, (MPI_File fh, MPI_Offset size))
GRIDMPI_DECL(int, File_preallocate, (MPI_File fh, MPI_Offset size))
GRIDMPI_DECL(int, File_get_size, (MPI_File fh, MPI_Offset *size))
GRIDMPI_DECL(int, File_get_group, (MPI_File fh, MPI_Group *group))
GRIDMPI_DECL(int, File_get_amode, (MPI_File fh, int *amode))
GRIDMPI_DECL(int, File_set_info, (MPI_File fh, MPI_Info info))
GRIDMPI_DECL(int, File_get_info, (MPI_File fh, MPI_Info *info_used))
GRIDMPI_DECL(int, File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep, MPI_Info info))
GRIDMPI_DECL(int, File_get_view, (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep))
GRIDMPI_DECL(int, File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
GRIDMPI_DECL(int, File_read_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
GRIDMPI_DECL(int, File_write_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
GRIDMPI_DECL(int, File_write_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
GRIDMPI_DECL(int, File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
GRIDMPI_DECL(int, File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
GRIDMPI_DECL(int, File_iread_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
GRIDMPI_DECL(int, File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
GRIDMPI_DECL(int, File_read, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
GRIDMPI_DECL(int, File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
GRIDMPI_DECL(int, File_write, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
GRIDMPI_DECL(int, File_write_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
GRIDMPI_DECL(int, File_iread, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
GRIDMPI_DECL(int, File_iwrite, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
GRIDMPI_DECL(int, File_iread_all, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
GRIDMPI_DECL(int, File_iwrite_all, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
GRIDMPI_DECL(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence))
GRIDMPI_DECL(int, File_get_position, (MPI_File fh, MPI_Offset *offset))
GRIDMPI_DECL(int, File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp))
GRIDMPI_DECL(int, File_read_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
GRIDMPI_DECL(int, File_write_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
GRIDMPI_DECL(int, File_iread_shared, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
GRIDMPI_DECL(int, File_iwrite_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
GRIDMPI_DECL(int, File_read_ordered, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
GRIDMPI_DECL(int, File_write_ordered, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
GRIDMPI_DECL(int, File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence))
GRIDMPI_DECL(int, File_get_position_shared, (MPI_File fh, MPI_Offset *offset))
GRIDMPI_DECL(int, File_read_at_all_begin, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype))
GRIDMPI_DECL(int, File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status))
GRIDMPI_DECL(int, File_write_at_all_begin, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype))
GRIDMPI_DECL(int, File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
GRIDMPI_DECL(int, File_read_all_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype))
GRIDMPI_DECL(int, File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status))
GRIDMPI_DECL(int, File_write_all_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype))
GRIDMPI_DECL(int, File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
GRIDMPI_DECL(int, File_read_ordered_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype))
GRIDMPI_DECL(int, File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status))
GRIDMPI_DECL(int, File_write_ordered_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype))
GRIDMPI_DECL(int, File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status))
GRIDMPI_DECL(int, File_get_type_extent, (MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent))
GRIDMPI_DECL(int, Register_datarep, (const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn, MPI_Datarep_conversion_function *write_conversion_fn, MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state))
GRIDMPI_DECL(int, File_set_atomicity, (MPI_File fh, int flag))
GRIDMPI_DECL(int, File_get_atomicity, (MPI_File fh, int *flag))
GRIDMPI_DECL(int, File_sync, (MPI_File fh))
GRIDMPI_DECL(int, File_create_errhandler, (MPI_File_errhandler_function *file_errhandler_fn, MPI_Errhandler *errhandler))
GRIDMPI_DECL(int, File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler))
GRIDMPI_DECL(int, File_get_errhandler, (MPI_File file, MPI_Errhandler *errhandler))
GRIDMPI_DECL(int, File_call_errhandler, (MPI_File fh, int errorcode))
GRIDMPI_DECL(MPI_Fint, File_c2f, (MPI_File file))
GRIDMPI_DECL(MPI_File, File_f2c, (MPI_Fint file))
/* ---- end of MPI-IO ---- */

/* tool information interface (MPI-3.1 chapter 14; C only, core/mpit.cpp) */
GRIDMPI_DECL(int, T_init_thread, (int required, int *provided))
GRIDMPI_DECL(int, T_finalize, (void))
GRIDMPI_DECL(int, T_enum_get_info, (MPI_T_enum enumtype, int *num, char *name, int *name_len))
GRIDMPI_DECL(int, T_enum_get_item, (MPI_T_enum enumtype, int index, int *value, char *name, int *name_len))
GRIDMPI_DECL(int, T_cvar_get_num, (int *num_cvar))
GRIDMPI_DECL(int, T_cvar_get_info, (int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope))
GRIDMPI_DECL(int, T_cvar_get_index, (const char *name, int *cvar_index))
GRIDMPI_DECL(int, T_cvar_handle_alloc, (int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count))
GRIDMPI_DECL(int, T_cvar_handle_free, (MPI_T_cvar_handle *handle))
GRIDMPI_DECL(int, T_cvar_read, (MPI_T_cvar_handle handle, void *buf))
GRIDMPI_DECL(int, T_cvar_write, (MPI_T_cvar_handle handle, const void *buf))
GRIDMPI_DECL(int, T_pvar_get_num, (int *num_pvar))
GRIDMPI_DECL(int, T_pvar_get_info, (int pvar_index, char *name, int *name_len, int *verbosity, int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *readonly, int *continuous, int *atomic))
GRIDMPI_DECL(int, T_pvar_get_index, (const char *name, int var_class, int *pvar_index))
GRIDMPI_DECL(int, T_pvar_session_create, (MPI_T_pvar_session *session))
GRIDMPI_DECL(int, T_pvar_session_free, (MPI_T_pvar_session *session))
GRIDMPI_DECL(int, T_pvar_handle_alloc, (MPI_T_pvar_session session, int pvar_index, void *obj_handle, MPI_T_pvar_handle *handle, int *count))
GRIDMPI_DECL(int, T_pvar_handle_free, (MPI_T_pvar_session session, MPI_T_pvar_handle *handle))
GRIDMPI_DECL(int, T_pvar_start, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
GRIDMPI_DECL(int, T_pvar_stop, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
GRIDMPI_DECL(int, T_pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf))
GRIDMPI_DECL(int, T_pvar_write, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf))
GRIDMPI_DECL(int, T_pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
GRIDMPI_DECL(int, T_pvar_readreset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf))
GRIDMPI_DECL(int, T_category_get_num, (int *num_cat))
GRIDMPI_DECL(int, T_category_get_info, (int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars, int *num_pvars, int *num_categories))
GRIDMPI_DECL(int, T_category_get_index, (const char *name, int *cat_index))
GRIDMPI_DECL(int, T_category_get_cvars, (int cat_index, int len, int indices[]))
GRIDMPI_DECL(int, T_category_get_pvars, (int cat_index, int len, int indices[]))
GRIDMPI_DECL(int, T_category_get_categories, (int cat_index, int len, int indices[]))
GRIDMPI_DECL(int, T_category_changed, (int *stamp))
/* ---- end of tool information interface ---- */

#undef GRIDMPI_DECL

/* ---- gridmpi extensions ------------------------------------------------
 * Functions no other MPI has carry the prefix GMPI_ (PGMPI_ for the
 * profiling interface), not MPIX_: MPIX_ is where MPICH and Open MPI put
 * their proposals for the standard, and a name there may one day mean
 * something else.  A program tests for them with #ifdef GMPI_MCAST.
 *
 * Dynamic multicast: the root sends (buf, count, datatype) to the ranks
 * `targets[0..ntargets-1]` of the intracommunicator comm, a subset that may
 * change from call to call; only the targets take part (each calls
 * GMPI_Mcast_recv), nobody else synchronises, and no communicator is made.
 * Targets get a root's multicasts in the order it sent them; several may be
 * in flight.  A target's count is a capacity, as for MPI_Recv (status tells
 * the size; a longer message is MPI_ERR_TRUNCATE); root may be
 * MPI_ANY_SOURCE.  Bad targets (out of range, listed twice, the root
 * itself) are MPI_ERR_RANK.  MPI_Cancel withdraws a GMPI_Imcast_recv whose
 * multicast has not begun.  Targets pass the message on to each other:
 * targets of overlapping multicasts must receive them in one order
 * (docs/collectives.md).  See core/coll/mcast.hpp. */
#define GMPI_MCAST 1
int GMPI_Mcast(const void *buf, int count, MPI_Datatype datatype, const int targets[], int ntargets, MPI_Comm comm);
int PGMPI_Mcast(const void *buf, int count, MPI_Datatype datatype, const int targets[], int ntargets, MPI_Comm comm);
int GMPI_Imcast(const void *buf, int count, MPI_Datatype datatype, const int targets[], int ntargets, MPI_Comm comm,
                MPI_Request *request);
int PGMPI_Imcast(const void *buf, int count, MPI_Datatype datatype, const int targets[], int ntargets, MPI_Comm comm,
                 MPI_Request *request);
int GMPI_Mcast_recv(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Status *status);
int PGMPI_Mcast_recv(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Status *status);
int GMPI_Imcast_recv(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request);
int PGMPI_Imcast_recv(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request);

#ifdef __cplusplus
}
#endif

#endif /* GRIDMPI_MPI_H */
