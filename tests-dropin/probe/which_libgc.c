/* Says which libgc.so.1 this process really runs with: the path the dynamic
 * loader opened it by (dladdr on GC_malloc, as the loader names it, so a
 * symbolic link in LD_LIBRARY_PATH shows as itself) and the file mapped
 * (from /proc/self/maps, symbolic links resolved). Then makes one
 * allocation and one collection so a broken library shows here first.
 * Used by scripts/dropin/run-tests.sh. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <gc.h>

int main(void) {
    Dl_info info;
    char line[4096];
    FILE *maps;
    void *p;

    GC_INIT();
    if (dladdr((void *)&GC_malloc, &info) == 0 || info.dli_fname == NULL) {
        fprintf(stderr, "which_libgc: dladdr found no object for GC_malloc\n");
        return 1;
    }
    printf("loaded: %s\n", info.dli_fname);

    maps = fopen("/proc/self/maps", "r");
    if (maps != NULL) {
        while (fgets(line, sizeof line, maps) != NULL) {
            char *path = strchr(line, '/');
            if (path != NULL && strstr(path, "libgc") != NULL) {
                printf("mapped: %s", path);
                break;
            }
        }
        fclose(maps);
    }

    p = GC_MALLOC(64);
    if (p == NULL) {
        fprintf(stderr, "which_libgc: GC_MALLOC(64) returned NULL\n");
        return 1;
    }
    GC_gcollect();
    printf("allocated and collected: ok\n");
    return 0;
}
