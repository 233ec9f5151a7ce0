void f(void)
{
#pragma strobe region end(a)
}
