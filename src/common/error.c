/* SPDX-License-Identifier: MIT */
/* The one table of strobe's own error codes (enum strobe_error). */
#include <string.h>

#include "strobe/strobe.h"

STROBE_API const char *strobe_strerror(int code)
{
    switch (code) {
    case 0: return "success";
    case STROBE_ERR_FORMAT: return "corrupt or not a strobe file";
    case STROBE_ERR_TRUNCATED: return "file truncated";
    case STROBE_ERR_VERSION: return "unsupported format version";
    case STROBE_ERR_SYNTAX: return "syntax error";
    case STROBE_ERR_DISABLED: return "measurement is not active";
    case STROBE_ERR_LIMIT: return "size limit reached";
    case STROBE_ERR_UNSUPPORTED: return "not supported";
    case STROBE_ERR_ABORTED: return "transaction aborted";
    default:
        if (code < 0 && code > -4096)
            return strerror(-code);
        return "unknown error";
    }
}
