/*
 * Scenario files read (libinih). inih reads one line per call of our
 * reader, so the reader knows the line number every handler call belongs
 * to, checks section headers (inih only reports sections that have keys)
 * and marks indented continuation lines. `include = FILE` reads another
 * file in its place (relative to the including file's directory), which
 * names its own lines in errors; a file that includes itself, directly or
 * through others, is refused.
 */
#define _DEFAULT_SOURCE 1 /* stat */
#include "scn_int.h"

#include "base/file.h"

#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "base/alloc.h"

/* A scenario file is text of a few kilobytes: anything past this is not one. */
#define SCENARIO_MAX_BYTES ((size_t)16 << 20)

/* Includes nest at most this deep (a loop is refused before). */
#define INCLUDE_DEPTH_MAX 16

struct ini_state {
    const struct ini_state *parent; /* the file that included this one, or NULL */
    int have_id;                    /* this text is a file: dev and ino name it */
    dev_t dev;
    ino_t ino;
    unsigned depth;
    arb_scenario *sc;
    const char *name, *dir;
    const char *p;   /* the text not read yet */
    unsigned line;   /* of the line inih is working on */
    int cont;        /* that line is an indented continuation */
    int last_key;    /* the key of the previous key line, for continuations */
    unsigned dangle; /* the line of a list that ended with ',' (a continuation must follow), or 0 */
    int dangle_key;  /* its key */
    int rc;          /* first error */
    char *err;
    size_t errlen;
};

static void first_error(struct ini_state *st, int code, const char *fmt, ...) ARB_PRINTF(3, 4);

static void first_error(struct ini_state *st, int code, const char *fmt, ...)
{
    if (st->rc) return;
    st->rc = code;
    if (st->err && st->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(st->err, st->errlen, fmt, ap);
        va_end(ap);
    }
}

static char *reader(char *str, int num, void *stream)
{
    struct ini_state *st = stream;
    if (!*st->p) return NULL;
    const char *nl = strchr(st->p, '\n');
    size_t len = nl ? (size_t)(nl - st->p) : strlen(st->p);
    st->line++;
    if (len + 2 > (size_t)num) {
        first_error(st, ARB_EPARSE, "%s:%u: the line is longer than %d characters", st->name,
                    st->line, num - 2);
        str[0] = '\0'; /* consume it whole, hand inih a blank line */
    } else {
        memcpy(str, st->p, len);
        str[len] = '\n';
        str[len + 1] = '\0';
    }
    st->p += len + (nl ? 1 : 0);
    /* section header check (inih reports only sections that have keys) */
    const char *s = str;
    while (*s == ' ' || *s == '\t')
        s++;
    st->cont = (s != str) && *s && *s != '\n' && *s != '\r' && *s != ';' && *s != '#';
    if (*s == '[') {
        const char *e = strchr(s, ']');
        if (!e)
            first_error(st, ARB_EPARSE, "%s:%u: a section header without its ']'", st->name,
                        st->line);
        char sec[64];
        size_t n = e ? (size_t)(e - s - 1) : 0;
        if (e && n < sizeof sec) {
            memcpy(sec, s + 1, n);
            sec[n] = '\0';
            if (!scn_known_section(sec))
                first_error(st, ARB_EPARSE,
                            "%s:%u: unknown section [%s] (fabric, routing, transport, switch, "
                            "workload, host, arbor, run)",
                            st->name, st->line, sec);
        }
        st->last_key = -1;
    }
    return str;
}

/* A list's line ended with ',' and no continuation line followed. */
static void dangling(struct ini_state *st)
{
    arb_scenario_key_info ki;
    arb_scenario_key((size_t)st->dangle_key, &ki);
    first_error(st, ARB_EPARSE,
                "%s:%u: %s.%s: the list ends with ',' and no continuation line (indented) follows",
                st->name, st->dangle, ki.section, ki.key);
}

static int load_text(struct ini_state *st, const char *text);

/* The directory of `path` (malloc'd): "" for a bare name, "/" for the root. */
static char *dir_of(const char *path)
{
    char *dir = arb_strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (!dir) return NULL;
    if (slash == dir)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        dir[0] = '\0';
    return dir;
}

/* `include = FILE`: FILE's keys, read in place, relative to st's directory. */
static int include_file(struct ini_state *st, const char *value)
{
    size_t n = strlen(st->dir ? st->dir : "") + strlen(value) + 2;
    char *path = arb_malloc(n), *text = NULL, *dir = NULL;
    if (!path) return ARB_ENOMEM;
    if (value[0] == '/' || !st->dir || !*st->dir)
        snprintf(path, n, "%s", value);
    else
        snprintf(path, n, "%s/%s", st->dir, value);
    struct ini_state in = {.parent = st,
                           .depth = st->depth + 1,
                           .sc = st->sc,
                           .name = path,
                           .last_key = -1,
                           .err = st->err,
                           .errlen = st->errlen};
    struct stat sb;
    size_t len;
    int rc = 0;
    if (!*value) {
        rc = ARB_EPARSE;
        first_error(st, rc, "%s:%u: include: no file named", st->name, st->line);
    } else if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) { /* a FIFO or device could block */
        rc = ARB_EIO;
        first_error(st, rc, "%s:%u: include: %s: not a regular file", st->name, st->line, path);
    } else if (stat(path, &sb) < 0 || arb_file_read(path, SCENARIO_MAX_BYTES, &text, &len) < 0) {
        rc = ARB_EIO;
        first_error(st, rc, "%s:%u: include: %s: cannot open: %s", st->name, st->line, path,
                    strerror(errno));
    } else if (memchr(text, '\0', len)) {
        rc = ARB_EPARSE;
        first_error(st, rc, "%s:%u: include: %s: a NUL byte: not a scenario file", st->name,
                    st->line, path);
    }
    for (const struct ini_state *p = st; rc == 0 && p; p = p->parent)
        if (p->have_id && p->dev == sb.st_dev && p->ino == sb.st_ino) {
            rc = ARB_EPARSE;
            first_error(st, rc, "%s:%u: include: %s: an include loop (%s is being read already)",
                        st->name, st->line, path, p->name);
        }
    if (rc == 0 && in.depth > INCLUDE_DEPTH_MAX) {
        rc = ARB_EPARSE;
        first_error(st, rc, "%s:%u: include: %s: includes nested more than %d deep", st->name,
                    st->line, path, INCLUDE_DEPTH_MAX);
    }
    if (rc == 0 && !(dir = dir_of(path))) rc = ARB_ENOMEM;
    if (rc == 0) {
        in.have_id = 1;
        in.dev = sb.st_dev;
        in.ino = sb.st_ino;
        in.dir = dir;
        rc = load_text(&in, text);
        if (rc < 0) st->rc = rc; /* its message is written */
    }
    arb_free(dir);
    arb_free(text);
    arb_free(path);
    return rc;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct ini_state *st = user;
    if (st->rc) return 1; /* keep only the first error; let inih finish */
    if (strcmp(name, "include") == 0 && !st->cont) {
        st->last_key = -1;
        int rc = include_file(st, value);
        if (rc == ARB_ENOMEM) first_error(st, rc, "out of memory");
        return rc == 0;
    }
    if (!*section) {
        first_error(st, ARB_EPARSE, "%s:%u: %s: a key before any [section]", st->name, st->line,
                    name);
        return 0;
    }
    if (!scn_known_section(section)) return 1; /* reported by the reader */
    int k = scn_find_key(section, name);
    if (k < 0) {
        char hint[160];
        first_error(st, ARB_EPARSE, "%s:%u: %s.%s: unknown key in [%s]%s", st->name, st->line,
                    section, name, section, scn_key_hint(section, name, hint, sizeof hint));
        return 0;
    }
    int more = st->cont && k == st->last_key; /* this line continues the key's list */
    if (st->dangle && !more) {
        dangling(st);
        return 0;
    }
    st->dangle = 0;
    char *text;
    if (more) {
        if (!scn_key_is_list(k)) {
            first_error(st, ARB_EPARSE, "%s:%u: %s.%s: a continuation line for a single value",
                        st->name, st->line, section, name);
            return 0;
        }
        const char *old = st->sc->v[k].text;
        size_t n = strlen(old) + strlen(value) + 2;
        text = arb_malloc(n);
        if (text) snprintf(text, n, "%s%s%s", old, *old ? "," : "", value);
    } else {
        text = arb_strdup(value);
    }
    if (!text) {
        first_error(st, ARB_ENOMEM, "out of memory");
        return 0;
    }
    if (scn_key_is_list(k)) { /* "a, b," goes on on the next line: checked without the ',' */
        size_t n = strlen(text);
        while (n && (text[n - 1] == ' ' || text[n - 1] == '\t'))
            n--;
        if (n && text[n - 1] == ',') {
            text[n - 1] = '\0';
            st->dangle = st->line;
            st->dangle_key = k;
        }
    }
    char msg[256];
    int rc = scn_check_value(k, text, msg, sizeof msg);
    if (rc == 0) rc = scn_set_value(st->sc, k, text, st->name, st->line, st->dir);
    arb_free(text);
    if (rc < 0) {
        if (rc == ARB_ENOMEM)
            first_error(st, rc, "out of memory");
        else
            first_error(st, rc, "%s:%u: %s.%s: %s", st->name, st->line, section, name, msg);
        return 0;
    }
    st->last_key = k;
    return 1;
}

/* The text of st (its name, directory, file identity and parent set). */
static int load_text(struct ini_state *st, const char *text)
{
    st->p = text;
    st->last_key = -1;
    int line = ini_parse_stream(reader, st, handler, st);
    if (st->dangle) dangling(st);
    if (st->rc) return st->rc;
    if (line > 0)
        return arb_errf(st->err, st->errlen, ARB_EPARSE,
                        "%s:%d: malformed line (expected [section] or key = value)", st->name,
                        line);
    if (line < 0) return arb_errf(st->err, st->errlen, ARB_ENOMEM, "out of memory");
    return 0;
}

/* The text of file `path` (NULL: not a file), read in directory dir. */
static int load_named(arb_scenario *sc, const char *text, const char *name, const char *dir,
                      const char *path, char *err, size_t errlen)
{
    struct ini_state st;
    memset(&st, 0, sizeof st);
    struct stat sb;
    if (path && stat(path, &sb) == 0) {
        st.have_id = 1;
        st.dev = sb.st_dev;
        st.ino = sb.st_ino;
    }
    st.sc = sc;
    st.name = name ? name : "scenario";
    st.dir = dir;
    st.err = err;
    st.errlen = errlen;
    return load_text(&st, text);
}

int arb_scenario_load_string(arb_scenario *sc, const char *text, const char *name, const char *dir,
                             char *err, size_t errlen)
{
    return load_named(sc, text, name, dir, NULL, err, errlen);
}

int arb_scenario_load(arb_scenario *sc, const char *path, char *err, size_t errlen)
{
    char *buf;
    size_t len;
    int rd = arb_file_read(path, SCENARIO_MAX_BYTES, &buf, &len);
    if (rd == ARB_ENOENT)
        return arb_errf(err, errlen, ARB_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (rd < 0) return arb_errf(err, errlen, rd, "%s: cannot read", path);
    if (memchr(buf, '\0', len)) {
        arb_free(buf);
        return arb_errf(err, errlen, ARB_EPARSE, "%s: a NUL byte: not a scenario file", path);
    }
    char *dir = dir_of(path);
    int rc = dir ? load_named(sc, buf, path, dir, path, err, errlen)
                 : arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
    arb_free(dir);
    arb_free(buf);
    if (rc == 0) {
        char *fn = arb_strdup(path);
        if (!fn) return arb_errf(err, errlen, ARB_ENOMEM, "out of memory");
        arb_free(sc->file);
        sc->file = fn;
    }
    return rc;
}
