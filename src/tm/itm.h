/* SPDX-License-Identifier: MIT */
/*
 * The parts of the GCC transactional memory ABI ("libitm", Intel's TM ABI
 * as GCC implements it) that code compiled with -fgnu-tm relies on: the
 * property bits _ITM_beginTransaction receives, the action bits it
 * returns, abort reasons and the other enumerations. Values are fixed by
 * the ABI: compiled programs carry them as constants.
 */
#ifndef STROBE_TM_ITM_H
#define STROBE_TM_ITM_H

#include <stdint.h>

/* Properties of a transaction, passed to _ITM_beginTransaction. */
enum {
    ITM_PR_INSTRUMENTED_CODE = 0x0001,
    ITM_PR_UNINSTRUMENTED_CODE = 0x0002,
    ITM_PR_HAS_NO_ABORT = 0x0008,      /* contains no __transaction_cancel */
    ITM_PR_HAS_NO_IRREVOCABLE = 0x0020,
    ITM_PR_DOES_GO_IRREVOCABLE = 0x0040,/* goes irrevocable on every path */
    ITM_PR_READ_ONLY = 0x4000,
};

/* What the code after _ITM_beginTransaction must do. */
enum {
    ITM_A_RUN_INSTRUMENTED_CODE = 0x01,
    ITM_A_RUN_UNINSTRUMENTED_CODE = 0x02,
    ITM_A_SAVE_LIVE_VARIABLES = 0x04,
    ITM_A_RESTORE_LIVE_VARIABLES = 0x08,
    ITM_A_ABORT_TRANSACTION = 0x10, /* skip the body: it was cancelled */
};

/* _ITM_abortTransaction reasons (bit set). */
enum {
    ITM_USER_ABORT = 1,
    ITM_USER_RETRY = 2,
    ITM_TM_CONFLICT = 4,
    ITM_EXCEPTION_BLOCK_ABORT = 8,
    ITM_OUTER_ABORT = 16,
};

/* _ITM_inTransaction results. */
enum { ITM_OUTSIDE_TRANSACTION = 0, ITM_IN_RETRYABLE_TRANSACTION = 1, ITM_IN_IRREVOCABLE_TRANSACTION = 2 };

/* The only mode _ITM_changeTransactionMode is asked for. */
enum { ITM_MODE_SERIAL_IRREVOCABLE = 0 };

typedef uint64_t itm_transaction_id_t;
#define ITM_NO_TRANSACTION_ID 1

typedef void (*itm_user_undo_fn)(void *);
typedef void (*itm_user_commit_fn)(void *);

/* A clone table entry as emitted by GCC in .tm_clone_table. */
struct itm_clone_pair {
    void *orig;
    void *clone;
};

#endif /* STROBE_TM_ITM_H */
