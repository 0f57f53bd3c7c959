"""The tile policy: which tiles, block sizes and packings a contraction gets, as pure functions of
its loop extents, element size and the Target (no MLIR here). The cost model prices with them, the
tiling rules offer candidates from them, and the tile stage (lowering/tiling.py) applies what they
choose; the reasons and measurements behind each choice are in tiling.py's docstring."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..target import Target


# Fewer loop iterations than this in one op: not worth a parallel region (it costs a few microseconds).
MIN_WORK = 1 << 15
SCAN_ROWS = 4  # rows an innermost-axis scan runs side by side (lowering/emit.py _interleaved_scan)
OUTER_ROWS = 4  # rows of a reduced outer axis met per pass over the kept loops (lowering/emit.py _rows_innermost)
ARG_SEGMENT = 1 << 14  # elements per segment, at least, of a flattened argmax/argmin split among the threads (lowering/argrows.py)
UPDATE_CHAIN = 16  # in-place updates (x[a:b] = ...) in a row before the emitter cuts the chain (lowering/emit.py _cut)
SCAN_SPLIT = 1 << 16  # a scanned axis this long, with too few other loops for the threads, is scanned in two passes over blocks


@dataclass(frozen=True)
class Tiles:
    """Tile sizes of one contraction, one per loop of its iteration domain."""

    tiles: tuple[int, ...]  # cache level
    vec: tuple[int, ...]  # register level (the vector shape)


def round_down(value: int, multiple: int) -> int:
    return max(multiple, value // multiple * multiple)


def fit(tile: int, extent: int) -> int:
    """A tile no larger than the loop it tiles (and at least 1)."""
    return max(1, min(tile, extent))


def divisor_tile(extent: int, cap: int, step: int) -> int:
    """The tile for a loop of `extent`: all of it if it fits `cap`, else the largest multiple of
    `step` <= cap dividing it (if at least cap/2), else the largest multiple of `step` <= cap."""
    if extent <= cap:
        return max(1, extent)
    best = cap // step * step
    for t in range(best, cap // 2 - 1, -step):
        if t > 0 and extent % t == 0:
            return t
    return max(step, best)


def simd_lanes(itemsize: int, target: Target) -> int:
    """Elements of `itemsize` bytes in one SIMD register of `target` (the vector width VF)."""
    return max(1, target.simd // max(1, itemsize))


def register_tile(itemsize: int, target: Target) -> tuple[int, int]:
    """(mr, nr) of the matmul register tile: nr two SIMD vectors wide, mr rows (16 accumulators +
    B + A broadcasts fit 32 zmm registers; 6 rows with 16 registers)."""
    return (8 if target.simd >= 64 else 6), 2 * simd_lanes(itemsize, target)


def choose_tiles(op: str, loops: tuple[int, ...], itemsize: int, target: Target) -> Tiles:
    """Default tile sizes for contraction `op` (e.g. "linalg.matmul") with loop extents `loops`.

    Register tile (matmul): `register_tile`. Cache tiles: the B micro-panel
    (TK x nr) takes half of L1; the A block (TM x TK) at most a third of L2 and TM <= 256 (the
    loads of the C tile are amortized over TK, not TM); TN = 4 nr. A tile that divides its loop
    is preferred (measured: a dynamic last cache tile costs ~2x at 1024^3; a TK dividing k also lets
    the tile stage pack B), then the whole extent.
    """
    c = target
    lanes = simd_lanes(itemsize, c)
    name = op.removeprefix("linalg.")
    if name in ("matmul", "batch_matmul"):
        *batch, m, n, k = loops
        mr, nr = register_tile(itemsize, c)
        tk = round_down(c.l1 // 2 // (nr * itemsize), 8)
        tn = 4 * nr
        tm = round_down(min(256, c.l2 // 3 // (tk * itemsize)), mr)
        mr, nr = fit(mr, m), fit(nr, n)
        tm, tn, tk = divisor_tile(m, tm, mr), divisor_tile(n, tn, nr), divisor_tile(k, tk, 8)
        return Tiles(tuple([1] * len(batch)) + (tm, tn, tk), tuple([1] * len(batch)) + (mr, nr, 1))
    if name == "matvec":  # loops (m, k): rows in registers, k split into vector-wide partial sums
        m, k = loops
        mr, kv = fit(4, m), fit(4 * lanes, k)
        if mr == 1 and kv < k < 2 * kv:
            # (one row and one full step of k: the row and k loops fold away, and MLIR's vector patterns
            # (cast_away_vector_leading_one_dim with fold_tensor_subset_ops_into_vector_transfers) left
            # the masked last step's vector.mask around an op it cannot mask: an assertion aborted the
            # process (issue 22); two or more full steps keep the k loop)
            kv = round_down(k // 2, lanes)
        tm = divisor_tile(m, round_down(max(1, m // 16), mr), mr)  # enough row blocks to share among threads
        return Tiles((tm, k_block(k, kv, kv)), (mr, kv))
    if name == "vecmat":  # loops (n, k): a block of y stays in L1 while whole rows of A stream through
        n, k = loops
        nv, kr = fit(4 * lanes, n), fit(4, k)
        return Tiles((divisor_tile(n, round_down(c.l1 // 2 // itemsize, nv), nv), k_block(k, 1, kr)), (nv, kr))
    if name == "dot":
        (k,) = loops
        kv = fit(4 * lanes, k)
        return Tiles((k_block(k, kv, kv),), (kv,))
    raise ValueError(f"no tile policy for {op}")


K_STEPS = 256  # products one accumulator of a matvec, vecmat or dot adds before its k loop is cut into blocks


def k_block(k: int, lanes: int, step: int) -> int:
    """The k block (0: one block) of a matvec, vecmat or dot whose k loop sums into `lanes` chains
    per output: each block's chains start from zero and its sum is added to the result's, so no
    chain is much longer than max(K_STEPS, sqrt(k / lanes)). A multiple of `step`, dividing k when one
    does near that size. Unblocked, float32 A @ y with k = 2^20 of 0.1 was off by 6.6e-5 (16384
    products a lane, NumPy 1.3e-6), y @ A by 1.4e-2 (NumPy 7.4e-4)."""
    steps = k // lanes
    if steps <= K_STEPS:
        return 0
    return divisor_tile(k, lanes * max(K_STEPS, 2 ** math.ceil(math.log2(steps) / 2)), step)


def footprint(op: str, tiles: Tiles, itemsize: int) -> tuple[int, int]:
    """Bytes the register-level loop keeps in L1 and the cache tile keeps in L2 (matmul family)."""
    *_, tm, tn, tk = tiles.tiles
    *_, mr, nr, _ = tiles.vec
    l1 = (tk * nr + mr * tk) * itemsize
    l2 = (tm * tk + tk * tn + tm * tn) * itemsize
    return l1, l2


def _crowded(rows: int, stride: int, width: int, size: int, ways: int) -> bool:
    """Whether `rows` rows of `width` bytes, `stride` bytes apart, would take more than half the
    ways of the cache sets they map to in a cache of `size` bytes (a power-of-two stride maps
    every row to the same sets)."""
    way = max(1, size // max(1, ways))
    return rows * max(math.gcd(stride, way), min(width, way)) / way > ways / 2


def packing(loops: tuple[int, ...], tiles: tuple[int, ...], vec: tuple[int, ...], itemsize: int,
            target: Target, epilogue: bool = False, prepack: bool = True) -> frozenset[str]:
    """Which operands of a matmul the tile stage copies into contiguous buffers: "P" (all of B once,
    before the block loop, panel-major: nr-wide column panels one after the other, each TK x nr
    micro-panel contiguous), else "B" (each TK x nr micro-panel, in the n loop of every block);
    "A" (the TM x TK block at each k step), "C" (the TM x TN block across the k loop).

    B is packed once ("P") when several row blocks would each copy the same micro-panels from
    memory (B larger than L2), n is a multiple of TN (a partial column block failed to bufferize)
    and `prepack` (a batch_matmul's blocks copy their micro-panels, and so do an elementwise
    epilogue's, whose loop the matmul is fused into block by block, unless A and B are packed in
    panels, `packs_panels`; a matvec epilogue's blocks read B packed).
    (With B in L2, the extra pass and parallel region cost more than the copies: measured slower
    at 512^3, 256^3.) A product that is a temporary gets B packed once too: both buffers are lent
    by the caller (lowering/workspace.py); malloc'd, glibc gave them back to the system after
    every call of (a @ b) @ c at 2048 and faulted them in again (8K page faults a call, 67 -> 74 ms).
    `epilogue`: the product is computed block by block into a block-sized buffer (never "C").
    Otherwise only full, static blocks and panels are packed (a partial one's pad bufferizes to a
    memref.copy runtime call, or not at all), A and C only with several k steps and when, read in
    place, the rows of the block would crowd their L2 sets (rows a power-of-two stride apart). B
    always: its panel rows are n apart. (The mr rows of A a register tile reads share one L1 set
    from a 4 KiB stride on, but packing A for that alone measured no faster at 1024^3.)
    """
    c = target
    if len(loops) != 3:
        return frozenset()
    (m, n, k), (tm, tn, tk), (_, nr, _) = loops, tiles, vec
    found = set()
    if prepack and nr > 1 and m > tm and n % tn == 0 and tn % nr == 0 and k * n * itemsize > c.l2:
        found.add("P")
    # (Not with one B panel per block and a partial last row block, nor with a partial last column
    # block: bufferization rejects the m loop's yield, the n loop's.)
    elif nr > 1 and k % tk == 0 and n % tn == 0 and tn % nr == 0 and (tn > nr or m % tm == 0):
        found.add("B")
    if k > tk and k % tk == 0 and m % tm == 0 and n % tn == 0:  # (a partial column block: as for B)
        if _crowded(tm, k * itemsize, tk * itemsize, c.l2, c.l2_ways):
            found.add("A")
        if not epilogue and n > tn and _crowded(tm, n * itemsize, tn * itemsize, c.l2, c.l2_ways):
            found.add("C")  # (an epilogue's block already is a block-sized buffer)
    return frozenset(found)


def padded_loops(op: str, loops: tuple[int, ...], vec: tuple[int, ...], target: Target) -> tuple[int, int, int] | None:
    """The loops (m, n, k) of a 2-D matmul with m rounded up to whole register tiles of mr rows, when
    m is not and the matmul is large enough (`target.tuning.pad_min_work`); else None.

    The last register tile of rows, masked in m, lowers to shuffles and scalar code: 300^3 and 500^3
    on two cores ran at 0.47x and 0.39x NumPy. Computed on zero-padded copies of A and C (exact:
    the padded rows of C are not copied back), every register tile is full: 0.68x and 0.70x (100^3:
    0.23x -> 0.50x). The copies cost O(mk + mn) against O(mnk). Padding n to nr and k to 8 as well
    measured no better (at 400^3 and 600^3 with m aligned, padding n was 5-25% slower); the last
    tile of columns is vectorized at its own width instead (`_vectorize_remainder`)."""
    if op != "linalg.matmul" or len(loops) != 3 or math.prod(loops) < target.tuning.pad_min_work or loops[0] % vec[0] == 0:
        return None
    m, n, k = loops
    return -(-m // vec[0]) * vec[0], n, k


def padded_tiles(loops: tuple[int, ...], padded: tuple[int, ...], tiles: tuple[int, ...], vec: tuple[int, ...]) -> tuple[int, ...]:
    """Cache tiles for the padded loops: TM (capped at m) rounded up to whole register tiles, then the
    largest such tile dividing the padded m (`divisor_tile`); TN and TK capped at their loops."""
    tm, tn, tk = (min(t, e) for t, e in zip(tiles, loops, strict=True))
    return divisor_tile(padded[0], -(-tm // vec[0]) * vec[0], vec[0]), tn, tk


def panel_k(k: int, tk: int) -> int:
    """The k step of a matmul packed in panels: TK when it divides k, else the largest even divisor of
    k from TK / 2 up to TK (whole k steps), else the multiple of 8 that splits k into as many steps as
    TK does with the least padding (A's and B's packs pad the last one with zeros: exact)."""
    tk = min(tk, k)
    even = next((d for d in range(tk, max(2, tk // 2) - 1, -1) if k % d == 0 and d % 2 == 0), None)
    steps = -(-k // tk)
    return even or -(-k // (8 * steps)) * 8


def packs_panels(loops: tuple[int, ...], tiles: tuple[int, ...], vec: tuple[int, ...], target: Target, reduced: bool = False) -> bool:
    """Whether a 2-D matmul (loops m, n, k) packs A and B once, in panels (lowering/tiling.py
    `_pack_panels`): several row blocks share B's panels, the matmul is not tiny
    (`target.tuning.panel_min_work`), TM is whole register tiles and TN several (with one, TN = nr, a
    copy of a block was left to memrefCopy). Whether or not B fits L2: from 256^3 to 700^3 (B in L2)
    panels measured 15-25% faster than blocks copying B's micro-panels. Any m, n and k: the packs pad
    the last register tiles of rows and columns and the last k step (`panel_k`), and the blocks at the
    edges are partial. A product `reduced` by a matvec epilogue needs whole blocks and k steps: its
    packed matvec would sum the product's padded columns too, where an inf of A times B's padded zeros
    is NaN (NumPy's y has the inf)."""
    if len(loops) != 3:
        return False
    (m, n, k), (tm, tn, tk), (mr, nr, _) = loops, tiles, vec
    whole = m % tm == 0 and n % tn == 0 and k % panel_k(k, tk) == 0
    return m > tm and m * n * k >= target.tuning.panel_min_work and tm % mr == 0 and tn % nr == 0 and tn > nr \
        and (not reduced or whole)


BLOCK_ROWS = (2, 4, 8, 16, 32, 64)  # rows per block of a row-fused loop rulesets.tiling offers; cost.rows_slowdown prices them
ACCUMULATORS = (1, 2, 4, 8)  # vectors a reduction may accumulate side by side (rulesets.tiling's candidates)


def block_rows(rows: int, row_bytes: int, target: Target) -> int:
    """Rows per block when the term did not choose them: the block's rows (`row_bytes` for all the
    row-sized values of one row) fit in half the L2 cache, at most 64 rows and at least 4 blocks per
    thread of `target` when there are rows enough, preferably dividing the row count (no remainder block)."""
    threads = target.threads
    cap = max(1, min(64, target.l2 // 2 // max(1, row_bytes), rows // (4 * threads) if threads > 1 else rows))
    return divisor_tile(rows, cap, 1)


# A cpu-openmp program the cost model prices below `Tuning.serial_below_ns` (30 us) runs on one thread: splitting
# it does not pay for starting the threads, and beside NumPy calls the OpenBLAS threads spinning after each one take
# the cores its threads wait for (128x64 @ 64x96 + relu, priced 19.5 us, 2 threads: 23-28 us alone, 157-184 us
# called between NumPy matmuls; 30-39 us on one thread).
def lowering_target(target: Target, estimate_ns: float) -> Target:
    """The Target a program estimated at `estimate_ns` is lowered for: `target`, with one thread when it is a
    cpu-openmp target and the estimate is below its `tuning.serial_below_ns`."""
    if target.name != "cpu-openmp" or target.threads <= 1 or estimate_ns >= target.tuning.serial_below_ns:
        return target
    return replace(target, threads=1)
