/* SPDX-License-Identifier: MIT */
/* The MPI view of a `--mpi` experiment (see mpi.h). */
#include "analysis/mpi.h"

#include "analysis/align.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool strobe_mpi_present(const struct strobe_experiment *exp)
{
    for (size_t r = 0; r < exp->nregions; r++)
        if (exp->regions[r].kind == STROBE_REGION_MPI)
            return true;
    return false;
}

/* The rank of each process: its INIT record's, else the launcher's
 * (STROBE_NONE: not an MPI process). */
static int process_ranks(const struct strobe_experiment *exp, uint32_t *rank, uint32_t *nranks,
                         struct strobe_errbuf *eb)
{
    for (size_t p = 0; p < exp->nprocesses; p++) {
        const struct strobe_process_info *pi = &exp->processes[p];
        rank[p] = pi->has_rank ? pi->rank : STROBE_NONE;
        if (pi->has_rank && pi->world_size > *nranks)
            *nranks = pi->world_size;
    }
    for (uint32_t t = 0; t < exp->nthreads; t++) {
        if (!exp->threads[t].stream_path || exp->threads[t].index != 0)
            continue; /* MPI_Init is called by a process's main thread */
        struct strobe_stream_iter *it;
        int rc = strobe_stream_open(exp, t, &it, eb);
        if (rc)
            return rc;
        struct strobe_event ev;
        while ((rc = strobe_stream_next(it, &ev, eb)) == 1)
            if (ev.type == STROBE_EVENT_MPI && ev.mpi.op == STROBE_MPI_INIT) {
                rank[exp->threads[t].process] = ev.mpi.peer;
                if (ev.mpi.bytes > *nranks && ev.mpi.bytes <= INT32_MAX)
                    *nranks = (uint32_t)ev.mpi.bytes;
                break;
            }
        strobe_stream_close(it);
        if (rc < 0)
            return rc;
    }
    for (size_t p = 0; p < exp->nprocesses; p++)
        if (rank[p] != STROBE_NONE && rank[p] >= *nranks)
            *nranks = rank[p] + 1;
    return 0;
}

/* Time and calls of the MPI functions from the profile: the outermost MPI
 * calls of each path (an MPI library calling MPI_* inside counts once). */
static int add_calls(const struct strobe_experiment *exp, const struct strobe_profile *prof,
                     const uint32_t *rank, struct strobe_mpi_model *m, bool *calling)
{
    for (size_t n = 1; n < prof->nnodes; n++) {
        const struct strobe_cnode *c = &prof->nodes[n];
        if (exp->regions[c->region].kind != STROBE_REGION_MPI)
            continue;
        bool nested = false;
        for (uint32_t a = c->parent; a != STROBE_NONE && a != 0 && !nested; a = prof->nodes[a].parent)
            nested = exp->regions[prof->nodes[a].region].kind == STROBE_REGION_MPI;
        if (nested)
            continue;
        struct strobe_mpi_call *call = NULL;
        for (size_t i = 0; i < m->ncalls && !call; i++)
            if (m->calls[i].region == c->region)
                call = &m->calls[i];
        if (!call) {
            void *grown = realloc(m->calls, (m->ncalls + 1) * sizeof *m->calls);
            if (!grown)
                return -ENOMEM;
            m->calls = grown;
            call = &m->calls[m->ncalls++];
            *call = (struct strobe_mpi_call){.region = c->region};
            if (!(call->rank_ns = calloc(m->nranks ? m->nranks : 1, sizeof *call->rank_ns)))
                return -ENOMEM;
        }
        call->calls += c->total.visits;
        call->ns += c->total.incl_ns;
        for (uint32_t t = 0; t < exp->nthreads; t++) {
            uint32_t r = rank[exp->threads[t].process];
            if (r == STROBE_NONE || !c->per_thread[t].visits)
                continue;
            calling[t] = true;
            call->rank_ns[r] += c->per_thread[t].incl_ns;
            m->ranks[r].mpi_ns += c->per_thread[t].incl_ns;
            m->ranks[r].calls += c->per_thread[t].visits;
        }
    }
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const struct strobe_mpi_call *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    return x->region < y->region ? -1 : x->region > y->region;
}

/* One end of a point-to-point message, for the skew (mpi.h). */
struct end {
    uint32_t sender, receiver;
    int64_t tag;
    uint64_t comm;
    uint64_t ns;          /* aligned */
    int64_t unaligned_ns; /* as recorded */
};

struct ends {
    struct end *v;
    size_t n, cap;
};

static int add_end(struct ends *e, const struct strobe_experiment *exp, uint32_t process, uint32_t sender,
                   uint32_t receiver, const struct strobe_event *ev)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 256;
        void *grown = realloc(e->v, cap * sizeof *e->v);
        if (!grown)
            return -ENOMEM;
        e->v = grown;
        e->cap = cap;
    }
    e->v[e->n++] = (struct end){sender, receiver, ev->mpi.tag, ev->mpi.comm, ev->time_ns,
                                strobe_align_unaligned_ns(exp, process, ev->time_ns)};
    return 0;
}

static int by_channel(const void *a, const void *b)
{
    const struct end *x = a, *y = b;
    if (x->sender != y->sender)
        return x->sender < y->sender ? -1 : 1;
    if (x->receiver != y->receiver)
        return x->receiver < y->receiver ? -1 : 1;
    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static bool same_channel(const struct end *x, const struct end *y)
{
    return x->sender == y->sender && x->receiver == y->receiver && x->comm == y->comm && x->tag == y->tag;
}

/* Pairs the k-th send of each channel with its k-th receive. */
static void match(struct strobe_mpi_model *m, struct ends *sends, struct ends *recvs)
{
    if (!sends->n || !recvs->n) /* and no arrays to sort */
        return;
    qsort(sends->v, sends->n, sizeof *sends->v, by_channel);
    qsort(recvs->v, recvs->n, sizeof *recvs->v, by_channel);
    size_t i = 0, j = 0;
    while (i < sends->n && j < recvs->n) {
        const struct end *s = &sends->v[i], *r = &recvs->v[j];
        if (!same_channel(s, r)) {
            if (by_channel(s, r) < 0)
                i++;
            else
                j++;
            continue;
        }
        int64_t skew = (int64_t)(s->ns - r->ns), raw = s->unaligned_ns - r->unaligned_ns;
        if (m->pairs == 0 || skew > m->skew_ns)
            m->skew_ns = skew;
        if (m->pairs == 0 || raw > m->skew_unaligned_ns)
            m->skew_unaligned_ns = raw;
        m->pairs++;
        i++;
        j++;
    }
}

/* The messages and collectives of one thread's MPI records. */
static int add_records(const struct strobe_experiment *exp, uint32_t t, uint32_t r,
                       struct strobe_mpi_model *m, struct ends *sends, struct ends *recvs,
                       struct strobe_errbuf *eb)
{
    struct strobe_stream_iter *it;
    int rc = strobe_stream_open(exp, t, &it, eb);
    if (rc)
        return rc;
    struct strobe_event ev;
    while ((rc = strobe_stream_next(it, &ev, eb)) == 1) {
        if (ev.type != STROBE_EVENT_MPI)
            continue;
        const struct strobe_mpi_args *a = &ev.mpi;
        switch (a->op) {
        case STROBE_MPI_SEND:
        case STROBE_MPI_ISEND: {
            m->messages++;
            m->bytes += a->bytes;
            unsigned b = strobe_mpi_bucket(a->bytes);
            m->hist[b]++;
            m->hist_bytes[b] += a->bytes;
            if (r == STROBE_NONE)
                break;
            m->ranks[r].sent++;
            m->ranks[r].sent_bytes += a->bytes;
            if ((rc = add_end(sends, exp, exp->threads[t].process, r, a->peer, &ev)) < 0)
                goto out;
            if (a->peer < m->nranks) {
                m->matrix_messages[(size_t)r * m->nranks + a->peer]++;
                m->matrix_bytes[(size_t)r * m->nranks + a->peer] += a->bytes;
            }
            break;
        }
        case STROBE_MPI_RECV:
        case STROBE_MPI_IRECV:
            if (r != STROBE_NONE) {
                m->ranks[r].received++;
                m->ranks[r].received_bytes += a->bytes;
                if ((rc = add_end(recvs, exp, exp->threads[t].process, a->peer, r, &ev)) < 0)
                    goto out;
            }
            break;
        case STROBE_MPI_COLL_END:
            m->colls[a->coll].calls++;
            m->colls[a->coll].sent_bytes += a->bytes;
            m->colls[a->coll].received_bytes += a->received;
            break;
        }
    }
out:
    strobe_stream_close(it);
    return rc < 0 ? rc : 0;
}

int strobe_mpi_model_build(const struct strobe_experiment *exp, const struct strobe_profile *prof,
                           struct strobe_mpi_model **out, struct strobe_errbuf *eb)
{
    *out = NULL;
    if (!strobe_mpi_present(exp))
        return -ENOENT;
    struct strobe_mpi_model *m = calloc(1, sizeof *m);
    uint32_t *rank = calloc(exp->nprocesses ? exp->nprocesses : 1, sizeof *rank);
    int rc = m && rank ? process_ranks(exp, rank, &m->nranks, eb) : -ENOMEM;
    size_t cells = (size_t)m->nranks * m->nranks;
    if (rc == 0 && (!(m->ranks = calloc(m->nranks ? m->nranks : 1, sizeof *m->ranks)) ||
                    !(m->matrix_bytes = calloc(cells ? cells : 1, sizeof *m->matrix_bytes)) ||
                    !(m->matrix_messages = calloc(cells ? cells : 1, sizeof *m->matrix_messages))))
        rc = -ENOMEM;
    for (size_t p = 0; p < exp->nprocesses && rc == 0; p++)
        if (rank[p] != STROBE_NONE)
            m->ranks[rank[p]].present = true;
    struct ends sends = {0}, recvs = {0};
    for (uint32_t t = 0; t < exp->nthreads && rc == 0; t++) {
        const struct strobe_thread_info *ti = &exp->threads[t];
        if (ti->stream_path) {
            m->traced = true;
            rc = add_records(exp, t, rank[ti->process], m, &sends, &recvs, eb);
        }
    }
    if (rc == 0)
        match(m, &sends, &recvs);
    free(sends.v);
    free(recvs.v);
    bool *calling = rc == 0 ? calloc(exp->nthreads ? exp->nthreads : 1, sizeof *calling) : NULL;
    if (rc == 0)
        rc = calling ? add_calls(exp, prof, rank, m, calling) : -ENOMEM;
    /* the share of MPI is of the threads that call it (not of an MPI
     * library's own progress threads) */
    for (uint32_t t = 0; t < exp->nthreads && rc == 0; t++) {
        uint32_t r = rank[exp->threads[t].process];
        if (calling[t] && r != STROBE_NONE)
            m->ranks[r].thread_ns += exp->threads[t].end_ns - exp->threads[t].begin_ns;
    }
    free(calling);
    if (rc == 0)
        qsort(m->calls, m->ncalls, sizeof *m->calls, by_time);
    free(rank);
    if (rc) {
        strobe_mpi_model_free(m);
        return rc == -ENOMEM && !eb->msg[0] ? strobe__error(eb, rc, "out of memory") : rc;
    }
    *out = m;
    return 0;
}

void strobe_mpi_model_free(struct strobe_mpi_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->ncalls; i++)
        free(m->calls[i].rank_ns);
    free(m->calls);
    free(m->ranks);
    free(m->matrix_bytes);
    free(m->matrix_messages);
    free(m);
}
