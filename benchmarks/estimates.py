"""The cost model against the clock: estimated and measured time of each benchmark kernel.

    python benchmarks/estimates.py [--quick] [--target cpu] [--calibrated]

For every workload of run.py and both kernels of every family of families.py, `Kernel.measure`
times calls beside the estimate extraction minimized. Columns: estimate, measured (median per call,
call overhead included), estimate/measured (the issue's bar: within 3x, i.e. between 1/3 and 3).
For the families, "ranks" says whether the estimates order the two kernels as the clock does.
`--calibrated` prices with `et.Machine.calibrated()` (this host's numbers, measured once) instead
of the defaults.
"""

from __future__ import annotations

import argparse

import numpy as np
from families import cases, compile_with
from run import machine_numbers, workloads

import egglog_tensor as et
from egglog_tensor.measure import Timing


def line(name: str, t: Timing) -> str:
    ok = "ok" if 1 / 3 <= t.ratio <= 3 else "OFF"
    return f"{name:22s} {t.estimated_ns / 1e3:12.1f} {t.measured_ns / 1e3:12.1f} {t.ratio:9.2f}  {ok}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--quick", action="store_true", help="run.py's sizes divided by 4, and no families")
    parser.add_argument("--calibrated", action="store_true", help="price with et.Machine.calibrated(), not the defaults")
    args = parser.parse_args()
    machine = {"machine": et.Machine.calibrated(1 if args.target == "cpu" else None)} if args.calibrated else {}
    print(machine.get("machine", "default machine numbers"))
    m = machine_numbers()
    print(f"copy {m['copy_GBps']:.1f} GB/s, numpy sgemm {m['sgemm_GFLOPs']:.0f} GFLOP/s, target {args.target}")
    print(f"{'kernel':22s} {'estimate µs':>12s} {'measured µs':>12s} {'est/meas':>9s}  within 3x")
    r = np.random.default_rng(0)
    ratios = []
    for w in workloads(4 if args.quick else 1):
        inputs = w.make(r)
        t = et.kernel(w.fn, target=args.target, **machine).measure(*inputs)
        ratios.append(t.ratio)
        print(line(w.fn.__name__, t))
    agree = []
    for name, fn, inputs, without, with_ in ([] if args.quick else cases(r)):
        t0, t1 = (compile_with(fn, args.target, o | machine, inputs).measure(*inputs) for o in (without, with_))
        ranks = (t0.estimated_ns < t1.estimated_ns) == (t0.measured_ns < t1.measured_ns)
        agree.append(ranks)
        ratios += [t0.ratio, t1.ratio]
        print(line(f"{name} without", t0))
        print(line(f"{name} with", t1) + f"  ranks {'as measured' if ranks else 'WRONG'}")
    inside = sum(1 / 3 <= q <= 3 for q in ratios)
    print(f"\n{inside} of {len(ratios)} estimates within 3x of the measurement; geometric mean est/meas "
          f"{float(np.exp(np.mean(np.log(ratios)))):.2f}" + (f"; {sum(agree)} of {len(agree)} families ranked as measured" if agree else ""))


if __name__ == "__main__":
    main()
