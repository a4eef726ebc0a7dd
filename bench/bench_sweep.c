/*
 * bench_sweep: the wall time of `arbor sweep` over a sweep of 16 small
 * scenarios (scenarios/bench-sweep16.ini) with one process and with two
 * (docs/sweeps.md), the ratio, and that both gave the same table byte for
 * byte. --mpi also times `mpirun -np 2` (Open MPI; its start-up included).
 *
 *   bench_sweep [--repeat N] [--mpi] [--arbor PATH]
 *
 * Runs the command built beside it (build/arbor for build/bench/bench_sweep)
 * from the repository root. The cases run round-robin N times (default 3)
 * and each takes its best, since a shared machine's wall time swings; the
 * CPU time of the sweep's processes is printed beside it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SCENARIO "scenarios/bench-sweep16.ini"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double tv_s(struct timeval t)
{
    return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

/* Run argv with stdout and stderr to /dev/null; its wall and CPU seconds.
 * *cpu_before: the children's CPU seconds before it, updated. Returns its
 * exit status (-1 when it could not run). */
static int timed(char *const argv[], double *wall, double *cpu, double *cpu_before)
{
    fflush(NULL);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(126);
        execvp(argv[0], argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    *wall = now_s() - t0;
    /* the children's CPU so far, this one (and the processes it waited for) included */
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    double total = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
    *cpu = total - *cpu_before;
    *cpu_before = total;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, cap);
            if (!nb) break;
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
}

struct bcase {
    const char *name;
    char *argv[16];
    char csv[256];
    double best_wall, cpu;
    int ran;
};

int main(int argc, char **argv)
{
    int repeat = 3, mpi = 0;
    char arbor[4096];
    const char *slash = strrchr(argv[0], '/');
    snprintf(arbor, sizeof arbor, "%.*s%sarbor", slash ? (int)(slash - argv[0]) : 1,
             slash ? argv[0] : ".", "/../");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            repeat = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--mpi") == 0) {
            mpi = 1;
        } else if (strcmp(argv[i], "--arbor") == 0 && i + 1 < argc) {
            snprintf(arbor, sizeof arbor, "%s", argv[++i]);
        } else {
            fprintf(stderr, "usage: bench_sweep [--repeat N] [--mpi] [--arbor PATH]\n");
            return 2;
        }
    }
    if (repeat < 1) repeat = 1;
    if (access(SCENARIO, R_OK) != 0) {
        fprintf(stderr, "bench_sweep: run from the repository root (%s)\n", SCENARIO);
        return 2;
    }
    if (access(arbor, X_OK) != 0) {
        fprintf(stderr, "bench_sweep: %s: not found (build it, or --arbor PATH)\n", arbor);
        return 2;
    }
    char dir[] = "/tmp/bench_sweep.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_sweep: mkdtemp");
        return 1;
    }
    static struct bcase cases[3];
    int n = mpi ? 3 : 2;
    const char *names[3] = {"1 process", "2 processes", "mpirun -np 2"};
    for (int c = 0; c < n; c++) {
        struct bcase *b = &cases[c];
        b->name = names[c];
        snprintf(b->csv, sizeof b->csv, "%s/t%d.csv", dir, c);
        int k = 0;
        if (c == 2) {
            b->argv[k++] = "mpirun";
            b->argv[k++] = "--oversubscribe";
            b->argv[k++] = "-np";
            b->argv[k++] = "2";
        }
        b->argv[k++] = arbor;
        b->argv[k++] = "sweep";
        b->argv[k++] = SCENARIO;
        b->argv[k++] = "-q";
        b->argv[k++] = "--csv";
        b->argv[k++] = b->csv;
        if (c < 2) {
            b->argv[k++] = "-n";
            b->argv[k++] = c == 0 ? "1" : "2";
        }
        b->argv[k] = NULL;
    }
    if (mpi && getuid() == 0) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
    printf("bench_sweep: %s (16 points), best of %d round-robin runs\n", SCENARIO, repeat);
    double cpu_before = 0;
    for (int r = 0; r < repeat; r++)
        for (int c = 0; c < n; c++) {
            double wall, cpu;
            int st = timed(cases[c].argv, &wall, &cpu, &cpu_before);
            if (st != 0) {
                fprintf(stderr, "bench_sweep: %s: exit status %d\n", cases[c].name, st);
                return 1;
            }
            if (!cases[c].ran || wall < cases[c].best_wall) {
                cases[c].best_wall = wall;
                cases[c].cpu = cpu;
            }
            cases[c].ran = 1;
        }
    printf("%-16s %10s %10s\n", "case", "wall_s", "cpu_s");
    for (int c = 0; c < n; c++)
        printf("%-16s %10.3f %10.3f\n", cases[c].name, cases[c].best_wall, cases[c].cpu);
    printf("speed-up, 2 processes against 1: %.2fx (goal >= 1.8x)\n",
           cases[0].best_wall / cases[1].best_wall);
    if (mpi)
        printf("speed-up, mpirun -np 2 against 1 process: %.2fx\n",
               cases[0].best_wall / cases[2].best_wall);
    char *t0 = slurp(cases[0].csv);
    int same = t0 != NULL;
    for (int c = 1; c < n && same; c++) {
        char *t = slurp(cases[c].csv);
        same = t && strcmp(t, t0) == 0;
        free(t);
    }
    free(t0);
    printf("tables byte-identical: %s\n", same ? "yes" : "NO");
    for (int c = 0; c < n; c++)
        unlink(cases[c].csv);
    rmdir(dir);
    return same ? 0 : 1;
}
