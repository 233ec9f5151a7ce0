// SPDX-License-Identifier: MIT
/*
 * The blame analysis of `strobe cc` (docs/blame.md): for each statement of
 * a module, the program variables whose value it contributes to, after
 * Zhang & Hollingsworth's "data-centric" blame (seed 003), for C and C++.
 *
 * It runs on clang's IR before any optimization (plugin.cpp registers it
 * at the pipeline's start), where every named variable is an alloca with
 * an llvm.dbg.declare, so the table is the same at every -O level; the
 * samples of the optimized code find it again through their (file, line,
 * column). Written on LLVM's C++ API, unlike pass.c: LLVM-C has no
 * post-dominator tree and no access to debug variables, their types or
 * dbg.declare's address.
 *
 * Per function, over abstract locations ("nodes": a variable, a field,
 * all elements of an array, what a pointer parameter points to, a heap
 * block, the return value, a global):
 *   1. points-to (flow-insensitive, field-sensitive): which nodes each
 *      pointer value may address; stores of pointers give aliases;
 *   2. control dependence (Ferrante et al., on the post-dominator tree);
 *   3. every write of a node (store, memcpy/memset, allocation, free, a
 *      call whose callee writes through an argument) and its backward
 *      slice: the source locations of the instructions its value and
 *      address come from, through SSA operands and the branches that
 *      control them, stopping at loads, which are the reads;
 *   4. the dependency forest of the seed's section IV.A: a node read by
 *      others is the child of its last consumer (the reading write with
 *      the greatest line and column); exit nodes (pointees of parameters,
 *      globals, the return value) are roots. A node's blame is its own
 *      writes' slices and its descendants' blame, which is what gives
 *      the paper's Table I (a = {16, 18, 19}, c = {16..20}).
 * Across functions, summaries say which exits a callee writes and reads
 * and where its returned pointer points; they are computed for the whole
 * module until none grows (recursion converges: the sets only grow). Each
 * call site records how the callee's exits bind to the caller's variables:
 * the run-time transfer function the report applies up a sampled stack.
 */
#include "cc/blame.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "llvm/Analysis/PostDominators.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/GetElementPtrTypeIterator.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"

using namespace llvm;

namespace
{

enum Kind { K_LOCAL, K_PARAM, K_GLOBAL, K_HEAP, K_POINTEE, K_FIELD, K_ELEMENT, K_RETURN };
const char *const kind_names[] = {"local",   "param", "global",  "heap",
                                  "pointee", "field", "element", "return"};

// Node::exit: >= 0 is the parameter whose pointee the node is (part of)
constexpr int EXIT_NONE = -1, EXIT_RET = -2, EXIT_GLOBAL = -3;
// Deeper paths (a.b[].c[].d...) are collapsed into their prefix.
constexpr int MAX_DEPTH = 4;
// Rounds of summaries before the module is taken as it is.
constexpr int MAX_ROUNDS = 16;

using Set = std::set<int>;

struct Loc {
    unsigned file = 0, line = 0, col = 0;
    bool operator<(const Loc &o) const
    {
        return file != o.file ? file < o.file : line != o.line ? line < o.line : col < o.col;
    }
};

struct Node {
    std::string name, type;
    Kind kind;
    int exit = EXIT_NONE;
    bool beyond = false; // exit >= 0: reached through a pointer the pointee holds (exit "pK*")
    int parent = -1;     // displayed under
    int base = -1;       // the root of its parent chain (itself for a root)
    std::string suffix;  // a part's name after its parent's: ".x", "[]"
    int depth = 0;
    bool hidden = false; // compiler temporaries, string literals: tracked, never listed
    bool block = false;  // it stands for all elements of a block: p[i] is p[]
    const Function *func = nullptr;
    const DIType *dity = nullptr;
    bool has_decl = false;
    Loc decl;
    std::map<std::string, int> steps;
};

// What a function does to the variables that outlive its calls.
struct Summary {
    std::set<unsigned> wparams, wbeyond, rparams, retparams; // wbeyond: through a pointer the pointee holds
    std::set<const GlobalVariable *> wglobals, rglobals;
    bool retheap = false;
    bool operator==(const Summary &o) const
    {
        return wparams == o.wparams && wbeyond == o.wbeyond && rparams == o.rparams &&
               retparams == o.retparams && wglobals == o.wglobals && rglobals == o.rglobals &&
               retheap == o.retheap;
    }
};

struct CallRec {
    Loc loc;
    const Function *caller;
    std::string callee; // "" indirect
    bool spawn;
    std::map<std::string, Set> binds; // by EXIT: "pK", "pK*", "ret"
};

// A call as the analysis sees it: the function that runs and, per its
// parameter, the caller's value (a spawn's microtask gets its arguments
// through the runtime's call).
struct CallView {
    const Function *callee = nullptr;
    std::vector<const Value *> args;
    bool spawn = false;
};

// The libc functions whose effects are known: what they write and read
// (argument positions; -1: every pointer argument from `from` on).
struct Effect {
    const char *name;
    int write, read, from;
};
const Effect libc_effects[] = {
    {"memcpy", 0, 1, 0},  {"memmove", 0, 1, 0},       {"strcpy", 0, 1, 0},         {"strncpy", 0, 1, 0},
    {"strcat", 0, 1, 0},  {"strncat", 0, 1, 0},       {"memset", 0, -2, 0},        {"bzero", 0, -2, 0},
    {"fread", 0, -2, 0},  {"read", 1, -2, 0},         {"pread", 1, -2, 0},         {"fgets", 0, -2, 0},
    {"qsort", 0, 0, 0},   {"free", 0, -2, 0},         {"sscanf", -1, 0, 2},        {"fscanf", -1, -2, 2},
    {"scanf", -1, -2, 1}, {"gettimeofday", 0, -2, 0}, {"clock_gettime", 1, -2, 0}, {"time", 0, -2, 0},
};
// Called only for their result or output: they write no program variable.
const char *const libc_pure[] = {
    "printf",  "fprintf", "puts",    "fputs",    "putchar", "fputc",         "fflush", "strlen", "strcmp",
    "strncmp", "memcmp",  "strchr",  "strrchr",  "strstr",  "atoi",          "atol",   "atof",   "strtol",
    "strtoul", "strtod",  "strtoll", "strtoull", "exit",    "_exit",         "abort",  "getenv", "rand",
    "srand",   "fopen",   "fclose",  "perror",   "sqrt",    "exp",           "log",    "pow",    "sin",
    "cos",     "fabs",    "floor",   "ceil",     "assert",  "__assert_fail", "clock",  "fwrite", "write",
};

// strobe's API and the code `strobe instrument` adds: measurement, not
// the program's
bool measurement(StringRef n)
{
    return n.startswith("strobe_") || n.startswith("STROBE_");
}

bool is_allocator(StringRef n)
{
    return n == "malloc" || n == "calloc" || n == "realloc" || n == "aligned_alloc" || n == "valloc" ||
           n == "memalign" || n == "strdup" || n == "strndup" || n.startswith("_Znw") || n.startswith("_Zna");
}

const DIType *strip(const DIType *t)
{
    while (auto *d = dyn_cast_or_null<DIDerivedType>(t)) {
        unsigned tag = d->getTag();
        if (tag != dwarf::DW_TAG_typedef && tag != dwarf::DW_TAG_const_type &&
            tag != dwarf::DW_TAG_volatile_type && tag != dwarf::DW_TAG_restrict_type &&
            tag != dwarf::DW_TAG_atomic_type)
            break;
        t = d->getBaseType();
    }
    return t;
}

bool is_reference(const DIType *t)
{
    auto *d = dyn_cast_or_null<DIDerivedType>(strip(t));
    return d && (d->getTag() == dwarf::DW_TAG_reference_type ||
                 d->getTag() == dwarf::DW_TAG_rvalue_reference_type);
}

// What a pointer (or reference, or array parameter) of type t points to.
const DIType *pointee(const DIType *t)
{
    t = strip(t);
    if (auto *d = dyn_cast_or_null<DIDerivedType>(t))
        if (d->getTag() == dwarf::DW_TAG_pointer_type || d->getTag() == dwarf::DW_TAG_reference_type ||
            d->getTag() == dwarf::DW_TAG_rvalue_reference_type)
            return d->getBaseType();
    if (auto *c = dyn_cast_or_null<DICompositeType>(t))
        if (c->getTag() == dwarf::DW_TAG_array_type)
            return c->getBaseType();
    return nullptr;
}

std::string type_name(const DIType *t, int depth = 0)
{
    if (!t)
        return depth ? "void" : "?";
    if (depth > 8)
        return "...";
    if (auto *b = dyn_cast<DIBasicType>(t))
        return b->getName().str();
    if (auto *d = dyn_cast<DIDerivedType>(t)) {
        switch (d->getTag()) {
        case dwarf::DW_TAG_typedef:
            return d->getName().str();
        case dwarf::DW_TAG_pointer_type:
            return type_name(d->getBaseType(), depth + 1) + " *";
        case dwarf::DW_TAG_reference_type:
            return type_name(d->getBaseType(), depth + 1) + " &";
        case dwarf::DW_TAG_rvalue_reference_type:
            return type_name(d->getBaseType(), depth + 1) + " &&";
        case dwarf::DW_TAG_const_type:
            return "const " + type_name(d->getBaseType(), depth + 1);
        case dwarf::DW_TAG_volatile_type:
            return "volatile " + type_name(d->getBaseType(), depth + 1);
        default:
            return type_name(d->getBaseType(), depth + 1);
        }
    }
    if (auto *c = dyn_cast<DICompositeType>(t)) {
        std::string name = c->getName().str();
        switch (c->getTag()) {
        case dwarf::DW_TAG_structure_type:
            return "struct " + (name.empty() ? std::string("{...}") : name);
        case dwarf::DW_TAG_union_type:
            return "union " + (name.empty() ? std::string("{...}") : name);
        case dwarf::DW_TAG_enumeration_type:
            return "enum " + (name.empty() ? std::string("{...}") : name);
        case dwarf::DW_TAG_array_type: {
            std::string s = type_name(c->getBaseType(), depth + 1);
            for (const DINode *e : c->getElements()) {
                auto *sr = dyn_cast_or_null<DISubrange>(e);
                auto *n = sr ? sr->getCount().dyn_cast<ConstantInt *>() : nullptr;
                s += n ? "[" + std::to_string(n->getSExtValue()) + "]" : "[]";
            }
            return s;
        }
        default:
            return name.empty() ? "?" : name;
        }
    }
    if (isa<DISubroutineType>(t))
        return "function";
    return "?";
}

class Analysis
{
  public:
    explicit Analysis(Module &m) : M(m), DL(m.getDataLayout())
    {
    }
    void run();
    std::string unit(); // may add the files of functions that have no statement
    std::string listing() const;

  private:
    Module &M;
    const DataLayout &DL;
    std::vector<Node> nodes;
    std::map<const GlobalVariable *, int> globals;
    std::vector<std::string> files;
    std::map<std::string, unsigned> file_ids;
    std::map<const Function *, Summary> sums;
    std::vector<int> blame_parent;
    std::map<Loc, Set> locs;
    std::vector<CallRec> calls;

    // per function
    const Function *F = nullptr;
    std::map<const Value *, Set> pts;
    std::map<int, Set> contents;
    std::map<const Value *, int> vars;  // alloca, argument or call -> its node
    std::map<int, int> derefs;          // node -> what the pointers it holds from outside point to
    std::set<int> escaped;              // roots whose address a call gets
    std::map<unsigned, int> param_vars; // parameter k -> its own variable (the spill)
    int ret_node = -1;
    std::map<const Instruction *, std::vector<const Instruction *>> cd;
    std::map<const Instruction *, std::pair<bool, Loc>> inst_locs;

    int add(Node n)
    {
        if (n.base < 0)
            n.base = (int)nodes.size();
        nodes.push_back(std::move(n));
        blame_parent.push_back(-1);
        return (int)nodes.size() - 1;
    }
    unsigned file_id(const DIFile *f)
    {
        std::string name = f->getFilename().str(), dir = f->getDirectory().str();
        return file_id(name.empty() || name[0] == '/' || dir.empty() ? name : dir + "/" + name);
    }
    // where a variable is declared, when its debug information says
    void set_decl(Node &n, const DIFile *f, unsigned line)
    {
        n.has_decl = f != nullptr;
        if (f) {
            n.decl.file = file_id(f);
            n.decl.line = line;
        }
    }
    unsigned file_id(const std::string &path)
    {
        auto it = file_ids.find(path);
        if (it != file_ids.end())
            return it->second;
        files.push_back(path);
        return file_ids[path] = (unsigned)files.size() - 1;
    }
    bool loc_of(const Instruction *i, Loc &l);
    int step(int n, const std::string &s, const DIType *t);
    int gep_node(int n, const GEPOperator *g);
    const Set &points(const Value *v);
    int var_of(const AllocaInst *a);
    int deref(int n);
    Set beyond(const Value *arg);
    int heap_of(const Instruction *call);
    CallView view(const CallBase *c) const;
    std::map<const Function *, const Function *> forwarders;
    const Function *forwards_to(const Function &f) const;
    void setup_globals();
    void setup_function();
    bool points_to_round(bool outside);
    void control_dependence();
    void slice(const Instruction *i, std::set<const Instruction *> &seen, std::set<Loc> &out, Set &reads,
               std::set<const CallBase *> &calls_in);
    Set closure(const Set &s) const;
    bool analyse(const Function &f); // true when its summary grew
    void name_heap();
};

bool Analysis::loc_of(const Instruction *i, Loc &l)
{
    auto it = inst_locs.find(i);
    if (it != inst_locs.end()) {
        l = it->second.second;
        return it->second.first;
    }
    const DILocation *d = i->getDebugLoc().get();
    bool ok = d && d->getLine() != 0 && d->getFile();
    if (ok) {
        l.file = file_id(d->getFile());
        l.line = d->getLine();
        l.col = d->getColumn();
    }
    inst_locs[i] = {ok, l};
    return ok;
}

int Analysis::step(int n, const std::string &s, const DIType *t)
{
    const Node &b = nodes[n];
    if (b.depth >= MAX_DEPTH || (s == "[]" && b.block))
        return n;
    auto it = b.steps.find(s);
    if (it != b.steps.end())
        return it->second;
    Node c;
    c.name = b.name + s;
    c.suffix = s;
    c.kind = s == "[]" ? K_ELEMENT : K_FIELD;
    c.block = s == "[]";
    c.exit = b.exit;
    c.beyond = b.beyond;
    c.parent = n;
    c.depth = b.depth + 1;
    c.hidden = b.hidden;
    c.func = b.func;
    c.dity = t;
    c.type = type_name(t);
    c.has_decl = b.has_decl;
    c.decl = b.decl;
    c.base = b.base;
    int id = add(std::move(c));
    nodes[n].steps[s] = id;
    return id;
}

int Analysis::gep_node(int n, const GEPOperator *g)
{
    const DIType *t = nodes[n].dity;
    auto it = gep_type_begin(g);
    auto end = gep_type_end(g);
    if (it == end)
        return n;
    auto *first = dyn_cast<ConstantInt>(it.getOperand());
    if (!first || !first->isZero())
        n = step(n, "[]", t);
    for (++it; it != end; ++it) {
        t = strip(t);
        if (StructType *st = it.getStructTypeOrNull()) {
            auto *ci = dyn_cast<ConstantInt>(it.getOperand());
            if (!ci)
                return n;
            uint64_t idx = ci->getZExtValue();
            uint64_t off = DL.getStructLayout(st)->getElementOffset(idx);
            std::string name = "#" + std::to_string(idx);
            const DIType *mt = nullptr;
            if (auto *c = dyn_cast_or_null<DICompositeType>(t))
                for (const DINode *e : c->getElements()) {
                    auto *m = dyn_cast_or_null<DIDerivedType>(e);
                    if (m && m->getTag() == dwarf::DW_TAG_member && !m->isStaticMember() &&
                        m->getOffsetInBits() == off * 8) {
                        name = m->getName().str();
                        mt = m->getBaseType();
                        break;
                    }
                }
            n = step(n, "." + name, mt);
            t = mt;
        } else {
            auto *c = dyn_cast_or_null<DICompositeType>(t);
            t = c && c->getTag() == dwarf::DW_TAG_array_type ? c->getBaseType() : t;
            n = step(n, "[]", t);
        }
    }
    return n;
}

int Analysis::var_of(const AllocaInst *a)
{
    auto it = vars.find(a);
    if (it != vars.end())
        return it->second;
    Node n; // a compiler temporary: retval, a spilled argument without debug info
    n.name = a->getName().str();
    n.kind = K_LOCAL;
    n.hidden = true;
    n.func = F;
    return vars[a] = add(std::move(n));
}

// What the pointers that node n holds point to when they were stored
// outside the function: by its caller (n is reachable from an exit), by
// a callee that got n's address, or by whoever filled a heap block. A
// local whose address no call sees holds only what the function stored,
// and so does a node the function stores pointers into (points_to_round
// runs without this first, so that those are known).
// A recursive structure (a list's next field) is its own block again.
int Analysis::deref(int n)
{
    const Node &x = nodes[n];
    if (!contents[n].empty() ||
        (x.exit == EXIT_NONE && nodes[x.base].kind != K_HEAP && !escaped.count(x.base)))
        return -1;
    auto it = derefs.find(n);
    if (it != derefs.end())
        return it->second;
    const DIType *t = strip(pointee(x.dity));
    for (int a = n; a >= 0; a = nodes[a].parent)
        if (nodes[a].block && t && strip(nodes[a].dity) == t)
            return derefs[n] = a;
    if (x.depth >= MAX_DEPTH)
        return derefs[n] = n;
    Node d;
    d.name = x.name + "[]";
    d.suffix = "[]";
    d.kind = K_POINTEE;
    d.block = true;
    d.exit = x.exit;
    d.beyond = x.exit >= 0;
    d.parent = n;
    d.base = x.base;
    d.depth = x.depth + 1;
    d.hidden = x.hidden;
    d.func = x.func;
    d.dity = pointee(x.dity);
    d.type = type_name(d.dity);
    d.has_decl = x.has_decl;
    d.decl = x.decl;
    int id = add(std::move(d));
    return derefs[n] = id;
}

// What the pointers in the memory arg points to lead to (a callee's exit
// "pK*"): the block an OpenMP construct's captured pointer addresses. When
// that is unknown, the memory arg points to, which it is part of.
Set Analysis::beyond(const Value *arg)
{
    Set s;
    for (int n : points(arg)) {
        s.insert(contents[n].begin(), contents[n].end());
        if (pointee(nodes[n].dity)) {
            int d = deref(n);
            if (d >= 0)
                s.insert(d);
        }
    }
    return s.empty() ? points(arg) : s;
}

int Analysis::heap_of(const Instruction *call)
{
    auto it = vars.find(call);
    if (it != vars.end())
        return it->second;
    Node n; // named after its holder by name_heap()
    n.name = "heap";
    n.kind = K_HEAP;
    n.block = true;
    n.func = F;
    Loc l;
    if (loc_of(call, l)) {
        n.has_decl = true;
        n.decl = l;
    }
    return vars[call] = add(std::move(n));
}

const Set &Analysis::points(const Value *v)
{
    static const Set none;
    // not stripPointerCasts(): it also drops GEPs of zero offset, a.x
    while (isa<BitCastOperator>(v) || isa<AddrSpaceCastOperator>(v))
        v = cast<Operator>(v)->getOperand(0);
    auto it = pts.find(v);
    if (it != pts.end())
        return it->second;
    if (auto *g = dyn_cast<GlobalVariable>(v)) {
        auto git = globals.find(g);
        return git == globals.end() ? none : pts[v] = Set{git->second};
    }
    if (auto *g = dyn_cast<GEPOperator>(v))
        if (isa<ConstantExpr>(v)) {
            Set s;
            for (int n : points(g->getPointerOperand()))
                s.insert(gep_node(n, g));
            return pts[v] = s;
        }
    return none;
}

void Analysis::setup_globals()
{
    for (const GlobalVariable &g : M.globals()) {
        SmallVector<DIGlobalVariableExpression *, 1> di;
        g.getDebugInfo(di);
        Node n;
        n.kind = K_GLOBAL;
        n.exit = EXIT_GLOBAL;
        if (di.empty()) {
            n.name = g.getName().str();
            n.hidden = true;
        } else {
            const DIGlobalVariable *d = di[0]->getVariable();
            n.name = d->getName().str();
            n.dity = d->getType();
            n.type = type_name(n.dity);
            set_decl(n, d->getFile(), d->getLine());
            // a function's static variable is listed under the function
            const DIScope *sc = d->getScope();
            while (sc && !isa<DISubprogram>(sc) && isa<DILocalScope>(sc))
                sc = cast<DILocalScope>(sc)->getScope();
            if (auto *sp = dyn_cast_or_null<DISubprogram>(sc))
                for (const Function &f : M)
                    if (f.getSubprogram() == sp)
                        n.func = &f;
        }
        // strobe's own (the directive instrumenter's prologue) is no
        // program variable
        n.hidden |= measurement(g.getName());
        globals[&g] = add(std::move(n));
    }
}

void Analysis::setup_function()
{
    pts.clear();
    contents.clear();
    vars.clear();
    derefs.clear();
    escaped.clear();
    param_vars.clear();
    cd.clear();
    ret_node = -1;
    std::map<unsigned, const DILocalVariable *> param_di;
    for (const Instruction &i : instructions(*F))
        if (auto *d = dyn_cast<DbgDeclareInst>(&i)) {
            auto *a = dyn_cast_or_null<AllocaInst>(d->getAddress());
            const DILocalVariable *v = d->getVariable();
            if (!a || !v || vars.count(a))
                continue;
            Node n;
            n.name = v->getName().str();
            n.kind = v->isParameter() ? K_PARAM : K_LOCAL;
            n.func = F;
            n.dity = v->getType();
            n.type = type_name(n.dity);
            n.hidden = v->isArtificial() && n.name != "this";
            set_decl(n, v->getFile(), v->getLine());
            int id = add(std::move(n));
            vars[a] = id;
            if (v->isParameter()) {
                param_vars[v->getArg() - 1] = id;
                param_di[v->getArg() - 1] = v;
            }
        }
    for (const Argument &a : F->args()) {
        if (!a.getType()->isPointerTy())
            continue;
        unsigned k = a.getArgNo();
        const DILocalVariable *v = param_di.count(k) ? param_di[k] : nullptr;
        Node n;
        n.kind = K_POINTEE;
        n.exit = (int)k;
        n.func = F;
        n.parent = param_vars.count(k) ? param_vars[k] : -1;
        std::string base = v ? v->getName().str() : "arg" + std::to_string(k);
        n.hidden = v ? v->isArtificial() && base != "this" : true;
        // a reference (C++, or an OpenMP construct's captured variable)
        // is the variable itself
        n.block = !(v && is_reference(v->getType())) && base != "this";
        n.name = n.block ? base + "[]" : base == "this" ? "*this" : base;
        n.dity = v ? pointee(v->getType()) : nullptr;
        n.type = type_name(n.dity);
        if (v)
            set_decl(n, v->getFile(), v->getLine());
        pts[&a] = Set{add(std::move(n))};
    }
    if (!F->getReturnType()->isVoidTy()) {
        Node n;
        n.name = "return";
        n.kind = K_RETURN;
        n.exit = EXIT_RET;
        n.func = F;
        if (const DISubprogram *sp = F->getSubprogram()) {
            if (const DISubroutineType *st = sp->getType())
                if (st->getTypeArray().size() > 0)
                    n.dity = st->getTypeArray()[0];
            set_decl(n, sp->getFile(), sp->getLine());
        }
        n.type = type_name(n.dity, 1);
        ret_node = add(std::move(n));
    }
}

CallView Analysis::view(const CallBase *c) const
{
    CallView v;
    auto *f = dyn_cast<Function>(c->getCalledOperand()->stripPointerCasts());
    if (f && (f->getName() == "__kmpc_fork_call" || f->getName() == "__kmpc_fork_teams") &&
        c->arg_size() >= 3) {
        // (loc, argc, microtask, args...): microtask(gtid *, btid *, args...)
        v.callee = dyn_cast<Function>(c->getArgOperand(2)->stripPointerCasts());
        v.spawn = true;
        v.args = {nullptr, nullptr};
        for (unsigned i = 3; i < c->arg_size(); i++)
            v.args.push_back(c->getArgOperand(i));
    } else if (f && f->getName() == "pthread_create" && c->arg_size() == 4) {
        v.callee = dyn_cast<Function>(c->getArgOperand(2)->stripPointerCasts());
        v.spawn = true;
        v.args = {c->getArgOperand(3)};
    } else {
        v.callee = f;
        for (const Use &a : c->args())
            v.args.push_back(a.get());
    }
    auto fw = v.callee ? forwarders.find(v.callee) : forwarders.end();
    if (fw != forwarders.end())
        v.callee = fw->second;
    return v;
}

// A compiler-made function that only passes its arguments on, in order,
// to another (clang's .omp_outlined. around .omp_outlined._debug__ at -g):
// the one it calls stands for it, so that a spawn names the function the
// samples are in. Its parameters' debug variables are all artificial.
const Function *Analysis::forwards_to(const Function &f) const
{
    const CallBase *only = nullptr;
    unsigned params = 0;
    for (const Instruction &i : instructions(f)) {
        if (auto *d = dyn_cast<DbgDeclareInst>(&i)) {
            if (!d->getVariable()->isArtificial() || !d->getVariable()->isParameter())
                return nullptr;
            params++;
        } else if (auto *c = dyn_cast<CallBase>(&i)) {
            if (isa<IntrinsicInst>(c))
                continue;
            if (only)
                return nullptr;
            only = c;
        }
    }
    auto *to = only ? dyn_cast<Function>(only->getCalledOperand()->stripPointerCasts()) : nullptr;
    if (!to || to->isDeclaration() || to == &f || params == 0 || params != f.arg_size() ||
        only->arg_size() != f.arg_size())
        return nullptr;
    for (unsigned k = 0; k < f.arg_size(); k++) {
        const Value *v = only->getArgOperand(k);
        if (auto *ld = dyn_cast<LoadInst>(v)) { // through its spill slot
            const Value *slot = ld->getPointerOperand();
            v = nullptr;
            for (const User *u : slot->users())
                if (auto *st = dyn_cast<StoreInst>(u))
                    if (st->getPointerOperand() == slot)
                        v = st->getValueOperand();
        }
        if (v != f.getArg(k))
            return nullptr;
    }
    return to;
}

bool Analysis::points_to_round(bool outside)
{
    bool changed = false;
    auto join = [&changed](Set &to, const Set &from) {
        for (int n : from)
            changed |= to.insert(n).second;
    };
    for (const Instruction &i : instructions(*F)) {
        if (auto *a = dyn_cast<AllocaInst>(&i)) {
            join(pts[a], Set{var_of(a)});
        } else if (auto *g = dyn_cast<GEPOperator>(&i)) {
            Set s;
            for (int n : points(g->getPointerOperand()))
                s.insert(gep_node(n, g));
            join(pts[&i], s);
        } else if (isa<CastInst>(&i) || isa<PHINode>(&i) || isa<SelectInst>(&i)) {
            Set s;
            for (const Use &u : i.operands())
                if (!isa<SelectInst>(&i) || u.getOperandNo() > 0)
                    for (int n : points(u.get()))
                        s.insert(n);
            join(pts[&i], s);
        } else if (auto *l = dyn_cast<LoadInst>(&i)) {
            Set s;
            for (int n : points(l->getPointerOperand())) {
                for (int m : contents[n])
                    s.insert(m);
                if (outside && l->getType()->isPointerTy()) {
                    int d = deref(n);
                    if (d >= 0)
                        s.insert(d);
                }
            }
            join(pts[&i], s);
        } else if (auto *st = dyn_cast<StoreInst>(&i)) {
            Set v = points(st->getValueOperand());
            if (!v.empty())
                for (int n : Set(points(st->getPointerOperand())))
                    join(contents[n], v);
        } else if (auto *c = dyn_cast<CallBase>(&i)) {
            if (isa<DbgInfoIntrinsic>(c))
                continue;
            if (auto *mc = dyn_cast<MemTransferInst>(c)) {
                // a copied struct keeps its pointers
                Set from;
                for (int n : points(mc->getSource()))
                    for (int m : contents[n])
                        from.insert(m);
                for (int n : Set(points(mc->getDest())))
                    join(contents[n], from);
                continue;
            }
            if (isa<IntrinsicInst>(c)) // lifetime markers, memset: nothing escapes
                continue;
            CallView v = view(c);
            StringRef name = v.callee ? v.callee->getName() : "";
            for (const Value *arg : v.args)
                if (arg && arg->getType()->isPointerTy())
                    for (int n : points(arg))
                        changed |= escaped.insert(nodes[n].base).second;
            if (v.spawn || !c->getType()->isPointerTy()) {
                if (name == "posix_memalign" && c->arg_size() == 3)
                    for (int n : Set(points(c->getArgOperand(0))))
                        join(contents[n], Set{heap_of(c)});
                continue;
            }
            Set s;
            auto sum = v.callee ? sums.find(v.callee) : sums.end();
            if (is_allocator(name) || !v.callee || v.callee->isDeclaration() || sum == sums.end() ||
                sum->second.retheap)
                s.insert(heap_of(c)); // a new block, or one the callee's code obtained
            if (sum != sums.end())
                for (unsigned k : sum->second.retparams)
                    if (k < v.args.size() && v.args[k])
                        for (int n : points(v.args[k]))
                            s.insert(n);
            if (name == "realloc")
                for (int n : points(c->getArgOperand(0)))
                    s.insert(n);
            join(pts[c], s);
        }
    }
    return changed;
}

// Control dependence (Ferrante, Ottenstein, Warren) on the post-dominator
// tree (Cooper, Harvey, Kennedy) of the CFG without its error paths:
// blocks that cannot return (they end in exit() or abort()) are left
// out, or `if (p == NULL) { perror(); exit(1); }` would control, and be
// blamed for, everything after it. A function that never returns keeps
// its unreachable ends as exits; one with no end at all (an endless
// loop) gets LLVM's post-dominator tree, which picks exits in its loops.
void Analysis::control_dependence()
{
    auto exits_by = [&](bool returns) {
        std::vector<const BasicBlock *> ex;
        for (const BasicBlock &bb : *F)
            if (returns ? isa<ReturnInst>(bb.getTerminator()) : isa<UnreachableInst>(bb.getTerminator()))
                ex.push_back(&bb);
        return ex;
    };
    std::vector<const BasicBlock *> exits = exits_by(true);
    if (exits.empty())
        exits = exits_by(false);
    if (exits.empty()) {
        PostDominatorTree pdt(const_cast<Function &>(*F));
        for (const BasicBlock &bb : *F) {
            auto *an = pdt.getNode(&bb);
            if (!an || bb.getTerminator()->getNumSuccessors() < 2)
                continue;
            std::set<const BasicBlock *> done;
            for (const BasicBlock *sb : successors(&bb))
                for (auto *r = pdt.getNode(sb); r && r != an->getIDom(); r = r->getIDom())
                    if (r->getBlock() && done.insert(r->getBlock()).second)
                        for (const Instruction &i : *r->getBlock())
                            cd[&i].push_back(bb.getTerminator());
        }
        return;
    }
    // postorder of the reverse CFG from a virtual exit (index 0)
    std::map<const BasicBlock *, int> po;
    std::vector<const BasicBlock *> order{nullptr};
    std::vector<std::pair<const BasicBlock *, const_pred_iterator>> stack;
    std::set<const BasicBlock *> seen;
    for (const BasicBlock *e : exits) {
        if (!seen.insert(e).second)
            continue;
        stack.push_back({e, pred_begin(e)});
        while (!stack.empty()) {
            auto &top = stack.back();
            if (top.second != pred_end(top.first)) {
                const BasicBlock *p = *top.second++;
                if (seen.insert(p).second)
                    stack.push_back({p, pred_begin(p)});
                continue;
            }
            po[top.first] = (int)order.size();
            order.push_back(top.first);
            stack.pop_back();
        }
    }
    int n = (int)order.size();
    std::vector<int> ipdom((size_t)n, -1);
    ipdom[0] = 0;
    std::set<const BasicBlock *> is_exit(exits.begin(), exits.end());
    auto rsuccs = [&](int b) { // the block's successors that reach an exit, and the virtual exit
        std::vector<int> v;
        if (is_exit.count(order[(size_t)b]))
            v.push_back(0);
        for (const BasicBlock *sb : successors(order[(size_t)b])) {
            auto it = po.find(sb);
            if (it != po.end())
                v.push_back(it->second);
        }
        return v;
    };
    // the virtual exit is numbered first here: order it last (postorder)
    auto rank = [&](int b) { return b == 0 ? n : b; };
    for (bool changed = true; changed;) {
        changed = false;
        for (int b = n - 1; b >= 1; b--) {
            int nd = -1;
            for (int p : rsuccs(b)) {
                if (ipdom[(size_t)p] < 0)
                    continue;
                if (nd < 0) {
                    nd = p;
                    continue;
                }
                int x = p, y = nd;
                while (x != y) {
                    while (rank(x) < rank(y))
                        x = ipdom[(size_t)x];
                    while (rank(y) < rank(x))
                        y = ipdom[(size_t)y];
                }
                nd = x;
            }
            if (nd >= 0 && ipdom[(size_t)b] != nd) {
                ipdom[(size_t)b] = nd;
                changed = true;
            }
        }
    }
    for (int a = 1; a < n; a++) {
        std::vector<int> succ = rsuccs(a);
        succ.erase(std::remove(succ.begin(), succ.end(), 0), succ.end());
        if (succ.size() < 2)
            continue;
        const Instruction *t = order[(size_t)a]->getTerminator();
        std::set<int> done;
        for (int sb : succ)
            for (int r = sb; r > 0 && r != ipdom[(size_t)a] && done.insert(r).second; r = ipdom[(size_t)r])
                for (const Instruction &i : *order[(size_t)r])
                    cd[&i].push_back(t);
    }
}

void Analysis::slice(const Instruction *i, std::set<const Instruction *> &seen, std::set<Loc> &out,
                     Set &reads, std::set<const CallBase *> &calls_in)
{
    if (!seen.insert(i).second)
        return;
    Loc l;
    if (loc_of(i, l))
        out.insert(l);
    auto walk = [&](const Value *v) {
        if (auto *o = dyn_cast<Instruction>(v))
            slice(o, seen, out, reads, calls_in);
    };
    if (auto *ld = dyn_cast<LoadInst>(i)) {
        for (int n : points(ld->getPointerOperand()))
            reads.insert(n);
        walk(ld->getPointerOperand());
    } else {
        if (auto *c = dyn_cast<CallBase>(i))
            calls_in.insert(c);
        for (const Use &u : i->operands())
            walk(u.get());
    }
    auto it = cd.find(i);
    if (it != cd.end())
        for (const Instruction *t : it->second)
            slice(t, seen, out, reads, calls_in);
}

// s with the blame forest's ancestors, without the hidden
Set Analysis::closure(const Set &s) const
{
    Set out;
    for (int n : s)
        for (int a = n; a >= 0; a = blame_parent[a])
            if (!nodes[a].hidden)
                out.insert(a);
    return out;
}

bool Analysis::analyse(const Function &f)
{
    F = &f;
    setup_function();
    while (points_to_round(false))
        ;
    while (points_to_round(true))
        ;
    control_dependence();

    // the writes: (node, instruction) and what the instruction reads
    // beyond its slice (a callee's reads of its exits)
    struct Write {
        int node;
        const Instruction *inst;
        Set extra;
    };
    std::vector<Write> writes;
    // compiler-made globals (OpenMP's source locations, string literals)
    // are no program variable: a call's writes to them are not kept
    auto made = [&](int n) { return nodes[nodes[n].base].kind == K_GLOBAL && nodes[n].hidden; };
    auto write_all = [&](const Value *p, const Instruction *i, const Set &extra) {
        for (int n : points(p))
            if (!made(n))
                writes.push_back({n, i, extra});
    };
    auto all_pointees = [&](const CallBase *c, unsigned from) {
        Set s;
        for (unsigned k = from; k < c->arg_size(); k++)
            if (c->getArgOperand(k)->getType()->isPointerTy())
                for (int n : points(c->getArgOperand(k)))
                    s.insert(n);
        return s;
    };
    for (const Instruction &i : instructions(f)) {
        if (auto *st = dyn_cast<StoreInst>(&i)) {
            write_all(st->getPointerOperand(), &i, {});
        } else if (isa<ReturnInst>(&i) && ret_node >= 0) {
            writes.push_back({ret_node, &i, {}});
        } else if (auto *c = dyn_cast<CallBase>(&i)) {
            if (isa<DbgInfoIntrinsic>(c) || (isa<IntrinsicInst>(c) && !isa<MemIntrinsic>(c)))
                continue;
            if (auto *mi = dyn_cast<MemIntrinsic>(c)) {
                Set extra;
                if (auto *mt = dyn_cast<MemTransferInst>(mi))
                    extra = points(mt->getSource());
                write_all(mi->getDest(), &i, extra);
                continue;
            }
            CallView v = view(c);
            StringRef name = v.callee ? v.callee->getName() : "";
            if (is_allocator(name) || name == "posix_memalign") {
                if (vars.count(c))
                    writes.push_back({vars[c], &i, {}});
                if (name == "realloc")
                    write_all(c->getArgOperand(0), &i, {});
                continue;
            }
            if (measurement(name) ||
                std::find_if(std::begin(libc_pure), std::end(libc_pure),
                             [&](const char *p) { return name == p; }) != std::end(libc_pure))
                continue;
            auto eff = std::find_if(std::begin(libc_effects), std::end(libc_effects),
                                    [&](const Effect &e) { return name == e.name; });
            if (eff != std::end(libc_effects) && v.callee->isDeclaration()) {
                Set extra = eff->read >= 0 && (unsigned)eff->read < c->arg_size()
                                ? points(c->getArgOperand(eff->read))
                            : eff->read == -1 ? all_pointees(c, eff->from)
                                              : Set{};
                if (eff->write >= 0) {
                    if ((unsigned)eff->write < c->arg_size())
                        write_all(c->getArgOperand(eff->write), &i, extra);
                } else {
                    for (int n : all_pointees(c, eff->from))
                        writes.push_back({n, &i, extra});
                }
                continue;
            }
            auto sum = v.callee ? sums.find(v.callee) : sums.end();
            if (sum == sums.end()) {
                // unknown: it may write and read whatever its pointers reach
                Set s;
                for (const Value *a : v.args)
                    if (a && a->getType()->isPointerTy())
                        for (int n : points(a))
                            s.insert(n);
                for (int n : s)
                    if (!made(n))
                        writes.push_back({n, &i, s});
                continue;
            }
            const Summary &sm = sum->second;
            Set extra;
            for (unsigned k : sm.rparams)
                if (k < v.args.size() && v.args[k])
                    for (int n : points(v.args[k]))
                        extra.insert(n);
            for (const GlobalVariable *g : sm.rglobals)
                extra.insert(globals[g]);
            for (unsigned k : sm.wparams)
                if (k < v.args.size() && v.args[k])
                    write_all(v.args[k], &i, extra);
            for (unsigned k : sm.wbeyond)
                if (k < v.args.size() && v.args[k])
                    for (int n : beyond(v.args[k]))
                        writes.push_back({n, &i, extra});
            for (const GlobalVariable *g : sm.wglobals)
                if (!made(globals[g]))
                    writes.push_back({globals[g], &i, extra});
        }
    }

    // slices: each node's own locations, and who reads whom, last
    std::map<int, std::set<Loc>> own;
    std::map<int, std::map<int, Loc>> readers; // u -> v -> the last location where v's write read u
    std::map<const CallBase *, Set> ret_binds;
    struct Slice {
        std::set<Loc> locs;
        Set reads;
        std::set<const CallBase *> calls;
    };
    std::map<const Instruction *, Slice> memo;
    for (const Write &w : writes) {
        auto m = memo.find(w.inst);
        if (m == memo.end()) {
            std::set<const Instruction *> seen;
            Slice sl;
            slice(w.inst, seen, sl.locs, sl.reads, sl.calls);
            m = memo.emplace(w.inst, std::move(sl)).first;
        }
        const Slice &sl = m->second;
        own[w.node].insert(sl.locs.begin(), sl.locs.end());
        // a call's result stands for the nodes whose writes use it
        for (const CallBase *c : sl.calls)
            if (c != w.inst)
                ret_binds[c].insert(w.node);
        Loc at;
        loc_of(w.inst, at);
        Set reads = sl.reads;
        reads.insert(w.extra.begin(), w.extra.end());
        for (int u : reads) {
            if (u == w.node)
                continue;
            auto &r = readers[u];
            auto it = r.find(w.node);
            if (it == r.end() || it->second < at)
                r[w.node] = at;
        }
    }

    // the forest: each non-exit node under its last consumer
    for (auto &r : readers) {
        int u = r.first;
        if (nodes[u].exit != EXIT_NONE || nodes[u].func != F)
            continue;
        std::vector<std::pair<Loc, int>> cands;
        for (auto &c : r.second)
            cands.push_back({c.second, c.first});
        std::sort(cands.begin(), cands.end(), [](const std::pair<Loc, int> &a, const std::pair<Loc, int> &b) {
            if (a.first < b.first || b.first < a.first)
                return b.first < a.first;
            return a.second < b.second;
        });
        for (auto &c : cands) {
            int v = c.second, a = v;
            while (a >= 0 && a != u)
                a = blame_parent[a];
            if (a == u)
                continue; // would close a cycle
            blame_parent[u] = v;
            break;
        }
    }

    // the table: each own location gets its node and the node's ancestors
    Set exits_written;
    for (auto &o : own) {
        Set s = closure(Set{o.first});
        if (s.empty())
            continue;
        for (const Loc &l : o.second)
            locs[l].insert(s.begin(), s.end());
        if (nodes[o.first].exit != EXIT_NONE)
            exits_written.insert(s.begin(), s.end());
    }
    for (const Instruction &i : instructions(f)) {
        auto *c = dyn_cast<CallBase>(&i);
        Loc l;
        if (!c || isa<IntrinsicInst>(c) || !loc_of(c, l))
            continue;
        CallView v = view(c);
        // The OpenMP runtime's calls in a construct's outlined body (its
        // barriers, its loop's chunks) are the construct's cost: charged
        // to what the construct writes, which reaches its caller by the
        // spawn.
        if (!exits_written.empty() && !v.spawn && v.callee && v.callee->getName().startswith("__kmpc_"))
            locs[l].insert(exits_written.begin(), exits_written.end());
        CallRec rec;
        rec.loc = l;
        rec.caller = F;
        rec.callee = v.callee ? v.callee->getName().str() : "";
        rec.spawn = v.spawn;
        for (unsigned k = 0; k < v.args.size(); k++)
            if (v.args[k] && v.args[k]->getType()->isPointerTy()) {
                Set s = closure(points(v.args[k]));
                if (s.empty())
                    continue;
                std::string p = "p" + std::to_string(k);
                rec.binds[p] = s;
                rec.binds[p + "*"] = closure(beyond(v.args[k]));
            }
        auto rb = ret_binds.find(c);
        if (rb != ret_binds.end()) {
            Set s = closure(rb->second);
            if (!s.empty())
                rec.binds["ret"] = s;
        }
        calls.push_back(std::move(rec));
    }

    // the summary: what the callers see
    Summary sm;
    for (const Write &w : writes)
        if (nodes[w.node].exit >= 0 && nodes[w.node].func == F)
            (nodes[w.node].beyond ? sm.wbeyond : sm.wparams).insert((unsigned)nodes[w.node].exit);
    std::map<int, const GlobalVariable *> global_of;
    for (auto &g : globals)
        global_of[g.second] = g.first;
    auto base_global = [&](int n) -> const GlobalVariable * {
        while (n >= 0 && !global_of.count(n))
            n = nodes[n].parent;
        return n >= 0 ? global_of[n] : nullptr;
    };
    for (const Write &w : writes)
        if (nodes[w.node].exit == EXIT_GLOBAL)
            if (const GlobalVariable *g = base_global(w.node))
                sm.wglobals.insert(g);
    for (auto &r : readers) {
        const Node &n = nodes[r.first];
        if (n.exit >= 0 && n.func == F)
            sm.rparams.insert((unsigned)n.exit);
        if (n.exit == EXIT_GLOBAL)
            if (const GlobalVariable *g = base_global(r.first))
                sm.rglobals.insert(g);
    }
    for (const Instruction &i : instructions(f))
        if (auto *r = dyn_cast<ReturnInst>(&i))
            if (r->getReturnValue() && r->getReturnValue()->getType()->isPointerTy())
                for (int n : points(r->getReturnValue())) {
                    if (nodes[n].exit >= 0 && nodes[n].func == F)
                        sm.retparams.insert((unsigned)nodes[n].exit);
                    if (nodes[n].kind == K_HEAP ||
                        (nodes[n].parent >= 0 && nodes[nodes[n].parent].kind == K_HEAP))
                        sm.retheap = true;
                }
    name_heap();
    auto old = sums.find(F);
    bool grew = old == sums.end() || !(old->second == sm);
    sums[F] = sm;
    return grew;
}

// A heap block is named after the variable that holds its pointer at the
// allocation: the first store of the call's result.
void Analysis::name_heap()
{
    for (auto &v : vars) {
        auto *call = dyn_cast<CallBase>(v.first);
        if (!call || nodes[v.second].kind != K_HEAP)
            continue;
        Node &h = nodes[v.second];
        std::vector<const Value *> work{call};
        const StoreInst *holder = nullptr;
        std::set<const Value *> seen;
        while (!work.empty() && !holder) {
            const Value *x = work.back();
            work.pop_back();
            if (!seen.insert(x).second)
                continue;
            for (const User *u : x->users()) {
                if (auto *s = dyn_cast<StoreInst>(u)) {
                    if (s->getValueOperand() == x) {
                        holder = s;
                        break;
                    }
                } else if (isa<CastInst>(u)) {
                    work.push_back(u);
                }
            }
        }
        const Set &at = holder ? points(holder->getPointerOperand()) : Set{};
        if (holder && at.size() == 1) {
            int p = *at.begin();
            h.name = nodes[p].name + "[]";
            h.parent = p;
            h.hidden = nodes[p].hidden;
            h.dity = pointee(nodes[p].dity);
            h.type = type_name(h.dity);
        } else {
            auto *f = dyn_cast_or_null<Function>(call->getCalledOperand()->stripPointerCasts());
            h.name = (f ? f->getName().str() : std::string("heap")) + "()";
            h.type = "?";
        }
        for (size_t k = (size_t)v.second + 1; k < nodes.size(); k++) // its parts, made already
            if (nodes[k].base == v.second) {
                nodes[k].name = nodes[(size_t)nodes[k].parent].name + nodes[k].suffix;
                nodes[k].hidden = h.hidden;
            }
    }
}

void Analysis::run()
{
    std::vector<const Function *> defined;
    for (const Function &f : M)
        if (!f.isDeclaration() && f.getSubprogram() && !measurement(f.getName())) {
            if (const Function *to = forwards_to(f))
                forwarders[&f] = to;
            else
                defined.push_back(&f);
        }
    for (int round = 0;; round++) {
        nodes.clear();
        blame_parent.clear();
        globals.clear();
        locs.clear();
        calls.clear();
        setup_globals();
        bool grew = false;
        for (const Function *f : defined)
            grew |= analyse(*f);
        if (!grew || round + 1 == MAX_ROUNDS)
            break;
    }
}

std::string escape(const std::string &s)
{
    std::string o;
    for (char ch : s) {
        if (ch == '\\')
            o += "\\\\";
        else if (ch == '\t')
            o += "\\t";
        else if (ch == '\n')
            o += "\\n";
        else if ((unsigned char)ch >= 0x20)
            o += ch;
    }
    return o;
}

std::string Analysis::unit()
{
    std::map<const Function *, int> func_ids;
    std::string funcs;
    for (const Function &f : M) {
        const DISubprogram *sp = f.isDeclaration() ? nullptr : f.getSubprogram();
        if (!sp || !sp->getFile())
            continue;
        unsigned file = file_id(sp->getFile());
        funcs += "func\t" + std::to_string(func_ids.size()) + "\t" + escape(f.getName().str()) + "\t" +
                 std::to_string(file) + "\t" + std::to_string(sp->getLine()) + "\n";
        func_ids[&f] = (int)func_ids.size();
    }
    // the variables listed: those of a set, and the ones they are under
    std::vector<bool> used(nodes.size());
    auto use = [&](const Set &s) {
        for (int n : s)
            for (int a = n; a >= 0 && !used[(size_t)a]; a = nodes[a].parent)
                used[(size_t)a] = true;
    };
    for (auto &l : locs)
        use(l.second);
    for (auto &c : calls)
        for (auto &b : c.binds)
            use(b.second);
    std::vector<int> ids(nodes.size(), -1);
    std::string var_lines;
    int next = 0;
    for (size_t n = 0; n < nodes.size(); n++) {
        if (!used[n] || nodes[n].hidden)
            continue;
        const Node &x = nodes[n];
        ids[n] = next++;
        std::string exit = x.exit == EXIT_NONE     ? "-"
                           : x.exit == EXIT_RET    ? "ret"
                           : x.exit == EXIT_GLOBAL ? "global"
                                                   : "p" + std::to_string(x.exit) + (x.beyond ? "*" : "");
        int parent = x.parent;
        while (parent >= 0 && (nodes[parent].hidden || ids[parent] < 0))
            parent = nodes[parent].parent;
        auto fit = x.func ? func_ids.find(x.func) : func_ids.end();
        var_lines += "var\t" + std::to_string(ids[n]) + "\t" +
                     (fit == func_ids.end() ? "-" : std::to_string(fit->second)) + "\t" + kind_names[x.kind] +
                     "\t" + exit + "\t" + (parent >= 0 ? std::to_string(ids[parent]) : "-") + "\t" +
                     escape(x.name) + "\t" + escape(x.type.empty() ? "?" : x.type) + "\t" +
                     (x.has_decl ? std::to_string(x.decl.file) : "-") + "\t" +
                     std::to_string(x.has_decl ? x.decl.line : 0) + "\n";
    }
    auto set_text = [&](const Set &s) {
        std::vector<int> v;
        for (int n : s)
            if (ids[(size_t)n] >= 0)
                v.push_back(ids[(size_t)n]);
        std::sort(v.begin(), v.end());
        std::string t;
        for (int x : v)
            t += (t.empty() ? "" : ",") + std::to_string(x);
        return t;
    };
    std::string body;
    for (auto &l : locs) {
        std::string s = set_text(l.second);
        if (!s.empty())
            body += "loc\t" + std::to_string(l.first.file) + "\t" + std::to_string(l.first.line) + "\t" +
                    std::to_string(l.first.col) + "\t" + s + "\n";
    }
    std::vector<const CallRec *> sorted;
    for (auto &c : calls)
        sorted.push_back(&c);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const CallRec *a, const CallRec *b) { return a->loc < b->loc; });
    for (const CallRec *c : sorted) {
        auto fit = func_ids.find(c->caller);
        if (fit == func_ids.end())
            continue;
        body += "call\t" + std::to_string(c->loc.file) + "\t" + std::to_string(c->loc.line) + "\t" +
                std::to_string(c->loc.col) + "\t" + std::to_string(fit->second) + "\t" +
                (c->callee.empty() ? "-" : escape(c->callee)) + "\t" + (c->spawn ? "spawn" : "call") + "\n";
        for (auto &b : c->binds) {
            std::string s = set_text(b.second);
            if (!s.empty())
                body += "bind\t" + b.first + "\t" + s + "\n";
        }
    }
    std::string head = "strobe-blame\t1\t0\n";
    for (size_t i = 0; i < files.size(); i++)
        head += "file\t" + std::to_string(i) + "\t" + escape(files[i]) + "\n";
    return head + funcs + var_lines + body + "end\n";
}

// For strobe blame-prep: per variable its blame lines, then per line its
// variables, in source order.
std::string Analysis::listing() const
{
    std::map<int, std::set<std::pair<unsigned, unsigned>>> lines_of;
    std::map<std::pair<unsigned, unsigned>, Set> by_line;
    for (auto &l : locs)
        for (int n : l.second) {
            lines_of[n].insert({l.first.file, l.first.line});
            by_line[{l.first.file, l.first.line}].insert(n);
        }
    auto qual = [&](int n) {
        return (nodes[n].func ? demangle(nodes[n].func->getName().str()) + ":" : std::string()) +
               nodes[n].name;
    };
    std::string out;
    for (auto &v : lines_of) {
        const Node &x = nodes[v.first];
        out += "var\t" + qual(v.first) + "\t" + x.type + "\t" + kind_names[x.kind] + "\t";
        unsigned file = ~0u;
        for (auto &fl : v.second) {
            if (fl.first != file)
                out += (file == ~0u ? "" : " ") + files[fl.first] + ":";
            else
                out += ",";
            out += std::to_string(fl.second);
            file = fl.first;
        }
        out += "\n";
    }
    for (auto &l : by_line) {
        out += "line\t" + files[l.first.first] + ":" + std::to_string(l.first.second) + "\t";
        bool first = true;
        for (int n : l.second) {
            out += (first ? "" : " ") + qual(n);
            first = false;
        }
        out += "\n";
    }
    return out;
}

// The unit as assembler data: .ascii strings of printable characters.
std::string as_asm(const std::string &unit)
{
    std::string a = ".pushsection .strobe_blame,\"\",@progbits\n";
    for (size_t i = 0; i < unit.size(); i += 512) {
        a += ".ascii \"";
        for (char ch : unit.substr(i, 512)) {
            unsigned char u = (unsigned char)ch;
            if (ch == '"' || ch == '\\') {
                a += '\\';
                a += ch;
            } else if (u < 0x20 || u >= 0x7f) {
                char o[8];
                snprintf(o, sizeof o, "\\%03o", u);
                a += o;
            } else {
                a += ch;
            }
        }
        a += "\"\n";
    }
    return a + ".popsection\n";
}

} // namespace

extern "C" int strobe__cc_blame(LLVMModuleRef mref, const char *setting)
{
    Module &m = *unwrap(mref);
    Analysis a(m);
    a.run();
    std::string unit = a.unit();
    m.appendModuleInlineAsm(as_asm(unit));
    std::string s = setting ? setting : "";
    size_t colon = s.find(':');
    if (colon == std::string::npos)
        return 0;
    std::string what = s.substr(0, colon), path = s.substr(colon + 1);
    FILE *f = fopen(path.c_str(), "a");
    if (!f)
        return -errno;
    std::string text = what == "lines" ? a.listing() : unit;
    bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = fclose(f) == 0 && ok;
    return ok ? 0 : -EIO;
}
