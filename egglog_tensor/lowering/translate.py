"""LLVM-dialect MLIR to LLVM IR text in this process, by the MLIR C API the Python bindings ship
(`mlirTranslateModuleToLLVMIR`): what `mlir-translate --mlir-to-llvmir` does, from the same MLIR
build and printing the same text, without starting that process (~50 ms a kernel, mostly its start).
The C API does not check a failed translation, so each step's result is checked here."""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import mlir._mlir_libs
from mlir import ir


class _Operation(ctypes.Structure):
    """The C API's MlirOperation: one pointer, passed by value."""

    _fields_ = [("ptr", ctypes.c_void_p)]


_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))


@functools.cache
def _capi() -> ctypes.CDLL:
    """The bindings' C API library (already loaded by them), its functions typed; the LLVM C API is
    found through it (it links the LLVM library it was built with)."""
    lib = ctypes.CDLL(str(Path(mlir._mlir_libs.__file__).parent / "libMLIRPythonCAPI.so"))
    lib.mlirTranslateModuleToLLVMIR.argtypes = [_Operation, ctypes.c_void_p]
    lib.mlirTranslateModuleToLLVMIR.restype = ctypes.c_void_p
    lib.LLVMContextCreate.restype = ctypes.c_void_p
    lib.LLVMPrintModuleToString.argtypes = [ctypes.c_void_p]
    lib.LLVMPrintModuleToString.restype = ctypes.c_void_p
    for dispose in (lib.LLVMContextDispose, lib.LLVMDisposeModule, lib.LLVMDisposeMessage):
        dispose.argtypes = [ctypes.c_void_p]
    return lib


def translate(module: ir.Module) -> str | None:
    """The LLVM IR text of `module` (LLVM dialect only), or None when MLIR cannot translate it (its
    diagnostics went to stderr; `pipelines.lower_to_llvm_ir` reports such a module's error)."""
    lib = _capi()
    operation = _Operation(_capsule_pointer(module.operation._CAPIPtr, b"mlir.ir.Operation._CAPIPtr"))
    context = lib.LLVMContextCreate()
    try:
        translated = lib.mlirTranslateModuleToLLVMIR(operation, context)
        if not translated:
            return None
        text = lib.LLVMPrintModuleToString(translated)
        try:
            return ctypes.string_at(text).decode()
        finally:
            lib.LLVMDisposeMessage(text)
            lib.LLVMDisposeModule(translated)
    finally:
        lib.LLVMContextDispose(context)
