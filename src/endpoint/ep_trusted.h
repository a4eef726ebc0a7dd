/*
 * arb_requester_recv without arb_hdr_validate, for a caller whose headers are
 * valid by construction: the simulator, whose packets carry headers that the
 * engines themselves built (and that --wire-check round-trips through the
 * codec). Packets from outside (the runtime) go through arb_requester_recv,
 * which validates every header.
 *
 * The caller guarantees the calling contract (q and h not NULL, payload
 * not NULL when len > 0); it is not checked.
 *
 * Returns 0 when the engine's phases and retry timers (what
 * arb_requester_done, arb_requester_error and arb_requester_next_expiry
 * read) did not move, so that the driver need not poll them; 1 when they
 * may have; or an error.
 */
#ifndef ARBOR_EP_TRUSTED_H
#define ARBOR_EP_TRUSTED_H

#include "arbor/endpoint.h"

int arb_requester_recv_trusted(arb_requester *q, const arb_hdr *h, const uint8_t *payload,
                               size_t len, uint32_t subchannel, arb_time now);

#endif
