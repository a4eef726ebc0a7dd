/* What both endpoint engines share (endpoint.h): the names of the
 * collective kinds, and the settings a driver hands them with their
 * defaults. */
#include <string.h>

#include "arbor/endpoint.h"

const char *arb_ep_kind_name(int kind)
{
    static const char *const names[] = {"pull-result", "pull-completion", "push", "barrier"};
    return kind >= 0 && kind < ARB_EP_KIND_COUNT ? names[kind] : NULL;
}

void arb_ep_settings_default(arb_ep_settings *s)
{
    memset(s, 0, sizeof *s);
    s->payload = ARB_PAYLOAD_MAX;
    s->window = ARB_CC_WINDOW_DEFAULT;
    s->timeout = ARB_EP_TIMEOUT_DEFAULT;
    s->timeout_min = ARB_EP_TIMEOUT_MIN_DEFAULT;
    s->adaptive_timeout = 1;
    s->order_detection = 1;
    s->attempts = ARB_EP_ATTEMPTS_DEFAULT;
    s->miss_limit = ARB_EP_MISS_LIMIT_DEFAULT;
    s->dead_after = ARB_EP_DEAD_AFTER_DEFAULT;
    s->repair_tries = ARB_EP_REPAIR_TRIES_DEFAULT;
    s->backoff_max = ARB_EP_BACKOFF_MAX_DEFAULT;
    s->retry = ARB_EP_RETRY_DEFAULT;
    s->retry_min = ARB_EP_RETRY_MIN_DEFAULT;
    s->retry_tries = ARB_EP_RETRY_TRIES_DEFAULT;
}
