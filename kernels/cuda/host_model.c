/*
 * The kernels' logic on the CPU: the same el_condition_one and el_rule_one the CUDA kernels call,
 * driven by loops in place of the grid. The condition pass packs 32 citizens a word exactly as the
 * warp ballot does, so the rule pass reads the same words.
 */

#include <stdlib.h>

#include "eligibility.cu"

/* Fills codes[rule * len + citizen]. Returns 0, or -1 when scratch memory is not available. */
int el_evaluate_host(const ElColumns *cols, const ElProgram *prog, uint8_t *codes) {
    uint64_t c, w, r, i;
    uint32_t lane;
    uint32_t *cond_words = calloc(prog->n_conditions * cols->words + 1, sizeof(uint32_t));
    if (cond_words == NULL) return -1;
    for (c = 0; c < prog->n_conditions; c++) {
        for (w = 0; w < cols->words; w++) {
            /* The ballot: lane k of the warp is citizen 32 * w + k. */
            uint32_t word = 0;
            for (lane = 0; lane < 32; lane++) {
                i = w * 32 + lane;
                if (i < cols->len && el_condition_one(cols, prog, c, i)) word |= 1u << lane;
            }
            cond_words[c * cols->words + w] = word;
        }
    }
    for (r = 0; r < prog->n_rules; r++) {
        for (i = 0; i < cols->len; i++) {
            codes[r * cols->len + i] = (uint8_t)el_rule_one(cols, prog, cond_words, r, i);
        }
    }
    free(cond_words);
    return 0;
}
