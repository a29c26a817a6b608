/* n-queens over linked lists (seed 003) with five memory managers:
 *   boehm  - GC_MALLOC, the Boehm collector
 *   boehm-inline - gc_inline.h's GC_MALLOC_WORDS (inline free lists, boehm.h)
 *   malloc - malloc, never freed
 *   free   - malloc, and every cell freed as soon as it is dead
 *   bump   - a bump allocator over one big region, never freed
 * usage: nqueens MANAGER N REPEAT (the solve is timed REPEAT times in-process) */
#include <string.h>
#include "boehm.h"

typedef struct Cell { struct Cell *next; int x, y; } Cell;
enum { BOEHM, BOEHM_INLINE, MALLOC, FREE, BUMP } mode;
static BoehmFreeLists boehm_fl; /* static: scanned as a root */
static char *bump_ptr, *bump_end;

static Cell *cons(int x, int y, Cell *next) {
    Cell *c;
    switch (mode) {
    case BOEHM: c = GC_MALLOC(sizeof(Cell)); break;
    case BOEHM_INLINE: BOEHM_NEW(c, sizeof(Cell), boehm_fl); break;
    case BUMP:
        if (bump_ptr + sizeof(Cell) > bump_end) {
            fprintf(stderr, "bump region exhausted\n");
            exit(1);
        }
        c = (Cell *)bump_ptr;
        bump_ptr += sizeof(Cell);
        break;
    default: c = malloc(sizeof(Cell));
    }
    c->next = next;
    c->x = x;
    c->y = y;
    return c;
}
static void free_list(Cell *l) {
    while (l) {
        Cell *n = l->next;
        free(l);
        l = n;
    }
}
static int safe(int x1, int y1, int x2, int y2) { return x1 != x2 && y1 != y2 && x2 - x1 != y2 - y1 && x1 - y2 != x2 - y1; }
static Cell *filter(int x1, int y1, Cell *ps) {
    if (!ps) return NULL;
    Cell *t = filter(x1, y1, ps->next);
    return safe(x1, y1, ps->x, ps->y) ? cons(ps->x, ps->y, t) : t;
}
static int length(Cell *l) {
    int n = 0;
    for (; l; l = l->next) n++;
    return n;
}
static unsigned long long search(int n, Cell *qs, Cell *ps, unsigned long long a) {
    if (!ps) return length(qs) == n ? a + 1 : a;
    a = search(n, qs, ps->next, a);
    Cell *qs2 = cons(ps->x, ps->y, qs);
    Cell *filtered = filter(ps->x, ps->y, ps->next);
    a = search(n, qs2, filtered, a);
    if (mode == FREE) {
        free_list(filtered); /* consumed: nothing else points into it */
        free(qs2);           /* only its tail (qs) is shared */
    }
    return a;
}

int main(int argc, char **argv) {
    const char *m = argc > 1 ? argv[1] : "boehm";
    int n = argc > 2 ? atoi(argv[2]) : 8;
    int repeat = argc > 3 ? atoi(argv[3]) : 1;
    mode = !strcmp(m, "boehm")          ? BOEHM
           : !strcmp(m, "boehm-inline") ? BOEHM_INLINE
           : !strcmp(m, "malloc")       ? MALLOC
           : !strcmp(m, "free")         ? FREE
                                        : BUMP;
    if (mode == BOEHM || mode == BOEHM_INLINE) boehm_init();
    if (mode == BUMP) {
        size_t len = (size_t)16 << 30; /* reserved, touched as used */
        bump_ptr = malloc(len);
        bump_end = bump_ptr + len;
    }
    Cell *ps = NULL;
    for (int i = n; i >= 1; i--)
        for (int j = n; j >= 1; j--) ps = cons(i, j, ps);
    double t = now_ns();
    unsigned long long solutions = 0;
    for (int r = 0; r < repeat; r++) solutions = search(n, NULL, ps, 0);
    printf("TIME %.3f\n", (now_ns() - t) / 1e6);
    if (mode == BOEHM || mode == BOEHM_INLINE)
        boehm_result(solutions);
    else
        print_result(solutions, -1, -1);
    return 0;
}
