/* SPDX-License-Identifier: MIT */
/* The OpenMP fixture of test_blame_attribution: a parallel loop writing a
 * heap array through the pointer it captures, built by `strobe cc -fopenmp`
 * and sampled: its samples reach main's a[] through the spawn record. */
#include <math.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = 20000000;
    double *a = malloc(n * sizeof *a);
    double scale = argc;
    for (int r = 0; r < 3; r++) {
#pragma omp parallel for
        for (int i = 0; i < n; i++)
            a[i] = scale * sin((double)i);
    }
    double s = a[n - 1];
    free(a);
    return s > 2.0; /* |sin| <= 1: always 0 */
}
