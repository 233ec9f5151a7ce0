/* blame_fix.c: the blame fixture of docs/blame.md; one statement per line */
#include <stdlib.h>
struct pt { double x; double y; };
double scale;

static void fill(double *dst, int n)
{
    for (int k = 0; k < n; k++)
        dst[k] = scale * k;
}

int main(int argc, char **argv)
{
    int n = 4;
    struct pt p;
    double arr[4];
    double *q = arr;
    double *h = malloc(n * sizeof *h);
    scale = 2.0;
    fill(h, n);
    p.x = h[1];
    q[2] = p.x;
    if (argc > 1)
        p.y = arr[2];
    free(h);
    return (int)p.y;
}
