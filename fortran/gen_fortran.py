#!/usr/bin/env python3
"""Generates gridmpi's Fortran interface from the C interface (core/include/mpi.h).

Owned by fortran/ (see fortran/README.md).  One table drives C, PMPI_ and
Fortran: every GRIDMPI_DECL(ret, Name, (args)) line of mpi.h.  For each one
this script either generates the Fortran entry points mpi_name_ and
pmpi_name_ (plus the g77-style aliases mpi_name__ and pmpi_name__), each
converting its arguments mechanically from the C prototype, or finds the
function in HANDWRITTEN / C_ONLY below.  A declaration that fits no rule and
no table stops the build with a message naming it.

Outputs (any subset):
  --bindings FILE   C++ source of the generated bindings (compiled into libmpi)
  --mpif FILE       mpif.h: every integer #define of mpi.h as an INTEGER
                    PARAMETER, the Fortran-only constants, the sentinel
                    COMMON blocks (fixed and free form alike)
  --symbols         print the Fortran symbols libmpi.so must export
  --check LIB       compare those with `nm -D LIB` (a CTest)
"""

import argparse
import os
import re
import subprocess
import sys

# ---------------------------------------------------------------- the tables

# Functions whose Fortran bindings are written by hand in
# fortran/bindings_special.cpp, with the reason.  A name may be listed before
# mpi.h declares it (the hand-written file then declares the C prototype).
HANDWRITTEN = {
    "Init": "no argc/argv in Fortran",
    "Init_thread": "no argc/argv in Fortran",
    "Pcontrol": "C varargs; the Fortran binding has no IERROR",
    "Address": "MPI-1: the address is a default INTEGER",
    "Type_hvector": "MPI-1: the stride is a default INTEGER",
    "Type_hindexed": "MPI-1: the displacements are default INTEGERs",
    "Type_struct": "MPI-1: the displacements are default INTEGERs",
    "Type_extent": "MPI-1: the extent is a default INTEGER",
    "Type_lb": "MPI-1: the displacement is a default INTEGER",
    "Type_ub": "MPI-1: the displacement is a default INTEGER",
    "Attr_put": "MPI-1: the attribute value is a default INTEGER",
    "Attr_get": "MPI-1: the attribute value is a default INTEGER",
    "Comm_get_attr": "predefined attributes are values in Fortran, pointers in C",
    "Type_get_attr": "attribute values are INTEGER(KIND=MPI_ADDRESS_KIND)",
    "Win_get_attr": "predefined attributes are values in Fortran, pointers in C",
    "Keyval_create": "Fortran copy/delete callbacks take every argument by reference",
    "Comm_create_keyval": "Fortran copy/delete callbacks take every argument by reference",
    "Type_create_keyval": "Fortran copy/delete callbacks take every argument by reference",
    "Win_create_keyval": "Fortran copy/delete callbacks take every argument by reference",
    "Grequest_start": "Fortran query/free/cancel callbacks take every argument by reference",
    "Buffer_detach": "the buffer address cannot be returned through a Fortran choice argument",
    "Register_datarep": "Fortran conversion callbacks take every argument by reference",
    "Info_get_string": "BUFLEN counts characters without a terminator in Fortran",
    "Info_create_env": "no argc/argv in Fortran",
    "Comm_spawn": "ARGV is an array of CHARACTER*(*) ended by a blank entry",
    "Comm_spawn_multiple": "ARRAY_OF_COMMANDS and ARRAY_OF_ARGV are CHARACTER arrays",
}

# C-only functions: no Fortran binding exists in the standard (the handle
# conversions, and the tool information interface MPI_T_*, which MPI-3.1
# defines for C only), or none here yet (MPI-4.0's large-count "_c"
# functions, which Fortran has only in the mpi_f08 module).
C_ONLY_PATTERN = re.compile(r"^T_|_(c2f|f2c|c)$")

# Argument names with a Fortran meaning beyond their C type.
LOGICAL_IN = {"commute", "high", "reorder", "flag"}  # int by value that is LOGICAL in Fortran
LOGICAL_OUT = {"flag", "commute", "weighted"}  # int* that is LOGICAL in Fortran
ONE_BASED_INDEX = {"index"}  # int* 0-based in C, 1-based in Fortran
ONE_BASED_INDICES = {"array_of_indices": "outcount"}  # int[] with its count
WEIGHTS = re.compile(r"weights$")  # int[] that may be MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY
ADDRESS_OUT = {"baseptr"}  # void*: receives an address (INTEGER(KIND=MPI_ADDRESS_KIND))
CAPPED_BY_STRING = {"valuelen"}  # an int limit on an output string: capped at its Fortran length
# Callback types whose Fortran form (arguments by reference) is the C one.
PASS_THROUGH_CALLBACKS = {"MPI_User_function", "MPI_Comm_errhandler_function", "MPI_Comm_errhandler_fn",
                          "MPI_Handler_function", "MPI_Win_errhandler_function",
                          "MPI_File_errhandler_function", "MPI_Session_errhandler_function"}

HANDLE_TYPES = {"int", "MPI_Comm", "MPI_Group", "MPI_Datatype", "MPI_Op", "MPI_Request", "MPI_Errhandler",
                "MPI_Info", "MPI_Win", "MPI_File", "MPI_Message", "MPI_Session", "MPI_Fint"}
WIDE_TYPES = {"MPI_Aint", "MPI_Offset", "MPI_Count"}

# Fortran-only constants (besides those derived from the MPI_Status layout).
KINDS = {"MPI_ADDRESS_KIND": "MPI_Aint", "MPI_OFFSET_KIND": "MPI_Offset", "MPI_COUNT_KIND": "MPI_Count",
         "MPI_INTEGER_KIND": "MPI_Fint"}
C_SIZES = {"int": 4, "long": 8, "long long": 8, "MPI_Fint": 4, "MPI_Aint": 8, "MPI_Offset": 8, "MPI_Count": 8}

# Sentinels: Fortran variables in COMMON blocks (the binding compares addresses).
SENTINELS = [  # (Fortran declaration, COMMON block, C storage)
    ("INTEGER MPI_BOTTOM", "MPI_FORTRAN_BOTTOM", "MPI_Fint mpi_fortran_bottom_"),
    ("INTEGER MPI_IN_PLACE", "MPI_FORTRAN_IN_PLACE", "MPI_Fint mpi_fortran_in_place_"),
    ("INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)", "MPI_FORTRAN_STATUS_IGNORE",
     "MPI_Fint mpi_fortran_status_ignore_[MPI_F_STATUS_SIZE]"),
    ("INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)", "MPI_FORTRAN_STATUSES_IGNORE",
     "MPI_Fint mpi_fortran_statuses_ignore_[MPI_F_STATUS_SIZE]"),
    ("INTEGER MPI_ERRCODES_IGNORE(1)", "MPI_FORTRAN_ERRCODES_IGNORE", "MPI_Fint mpi_fortran_errcodes_ignore_[1]"),
    ("INTEGER MPI_UNWEIGHTED(1)", "MPI_FORTRAN_UNWEIGHTED", "MPI_Fint mpi_fortran_unweighted_[1]"),
    ("INTEGER MPI_WEIGHTS_EMPTY(1)", "MPI_FORTRAN_WEIGHTS_EMPTY", "MPI_Fint mpi_fortran_weights_empty_[1]"),
    ("CHARACTER*1 MPI_ARGV_NULL(1)", "MPI_FORTRAN_ARGV_NULL", "char mpi_fortran_argv_null_[1]"),
    ("CHARACTER*1 MPI_ARGVS_NULL(1,1)", "MPI_FORTRAN_ARGVS_NULL", "char mpi_fortran_argvs_null_[1]"),
]

# Predefined attribute callbacks, callable from Fortran (bindings_special.cpp).
FORTRAN_CALLBACKS = ["MPI_NULL_COPY_FN", "MPI_DUP_FN", "MPI_NULL_DELETE_FN", "MPI_COMM_NULL_COPY_FN",
                     "MPI_COMM_DUP_FN", "MPI_COMM_NULL_DELETE_FN", "MPI_TYPE_NULL_COPY_FN", "MPI_TYPE_DUP_FN",
                     "MPI_TYPE_NULL_DELETE_FN", "MPI_WIN_NULL_COPY_FN", "MPI_WIN_DUP_FN",
                     "MPI_WIN_NULL_DELETE_FN"]


class GenError(Exception):
    pass


# ---------------------------------------------------------------- parsing mpi.h

class Param:
    def __init__(self, text, function):
        self.text = text
        t = text.strip()
        m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*((?:\[\w*\])*)$", t)
        if not m:
            raise GenError("MPI_%s: cannot parse parameter '%s'" % (function, text))
        self.name = m.group(2)
        self.dims = re.findall(r"\[(\w*)\]", m.group(3))
        base = m.group(1)
        self.const = bool(re.search(r"\bconst\b", base))
        base = re.sub(r"\bconst\b", "", base)
        self.stars = base.count("*")
        self.base = " ".join(base.replace("*", " ").split())
        self.indirect = self.stars + len(self.dims)


class Decl:
    def __init__(self, ret, name, args):
        self.ret = ret.strip()
        self.name = name
        a = args.strip()
        self.varargs = False
        if a == "void":
            self.params = []
        else:
            parts = [p.strip() for p in a.split(",")]
            if parts and parts[-1] == "...":
                self.varargs = True
                parts = parts[:-1]
            self.params = [Param(p, name) for p in parts]

    @property
    def lower(self):
        return self.name.lower()


def parse_decls(text):
    decls = []
    body = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    for m in re.finditer(r"^\s*GRIDMPI_DECL\(", body, flags=re.M):
        i = m.end()
        depth = 1
        j = i
        while depth:
            if j >= len(body):
                raise GenError("unbalanced GRIDMPI_DECL( at offset %d" % m.start())
            depth += {"(": 1, ")": -1}.get(body[j], 0)
            j += 1
        inner = " ".join(body[i:j - 1].split())
        mm = re.match(r"^([^,]+),\s*(\w+),\s*\((.*)\)$", inner)
        if not mm:
            raise GenError("cannot parse GRIDMPI_DECL(%s)" % inner)
        decls.append(Decl(mm.group(1), mm.group(2), mm.group(3)))
    names = [d.name for d in decls]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise GenError("declared twice in mpi.h: %s" % ", ".join("MPI_" + n for n in sorted(dup)))
    return decls


# Constants whose Fortran value is not their C one (mpi.h says why).
FORTRAN_VALUES = {"MPI_INTEGER16": "GRIDMPI_INTEGER16"}


def parse_constants(text):
    """Integer #defines of mpi.h, in order: [(name, value)].  A constant cast to
    a wide type (MPI_DISPLACEMENT_CURRENT is an MPI_Offset) is listed as
    (name, value, kind parameter)."""
    consts = []
    known = {}
    for line in text.splitlines():
        m = re.match(r"^#define\s+((?:MPI|IMPI|GRIDMPI)_\w+)\s+(.*?)\s*(?:/\*.*)?$", line)
        if not m:
            continue
        name, value = m.group(1), m.group(2).strip()
        value = FORTRAN_VALUES.get(name, value)
        v = None
        mm = re.match(r"^\(\((MPI_\w+)\)\s*(-?\d+)\)$", value)
        wide_kind = None
        if mm:
            v = int(mm.group(2))
            for kind, ctype in KINDS.items():
                if ctype == mm.group(1) and ctype in WIDE_TYPES:
                    wide_kind = kind
        elif re.match(r"^\(?-?\d+\)?$", value):
            v = int(value.strip("()"))
        elif value in known:
            v = known[value]
        if v is None:
            continue  # pointers, strings, function aliases: not Fortran constants
        known[name] = v
        if name.startswith("GRIDMPI_"):
            continue  # C names of values Fortran spells otherwise
        consts.append((name, v, wide_kind) if wide_kind else (name, v))
    return consts


def status_layout(text):
    """(size in ints, {field: 1-based int index}) of struct MPI_Status."""
    m = re.search(r"typedef struct MPI_Status \{(.*?)\} MPI_Status;", text, flags=re.S)
    if not m:
        raise GenError("mpi.h: no 'typedef struct MPI_Status { ... } MPI_Status;'")
    body = re.sub(r"/\*.*?\*/", " ", m.group(1), flags=re.S)
    offset, align, fields = 0, 4, {}
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        mm = re.match(r"^(.*) (\w+)$", decl)
        ctype, field = mm.group(1), mm.group(2)
        if ctype not in C_SIZES:
            raise GenError("MPI_Status field '%s': unknown size of '%s' (add it to C_SIZES)" % (field, ctype))
        size = C_SIZES[ctype]
        offset = (offset + size - 1) // size * size
        fields[field] = offset // 4 + 1
        offset += size
        align = max(align, size)
    offset = (offset + align - 1) // align * align
    return offset // 4, fields


# ---------------------------------------------------------------- bindings

class Binding:
    """The Fortran binding of one C function: its Fortran-side parameters,
    the statements before the call, the C call arguments, and after."""

    def __init__(self, decl):
        self.decl = decl
        self.fparams = []  # C++ parameter declarations of the Fortran entry point
        self.hidden = []  # hidden character lengths (after everything else)
        self.before = []
        self.args = []
        self.after = []
        self.has_output_string = any(p.base == "char" and not p.const for p in decl.params)
        for p in decl.params:
            self.convert(p)

    def fail(self, p, why):
        raise GenError("MPI_%s: parameter '%s': %s; write its binding in fortran/bindings_special.cpp and list "
                       "it in HANDWRITTEN of fortran/gen_fortran.py" % (self.decl.name, p.text.strip(), why))

    def convert(self, p):
        d = self.decl
        n = p.name
        if p.base in HANDLE_TYPES and p.indirect == 0:
            self.fparams.append("const MPI_Fint* %s" % n)
            if n in LOGICAL_IN and p.base == "int":
                self.args.append("(*%s != 0)" % n)
            elif n in CAPPED_BY_STRING and self.has_output_string:
                strings = [q.name for q in d.params if q.base == "char" and not q.const]
                self.args.append("std::min<MPI_Fint>(*%s, static_cast<MPI_Fint>(%s_len))" % (n, strings[0]))
            else:
                self.args.append("*%s" % n)
        elif p.base in WIDE_TYPES and p.indirect == 0:
            self.fparams.append("const %s* %s" % (p.base, n))
            self.args.append("*%s" % n)
        elif p.base in HANDLE_TYPES | WIDE_TYPES and len(p.dims) == 2 and p.dims[1].isdigit() and p.stars == 0:
            ctype = "MPI_Fint" if p.base in HANDLE_TYPES else p.base
            self.fparams.append("%s%s (*%s)[%s]" % ("const " if p.const else "", ctype, n, p.dims[1]))
            self.args.append(n)
        elif p.base in HANDLE_TYPES | WIDE_TYPES and p.indirect == 1:
            ctype = "MPI_Fint" if p.base in HANDLE_TYPES else p.base
            const = "const " if p.const else ""
            self.fparams.append("%s%s* %s" % (const, ctype, n))
            if p.base == "int" and WEIGHTS.search(n):
                self.args.append("gridmpi::fortran::weights(%s)" % n)
            elif p.base == "int" and n == "array_of_errcodes":
                self.args.append("gridmpi::fortran::errcodes(%s)" % n)
            else:
                self.args.append(n)
            if not p.const and p.base == "int":
                if n in LOGICAL_OUT and not p.dims:
                    self.after.append("gridmpi::fortran::to_logical(%s);" % n)
                elif n in ONE_BASED_INDEX:
                    self.after.append("gridmpi::fortran::to_one_based(%s, 1);" % n)
                elif n in ONE_BASED_INDICES:
                    count = ONE_BASED_INDICES[n]
                    self.after.append("if (*%s != MPI_UNDEFINED) gridmpi::fortran::to_one_based(%s, *%s);"
                                      % (count, n, count))
        elif p.base == "void" and p.indirect == 1:
            if n in ADDRESS_OUT:
                self.fparams.append("MPI_Aint* %s" % n)
                self.args.append(n)
            elif n == "attribute_val" and d.name.endswith("set_attr"):
                self.fparams.append("const MPI_Aint* %s" % n)
                # Stored as a Fortran value: C's get sees a pointer to it (MPI-3.1 17.2.7).
                self.args.append("gridmpi::fortran::attribute_box(*%s)" % n)
            elif n in ("attribute_val", "extra_state", "buffer_addr"):
                self.fail(p, "not a choice buffer")
            else:
                self.fparams.append("%svoid* %s" % ("const " if p.const else "", n))
                self.args.append("gridmpi::fortran::choice(%s)" % n)
        elif p.base == "char" and p.indirect == 1:
            self.fparams.append("%schar* %s" % ("const " if p.const else "", n))
            self.hidden.append("std::size_t %s_len" % n)
            if p.const:
                trim = "both" if d.name.startswith("Info_") else "trailing"
                self.before.append("gridmpi::fortran::InString %s_c(%s, %s_len, gridmpi::fortran::Trim::%s);"
                                   % (n, n, n, trim))
            else:
                self.before.append("gridmpi::fortran::OutString %s_c(%s, %s_len);" % (n, n, n))
                # Only a value actually returned is copied: on an error, or
                # when a LOGICAL flag says "not found" (Info_get), the
                # program's variable keeps its contents.
                cond = "*ierror == MPI_SUCCESS"
                for q in d.params:
                    if q.name in LOGICAL_OUT and q.base == "int" and q.stars == 1 and not q.const:
                        cond += " && *%s" % q.name
                self.after.append("if (%s) %s_c.copy_out();" % (cond, n))
            self.args.append("%s_c.c_str()" % n)
        elif p.base == "MPI_Status" and p.indirect == 1:
            if p.const:
                self.fparams.append("const MPI_Fint* %s" % n)
                self.args.append("reinterpret_cast<const MPI_Status*>(%s)" % n)
            else:
                self.fparams.append("MPI_Fint* %s" % n)
                self.args.append("gridmpi::fortran::status(%s)" % n)
        elif p.base in PASS_THROUGH_CALLBACKS and p.stars == 1 and not p.dims:
            self.fparams.append("%s* %s" % (p.base, n))
            self.args.append(n)
        else:
            self.fail(p, "no mechanical Fortran conversion for this C type")

    def signature(self, entry, returns):
        params = list(self.fparams)
        if returns == "int":
            params.append("MPI_Fint* ierror")
        params += self.hidden
        ret = "void" if returns == "int" else returns
        return "%s %s(%s)" % (ret, entry, ", ".join(params) if params else "")

    def body(self, callee):
        d = self.decl
        lines = []
        call = "%s(%s)" % (callee, ", ".join(self.args))
        if d.ret == "int":
            lines.append("  if (!%s) {" % callee)
            lines.append("    *ierror = gridmpi::fortran::not_implemented(\"MPI_%s\");" % d.name)
            lines.append("    return;")
            lines.append("  }")
            lines += ["  " + s for s in self.before]
            lines.append("  *ierror = %s;" % call)
            lines += ["  " + s for s in self.after]
        else:
            if self.before or self.after:
                raise GenError("MPI_%s: returns %s but needs conversions" % (d.name, d.ret))
            lines.append("  if (!%s) return gridmpi::fortran::not_implemented_value<%s>(\"MPI_%s\");"
                         % (callee, d.ret, d.name))
            lines.append("  return %s;" % call)
        return "\n".join(lines)


def classify(decls):
    """(generated bindings, handwritten decls, C-only decls)."""
    gen, hand, conly = [], [], []
    for d in decls:
        if d.name in HANDWRITTEN:
            hand.append(d)
        elif C_ONLY_PATTERN.search(d.name):
            conly.append(d)
        else:
            if d.varargs:
                raise GenError("MPI_%s: C varargs have no mechanical Fortran binding; list it in HANDWRITTEN"
                               % d.name)
            if d.ret not in ("int", "double", "MPI_Aint"):
                raise GenError("MPI_%s: returns %s: no mechanical Fortran binding; list it in HANDWRITTEN"
                               % (d.name, d.ret))
            gen.append(Binding(d))
    return gen, hand, conly


def write_bindings(path, header_path, decls, status_size, status_fields):
    gen, hand, conly = classify(decls)
    out = []
    w = out.append
    w("// Generated by fortran/gen_fortran.py from %s: do not edit." % os.path.basename(header_path))
    w("// The Fortran entry points (gfortran mangling: mpi_name_, pmpi_name_, and the")
    w("// g77 aliases mpi_name__, pmpi_name__) of every MPI function of mpi.h whose")
    w("// binding is mechanical; see fortran/README.md for the conversion rules.")
    w("// mpi_name_ calls MPI_Name (so C profiling tools see Fortran calls too),")
    w("// pmpi_name_ calls PMPI_Name.  The C functions are referenced weakly so that")
    w("// one declared in mpi.h but not implemented yet does not break the link.")
    w("#include <mpi.h>")
    w("")
    w("#include <algorithm>")
    w("#include <cstddef>")
    w("")
    w("#include \"fortran/fortran.hpp\"")
    w("")
    w("static_assert(sizeof(MPI_Status) == %d * sizeof(MPI_Fint), \"MPI_STATUS_SIZE of mpif.h is wrong\");"
      % status_size)
    for field, index in sorted(status_fields.items(), key=lambda kv: kv[1]):
        if field.startswith("MPI_"):
            w("static_assert(offsetof(MPI_Status, %s) == %d * sizeof(MPI_Fint), \"%s of mpif.h is wrong\");"
              % (field, index - 1, field))
    w("static_assert(MPI_F_STATUS_SIZE == %d, \"fortran.hpp and mpif.h disagree on MPI_STATUS_SIZE\");"
      % status_size)
    w("")
    for b in gen:
        d = b.decl
        w("#pragma weak MPI_%s" % d.name)
        w("#pragma weak PMPI_%s" % d.name)
    w("")
    w("extern \"C\" {")
    for b in gen:
        d = b.decl
        w("")
        for prefix, callee in (("mpi", "MPI_"), ("pmpi", "PMPI_")):
            entry = "%s_%s_" % (prefix, d.lower)
            w("%s {" % b.signature(entry, d.ret))
            w(b.body(callee + d.name))
            w("}")
            w("#pragma weak %s_ = %s" % (entry, entry))
    w("")
    w("}  // extern \"C\"")
    w("")
    text = "\n".join(out)
    write_if_changed(path, text)


def write_if_changed(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    tmp = path + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# ---------------------------------------------------------------- mpif.h

def fortran_line(text):
    line = "      " + text
    if len(line) > 72:
        raise GenError("mpif.h line longer than 72 columns: %r" % line)
    return line


def write_mpif(path, header_path, text, status_size, status_fields):
    allconsts = parse_constants(text)
    consts = [c for c in allconsts if len(c) == 2]
    # Wide constants (INTEGER(KIND=MPI_OFFSET_KIND)...) come after the kinds.
    wide = [c for c in allconsts if len(c) == 3]
    extra = [("MPI_STATUS_SIZE", status_size)]
    extra += [(f, i) for f, i in sorted(status_fields.items(), key=lambda kv: kv[1]) if f.startswith("MPI_")]
    extra += [(k, C_SIZES[v]) for k, v in KINDS.items()]
    allc = consts + extra
    seen = {}
    for name in [c[0] for c in allc + wide]:
        key = name.upper()
        if key in seen:
            raise GenError("mpif.h: %s and %s are the same Fortran name" % (seen[key], name))
        seen[key] = name
    out = []
    w = out.append
    w("! mpif.h -- the MPI Fortran 77 interface of gridmpi.")
    w("! Generated by fortran/gen_fortran.py from %s: do not edit." % os.path.basename(header_path))
    w("! Valid as fixed-form (columns 7-72) and as free-form source.")
    w("!")
    for name, value in allc:
        w(fortran_line("INTEGER %s" % name))
        w(fortran_line("PARAMETER (%s=%d)" % (name, value)))
    for name, value, kind in wide:
        w(fortran_line("INTEGER(KIND=%s) %s" % (kind, name)))
        w(fortran_line("PARAMETER (%s=%d)" % (name, value)))
    w("! sentinels: the library recognises these variables by address")
    for decl, block, _ in SENTINELS:
        var = decl.split()[-1].split("(")[0]
        w(fortran_line(decl))
        w(fortran_line("COMMON /%s/ %s" % (block, var)))
        w(fortran_line("SAVE /%s/" % block))
    w("! functions")
    # REAL(KIND=8), not DOUBLE PRECISION: -fdefault-real-8 (NPB make.def
    # files use it) promotes DOUBLE PRECISION to 16 bytes, but the C
    # functions still return a double.
    w(fortran_line("REAL(KIND=8) MPI_WTIME, MPI_WTICK"))
    w(fortran_line("REAL(KIND=8) PMPI_WTIME, PMPI_WTICK"))
    w(fortran_line("EXTERNAL MPI_WTIME, MPI_WTICK, PMPI_WTIME, PMPI_WTICK"))
    w(fortran_line("INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD"))
    w(fortran_line("INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_DIFF"))
    w(fortran_line("EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF"))
    w("! predefined attribute callbacks")
    for cb in FORTRAN_CALLBACKS:
        w(fortran_line("EXTERNAL %s" % cb))
    write_if_changed(path, "\n".join(out) + "\n")


# ---------------------------------------------------------------- symbols

def fortran_symbols(decls):
    gen, hand, conly = classify(decls)
    names = []
    for d in [b.decl for b in gen] + hand:
        for prefix in ("mpi", "pmpi"):
            names.append("%s_%s_" % (prefix, d.lower))
            names.append("%s_%s__" % (prefix, d.lower))
    names += ["%s_" % cb.lower() for cb in FORTRAN_CALLBACKS]
    names += [s[2].split()[-1].split("[")[0] for s in SENTINELS]
    return sorted(names)


def check(lib, decls):
    p = subprocess.run(["nm", "-D", "--defined-only", lib], stdout=subprocess.PIPE, check=True, text=True)
    exported = {line.split()[-1] for line in p.stdout.splitlines() if line.strip()}
    missing = [s for s in fortran_symbols(decls) if s not in exported]
    gen, hand, conly = classify(decls)
    print("%d functions of mpi.h: %d with generated Fortran bindings, %d hand-written, %d C only"
          % (len(decls), len(gen), len(hand), len(conly)))
    if missing:
        print("missing Fortran symbols in %s: %s" % (lib, " ".join(missing)))
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--header", required=True, help="core/include/mpi.h")
    ap.add_argument("--bindings", help="write the generated C++ bindings here")
    ap.add_argument("--mpif", help="write mpif.h here")
    ap.add_argument("--symbols", action="store_true", help="print the Fortran symbols libmpi.so must export")
    ap.add_argument("--check", metavar="LIB", help="check that LIB exports them all")
    args = ap.parse_args()
    try:
        with open(args.header, encoding="utf-8") as f:
            text = f.read()
        decls = parse_decls(text)
        status_size, status_fields = status_layout(text)
        if args.bindings:
            write_bindings(args.bindings, args.header, decls, status_size, status_fields)
        if args.mpif:
            write_mpif(args.mpif, args.header, text, status_size, status_fields)
        if args.symbols:
            print("\n".join(fortran_symbols(decls)))
        if args.check:
            return check(args.check, decls)
    except GenError as e:
        print("gen_fortran.py: error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
