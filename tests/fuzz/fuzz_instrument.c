/* SPDX-License-Identifier: MIT */
/* Fuzz target: a C file through the directive instrumenter
 * (src/instrument): libclang's parse, the directive parser, the statement
 * matching, the OpenMP, tm_atomic and speculative rewrites. Input: the
 * file's bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "instrument/instrument.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char in[] = "/tmp/strobe-fuzz-instrument-XXXXXX.c", out[64];
    int fd = mkstemps(in, 2);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) == (ssize_t)size) {
        snprintf(out, sizeof out, "%s.out.c", in);
        struct strobe_errbuf eb;
        /* every family of directives: OpenMP and the transactional ones */
        const char *args[] = {"-fsyntax-only", "-fopenmp", "-fgnu-tm"};
        strobe__instrument_file(in, out, args, 3, &eb);
        unlink(out);
    }
    close(fd);
    unlink(in);
    return 0;
}
