"""The on-disk compilation cache: hits across processes, keys that change, bad entries, unwritable dirs, races.

conftest.py gives every test a fresh, empty cache dir (EGGLOG_TENSOR_CACHE_DIR).
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from egglog import rewrite, ruleset

import egglog_tensor as et
from egglog_tensor import cache
from egglog_tensor.ir import DType, Tensor
from egglog_tensor.rulesets import algebra


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


X = np.linspace(-4, 4, 1001, dtype=np.float32)


def _compile(fn=gelu, *args, **options):
    """A fresh Kernel (empty in-memory cache) compiled for args: its Compilation and its result."""
    k = et.kernel(fn, **options)
    args = args or (X,)
    out = k(*args)
    return k.inspect(*args), out


def _entries(directory: Path | None = None) -> list[Path]:
    directory = directory or cache.cache_dir()
    return sorted(directory.glob("*.etk")) if directory and directory.is_dir() else []


def test_tests_use_a_temporary_cache_dir() -> None:
    assert cache.cache_dir() is not None
    assert not str(cache.cache_dir()).startswith(str(Path.home() / ".cache"))


def test_miss_then_hit_in_process_same_results_and_stages() -> None:
    cold, out_cold = _compile()
    assert cold.cache == "miss-stored" and len(_entries()) == 1
    warm, out_warm = _compile()
    assert warm.cache == "hit"
    np.testing.assert_array_equal(out_warm, out_cold)
    np.testing.assert_allclose(out_warm, gelu(X), rtol=2e-6, atol=2e-6)
    assert warm.stages == cold.stages and warm.texts == cold.texts
    assert warm.facts == cold.facts and {"bufferize", "interleave", "streams"} <= set(cold.facts)  # the stages' records, stored typed
    assert str(warm.report) == str(cold.report) and warm.extracted_term == cold.extracted_term
    assert [(o.op, o.shape, o.dtype) for o in warm.outputs] == [(o.op, o.shape, o.dtype) for o in cold.outputs]
    assert "optimize" not in warm.timings and "mlir-opt" not in warm.timings
    summary = str(warm)
    assert "cache: hit" in summary and "stages (loaded from cache)" in summary
    assert "cache: miss-stored" in str(cold)


def test_tuple_scalar_and_bool_outputs_survive_the_cache() -> None:
    def f(a, s):
        return a.sum(), a > s, a * s

    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    cold, out_cold = _compile(f, a, 2.5)
    warm, out_warm = _compile(f, a, 2.5)
    assert (cold.cache, warm.cache) == ("miss-stored", "hit")
    assert isinstance(out_warm, tuple) and np.ndim(out_warm[0]) == 0
    for c, w in zip(out_cold, out_warm, strict=True):
        np.testing.assert_array_equal(w, c)
    assert out_warm[1].dtype == np.bool_


def test_disabled_by_option_and_by_environment(monkeypatch) -> None:
    comp, out = _compile(cache=False)
    assert comp.cache == "disabled" and not _entries()
    np.testing.assert_allclose(out, gelu(X), rtol=2e-6, atol=2e-6)
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE", "0")
    assert cache.cache_dir() is None
    comp, _ = _compile()
    assert comp.cache == "disabled" and "EGGLOG_TENSOR_CACHE" in comp.cache_note


def _rules(factor: float):
    mine = ruleset(name="mine")

    @mine.register
    def _(x: Tensor, dt: DType):
        yield rewrite(x * Tensor.const(factor, dt)).to(x + x)

    return algebra | mine


def _double(x):
    return x * 2.0


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({}, {"rules": None}),
        ({}, {"fastmath": True}),
        ({"target": "cpu"}, {"target": "cpu-openmp"}),
        ({"target": "cpu-openmp", "threads": 1}, {"target": "cpu-openmp", "threads": 2}),
        ({}, {"limits": et.Limits(iterations=3)}),
        # same names, one rule differs: the key has every rule's text, not the ruleset names
        ({"rules": _rules(2.0)}, {"rules": _rules(3.0)}),
    ],
    ids=["rules-none", "fastmath", "target", "threads", "limits", "custom-rule"],
)
def test_options_and_rules_change_the_key(first, second) -> None:
    fn = _double if "rules" in first else gelu
    a, _ = _compile(fn, **first)
    b, out = _compile(fn, **second)
    assert (a.cache, b.cache) == ("miss-stored", "miss-stored")
    assert len(_entries()) == 2
    np.testing.assert_allclose(out, fn(X), rtol=2e-6, atol=2e-6)
    again, _ = _compile(fn, **second)  # and each is found again
    assert again.cache == "hit"


def test_an_equal_custom_ruleset_in_a_new_object_hits() -> None:
    a, out = _compile(_double, rules=_rules(2.0))
    b, _ = _compile(_double, rules=_rules(2.0))  # egglog names combined rulesets by id(): not in the key
    assert (a.cache, b.cache) == ("miss-stored", "hit")
    np.testing.assert_allclose(out, X * 2.0)


@pytest.mark.parametrize(
    "args",
    [
        (np.linspace(-4, 4, 1002, dtype=np.float32),),
        (X.astype(np.float64),),
        (np.asfortranarray(np.ones((4, 6), np.float32)),),
        (np.ones((4, 6), np.float32),),
    ],
    ids=["shape", "dtype", "layout-F", "rank"],
)
def test_shapes_dtypes_layouts_change_the_key(args) -> None:
    _compile()
    comp, out = _compile(gelu, *args)
    assert comp.cache == "miss-stored"
    np.testing.assert_allclose(out, gelu(*args), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize(
    ("field", "value"),
    [("features", "+sse2"), ("cpu", "some-other-cpu"), ("caches", "Target(l2=262144)"), ("egglog_tensor", "9.9.9"),
     ("sources", "0" * 64), ("llvmlite", "0.0"), ("mlir", [1, 0, 0])],
)
def test_machine_and_version_changes_never_reuse_code(monkeypatch, field, value) -> None:
    _compile()
    changed = dict(cache.environment())
    changed[field] = value
    monkeypatch.setattr(cache, "environment", lambda: changed)
    comp, out = _compile()
    assert comp.cache == "miss-stored" and len(_entries()) == 2
    np.testing.assert_allclose(out, gelu(X), rtol=2e-6, atol=2e-6)


def test_source_hash_covers_the_package() -> None:
    dirs = cache._package_dirs()
    names = {p.name for d in dirs for p in d.rglob("*.py")}
    assert {"compiler.py", "cache.py", "algebra.py", "pipelines.py", "llvm.py"} <= names


def _corrupt_truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _corrupt_flip_object_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-100] ^= 0xFF
    path.write_bytes(bytes(data))


def _corrupt_header_json(path: Path) -> None:  # a valid checksum over a header that is not JSON
    _, obj = cache.unpack(path.read_bytes())
    body = cache.zlib.compress(b"{not json")
    digest = cache.hashlib.sha256(body + obj).digest()
    path.write_bytes(cache._MAGIC + cache._HEADER.pack(cache.FORMAT_VERSION, len(body), len(obj), digest) + body + obj)


def _corrupt_object_garbage(path: Path) -> None:  # a valid checksum over an object that is not one
    header, _ = cache.unpack(path.read_bytes())
    path.write_bytes(cache.pack(header, b"\x7fELF" + b"garbage" * 100))


def _corrupt_format_version(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(cache._MAGIC)] += 1
    path.write_bytes(bytes(data))


def _corrupt_missing_field(path: Path) -> None:
    header, obj = cache.unpack(path.read_bytes())
    del header["outputs"]
    path.write_bytes(cache.pack(header, obj))


def _corrupt_missing_symbol(path: Path) -> None:
    header, obj = cache.unpack(path.read_bytes())
    header["externals"] = [*header["externals"], "no_such_library_function_xyz"]
    path.write_bytes(cache.pack(header, obj))


@pytest.mark.parametrize(
    "corrupt",
    [
        _corrupt_truncate,
        _corrupt_flip_object_byte,
        _corrupt_header_json,
        _corrupt_object_garbage,
        _corrupt_format_version,
        _corrupt_missing_field,
        _corrupt_missing_symbol,
        lambda p: p.write_bytes(b""),
    ],
    ids=["truncated", "checksum", "bad-json", "bad-object", "format-version", "missing-field", "missing-symbol", "empty"],
)
def test_a_bad_entry_is_recompiled_and_overwritten(corrupt) -> None:
    _, expected = _compile()
    (path,) = _entries()
    corrupt(path)
    comp, out = _compile()
    assert comp.cache == "miss-stored" and "replaced a bad entry" in comp.cache_note
    np.testing.assert_array_equal(out, expected)
    assert _entries() == [path]
    again, out = _compile()
    assert again.cache == "hit"
    np.testing.assert_array_equal(out, expected)


def test_unwritable_cache_dir_warns_once_and_compiles(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("EGGLOG_TENSOR_CACHE_DIR", str(blocker / "kernels"))  # mkdir fails, even as root
    with pytest.warns(RuntimeWarning, match="cannot write the compilation cache"):
        comp, out = _compile()
    assert comp.cache == "unwritable"
    np.testing.assert_allclose(out, gelu(X), rtol=2e-6, atol=2e-6)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second kernel does not warn again
        comp, _ = _compile(_double)
    assert comp.cache == "unwritable"


def test_full_disk_leaves_no_partial_entry(monkeypatch) -> None:
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache.os, "fsync", full)
    with pytest.warns(RuntimeWarning, match="No space left"):
        comp, out = _compile()
    assert comp.cache == "unwritable"
    np.testing.assert_allclose(out, gelu(X), rtol=2e-6, atol=2e-6)
    assert not list(cache.cache_dir().iterdir())  # the temp file went too


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_read_only_dir_still_serves_hits(monkeypatch) -> None:
    _, expected = _compile()
    directory = cache.cache_dir()
    directory.chmod(0o555)
    try:
        if os.access(directory, os.W_OK):  # root ignores permissions: make writes fail another way

            def denied(path, data):
                raise PermissionError(errno.EACCES, "Permission denied", str(path.parent))

            monkeypatch.setattr(cache, "write_atomic", denied)
        comp, out = _compile()
        assert comp.cache == "hit"
        np.testing.assert_array_equal(out, expected)
        with pytest.warns(RuntimeWarning, match="cannot write"):
            comp, out = _compile(_double)
        assert comp.cache == "unwritable"
        np.testing.assert_allclose(out, X * 2.0)
    finally:
        directory.chmod(0o755)


_SCRIPT = textwrap.dedent(
    """
    import hashlib, json, sys
    import numpy as np
    import egglog_tensor as et

    def gelu(x):
        return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))

    def exp_axpy(x):
        return np.exp(x) * 2.0 + x

    rng = np.random.default_rng(0)
    x = rng.standard_normal(4099).astype(np.float32)
    y = rng.standard_normal((512, 300)).astype(np.float32)  # large enough to run in parallel
    result = {}
    for name, k, args, ref in [
        ("gelu", et.kernel(gelu, target="cpu"), (x,), gelu(x)),
        ("exp_omp", et.kernel(exp_axpy, target="cpu-openmp", threads=2), (y,), exp_axpy(y)),
    ]:
        out = k(*args)
        comp = k.inspect(*args)
        np.testing.assert_allclose(out, ref, rtol=2e-6, atol=2e-6)
        result[name] = {
            "cache": comp.cache,
            "digest": hashlib.sha256(out.tobytes()).hexdigest(),
            "stages": comp.stages,
            "vector_math": "_ZGV" in comp.stage("asm"),
            "openmp": "__kmpc_fork_call" in comp.stage("llvm-ir"),
        }
    print(json.dumps(result))
    """
)


def _run(script: Path, directory: Path) -> subprocess.Popen:
    env = {**os.environ, "EGGLOG_TENSOR_CACHE_DIR": str(directory)}
    return subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen) -> dict:
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    return json.loads(stdout.strip().splitlines()[-1])


def test_hit_in_a_fresh_process_same_numbers(tmp_path) -> None:
    script = tmp_path / "run.py"
    script.write_text(_SCRIPT)
    directory = tmp_path / "cache"
    cold = _result(_run(script, directory))
    warm = _result(_run(script, directory))
    for name in ("gelu", "exp_omp"):
        assert cold[name]["cache"] == "miss-stored" and warm[name]["cache"] == "hit"
        assert warm[name]["digest"] == cold[name]["digest"]
        assert warm[name]["stages"] == cold[name]["stages"]
    # the loaded objects call libmvec and the OpenMP runtime (both resolved on a hit: same numbers)
    assert warm["gelu"]["vector_math"] == cold["gelu"]["vector_math"]
    assert warm["exp_omp"]["openmp"] and warm["exp_omp"]["vector_math"] == cold["exp_omp"]["vector_math"]


@pytest.mark.slow  # (two fresh processes compiling: ~20 s)
def test_two_processes_compiling_at_once_both_succeed(tmp_path) -> None:
    script = tmp_path / "run.py"
    script.write_text(_SCRIPT)
    directory = tmp_path / "cache"
    first, second = _run(script, directory), _run(script, directory)
    results = [_result(first), _result(second)]
    for name in ("gelu", "exp_omp"):
        assert {r[name]["cache"] for r in results} <= {"miss-stored", "hit"}
        assert results[0][name]["digest"] == results[1][name]["digest"]
    assert len(list(directory.glob("*.etk"))) == 2 and not list(directory.glob("*.tmp"))
    after = _result(_run(script, directory))
    assert {after[n]["cache"] for n in after} == {"hit"}


_PACKAGE_RULES = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import egglog_tensor as et
    from egglog import rewrite
    from egglog_tensor import cache, optimize
    from egglog_tensor.ir import DType, Tensor
    from egglog_tensor.rulesets import algebra

    x = np.linspace(-4, 4, 1001, dtype=np.float32)
    result = {}
    for name in sys.argv[1:]:
        if name == "add-rule":  # a user's rule added to one of the package's rulesets
            @algebra.register
            def _(t: Tensor, dt: DType):
                yield rewrite(t * Tensor.const(3.0, dt)).to(t + t + t)
            continue
        fn = (lambda x: x * 3.0 + 2.0) if name == "other" else (lambda x: x * 3.0 - 1.0)
        k = et.kernel(fn, target="cpu", fastmath=name == "fastmath")
        np.testing.assert_allclose(k(x), fn(x), rtol=1e-6, atol=1e-6)
        before = sum(r.ran for rs in cache._PACKAGE_RULESETS.values() for r in rs)
        if name == "other":
            str(k.inspect(x).report)  # its rule texts made: the package's rulesets expanded
        result[name] = {"cache": k.inspect(x).cache, "generators_before_report": before,
                        "loaded_base": any(base.rules for _, base in optimize._BASES.values()), "generators_ran": sum(r.ran for rs in cache._PACKAGE_RULESETS.values() for r in rs)}
    print(json.dumps(result))
    """
)


@pytest.mark.slow  # (fresh processes: ~35 s)
def test_package_rulesets_hit_without_running_their_rule_generators(tmp_path) -> None:
    """The package's own DEFAULT (and FASTMATH) are keyed by name while unmodified: a warm process
    finds its entry without building a rule, whether or not the rulesets were expanded by an earlier
    compile in the same process; a rule a user adds to one of them changes the key."""
    script = tmp_path / "run.py"
    script.write_text(_PACKAGE_RULES)
    directory = tmp_path / "cache"

    def run(*names: str) -> dict:
        env = {**os.environ, "EGGLOG_TENSOR_CACHE_DIR": str(directory)}
        proc = subprocess.run([sys.executable, str(script), *names], env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])

    cold = run("default", "fastmath")
    assert cold["default"]["cache"] == cold["fastmath"]["cache"] == "miss-stored"
    warm = run("fastmath", "default")
    assert warm["fastmath"]["cache"] == warm["default"]["cache"] == "hit"
    assert warm["fastmath"]["generators_ran"] == 0 and warm["default"]["generators_ran"] == 0  # (0.5 s of a first call)
    # expanded (a report's rule texts read: the rules built), DEFAULT is keyed as before
    expanded = run("other", "default")
    assert expanded["other"]["generators_ran"] > 0 and expanded["default"]["cache"] == "hit"
    # a new kernel of a fresh process: its base e-graph loaded as saved commands (prebuilt.py), no rule built
    assert expanded["other"]["cache"] == "miss-stored" and expanded["other"]["loaded_base"]
    assert expanded["other"]["generators_before_report"] == 0
    changed = run("add-rule", "default")
    assert changed["default"]["cache"] == "miss-stored" and not changed["default"]["loaded_base"]  # built through egglog-python


_GPU_SCRIPT = textwrap.dedent(
    """
    import hashlib, json, sys
    import numpy as np
    import egglog_tensor as et
    from egglog_tensor import stages

    def softmax(x):
        e = np.exp(x - np.max(x, axis=1, keepdims=True))
        return e / np.sum(e, axis=1, keepdims=True)

    if sys.argv[1] == "warm":  # a hit must not optimize, lower (mlir-opt), generate code (llvmlite child) or run ptxas / ld.lld
        def refuse(*args, **kwargs):
            raise AssertionError("compiled again on a warm cache")
        stages.optimize = stages.lower = refuse
    x = np.ones((33, 300), np.float32)
    result = {}
    for target in sys.argv[2:]:
        out = sys.argv[1] + "-" + target.replace(":", "-")
        comp = et.compile(softmax, x, target=target, out_dir=out)
        device = comp.facts["device"]
        try:
            et.kernel(softmax, target=target)(x)  # (the launcher made from the cached facts: no device here)
            called = "ran"
        except et.DeviceError as error:
            called = "DeviceError"
        binary = open(f"{out}/softmax{device.suffix}", "rb").read()
        result[target] = {"cache": comp.cache, "binary": hashlib.sha256(binary).hexdigest(), "same": binary == device.binary,
                          "facts": repr(comp.facts), "stages": comp.stages, "report": comp.stage(comp.stages[-1]),
                          "launches": open(f"{out}/launches.json").read(), "called": called}
    print(json.dumps(result))
    """
)


@pytest.mark.slow  # (two processes, two targets each: ~30 s)
def test_gpu_hit_in_a_fresh_process_same_artifacts(tmp_path) -> None:
    """A GPU compilation's entry holds its device code: a fresh process hits without compiling anything
    and writes byte-identical PTX / HSACO, the same launches and stage texts."""
    script = tmp_path / "run.py"
    script.write_text(_GPU_SCRIPT)
    env = {**os.environ, "EGGLOG_TENSOR_CACHE_DIR": str(tmp_path / "cache")}
    targets = ["nvvm:sm_90", "rocdl:gfx942"]

    def run(mode: str) -> dict:
        proc = subprocess.run([sys.executable, str(script), mode, *targets], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])

    cold, warm = run("cold"), run("warm")
    for target in targets:
        assert (cold[target]["cache"], warm[target]["cache"]) == ("miss-stored", "hit")
        assert warm[target]["same"] and warm[target]["binary"] == cold[target]["binary"]
        for field in ("facts", "stages", "report", "launches", "called"):
            assert warm[target][field] == cold[target][field], field
        assert cold[target]["called"] == "DeviceError"  # (no GPU on this machine)
    assert "Compiling entry function 'kernel_kernel' for 'sm_90'" in warm["nvvm:sm_90"]["report"]
    assert "ABI Version:                       3" in warm["rocdl:gfx942"]["report"]


@pytest.mark.parametrize(("first", "second"), [("rocdl:gfx942", "rocdl:gfx90a"), ("nvvm:sm_90", "nvvm:sm_80")])
def test_gpu_chips_change_the_key(first, second) -> None:
    x = np.ones((4, 64), np.float32)
    a = et.kernel(_double, target=first).inspect(x)
    b = et.kernel(_double, target=second).inspect(x)
    assert (a.cache, b.cache) == ("miss-stored", "miss-stored") and len(_entries()) == 2
    assert a.facts["device"].binary != b.facts["device"].binary  # code for another chip
    again = et.kernel(_double, target=second).inspect(x)
    assert again.cache == "hit" and again.facts == b.facts
