/* SPDX-License-Identifier: MIT */
/*
 * The transformation of `strobe cc --trace=bb[,mem]`, on the LLVM-C API:
 * cuts every basic block into segments (before each call that is not an
 * intrinsic, and after STROBE_BB_MAX_SEG_OPS recorded memory operations)
 * and makes each segment write its record of the block stream (format.h,
 * "Block streams") inline, through the thread's cursor (bbtrace.h):
 *
 *   head:  pos, limit, last = the function's copies (the cursor's fields
 *          at its start and after a call); if (pos + need > limit) refill
 *   refill: cursor = {pos, last}; p = strobe.bb.refill(need) (cold; the
 *          runtime's, or the scratch area without one)
 *   then:  id = idbase + local (idbase loaded once per function);
 *          delta = id - last; predicted: -32 <= delta < 32, a 1-byte NEAR
 *          head; else (cold) a 3-byte BLOCK head, bytes 1-2 stored now;
 *          q = p + head + mask bytes
 *   per recorded load/store before it runs (level MEM):
 *          d = addr - prev[k].addr; prev[k].addr = addr;
 *          predicted: d == prev[k].stride, mask |= 1 << k; else (cold)
 *          prev[k].stride = d, 8-byte store at q of |d| <= 32767 ?
 *          (uint16)d : addr << 16 | 0x8000, q += 2 or 8
 *   end:   (a loop segment running steadily: one more run of a REPEAT
 *          record, emit_repeat) store of the mask bytes; signal fence;
 *          store of the head's first byte at p; pos = q; last = id; the
 *          cursor itself only where other code reads it next (s->flush)
 *
 * One compare per segment and predicted branches: Contech's "inlined
 * instrumentation". Only zeros are stored beyond the record's end, and
 * its first byte last (format.h), so a killed process leaves whole
 * records. Operations whose address is a static offset of an earlier
 * recorded one of the segment, or a global's, are not recorded: the
 * module's table (struct strobe_bb_module, constant data registered by a
 * constructor) says how to compute them.
 *
 * Work is done in two passes: plan_module() decides the segments and
 * operations of the whole module without changing it (so the table sizes
 * are known), then emit_module() rewrites it.
 */
#ifndef _GNU_SOURCE /* strndup; LLVM_DEFINITIONS usually has it */
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

#include "cc/pass.h"
#include "common/bbtrace.h"
#include "common/format.h"

/* Block ids are 23 bits wide in the stream. */
#define MAX_BLOCKS ((1u << 23) - 1)
/* The size of struct strobe_bb_cursor's scratch area. */
#define SCRATCH_BYTES (sizeof(((struct strobe_bb_cursor *)0)->scratch))

/* Where an address comes from: root + off, or, when gep is set, the
 * address gep computes from root with its first nprefix indices (the
 * last non-constant one included) + off. Two operations whose addresses
 * have the same origin are a static offset apart: r[i].a and r[i].d. */
struct origin {
    LLVMValueRef root, gep;
    LLVMValueRef last; /* the last non-constant index without its constant term (index_base) */
    int nprefix;
    int64_t off;
};

/* One memory operation of the table. */
struct op {
    LLVMValueRef inst; /* the instruction whose address is recorded before it, NULL: elided */
    LLVMValueRef ptr;
    struct origin origin;
    uint32_t size, line;
    uint16_t column;
    uint8_t kind;
    int32_t base; /* STROBE_BB_RECORDED, STROBE_BB_CONSTANT, or op index in the segment */
    int64_t offset;
    uint32_t prev; /* recorded: index into the previous-address array */
};

/* One segment: instructions [start, end), the check before start, the
 * record's end before end (end may equal start: a block's lone
 * terminator). */
struct seg {
    LLVMValueRef start, end;
    uint32_t first_op, nops, recorded;
    uint32_t function, file, line;
    bool reload; /* a call may have moved the cursor since the previous segment */
    bool flush;  /* code after it may read the cursor itself (a call, a return, a reloading segment) */
    bool loop;   /* its block is all of it and branches back to itself */
};

struct name {
    const char *s; /* not NUL-terminated: LLVM's storage, alive until the module is done */
    size_t len;
};

struct plan {
    LLVMModuleRef m;
    LLVMContextRef ctx;
    LLVMTargetDataRef td;
    unsigned level;
    struct op *ops;
    uint32_t nops, cap_ops, nrecorded;
    struct seg *segs;
    uint32_t nsegs, cap_segs;
    /* names: function names (unique, appended as met) and file names
     * (deduplicated through fileidx, a short list: a module has few) */
    struct name *names;
    uint32_t nnames, cap_names;
    uint32_t *fileidx;
    uint32_t nfiles, cap_files;
    bool oom;
};

static void *grow(void *p, uint32_t *cap, uint32_t n, size_t size, bool *oom)
{
    if (n < *cap)
        return p;
    uint32_t c = *cap ? *cap * 2 : 64;
    void *q = realloc(p, (size_t)c * size);
    if (!q) {
        *oom = true;
        return NULL;
    }
    *cap = c;
    return q;
}

static uint32_t add_name(struct plan *pl, const char *s, size_t len)
{
    void *g = grow(pl->names, &pl->cap_names, pl->nnames, sizeof *pl->names, &pl->oom);
    if (!g)
        return 0;
    pl->names = g;
    pl->names[pl->nnames] = (struct name){s ? s : "", s ? len : 0};
    return pl->nnames++;
}

static uint32_t file_name(struct plan *pl, const char *s, size_t len)
{
    if (!s)
        len = 0;
    for (uint32_t i = 0; i < pl->nfiles; i++) {
        uint32_t k = pl->fileidx[i];
        if (pl->names[k].len == len && memcmp(pl->names[k].s, s ? s : "", len) == 0)
            return k;
    }
    void *g = grow(pl->fileidx, &pl->cap_files, pl->nfiles, sizeof *pl->fileidx, &pl->oom);
    if (!g)
        return 0;
    pl->fileidx = g;
    uint32_t k = add_name(pl, s, len);
    pl->fileidx[pl->nfiles++] = k;
    return k;
}

unsigned strobe__cc_level(const char *trace)
{
    if (!trace)
        return 0;
    if (strcmp(trace, "bb") == 0)
        return STROBE_BB_LEVEL_BB;
    if (strcmp(trace, "bb,mem") == 0)
        return STROBE_BB_LEVEL_MEM;
    return 0;
}

static bool has_fn_attr(LLVMValueRef fn, const char *name)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    return kind && LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, kind) != NULL;
}

/* A call that ends a segment: one that may run instrumented code (which
 * moves the cursor). Intrinsics and inline assembly do not, except the
 * coroutine intrinsics: a suspension point is lowered later into a
 * return and a resumption by another call. */
static bool is_cut(LLVMValueRef inst)
{
    LLVMOpcode op = LLVMGetInstructionOpcode(inst);
    if (op != LLVMCall && op != LLVMInvoke && op != LLVMCallBr)
        return false;
    LLVMValueRef callee = LLVMGetCalledValue(inst);
    if (LLVMIsAInlineAsm(callee))
        return false;
    if (!LLVMIsAFunction(callee) || LLVMGetIntrinsicID(callee) == 0)
        return true;
    size_t len;
    return strncmp(LLVMGetValueName2(callee, &len), "llvm.coro.", 10) == 0;
}

/* True when only bitcasts and a ret follow the tail call `call`, which
 * must stay right before them (musttail): no segment there. */
static bool ends_tail_call(LLVMValueRef call)
{
    if (!LLVMIsACallInst(call) || !LLVMIsTailCall(call))
        return false;
    LLVMValueRef i = LLVMGetNextInstruction(call);
    while (i && LLVMIsABitCastInst(i))
        i = LLVMGetNextInstruction(i);
    return i && LLVMIsAReturnInst(i);
}

static bool is_const_int(LLVMValueRef v, int64_t *out)
{
    if (!LLVMIsAConstantInt(v))
        return false;
    *out = LLVMConstIntGetSExtValue(v);
    return true;
}

static LLVMOpcode opcode_of(LLVMValueRef v)
{
    if (LLVMIsAInstruction(v))
        return LLVMGetInstructionOpcode(v);
    if (LLVMIsAConstantExpr(v))
        return LLVMGetConstOpcode(v);
    return 0;
}

/* Steps the GEP indices [from, to) of gep over *t (the type operand
 * `from` indexes), adding their byte offset to *off when off is given;
 * false at a non-constant index when off is given, or at a vector.
 * Operand 1 indexes over the source element type itself. */
static bool gep_walk(LLVMTargetDataRef td, LLVMValueRef gep, int from, int to, LLVMTypeRef *t, int64_t *off)
{
    for (int i = from; i < to; i++) {
        int64_t idx = 0;
        bool c = is_const_int(LLVMGetOperand(gep, (unsigned)i), &idx);
        if (!c && off)
            return false;
        if (i == 1) {
            /* *t stays */
        } else if (LLVMGetTypeKind(*t) == LLVMStructTypeKind) {
            if (off)
                *off += (int64_t)LLVMOffsetOfElement(td, *t, (unsigned)idx);
            *t = LLVMStructGetTypeAtIndex(*t, (unsigned)idx);
            continue;
        } else if (LLVMGetTypeKind(*t) == LLVMArrayTypeKind) {
            *t = LLVMGetElementType(*t);
        } else {
            return false; /* vectors: element sizes need not be bytes */
        }
        if (off)
            *off += idx * (int64_t)LLVMABISizeOfType(td, *t);
    }
    return true;
}

/* A lower bound of the trailing zero bits of integer v (at most 64),
 * from the arithmetic that made it. A phi already being looked at counts
 * as having them all: a loop's induction variable started at a multiple of
 * 2^k and stepped by multiples of 2^k keeps k zero bits, by induction.
 * At most TZ_VISITS values are looked at per question (*budget), so a
 * deep or widely shared expression costs the compiler nothing much. */
#define TZ_PHIS 8
#define TZ_VISITS 64
struct tz {
    LLVMValueRef phis[TZ_PHIS];
    unsigned nphis, budget;
};

static unsigned trailing_zeros(LLVMValueRef v, struct tz *z)
{
    int64_t c;
    if (is_const_int(v, &c))
        return c ? (unsigned)__builtin_ctzll((uint64_t)c) : 64;
    if (!LLVMIsAInstruction(v) || z->budget == 0)
        return 0;
    z->budget--;
    unsigned a, b;
    switch (LLVMGetInstructionOpcode(v)) {
    case LLVMAdd:
    case LLVMSub:
    case LLVMOr:
        a = trailing_zeros(LLVMGetOperand(v, 0), z);
        b = trailing_zeros(LLVMGetOperand(v, 1), z);
        return a < b ? a : b;
    case LLVMMul:
        a = trailing_zeros(LLVMGetOperand(v, 0), z) + trailing_zeros(LLVMGetOperand(v, 1), z);
        return a < 64 ? a : 64;
    case LLVMShl:
        if (!is_const_int(LLVMGetOperand(v, 1), &c) || c < 0 || c >= 64)
            return 0;
        a = trailing_zeros(LLVMGetOperand(v, 0), z) + (unsigned)c;
        return a < 64 ? a : 64;
    case LLVMPHI: {
        for (unsigned i = 0; i < z->nphis; i++)
            if (z->phis[i] == v)
                return 64;
        if (z->nphis == TZ_PHIS)
            return 0;
        z->phis[z->nphis++] = v;
        unsigned m = 64;
        for (unsigned i = 0; m && i < LLVMCountIncoming(v); i++) {
            a = trailing_zeros(LLVMGetIncomingValue(v, i), z);
            m = a < m ? a : m;
        }
        z->nphis--;
        return m;
    }
    default:
        return 0;
    }
}

/* An index v = base + c with c constant (an add, or an or of bits base
 * has clear, as loop unrolling writes i + 4 when i steps by 8): base and
 * *c; else v itself and 0. */
static LLVMValueRef index_base(LLVMValueRef v, int64_t *c)
{
    *c = 0;
    int64_t k;
    while (LLVMIsAInstruction(v) && is_const_int(LLVMGetOperand(v, 1), &k)) {
        LLVMOpcode op = LLVMGetInstructionOpcode(v);
        LLVMValueRef x = LLVMGetOperand(v, 0);
        struct tz z = {.budget = TZ_VISITS};
        if (op == LLVMAdd) {
            /* wrapping is harmless: addresses wrap the same way */
        } else if (op == LLVMOr && k > 0 &&
                   trailing_zeros(x, &z) >= 64u - (unsigned)__builtin_clzll((uint64_t)k)) {
            /* no carry: or is add */
        } else {
            break;
        }
        *c += k;
        v = x;
    }
    return v;
}

/* The bytes one step of index number i of gep scales by: the size of the
 * type it indexes over (0: a struct field or a vector, not scaled). */
static uint64_t index_scale(LLVMTargetDataRef td, LLVMValueRef gep, int i)
{
    LLVMTypeRef t = LLVMGetGEPSourceElementType(gep);
    if (!gep_walk(td, gep, 1, i, &t, NULL))
        return 0;
    if (i > 1) {
        if (LLVMGetTypeKind(t) != LLVMArrayTypeKind)
            return 0;
        t = LLVMGetElementType(t);
    }
    return LLVMABISizeOfType(td, t);
}

static struct origin origin_of(LLVMTargetDataRef td, LLVMValueRef p)
{
    struct origin o = {.root = p};
    for (;;) {
        LLVMOpcode op = opcode_of(o.root);
        if (op == LLVMBitCast) {
            o.root = LLVMGetOperand(o.root, 0);
            continue;
        }
        if (op != LLVMGetElementPtr)
            return o;
        LLVMValueRef gep = o.root;
        int n = LLVMGetNumOperands(gep), last = 0;
        for (int i = 1; i < n; i++) {
            int64_t idx;
            if (!is_const_int(LLVMGetOperand(gep, (unsigned)i), &idx))
                last = i;
        }
        LLVMTypeRef t = LLVMGetGEPSourceElementType(gep);
        int64_t off = 0;
        if (!gep_walk(td, gep, 1, last + 1, &t, NULL) || !gep_walk(td, gep, last + 1, n, &t, &off))
            return o;
        o.off += off;
        o.root = LLVMGetOperand(gep, 0);
        if (last > 0) {
            int64_t c;
            uint64_t scale = index_scale(td, gep, last);
            o.gep = gep;
            o.nprefix = last;
            o.last = LLVMGetOperand(gep, (unsigned)last);
            if (scale && LLVMGetTypeKind(LLVMTypeOf(o.last)) == LLVMIntegerTypeKind &&
                LLVMGetIntTypeWidth(LLVMTypeOf(o.last)) == 64) {
                o.last = index_base(o.last, &c);
                o.off += c * (int64_t)scale;
            }
            return o;
        }
    }
}

static bool same_origin(const struct origin *a, const struct origin *b)
{
    if (a->root != b->root || !a->gep != !b->gep)
        return false;
    if (!a->gep)
        return true;
    if (a->nprefix != b->nprefix ||
        LLVMGetGEPSourceElementType(a->gep) != LLVMGetGEPSourceElementType(b->gep))
        return false;
    for (int i = 1; i < a->nprefix; i++)
        if (LLVMGetOperand(a->gep, (unsigned)i) != LLVMGetOperand(b->gep, (unsigned)i))
            return false;
    return a->last == b->last;
}

/* Adds an operation of the segment s accessing ptr; inst is the
 * instruction it is recorded before. */
static void add_op(struct plan *pl, struct seg *s, LLVMValueRef inst, LLVMValueRef ptr, LLVMTypeRef type,
                   uint64_t size, uint8_t kind)
{
    LLVMTypeRef pt = LLVMTypeOf(ptr);
    if (LLVMGetTypeKind(pt) != LLVMPointerTypeKind || LLVMGetPointerAddressSpace(pt) != 0)
        return; /* x86 %fs/%gs-relative and other address spaces: not a linear address */
    if (type) {
        if (LLVMGetTypeKind(type) == LLVMScalableVectorTypeKind || !LLVMTypeIsSized(type))
            return;
        size = LLVMStoreSizeOfType(pl->td, type);
    }
    if (size == 0 || size > UINT32_MAX)
        return;
    void *g = grow(pl->ops, &pl->cap_ops, pl->nops, sizeof *pl->ops, &pl->oom);
    if (!g)
        return;
    pl->ops = g;
    struct op *o = &pl->ops[pl->nops];
    *o = (struct op){.ptr = ptr, .size = (uint32_t)size, .kind = kind, .base = STROBE_BB_RECORDED};
    o->line = LLVMGetDebugLocLine(inst);
    o->column = (uint16_t)(LLVMGetDebugLocColumn(inst) > UINT16_MAX ? 0 : LLVMGetDebugLocColumn(inst));
    o->origin = origin_of(pl->td, ptr);
    if (!o->origin.gep && LLVMIsAGlobalVariable(o->origin.root) && !LLVMIsThreadLocal(o->origin.root)) {
        o->base = STROBE_BB_CONSTANT;
        o->offset = o->origin.off;
    } else {
        for (uint32_t i = 0; i < s->nops; i++) {
            struct op *e = &pl->ops[s->first_op + i];
            if (e->base == STROBE_BB_RECORDED && same_origin(&e->origin, &o->origin)) {
                o->base = (int32_t)i;
                o->offset = o->origin.off - e->origin.off;
                break;
            }
        }
    }
    if (o->base == STROBE_BB_RECORDED) {
        o->inst = inst;
        o->prev = pl->nrecorded++;
        s->recorded++;
    }
    pl->nops++;
    s->nops++;
}

/* The memory operations of inst, added to s. */
static void plan_ops(struct plan *pl, struct seg *s, LLVMValueRef inst)
{
    switch (LLVMGetInstructionOpcode(inst)) {
    case LLVMLoad:
        add_op(pl, s, inst, LLVMGetOperand(inst, 0), LLVMTypeOf(inst), 0, STROBE_BB_LOAD);
        break;
    case LLVMStore:
        add_op(pl, s, inst, LLVMGetOperand(inst, 1), LLVMTypeOf(LLVMGetOperand(inst, 0)), 0, STROBE_BB_STORE);
        break;
    case LLVMAtomicRMW:
    case LLVMAtomicCmpXchg: {
        /* a read then a write of the same address: the write is elided */
        uint32_t n = s->nops;
        LLVMTypeRef t = LLVMTypeOf(LLVMGetOperand(inst, 1));
        add_op(pl, s, inst, LLVMGetOperand(inst, 0), t, 0, STROBE_BB_LOAD);
        if (s->nops > n)
            add_op(pl, s, inst, LLVMGetOperand(inst, 0), t, 0, STROBE_BB_STORE);
        break;
    }
    case LLVMCall: {
        /* memcpy/memmove/memset of a constant length: the destination
         * written (and the source read) as one access of that size */
        LLVMValueRef callee = LLVMGetCalledValue(inst);
        if (!LLVMIsAFunction(callee) || LLVMGetIntrinsicID(callee) == 0)
            break;
        size_t len;
        const char *name = LLVMGetValueName2(callee, &len);
        bool set = strncmp(name, "llvm.memset.", 12) == 0;
        bool copy = strncmp(name, "llvm.memcpy.", 12) == 0 || strncmp(name, "llvm.memmove.", 13) == 0;
        int64_t n;
        if ((!set && !copy) || !is_const_int(LLVMGetOperand(inst, 2), &n) || n <= 0)
            break;
        if (copy)
            add_op(pl, s, inst, LLVMGetOperand(inst, 1), NULL, (uint64_t)n, STROBE_BB_LOAD);
        add_op(pl, s, inst, LLVMGetOperand(inst, 0), NULL, (uint64_t)n, STROBE_BB_STORE);
        break;
    }
    default:
        break;
    }
}

/* True when bb is the successor of an invoke or a callbr: the call may
 * have moved the cursor. */
static bool after_call(LLVMBasicBlockRef bb)
{
    for (LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(bb)); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (LLVMIsAInvokeInst(user) ||
            (LLVMIsAInstruction(user) && LLVMGetInstructionOpcode(user) == LLVMCallBr))
            return true;
    }
    return false;
}

/* True when what bb runs first reads the cursor itself, not the
 * function's copies: its segment reloads (after an invoke), or it calls
 * before any segment (an empty segment is not kept), or it is not
 * instrumented at all. */
static bool reads_cursor_first(LLVMBasicBlockRef bb)
{
    if (after_call(bb))
        return true;
    LLVMValueRef i = LLVMGetFirstInstruction(bb);
    while (i && (LLVMIsAPHINode(i) || LLVMIsALandingPadInst(i)))
        i = LLVMGetNextInstruction(i);
    return !i || LLVMIsAFuncletPadInst(i) || LLVMIsACatchSwitchInst(i) ||
           (is_cut(i) && !LLVMIsATerminatorInst(i));
}

static struct seg *new_seg(struct plan *pl, LLVMValueRef start, uint32_t function, bool reload)
{
    void *g = grow(pl->segs, &pl->cap_segs, pl->nsegs, sizeof *pl->segs, &pl->oom);
    if (!g)
        return NULL;
    pl->segs = g;
    struct seg *s = &pl->segs[pl->nsegs];
    *s = (struct seg){.start = start, .first_op = pl->nops, .function = function, .reload = reload};
    return s;
}

/* Closes segment s before end: kept when it is not empty (end == start
 * only for a block's terminator). */
static void end_seg(struct plan *pl, struct seg *s, LLVMValueRef end, LLVMValueRef fn)
{
    s->end = end;
    s->flush = is_cut(end) || LLVMIsAReturnInst(end) || LLVMIsAResumeInst(end) || LLVMIsAUnreachableInst(end);
    if (LLVMIsATerminatorInst(end))
        for (unsigned i = 0; !s->flush && i < LLVMGetNumSuccessors(end); i++)
            s->flush = reads_cursor_first(LLVMGetSuccessor(end, i));
    if (s->start == end && !LLVMIsATerminatorInst(end))
        return;
    if (LLVMIsAUnreachableInst(end) && s->start == end)
        return; /* after a call that does not return */
    LLVMValueRef at = NULL;
    for (LLVMValueRef i = s->start;; i = LLVMGetNextInstruction(i)) {
        if (LLVMGetDebugLocLine(i)) {
            at = i;
            break;
        }
        if (i == end)
            break;
    }
    unsigned len = 0;
    const char *file = LLVMGetDebugLocFilename(at ? at : fn, &len);
    s->file = file_name(pl, file, len);
    s->line = at ? LLVMGetDebugLocLine(at) : 0;
    pl->nsegs++;
}

static void plan_block(struct plan *pl, LLVMBasicBlockRef bb, bool entry, uint32_t function, LLVMValueRef fn)
{
    LLVMValueRef i = LLVMGetFirstInstruction(bb);
    /* the check goes after phis, the exception pad, and (in the entry
     * block) the allocas, which must stay there to be static */
    while (i && (LLVMIsAPHINode(i) || LLVMIsALandingPadInst(i) || (entry && LLVMIsAAllocaInst(i))))
        i = LLVMGetNextInstruction(i);
    if (!i || LLVMIsAFuncletPadInst(i) || LLVMIsACatchSwitchInst(i))
        return; /* Windows exception handling: not instrumented */
    struct seg *s = new_seg(pl, i, function, entry || after_call(bb));
    bool whole = true; /* s started at the block's start */
    for (; i && s; i = LLVMGetNextInstruction(i)) {
        if (pl->nsegs >= MAX_BLOCKS)
            return;
        if (LLVMIsATerminatorInst(i) && !is_cut(i)) {
            /* the whole block, branching back to itself: a loop whose
             * every run is this one record, which REPEAT records count */
            for (unsigned k = 0; whole && !s->loop && k < LLVMGetNumSuccessors(i); k++)
                s->loop = LLVMGetSuccessor(i, k) == bb;
            end_seg(pl, s, i, fn);
            return;
        }
        if (is_cut(i)) {
            end_seg(pl, s, i, fn);
            if (LLVMIsATerminatorInst(i) || ends_tail_call(i))
                return; /* invoke, callbr: the successors start their own */
            s = new_seg(pl, LLVMGetNextInstruction(i), function, true);
            whole = false;
            continue;
        }
        if (pl->level == STROBE_BB_LEVEL_MEM)
            plan_ops(pl, s, i);
        if (s->recorded >= STROBE_BB_MAX_SEG_OPS) {
            LLVMValueRef next = LLVMGetNextInstruction(i);
            end_seg(pl, s, next, fn);
            s = new_seg(pl, next, function, false);
            whole = false;
        }
    }
}

static void plan_module(struct plan *pl)
{
    for (LLVMValueRef fn = LLVMGetFirstFunction(pl->m); fn && !pl->oom; fn = LLVMGetNextFunction(fn)) {
        if (LLVMIsDeclaration(fn) || LLVMGetLinkage(fn) == LLVMAvailableExternallyLinkage ||
            has_fn_attr(fn, "naked"))
            continue;
        size_t len;
        const char *name = LLVMGetValueName2(fn, &len);
        uint32_t function = add_name(pl, name, len);
        bool entry = true;
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb && !pl->oom;
             bb = LLVMGetNextBasicBlock(bb)) {
            plan_block(pl, bb, entry, function, fn);
            entry = false;
        }
    }
}

/* ---- emission ----------------------------------------------------------- */

struct emit {
    struct plan *pl;
    LLVMBuilderRef b;
    LLVMTypeRef i8, i16, i32, i64, p8, p64, cursor_ty;
    LLVMValueRef cursor, cursor_pos, cursor_limit, cursor_last;
    LLVMValueRef refill; /* strobe.bb.refill: the module's cold path */
    LLVMValueRef base;   /* strobe.bb.base: written by strobe_bb_register */
    LLVMValueRef prev;   /* strobe.bb.prev: {previous address, stride} per op, per thread */
    /* The current function's copies of cursor.pos, cursor.limit and
     * cursor.last_id: allocas, registers once promoted (plugin.cpp), so
     * that a segment does not load what the previous one stored (a
     * store-to-load forwarding delay per segment, the critical path of a
     * tight loop) */
    LLVMValueRef fn, pos_slot, limit_slot, last_slot;
    /* The repetition state (REPEAT records) of the function's loop
     * segments: whether the last record it wrote is an all-hit record of
     * segment last_id (or a REPEAT of one), the count byte of that REPEAT
     * (NULL: none yet) and its value. Reset wherever other code may have
     * written since (at the function's start, after a call, at a refill). */
    LLVMValueRef armed_slot, count_slot, runs_slot;
    LLVMValueRef idbase; /* the function's copy of the module's first id - 1 */
};

static LLVMValueRef c32(struct emit *e, uint64_t v)
{
    return LLVMConstInt(e->i32, v, 0);
}

static LLVMValueRef c64(struct emit *e, uint64_t v)
{
    return LLVMConstInt(e->i64, v, 0);
}

static LLVMValueRef field_ptr(struct emit *e, LLVMValueRef g, LLVMTypeRef ty, unsigned field)
{
    LLVMValueRef idx[2] = {c32(e, 0), c32(e, field)};
    return LLVMConstInBoundsGEP2(ty, g, idx, 2);
}

/* The thread's cursor: a weak definition, so that the program links and
 * runs without the runtime, and the executable's copy (exported by `strobe
 * cc` at link time) is the one libstrobe.so uses too. */
static void declare_cursor(struct emit *e)
{
    LLVMModuleRef m = e->pl->m;
    LLVMTypeRef f[5] = {e->p8, e->p8, e->i32, e->i32, LLVMArrayType(e->i8, SCRATCH_BYTES)};
    e->cursor_ty = LLVMStructTypeInContext(e->pl->ctx, f, 5, 0);
    LLVMValueRef g = LLVMGetNamedGlobal(m, "strobe_bb_cursor");
    if (!g) {
        g = LLVMAddGlobal(m, e->cursor_ty, "strobe_bb_cursor");
        LLVMSetInitializer(g, LLVMConstNull(e->cursor_ty));
        LLVMSetLinkage(g, LLVMWeakAnyLinkage);
        LLVMSetThreadLocal(g, 1);
        LLVMSetAlignment(g, 64);
    }
    LLVMSetThreadLocalMode(g, LLVMInitialExecTLSModel);
    e->cursor = LLVMConstBitCast(g, LLVMPointerType(e->cursor_ty, 0));
    e->cursor_pos = field_ptr(e, e->cursor, e->cursor_ty, 0);
    e->cursor_limit = field_ptr(e, e->cursor, e->cursor_ty, 1);
    e->cursor_last = field_ptr(e, e->cursor, e->cursor_ty, 2);
}

/* Positions b at the end of bb. The builder would give what it builds (and
 * what it moves) the debug location of the instruction it was last put
 * before, maybe in another function: the code at block ends has none. */
static void at_end(LLVMBuilderRef b, LLVMBasicBlockRef bb)
{
    LLVMPositionBuilderAtEnd(b, bb);
    LLVMSetCurrentDebugLocation2(b, NULL);
}

static LLVMValueRef extern_weak(struct emit *e, const char *name, LLVMTypeRef ty)
{
    LLVMValueRef f = LLVMGetNamedFunction(e->pl->m, name);
    if (!f) {
        f = LLVMAddFunction(e->pl->m, name, ty);
        LLVMSetLinkage(f, LLVMExternalWeakLinkage);
    }
    return LLVMConstBitCast(f, LLVMPointerType(ty, 0));
}

static void add_fn_attr(struct emit *e, LLVMValueRef fn, const char *name)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(e->pl->ctx, kind, 0));
}

static LLVMValueRef internal_fn(struct emit *e, const char *name, LLVMTypeRef ty)
{
    LLVMValueRef fn = LLVMAddFunction(e->pl->m, name, ty);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    add_fn_attr(e, fn, "nounwind");
    at_end(e->b, LLVMAppendBasicBlockInContext(e->pl->ctx, fn, "entry"));
    return fn;
}

/* strobe.bb.refill(need): the runtime's strobe_bb_refill when there is
 * one; else the cursor's scratch area, with the limit at its end, so
 * that the next refill comes only when it is full. */
static void define_refill(struct emit *e)
{
    LLVMTypeRef ty = LLVMFunctionType(e->p8, &e->i32, 1, 0);
    LLVMValueRef runtime = extern_weak(e, "strobe_bb_refill", ty);
    e->refill = internal_fn(e, "strobe.bb.refill", ty);
    add_fn_attr(e, e->refill, "noinline");
    add_fn_attr(e, e->refill, "cold");
    LLVMContextRef ctx = e->pl->ctx;
    LLVMBasicBlockRef call = LLVMAppendBasicBlockInContext(ctx, e->refill, "runtime");
    LLVMBasicBlockRef scratch = LLVMAppendBasicBlockInContext(ctx, e->refill, "scratch");
    LLVMBuildCondBr(e->b, LLVMBuildIsNotNull(e->b, runtime, ""), call, scratch);
    at_end(e->b, call);
    LLVMValueRef arg = LLVMGetParam(e->refill, 0);
    LLVMBuildRet(e->b, LLVMBuildCall2(e->b, ty, runtime, &arg, 1, ""));
    at_end(e->b, scratch);
    LLVMValueRef area = LLVMBuildBitCast(e->b, field_ptr(e, e->cursor, e->cursor_ty, 4), e->p8, "");
    LLVMValueRef end = c64(e, SCRATCH_BYTES);
    LLVMBuildStore(e->b, LLVMBuildGEP2(e->b, e->i8, area, &end, 1, ""), e->cursor_limit);
    LLVMBuildRet(e->b, area);
}

/* Marks the conditional branch br as taken (its first successor) nearly
 * always: block placement keeps the other successor out of the way. */
static void likely(struct emit *e, LLVMValueRef br)
{
    LLVMContextRef ctx = e->pl->ctx;
    LLVMMetadataRef md[3] = {LLVMMDStringInContext2(ctx, "branch_weights", 14),
                             LLVMValueAsMetadata(c32(e, 2000)), LLVMValueAsMetadata(c32(e, 1))};
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(ctx, "prof", 4),
                    LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, md, 3)));
}

/* Moves the instructions of bb before `at` into a new block inserted
 * before bb, which takes over bb's predecessors; returns it. bb keeps its
 * terminator, so the phis of its successors stay right. */
static LLVMBasicBlockRef split_before(struct emit *e, LLVMBasicBlockRef bb, LLVMValueRef at)
{
    LLVMBasicBlockRef head = LLVMInsertBasicBlockInContext(e->pl->ctx, bb, "");
    /* a block's RAUW also renames it in its successors' phis, which must
     * keep naming bb: done while bb has no terminator, thus no successors */
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    LLVMInstructionRemoveFromParent(term);
    LLVMReplaceAllUsesWith(LLVMBasicBlockAsValue(bb), LLVMBasicBlockAsValue(head));
    at_end(e->b, bb);
    LLVMInsertIntoBuilder(e->b, term);
    at_end(e->b, head);
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb), next; i != at; i = next) {
        next = LLVMGetNextInstruction(i);
        size_t len;
        const char *name = LLVMGetValueName2(i, &len);
        char *copy = strndup(name, len);
        LLVMInstructionRemoveFromParent(i);
        LLVMInsertIntoBuilderWithName(e->b, i, copy ? copy : "");
        free(copy);
    }
    return head;
}

/* No REPEAT may follow until the function writes all-hit records. */
static void disarm(struct emit *e)
{
    LLVMBuildStore(e->b, LLVMConstInt(e->i8, 0, 0), e->armed_slot);
    LLVMBuildStore(e->b, LLVMConstNull(e->p8), e->count_slot);
    LLVMBuildStore(e->b, LLVMConstInt(e->i8, 0, 0), e->runs_slot);
}

/* A segment's record ends: its masks, then its first byte b0 at p; the
 * next record goes at q. */
static void emit_record(struct emit *e, uint32_t nmask, LLVMValueRef mask, LLVMValueRef masks, LLVMValueRef p,
                        LLVMValueRef b0, LLVMValueRef q)
{
    LLVMBuilderRef b = e->b;
    if (nmask) {
        LLVMTypeRef mt = LLVMIntTypeInContext(e->pl->ctx, 8 * nmask);
        LLVMValueRef st = LLVMBuildStore(b, LLVMBuildTrunc(b, mask, mt, ""),
                                         LLVMBuildBitCast(b, masks, LLVMPointerType(mt, 0), ""));
        LLVMSetAlignment(st, 1);
    }
    LLVMBuildFence(b, LLVMAtomicOrderingRelease, 1, "");
    LLVMBuildStore(b, b0, p);
    LLVMBuildStore(b, q, e->pos_slot);
}

/* The end of loop segment s (the builder before s->end), whose record
 * starts at p: the record, or one more run of the REPEAT record that
 * follows it (opened at p when there is none, or when its count is full). */
static void emit_repeat(struct emit *e, struct seg *s, LLVMValueRef p, LLVMValueRef delta, LLVMValueRef mask,
                        LLVMValueRef masks, LLVMValueRef q, LLVMValueRef b0)
{
    LLVMBuilderRef b = e->b;
    LLVMContextRef ctx = e->pl->ctx;
    LLVMBasicBlockRef tail = LLVMGetInstructionParent(s->end);
    LLVMBasicBlockRef body = split_before(e, tail, s->end);
    LLVMBasicBlockRef record = LLVMInsertBasicBlockInContext(ctx, tail, "strobe.record");
    LLVMBasicBlockRef again = LLVMInsertBasicBlockInContext(ctx, tail, "strobe.again");
    LLVMBasicBlockRef count = LLVMInsertBasicBlockInContext(ctx, tail, "strobe.count");
    LLVMBasicBlockRef open = LLVMInsertBasicBlockInContext(ctx, tail, "strobe.repeat");
    LLVMValueRef zero8 = LLVMConstInt(e->i8, 0, 0), one8 = LLVMConstInt(e->i8, 1, 0), one = c64(e, 1);
    at_end(b, body);
    uint64_t all = s->recorded == 64 ? UINT64_MAX : ((uint64_t)1 << s->recorded) - 1;
    LLVMValueRef all_hit = LLVMBuildICmp(b, LLVMIntEQ, mask, c64(e, all), "");
    LLVMValueRef armed = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildLoad2(b, e->i8, e->armed_slot, ""), zero8, "");
    LLVMValueRef same = LLVMBuildICmp(b, LLVMIntEQ, delta, c32(e, 0), "");
    LLVMBuildCondBr(b, LLVMBuildAnd(b, LLVMBuildAnd(b, same, all_hit, ""), armed, ""), again, record);
    at_end(b, record);
    emit_record(e, (s->recorded + 7) / 8, mask, masks, p, b0, q);
    LLVMBuildStore(b, LLVMBuildZExt(b, all_hit, e->i8, ""), e->armed_slot);
    LLVMBuildStore(b, LLVMConstNull(e->p8), e->count_slot);
    LLVMBuildBr(b, tail);
    /* again: count in the REPEAT record there is, or open one at p */
    at_end(b, again);
    LLVMValueRef cnt = LLVMBuildLoad2(b, e->p8, e->count_slot, "");
    LLVMValueRef runs = LLVMBuildLoad2(b, e->i8, e->runs_slot, "");
    LLVMValueRef room = LLVMBuildAnd(b, LLVMBuildIsNotNull(b, cnt, ""),
                                     LLVMBuildICmp(b, LLVMIntNE, runs, LLVMConstInt(e->i8, 255, 0), ""), "");
    likely(e, LLVMBuildCondBr(b, room, count, open));
    at_end(b, count);
    LLVMValueRef more = LLVMBuildAdd(b, runs, one8, "");
    LLVMBuildStore(b, more, cnt);
    LLVMBuildStore(b, more, e->runs_slot);
    LLVMBuildBr(b, tail);
    at_end(b, open);
    LLVMValueRef at = LLVMBuildGEP2(b, e->i8, p, &one, 1, "");
    LLVMBuildStore(b, one8, at);
    LLVMBuildFence(b, LLVMAtomicOrderingRelease, 1, "");
    LLVMBuildStore(b, LLVMConstInt(e->i8, STROBE_BB_REPEAT, 0), p);
    LLVMBuildStore(b, at, e->count_slot);
    LLVMBuildStore(b, one8, e->runs_slot);
    LLVMValueRef two = c64(e, 2);
    LLVMBuildStore(b, LLVMBuildGEP2(b, e->i8, p, &two, 1, ""), e->pos_slot);
    LLVMBuildBr(b, tail);
    LLVMPositionBuilderBefore(b, s->end);
}

static void emit_seg(struct emit *e, struct seg *s, uint32_t local)
{
    struct plan *pl = e->pl;
    LLVMBuilderRef b = e->b;
    LLVMBasicBlockRef bb = LLVMGetInstructionParent(s->start);
    uint32_t nmask = (s->recorded + 7) / 8;
    uint32_t need = 3u + nmask + 8u * s->recorded + 8u;
    /* head: is there room for the longest record of the segment? */
    LLVMValueRef fn = LLVMGetBasicBlockParent(bb);
    if (fn != e->fn) {
        LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(fn)));
        LLVMSetCurrentDebugLocation2(b, NULL);
        e->fn = fn;
        e->pos_slot = LLVMBuildAlloca(b, e->p8, "strobe.pos.slot");
        e->limit_slot = LLVMBuildAlloca(b, e->p8, "strobe.limit.slot");
        e->last_slot = LLVMBuildAlloca(b, e->i32, "strobe.last.slot");
        e->armed_slot = LLVMBuildAlloca(b, e->i8, "strobe.armed.slot");
        e->count_slot = LLVMBuildAlloca(b, e->p8, "strobe.count.slot");
        e->runs_slot = LLVMBuildAlloca(b, e->i8, "strobe.runs.slot");
        /* set by the module's constructor, before any of its code runs */
        e->idbase = LLVMBuildLShr(b, LLVMBuildLoad2(b, e->i32, e->base, ""), c32(e, 1), "strobe.idbase");
    }
    LLVMBasicBlockRef head = split_before(e, bb, s->start);
    LLVMBasicBlockRef refill = LLVMInsertBasicBlockInContext(pl->ctx, bb, "strobe.refill");
    at_end(b, head);
    /* the cursor itself after a call or at the function's start (too when
     * the module has more blocks than ids: segments may be missing), else
     * the copies: the cursor and its copies are equal after every segment */
    LLVMValueRef pos, limit, last;
    if (s->reload || pl->nsegs >= MAX_BLOCKS) {
        pos = LLVMBuildLoad2(b, e->p8, e->cursor_pos, "strobe.pos");
        limit = LLVMBuildLoad2(b, e->p8, e->cursor_limit, "");
        LLVMBuildStore(b, limit, e->limit_slot);
        last = LLVMBuildLoad2(b, e->i32, e->cursor_last, "");
        disarm(e);
    } else {
        pos = LLVMBuildLoad2(b, e->p8, e->pos_slot, "strobe.pos");
        limit = LLVMBuildLoad2(b, e->p8, e->limit_slot, "");
        last = LLVMBuildLoad2(b, e->i32, e->last_slot, "");
    }
    LLVMValueRef n = c64(e, need);
    LLVMValueRef endp = LLVMBuildGEP2(b, e->i8, pos, &n, 1, "");
    at_end(b, refill);
    /* the runtime reads where the data ends in the cursor itself */
    LLVMBuildStore(b, pos, e->cursor_pos);
    LLVMBuildStore(b, last, e->cursor_last);
    LLVMValueRef arg = c32(e, need);
    LLVMValueRef fresh = LLVMBuildCall2(b, LLVMGlobalGetValueType(e->refill), e->refill, &arg, 1, "");
    LLVMBuildStore(b, LLVMBuildLoad2(b, e->p8, e->cursor_limit, ""), e->limit_slot);
    /* a new chunk starts with last_id 0, and no REPEAT reaches back into
     * the previous one */
    LLVMValueRef fresh_last = LLVMBuildLoad2(b, e->i32, e->cursor_last, "");
    disarm(e);
    LLVMBasicBlockRef pick = LLVMInsertBasicBlockInContext(pl->ctx, bb, "strobe.pick");
    LLVMBasicBlockRef far = LLVMInsertBasicBlockInContext(pl->ctx, bb, "strobe.far");
    LLVMBuildBr(b, pick);
    at_end(b, head);
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntUGT, endp, limit, ""), refill, pick);
    at_end(b, pick);
    LLVMValueRef p = LLVMBuildPhi(b, e->p8, "strobe.p");
    LLVMValueRef in_v[2] = {pos, fresh};
    LLVMBasicBlockRef in_b[2] = {head, refill};
    LLVMAddIncoming(p, in_v, in_b, 2);
    LLVMValueRef prev_id = LLVMBuildPhi(b, e->i32, "strobe.last");
    in_v[0] = last;
    in_v[1] = fresh_last;
    LLVMAddIncoming(prev_id, in_v, in_b, 2);

    /* the head: NEAR (1 byte) when the id is within -32..31 of the
     * previous one (the predicted path: a loop repeats its blocks), else
     * BLOCK (3 bytes), whose bytes 1-2 are stored now; the first byte at
     * the end. Beyond the record's end the chunk holds zeros already. */
    LLVMValueRef id = LLVMBuildAdd(b, e->idbase, c32(e, local), "strobe.id");
    LLVMValueRef delta = LLVMBuildSub(b, id, prev_id, "");
    LLVMValueRef near_id =
        LLVMBuildICmp(b, LLVMIntULT, LLVMBuildAdd(b, delta, c32(e, 32), ""), c32(e, 64), "");
    LLVMValueRef near_b0 =
        LLVMBuildTrunc(b, LLVMBuildOr(b, LLVMBuildShl(b, delta, c32(e, 2), ""), c32(e, 2), ""), e->i8, "");
    likely(e, LLVMBuildCondBr(b, near_id, bb, far));
    at_end(b, far);
    LLVMValueRef v = LLVMBuildOr(b, LLVMBuildShl(b, id, c32(e, 1), ""), c32(e, 1), "");
    LLVMValueRef one = c64(e, 1);
    LLVMValueRef st = LLVMBuildStore(
        b, LLVMBuildTrunc(b, LLVMBuildLShr(b, v, c32(e, 8), ""), e->i16, ""),
        LLVMBuildBitCast(b, LLVMBuildGEP2(b, e->i8, p, &one, 1, ""), LLVMPointerType(e->i16, 0), ""));
    LLVMSetAlignment(st, 1);
    LLVMValueRef far_b0 = LLVMBuildTrunc(b, v, e->i8, "");
    LLVMBuildBr(b, bb);
    LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(bb));
    in_b[0] = pick;
    in_b[1] = far;
    in_v[0] = near_b0;
    in_v[1] = far_b0;
    LLVMValueRef b0 = LLVMBuildPhi(b, e->i8, "strobe.b0");
    LLVMAddIncoming(b0, in_v, in_b, 2);
    in_v[0] = c64(e, 1);
    in_v[1] = c64(e, 3);
    LLVMValueRef head_len = LLVMBuildPhi(b, e->i64, "strobe.head");
    LLVMAddIncoming(head_len, in_v, in_b, 2);
    LLVMValueRef masks = LLVMBuildGEP2(b, e->i8, p, &head_len, 1, "");
    LLVMValueRef skip = c64(e, nmask);
    LLVMValueRef q = LLVMBuildGEP2(b, e->i8, masks, &skip, 1, "");

    /* the addresses, each recorded right before its operation: nothing
     * but a mask bit when it is the previous one plus the previous stride
     * (the predicted path: a loop's streams hit every time), else a field
     * (a cold block, out of the loop's way) */
    LLVMValueRef mask = c64(e, 0);
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->nops; i++) {
        struct op *o = &pl->ops[s->first_op + i];
        if (!o->inst)
            continue;
        LLVMBasicBlockRef at = LLVMGetInstructionParent(o->inst);
        LLVMBasicBlockRef pre = split_before(e, at, o->inst);
        LLVMBasicBlockRef miss = LLVMInsertBasicBlockInContext(pl->ctx, at, "strobe.miss");
        at_end(b, pre);
        LLVMValueRef idx[2] = {c64(e, 0), c64(e, 2 * (uint64_t)o->prev)};
        LLVMTypeRef prev_ty = LLVMGlobalGetValueType(e->prev);
        LLVMValueRef slot = LLVMConstInBoundsGEP2(prev_ty, e->prev, idx, 2);
        idx[1] = c64(e, 2 * (uint64_t)o->prev + 1);
        LLVMValueRef stride_slot = LLVMConstInBoundsGEP2(prev_ty, e->prev, idx, 2);
        LLVMValueRef addr = LLVMBuildPtrToInt(b, o->ptr, e->i64, "");
        LLVMValueRef before = LLVMBuildLoad2(b, e->i64, slot, "");
        LLVMValueRef stride = LLVMBuildLoad2(b, e->i64, stride_slot, "");
        LLVMBuildStore(b, addr, slot);
        LLVMValueRef d = LLVMBuildSub(b, addr, before, "");
        LLVMValueRef hit = LLVMBuildICmp(b, LLVMIntEQ, d, stride, "");
        LLVMValueRef mask_hit = LLVMBuildOr(b, mask, c64(e, (uint64_t)1 << k), "");
        likely(e, LLVMBuildCondBr(b, hit, at, miss));
        at_end(b, miss);
        LLVMBuildStore(b, d, stride_slot);
        /* |d| <= 32767: d + 32767 < 65535 unsigned (-32768 is the escape) */
        LLVMValueRef near =
            LLVMBuildICmp(b, LLVMIntULT, LLVMBuildAdd(b, d, c64(e, 32767), ""), c64(e, 65535), "");
        LLVMValueRef esc =
            LLVMBuildOr(b, LLVMBuildShl(b, addr, c64(e, 16), ""), c64(e, STROBE_BB_ESCAPE), "");
        LLVMValueRef field = LLVMBuildSelect(b, near, LLVMBuildAnd(b, d, c64(e, 0xffff), ""), esc, "");
        st = LLVMBuildStore(b, field, LLVMBuildBitCast(b, q, e->p64, ""));
        LLVMSetAlignment(st, 1);
        LLVMValueRef step = LLVMBuildSelect(b, near, c64(e, 2), c64(e, 8), "");
        LLVMValueRef q_miss = LLVMBuildGEP2(b, e->i8, q, &step, 1, "");
        LLVMBuildBr(b, at);
        LLVMPositionBuilderBefore(b, o->inst);
        in_v[0] = q;
        in_v[1] = q_miss;
        in_b[0] = pre;
        in_b[1] = miss;
        q = LLVMBuildPhi(b, e->p8, "strobe.q");
        LLVMAddIncoming(q, in_v, in_b, 2);
        in_v[0] = mask_hit;
        in_v[1] = mask;
        mask = LLVMBuildPhi(b, e->i64, "strobe.mask");
        LLVMAddIncoming(mask, in_v, in_b, 2);
        k++;
    }

    /* end: a loop's segment that runs again with every address at its
     * stride, right after such a record of it: one more run of a REPEAT
     * record; else the masks, then the head's first byte, after
     * everything else */
    LLVMPositionBuilderBefore(b, s->end);
    if (s->loop) {
        emit_repeat(e, s, p, delta, mask, masks, q, b0);
    } else {
        emit_record(e, nmask, mask, masks, p, b0, q);
    }
    LLVMBuildStore(b, id, e->last_slot);
    /* the cursor itself only where other code may read it next: the
     * function's copies stand for it in between */
    if (s->flush || pl->nsegs >= MAX_BLOCKS) {
        LLVMBuildStore(b, LLVMBuildLoad2(b, e->p8, e->pos_slot, ""), e->cursor_pos);
        LLVMBuildStore(b, id, e->cursor_last);
    }
}

static LLVMValueRef private_string(struct emit *e, const char *s, size_t len)
{
    LLVMValueRef init = LLVMConstStringInContext(e->pl->ctx, s, (unsigned)len, 0);
    LLVMValueRef g = LLVMAddGlobal(e->pl->m, LLVMTypeOf(init), "strobe.bb.str");
    LLVMSetInitializer(g, init);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    return LLVMConstBitCast(g, e->p8);
}

static LLVMValueRef const_global(struct emit *e, const char *name, LLVMValueRef init)
{
    LLVMValueRef g = LLVMAddGlobal(e->pl->m, LLVMTypeOf(init), name);
    LLVMSetInitializer(g, init);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetGlobalConstant(g, 1);
    return LLVMConstBitCast(g, e->p8);
}

/* The tables of struct strobe_bb_module, as constant data. */
static LLVMValueRef emit_tables(struct emit *e, LLVMValueRef reset)
{
    struct plan *pl = e->pl;
    LLVMContextRef ctx = pl->ctx;
    LLVMTypeRef opf[7] = {e->i32, e->i32, e->i16, e->i8, e->i8, e->i32, e->i64};
    LLVMTypeRef op_ty = LLVMStructTypeInContext(ctx, opf, 7, 0);
    LLVMTypeRef blf[6] = {e->i32, e->i32, e->i32, e->i32, e->i32, e->i32};
    LLVMTypeRef bl_ty = LLVMStructTypeInContext(ctx, blf, 6, 0);
    uint32_t most = pl->nops > pl->nsegs ? pl->nops : pl->nsegs;
    LLVMValueRef *v = malloc(sizeof *v * ((most > pl->nnames ? most : pl->nnames) + 1));
    if (!v)
        return NULL;
    for (uint32_t i = 0; i < pl->nops; i++) {
        struct op *o = &pl->ops[i];
        LLVMValueRef off = LLVMConstInt(e->i64, (uint64_t)o->offset, 1);
        if (o->base == STROBE_BB_CONSTANT)
            off = LLVMConstAdd(LLVMConstPtrToInt(o->origin.root, e->i64), off);
        LLVMValueRef f[7] = {c32(e, o->size),
                             c32(e, o->line),
                             LLVMConstInt(e->i16, o->column, 0),
                             LLVMConstInt(e->i8, o->kind, 0),
                             LLVMConstInt(e->i8, 0, 0),
                             LLVMConstInt(e->i32, (uint64_t)(int64_t)o->base, 1),
                             off};
        v[i] = LLVMConstNamedStruct(op_ty, f, 7);
    }
    LLVMValueRef ops = const_global(e, "strobe.bb.ops", LLVMConstArray(op_ty, v, pl->nops));
    for (uint32_t i = 0; i < pl->nsegs; i++) {
        struct seg *s = &pl->segs[i];
        LLVMValueRef f[6] = {c32(e, s->first_op), c32(e, s->nops), c32(e, s->recorded),
                             c32(e, s->function), c32(e, s->file), c32(e, s->line)};
        v[i] = LLVMConstNamedStruct(bl_ty, f, 6);
    }
    LLVMValueRef blocks = const_global(e, "strobe.bb.blocks", LLVMConstArray(bl_ty, v, pl->nsegs));
    for (uint32_t i = 0; i < pl->nnames; i++)
        v[i] = private_string(e, pl->names[i].s, pl->names[i].len);
    LLVMValueRef names = const_global(e, "strobe.bb.names", LLVMConstArray(e->p8, v, pl->nnames));
    free(v);
    size_t len;
    const char *src = LLVMGetSourceFileName(pl->m, &len);
    LLVMValueRef mf[12] = {c32(e, STROBE_BB_ABI),
                           c32(e, pl->level),
                           c32(e, pl->nsegs),
                           c32(e, pl->nops),
                           c32(e, pl->nnames),
                           c32(e, 0),
                           private_string(e, src, len),
                           blocks,
                           ops,
                           names,
                           LLVMConstBitCast(e->base, e->p8),
                           reset ? LLVMConstBitCast(reset, e->p8) : LLVMConstNull(e->p8)};
    return const_global(e, "strobe.bb.module", LLVMConstStructInContext(ctx, mf, 12, 0));
}

/* strobe.bb.reset: zeroes the calling thread's previous addresses and
 * strides. */
static LLVMValueRef define_reset(struct emit *e)
{
    LLVMValueRef fn =
        internal_fn(e, "strobe.bb.reset", LLVMFunctionType(LLVMVoidTypeInContext(e->pl->ctx), NULL, 0, 0));
    LLVMBuildMemSet(e->b, LLVMConstBitCast(e->prev, e->p8), LLVMConstInt(e->i8, 0, 0),
                    c64(e, (uint64_t)e->pl->nrecorded * 16), 8);
    LLVMBuildRetVoid(e->b);
    return fn;
}

/* The constructor: strobe_bb_register(&module) when the runtime is there.
 * Priority 1, before the program's own constructors, whose code may
 * already run instrumented segments of this module. */
static void define_ctor(struct emit *e, LLVMValueRef module)
{
    LLVMContextRef ctx = e->pl->ctx;
    LLVMTypeRef void_ty = LLVMVoidTypeInContext(ctx);
    LLVMTypeRef reg_ty = LLVMFunctionType(void_ty, &e->p8, 1, 0);
    LLVMValueRef reg = extern_weak(e, "strobe_bb_register", reg_ty);
    LLVMTypeRef ctor_ty = LLVMFunctionType(void_ty, NULL, 0, 0);
    LLVMValueRef ctor = internal_fn(e, "strobe.bb.ctor", ctor_ty);
    LLVMBasicBlockRef call = LLVMAppendBasicBlockInContext(ctx, ctor, "register");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(ctx, ctor, "done");
    LLVMBuildCondBr(e->b, LLVMBuildIsNotNull(e->b, reg, ""), call, done);
    at_end(e->b, call);
    LLVMBuildCall2(e->b, reg_ty, reg, &module, 1, "");
    LLVMBuildBr(e->b, done);
    at_end(e->b, done);
    LLVMBuildRetVoid(e->b);

    /* llvm.global_ctors gets one more entry: the array is rebuilt */
    LLVMTypeRef ef[3] = {e->i32, LLVMPointerType(ctor_ty, 0), e->p8};
    LLVMTypeRef entry_ty = LLVMStructTypeInContext(ctx, ef, 3, 0);
    LLVMValueRef old = LLVMGetNamedGlobal(e->pl->m, "llvm.global_ctors");
    unsigned n = 0;
    if (old) {
        entry_ty = LLVMGetElementType(LLVMGlobalGetValueType(old));
        n = (unsigned)LLVMGetArrayLength(LLVMGlobalGetValueType(old));
    }
    LLVMValueRef *v = malloc(sizeof *v * (n + 1));
    if (!v)
        return;
    for (unsigned i = 0; i < n; i++)
        v[i] = LLVMGetOperand(LLVMGetInitializer(old), i);
    LLVMValueRef f[3] = {c32(e, 1), ctor, LLVMConstNull(e->p8)};
    v[n] = LLVMConstNamedStruct(entry_ty, f, LLVMCountStructElementTypes(entry_ty));
    LLVMValueRef init = LLVMConstArray(entry_ty, v, n + 1);
    free(v);
    if (old)
        LLVMDeleteGlobal(old);
    LLVMValueRef g = LLVMAddGlobal(e->pl->m, LLVMTypeOf(init), "llvm.global_ctors");
    LLVMSetInitializer(g, init);
    LLVMSetLinkage(g, LLVMAppendingLinkage);
}

static void emit_module(struct emit *e)
{
    struct plan *pl = e->pl;
    LLVMContextRef ctx = pl->ctx;
    e->i8 = LLVMInt8TypeInContext(ctx);
    e->i16 = LLVMInt16TypeInContext(ctx);
    e->i32 = LLVMInt32TypeInContext(ctx);
    e->i64 = LLVMInt64TypeInContext(ctx);
    e->p8 = LLVMPointerType(e->i8, 0);
    e->p64 = LLVMPointerType(e->i64, 0);
    declare_cursor(e);
    define_refill(e);
    LLVMValueRef base = LLVMAddGlobal(pl->m, e->i32, "strobe.bb.base");
    LLVMSetInitializer(base, c32(e, 0));
    LLVMSetLinkage(base, LLVMInternalLinkage);
    e->base = base;
    LLVMValueRef reset = NULL;
    if (pl->level == STROBE_BB_LEVEL_MEM) {
        LLVMTypeRef ty = LLVMArrayType(e->i64, 2 * pl->nrecorded);
        e->prev = LLVMAddGlobal(pl->m, ty, "strobe.bb.prev");
        LLVMSetInitializer(e->prev, LLVMConstNull(ty));
        LLVMSetLinkage(e->prev, LLVMInternalLinkage);
        LLVMSetThreadLocal(e->prev, 1);
        LLVMSetThreadLocalMode(e->prev, LLVMInitialExecTLSModel);
        reset = define_reset(e);
    }
    for (uint32_t i = 0; i < pl->nsegs; i++)
        emit_seg(e, &pl->segs[i], i + 1);
    LLVMValueRef module = emit_tables(e, reset);
    if (module)
        define_ctor(e, module);
}

int strobe__cc_instrument(LLVMModuleRef m, unsigned level)
{
    if (LLVMGetNamedGlobal(m, "strobe.bb.module"))
        return 0; /* instrumented already (e.g. the plugin given twice) */
    struct plan pl = {
        .m = m, .ctx = LLVMGetModuleContext(m), .td = LLVMGetModuleDataLayout(m), .level = level};
    plan_module(&pl);
    int changed = 0;
    if (pl.oom) {
        size_t len;
        fprintf(stderr, "strobe-cc: out of memory: %s not instrumented\n", LLVMGetSourceFileName(m, &len));
    } else if (pl.nsegs > 0) {
        struct emit e = {.pl = &pl, .b = LLVMCreateBuilderInContext(pl.ctx)};
        emit_module(&e);
        LLVMDisposeBuilder(e.b);
        changed = 1;
    }
    free(pl.ops);
    free(pl.segs);
    free(pl.names);
    free(pl.fileidx);
    return changed;
}
