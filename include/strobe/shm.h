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
 * mutex inside the index (a process that dies holding it wedges nobody)
 * and are safe from any thread, but one strobe_shm_pub or
 * strobe_shm_reader object is used by one thread at a time. Only
 * strobe_shm_heartbeat is async-signal-safe.
 *
 * Liveness is judged with kill(pid, 0), so all processes sharing an index
 * must share a pid namespace; a zombie still counts as alive.
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
 * Publish a set under `instance` (NULL: producer/schema) in index `index`
 * (NULL: the default above; a leading '/' is ignored; at most 200 bytes,
 * no '/', no spaces or control characters, else -EINVAL). The index is
 * created if absent. If it already holds a live entry with this label and
 * the same schema checksum, the caller joins it as another writer (its
 * writer count goes up) and *set points at the shared values; a label with
 * a different checksum gives -EEXIST. A full index (its capacity:
 * $STROBE_SHM_CAPACITY entries of whoever created it, 1024 by default; a
 * bad value there gives -EINVAL when the index is created) or a full
 * entry (64 writers) gives STROBE_ERR_LIMIT; an index owned by another
 * user or open to group/others gives -EACCES. The returned set is written
 * with the normal set API (several writers of one set: only
 * strobe_set_add_u64-style updates). *pub owns one descriptor and two
 * mappings until strobe_shm_unpublish. */
STROBE_API int strobe_shm_publish(const char *index, const strobe_schema *schema,
                                  const char *producer, const char *instance,
                                  strobe_shm_pub **pub, strobe_set **set);
/* Record writer activity without a transaction (idle applications call it
 * so that readers do not time them out). strobe_set_end does not touch
 * the index; a reader notices a changed data_gn between two of its scans,
 * but publishers should call this at least once per timeout period anyway.
 * Lock-free and async-signal-safe (a clock read, one load, one store). A
 * writer that was timed out is not told: its entry is gone and its writes
 * are seen by nobody. */
STROBE_API void strobe_shm_heartbeat(strobe_shm_pub *pub);
/* Leave: the writer count goes down; the last writer removes the entry and
 * its segment, and the index itself when no live reader remains. Frees
 * pub (and the set) in every case; returns 0, or the error of taking the
 * index lock (-ETIMEDOUT after 10 s), after which the entry is left to
 * the dead-writer cleanup. */
STROBE_API int strobe_shm_unpublish(strobe_shm_pub *pub);

/* ---- readers -------------------------------------------------------------
 * A reader registers its pid in the index (8 reader slots: STROBE_ERR_LIMIT
 * beyond), creating the index if absent. timeout_ns: how long a set may go
 * without writer activity before the reader removes it (0: only dead
 * writer pids count). Other errors as for strobe_shm_publish. */
STROBE_API int strobe_shm_reader_open(const char *index, uint64_t timeout_ns,
                                      strobe_shm_reader **out);
/* Rescan if the index generation changed and clean up dead or silent
 * entries. *changed (may be NULL) tells whether the list of sets changed.
 * Returns 0; STROBE_ERR_FORMAT when entries or segments were found corrupt
 * (they are skipped and removed, the list is valid without them); or a
 * resource error (-ENOMEM, -EMFILE, -ETIMEDOUT), after which the list may
 * be incomplete and the next scan tries again. */
STROBE_API int strobe_shm_reader_scan(strobe_shm_reader *r, int *changed);
STROBE_API uint32_t strobe_shm_reader_count(const strobe_shm_reader *r);
/* The i-th set read in place (valid until the next scan; NULL when i is
 * out of range). Its data section is mapped read-only: read it, never
 * write it (a store faults). Take consistent copies with
 * strobe_set_snapshot_data. */
STROBE_API strobe_set *strobe_shm_reader_set(const strobe_shm_reader *r, uint32_t i);
/* Deregister and unmap; the index goes too when it holds no entry and no
 * other live reader. */
STROBE_API void strobe_shm_reader_close(strobe_shm_reader *r);

#ifdef __cplusplus
}
#endif
#endif
