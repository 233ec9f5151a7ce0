/* SPDX-License-Identifier: MIT */
/* libdwfl unwinding of copied user stacks (see unwind.h). */
#define _GNU_SOURCE
#include "cli/unwind.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

/* The sample being unwound: what the thread callbacks hand libdwfl. */
struct sample_state {
    pid_t tid;
    const uint64_t *regs; /* STROBE__UNWIND_NREGS, perf order */
    const uint8_t *stack;
    size_t len;
    bool beyond; /* a read above the copy: the stack went on */
};

struct strobe__unwinder {
    pid_t pid;
    Dwfl *dwfl;
    bool attached; /* dwfl_attach_state done: it can be done once */
    char *maps;    /* the /proc/PID/maps text last reported */
    size_t maps_len;
    struct strobe__attach_module *mods;
    size_t nmods, cap;
    struct sample_state cur;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
    (void)dwfl;
    struct strobe__unwinder *u = arg;
    if (*thread_argp) /* one thread per walk: the sample's */
        return 0;
    *thread_argp = u;
    return u->cur.tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
    (void)dwfl;
    struct strobe__unwinder *u = arg;
    *thread_argp = u;
    return tid == u->cur.tid;
}

/* Stack reads come from the copy; anything else (a CFI expression reading
 * static data) is not available, and the walk stops there. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
    (void)dwfl;
    struct strobe__unwinder *u = arg;
    uint64_t sp = u->cur.regs[STROBE__UNWIND_SP];
    if (addr >= sp && addr - sp <= u->cur.len && u->cur.len - (addr - sp) >= sizeof *result) {
        memcpy(result, u->cur.stack + (addr - sp), sizeof *result);
        return true;
    }
    /* a stack address beyond the copy: within a few MiB above the stack
     * pointer, where the walk was heading */
    if (addr >= sp && addr - sp < (64u << 20))
        u->cur.beyond = true;
    return false;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
    struct strobe__unwinder *u = thread_arg;
    const uint64_t *r = u->cur.regs;
    /* DWARF's x86-64 numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15
     * rip; perf's: AX BX CX DX SI DI BP SP IP R8..R15 */
    Dwarf_Word d[17] = {r[0], r[3], r[2], r[1], r[4], r[5], r[6], r[7]};
    for (unsigned i = 0; i < 8; i++)
        d[8 + i] = r[9 + i];
    d[16] = r[8];
    return dwfl_thread_state_registers(thread, 0, 17, d);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

/* Adds the modules libdwfl now knows to u->mods, once each. */
static int collect_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
    (void)userdata;
    (void)start;
    struct strobe__unwinder *u = arg;
    Dwarf_Addr lo, hi, bias;
    dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
    /* the vDSO and other pseudo files have no file a report could open */
    if (!name || name[0] != '/' || !dwfl_module_getelf(mod, &bias))
        return DWARF_CB_OK;
    for (size_t i = 0; i < u->nmods; i++) {
        const struct strobe__attach_module *m = &u->mods[i];
        if (m->bias == bias && m->lo == lo && m->hi == hi && strcmp(m->path, name) == 0)
            return DWARF_CB_OK;
    }
    if (u->nmods == u->cap) {
        size_t cap = u->cap ? 2 * u->cap : 32;
        struct strobe__attach_module *p = realloc(u->mods, cap * sizeof *p);
        if (!p)
            return DWARF_CB_ABORT;
        u->mods = p;
        u->cap = cap;
    }
    char *path = strdup(name);
    if (!path)
        return DWARF_CB_ABORT;
    u->mods[u->nmods++] = (struct strobe__attach_module){path, bias, lo, hi};
    return DWARF_CB_OK;
}

/* The whole of /proc/PID/task/TID/maps into a malloc'd buffer. */
static int read_maps(pid_t pid, pid_t tid, char **out, size_t *len)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/maps", (int)pid, (int)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (cap - n < 4096) {
            char *p = realloc(buf, cap + 65536);
            if (!p) {
                rc = -ENOMEM;
                break;
            }
            buf = p;
            cap += 65536;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0) {
            rc = ferror(f) ? -EIO : 0;
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}

int strobe__unwinder_refresh(struct strobe__unwinder *u, pid_t tid)
{
    char *maps = NULL;
    size_t len = 0;
    int rc = read_maps(u->pid, tid, &maps, &len);
    if (rc)
        return rc;
    if (u->maps && len == u->maps_len && memcmp(maps, u->maps, len) == 0) {
        free(maps);
        return 0;
    }
    free(u->maps);
    u->maps = maps;
    u->maps_len = len;
    FILE *f = fmemopen(maps, len ? len : 1, "r");
    if (!f)
        return -errno;
    dwfl_report_begin(u->dwfl);
    rc = len ? dwfl_linux_proc_maps_report(u->dwfl, f) : 0;
    fclose(f);
    if (dwfl_report_end(u->dwfl, NULL, NULL) != 0 && rc == 0)
        rc = -EIO;
    if (rc) /* an errno, or -1 (libdwfl's own error) */
        rc = rc > 0 ? -rc : -EIO;
    if (rc == 0 && dwfl_getmodules(u->dwfl, collect_module, u, 0) != 0)
        rc = -ENOMEM;
    if (rc == 0 && !u->attached) {
        /* the machine, from a module's ELF file: the first one that opens */
        Elf *elf = NULL;
        for (size_t i = 0; i < u->nmods && !elf; i++) {
            Dwfl_Module *m = dwfl_addrmodule(u->dwfl, u->mods[i].lo);
            Dwarf_Addr bias;
            elf = m ? dwfl_module_getelf(m, &bias) : NULL;
        }
        if (!elf || !dwfl_attach_state(u->dwfl, elf, u->pid, &thread_callbacks, u))
            rc = -ENOEXEC;
        u->attached = rc == 0;
    }
    return rc;
}

int strobe__unwinder_open(pid_t pid, pid_t tid, struct strobe__unwinder **out)
{
    struct strobe__unwinder *u = calloc(1, sizeof *u);
    if (!u)
        return -ENOMEM;
    u->pid = pid;
    u->dwfl = dwfl_begin(&proc_callbacks);
    int rc = u->dwfl ? strobe__unwinder_refresh(u, tid) : -ENOMEM;
    if (rc) {
        strobe__unwinder_close(u);
        return rc;
    }
    *out = u;
    return 0;
}

struct walk {
    uint64_t *ips;
    unsigned n, max;
    bool cut; /* ended before the stack did */
};

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
    struct walk *w = arg;
    Dwarf_Addr pc;
    if (!dwfl_frame_pc(frame, &pc, NULL) || pc == 0)
        return DWARF_CB_ABORT;
    /* a garbage return address (bad CFI, a stack the program corrupted) */
    if (w->n == w->max || pc >= (1ull << 57)) {
        w->cut = true;
        return DWARF_CB_ABORT;
    }
    w->ips[w->n++] = pc;
    return DWARF_CB_OK;
}

unsigned strobe__unwind(struct strobe__unwinder *u, pid_t tid, const uint64_t *regs, const uint8_t *stack,
                        size_t len, uint64_t *ips, unsigned max, bool *truncated)
{
    u->cur = (struct sample_state){tid, regs, stack, len, false};
    struct walk w = {ips, 0, max, false};
    dwfl_getthread_frames(u->dwfl, tid, frame_cb, &w);
    *truncated = w.cut || u->cur.beyond;
    return w.n;
}

const struct strobe__attach_module *strobe__unwinder_modules(const struct strobe__unwinder *u, size_t *n)
{
    *n = u->nmods;
    return u->mods;
}

void strobe__unwinder_close(struct strobe__unwinder *u)
{
    if (!u)
        return;
    if (u->dwfl)
        dwfl_end(u->dwfl);
    for (size_t i = 0; i < u->nmods; i++)
        free(u->mods[i].path);
    free(u->mods);
    free(u->maps);
    free(u);
}
