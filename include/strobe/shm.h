/* SPDX-License-Identifier: MIT */
/*
 * Application publishing through a POSIX shared-memory index (seed 002,
 * chapter 4; docs/formats/shm-index.md).
 *
 * An index is one shared-memory object named by the user (default
 * "strobe-<uid>"): a header with a generation number and one entry per
 * published metric set (label, schema checksum, writer and reader
 * reference counts and pids, activity timestamps, state). Each set lives
 * in its own segment (meta section, then data section, overwritten in
 * place). Every object is created 0600 and refused if another user owns it.
 *
 * Writers (applications) publish sets; a reader (strobed's `shm` sampler)
 * rescans when the index generation changes and reads the sets in place.
 * Processes that die are cleaned up by whoever notices first (Figure 4.4):
 * a reader removes entries whose writers are all dead or silent for longer
 * than the timeout; the last writer to leave removes the index when no
 * live reader remains; an index whose every process is gone is
 * reinitialised by the next process that opens it.
 *
 * Thread-safety: a publication is written by one thread at a time (or
 * only with strobe_set_add_u64-style atomic updates when several processes
 * share it); index operations are serialised by a robust process-shared
 * mutex inside the index and are safe from any thread.
 */
#ifndef STROBE_SHM_H
#define STROBE_SHM_H

#include <stdint.h>

#include "strobe/metric_set.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default index name when the caller passes NULL: $STROBE_SHM_INDEX if set,
 * else "strobe-<uid>". */
#define STROBE_SHM_INDEX_ENV "STROBE_SHM_INDEX"

typedef struct strobe_shm_pub strobe_shm_pub;
typedef struct strobe_shm_reader strobe_shm_reader;

/* ---- writers -------------------------------------------------------------
 * Publish a set under `instance` (NULL: producer/schema). If the index
 * already holds a live entry with this label and the same schema checksum,
 * the caller joins it as another writer (its writer count goes up) and
 * *set points at the shared values; a label with a different checksum
 * gives -EEXIST. The returned set is written with the normal set API. */
STROBE_API int strobe_shm_publish(const char *index, const strobe_schema *schema,
                                  const char *producer, const char *instance,
                                  strobe_shm_pub **pub, strobe_set **set);
/* Record writer activity without a transaction (idle applications call it
 * so that readers do not time them out). strobe_set_end does not touch
 * the index; publishers call this at least once per timeout period. */
STROBE_API void strobe_shm_heartbeat(strobe_shm_pub *pub);
/* Leave: the writer count goes down; the last writer removes the entry and
 * its segment, and the index itself when no live reader remains. */
STROBE_API int strobe_shm_unpublish(strobe_shm_pub *pub);

/* ---- readers ------------------------------------------------------------- */
/* timeout_ns: how long a set may go without writer activity before the
 * reader removes it (0: only dead writer pids count). */
STROBE_API int strobe_shm_reader_open(const char *index, uint64_t timeout_ns,
                                      strobe_shm_reader **out);
/* Rescan if the index generation changed and clean up dead or silent
 * entries. *changed tells whether the list of sets changed. */
STROBE_API int strobe_shm_reader_scan(strobe_shm_reader *r, int *changed);
STROBE_API uint32_t strobe_shm_reader_count(const strobe_shm_reader *r);
/* The i-th set read in place (valid until the next scan). Take consistent
 * copies with strobe_set_snapshot_data. */
STROBE_API strobe_set *strobe_shm_reader_set(const strobe_shm_reader *r, uint32_t i);
STROBE_API void strobe_shm_reader_close(strobe_shm_reader *r);

#ifdef __cplusplus
}
#endif
#endif
