"""A/B of Python Itanium demanglers on every mangled name of the captures (shared/captures, tests/fixtures): how many
read as GNU c++filt writes them, how many raise, and the time for 10,000 distinct names (real names with their first
integer template argument varied, each checked by c++filt). Libraries not installed are skipped."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOTS = [Path(__file__).parent.parent / "tests" / "fixtures", Path(__file__).parent.parent.parent / "shared" / "captures"]
LIBRARIES = {
    "demangle (gnu style)": ("demangle", lambda m: lambda n: m.demangle_strict(n, style="gnu")),
    "itanium_demangler": ("itanium_demangler", lambda m: lambda n: str(m.parse(n))),
    "cpp_demangle": ("cpp_demangle", lambda m: m.demangle),
    "cxxfilt (libstdc++)": ("cxxfilt", lambda m: m.demangle),
    "pycxxfilt (LLVM)": ("pycxxfilt", lambda m: m.itanium_demangle),
}


def mangled_names() -> list[str]:
    found = set()
    for root in ROOTS:
        for path in root.rglob("*"):
            if path.is_file():
                found.update(m.decode() for m in re.findall(rb"_Z[A-Za-z0-9_$.]+", path.read_bytes()))
    return sorted(found)


def cxxfilt(names: list[str]) -> list[str]:
    out = subprocess.run([shutil.which("c++filt")], input="\n".join(names) + "\n", capture_output=True, text=True)
    return out.stdout.splitlines()


def distinct(names: list[str], count: int) -> list[str]:
    """`count` distinct valid names: a real name's first `Li<n>E` literal set to another value."""
    varied = [n for n in names if re.search(r"Li\d+E", n)]
    return [re.sub(r"Li\d+E", f"Li{1000 + k}E", varied[k % len(varied)], count=1) for k in range(count)]


def main() -> None:
    names = mangled_names()
    reference = cxxfilt(names)
    many = distinct(names, 10_000)
    assert not any(line.startswith("_Z") for line in cxxfilt(many))
    print(f"{len(names)} mangled names; python {sys.version.split()[0]}")
    print("| library | version | same as c++filt | raised | 10k distinct names (s) |")
    print("| --- | --- | --- | --- | --- |")
    for label, (module, make) in LIBRARIES.items():
        try:
            read = make(importlib.import_module(module))
        except ImportError:
            continue
        same = raised = 0
        for name, expected in zip(names, reference):
            try:
                same += read(name) == expected
            except Exception:
                raised += 1
        start = time.perf_counter()
        for name in many:
            try:
                read(name)
            except Exception:
                pass
        version = importlib.metadata.version(module.replace("_", "-"))
        print(f"| {label} | {version} | {same}/{len(names)} | {raised} | {time.perf_counter() - start:.2f} |")


if __name__ == "__main__":
    import importlib.metadata
    main()
