#!/usr/bin/env python3
"""Writes py_fixed_ties.json: CPython's f"{x:.{nd}f}" on values that look like rounding ties.

Sample i draws, from a 64-bit LCG (state = state * 6364136223846793005 + 1442695040888963407
mod 2^64, each draw state >> 33): nd = d % 4; m = d % 7; I = d % 10^m; F = d % 10^nd; ulps =
d % 5 - 2; negative = d % 4 == 0 (one draw each, in that order). x is float("[-]I.F5") (F
zero-padded to nd digits) moved `ulps` steps with math.nextafter (away from zero for ulps > 0).
CPython rounds |x| at nd decimals either down to I.F or up to the next nd-decimal number: bit i of
`up` (LSB first within each byte) is 1 when it rounded up. `cases` are explicit values (exact
ties among them) with CPython's string. Rerun: python3 py_fixed_ties.py > py_fixed_ties.json
"""
import base64, json, math

N = 12000
SEED = 20261207
M64 = (1 << 64) - 1


def samples():
    state = SEED
    def draw():
        nonlocal state
        state = (state * 6364136223846793005 + 1442695040888963407) & M64
        return state >> 33
    for _ in range(N):
        nd = draw() % 4
        m = draw() % 7
        i = draw() % 10 ** m
        f = draw() % 10 ** nd
        ulps = draw() % 5 - 2
        neg = draw() % 4 == 0
        frac = (f"{f:0{nd}d}" if nd else "") + "5"
        x = float(f"{'-' if neg else ''}{i}.{frac}")
        for _ in range(abs(ulps)):
            x = math.nextafter(x, (math.inf if (ulps > 0) != neg else -math.inf))
        yield x, nd, i, f, neg


def main():
    bits = bytearray((N + 7) // 8)
    for k, (x, nd, i, f, neg) in enumerate(samples()):
        got = format(x, f".{nd}f")
        down = f"{i}.{f:0{nd}d}" if nd else str(i)
        whole = i * 10 ** nd + f + 1
        up = f"{whole // 10 ** nd}.{whole % 10 ** nd:0{nd}d}" if nd else str(whole)
        sign = "-" if neg else ""
        if got == sign + up:
            bits[k // 8] |= 1 << (k % 8)
        elif got != sign + down:
            raise SystemExit(f"sample {k}: {x!r} .{nd}f gave {got}, neither {down} nor {up}")
    explicit = [(0.125, 2), (0.375, 2), (2.5, 0), (0.5, 0), (1.5, 0), (-2.5, 0), (89.45, 1), (1.145, 2), (894.5, 0), (2.675, 2),
                (0.05, 1), (-0.04, 1), (1e21, 1), (123.456, 0), (99.995, 2), (0.0005, 3), (1234.5675, 3), (-0.125, 2), (7.0, 2)]
    print(json.dumps({
        "seed": SEED, "n": N, "up": base64.b64encode(bytes(bits)).decode(),
        "cases": [[repr(x), nd, format(x, f".{nd}f")] for x, nd in explicit],
    }, indent=1))


if __name__ == "__main__":
    main()
