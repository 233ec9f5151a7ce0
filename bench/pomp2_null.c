/* SPDX-License-Identifier: MIT */
/*
 * A null POMP2 library: every POMP2_* event function of OPARI2 2.0.7's
 * <opari2/pomp2_lib.h> with an empty body, the anchor "OPARI2 without a
 * measurement system" of bench/instrument.sh and
 * tests/instrument/opari2_compare.sh. It is compiled into the program next
 * to OPARI2's output and the pomp2_init_regions.c that `opari2-config --nm`
 * and `--region-initialization` make at link time.
 *
 * What a POMP2 library must do besides (OPARI2's documentation): call
 * POMP2_Init_regions() once before the first event, which calls
 * POMP2_Assign_handle() for every region of every instrumented file, and may
 * size its tables by POMP2_Get_num_regions(). The handles are given the
 * address of a static byte, so an instrumented file sees initialised
 * handles as with a real library. Locks are passed through to OpenMP, as the
 * instrumented program's omp_*_lock calls become POMP2_*_lock calls.
 */
#include <omp.h>
#include <opari2/pomp2_lib.h>

static char null_region;
static size_t null_regions; /* written once, before main */

__attribute__((constructor)) static void null_init(void)
{
    null_regions = POMP2_Get_num_regions();
    POMP2_Init_regions();
}

void POMP2_Assign_handle(POMP2_Region_handle *h, const char ctc[])
{
    (void)ctc;
    *h = &null_region;
}

POMP2_Task_handle POMP2_Get_new_task_handle(void)
{
    return 0;
}

int POMP2_Lib_get_max_threads(void)
{
    return omp_get_max_threads();
}

/* The event functions, by their argument lists. */
#define NULL_H(f)                                                                                            \
    void f(POMP2_Region_handle *h)                                                                           \
    {                                                                                                        \
        (void)h;                                                                                             \
    }
#define NULL_HC(f)                                                                                           \
    void f(POMP2_Region_handle *h, const char ctc[])                                                         \
    {                                                                                                        \
        (void)h;                                                                                             \
        (void)ctc;                                                                                           \
    }
#define NULL_HT(f)                                                                                           \
    void f(POMP2_Region_handle *h, POMP2_Task_handle t)                                                      \
    {                                                                                                        \
        (void)h;                                                                                             \
        (void)t;                                                                                             \
    }
#define NULL_HTP(f)                                                                                          \
    void f(POMP2_Region_handle *h, POMP2_Task_handle *t)                                                     \
    {                                                                                                        \
        (void)h;                                                                                             \
        (void)t;                                                                                             \
    }
#define NULL_HTPC(f)                                                                                         \
    void f(POMP2_Region_handle *h, POMP2_Task_handle *t, const char ctc[])                                   \
    {                                                                                                        \
        (void)h;                                                                                             \
        (void)t;                                                                                             \
        (void)ctc;                                                                                           \
    }
#define NULL_TASK_CREATE(f)                                                                                  \
    void f(POMP2_Region_handle *h, POMP2_Task_handle *new_task, POMP2_Task_handle *old_task, int pomp2_if,   \
           const char ctc[])                                                                                 \
    {                                                                                                        \
        (void)h;                                                                                             \
        (void)new_task;                                                                                      \
        (void)old_task;                                                                                      \
        (void)pomp2_if;                                                                                      \
        (void)ctc;                                                                                           \
    }

NULL_HC(POMP2_Atomic_enter)
NULL_H(POMP2_Atomic_exit)
NULL_HTPC(POMP2_Barrier_enter)
NULL_HT(POMP2_Barrier_exit)
NULL_HTP(POMP2_Implicit_barrier_enter)
NULL_HT(POMP2_Implicit_barrier_exit)
NULL_HC(POMP2_Flush_enter)
NULL_H(POMP2_Flush_exit)
NULL_H(POMP2_Critical_begin)
NULL_H(POMP2_Critical_end)
NULL_HC(POMP2_Critical_enter)
NULL_H(POMP2_Critical_exit)
NULL_HC(POMP2_For_enter)
NULL_H(POMP2_For_exit)
NULL_HC(POMP2_Master_begin)
NULL_H(POMP2_Master_end)
NULL_H(POMP2_Parallel_begin)
NULL_H(POMP2_Parallel_end)
NULL_HT(POMP2_Parallel_join)
NULL_HC(POMP2_Section_begin)
NULL_H(POMP2_Section_end)
NULL_HC(POMP2_Sections_enter)
NULL_H(POMP2_Sections_exit)
NULL_H(POMP2_Single_begin)
NULL_H(POMP2_Single_end)
NULL_HC(POMP2_Single_enter)
NULL_H(POMP2_Single_exit)
NULL_HC(POMP2_Workshare_enter)
NULL_H(POMP2_Workshare_exit)
NULL_H(POMP2_Ordered_begin)
NULL_H(POMP2_Ordered_end)
NULL_HC(POMP2_Ordered_enter)
NULL_H(POMP2_Ordered_exit)
NULL_TASK_CREATE(POMP2_Task_create_begin)
NULL_HT(POMP2_Task_create_end)
NULL_HT(POMP2_Task_begin)
NULL_H(POMP2_Task_end)
NULL_TASK_CREATE(POMP2_Untied_task_create_begin)
NULL_HT(POMP2_Untied_task_create_end)
NULL_HT(POMP2_Untied_task_begin)
NULL_H(POMP2_Untied_task_end)
NULL_HTPC(POMP2_Taskwait_begin)
NULL_HT(POMP2_Taskwait_end)

void POMP2_Parallel_fork(POMP2_Region_handle *h, int if_clause, int num_threads, POMP2_Task_handle *old_task,
                         const char ctc[])
{
    (void)h;
    (void)if_clause;
    (void)num_threads;
    (void)old_task;
    (void)ctc;
}

/* Locks: the program's omp_*_lock calls, renamed by OPARI2. */
void POMP2_Init_lock(omp_lock_t *s)
{
    omp_init_lock(s);
}
void POMP2_Destroy_lock(omp_lock_t *s)
{
    omp_destroy_lock(s);
}
void POMP2_Set_lock(omp_lock_t *s)
{
    omp_set_lock(s);
}
void POMP2_Unset_lock(omp_lock_t *s)
{
    omp_unset_lock(s);
}
int POMP2_Test_lock(omp_lock_t *s)
{
    return omp_test_lock(s);
}
void POMP2_Init_nest_lock(omp_nest_lock_t *s)
{
    omp_init_nest_lock(s);
}
void POMP2_Destroy_nest_lock(omp_nest_lock_t *s)
{
    omp_destroy_nest_lock(s);
}
void POMP2_Set_nest_lock(omp_nest_lock_t *s)
{
    omp_set_nest_lock(s);
}
void POMP2_Unset_nest_lock(omp_nest_lock_t *s)
{
    omp_unset_nest_lock(s);
}
int POMP2_Test_nest_lock(omp_nest_lock_t *s)
{
    return omp_test_nest_lock(s);
}
