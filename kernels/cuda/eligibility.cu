/*
 * The eligibility kernels over the compiled rule program (engine::program), in the flat encoding
 * of kernels/src/encode.rs.
 *
 * Two passes, as in the CPU batch path (engine::batch):
 *   1. el_conditions: one thread per citizen and condition; a warp ballot packs the results of 32
 *      citizens into one u32 word (cond_words[condition * words + citizen / 32]).
 *   2. el_rules: one thread per (citizen, rule); gathers the rule's input bits into a truth-table
 *      index, or runs the rule's postfix program when it has no table, then writes what the
 *      caller asked for (ElOutput): every outcome code, two-bit verdicts, or only the pairs whose
 *      code differs from a previous one. Outputs are laid out in blocks of 32 citizens (one warp),
 *      block-major, so the output of a chunk of citizens is one contiguous range of the whole.
 * Changes take two more kernels, so they come back in citizen-then-rule order with no sort:
 *   3. el_scan: one block turns each citizen's count of changed rules into its offset.
 *   4. el_compact: one thread per citizen writes its changed pairs, rule by rule, from there.
 *
 * The per-citizen functions (el_condition_one, el_rule_one, el_scan_*, el_compact_one) are plain C:
 * host_model.c includes this file and runs them on the CPU, so the logic the kernels run is tested
 * without a GPU. Only the kernels themselves are CUDA. EL_OK(buffer, index) guards the stores of
 * the shared functions: always true on the GPU; the host model defines it to check the index
 * against the buffer's size first.
 */

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
/* NVRTC has no standard headers. */
typedef unsigned char uint8_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef long long int64_t;
#define EL_FN __device__ static inline
#else
#include <stdint.h>
#define EL_FN static inline
#endif

#ifndef EL_OK
#define EL_OK(buffer, index) 1
#endif
/* Buffers, for EL_OK. */
#define EL_BUF_COND_WORDS 1u
#define EL_BUF_CODES 2u
#define EL_BUF_PLANES 3u
#define EL_BUF_PREVIOUS 4u
#define EL_BUF_CHANGES 5u
#define EL_BUF_MASKS 6u
#define EL_BUF_COUNTS 7u

/* Threads of el_scan's one block. */
#define EL_SCAN_THREADS 1024u

/* Column kinds (encode::ColumnKind). */
#define EL_INT 0u
#define EL_NUM 1u
#define EL_BOOL 2u
#define EL_STR 3u
#define EL_LIST 4u

/* Condition tests (encode::Test) for int and number columns; bool, string and list conditions
 * carry their parameters in `arg` instead. */
#define EL_EQ 0u
#define EL_NEQ 1u
#define EL_GT 2u
#define EL_GTE 3u
#define EL_LT 4u
#define EL_LTE 5u
#define EL_IN 6u
#define EL_NOT_IN 7u
#define EL_BETWEEN 8u

/* Postfix instructions (engine::program::Instr). */
#define EL_LEAF 0u
#define EL_AND 1u
#define EL_OR 2u
#define EL_NOT 3u

/* Truth values (engine::outcome::Truth). */
#define EL_TRUE 0u
#define EL_FALSE 1u
#define EL_UNKNOWN 2u

/* A rule input with this bit set is Known(field), else Condition(index). */
#define EL_INPUT_KNOWN 0x80000000u
/* A rule without a truth table. */
#define EL_NO_TABLE 0xffffffffffffffffull
/* The deepest postfix stack the kernels hold; the encoder rejects deeper rules. */
#define EL_MAX_STACK 64

#define EL_NOT_APPLICABLE 255u
#define EL_ELIGIBLE 152u
/* Never an outcome code: a previous outcome that matches nothing (always reported as changed). */
#define EL_NO_PREVIOUS 254u

/* Output modes (kernels::output::Output). */
#define EL_OUT_CODES 0u
#define EL_OUT_VERDICTS 1u
#define EL_OUT_CHANGES 2u

/* Two-bit verdicts (engine::Verdict): the low bit and the high bit each fill one u32 plane. */
#define EL_V_NOT_ELIGIBLE 0u
#define EL_V_PARTIAL 1u
#define EL_V_ELIGIBLE 2u
#define EL_V_NOT_APPLICABLE 3u

/* Profiles in columns. Offsets index the pools; known masks and booleans are u32 words. */
typedef struct {
    uint64_t len;
    /* ceil(len / 32) */
    uint64_t words;
    const uint32_t *col_kind;
    /* Offset of the column's known mask in u32s. */
    const uint64_t *col_known;
    /* Offset of the column's values in ints, nums or u32s (by kind). */
    const uint64_t *col_data;
    /* List columns: u32 words per citizen. */
    const uint32_t *col_width;
    const int64_t *ints;
    const double *nums;
    const uint32_t *u32s;
} ElColumns;

/* The compiled rule program. */
typedef struct {
    uint64_t n_conditions;
    uint64_t n_rules;
    const uint32_t *cond_field;
    const uint32_t *cond_test;
    /* Int/num: offset of the operands in cond_ints/cond_nums. Bool: the wanted bit. String: offset
     * of the acceptance table in accept. List: the item id (u32 max when nobody holds it). */
    const uint64_t *cond_arg;
    /* Int/num: operand count. String: acceptance table length. List: 1 for contains, else 0. */
    const uint32_t *cond_count;
    const int64_t *cond_ints;
    const double *cond_nums;
    const uint8_t *accept;
    const uint8_t *rule_applicable;
    const uint64_t *rule_denominator;
    const uint64_t *rule_inputs;
    const uint32_t *rule_n_inputs;
    /* Offset in tables, or EL_NO_TABLE. */
    const uint64_t *rule_table;
    const uint64_t *rule_postfix;
    const uint32_t *rule_postfix_len;
    const uint64_t *rule_excl;
    const uint32_t *rule_n_excl;
    const uint32_t *inputs;
    const uint8_t *tables;
    const uint32_t *instr_op;
    /* Leaf: condition; AND/OR: arity. */
    const uint32_t *instr_a;
    /* Leaf: field. */
    const uint32_t *instr_b;
    const uint64_t *instr_scale;
    /* (condition, field) pairs. */
    const uint32_t *excl;
} ElProgram;

/* What el_rules writes for a chunk of `len` citizens (the columns' len) starting at citizen
 * `first` of the population. Block b holds citizens 32b .. 32b + 31 of the chunk. */
typedef struct {
    uint64_t mode;
    uint64_t first;
    /* EL_OUT_CODES: codes[(b * n_rules + r) * 32 + lane]. */
    uint8_t *codes;
    /* EL_OUT_VERDICTS: planes[(b * n_rules + r) * 2 + bit], bit 0 the verdict's low bit. */
    uint32_t *planes;
    /* EL_OUT_CHANGES: the previous codes, laid out as `codes`; el_rules writes the new code over
     * every one that differs (so they end as the current codes), the ballot of lanes that differ
     * in masks[b * n_rules + r], and counts each citizen's changed rules in counts[citizen of the
     * chunk] (zero before). el_scan turns counts into offsets and writes their sum to
     * n_changes; el_compact writes each changed pair as (citizen of the population * n_rules +
     * rule, new code) at its offset, those below `capacity` (else the caller runs it again with
     * room for n_changes). */
    uint8_t *previous;
    uint32_t *masks;
    unsigned long long *counts;
    unsigned long long *n_changes;
    uint64_t capacity;
    uint64_t *change_pair;
    uint8_t *change_code;
} ElOutput;

EL_FN uint32_t el_bit(const uint32_t *words, uint64_t i) {
    return (words[i >> 5] >> (i & 31u)) & 1u;
}

EL_FN uint32_t el_compare_int(uint32_t test, int64_t v, const int64_t *e, uint32_t n) {
    uint32_t k, hit = 0;
    switch (test) {
    case EL_EQ: return v == e[0];
    case EL_NEQ: return v != e[0];
    case EL_GT: return v > e[0];
    case EL_GTE: return v >= e[0];
    case EL_LT: return v < e[0];
    case EL_LTE: return v <= e[0];
    case EL_BETWEEN: return v >= e[0] && v <= e[1];
    default:
        for (k = 0; k < n; k++) hit |= v == e[k];
        return test == EL_IN ? hit : !hit;
    }
}

/* Same as el_compare_int with IEEE comparisons, as Rust's PartialOrd on f64. */
EL_FN uint32_t el_compare_num(uint32_t test, double v, const double *e, uint32_t n) {
    uint32_t k, hit = 0;
    switch (test) {
    case EL_EQ: return v == e[0];
    case EL_NEQ: return v != e[0];
    case EL_GT: return v > e[0];
    case EL_GTE: return v >= e[0];
    case EL_LT: return v < e[0];
    case EL_LTE: return v <= e[0];
    case EL_BETWEEN: return v >= e[0] && v <= e[1];
    default:
        for (k = 0; k < n; k++) hit |= v == e[k];
        return test == EL_IN ? hit : !hit;
    }
}

/* Whether condition c passes for citizen i (engine::columns::ProfileColumns::eval_condition):
 * never for an unknown field. */
EL_FN uint32_t el_condition_one(const ElColumns *cols, const ElProgram *prog, uint64_t c, uint64_t i) {
    uint32_t f = prog->cond_field[c];
    uint32_t test = prog->cond_test[c];
    uint64_t arg = prog->cond_arg[c];
    uint32_t n = prog->cond_count[c];
    uint64_t data = cols->col_data[f];
    if (!el_bit(cols->u32s + cols->col_known[f], i)) return 0;
    switch (cols->col_kind[f]) {
    case EL_INT: return el_compare_int(test, cols->ints[data + i], prog->cond_ints + arg, n);
    case EL_NUM: return el_compare_num(test, cols->nums[data + i], prog->cond_nums + arg, n);
    case EL_BOOL: return el_bit(cols->u32s + data, i) == (uint32_t)arg;
    case EL_STR: {
        uint32_t id = cols->u32s[data + i];
        return id < n && prog->accept[arg + id];
    }
    default: {
        /* An item nobody holds is absent from every list: `contains` fails, `not_contains` holds. */
        uint32_t width = cols->col_width[f];
        uint32_t has = arg != 0xffffffffull && el_bit(cols->u32s + data + i * width, arg);
        return has == n;
    }
    }
}

/* A leaf's truth from its condition bit and its field's known bit. */
EL_FN uint32_t el_leaf_truth(uint32_t passes, uint32_t known) {
    return passes ? EL_TRUE : known ? EL_FALSE : EL_UNKNOWN;
}

EL_FN uint32_t el_and(uint32_t a, uint32_t b) {
    if (a == EL_FALSE || b == EL_FALSE) return EL_FALSE;
    return a == EL_TRUE && b == EL_TRUE ? EL_TRUE : EL_UNKNOWN;
}

EL_FN uint32_t el_not(uint32_t t) {
    return t == EL_TRUE ? EL_FALSE : t == EL_FALSE ? EL_TRUE : EL_UNKNOWN;
}

EL_FN uint32_t el_or(uint32_t a, uint32_t b) {
    return el_not(el_and(el_not(a), el_not(b)));
}

/* floor(100 * num / den) exactly (engine::outcome::match_score computes it in u128). */
EL_FN uint32_t el_match_score(uint64_t num, uint64_t den) {
    uint64_t hi, lo, rem = 0;
    int bit;
    if (num <= 0xffffffffffffffffull / 100u) return (uint32_t)(num * 100u / den);
    /* 100 * num as 128 bits (hi, lo), then long division by den. */
    lo = (num & 0xffffffffull) * 100u;
    hi = (num >> 32) * 100u + (lo >> 32);
    lo = (hi << 32) | (lo & 0xffffffffull);
    hi >>= 32;
    {
        uint64_t q = 0;
        for (bit = 127; bit >= 0; bit--) {
            uint32_t top = (uint32_t)(rem >> 63);
            rem = (rem << 1) | ((bit >= 64 ? hi >> (bit - 64) : lo >> bit) & 1u);
            if (top || rem >= den) {
                rem -= den;
                q = (q << 1) | 1u;
            } else {
                q <<= 1;
            }
        }
        return (uint32_t)q;
    }
}

/* Spec §3 verdict as an outcome code (engine::outcome::verdict and Outcome::code). */
EL_FN uint32_t el_code(uint32_t root, uint32_t score, uint32_t excl) {
    if (excl == EL_FALSE) return score;
    if (excl == EL_TRUE && root == EL_TRUE) return EL_ELIGIBLE;
    return score >= 50 ? 101 + (score - 50) : score;
}

/* engine::Outcome::from_code(code).verdict, in two bits. */
EL_FN uint32_t el_verdict(uint32_t code) {
    if (code <= 100u) return EL_V_NOT_ELIGIBLE;
    if (code <= 151u) return EL_V_PARTIAL;
    return code == EL_ELIGIBLE ? EL_V_ELIGIBLE : EL_V_NOT_APPLICABLE;
}

/* The index of an output slot: block b of 32 citizens, rule r. */
EL_FN uint64_t el_slot(const ElProgram *prog, uint64_t b, uint64_t r) {
    return b * prog->n_rules + r;
}

/* The outcome code of rule r for citizen i (CompiledRule::run, or its truth table). cond_words
 * holds the condition bits from the first pass. */
EL_FN uint32_t el_rule_one(const ElColumns *cols, const ElProgram *prog, const uint32_t *cond_words,
                           uint64_t r, uint64_t i) {
    uint64_t words = cols->words;
    uint64_t table = prog->rule_table[r];
    uint32_t k;
    if (!prog->rule_applicable[r]) return EL_NOT_APPLICABLE;
    if (table != EL_NO_TABLE) {
        const uint32_t *in = prog->inputs + prog->rule_inputs[r];
        uint32_t index = 0;
        for (k = 0; k < prog->rule_n_inputs[r]; k++) {
            uint32_t input = in[k];
            uint32_t b = input & EL_INPUT_KNOWN
                             ? el_bit(cols->u32s + cols->col_known[input & ~EL_INPUT_KNOWN], i)
                             : el_bit(cond_words + (uint64_t)input * words, i);
            index |= b << k;
        }
        return prog->tables[table + index];
    }
    {
        uint8_t truth[EL_MAX_STACK];
        uint64_t num[EL_MAX_STACK];
        uint32_t top = 0, excl = EL_TRUE;
        uint64_t p = prog->rule_postfix[r], end = p + prog->rule_postfix_len[r];
        const uint32_t *ex = prog->excl + 2 * prog->rule_excl[r];
        for (; p < end; p++) {
            uint32_t op = prog->instr_op[p];
            uint64_t scale = prog->instr_scale[p];
            if (op == EL_LEAF) {
                uint32_t f = prog->instr_b[p];
                uint32_t t = el_leaf_truth(el_bit(cond_words + (uint64_t)prog->instr_a[p] * words, i),
                                           el_bit(cols->u32s + cols->col_known[f], i));
                truth[top] = (uint8_t)t;
                num[top] = (uint64_t)(t == EL_TRUE) * scale;
                top++;
            } else if (op == EL_NOT) {
                uint32_t t = el_not(truth[top - 1]);
                truth[top - 1] = (uint8_t)t;
                num[top - 1] = (uint64_t)(t == EL_TRUE) * scale;
            } else {
                uint32_t arity = prog->instr_a[p], j;
                uint32_t t = op == EL_AND ? EL_TRUE : EL_FALSE;
                uint64_t n = 0;
                top -= arity;
                for (j = top; j < top + arity; j++) {
                    if (op == EL_AND) {
                        t = el_and(t, truth[j]);
                        n += num[j];
                    } else {
                        t = el_or(t, truth[j]);
                        n = num[j] > n ? num[j] : n;
                    }
                }
                truth[top] = (uint8_t)t;
                num[top] = n * scale;
                top++;
            }
        }
        /* Exclusions fold to the worst: any false bars (EL_FALSE), else any unknown (EL_UNKNOWN). */
        for (k = 0; k < prog->rule_n_excl[r]; k++) {
            uint32_t f = ex[2 * k + 1];
            uint32_t t = el_leaf_truth(el_bit(cond_words + (uint64_t)ex[2 * k] * words, i),
                                       el_bit(cols->u32s + cols->col_known[f], i));
            if (t == EL_FALSE) excl = EL_FALSE;
            else if (t == EL_UNKNOWN && excl == EL_TRUE) excl = EL_UNKNOWN;
        }
        return el_code(truth[0], el_match_score(num[0], prog->rule_denominator[r]), excl);
    }
}

/* el_scan, thread t of `threads`: the citizens its segment covers. */
EL_FN void el_scan_segment(uint64_t n, uint64_t t, uint64_t threads, uint64_t *from, uint64_t *to) {
    uint64_t per = (n + threads - 1) / threads;
    *from = t * per < n ? t * per : n;
    *to = *from + per < n ? *from + per : n;
}

/* The sum of counts[from .. to). */
EL_FN unsigned long long el_scan_sum(const unsigned long long *counts, uint64_t from, uint64_t to) {
    unsigned long long s = 0;
    uint64_t k;
    for (k = from; k < to; k++) s += counts[k];
    return s;
}

/* counts[from .. to) replaced by their running sum from `base` (an exclusive scan). */
EL_FN void el_scan_write(unsigned long long *counts, uint64_t from, uint64_t to, unsigned long long base) {
    uint64_t k;
    for (k = from; k < to; k++) {
        unsigned long long v = counts[k];
        if (EL_OK(EL_BUF_COUNTS, k)) counts[k] = base;
        base += v;
    }
}

/* el_compact for citizen i of the chunk: its changed pairs in rule order, from its offset up to
 * the next citizen's (or n_changes for the last). */
EL_FN void el_compact_one(const ElOutput *out, uint64_t len, uint64_t n_rules, uint64_t i) {
    uint64_t b = i >> 5, r, at = out->counts[i];
    uint64_t end = i + 1 < len ? out->counts[i + 1] : *out->n_changes;
    uint32_t lane = (uint32_t)(i & 31u);
    for (r = 0; r < n_rules && at < end; r++) {
        uint64_t slot = b * n_rules + r;
        if (!((out->masks[slot] >> lane) & 1u)) continue;
        if (at < out->capacity && EL_OK(EL_BUF_CHANGES, at)) {
            out->change_pair[at] = (out->first + i) * n_rules + r;
            out->change_code[at] = out->previous[slot * 32u + lane];
        }
        at++;
    }
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

/* grid.x × blockDim.x threads cover the citizens (blockDim.x a multiple of 32, so every warp is
 * whole and the ballot sees 32 lanes); grid.y walks the conditions. */
extern "C" __global__ void el_conditions(ElColumns cols, ElProgram prog, uint32_t *cond_words) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t c;
    for (c = blockIdx.y; c < prog.n_conditions; c += gridDim.y) {
        uint32_t passes = i < cols.len && el_condition_one(&cols, &prog, c, i);
        uint32_t word = __ballot_sync(0xffffffffu, passes);
        if ((threadIdx.x & 31u) == 0 && i < cols.len) cond_words[c * cols.words + (i >> 5)] = word;
    }
}

/* One thread per citizen (x) and rule (y, strided). Threads past the last citizen stay in the
 * loop (with code EL_NOT_APPLICABLE, written nowhere) so every ballot sees the whole warp. */
extern "C" __global__ void el_rules(ElColumns cols, ElProgram prog, const uint32_t *cond_words,
                                    ElOutput out) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t b = i >> 5, r;
    uint32_t lane = threadIdx.x & 31u;
    uint32_t valid = i < cols.len;
    if (((i & ~31ull)) >= cols.len) return; /* the whole warp is past the end */
    for (r = blockIdx.y; r < prog.n_rules; r += gridDim.y) {
        uint32_t code = valid ? el_rule_one(&cols, &prog, cond_words, r, i) : EL_NOT_APPLICABLE;
        uint64_t slot = el_slot(&prog, b, r);
        if (out.mode == EL_OUT_CODES) {
            if (valid) out.codes[slot * 32u + lane] = (uint8_t)code;
        } else if (out.mode == EL_OUT_VERDICTS) {
            uint32_t v = el_verdict(code);
            uint32_t low = __ballot_sync(0xffffffffu, valid && (v & 1u));
            uint32_t high = __ballot_sync(0xffffffffu, valid && (v >> 1));
            if (lane == 0) {
                out.planes[slot * 2u] = low;
                out.planes[slot * 2u + 1u] = high;
            }
        } else {
            uint32_t changed = valid && code != out.previous[slot * 32u + lane];
            uint32_t mask = __ballot_sync(0xffffffffu, changed);
            if (lane == 0) out.masks[slot] = mask;
            if (changed) {
                out.previous[slot * 32u + lane] = (uint8_t)code;
                atomicAdd(out.counts + i, 1ull);
            }
        }
    }
}

/* One block of EL_SCAN_THREADS: each thread sums its segment of the counts, thread 0 scans the
 * sums, each thread writes its segment's offsets; the total goes to n_changes. */
extern "C" __global__ void el_scan(ElOutput out, uint64_t len) {
    __shared__ unsigned long long sums[EL_SCAN_THREADS];
    uint64_t from, to, k;
    el_scan_segment(len, threadIdx.x, blockDim.x, &from, &to);
    sums[threadIdx.x] = el_scan_sum(out.counts, from, to);
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long run = 0;
        for (k = 0; k < blockDim.x; k++) {
            unsigned long long v = sums[k];
            sums[k] = run;
            run += v;
        }
        *out.n_changes = run;
    }
    __syncthreads();
    el_scan_write(out.counts, from, to, sums[threadIdx.x]);
}

/* One thread per citizen of the chunk. */
extern "C" __global__ void el_compact(ElOutput out, uint64_t len, uint64_t n_rules) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) el_compact_one(&out, len, n_rules, i);
}

/* Kept columns brought up to date for changed citizens (kernels::patch::Patch), and kept outcomes
 * for changed pairs: each thread applies every stride-th write of the four pools. */
extern "C" __global__ void el_scatter(uint32_t *u32s, const uint64_t *u32_at, const uint32_t *u32_values,
                                      uint64_t n_u32, int64_t *ints, const uint64_t *int_at,
                                      const int64_t *int_values, uint64_t n_int, double *nums,
                                      const uint64_t *num_at, const double *num_values,
                                      uint64_t n_num, uint8_t *u8s, const uint64_t *u8_at,
                                      const uint8_t *u8_values, uint64_t n_u8) {
    uint64_t k, first = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t step = (uint64_t)gridDim.x * blockDim.x;
    for (k = first; k < n_u32; k += step) u32s[u32_at[k]] = u32_values[k];
    for (k = first; k < n_int; k += step) ints[int_at[k]] = int_values[k];
    for (k = first; k < n_num; k += step) nums[num_at[k]] = num_values[k];
    for (k = first; k < n_u8; k += step) u8s[u8_at[k]] = u8_values[k];
}

#endif
