/*
 * layout.c - the orders in which tp, cp, dp and pp are laid over the
 * devices, innermost first (detailed.h's layouts): the 24 permutations
 * of (DT_TP, DT_CP, DT_DP, DT_PP) in lexicographic order, code k the
 * k-th (its factorial-base digits pick from what is left). A point's
 * layout is 1 + its code (0: the default, tp-cp-dp-pp, code 0).
 * Invariant: the table is the one source of the orders: the context's
 * strides, the parsers and the strategy texts read it.
 */
#include "core.h"

/* code -> order (test_detailed's layout names walk every row) */
static const signed char dt_layout_orders[24][4] = {
    {0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 1, 3}, {0, 2, 3, 1},
    {0, 3, 1, 2}, {0, 3, 2, 1}, {1, 0, 2, 3}, {1, 0, 3, 2},
    {1, 2, 0, 3}, {1, 2, 3, 0}, {1, 3, 0, 2}, {1, 3, 2, 0},
    {2, 0, 1, 3}, {2, 0, 3, 1}, {2, 1, 0, 3}, {2, 1, 3, 0},
    {2, 3, 0, 1}, {2, 3, 1, 0}, {3, 0, 1, 2}, {3, 0, 2, 1},
    {3, 1, 0, 2}, {3, 1, 2, 0}, {3, 2, 0, 1}, {3, 2, 1, 0},
};

void dt_layout_order(int code, int order[4])
{
    for (int i = 0; i < 4; i++)
        order[i] = dt_layout_orders[code][i];
}

