"""The symbols an ELF relocatable object (LLVM's object code for a kernel) needs from elsewhere.

LLVM's code generator may call runtime functions the LLVM IR never declares (libcalls such as
`__truncdfhf2` for a conversion the CPU has no instruction for). MCJIT resolves a symbol no loaded
library defines to address 0, so calling the kernel would crash the process; llvm.load_object checks
these names first. llvmlite lists no object file's symbols, hence this reader of the symbol table.
"""

from __future__ import annotations

import struct

_HEADER = struct.Struct("<16xHHIQQQIHHHHHH")  # ELF64 little-endian header after e_ident
_SECTION = struct.Struct("<IIQQQQIIQQ")  # name, type, flags, addr, offset, size, link, info, addralign, entsize
_SYMBOL = struct.Struct("<IBBHQQ")  # name, info, other, section index, value, size
_SYMTAB = 2
_GLOBAL = 1  # symbol binding (info >> 4): a weak undefined symbol may legitimately stay 0


def undefined_symbols(object_code: bytes) -> list[str]:
    """Names of the global symbols `object_code` uses but does not define; [] when it is not a 64-bit
    little-endian ELF object (nothing to check on other formats)."""
    if object_code[:4] != b"\x7fELF" or object_code[4:6] != b"\x02\x01":
        return []
    *_, shoff, _, _, _, _, shentsize, shnum, _ = _HEADER.unpack_from(object_code)
    sections = [_SECTION.unpack_from(object_code, shoff + i * shentsize) for i in range(shnum)]
    names: list[str] = []
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != _SYMTAB or not entsize:
            continue
        strings = sections[link][4]
        for at in range(offset + entsize, offset + size, entsize):  # (entry 0 is the null symbol)
            name, info, _, index, _, _ = _SYMBOL.unpack_from(object_code, at)
            if index == 0 and name and info >> 4 == _GLOBAL:
                end = object_code.index(b"\0", strings + name)
                names.append(object_code[strings + name:end].decode())
    return names
