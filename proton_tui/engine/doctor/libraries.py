"""Run by the workload's interpreter (``python -c`` with this file's text, so it imports nothing of proton-tui):
where Proton would load its profiler libraries from, and whether they load. It finds Triton's folder without
importing Triton (fast, no GPU driver touched) and mirrors Proton's lookup: <TRITON_CUPTI_LIB_PATH or
triton/backends/nvidia/lib/cupti>/libcupti.so, and the ROCm libraries by their unversioned names (or
TRITON_*_LIB_PATH / TRITON_*_LIBRARY). It prints one answer line for ``probe.read_answer``."""
import ctypes
import importlib.util
import json
import os


def check(answer, name, folder, library, source):
    """Whether ``library`` (in ``folder``, or by its name) loads, recorded in ``answer``."""
    path = os.path.join(folder, library) if folder else library
    entry = {"name": name, "path": path, "source": source, "exists": os.path.exists(path) if folder else None,
             "loads": False, "error": None}
    try:
        ctypes.CDLL(path)
        entry["loads"] = True
    except OSError as error:
        entry["error"] = str(error)
    answer["libraries"].append(entry)


def main():
    answer = {"triton_dir": None, "libraries": []}
    try:
        spec = importlib.util.find_spec("triton")
        if spec is not None and spec.origin:
            answer["triton_dir"] = os.path.dirname(spec.origin)
    except Exception as error:
        answer["error"] = f"{type(error).__name__}: {error}"
    root = answer["triton_dir"]
    cupti = os.environ.get("TRITON_CUPTI_LIB_PATH")
    if cupti or root:
        check(answer, "cupti", cupti or os.path.join(root, "backends", "nvidia", "lib", "cupti"), "libcupti.so",
              "TRITON_CUPTI_LIB_PATH" if cupti else "bundled")
    for name, prefix, library in (("roctracer", "TRITON_ROCTRACER", "libroctracer64.so"),
                                  ("rocprofiler-sdk", "TRITON_ROCPROFILER_SDK", "librocprofiler-sdk.so")):
        folder = os.environ.get(prefix + "_LIB_PATH")
        chosen = os.environ.get(prefix + "_LIBRARY")
        source = prefix + "_LIB_PATH" if folder else prefix + "_LIBRARY" if chosen else "default"
        check(answer, name, folder, chosen or library, source)
    print("proton-tui-answer " + json.dumps(answer))


if __name__ == "__main__":  # the interpreter runs this file's text with -c; importing it does nothing
    main()
