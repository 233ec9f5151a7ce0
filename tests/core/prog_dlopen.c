/* SPDX-License-Identifier: MIT */
/*
 * dlopen() of an instrumented plugin after start-up (-finstrument-functions,
 * preloaded). `core_prog_dlopen PLUGIN`: main > plugin_work > plugin_leaf
 * x 5, with plugin_* in PLUGIN (plugin.c). Prints "fn <name> <address>"
 * for main and both plugin functions.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    void (*work)(unsigned long) = (void (*)(unsigned long))dlsym(h, "plugin_work");
    void *leaf = dlsym(h, "plugin_leaf");
    if (!work || !leaf)
        return 1;
    printf("fn main %p\nfn plugin_work %p\nfn plugin_leaf %p\n", (void *)main, (void *)work, leaf);
    fflush(stdout);
    work(5);
    return 0;
}
