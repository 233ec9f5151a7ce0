#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates the MPI_* wrappers of libstrobe-mpi.so from the mpi.h it is built against.

The whole C interface the header declares is wrapped: every MPI_X returning
int that has a PMPI_X (point-to-point, collectives with their nonblocking,
persistent, neighborhood, v and w variants, Test/Wait*, one-sided, I/O,
MPI_T, ...), so no call the application makes escapes the trace. Each
wrapper enters the region of kind MPI named by the function (its own
address, resolved offline to "MPI_X"), calls PMPI_X, and leaves. For the
calls whose parameters matter, HOOKS below add code before the call (PRE)
and after a successful one (POST): message records, request matching,
communicator definitions, and the live counters of docs/mpi-profiler.md.
The hooks name the parameters by position ({0}, {1}, ...: the order of the
MPI standard), because Open MPI and MPICH name them differently.

The prototypes come from the preprocessed header (the compiler runs
`cc -E` with the MPI include flags), so what is wrapped is exactly what
the installed MPI declares. Functions that are not wrapped: the ones that
return something else than an error code (MPI_Wtime, MPI_Wtick,
MPI_Aint_add/diff), the conversions between the C and Fortran bindings
(*_f2c, *_c2f, MPI_Status_f082c, ...) and the variadic MPI_Pcontrol.
docs/mpi.md lists them.

usage: gen_wrappers.py OUT.c CC [CFLAGS...]
"""
import re
import subprocess
import sys

SKIP = {"MPI_Pcontrol"}  # variadic: cannot forward its arguments
# conversions between the C and Fortran bindings (MPICH declares the
# mpi_f08 ones in mpi.h but defines them in its Fortran library)
CONVERSION = re.compile(r"_(f2c|c2f|f082c|c2f08|f2f08|f082f)$")

# bytes of count x datatype; sizes only where the argument is significant
B = "strobe__mpi_bytes"
ROOT = "strobe__mpi_is_root({root}, {comm})"
N = "strobe__mpi_comm_size({comm})"


def coll(code, root, sent, recvd, comm):
    """A blocking collective: COLL_BEGIN before, COLL_END after."""
    root_expr = root if root else "-1"
    return ("strobe__mpi_coll_begin();",
            f"strobe__mpi_coll_end(STROBE_MPI_COLL_{code}, {comm}, {root_expr}, {sent}, {recvd});")


def count(fn, bytes_expr="0"):
    return f"STROBE__MPI_COUNT(STROBE__MPI_{fn}, {bytes_expr});"


STATUS = "MPI_Status st_; if ({s} == MPI_STATUS_IGNORE) {s} = &st_;"

HOOKS = {
    # ---- setup and teardown
    "MPI_Init": ("", "strobe__mpi_started();" + count("INIT")),
    "MPI_Init_thread": ("", "strobe__mpi_started();" + count("INIT_THREAD")),
    "MPI_Finalize": ("STROBE__MPI_COUNT(STROBE__MPI_FINALIZE, 0); strobe__mpi_stopping();", ""),
    # ---- blocking point-to-point: a send is recorded before it runs (so a
    # trace never shows a message arriving before it left), a receive with
    # the message its status names
    "MPI_Send": ("strobe__mpi_send({1}, {2}, {3}, {4}, {5});", count("SEND", f"{B}({{1}}, {{2}})")),
    "MPI_Ssend": ("strobe__mpi_send({1}, {2}, {3}, {4}, {5});", count("SSEND", f"{B}({{1}}, {{2}})")),
    "MPI_Bsend": ("strobe__mpi_send({1}, {2}, {3}, {4}, {5});", count("BSEND", f"{B}({{1}}, {{2}})")),
    "MPI_Rsend": ("strobe__mpi_send({1}, {2}, {3}, {4}, {5});", count("RSEND", f"{B}({{1}}, {{2}})")),
    # a receive counts the posted buffer (docs/mpi-profiler.md), records the message
    "MPI_Recv": (STATUS.format(s="{6}"), "strobe__mpi_recv({5}, {6});" + count("RECV", f"{B}({{1}}, {{2}})")),
    "MPI_Sendrecv": (STATUS.format(s="{11}") + " strobe__mpi_send({1}, {2}, {3}, {4}, {10});",
                     "strobe__mpi_recv({10}, {11});" + count("SENDRECV", f"{B}({{1}}, {{2}})")),
    "MPI_Sendrecv_replace": (STATUS.format(s="{8}") + " strobe__mpi_send({1}, {2}, {3}, {4}, {7});",
                             "strobe__mpi_recv({7}, {8});"),
    # ---- nonblocking and persistent: the request remembers its message
    "MPI_Isend": ("", "strobe__mpi_isend({1}, {2}, {3}, {4}, {5}, *{6}, 0);" + count("ISEND", f"{B}({{1}}, {{2}})")),
    "MPI_Issend": ("", "strobe__mpi_isend({1}, {2}, {3}, {4}, {5}, *{6}, 0);" + count("ISSEND", f"{B}({{1}}, {{2}})")),
    "MPI_Ibsend": ("", "strobe__mpi_isend({1}, {2}, {3}, {4}, {5}, *{6}, 0);"),
    "MPI_Irsend": ("", "strobe__mpi_isend({1}, {2}, {3}, {4}, {5}, *{6}, 0);"),
    "MPI_Irecv": ("", "strobe__mpi_irecv({1}, {2}, {3}, {4}, {5}, *{6}, 0);" + count("IRECV", f"{B}({{1}}, {{2}})")),
    "MPI_Send_init": ("", "strobe__mpi_isend({1}, {2}, {3}, {4}, {5}, *{6}, 1);"),
    "MPI_Ssend_init": ("", "strobe__mpi_isend({1}, {2}, {3}, {4}, {5}, *{6}, 1);"),
    "MPI_Bsend_init": ("", "strobe__mpi_isend({1}, {2}, {3}, {4}, {5}, *{6}, 1);"),
    "MPI_Rsend_init": ("", "strobe__mpi_isend({1}, {2}, {3}, {4}, {5}, *{6}, 1);"),
    "MPI_Recv_init": ("", "strobe__mpi_irecv({1}, {2}, {3}, {4}, {5}, *{6}, 1);"),
    "MPI_Start": ("", "strobe__mpi_start(1, {0});"),
    "MPI_Startall": ("", "strobe__mpi_start({0}, {1});"),
    "MPI_Request_free": ("MPI_Request r_ = *{0};", "strobe__mpi_request_freed(r_);"),
    # ---- completions: requests saved before the call, matched after it
    "MPI_Wait": ("struct strobe__mpi_saved s_; {1} = strobe__mpi_save(&s_, 1, {0}, {1}, 0);",
                 "strobe__mpi_completed(&s_, 0);" + count("WAIT")),
    "MPI_Test": ("struct strobe__mpi_saved s_; {2} = strobe__mpi_save(&s_, 1, {0}, {2}, 0);",
                 "if (*{1}) strobe__mpi_completed(&s_, 0);"),
    "MPI_Waitall": ("struct strobe__mpi_saved s_; {2} = strobe__mpi_save(&s_, {0}, {1}, {2}, 1);",
                    "strobe__mpi_completed_all(&s_);" + count("WAITALL")),
    "MPI_Testall": ("struct strobe__mpi_saved s_; {3} = strobe__mpi_save(&s_, {0}, {1}, {3}, 1);",
                    "if (*{2}) strobe__mpi_completed_all(&s_);"),
    "MPI_Waitany": ("struct strobe__mpi_saved s_; {3} = strobe__mpi_save(&s_, {0}, {1}, {3}, 0);",
                    "strobe__mpi_completed_any(&s_, *{2});"),
    "MPI_Testany": ("struct strobe__mpi_saved s_; {4} = strobe__mpi_save(&s_, {0}, {1}, {4}, 0);",
                    "if (*{3}) strobe__mpi_completed_any(&s_, *{2});"),
    "MPI_Waitsome": ("struct strobe__mpi_saved s_; {4} = strobe__mpi_save(&s_, {0}, {1}, {4}, 1);",
                     "strobe__mpi_completed_some(&s_, *{2}, {3});"),
    "MPI_Testsome": ("struct strobe__mpi_saved s_; {4} = strobe__mpi_save(&s_, {0}, {1}, {4}, 1);",
                     "strobe__mpi_completed_some(&s_, *{2}, {3});"),
    # ---- communicators: an id and a definition for each new one
    "MPI_Comm_dup": ("", "strobe__mpi_comm_created({1});"),
    "MPI_Comm_dup_with_info": ("", "strobe__mpi_comm_created({2});"),
    "MPI_Comm_create": ("", "strobe__mpi_comm_created({2});"),
    "MPI_Comm_create_group": ("", "strobe__mpi_comm_created({3});"),
    "MPI_Comm_split": ("", "strobe__mpi_comm_created({3});"),
    "MPI_Comm_split_type": ("", "strobe__mpi_comm_created({4});"),
    "MPI_Cart_create": ("", "strobe__mpi_comm_created({5});"),
    "MPI_Cart_sub": ("", "strobe__mpi_comm_created({2});"),
    "MPI_Graph_create": ("", "strobe__mpi_comm_created({5});"),
    "MPI_Dist_graph_create": ("", "strobe__mpi_comm_created({8});"),
    "MPI_Dist_graph_create_adjacent": ("", "strobe__mpi_comm_created({9});"),
    "MPI_Intercomm_create": ("", "strobe__mpi_comm_created({5});"),
    "MPI_Intercomm_merge": ("", "strobe__mpi_comm_created({2});"),
    "MPI_Comm_free": ("MPI_Comm c_ = *{0};", "strobe__mpi_comm_freed(c_);"),
    "MPI_Comm_disconnect": ("MPI_Comm c_ = *{0};", "strobe__mpi_comm_freed(c_);"),
}


def add_coll(name, code, root, sent, recvd, comm, counted=None):
    pre, post = coll(code, root, sent, recvd, comm)
    if counted:
        post += count(*counted)
    HOOKS[name] = (pre, post)


# Bytes a rank sends and receives in a collective (docs/mpi.md): only
# arguments significant at this rank are looked at; MPI_IN_PLACE means the
# rank's own block stays where it is (nothing sent for it).
add_coll("MPI_Barrier", "BARRIER", None, "0", "0", "{0}", ("BARRIER",))
add_coll("MPI_Bcast", "BCAST", "{3}", f"({ROOT.format(root='{3}', comm='{4}')} ? {B}({{1}}, {{2}}) : 0)",
         f"({ROOT.format(root='{3}', comm='{4}')} ? 0 : {B}({{1}}, {{2}}))", "{4}", ("BCAST", f"{B}({{1}}, {{2}})"))
add_coll("MPI_Reduce", "REDUCE", "{5}", f"{B}({{2}}, {{3}})",
         f"({ROOT.format(root='{5}', comm='{6}')} ? {B}({{2}}, {{3}}) : 0)", "{6}", ("REDUCE", f"{B}({{2}}, {{3}})"))
add_coll("MPI_Allreduce", "ALLREDUCE", None, f"{B}({{2}}, {{3}})", f"{B}({{2}}, {{3}})", "{5}",
         ("ALLREDUCE", f"{B}({{2}}, {{3}})"))
add_coll("MPI_Gather", "GATHER", "{6}", f"({{0}} == MPI_IN_PLACE ? 0 : {B}({{1}}, {{2}}))",
         f"({ROOT.format(root='{6}', comm='{7}')} ? {N.format(comm='{7}')} * {B}({{4}}, {{5}}) : 0)", "{7}",
         ("GATHER", f"({{0}} == MPI_IN_PLACE ? {B}({{4}}, {{5}}) : {B}({{1}}, {{2}}))"))
add_coll("MPI_Gatherv", "GATHERV", "{7}", f"({{0}} == MPI_IN_PLACE ? 0 : {B}({{1}}, {{2}}))",
         f"({ROOT.format(root='{7}', comm='{8}')} ? strobe__mpi_vbytes({{4}}, {{6}}, {{8}}) : 0)", "{8}")
add_coll("MPI_Scatter", "SCATTER", "{6}",
         f"({ROOT.format(root='{6}', comm='{7}')} ? {N.format(comm='{7}')} * {B}({{1}}, {{2}}) : 0)",
         f"({{3}} == MPI_IN_PLACE ? 0 : {B}({{4}}, {{5}}))", "{7}",
         ("SCATTER", f"({{3}} == MPI_IN_PLACE ? {B}({{1}}, {{2}}) : {B}({{4}}, {{5}}))"))
add_coll("MPI_Scatterv", "SCATTERV", "{7}",
         f"({ROOT.format(root='{7}', comm='{8}')} ? strobe__mpi_vbytes({{1}}, {{3}}, {{8}}) : 0)",
         f"({{4}} == MPI_IN_PLACE ? 0 : {B}({{5}}, {{6}}))", "{8}")
add_coll("MPI_Allgather", "ALLGATHER", None, f"({{0}} == MPI_IN_PLACE ? 0 : {B}({{1}}, {{2}}))",
         f"{N.format(comm='{6}')} * {B}({{4}}, {{5}})", "{6}",
         ("ALLGATHER", f"({{0}} == MPI_IN_PLACE ? {B}({{4}}, {{5}}) : {B}({{1}}, {{2}}))"))
add_coll("MPI_Allgatherv", "ALLGATHERV", None, f"({{0}} == MPI_IN_PLACE ? 0 : {B}({{1}}, {{2}}))",
         "strobe__mpi_vbytes({4}, {6}, {7})", "{7}")
add_coll("MPI_Alltoall", "ALLTOALL", None,
         f"({{0}} == MPI_IN_PLACE ? 0 : {N.format(comm='{6}')} * {B}({{1}}, {{2}}))",
         f"{N.format(comm='{6}')} * {B}({{4}}, {{5}})", "{6}",
         ("ALLTOALL", f"({{0}} == MPI_IN_PLACE ? {B}({{4}}, {{5}}) : {B}({{1}}, {{2}}))"))
add_coll("MPI_Alltoallv", "ALLTOALLV", None, "({0} == MPI_IN_PLACE ? 0 : strobe__mpi_vbytes({1}, {3}, {8}))",
         "strobe__mpi_vbytes({5}, {7}, {8})", "{8}")
add_coll("MPI_Alltoallw", "ALLTOALLW", None, "0", "0", "{8}")
add_coll("MPI_Reduce_scatter_block", "REDUCE_SCATTER_BLOCK", None,
         f"({{0}} == MPI_IN_PLACE ? 0 : {N.format(comm='{5}')} * {B}({{2}}, {{3}}))", f"{B}({{2}}, {{3}})", "{5}")
add_coll("MPI_Reduce_scatter", "REDUCE_SCATTER", None,
         "({0} == MPI_IN_PLACE ? 0 : strobe__mpi_vbytes({2}, {3}, {5}))", "strobe__mpi_rank_bytes({2}, {3}, {5})",
         "{5}")
add_coll("MPI_Scan", "SCAN", None, f"{B}({{2}}, {{3}})", f"{B}({{2}}, {{3}})", "{5}")
add_coll("MPI_Exscan", "EXSCAN", None, f"{B}({{2}}, {{3}})", f"{B}({{2}}, {{3}})", "{5}")

HEADER = """/* SPDX-License-Identifier: MIT */
/* GENERATED by src/adapters/mpi/gen_wrappers.py from the mpi.h this
 * library is built against: do not edit. {n} wrappers. */
#include <mpi.h>
#include <stdint.h>

#include "adapters/mpi/pmpi.h"
#include "adapters/mpi/trace.h"

/* deprecated functions are part of the interface programs call */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

"""


def strip_attributes(text):
    """Removes __attribute__((...)) and __asm__(...) groups."""
    out = []
    i = 0
    while i < len(text):
        m = re.compile(r"__attribute__\s*\(|__asm__\s*\(").match(text, i)
        if not m:
            out.append(text[i])
            i += 1
            continue
        depth = 0
        j = m.end() - 1
        while j < len(text):
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        i = j + 1
    return "".join(out)


def split_params(params):
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def param_name(p):
    m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*$", p)
    if not m:
        return None
    name = m.group(1)
    # a parameter without a name ends in its type
    if name in ("int", "char", "void", "double", "float", "long", "short", "unsigned", "const") or \
            name.startswith("MPI_") or p.rstrip().endswith("*"):
        return None
    return name


def prototypes(cc, cflags):
    src = subprocess.run([cc, "-E", "-P", "-x", "c", "-", *cflags], input="#include <mpi.h>\n",
                         capture_output=True, text=True, check=True).stdout
    decls = {}
    for decl in strip_attributes(re.sub(r"\s+", " ", src)).split(";"):
        m = re.match(r"^\s*(?:extern\s+)?(\w+)\s+(P?MPI_\w+)\s*\((.*)\)\s*$", decl)
        if m:
            decls[m.group(2)] = (m.group(1), m.group(3).strip())
    return decls


def wrapper(name, params):
    plist = [] if params in ("", "void") else split_params(params)
    names = [param_name(p) for p in plist]
    if None in names or any("..." in p for p in plist):
        return None
    pre, post = HOOKS.get(name, ("", ""))
    pre, post = pre.format(*names), post.format(*names)
    call = f"P{name}({', '.join(names)})"
    body = [f"WRAPPER int {name}({params if plist else 'void'})", "{",
            f"    strobe__mpi_enter((uintptr_t){name});"]
    if pre:
        body.append(f"    {pre}")
    body.append(f"    int rc = {call};")
    if post:
        body.append(f"    if (rc == MPI_SUCCESS) {{ {post} }}")
    if "strobe__mpi_save(" in pre:
        body.append("    strobe__mpi_saved_free(&s_);")
    body += [f"    strobe__mpi_leave((uintptr_t){name});", "    return rc;", "}", ""]
    return "\n".join(body)


def main():
    out, cc, cflags = sys.argv[1], sys.argv[2], sys.argv[3:]
    decls = prototypes(cc, cflags)
    missing = [h for h in HOOKS if h not in decls]
    if missing:
        sys.exit(f"gen_wrappers.py: mpi.h lacks {', '.join(missing)}")
    wrappers = []
    for name in sorted(decls):
        if not name.startswith("MPI_") or name in SKIP or CONVERSION.search(name) or "P" + name not in decls:
            continue
        ret, params = decls[name]
        if ret != "int":
            continue
        w = wrapper(name, params)
        if w is None:
            sys.exit(f"gen_wrappers.py: {name}: cannot name every parameter of ({params})")
        wrappers.append(w)
    with open(out, "w") as f:
        f.write(HEADER.format(n=len(wrappers)))
        f.write("\n".join(wrappers))


if __name__ == "__main__":
    main()
