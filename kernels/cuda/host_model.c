/*
 * The kernels' logic on the CPU: the same el_condition_one, el_rule_one and output layout the
 * CUDA kernels use, driven by loops in place of the grid. The condition pass packs 32 citizens a
 * word exactly as the warp ballot does, so the rule pass reads the same words; the rule pass walks
 * each block of 32 citizens as one warp, so ballots, and the order in which a warp appends its
 * changed pairs, are those of the kernels (only the order between warps is the GPU's own).
 */

#include <stdlib.h>

#include "eligibility.cu"

/* One warp's lanes for rule r: their codes, EL_NOT_APPLICABLE past the last citizen. */
static void el_warp_codes(const ElColumns *cols, const ElProgram *prog, const uint32_t *cond_words,
                          uint64_t b, uint64_t r, uint32_t codes[32]) {
    uint32_t lane;
    for (lane = 0; lane < 32; lane++) {
        uint64_t i = b * 32 + lane;
        codes[lane] = i < cols->len ? el_rule_one(cols, prog, cond_words, r, i) : EL_NOT_APPLICABLE;
    }
}

/* The output of one warp for rule r, as el_rules writes it. */
static void el_warp_output(const ElColumns *cols, const ElProgram *prog, const ElOutput *out,
                           uint64_t b, uint64_t r, const uint32_t codes[32]) {
    uint64_t slot = el_slot(prog, b, r);
    uint32_t lane, low = 0, high = 0, mask = 0;
    for (lane = 0; lane < 32; lane++) {
        uint64_t i = b * 32 + lane;
        uint32_t valid = i < cols->len;
        uint32_t v = el_verdict(codes[lane]);
        if (!valid) continue;
        if (out->mode == EL_OUT_CODES) out->codes[slot * 32 + lane] = (uint8_t)codes[lane];
        low |= (v & 1u) << lane;
        high |= (v >> 1) << lane;
        if (out->mode == EL_OUT_CHANGES && codes[lane] != out->previous[slot * 32 + lane])
            mask |= 1u << lane;
    }
    if (out->mode == EL_OUT_VERDICTS) {
        out->planes[slot * 2] = low;
        out->planes[slot * 2 + 1] = high;
    } else if (out->mode == EL_OUT_CHANGES) {
        /* As the warp: one reservation, then each changed lane at its rank among them. */
        unsigned long long base = *out->n_changes;
        *out->n_changes += (unsigned long long)__builtin_popcount(mask);
        for (lane = 0; lane < 32; lane++) {
            uint64_t at;
            if (!(mask >> lane & 1u)) continue;
            at = base + (uint64_t)__builtin_popcount(mask & ((1u << lane) - 1u));
            if (at < out->capacity) {
                out->change_pair[at] = (out->first + b * 32 + lane) * prog->n_rules + r;
                out->change_code[at] = (uint8_t)codes[lane];
            }
        }
    }
}

/* Both passes over one chunk of citizens. Returns 0, or -1 when scratch memory is not available. */
int el_evaluate_host(const ElColumns *cols, const ElProgram *prog, const ElOutput *out) {
    uint64_t c, w, r;
    uint32_t lane, codes[32];
    uint32_t *cond_words = calloc(prog->n_conditions * cols->words + 1, sizeof(uint32_t));
    if (cond_words == NULL) return -1;
    for (c = 0; c < prog->n_conditions; c++) {
        for (w = 0; w < cols->words; w++) {
            /* The ballot: lane k of the warp is citizen 32 * w + k. */
            uint32_t word = 0;
            for (lane = 0; lane < 32; lane++) {
                uint64_t i = w * 32 + lane;
                if (i < cols->len && el_condition_one(cols, prog, c, i)) word |= 1u << lane;
            }
            cond_words[c * cols->words + w] = word;
        }
    }
    for (w = 0; w < cols->words; w++) {
        for (r = 0; r < prog->n_rules; r++) {
            el_warp_codes(cols, prog, cond_words, w, r, codes);
            el_warp_output(cols, prog, out, w, r, codes);
        }
    }
    free(cond_words);
    return 0;
}
