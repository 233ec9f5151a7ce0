/* SPDX-License-Identifier: MIT */
/*
 * A program with known visit counts for `strobe report --score`: one tiny
 * function called very often and one medium function called less often,
 * single-threaded, built with -finstrument-functions and run by
 * `strobe run` (not linked with libstrobe):
 *
 *   main      1
 *     tiny    100000   (an add: a few ns per visit)
 *     medium  1000     (a 2000-step loop: about a µs per visit)
 *
 * tiny makes 100 times the events of medium at a much shorter time per
 * visit, so a target that removing tiny's overhead (or bytes) meets and
 * removing half of it does not is met by excluding exactly tiny.
 */
#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

static NOINLINE void tiny(unsigned long x)
{
    sink += x;
}

static NOINLINE void medium(unsigned long x)
{
    for (unsigned long i = 0; i < 2000; i++)
        sink += x ^ i;
}

int main(void)
{
    for (unsigned long i = 0; i < 100000; i++)
        tiny(i);
    for (unsigned long i = 0; i < 1000; i++)
        medium(i);
    return 0;
}
