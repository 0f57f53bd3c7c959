"""`python -m egglog_tensor.opt --stage NAME in.mlir`: run one stage of a target's lowering pipeline on
an MLIR file and print the IR after it (like mlir-opt, for the stage-level golden tests in tests/filecheck).

    python -m egglog_tensor.opt --list [--target cpu-openmp]      the target's stage names, in order
    python -m egglog_tensor.opt --stage gpu-map --target rocdl:gfx942 in.mlir   a GPU target's stage (docs/gpu.md)
    python -m egglog_tensor.opt --stage tile --cpu avx2 in.mlir   tiled for a named CPU, not this one
    python -m egglog_tensor.opt --stage tile in.mlir              the IR after the tile stage
    python -m egglog_tensor.opt --stage tile --print-script in.mlir   the tile stage's transform script
    python -m egglog_tensor.opt --through bufferize in.mlir       the stages from the first through bufferize
                                                                  (the input of the stage after it)

The stage runs in a forked child (as in compilation), so an MLIR assertion is an error naming the
stage, not a crash. Errors go to stderr with exit code 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace

from mlir import ir

from .errors import CompileError
from .forked import ChildDied, run_forked
from .gpu.targets import gpu_target, is_gpu_name
from .lowering.pipelines import Pipeline, pipeline_for, resolve_target, run_stage
from .lowering.stages import Stage
from .target import NAMED, Target, default_threads


class OptError(Exception):
    """A usage or input error reported as one line on stderr."""


def _stages(pipeline: Pipeline, args: argparse.Namespace) -> tuple[Stage, ...]:
    """The stages to run: the one named by --stage, or the first ones through --through."""
    name = args.stage or args.through
    names = [s.name for s in pipeline.stages]
    if name not in names:
        raise OptError(f"unknown stage {name!r} for target {pipeline.name!r}; its stages are: {', '.join(names)}")
    index = names.index(name)
    if args.print_script and not pipeline.stages[index].scripted:
        scripted = [s.name for s in pipeline.stages if s.scripted]
        raise OptError(f"stage {name!r} builds no transform script; the stages that do are: {', '.join(scripted)}")
    return (pipeline.stages[index],) if args.stage else pipeline.stages[: index + 1]


def _run(send: Callable[[tuple[str, str]], None], text: str, source: str, pipeline: Pipeline,
         stages: tuple[Stage, ...], print_script: bool) -> None:
    """In the child: parse `text`, apply `stages` in order, sending ("stage", name) as each starts and
    ("out", the IR after the last or its transform script) at the end."""
    with ir.Context():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as exc:
            raise OptError(f"{source}: the MLIR does not parse:\n{exc}") from None
        plan = None  # the contraction plan, made once for the planned stages (lowering/pipelines.py)
        for stage in stages:
            send(("stage", stage.name))
            plan = pipeline.plan(stage, module, plan)
            if print_script:
                script = stage.script_for(module, plan)
                if script is None:
                    raise OptError(f"stage {stage.name!r} has nothing to transform in {source}: it builds no script (and leaves the IR unchanged)")
                send(("out", str(script)))
                return
            module = run_stage(module, stage, pipeline, plan=plan) or module
        send(("out", str(module)))


def _gpu_target(name: str) -> Target:
    """The Target of a GPU target name; OptError saying what is wrong with a malformed one."""
    try:
        return gpu_target(name)
    except ValueError as exc:
        raise OptError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m egglog_tensor.opt", description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--stage", metavar="NAME", help="run this one stage on the input")
    action.add_argument("--through", metavar="NAME", help="run the stages from the first through this one")
    action.add_argument("--list", action="store_true", help="print the target's stage names in order")
    parser.add_argument("--target", default="cpu", help="cpu, cpu-openmp, rocdl:<gfx chip> or nvvm:<sm name>")
    parser.add_argument("--threads", type=int, metavar="N", help="threads of the cpu-openmp target (default: OMP_NUM_THREADS or the cores)")
    parser.add_argument("--cpu", default="host", choices=("host", *NAMED),
                        help="the machine the stages tile and vectorize for (default: this one)")
    parser.add_argument("--print-script", action="store_true", help="print the stage's transform script instead of running it")
    parser.add_argument("input", nargs="?", default="-", help="MLIR file ('-' or none: stdin)")
    args = parser.parse_args(argv)
    try:
        if args.threads is not None and args.threads < 1:
            raise OptError(f"--threads must be >= 1, got {args.threads}")
        if args.threads is not None and args.target != "cpu-openmp":
            raise OptError("--threads applies to --target cpu-openmp only")
        if args.print_script and not args.stage:
            raise OptError("--print-script needs --stage")
        machine = Target.host() if args.cpu == "host" else NAMED[args.cpu]
        if is_gpu_name(args.target):
            pipeline = pipeline_for(_gpu_target(args.target))
        elif args.target in ("cpu", "cpu-openmp"):
            pipeline = pipeline_for(resolve_target(replace(machine, name=args.target, threads=args.threads or default_threads())))
        else:
            raise OptError(f"unknown target {args.target!r}: cpu, cpu-openmp, rocdl:<gfx chip> or nvvm:<sm name>")
        if args.list:
            print("\n".join(s.name for s in pipeline.stages))
            return 0
        stages = _stages(pipeline, args)
        source = "<stdin>" if args.input == "-" else args.input
        try:
            text = sys.stdin.read() if args.input == "-" else open(args.input).read()
        except OSError as exc:
            raise OptError(f"cannot read {source}: {exc.strerror}") from None
        got: dict[str, str] = {"stage": "parse"}
        try:
            run_forked(lambda send: _run(send, text, source, pipeline, stages, args.print_script), lambda item: got.update([item]))
        except ChildDied as died:
            raise OptError(f"stage {got['stage']!r} ended the process running it ({died.how}):\n{died.stderr}") from None
        except (OptError, CompileError):
            raise
        except Exception as exc:  # a bug in a stage's script builder or rewrite: still no traceback
            raise OptError(f"stage {got['stage']!r} failed: {type(exc).__name__}: {exc}") from None
        sys.stdout.write(got["out"].rstrip("\n") + "\n")
        return 0
    except (OptError, CompileError) as exc:
        print(f"egglog_tensor.opt: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
