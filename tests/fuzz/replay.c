/* SPDX-License-Identifier: MIT */
/*
 * Replays fuzz inputs without libFuzzer: every file named on the command
 * line (or found in a directory named there) goes through the target's
 * LLVMFuzzerTestOneInput once. ctest runs it on each seed corpus in every
 * build, so the ASan/UBSan build checks the corpus on each `make check`.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, n;
    do {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            uint8_t *b = realloc(buf, cap);
            if (!b) {
                fclose(f);
                free(buf);
                return 1;
            }
            buf = b;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int bad = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad |= replay_file(argv[i]);
            count++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *de;
        while (d && (de = readdir(d)) != NULL) {
            if (de->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], de->d_name);
            bad |= replay_file(path);
            count++;
        }
        if (d)
            closedir(d);
    }
    printf("replayed %d inputs\n", count);
    return bad || count == 0;
}
