/* Reading a whole file (base/file.h). */
#include "base/file.h"

#include <stdio.h>
#include <stdlib.h>

#include "arbor/base.h"
#include "base/alloc.h"

int arb_file_read(const char *path, size_t max, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return ARB_ENOENT;
    size_t cap = 0, n = 0;
    char *b = NULL;
    int rc = 0;
    for (;;) {
        if (n + 1 >= cap) { /* room for a read and the NUL */
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb = arb_realloc(b, ncap);
            if (!nb) {
                rc = ARB_ENOMEM;
                break;
            }
            b = nb;
            cap = ncap;
        }
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) rc = ARB_EIO;
            break;
        }
        if (max && n > max) {
            rc = ARB_ENOMEM;
            break;
        }
    }
    fclose(f);
    if (rc < 0) {
        arb_free(b);
        return rc;
    }
    b[n] = '\0';
    *data = b;
    *len = n;
    return 0;
}
