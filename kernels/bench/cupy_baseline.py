#!/usr/bin/env python3
"""CuPy baseline: the same conditions and rules as the GPU kernels, evaluated as columnar boolean
masks (one CuPy array operation per condition and per postfix instruction), from the arrays that
`gpu_bench --export DIR` writes. Prints the phases gpu_bench prints (upload, evaluate, download,
end to end) for two outputs a consumer might want — every outcome code, or the verdict alone
(computed on the device from the codes, one byte per pair) — and checks both against the CPU
batch codes (codes_cpu.bin) when present.

Usage: python3 cupy_baseline.py DIR [--numpy]   (--numpy: run on the CPU with NumPy, to test logic)
"""

import json
import sys
import time
from pathlib import Path

INT, NUM, BOOL, STR, LIST = range(5)
LEAF, AND, OR, NOT = range(4)
EQ, NEQ, GT, GTE, LT, LTE, IN, NOT_IN, BETWEEN = range(9)


def main():
    import numpy as np

    directory = Path(sys.argv[1])
    if "--numpy" in sys.argv:
        xp = np

        def sync():
            pass
    else:
        import cupy as xp

        def sync():
            xp.cuda.Stream.null.synchronize()

    manifest = json.loads((directory / "manifest.json").read_text())
    host = {
        name: np.fromfile(directory / a["file"], dtype=a["dtype"])
        for name, a in manifest["arrays"].items()
        if name != "codes_cpu"
    }
    n = manifest["len"]

    sync()
    start = time.perf_counter()
    column_arrays = {k: xp.asarray(host[k]) for k in ("ints", "nums", "u32s")}
    sync()
    upload = time.perf_counter() - start

    start = time.perf_counter()
    lanes = xp.arange(32, dtype=xp.uint32)

    def unpack(offset, words):
        """u32 words (32 citizens each, low bit first) to a boolean mask of n citizens."""
        w = column_arrays["u32s"][offset:offset + words]
        return (((w[:, None] >> lanes) & 1) == 1).reshape(-1)[:n]

    words = manifest["words"]
    known = [unpack(int(host["col_known"][f]), words) for f in range(len(host["col_kind"]))]

    def condition(c):
        f = int(host["cond_field"][c])
        kind, data = int(host["col_kind"][f]), int(host["col_data"][f])
        test, arg, count = int(host["cond_test"][c]), int(host["cond_arg"][c]), int(host["cond_count"][c])
        if kind in (INT, NUM):
            values = (column_arrays["ints"] if kind == INT else column_arrays["nums"])[data:data + n]
            e = (host["cond_ints"] if kind == INT else host["cond_nums"])[arg:arg + count]
            if test == EQ: m = values == e[0]
            elif test == NEQ: m = values != e[0]
            elif test == GT: m = values > e[0]
            elif test == GTE: m = values >= e[0]
            elif test == LT: m = values < e[0]
            elif test == LTE: m = values <= e[0]
            elif test == BETWEEN: m = (values >= e[0]) & (values <= e[1])
            else:
                m = xp.isin(values, xp.asarray(e))
                if test == NOT_IN: m = ~m
        elif kind == BOOL:
            m = unpack(data, words) == bool(arg)
        elif kind == STR:
            ids = column_arrays["u32s"][data:data + n]
            accept = xp.asarray(host["accept"][arg:arg + count].astype(bool))
            inside = ids < count
            m = inside & accept[xp.where(inside, ids, 0)] if count else xp.zeros(n, dtype=bool)
        else:
            width = int(host["col_width"][f])
            if arg == 0xFFFFFFFF:
                has = xp.zeros(n, dtype=bool)
            else:
                rows = column_arrays["u32s"][data:data + n * width].reshape(n, width)
                has = ((rows[:, arg // 32] >> (arg % 32)) & 1) == 1
            m = has == bool(count)
        return m & known[f]

    conds = [condition(c) for c in range(manifest["n_conditions"])]
    codes = xp.empty((manifest["n_rules"], n), dtype=xp.uint8)
    for r in range(manifest["n_rules"]):
        if not host["rule_applicable"][r]:
            codes[r] = 255
            continue
        # Three-valued truth as two masks (true, false); unknown is neither.
        stack = []
        first = int(host["rule_postfix"][r])
        for p in range(first, first + int(host["rule_postfix_len"][r])):
            op, a, b = int(host["instr_op"][p]), int(host["instr_a"][p]), int(host["instr_b"][p])
            scale = xp.uint64(host["instr_scale"][p])
            if op == LEAF:
                t = conds[a]
                f = ~t & known[b]
            elif op == NOT:
                f, t, _ = stack.pop()
            else:
                children = stack[-a:]
                del stack[-a:]
                ts, fs, nums = zip(*children)
                if op == AND:
                    t, f = xp.all(xp.stack(ts), axis=0), xp.any(xp.stack(fs), axis=0)
                    num = sum(nums[1:], nums[0])
                else:
                    t, f = xp.any(xp.stack(ts), axis=0), xp.all(xp.stack(fs), axis=0)
                    num = xp.max(xp.stack(nums), axis=0)
                stack.append((t, f, num * scale))
                continue
            stack.append((t, f, t.astype(xp.uint64) * scale))
        root_t, _, num = stack.pop()
        excluded = xp.zeros(n, dtype=bool)
        unresolved = xp.zeros(n, dtype=bool)
        e0 = int(host["rule_excl"][r])
        for k in range(int(host["rule_n_excl"][r])):
            c, fld = int(host["excl"][2 * (e0 + k)]), int(host["excl"][2 * (e0 + k) + 1])
            excluded |= ~conds[c] & known[fld]
            unresolved |= ~known[fld]
        den = int(host["rule_denominator"][r])
        assert den < 2**57, "100 × numerator must fit in u64 here"
        score = (num * xp.uint64(100) // xp.uint64(den)).astype(xp.uint8)
        partial = xp.where(score >= 50, score + 51, score).astype(xp.uint8)
        eligible = root_t & ~excluded & ~unresolved
        codes[r] = xp.where(excluded, score, xp.where(eligible, xp.uint8(152), partial))
    sync()
    evaluate = time.perf_counter() - start

    def fetch(array):
        sync()
        start = time.perf_counter()
        out = array.get() if hasattr(array, "get") else array
        return out, time.perf_counter() - start

    out, download = fetch(codes)
    # Verdicts as gpu_bench's two-bit codes: 0 not eligible, 1 partial, 2 eligible, 3 not applicable.
    start = time.perf_counter()
    verdicts = xp.where(codes <= 100, xp.uint8(0),
                        xp.where(codes <= 151, xp.uint8(1),
                                 xp.where(codes == 152, xp.uint8(2), xp.uint8(3))))
    sync()
    convert = time.perf_counter() - start
    verdicts_out, verdicts_download = fetch(verdicts)
    engine = "numpy" if xp is np else "cupy"
    print(f"{engine}: {n} citizens × {manifest['n_rules']} rules: upload {upload * 1e3:.1f} ms, "
          f"evaluate {evaluate * 1e3:.1f} ms")
    print(f"{engine} codes: download {download * 1e3:.1f} ms ({out.nbytes // 1_000_000} MB); "
          f"end to end {(upload + evaluate + download) * 1e3:.1f} ms")
    print(f"{engine} verdicts: convert {convert * 1e3:.1f} ms, download {verdicts_download * 1e3:.1f} ms "
          f"({verdicts_out.nbytes // 1_000_000} MB); end to end "
          f"{(upload + evaluate + convert + verdicts_download) * 1e3:.1f} ms")
    out.tofile(directory / "codes_cupy.bin")
    expected = directory / "codes_cpu.bin"
    if expected.exists():
        cpu = np.fromfile(expected, dtype=np.uint8).reshape(out.shape)
        differ = int((cpu != out).sum())
        cpu_verdicts = np.where(cpu <= 100, 0, np.where(cpu <= 151, 1, np.where(cpu == 152, 2, 3)))
        differ_verdicts = int((cpu_verdicts != verdicts_out).sum())
        print(f"parity with the CPU batch codes: {'OK' if differ == 0 else f'{differ} codes differ'}; "
              f"verdicts: {'OK' if differ_verdicts == 0 else f'{differ_verdicts} differ'}")
        sys.exit(1 if differ or differ_verdicts else 0)


if __name__ == "__main__":
    main()
