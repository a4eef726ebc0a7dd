/* arbor.cc and arbor.cc.*: the responders' congestion controller. */
#include "scn_run.h"

#include <string.h>

/* The responders' controller of [arbor] beside what scn_engine_apply set
 * (arbor.cc, its base_rtt and every arbor.cc.KIND.*): the rate gate of
 * arbor.cc.rate as a spacing, and arbor.cc.window (0: arbor.window). */
void scn_arbor_cc_config(const arb_scenario *sc, arb_sim_arbor_config *ac)
{
    uint64_t rate = scn_u64(sc, K_AR_CC_RATE);
    uint32_t frame = ARB_FRAME_OVERHEAD + ARB_HDR_LEN_LONG + ac->ep.payload + ARB_WIRE_EXTRA;
    ac->cc.spacing = rate ? arb_cc_spacing_for_rate(rate, frame) : 0;
    ac->cc.window = (uint32_t)scn_u64(sc, K_AR_CC_WINDOW);
}

/* The key a controller's rule names ("timely.beta: ..." is arbor.cc.timely.beta). */
enum scn_key scn_cc_key(const char *why)
{
    static const struct {
        const char *field;
        enum scn_key key;
    } map[] = {{"window_min", K_AR_CC_WMIN},
               {"window_max", K_AR_CC_WMAX},
               {"window", K_AR_CC_WINDOW},
               {"base_rtt", K_AR_CC_BASERTT},
               {"timely.alpha", K_AR_TI_ALPHA},
               {"timely.beta", K_AR_TI_BETA},
               {"timely.delta", K_AR_TI_DELTA},
               {"timely.t_low", K_AR_TI_TLOW},
               {"timely.t_high", K_AR_TI_THIGH},
               {"timely.hai_after", K_AR_TI_HAI},
               {"timely.hai_factor", K_AR_TI_HAIF},
               {"timely.min_rate", K_AR_TI_MINRATE},
               {"swift.base_target", K_AR_SW_TARGET},
               {"swift.per_hop", K_AR_SW_PERHOP},
               {"swift.fs_range", K_AR_SW_FSRANGE},
               {"swift.ai", K_AR_SW_AI},
               {"swift.beta", K_AR_SW_BETA},
               {"swift.max_mdf", K_AR_SW_MAXMDF},
               {"swift.min_cwnd", K_AR_SW_MINCWND},
               {"swift.fs_min_cwnd", K_AR_SW_FSMIN},
               {"swift.fs_max_cwnd", K_AR_SW_FSMAX},
               {"swift.stall_reset", K_AR_SW_STALL},
               {"dcqcn.cnp_interval", K_AR_DC_CNP},
               {"dcqcn.g", K_AR_DC_G},
               {"dcqcn.alpha_init", K_AR_DC_ALPHA0},
               {"dcqcn.alpha_timer", K_AR_DC_ALPHAT},
               {"dcqcn.rate_timer", K_AR_DC_RATET},
               {"dcqcn.byte_counter", K_AR_DC_BYTES},
               {"dcqcn.f", K_AR_DC_F},
               {"dcqcn.rai", K_AR_DC_RAI},
               {"dcqcn.rhai", K_AR_DC_RHAI},
               {"dcqcn.min_rate", K_AR_DC_MINRATE},
               {"oscar.target", K_AR_OS_TARGET},
               {"oscar.gain", K_AR_OS_GAIN},
               {"oscar.kappa", K_AR_OS_KAPPA},
               {"oscar.headroom", K_AR_OS_HEADROOM},
               {"oscar.max_growth", K_AR_OS_GROWTH},
               {"oscar.min_cwnd", K_AR_OS_MINCWND}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        size_t n = strlen(map[i].field);
        if (strncmp(why, map[i].field, n) == 0 && why[n] == ':') return map[i].key;
    }
    return K_AR_CC;
}
