/*
 * The kernels on the CPU: the same el_condition_one, el_rule_one and output layout the CUDA
 * kernels use, run over the same launch geometry (kernels/src/chunk.rs, Geometry): every block
 * of the grid, each warp of a block as one unit, so ballots, strides along y and the order in
 * which a warp appends its changed pairs are those of the kernels (only the order between warps
 * is the GPU's own). Every store the kernels make, and every read of the previous codes, is
 * checked against the size the launcher allocates for it (Sizes): an access out of bounds stops
 * the run and is reported, where on a GPU it would corrupt memory (kernels/README.md, "How the
 * launch is tested without a GPU").
 */

#include "eligibility.cu"

/* Launch geometry (chunk::Geometry): blocks along x, and along y for each kernel (0: not launched). */
typedef struct {
    uint64_t grid_x;
    uint64_t conditions_y;
    uint64_t rules_y;
    uint64_t threads;
} ElGrid;

/* Elements each buffer holds (chunk::Sizes). */
typedef struct {
    uint64_t cond_words;
    uint64_t codes;
    uint64_t planes;
    uint64_t previous;
    uint64_t changes;
} ElBounds;

/* Buffers, for ElFault. */
#define EL_BUF_COND_WORDS 1u
#define EL_BUF_CODES 2u
#define EL_BUF_PLANES 3u
#define EL_BUF_PREVIOUS 4u
#define EL_BUF_CHANGES 5u

/* The first access out of bounds: the buffer, the index, and the elements it holds. */
typedef struct {
    uint64_t buffer;
    uint64_t index;
    uint64_t bound;
} ElFault;

#define EL_CHECK(buf, at, n)                                                                       \
    do {                                                                                           \
        if ((at) >= (n)) {                                                                         \
            fault->buffer = (buf);                                                                 \
            fault->index = (at);                                                                   \
            fault->bound = (n);                                                                    \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* el_conditions, one warp: citizens i0 .. i0 + 31. */
static int el_conditions_warp(const ElColumns *cols, const ElProgram *prog, uint32_t *cond_words,
                              const ElGrid *grid, const ElBounds *bounds, uint64_t by, uint64_t i0,
                              ElFault *fault) {
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
            EL_CHECK(EL_BUF_COND_WORDS, at, bounds->cond_words);
            cond_words[at] = word;
        }
    }
    return 0;
}

/* el_rules, one warp: citizens i0 .. i0 + 31. */
static int el_rules_warp(const ElColumns *cols, const ElProgram *prog, const uint32_t *cond_words,
                         const ElOutput *out, const ElGrid *grid, const ElBounds *bounds,
                         uint64_t by, uint64_t i0, ElFault *fault) {
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
                EL_CHECK(EL_BUF_CODES, slot * 32 + lane, bounds->codes);
                out->codes[slot * 32 + lane] = (uint8_t)codes[lane];
            }
            low |= (v & 1u) << lane;
            high |= (v >> 1) << lane;
            if (out->mode == EL_OUT_CHANGES) {
                EL_CHECK(EL_BUF_PREVIOUS, slot * 32 + lane, bounds->previous);
                if (codes[lane] != out->previous[slot * 32 + lane]) mask |= 1u << lane;
            }
        }
        if (out->mode == EL_OUT_VERDICTS) {
            EL_CHECK(EL_BUF_PLANES, slot * 2 + 1, bounds->planes);
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
                    EL_CHECK(EL_BUF_CHANGES, at, bounds->changes);
                    out->change_pair[at] = (out->first + i0 + lane) * prog->n_rules + r;
                    out->change_code[at] = (uint8_t)codes[lane];
                }
            }
        }
    }
    return 0;
}

/* Both kernels over one chunk, block by block as the grid launches them. Returns 0, or 1 with
 * the first access out of bounds in `fault`. */
int el_launch_host(const ElColumns *cols, const ElProgram *prog, const ElOutput *out,
                   uint32_t *cond_words, const ElGrid *grid, const ElBounds *bounds,
                   ElFault *fault) {
    uint64_t by, bx, w;
    for (by = 0; by < grid->conditions_y; by++)
        for (bx = 0; bx < grid->grid_x; bx++)
            for (w = 0; w < grid->threads / 32; w++)
                if (el_conditions_warp(cols, prog, cond_words, grid, bounds, by,
                                       bx * grid->threads + w * 32, fault))
                    return 1;
    for (by = 0; by < grid->rules_y; by++)
        for (bx = 0; bx < grid->grid_x; bx++)
            for (w = 0; w < grid->threads / 32; w++)
                if (el_rules_warp(cols, prog, cond_words, out, grid, bounds, by,
                                  bx * grid->threads + w * 32, fault))
                    return 1;
    return 0;
}
