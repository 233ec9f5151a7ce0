/* SPDX-License-Identifier: MIT */
/*
 * What `strobe run` preloads into the program: the runtime libstrobe.so.0,
 * found next to the strobe executable (build tree: bin/../lib, installed
 * tree: bin/../<libdir>) unless STROBE_RUNTIME names it, and, when this
 * CLI is a sanitizer build, the sanitizer runtime in front of it: a
 * sanitized libstrobe.so cannot be loaded into a program that does not
 * have the sanitizer runtime first in its library list. `strobe cc` finds
 * its pass plugin, strobe/libstrobe-cc.so, the same way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#if !defined(STROBE_INSTALL_LIBDIR) || !defined(STROBE_PLUGIN_SUBDIR) || !defined(STROBE_SOVERSION)
#error "STROBE_INSTALL_LIBDIR, STROBE_PLUGIN_SUBDIR and STROBE_SOVERSION must be defined by the build"
#endif

#if defined(__SANITIZE_ADDRESS__)
#define CLI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLI_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CLI_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CLI_TSAN 1
#endif
#endif

bool strobe__built_with_asan(void)
{
#ifdef CLI_ASAN
    return true;
#else
    return false;
#endif
}

static int try_path(const char *path, char **out)
{
    if (access(path, R_OK) != 0)
        return -errno;
    char *abs = realpath(path, NULL);
    if (!abs)
        return -errno;
    *out = abs;
    return 0;
}

int strobe__find_lib(const char *file, const char *hint, char **out, char *err, size_t errlen)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) {
        int rc = -errno;
        snprintf(err, errlen, "/proc/self/exe: %s%s", strerror(errno), hint);
        return rc;
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    const char *libdir = STROBE_INSTALL_LIBDIR;
    char cand[2][PATH_MAX + 64];
    snprintf(cand[0], sizeof cand[0], "%s/../lib/%s", exe, file);
    if (libdir[0] == '/')
        snprintf(cand[1], sizeof cand[1], "%s/%s", libdir, file);
    else
        snprintf(cand[1], sizeof cand[1], "%s/../%s/%s", exe, libdir, file);
    bool same = strcmp(cand[0], cand[1]) == 0;
    if (try_path(cand[0], out) == 0 || (!same && try_path(cand[1], out) == 0))
        return 0;
    snprintf(err, errlen, "cannot find %s (looked for %s%s%s%s)", file, cand[0], same ? "" : ", ",
             same ? "" : cand[1], hint);
    return -ENOENT;
}

int strobe__find_runtime(char **out, char *err, size_t errlen)
{
    const char *env = getenv("STROBE_RUNTIME");
    if (env && *env) {
        int rc = try_path(env, out);
        if (rc)
            snprintf(err, errlen, "STROBE_RUNTIME=%s: %s", env, strerror(-rc));
        return rc;
    }
    return strobe__find_lib(STROBE__SONAME("libstrobe"), "; set STROBE_RUNTIME", out, err, errlen);
}

int strobe__find_cc_plugin(char **out, char *err, size_t errlen)
{
    return strobe__find_lib(STROBE_PLUGIN_SUBDIR "/libstrobe-cc.so",
                            " (strobe was built without LLVM 14: install llvm-14-dev)", out, err, errlen);
}

#if defined(CLI_ASAN) || defined(CLI_TSAN)
static int find_sanitizer(struct dl_phdr_info *info, size_t size, void *arg)
{
    static const char *const prefixes[] = {"libasan.so", "libtsan.so", "libclang_rt.asan",
                                           "libclang_rt.tsan"};
    const char *name = info->dlpi_name;
    if (!name || !*name)
        return 0;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0) {
            *(char **)arg = strdup(name);
            return 1;
        }
    }
    return 0;
}
#endif

char *strobe__sanitizer_runtime(void)
{
    char *path = NULL;
#if defined(CLI_ASAN) || defined(CLI_TSAN)
    dl_iterate_phdr(find_sanitizer, &path);
#endif
    return path;
}
