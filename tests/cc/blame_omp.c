/* blame_omp.c: an OpenMP loop writing a heap array through a shared pointer */
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = 1000;
    double *a = malloc(n * sizeof *a);
    double scale = argc;
#pragma omp parallel for
    for (int i = 0; i < n; i++)
        a[i] = scale * i;
    double s = a[n - 1];
    free(a);
    return s > 0 ? 0 : 1;
}
