/*
 * suggest.h - "did you mean" for unknown names.
 *
 * Every place that looks a name up (catalogue entries, configuration
 * keys, `best` columns, commands and options) offers each known name to
 * a suggest accumulator and appends its hint to the error message. The
 * closest candidate wins: the optimal-string-alignment edit distance
 * (insertions, deletions, substitutions, adjacent transpositions; case
 * ignored), with a typed prefix of a longer name counting as distance 1.
 * A hint is given only when the distance is small for the word's length
 * (1 up to 3 characters, 2 up to 8, 3 beyond), so a far-off name gets no
 * misleading guess. Ties go to the candidate offered first.
 */
#ifndef MADSWEEP_SUGGEST_H
#define MADSWEEP_SUGGEST_H

#include <stddef.h>

#define SUGGEST_NAME_MAX 128

typedef struct suggest {
    char word[SUGGEST_NAME_MAX];
    char best[SUGGEST_NAME_MAX];
    int dist; /* of best; a large number when none yet */
} suggest;

/* Edit distance between a and b as described above (case ignored). */
int suggest_distance(const char *a, const char *b);

void suggest_init(suggest *s, const char *word);
void suggest_offer(suggest *s, const char *candidate);

/* The closest candidate when it is close enough, else NULL. */
const char *suggest_result(const suggest *s);

/* "; did you mean \"X\"?" into buf (empty when there is no close
 * candidate); returns buf. */
const char *suggest_hint(const suggest *s, char *buf, size_t size);

#endif
