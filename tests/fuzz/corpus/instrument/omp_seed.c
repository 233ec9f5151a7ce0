#define PAR _Pragma("omp parallel")
#define P(x) _Pragma(#x)
int g;
void f(int n, int *a)
{
    PAR
    {
#pragma omp for schedule(static) nowait
        for (int i = 0; i < n; i++)
            a[i]++;
        P(omp critical(c))
        g++;
#pragma omp single copyprivate(n)
        n = 1;
#pragma omp barrier
#pragma omp atomic
        g++;
    }
#pragma omp parallel for firstprivate(n) lastprivate(n) default(none) shared(a) \
    collapse(2)
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            a[i] += j;
#pragma omp parallel sections
    {
#pragma omp section
        g++;
    }
}
