#define M(s) _Pragma("strobe region(m)") s
int k(int n)
{
    int t = 0;
#pragma strobe region begin(outer)
    for (int i = 0; i < n; i++) {
#pragma strobe region(inner)
        if (i & 1)
            continue;
        _Pragma("strobe region(b)") { t += i; }
    }
#pragma strobe region end(outer)
    return t;
}
