/** @file
 * arbor/reduce.h - element-wise reduction of a payload into an accumulator:
 * acc[i] = acc[i] OP in[i] for i < n.
 *
 * Buffers are arrays of host-order elements (the wire carries payload
 * elements little-endian; see docs/protocol.md). They need no alignment
 * and may not overlap unless acc == in.
 *
 * Semantics, the same for every buffer length and alignment (docs/reduce.md):
 * - f32, f64: IEEE 754 binary arithmetic in that format, round to nearest
 *   even; subnormals are kept (never flushed to zero).
 * - f16, bf16: each pair is widened to f32, combined, and rounded to the
 *   storage format to nearest even. For SUM this is the correctly rounded
 *   sum in the storage format (f32 has more than 2p+2 bits for both
 *   formats, so the double rounding is innocuous). Overflow gives infinity.
 * - SUM: x + NaN = NaN, inf + -inf = NaN, +0 + -0 = +0, -0 + -0 = -0.
 * - MAX / MIN (IEEE 754-2019 maximum / minimum): a NaN operand gives NaN;
 *   -0 is less than +0; otherwise the larger / smaller operand.
 * - A NaN result is a quiet NaN; its payload and sign are not specified.
 * - i32, i64: SUM wraps in two's complement; MAX / MIN are exact.
 * - NOP leaves acc unchanged.
 */
#ifndef ARBOR_REDUCE_H
#define ARBOR_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "arbor/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * acc[i] = acc[i] OP in[i] for n elements of type dt.
 * Errors: ARB_EINVAL for an op or dtype outside its enum, a NULL buffer
 * with n > 0, or n elements whose size overflows size_t.
 */
int arb_reduce(arb_op op, arb_dtype dt, void *acc, const void *in, size_t n);

/**
 * The same over `bytes` bytes (a payload as received).
 * Errors: ARB_EINVAL as above, or when bytes is not a multiple of the
 * element size.
 */
int arb_reduce_bytes(arb_op op, arb_dtype dt, void *acc, const void *in, size_t bytes);

/* Conversions used by the kernels, exposed for tests and tools. */

/** IEEE 754 binary16 to binary32 (exact). */
float arb_f16_to_f32(uint16_t h);
/** binary32 to IEEE 754 binary16, rounded to nearest even; NaN stays NaN. */
uint16_t arb_f32_to_f16(float f);
/** bfloat16 to binary32 (exact). */
float arb_bf16_to_f32(uint16_t h);
/** binary32 to bfloat16, rounded to nearest even; NaN stays NaN. */
uint16_t arb_f32_to_bf16(float f);

/** Store v as one element of type dt at d (unaligned; f16 and bf16
 * through binary32, rounded to nearest even; integers truncated toward
 * zero, as C converts). Never fails: dt must be a valid dtype. */
void arb_elem_put(void *d, arb_dtype dt, double v);
/** The element of type dt at d (unaligned), as a double (int64 beyond
 * 2^53 rounded). Never fails: dt must be a valid dtype. */
double arb_elem_get(const void *d, arb_dtype dt);

#ifdef __cplusplus
}
#endif

#endif /* ARBOR_REDUCE_H */
