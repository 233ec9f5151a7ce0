static long p[64];
void f(long n)
{
    long s = 0, t = 0;
#pragma speculative for num_threads(2) schedule(static, 4)
    for (long i = 1; i < n; i += 1) {
        if (i & 1)
            continue;
        p[i] = p[i - 2] + s;
    }
#pragma speculative sections
    {
#pragma speculative section
        s = 1;
#pragma speculative section
        { t = s + 1; }
    }
#pragma tm_atomic safe_mode
    { p[0] += t; }
}
