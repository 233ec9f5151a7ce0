/* SPDX-License-Identifier: MIT */
/*
 * `strobe ctl`: runtime control of a running strobed, in the spirit of
 * LDMS's ldmsd_controller. The command words go to the daemon as they
 * are (the CTL message); the daemon checks them and answers with its
 * reply text or a one-line reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "strobe/strobe.h"
#include "strobed/config.h"
#include "transport/client.h"

const char strobe__ctl_help[] =
    "usage: strobe ctl [--secret-file FILE] [--timeout DURATION] HOST:PORT COMMAND...\n"
    "\n"
    "Changes what a running strobed samples, stores and aggregates, without a restart\n"
    "(the daemon needs a shared secret; changes are not written to its configuration file).\n"
    "\n"
    "Commands:\n"
    "  status                                      samplers, transforms, stores, producers\n"
    "  sampler add NAME PLUGIN [KEY=VALUE...]      start a sampler (keys as in the config file)\n"
    "  transform add NAME PLUGIN [KEY=VALUE...]    start a transform\n"
    "  store add NAME PLUGIN [KEY=VALUE...]        start a store\n"
    "  producer add NAME HOST:PORT [KEY=VALUE...]  start pulling from a daemon\n"
    "  KIND remove NAME                            stop one (KIND: sampler, transform, store, producer)\n"
    "  KIND interval NAME DURATION                 a sampler's interval, a store's flush_interval,\n"
    "                                              a producer's interval\n"
    "\n"
    "      --secret-file F the daemon's shared secret\n"
    "      --timeout D     give up after D: connection, handshake and reply (default 5s)\n";

int strobe__cmd_ctl(int argc, char **argv)
{
    static const struct option opts[] = {
        {"secret-file", required_argument, 0, 'S'},
        {"timeout", required_argument, 0, 'T'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *secret_file = NULL, *timeout = "5s";
    unsigned long long timeout_ns = 5000000000ull;
    int c;
    /* '+': options end at HOST:PORT; the command's words are the daemon's */
    while ((c = strobe__cli_getopt("ctl", argc, argv, "+:h", opts)) != -1) {
        switch (c) {
        case 'S':
            secret_file = optarg;
            break;
        case 'T':
            if (strobe__parse_duration(optarg, &timeout_ns) < 0 || timeout_ns == 0)
                return strobe__cli_usage_error("ctl", "--timeout %s: not a duration (e.g. 2s)", optarg);
            timeout = optarg;
            break;
        case 'h':
            fputs(strobe__ctl_help, stdout);
            return 0;
        default:
            return STROBE_EXIT_USAGE;
        }
    }
    if (optind >= argc)
        return strobe__cli_usage_error("ctl", "which daemon? give HOST:PORT");
    if (optind + 1 >= argc)
        return strobe__cli_usage_error("ctl", "which command? e.g. status");
    const char *addr = argv[optind];
    struct strobe__client *cl;
    if (strobe__cli_daemon_connect("ctl", addr, secret_file, timeout_ns, timeout, &cl) < 0)
        return STROBE_EXIT_FAILURE;
    char *text;
    int rc = strobe__client_ctl(cl, argv + optind + 1, (size_t)(argc - optind - 1), &text);
    if (rc < 0) {
        strobe__cli_daemon_failure("ctl", addr, rc, strobe__client_error(cl), timeout);
    } else {
        fputs(text, stdout);
        free(text);
    }
    strobe__client_close(cl);
    return rc < 0 ? STROBE_EXIT_FAILURE : 0;
}
