"""The staged API (egglog_tensor/stages.py): `f.trace(x).optimize().lower().compile()`.

Each stage shows its text and IR, can be advanced again with an equal result, is immutable; the
Compiled stage runs like the kernel and has the assembly `f.inspect` gives; compile_kernel is the
same stages composed with the on-disk cache."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import egglog_tensor as et
from egglog_tensor import cache, stages
from egglog_tensor.graph import Node
from egglog_tensor.lowering.pipelines import pipeline_for, run_pipeline

rng = np.random.default_rng(0)


def softmax(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def dense(A, B, c):
    return np.maximum(A @ B + c, 0.0)


def test_a_compile_prints_only_what_it_needs(monkeypatch, tmp_path) -> None:
    """The MLIR after each lowering stage and the assembly are made when first read, equal to a printed
    run of the stages, after a fresh compile and after a cache hit (the cache stores them as null)."""
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE_DIR", str(tmp_path))
    x = rng.standard_normal((64, 100), dtype=np.float32)
    comp = et.kernel(softmax, target="cpu").inspect(x)
    made = comp.texts.made()
    last = comp.stages[comp.stages.index("llvm-ir") - 1]  # the last MLIR stage: the LLVM dialect mlir-translate takes
    assert made["linalg"] and made[last] and made["llvm-ir"] and made["llvm-ir-optimized"]  # what the compile needs
    assert made["rows"] is None and made["loops"] is None and made["asm"] is None and comp.cache == "miss-stored"
    printed = dict(run_pipeline(comp.stage("linalg"), pipeline_for(comp.options.target)).texts)
    assert comp.stage("loops") == printed["loops"] and "scf.for" in comp.stage("loops")
    # one run made every MLIR stage (but debug-info's: the compile's names the source lines the linalg text omits)
    assert all(comp.texts.made()[name] == text for name, text in printed.items() if name != "debug-info")
    assert 'loc("' + __file__ in comp.stage("debug-info") and __file__ not in printed["debug-info"]
    assert comp.texts.made()["asm"] is None and "_mlir_ciface_kernel:" in comp.stage("asm")

    hit = et.kernel(softmax, target="cpu").inspect(x)
    assert hit.cache == "hit" and hit.texts.made()["rows"] is None and hit.stages == comp.stages
    assert hit.stage("rows") == printed["rows"] and hit.stage("asm") == comp.stage("asm")


def test_softmax_chain_texts_results_and_errors(monkeypatch) -> None:
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE", "0")  # f.inspect below compiles afresh, as the staged API does
    f = et.kernel(softmax, target="cpu")
    x = rng.standard_normal((64, 100), dtype=np.float32)

    traced = f.trace(x)
    assert isinstance(traced, et.Traced) and traced.stages == ["traced"]
    assert traced.names == ("x",) and all(isinstance(n, Node) for n in traced.outputs)
    text = traced.as_text()
    assert text == traced.as_text("traced") == str(traced.term)
    assert all(op in text for op in ("exp(", ".max(", ".sum(", 'Tensor.arg("x"'))
    assert f.trace(x) == traced  # the same function, signature and options trace to the same program
    with pytest.raises(dataclasses.FrozenInstanceError):
        traced.outputs = ()  # type: ignore[misc]
    with pytest.raises(KeyError, match="no stage 'nope'; stages are: traced"):
        traced.as_text("nope")

    optimized = traced.optimize()
    assert optimized.stages == ["traced", "optimizer", "extracted"]
    assert isinstance(optimized.report, et.OptimizeReport) and optimized.report.stop_reason == "saturated"
    assert all(isinstance(n, Node) for n in optimized.outputs)
    main = optimized.as_text()
    assert "estimated cost" in main and "extracted term:" in main and optimized.extracted_term in main
    assert "fuse_rows" in optimized.as_text("extracted") and optimized.as_text("traced") == text
    again = traced.optimize()  # advancing a stage twice redoes it: equal results, the first one unchanged
    assert again == optimized and again.as_text("extracted") == optimized.as_text("extracted")

    lowered = optimized.lower()
    assert lowered.as_text() == lowered.module_text == lowered.as_text("linalg")
    assert "linalg.generic" in lowered.module_text and "func.func @kernel" in lowered.module_text
    assert lowered.stages[:4] == ["traced", "optimizer", "extracted", "linalg"]
    assert {"rows", "bufferize", "loops", "llvm"} <= set(lowered.stages) and lowered.stages[-1] == "llvm-ir"
    assert "scf.for" in lowered.as_text("loops") and "define void @kernel" in lowered.as_text("llvm-ir")
    assert optimized.lower() == lowered
    facts = dict(lowered.facts)  # what the stages decided, as records: no workspace, no flattened op (rows are fused)
    assert facts["bufferize"].buffers == () and lowered.workspace == () and "flatten" not in facts

    compiled = lowered.compile()
    assert compiled.stages == [*lowered.stages, "llvm-ir-optimized", "asm"]
    assert compiled.as_text() == compiled.stage("asm") == compiled.module.asm
    assert isinstance(compiled.compilation, et.Compilation) and compiled.native is compiled.compilation.native
    np.testing.assert_allclose(compiled(x), softmax(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(compiled(x=x), softmax(x), rtol=1e-5, atol=1e-6)
    summary = repr(compiled)
    assert summary.startswith("kernel softmax(x: float32[64,100])") and "cache: disabled (not used by the staged API)" in summary
    assert "<details><summary>asm</summary>" in compiled._repr_html_()

    # The one-call shortcut compiles the same program to the same code.
    comp = f.inspect(x)
    assert comp.stages == compiled.stages and comp.stage("asm") == compiled.stage("asm") and comp.facts == compiled.compilation.facts
    assert comp.stage("traced") == text and comp.stage("linalg") == lowered.module_text

    with pytest.raises(et.KernelArgumentError, match=r"compiled for \(x: float32\[64,100\]\), called with \(x: float32\[10,100\]\)"):
        compiled(x[:10])
    with pytest.raises(et.KernelArgumentError, match="float64"):
        compiled(x.astype(np.float64))
    with pytest.raises(et.KernelArgumentError):
        compiled(x, x)
    with pytest.raises(KeyError, match="no stage 'nope'; stages are: traced, optimizer, extracted, linalg, .*, asm"):
        compiled.as_text("nope")


def test_matmul_epilogue_chain_matches_inspect(monkeypatch) -> None:
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE", "0")
    f = et.kernel(dense, target="cpu")
    A = rng.standard_normal((64, 32), dtype=np.float32)
    B = rng.standard_normal((32, 48), dtype=np.float32)
    c = rng.standard_normal(48, dtype=np.float32)

    traced = f.trace(A, B, c)
    assert " @ " in traced.as_text() and "maximum" in traced.as_text()
    lowered = traced.optimize().lower()
    assert "linalg.matmul" in lowered.module_text and "tile-script" in lowered.stages
    assert "transform" in lowered.as_text("tile-script")
    compiled = lowered.compile()
    expected = dense(A, B, c)
    np.testing.assert_allclose(compiled(A, B, c), expected, rtol=1e-5, atol=1e-5)
    out = np.empty_like(expected)
    assert compiled(A, B, c, out=out) is out
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    assert compiled.stage("asm") == f.inspect(A, B, c).stage("asm")
    with pytest.raises(et.KernelArgumentError, match="called with"):
        compiled(A, B[:, :16], c[:16])


def test_compile_kernel_is_the_stages_with_the_disk_cache(monkeypatch) -> None:
    """A miss runs each stage once (the staged API's functions) and stores; a hit skips optimize and lower."""
    calls: list[str] = []
    for name in ("optimize", "lower", "compile"):
        real = getattr(stages, name)
        monkeypatch.setattr(stages, name, lambda s, *rest, real=real, name=name: (calls.append(name), real(s, *rest))[1])

    def double(x):
        return x * 2.0 + 1.0

    x = np.arange(8, dtype=np.float32)
    comp = et.kernel(double, target="cpu").inspect(x)
    assert calls == ["optimize", "lower", "compile"] and comp.cache == "miss-stored"
    assert list(comp.timings)[:3] == ["trace", "cache-lookup", "optimize"] and "cache-store" in comp.timings

    calls.clear()
    hit = et.kernel(double, target="cpu").inspect(x)
    assert calls == [] and hit.cache == "hit" and hit.stage("asm") == comp.stage("asm")
    np.testing.assert_array_equal(et.kernel(double, target="cpu")(x), x * 2.0 + 1.0)

    # The staged API neither reads nor writes the on-disk cache.
    entries = sorted(Path(cache.cache_dir()).rglob("*"))
    compiled = et.kernel(double, target="cpu").trace(x).optimize().lower().compile()
    assert calls == ["optimize", "lower", "compile"] and compiled.compilation.cache == "disabled"
    assert sorted(Path(cache.cache_dir()).rglob("*")) == entries
    np.testing.assert_array_equal(compiled(x), x * 2.0 + 1.0)


def test_lower_reads_another_cpus_stages_that_inspect_cannot_load() -> None:
    """f.lower(x) is f.trace(x).optimize().lower(): a CPU the host is not (AVX-512 on an AVX2 host, or
    the other way round) gets its stages and LLVM IR; inspect, which loads the code, says to use it."""
    from egglog_tensor.target import NAMED, Target

    other = NAMED["avx2" if Target.host().has("avx512f") else "avx512"]
    x = rng.standard_normal((64, 100), dtype=np.float32)
    lowered = et.kernel(softmax, target=other).lower(x)
    assert isinstance(lowered, stages.Lowered) and lowered.stages[-1] == "llvm-ir"
    assert other.cpu in repr(lowered) and lowered.as_text("llvm-ir") != et.kernel(softmax, target="cpu").lower(x).as_text("llvm-ir")
    if not Target.host().has("avx512f"):  # code for a CPU with more features cannot be loaded here
        with pytest.raises(et.CompileError, match=r"f\.lower\(\*args\)"):
            et.kernel(softmax, target=other).inspect(x)
