/* SPDX-License-Identifier: MIT */
/*
 * bench/bbpass.sh's kernel: three loops with different address patterns
 * for the block and memory tracing of `strobe cc --trace=bb,mem`:
 * a dense matrix multiply (unit and row strides), a linked-list walk
 * over a shuffled array of structs (far jumps: escaped addresses), and
 * a histogram of pseudo-random keys (scattered stores into a small
 * table). Prints a checksum, so that every build can be compared.
 *   kernel SCALE   (work grows linearly with SCALE)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 96

struct node {
    struct node *next;
    long value;
    int weight;
};

static double a[N][N], b[N][N], c[N][N];

__attribute__((noinline)) static double matmul(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++)
                s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
    return c[N / 2][N / 3];
}

__attribute__((noinline)) static long walk(struct node *head)
{
    long s = 0;
    for (struct node *p = head; p; p = p->next)
        s += p->value * p->weight;
    return s;
}

__attribute__((noinline)) static unsigned histogram(unsigned *h, unsigned n, uint64_t seed)
{
    for (unsigned i = 0; i < n; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        h[(seed >> 33) % 4096]++;
    }
    return h[17];
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = i + j;
            b[i][j] = i - j;
        }
    unsigned nn = 100000;
    struct node *nodes = calloc(nn, sizeof *nodes);
    unsigned *order = malloc(nn * sizeof *order);
    unsigned *h = calloc(4096, sizeof *h);
    if (!nodes || !order || !h)
        return 1;
    for (unsigned i = 0; i < nn; i++)
        order[i] = i;
    uint64_t r = 42;
    for (unsigned i = nn - 1; i > 0; i--) {
        r = r * 6364136223846793005u + 1;
        unsigned j = (unsigned)((r >> 33) % (i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (unsigned i = 0; i < nn; i++) {
        nodes[order[i]].value = i;
        nodes[order[i]].weight = (int)(i % 7);
        nodes[order[i]].next = i + 1 < nn ? &nodes[order[i + 1]] : NULL;
    }
    double m = 0;
    long w = 0;
    unsigned hs = 0;
    for (int s = 0; s < scale; s++) {
        m += matmul();
        w += walk(&nodes[order[0]]);
        hs += histogram(h, 1000000, (uint64_t)s);
    }
    printf("checksum %.0f %ld %u\n", m, w, hs);
    free(nodes);
    free(order);
    free(h);
    return 0;
}
