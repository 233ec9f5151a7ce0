/* SPDX-License-Identifier: MIT */
/*
 * Internal layout of the shared-memory index (docs/formats/shm-index.md is
 * the same layout in prose and tables; keep the two in step and bump
 * STROBE__SHM_VERSION on any change). src/monitor/shm.c implements it; the
 * tests include it to inspect and corrupt an index on purpose.
 *
 * Everything here is read from memory that other processes write, so no
 * field may be trusted: shm.c copies an entry before it checks it and
 * uses only the checked copy.
 */
#ifndef STROBE_MONITOR_SHM_H
#define STROBE_MONITOR_SHM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "strobe/shm.h"

#define STROBE__SHM_MAGIC "STRBSHMI" /* 8 bytes, no NUL */
#define STROBE__SHM_VERSION 1
/* Entries per index: chosen by whoever creates it (STROBE_SHM_CAPACITY,
 * from MIN to MAX, default DEFAULT), read from the header by the others. */
#define STROBE__SHM_CAPACITY_DEFAULT 1024
#define STROBE__SHM_CAPACITY_MIN 1
#define STROBE__SHM_CAPACITY_MAX 65536
#define STROBE__SHM_READERS 8      /* reader table slots (bits of reader_mask) */
#define STROBE__SHM_WRITERS 64     /* writer pids per entry */
#define STROBE__SHM_NAME_MAX 200   /* index name, without the leading '/' */
#define STROBE__SHM_LABEL_SIZE 256 /* STROBE_SET_NAME_MAX + NUL */
#define STROBE__SHM_SEGMENT_SIZE 256

/* header.state: the creator stores READY last (release), after the rest of
 * the header and the mutex are initialised; openers wait for it (acquire). */
enum { STROBE__SHM_INIT = 0, STROBE__SHM_READY = 1 };
/* entry.state. FREE is 0 so that a zeroed entry is free. */
enum { STROBE__SHM_FREE = 0, STROBE__SHM_ACTIVE = 1 };

struct strobe__shm_reader_slot {
    int32_t pid; /* 0: slot free */
    uint32_t reserved;
    uint64_t last_read_ns; /* CLOCK_MONOTONIC, stored at every scan */
};

struct strobe__shm_hdr {
    char magic[8];         /* STROBE__SHM_MAGIC */
    uint32_t version;      /* STROBE__SHM_VERSION */
    uint32_t state;        /* STROBE__SHM_INIT / READY */
    uint32_t hdr_size;     /* sizeof(struct strobe__shm_hdr) */
    uint32_t entry_size;   /* sizeof(struct strobe__shm_entry) */
    uint32_t capacity;     /* entries (STROBE__SHM_CAPACITY_MIN..MAX) */
    uint32_t reader_slots; /* STROBE__SHM_READERS */
    uint32_t size;         /* ACTIVE entries (informative: recomputed, never trusted) */
    int32_t init_pid;      /* creator, so that openers can tell a dead one */
    uint64_t generation;   /* bumped on every add/remove of an entry */
    uint8_t reserved[16];
    union {
        pthread_mutex_t m; /* robust, process-shared */
        uint8_t bytes[64];
    } lock;
    struct strobe__shm_reader_slot readers[STROBE__SHM_READERS];
};

struct strobe__shm_entry {
    uint32_t state;       /* STROBE__SHM_FREE / ACTIVE */
    uint32_t writers;     /* writer reference count = live pids in writer_pids */
    uint32_t reader_mask; /* bit i: reader slot i has the set attached */
    uint32_t reserved;
    uint64_t schema_sum; /* strobe_set_schema_sum of the set */
    uint32_t meta_size;  /* the segment is meta_size + data_size bytes */
    uint32_t data_size;
    uint64_t entry_gn;      /* index generation at creation: unique id */
    uint64_t last_write_ns; /* CLOCK_MONOTONIC; strobe_shm_heartbeat, lock-free */
    uint64_t last_read_ns;  /* CLOCK_MONOTONIC; reader scans */
    uint64_t reserved2;
    int32_t writer_pids[STROBE__SHM_WRITERS]; /* 0: free slot */
    char label[STROBE__SHM_LABEL_SIZE];       /* set instance name, NUL-terminated */
    char segment[STROBE__SHM_SEGMENT_SIZE];   /* "/<index>.<slot>.<entry_gn>" */
};

_Static_assert(sizeof(pthread_mutex_t) <= 64, "the mutex fits its 64-byte field");
_Static_assert(offsetof(struct strobe__shm_hdr, lock) == 64, "header: lock at 64");
_Static_assert(offsetof(struct strobe__shm_hdr, readers) == 128, "header: readers at 128");
_Static_assert(sizeof(struct strobe__shm_hdr) == 256, "header is 256 bytes");
_Static_assert(offsetof(struct strobe__shm_entry, writer_pids) == 64, "entry: pids at 64");
_Static_assert(offsetof(struct strobe__shm_entry, label) == 320, "entry: label at 320");
_Static_assert(offsetof(struct strobe__shm_entry, segment) == 576, "entry: segment at 576");
_Static_assert(sizeof(struct strobe__shm_entry) == 832, "entry is 832 bytes");

/* Total size of an index object of `cap` entries. */
#define STROBE__SHM_INDEX_BYTES(cap) (sizeof(struct strobe__shm_hdr) + (size_t)(cap) * sizeof(struct strobe__shm_entry))

/* The capacity a new index gets: $STROBE_SHM_CAPACITY (a number from
 * STROBE__SHM_CAPACITY_MIN to MAX), else STROBE__SHM_CAPACITY_DEFAULT;
 * -EINVAL for anything else. */
int strobe__shm_capacity(uint32_t *out);

/* "/" + the index name that `index` resolves to (argument, then
 * $STROBE_SHM_INDEX, then "strobe-<euid>"); -EINVAL for an empty name, a
 * name with '/', control characters or longer than STROBE__SHM_NAME_MAX.
 * A leading '/' in the argument is accepted and ignored. */
int strobe__shm_index_name(const char *index, char *out, size_t cap);

#endif
