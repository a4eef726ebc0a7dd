/* Prefetch staging's state: on or off by the state's size, and its slots cleared. */
#include "prefetch.h"

/* Forget everything the stages found, guesses included (the fabric
 * changed, or prefetching turns on or off). */
void sim_forget_guesses(arb_sim *s)
{
    for (uint32_t i = 0; i <= PF_SLOTS; i++)
        pf_clear(s, i);
    s->pf_gen = *s->topo_gen;
    rule_decide(s); /* (each run's start comes here) */
}

/* Turn prefetching on or off for the state's present size. */
void sim_pf_decide(arb_sim *s)
{
    size_t bytes = (size_t)s->pool.made * sizeof(struct pkt) +
                   (size_t)s->n_ports * (sizeof(struct sport) + sizeof(arb_port)) +
                   (size_t)s->n_conns * sizeof(struct conn) +
                   (size_t)s->n_hosts * sizeof(struct host);
    uint8_t on = bytes > s->pf_min_bytes;
    if (on != s->pf_on) sim_forget_guesses(s);
    s->pf_on = on;
    if (!on) s->pf_cur = PF_SLOTS;
    s->pf_made = s->pool.made;
}
