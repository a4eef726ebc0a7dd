/*
 * testkit.h - the unit tests' whole framework: checks that count, report
 * the file and line of a failure, and a closing "N passed, N failed" line.
 *
 *   TEST(name) { CHECK(x == 1); CHECK_EQ_U(a, b); }
 *   int main(void) { RUN(name); return testkit_done(); }
 *
 * A CHECK that fails reports and lets the test continue, so one run lists
 * every broken expectation. A test passes when none of its checks failed.
 */
#ifndef ARBOR_TESTKIT_H
#define ARBOR_TESTKIT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int testkit_passed, testkit_failed, testkit_cur_failed;
static const char *testkit_cur_name;

#define TEST(name) static void name(void)

#define RUN(name)                                                                                  \
    do {                                                                                           \
        testkit_cur_name = #name;                                                                  \
        testkit_cur_failed = 0;                                                                    \
        name();                                                                                    \
        if (testkit_cur_failed) {                                                                  \
            testkit_failed++;                                                                      \
            printf("FAIL %s\n", #name);                                                            \
        } else {                                                                                   \
            testkit_passed++;                                                                      \
            printf("ok   %s\n", #name);                                                            \
        }                                                                                          \
        fflush(stdout);                                                                            \
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

/* True when the current test has failed so far (to stop a loop early). */
#define TEST_FAILING() (testkit_cur_failed > 0)

static int testkit_done(void)
{
    printf("%d passed, %d failed\n", testkit_passed, testkit_failed);
    return testkit_failed ? 1 : 0;
}

#endif
