/*
 * testkit.h - the unit tests' whole framework: checks that count, report
 * the file and line of a failure, and a closing "N passed, N failed" line.
 *
 *   TEST(name) { CHECK(x == 1); CHECK_EQ_U(a, b); }
 *   int main(void) { RUN(name); return testkit_done(); }
 *
 * CHECK* reports a broken expectation and lets the test go on, so one run
 * lists every one. REQUIRE* reports and then stops the current test at
 * once (from any depth: a helper may use it too): use it where a later
 * line depends on the condition (a pointer then dereferenced, an index
 * then used, a constructor whose result is used). SKIP(fmt, ...) stops the
 * current test as skipped (something it needs is missing on this machine).
 * A test passes when none of its checks failed.
 *
 * A test that crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) is
 * reported as "CRASH name (signal)", counted as failed, and the next test
 * runs; the summary names the crashed ones. Under AddressSanitizer or
 * UndefinedBehaviorSanitizer the sanitizer's report ends the program
 * instead, and the summary printed at its death names the test it was in.
 *
 * Exit status (testkit_done): 1 when a test failed or crashed, else
 * TESTKIT_SKIP_CODE (77, registered with ctest as SKIP_RETURN_CODE) when a
 * test was skipped, else 0.
 */
#ifndef ARBOR_TESTKIT_H
#define ARBOR_TESTKIT_H

#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TESTKIT_SKIP_CODE 77

#if defined(__SANITIZE_ADDRESS__)
#define TESTKIT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define TESTKIT_SANITIZED 1
#endif
#endif
#ifdef TESTKIT_SANITIZED
void __sanitizer_set_death_callback(void (*callback)(void));
/* UndefinedBehaviorSanitizer ends the program through abort(), which the
 * SIGABRT handler turns into a crash of the current test (its own runtime
 * does not call the death callback). Read by the sanitizer at start. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
    return "abort_on_error=1";
}
#endif

static int testkit_passed, testkit_failed, testkit_skipped, testkit_cur_failed;
static int testkit_cur_skipped;
static const char *testkit_cur_name;
static char testkit_crashed[512];
static sigjmp_buf testkit_jmp;
static volatile sig_atomic_t testkit_armed;  /* a test runs: a stop jumps back */
static volatile sig_atomic_t testkit_signal; /* the signal the test died of, or 0 */

#define TEST(name) static void name(void)

/* The test runs called directly (as written); REQUIRE, SKIP and a crash
 * come back to the sigsetjmp. */
#define RUN(name)                                                                                  \
    do {                                                                                           \
        testkit_begin(#name);                                                                      \
        if (sigsetjmp(testkit_jmp, 1) == 0) {                                                      \
            testkit_armed = 1;                                                                     \
            name();                                                                                \
        }                                                                                          \
        testkit_end(#name);                                                                        \
    } while (0)

#define TESTKIT_REPORT(...)                                                                        \
    do {                                                                                           \
        if (testkit_cur_failed < 20) {                                                             \
            printf("  %s:%d: %s: ", __FILE__, __LINE__, testkit_cur_name);                         \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
        testkit_cur_failed++;                                                                      \
    } while (0)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) TESTKIT_REPORT("check failed: %s", #cond);                                    \
    } while (0)

#define CHECK_EQ_U(a, b)                                                                           \
    do {                                                                                           \
        uint64_t ta_ = (uint64_t)(a), tb_ = (uint64_t)(b);                                         \
        if (ta_ != tb_) TESTKIT_REPORT("%s == %s: %" PRIu64 " != %" PRIu64, #a, #b, ta_, tb_);     \
    } while (0)

#define CHECK_EQ_I(a, b)                                                                           \
    do {                                                                                           \
        int64_t ta_ = (int64_t)(a), tb_ = (int64_t)(b);                                            \
        if (ta_ != tb_) TESTKIT_REPORT("%s == %s: %" PRId64 " != %" PRId64, #a, #b, ta_, tb_);     \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *ta_ = (a), *tb_ = (b);                                                         \
        if (!ta_ || !tb_ || strcmp(ta_, tb_) != 0)                                                 \
            TESTKIT_REPORT("%s == %s: \"%s\" != \"%s\"", #a, #b, ta_ ? ta_ : "(null)",             \
                           tb_ ? tb_ : "(null)");                                                  \
    } while (0)

/* As CHECK*, but a failure ends the current test there. */
#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            TESTKIT_REPORT("required: %s", #cond);                                                 \
            testkit_stop();                                                                        \
        }                                                                                          \
    } while (0)

#define REQUIRE_EQ_I(a, b)                                                                         \
    do {                                                                                           \
        int64_t ta_ = (int64_t)(a), tb_ = (int64_t)(b);                                            \
        if (ta_ != tb_) {                                                                          \
            TESTKIT_REPORT("required: %s == %s: %" PRId64 " != %" PRId64, #a, #b, ta_, tb_);       \
            testkit_stop();                                                                        \
        }                                                                                          \
    } while (0)

#define REQUIRE_EQ_U(a, b)                                                                         \
    do {                                                                                           \
        uint64_t ta_ = (uint64_t)(a), tb_ = (uint64_t)(b);                                         \
        if (ta_ != tb_) {                                                                          \
            TESTKIT_REPORT("required: %s == %s: %" PRIu64 " != %" PRIu64, #a, #b, ta_, tb_);       \
            testkit_stop();                                                                        \
        }                                                                                          \
    } while (0)

/* Under ctest, ARBOR_CHECK_LOG names a file where each skipped test and the
 * program's counts are added, one tab-separated line each, for
 * scripts/test_report.sh to say at the end of `make test` what did not run. */
static inline void testkit_log(const char *kind, const char *a, const char *b)
{
    const char *path = getenv("ARBOR_CHECK_LOG");
    if (!path || !*path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    const char *prog = getenv("ARBOR_TEST_NAME");
    fprintf(f, "%s\t%s\t%s\t%s\n", prog ? prog : "?", kind, a, b);
    fclose(f);
}

/* Stop the current test as skipped, saying why. */
#define SKIP(...) testkit_skip(__VA_ARGS__)

/* True when the current test has failed so far (to stop a loop early). */
#define TEST_FAILING() (testkit_cur_failed > 0)

/* Leave the current test (its failures stand). Outside a test: exit. */
_Noreturn static inline void testkit_stop(void)
{
    fflush(stdout);
    if (testkit_armed) siglongjmp(testkit_jmp, 1);
    printf("stopped outside a test\n");
    exit(1);
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
_Noreturn static inline void
testkit_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char why[256];
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    printf("  skip %s: %s\n", testkit_cur_name ? testkit_cur_name : "?", why);
    testkit_log("skip", testkit_cur_name ? testkit_cur_name : "?", why);
    testkit_cur_skipped = 1;
    testkit_stop();
}

static inline void testkit_summary(void)
{
    printf("%d passed, %d failed", testkit_passed, testkit_failed);
    if (testkit_skipped) printf(", %d skipped", testkit_skipped);
    if (testkit_crashed[0]) printf(" (crashed:%s)", testkit_crashed);
    printf("\n");
    fflush(stdout);
}

static inline void testkit_note_crash(const char *name)
{
    size_t used = strlen(testkit_crashed);
    snprintf(testkit_crashed + used, sizeof testkit_crashed - used, " %s", name);
}

#ifdef TESTKIT_SANITIZED
/* The sanitizer has printed its report and is about to end the program. */
static inline void testkit_on_death(void)
{
    if (testkit_armed && testkit_cur_name) {
        printf("CRASH %s (sanitizer report above)\n", testkit_cur_name);
        testkit_failed++;
        testkit_note_crash(testkit_cur_name);
    }
    testkit_summary();
}
#endif

static inline void testkit_on_signal(int sig)
{
    if (!testkit_armed) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    testkit_armed = 0;
    testkit_signal = sig;
    siglongjmp(testkit_jmp, 1);
}

static inline void testkit_install(void)
{
    static int done;
    if (done) return;
    done = 1;
#ifdef TESTKIT_SANITIZED
    /* AddressSanitizer handles the faults itself and calls back before it
     * ends the program; UndefinedBehaviorSanitizer aborts. */
    __sanitizer_set_death_callback(testkit_on_death);
    static const int sigs[] = {SIGABRT};
#else
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#endif
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = testkit_on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* Before a test: its name, a clean slate. */
static inline void testkit_begin(const char *name)
{
    testkit_install();
    testkit_cur_name = name;
    testkit_cur_failed = 0;
    testkit_cur_skipped = 0;
    testkit_signal = 0;
    fflush(stdout);
}

/* After a test (returned, stopped or crashed): its verdict. */
static inline void testkit_end(const char *name)
{
    testkit_armed = 0;
    if (testkit_signal) {
        int sig = (int)testkit_signal;
        printf("CRASH %s (signal %d: %s)\n", name, sig, strsignal(sig));
        testkit_failed++;
        testkit_note_crash(name);
    } else if (testkit_cur_failed) {
        testkit_failed++;
        printf("FAIL %s\n", name);
    } else if (testkit_cur_skipped) {
        testkit_skipped++;
        printf("skip %s\n", name);
    } else {
        testkit_passed++;
        printf("ok   %s\n", name);
    }
    fflush(stdout);
}

static inline int testkit_done(void)
{
    testkit_cur_name = NULL;
    testkit_summary();
    char counts[64];
    snprintf(counts, sizeof counts, "%d\t%d", testkit_failed, testkit_skipped);
    char passed[16];
    snprintf(passed, sizeof passed, "%d", testkit_passed);
    testkit_log("counts", passed, counts);
    if (testkit_failed) return 1;
    return testkit_skipped ? TESTKIT_SKIP_CODE : 0;
}

#endif
