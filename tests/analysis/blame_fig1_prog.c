/* SPDX-License-Identifier: MIT */
/*
 * The paper's Figure 1 (docs/blame.md; seed 003, Fig. 1 / Table I) for
 * test_blame: lines 16-20 are the paper's five statements, one per line,
 * so the hand-written blame unit of the test can key them by line:
 *   a = {16, 18, 19}, b = {17}, c = {16..20}, return = {16..21}.
 * Keep every line where it is.
 */





int fig1(void)
{   int a, b, c;
    a = 2;
    b = 3;
    if (a < b)
        a = b + 1;
    c = a + b;
    return c;
}
int main(void) { return fig1() == 7 ? 0 : 1; }
