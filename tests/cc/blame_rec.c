/* blame_rec.c: mutual recursion through a pointer, and plain recursion */
static void odd(int n, long *acc);

static void even(int n, long *acc)
{
    if (n == 0)
        return;
    *acc += 2;
    odd(n - 1, acc);
}

static void odd(int n, long *acc)
{
    if (n == 0)
        return;
    *acc += 1;
    even(n - 1, acc);
}

static long fact(long n)
{
    if (n <= 1)
        return 1;
    return n * fact(n - 1);
}

int main(void)
{
    long total = 0;
    even(10, &total);
    long f = fact(5);
    return total + f == 135 ? 0 : 1;
}
