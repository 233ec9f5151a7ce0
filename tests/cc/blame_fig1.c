/* blame_fig1.c: the paper's Figure 1 (seed 003). Lines 16-20 are its five
 * lines, so that the numbers are the paper's; tests/cc/test_blame.c expects
 * its Table I: a = {16, 18, 19}, b = {17}, c = {16..20}. The function
 * returns c, so its return value's blame is {16..21}.
 *
 * The samples of the paper (one on each of lines 17 to 20) charge
 * a = 2/4 = 50 %, b = 1/4 = 25 % and c = 4/4 = 100 % (docs/blame.md).
 *
 * Line 18 controls line 19: the condition is blamed on a, which line 19
 * writes. b is read by a (line 19) and c (line 20); its last consumer, c,
 * is its parent in the dependency forest, so a's blame does not hold
 * line 17.
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
