/* SPDX-License-Identifier: MIT */
/* Signal name parser shared by the runtime and the tools (signame.h). */
#include "common/signame.h"

#include <signal.h>
#include <stdlib.h>
#include <strings.h>

#include "strobe/strobe.h"

static const struct {
    const char *name;
    int sig;
} names[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},     {"QUIT", SIGQUIT},     {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
    {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},   {"TERM", SIGTERM},     {"CONT", SIGCONT}, {"TSTP", SIGTSTP},
    {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},   {"URG", SIGURG},       {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ},
    {"VTALRM", SIGVTALRM}, {"WINCH", SIGWINCH}, {"IO", SIGIO},     {"PWR", SIGPWR},
};

static int allowed(int sig)
{
    switch (sig) {
    case SIGKILL: case SIGSTOP: case SIGSEGV: case SIGBUS: case SIGFPE:
    case SIGILL: case SIGABRT: case SIGTRAP: case SIGSYS: case SIGPROF:
        return 0;
    }
    return sig >= 1 && sig <= SIGRTMAX;
}

int strobe__parse_signal(const char *s, int *sig)
{
    if (!s || !*s)
        return STROBE_ERR_SYNTAX;
    if (*s >= '0' && *s <= '9') {
        char *end;
        long v = strtol(s, &end, 10);
        if (*end || v > SIGRTMAX || !allowed((int)v))
            return STROBE_ERR_SYNTAX;
        *sig = (int)v;
        return 0;
    }
    if (strncasecmp(s, "SIG", 3) == 0)
        s += 3;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(s, names[i].name) == 0) {
            *sig = names[i].sig;
            return 0;
        }
    return STROBE_ERR_SYNTAX;
}
