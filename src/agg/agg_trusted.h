/*
 * arb_agg_recv without arb_hdr_validate, for a caller whose headers are
 * valid by construction: the simulator, whose packets carry headers that the
 * engines themselves built (and that --wire-check round-trips through the
 * codec). Packets from outside (the runtime) go through arb_agg_recv, which
 * validates every header.
 *
 * Of the calling contract only the port is checked (ARB_EINVAL): a, h and res
 * must not be NULL, nor payload in values mode when payload_len > 0.
 */
#ifndef ARB_AGG_TRUSTED_H
#define ARB_AGG_TRUSTED_H

#include "arbor/agg.h"

int arb_agg_recv_trusted(arb_agg *a, arb_hdr *h, const void *payload, size_t payload_len,
                         uint64_t channel, uint32_t port, int ce, arb_time now,
                         arb_agg_result *res);

#endif
