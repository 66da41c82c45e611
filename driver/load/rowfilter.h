/*
 * rowfilter.h - the row filter of a catalogue's fit declarations and
 * stack matches: which rows of a measurement file (CSV) a fitted
 * constant is fitted to, or which rows run on a serving stack.
 *
 * The language (evaluated over the CSV rows by scripts/rowfilter.py,
 * which documents it; parsed here too, so that a catalogue with a bad
 * filter is refused with its file and line):
 *
 *   expr    := and ("||" and)*
 *   and     := unary ("&&" unary)*
 *   unary   := "!" unary | "(" expr ")" | "true" | "false" | compare
 *   compare := COLUMN OP VALUE
 *   OP      := "==" | "!=" | "~" | "!~" | "<" | "<=" | ">" | ">="
 *   COLUMN  := [a-z_][a-z0-9_]*      (a CSV column, or `file`: the file's name)
 *   VALUE   := 'text' | "text" | a number
 *
 * `~` is a case-insensitive glob (`*`, `?`, `[...]`) over the whole cell;
 * `<` and friends compare numbers, or release versions (the leading
 * digits and dots of the cell, e.g. "0.14.0 (Triton ...)" -> 0.14.0; a
 * cell without one makes the comparison false). Pure: no I/O, no state.
 */
#ifndef MADSWEEP_ROWFILTER_H
#define MADSWEEP_ROWFILTER_H

#include <stddef.h>

/* Longest filter text accepted, and deepest nesting of "(" and "!". */
#define ROWFILTER_MAX_TEXT 2048
#define ROWFILTER_MAX_DEPTH 32

/* Parses `text`: 0 when it is a filter, else -1 with the reason and the
 * byte offset where it went wrong in why (of `size` bytes). */
int rowfilter_check(const char *text, char *why, size_t size);

#endif
