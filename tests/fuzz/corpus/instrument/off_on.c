int g(int x)
{
    _Pragma("strobe off ")
#pragma strobe region(z)
    x++;
    _Pragma("strobe on")
#pragma strobe region begin(a)
    if (x) { x--; }
#pragma strobe region end(a)
    return x;
}
