/* SPDX-License-Identifier: MIT */
/*
 * Every OpenMP construct `strobe instrument` measures, REPS times in a
 * team of 4 threads (tests/instrument/test_instrument.c, omp_constructs_exact
 * checks the visits per construct and thread). The markers in comments
 * name the lines for the test.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 10;
    long sum = 0, crit = 0, atom = 0, ord = 0, tasks = 0, locked = 0;
    omp_lock_t lock;
    omp_init_lock(&lock);
    for (int r = 0; r < reps; r++) {
#pragma omp parallel num_threads(4) reduction(+ : sum) /* M_PARALLEL */
        {
#pragma omp for schedule(static) /* M_FOR */
            for (int i = 0; i < 100; i++)
                sum += i;
#pragma omp sections /* M_SECTIONS */
            {
#pragma omp section /* M_SECTION1 */
                sum += 1;
#pragma omp section /* M_SECTION2 */
                sum += 2;
            }
#pragma omp single /* M_SINGLE */
            {
                for (int t = 0; t < 4; t++) {
#pragma omp task shared(tasks) /* M_TASK */
                    {
#pragma omp atomic /* M_TASK_ATOMIC */
                        tasks++;
                    }
                }
#pragma omp taskwait /* M_TASKWAIT */
            }
#pragma omp master /* M_MASTER */
            sum += 1000;
#pragma omp critical(update) /* M_CRITICAL */
            crit++;
#pragma omp atomic /* M_ATOMIC */
            atom++;
            omp_set_lock(&lock); /* M_LOCK */
            locked++;
            omp_unset_lock(&lock);
#pragma omp barrier /* M_BARRIER */
#pragma omp for ordered schedule(static, 1) /* M_ORDERED_FOR */
            for (int i = 0; i < 8; i++) {
#pragma omp ordered /* M_ORDERED */
                ord = (ord * 3 + i) % 1000003;
            }
#pragma omp flush /* M_FLUSH */
#pragma omp taskgroup /* M_TASKGROUP */
            {
#pragma omp task /* M_GROUP_TASK */
                {
#pragma omp atomic /* M_GROUP_ATOMIC */
                    tasks++;
                }
            }
        }
    }
    /* not measured */
#pragma strobe off
    omp_set_lock(&lock);
    omp_unset_lock(&lock);
#pragma strobe on
    omp_destroy_lock(&lock);
    printf("sum %ld crit %ld atom %ld ord %ld tasks %ld locked %ld\n", sum, crit, atom, ord, tasks, locked);
    return 0;
}
