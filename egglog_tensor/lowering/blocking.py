"""Blocked float sums: the steps that keep every accumulation chain of a sum short.

One `linalg.generic` reducing n elements into one accumulator adds them in a chain: the rounding
error of the chain grows like n·ε (summing 2^28 float32 values of 0.1 in one generic was 1.4%
off, a stride-0 input stopped growing at 2^24). NumPy sums pairwise. Here a float sum is emitted
as a few generics (steps), each of which adds at most CHAIN values into any accumulator:

- the innermost loop, when it reduces and is vectorized (unit-stride operands), keeps L lanes of
  partial sums side by side (LLVM's vectorizer; `fastmath<reassoc>` on the combine only), so it may
  run CHAIN·L elements. Up to CHAIN·VF elements L is LLVM's own choice (at least VF); a longer loop
  gets L = ACCUMULATORS·VF, pinned by the "lanes" stage (lowering/stages/lanes.py: LLVM's usual four
  vectors, made sure), or the lanes the optimizer chose; a loop longer than CHAIN·L is cut into
  blocks of CHAIN·L and each block is summed into its own partial;
- every other reduction loop (a column sum's rows, the rows of a full sum, a strided or broadcast
  operand's loop) adds one value per iteration to the same accumulator: the loops reduced in one
  step may run CHAIN iterations in all, and a longer loop is cut into blocks of what is left.

The partials form a smaller array (1/CHAIN of the input or less) summed by the next step the same
way, so the error is bounded by about CHAIN/13·ε per step (measured on constant data, the worst
case for a chain) over log_CHAIN(n) steps: ≤ ε·log2(n) overall (docs/accuracy.md's bound), at any size,
layout and thread count (cpu-openmp's per-thread partials only cut chains further and are combined
in a fixed order). Max and min round nothing and products round once per factor whatever the
order, so only sums are blocked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CHAIN = 64  # values added into one accumulator (one lane) by one step
ACCUMULATORS = 4  # vectors a long vectorized reduction loop accumulates side by side


@dataclass(frozen=True)
class Step:
    """One generic of a blocked sum: reduces `axes` of its input whole and, when `block` is set,
    axis block[0] in blocks of block[1] elements (that axis stays, with one entry per block)."""

    axes: tuple[int, ...]
    block: tuple[int, int] | None = None
    lanes: int | None = None  # lanes its innermost reduction loop must keep (None: LLVM's own)

    def result(self, shape: tuple[int, ...], reduced: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The partials' shape and the axes of it still to reduce."""
        out, left = [], []
        for axis, n in enumerate(shape):
            if axis in self.axes:
                continue
            if self.block and axis == self.block[0]:
                n //= self.block[1]  # the tail past the last full block joins that block
            if axis in reduced:
                left.append(len(out))
            out.append(n)
        return tuple(out), tuple(left)


def _step(shape: tuple[int, ...], reduced: tuple[int, ...], vf: int, chosen: int | None) -> Step:
    """The next step: the innermost loop vectorized over `vf` lanes or more (`chosen`: the
    optimizer's) when it reduces, then as many outer reduced loops (innermost first) as the chain
    allows, the last of them maybe in blocks. vf = 1: the innermost loop is not vectorized."""
    inner = len(shape) - 1
    taken: list[int] = []
    chain, pinned = 1, None
    if inner in reduced and vf > 1 and shape[inner] >= 2 * vf:
        pinned = chosen or (ACCUMULATORS * vf if shape[inner] > CHAIN * vf else None)
        lanes = pinned or vf
        if shape[inner] > CHAIN * lanes:
            return Step((), (inner, CHAIN * lanes), pinned)
        taken.append(inner)
        chain = math.ceil(shape[inner] / lanes) + lanes.bit_length() - 1  # lane 0 carries the total, then the lane tree
    for axis in sorted(reduced, reverse=True):
        if axis in taken:
            continue
        if chain * shape[axis] <= CHAIN:
            taken.append(axis)
            chain *= shape[axis]
            continue
        block = CHAIN // chain
        if block >= 2:
            return Step(tuple(sorted(taken)), (axis, block), pinned)
        break
    return Step(tuple(sorted(taken)), None, pinned)


def plan(shape: tuple[int, ...], axes: tuple[int, ...], unit_stride: bool, vf: int, chosen: int | None = None) -> list[Step]:
    """The steps summing `axes` of `shape`: the first reads the operand (vectorized when its
    innermost loop reads unit strides, with the optimizer's `chosen` lanes if any), the others
    the contiguous partials. vf: the SIMD lanes of the element type."""
    steps: list[Step] = []
    reduced = tuple(sorted(axes))
    lanes = vf if unit_stride else 1
    while reduced:
        step = _step(shape, reduced, lanes, chosen)
        steps.append(step)
        shape, reduced = step.result(shape, reduced)
        lanes, chosen = vf, None
    return steps
