/*
 * mpi_allreduce: Open MPI's MPI_Allreduce timed the way `arbor bench
 * allreduce` times Arbor (the same sizes, f32 SUM, iterations, warm-up, the
 * slowest rank's mean, nccl-tests' columns), for bench/runtime_vs_mpi.
 * Not built by CMake: the script compiles it with mpicc when Open MPI is
 * installed. Usage: mpirun -np 4 mpi_allreduce [MINBYTES MAXBYTES ITERS WARMUP]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    long minb = argc > 1 ? atol(argv[1]) : 1024, maxb = argc > 2 ? atol(argv[2]) : 64L << 20;
    int iters = argc > 3 ? atoi(argv[3]) : 20, warm = argc > 4 ? atoi(argv[4]) : 5;
    float *s = malloc((size_t)maxb), *r = malloc((size_t)maxb);
    for (long i = 0; i < maxb / 4; i++)
        s[i] = (float)((7 * me + 13 * (i % 17)) % 17 - 8);
    if (me == 0) {
        printf("# MPI_Allreduce: %d ranks, f32 sum, %d iterations (%d warm-up)\n#\n", n, iters,
               warm);
        printf("# %12s %12s %8s %6s %5s %10s %8s %8s %7s\n", "size", "count", "type", "redop",
               "root", "time", "algbw", "busbw", "#wrong");
        printf("# %12s %12s %8s %6s %5s %10s %8s %8s %7s\n", "(B)", "(elements)", "", "", "",
               "(us)", "(GB/s)", "(GB/s)", "");
    }
    for (long size = minb; size <= maxb; size *= 2) {
        long count = size / 4;
        double t = 0;
        for (int it = 0; it < warm + iters; it++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Allreduce(s, r, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            if (it >= warm) t += MPI_Wtime() - t0;
        }
        double mean = t / iters, slowest;
        MPI_Allreduce(&mean, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        double algbw = (double)size / slowest / 1e9;
        if (me == 0)
            printf("  %12ld %12ld %8s %6s %5d %10.1f %8.3f %8.3f %7s\n", size, count, "float",
                   "sum", -1, slowest * 1e6, algbw, algbw * 2.0 * (n - 1) / n, "N/A");
        fflush(stdout);
    }
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
