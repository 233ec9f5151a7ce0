/* blame_cd.c: control dependence: switch, &&, early return, goto, an
 * error exit, an endless loop */
#include <stdlib.h>

int sw(int k)
{
    int r = 0;
    switch (k) {
    case 1:
        r = 10;
        break;
    default:
        r = 30;
    }
    return r;
}

int both(int a, int b)
{
    int r = 0;
    if (a > 0 && b > 0)
        r = 1;
    return r;
}

int early(int a)
{
    int r = 1;
    if (a < 0)
        return 0;
    r = a * 2;
    return r;
}

int loop(int n)
{
    int i = 0;
    int s = 0;
again:
    s += i;
    if (++i < n)
        goto again;
    return s;
}

int checked(int n)
{
    int *p = malloc(sizeof *p * n);
    if (p == NULL)
        exit(1);
    int t = n + 1;
    free(p);
    return t;
}

void forever(volatile int *flag, int *out)
{
    int c = 0;
    for (;;) {
        c += *flag;
        if (c > 100)
            *out = c;
    }
}
