/*
 * The kernels on the CPU: the same el_condition_one, el_rule_one and output layout the CUDA
 * kernels use, run over the same launch geometry (kernels/src/chunk.rs, Geometry): every block
 * of the grid, each warp of a block as one unit, so ballots, strides along y and the order in
 * which a warp appends its changed pairs are those of the kernels (only the order between warps
 * is the GPU's own), then el_scan and el_compact for changes. Every store the kernels make, and
 * every read of the previous codes, masks and counts, is checked against the size the launcher
 * allocates for it (Sizes): an access out of bounds stops the run and is reported, where on a
 * GPU it would corrupt memory (kernels/README.md, "How the launch is tested without a GPU").
 */

#include <stdint.h>

/* Elements each buffer holds (chunk::Sizes). */
typedef struct {
    uint64_t cond_words;
    uint64_t codes;
    uint64_t planes;
    uint64_t previous;
    uint64_t changes;
    uint64_t masks;
    uint64_t counts;
} ElBounds;

/* The first access out of bounds: the buffer (EL_BUF_*), the index, and the elements it holds. */
typedef struct {
    uint64_t buffer;
    uint64_t index;
    uint64_t bound;
} ElFault;

/* The bounds of the launch this thread is running, and where its first fault goes. */
static _Thread_local const ElBounds *el_bounds;
static _Thread_local ElFault *el_fault;

/* Whether buffer[index] is in bounds; records the first fault when it is not. */
static int el_ok(uint32_t buffer, uint64_t index);
#define EL_OK(buffer, index) el_ok(buffer, index)

#include "eligibility.cu"

static int el_ok(uint32_t buffer, uint64_t index) {
    uint64_t bound;
    switch (buffer) {
    case EL_BUF_COND_WORDS: bound = el_bounds->cond_words; break;
    case EL_BUF_CODES: bound = el_bounds->codes; break;
    case EL_BUF_PLANES: bound = el_bounds->planes; break;
    case EL_BUF_PREVIOUS: bound = el_bounds->previous; break;
    case EL_BUF_CHANGES: bound = el_bounds->changes; break;
    case EL_BUF_MASKS: bound = el_bounds->masks; break;
    default: bound = el_bounds->counts; break;
    }
    if (index < bound) return 1;
    if (el_fault->buffer == 0) {
        el_fault->buffer = buffer;
        el_fault->index = index;
        el_fault->bound = bound;
    }
    return 0;
}

/* Launch geometry (chunk::Geometry): blocks along x, and along y for each kernel (0: not launched). */
typedef struct {
    uint64_t grid_x;
    uint64_t conditions_y;
    uint64_t rules_y;
    uint64_t threads;
} ElGrid;

/* el_conditions, one warp: citizens i0 .. i0 + 31. */
static int el_conditions_warp(const ElColumns *cols, const ElProgram *prog, uint32_t *cond_words,
                              const ElGrid *grid, uint64_t by, uint64_t i0) {
    uint64_t c;
    uint32_t lane;
    for (c = by; c < prog->n_conditions; c += grid->conditions_y) {
        uint32_t word = 0;
        for (lane = 0; lane < 32; lane++) {
            uint64_t i = i0 + lane;
            if (i < cols->len && el_condition_one(cols, prog, c, i)) word |= 1u << lane;
        }
        /* Lane 0 stores the ballot when it is a citizen. */
        if (i0 < cols->len) {
            uint64_t at = c * cols->words + (i0 >> 5);
            if (!el_ok(EL_BUF_COND_WORDS, at)) return 1;
            cond_words[at] = word;
        }
    }
    return 0;
}

/* el_rules, one warp: citizens i0 .. i0 + 31. */
static int el_rules_warp(const ElColumns *cols, const ElProgram *prog, const uint32_t *cond_words,
                         const ElOutput *out, const ElGrid *grid, uint64_t by, uint64_t i0) {
    uint64_t b = i0 >> 5, r;
    uint32_t lane;
    if (i0 >= cols->len) return 0; /* the whole warp is past the end */
    for (r = by; r < prog->n_rules; r += grid->rules_y) {
        uint64_t slot = el_slot(prog, b, r);
        uint32_t codes[32], low = 0, high = 0, mask = 0;
        for (lane = 0; lane < 32; lane++) {
            uint64_t i = i0 + lane;
            uint32_t valid = i < cols->len;
            uint32_t v;
            codes[lane] = valid ? el_rule_one(cols, prog, cond_words, r, i) : EL_NOT_APPLICABLE;
            v = el_verdict(codes[lane]);
            if (!valid) continue;
            if (out->mode == EL_OUT_CODES) {
                if (!el_ok(EL_BUF_CODES, slot * 32 + lane)) return 1;
                out->codes[slot * 32 + lane] = (uint8_t)codes[lane];
            }
            low |= (v & 1u) << lane;
            high |= (v >> 1) << lane;
            if (out->mode == EL_OUT_CHANGES) {
                if (!el_ok(EL_BUF_PREVIOUS, slot * 32 + lane)) return 1;
                if (codes[lane] != out->previous[slot * 32 + lane]) mask |= 1u << lane;
            }
        }
        if (out->mode == EL_OUT_VERDICTS) {
            if (!el_ok(EL_BUF_PLANES, slot * 2 + 1)) return 1;
            out->planes[slot * 2] = low;
            out->planes[slot * 2 + 1] = high;
        } else if (out->mode == EL_OUT_CHANGES) {
            /* Lane 0 stores the ballot; each changed lane its new code and one more change. */
            if (!el_ok(EL_BUF_MASKS, slot)) return 1;
            out->masks[slot] = mask;
            for (lane = 0; lane < 32; lane++) {
                if (!(mask >> lane & 1u)) continue;
                if (!el_ok(EL_BUF_COUNTS, i0 + lane)) return 1;
                out->previous[slot * 32 + lane] = (uint8_t)codes[lane];
                out->counts[i0 + lane] += 1;
            }
        }
    }
    return 0;
}

/* el_scan: its one block's threads, in turn. */
static int el_scan_host(const ElOutput *out, uint64_t len) {
    unsigned long long sums[EL_SCAN_THREADS], run = 0;
    uint64_t t, from, to;
    if (len > 0 && !el_ok(EL_BUF_COUNTS, len - 1)) return 1;
    for (t = 0; t < EL_SCAN_THREADS; t++) {
        el_scan_segment(len, t, EL_SCAN_THREADS, &from, &to);
        sums[t] = el_scan_sum(out->counts, from, to);
    }
    for (t = 0; t < EL_SCAN_THREADS; t++) {
        unsigned long long v = sums[t];
        sums[t] = run;
        run += v;
    }
    *out->n_changes = run;
    for (t = 0; t < EL_SCAN_THREADS; t++) {
        el_scan_segment(len, t, EL_SCAN_THREADS, &from, &to);
        el_scan_write(out->counts, from, to, sums[t]);
    }
    return el_fault->buffer != 0;
}

/* el_compact over the chunk's `len` citizens: the changed pairs below out->capacity. Returns 0,
 * or 1 with the first access out of bounds in `fault`. The caller runs it again, with more room,
 * when n_changes exceeds the capacity (masks, counts and codes are still those of the chunk). */
int el_compact_host(const ElOutput *out, uint64_t len, uint64_t n_rules, const ElBounds *bounds,
                    ElFault *fault) {
    uint64_t i;
    el_bounds = bounds;
    el_fault = fault;
    if (len > 0 && n_rules > 0) {
        /* What el_compact_one reads: every slot of the chunk, the previous codes of changed lanes. */
        if (!el_ok(EL_BUF_MASKS, ((len - 1) >> 5) * n_rules + n_rules - 1)) return 1;
        if (!el_ok(EL_BUF_PREVIOUS, (((len - 1) >> 5) * n_rules + n_rules - 1) * 32 + 31)) return 1;
    }
    for (i = 0; i < len; i++) el_compact_one(out, len, n_rules, i);
    return fault->buffer != 0;
}

/* Both kernels over one chunk, block by block as the grid launches them, then el_scan and
 * el_compact for changes. Returns 0, or 1 with the first access out of bounds in `fault`. */
int el_launch_host(const ElColumns *cols, const ElProgram *prog, const ElOutput *out,
                   uint32_t *cond_words, const ElGrid *grid, const ElBounds *bounds,
                   ElFault *fault) {
    uint64_t by, bx, w;
    el_bounds = bounds;
    el_fault = fault;
    for (by = 0; by < grid->conditions_y; by++)
        for (bx = 0; bx < grid->grid_x; bx++)
            for (w = 0; w < grid->threads / 32; w++)
                if (el_conditions_warp(cols, prog, cond_words, grid, by,
                                       bx * grid->threads + w * 32))
                    return 1;
    for (by = 0; by < grid->rules_y; by++)
        for (bx = 0; bx < grid->grid_x; bx++)
            for (w = 0; w < grid->threads / 32; w++)
                if (el_rules_warp(cols, prog, cond_words, out, grid, by,
                                  bx * grid->threads + w * 32))
                    return 1;
    if (out->mode != EL_OUT_CHANGES || grid->rules_y == 0) return 0;
    if (el_scan_host(out, cols->len)) return 1;
    return el_compact_host(out, cols->len, prog->n_rules, bounds, fault);
}
