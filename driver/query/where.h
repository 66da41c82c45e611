/*
 * where.h - `best --where`: conditions on the columns of a sweep file.
 *
 * A condition list is comma-separated "COLUMN OP VALUE" terms, all of
 * which must hold (AND), e.g. "task==pretrain,devices>=1024,tpot_s<=0.03".
 * OP is one of < <= > >= == !=. A number column compares numerically
 * (VALUE must be a number; NaN satisfies only !=); a text column
 * compares as text (== and != exactly, the others in byte order); the
 * status column also takes a status name (status==infeasible:memory).
 * A VALUE may be quoted ('...' or "...") to hold commas. Unknown columns
 * are errors naming the closest column.
 */
#ifndef MADSWEEP_WHERE_H
#define MADSWEEP_WHERE_H

#include <stdbool.h>
#include <stddef.h>

#include "frame.h"

#define WHERE_VALUE_MAX 256

typedef enum where_op {
    WHERE_LT,
    WHERE_LE,
    WHERE_GT,
    WHERE_GE,
    WHERE_EQ,
    WHERE_NE
} where_op;

typedef struct where_cond {
    const frame_col *col;
    where_op op;
    double num;
    char str[WHERE_VALUE_MAX];
} where_cond;

typedef struct where {
    where_cond *c;
    int n;
} where;

/* Parses `text` (NULL or "" gives no condition) of option `opt`
 * ("--where", "--baseline": messages start with it and quote the
 * condition at fault). Returns 0, or -1 with msg set (also for two
 * equalities of one column that contradict each other). */
int where_parse(where *w, const frame *f, const char *opt, const char *text, char *msg,
                size_t size);

bool where_match(const where *w, const frame *f, const char *row);

void where_free(where *w);

#endif
