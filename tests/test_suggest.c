/*
 * test_suggest.c - the "did you mean" helper (driver/suggest).
 *
 * Distances: "kitten"/"sitting" = 3 and "flaw"/"lawn" = 2 are the
 * textbook Levenshtein examples; "CA"/"ABC" = 3 is the textbook case
 * where the optimal-string-alignment distance (no substring edited
 * twice) differs from the unrestricted Damerau distance (2).
 */
#include <string.h>

#include "../driver/suggest.h"
#include "unit.h"

static void test_distance(void)
{
    CU_ASSERT_EQUAL(suggest_distance("kitten", "sitting"), 3);
    CU_ASSERT_EQUAL(suggest_distance("flaw", "lawn"), 2);
    CU_ASSERT_EQUAL(suggest_distance("CA", "ABC"), 3);
    CU_ASSERT_EQUAL(suggest_distance("", "abc"), 3);
    CU_ASSERT_EQUAL(suggest_distance("abc", ""), 3);
    CU_ASSERT_EQUAL(suggest_distance("tpot_s", "topt_s"), 1);
    CU_ASSERT_EQUAL(suggest_distance("H100", "h100"), 0);
}

static void test_suggestions(void)
{
    static const char *const hw[] = {"a100-80g", "h100-sxm-80g", "h100-96g-500w",
                                     "h200", "gb200-nvl72", "mi300x"};
    suggest s;
    char hint[200];
    suggest_init(&s, "h100-sxm-80");
    for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++)
        suggest_offer(&s, hw[i]);
    CU_ASSERT_STRING_EQUAL(suggest_result(&s), "h100-sxm-80g");
    CU_ASSERT_STRING_EQUAL(suggest_hint(&s, hint, sizeof hint),
                           "; did you mean \"h100-sxm-80g\"?");
    /* a typed prefix: the first candidate it starts */
    suggest_init(&s, "h100");
    for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++)
        suggest_offer(&s, hw[i]);
    CU_ASSERT_STRING_EQUAL(suggest_result(&s), "h100-sxm-80g");
    /* nothing close: no guess */
    suggest_init(&s, "tpu-v9");
    for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++)
        suggest_offer(&s, hw[i]);
    CU_ASSERT_PTR_NULL(suggest_result(&s));
    CU_ASSERT_STRING_EQUAL(suggest_hint(&s, hint, sizeof hint), "");
    /* a column name with a transposition */
    suggest_init(&s, "toknes_per_s");
    suggest_offer(&s, "tokens_per_s");
    suggest_offer(&s, "ttft_s");
    CU_ASSERT_STRING_EQUAL(suggest_result(&s), "tokens_per_s");
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("suggest", NULL, NULL);
    CU_add_test(s, "edit distance", test_distance);
    CU_add_test(s, "closest names", test_suggestions);
    return unit_run();
}
