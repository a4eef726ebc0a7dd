/* Formatting for the logging callback; the library never prints. */
#include "arbor/base.h"

#include <stdarg.h>
#include <stdio.h>

void arb_log(const arb_logger *lg, arb_log_level level, const char *fmt, ...)
{
    if (!lg || !lg->fn || level > lg->max_level) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    lg->fn(lg->user, level, buf);
}
