/*
 * The test framework itself (testkit.h): a failed REQUIRE stops its test
 * and the next one runs; a crash is named and counted as a failure; SKIP
 * makes the program exit with the skip code. Each case runs a small suite
 * in a child process and reads what it printed and its exit status.
 */
#include "testkit.h"

#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

static int reached_after_require;

TEST(child_passes)
{
    CHECK(1 + 1 == 2);
}

TEST(child_requires)
{
    int *p = NULL;
    REQUIRE(p != NULL);
    reached_after_require = 1;
    CHECK(*p == 0);
}

/* A helper deep down stops the whole test, not only itself. */
static void helper_requires(const char *s)
{
    REQUIRE_EQ_U(strlen(s), 3);
}

TEST(child_requires_in_helper)
{
    helper_requires("four");
    reached_after_require = 1;
}

TEST(child_crashes)
{
    volatile int *volatile p = NULL;
    *p = 1;
}

TEST(child_skips)
{
    SKIP("a tool is missing");
}

TEST(child_reports)
{
    printf("  reached_after_require=%d\n", reached_after_require);
}

/* Run `suite` in a child with stdout and stderr into out[0..cap); its exit
 * status (or 128 + the signal that ended it). */
static int run_child(void (*suite)(void), char *out, size_t cap)
{
    int fd[2];
    REQUIRE(pipe(fd) == 0);
    fflush(stdout);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        unsetenv("ARBOR_CHECK_LOG"); /* the child's skips are the test's subject */
        testkit_passed = testkit_failed = testkit_skipped = 0;
        testkit_crashed[0] = '\0';
        suite();
        exit(testkit_done());
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t got;
    while (n + 1 < cap && (got = read(fd[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)got;
    out[n] = '\0';
    close(fd[0]);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

static void suite_require(void)
{
    RUN(child_passes);
    RUN(child_requires);
    RUN(child_requires_in_helper);
    RUN(child_reports);
}

static void suite_crash(void)
{
    RUN(child_passes);
    RUN(child_crashes);
    RUN(child_passes);
}

static void suite_skip(void)
{
    RUN(child_passes);
    RUN(child_skips);
}

static void suite_skip_and_fail(void)
{
    RUN(child_skips);
    RUN(child_requires);
}

static void expect_line(const char *out, const char *line)
{
    if (!strstr(out, line)) TESTKIT_REPORT("no '%s' in:\n%s", line, out);
}

TEST(require_stops_the_test_and_the_next_runs)
{
    static char out[8192];
    int rc = run_child(suite_require, out, sizeof out);
    CHECK_EQ_I(rc, 1);
    expect_line(out, "ok   child_passes\n");
    expect_line(out, "required: p != NULL");
    expect_line(out, "FAIL child_requires\n");
    expect_line(out, "required: strlen(s) == 3: 4 != 3");
    expect_line(out, "FAIL child_requires_in_helper\n");
    expect_line(out, "reached_after_require=0\n");
    expect_line(out, "2 passed, 2 failed\n");
}

TEST(crash_is_named)
{
    static char out[16384];
    int rc = run_child(suite_crash, out, sizeof out);
    CHECK(rc != 0);
    /* Without sanitizers: the SIGSEGV handler names the test, the next
     * runs. With UndefinedBehaviorSanitizer the null store is reported and
     * aborts (SIGABRT: the same). With AddressSanitizer alone its report
     * ends the program and the summary printed then names the test. */
    if (strstr(out, "(sanitizer report above)")) {
        expect_line(out, "CRASH child_crashes (sanitizer report above)\n");
        expect_line(out, "1 passed, 1 failed (crashed: child_crashes)\n");
    } else {
        CHECK_EQ_I(rc, 1);
        expect_line(out, "CRASH child_crashes (signal ");
        expect_line(out, "2 passed, 1 failed (crashed: child_crashes)\n");
    }
}

TEST(skip_exits_with_the_skip_code)
{
    static char out[8192];
    CHECK_EQ_I(run_child(suite_skip, out, sizeof out), TESTKIT_SKIP_CODE);
    expect_line(out, "  skip child_skips: a tool is missing\n");
    expect_line(out, "1 passed, 0 failed, 1 skipped\n");
    /* a failure outweighs a skip */
    CHECK_EQ_I(run_child(suite_skip_and_fail, out, sizeof out), 1);
    expect_line(out, "0 passed, 1 failed, 1 skipped\n");
}

int main(void)
{
    RUN(require_stops_the_test_and_the_next_runs);
    RUN(crash_is_named);
    RUN(skip_exits_with_the_skip_code);
    return testkit_done();
}
