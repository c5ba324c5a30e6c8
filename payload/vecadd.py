"""Triton vector add: the smallest Proton payload.

Launches one elementwise Triton kernel in a short loop and checks it for exact equality against
``x + y`` (float32 addition has no reassociation freedom: any difference is an indexing or masking bug).

    python vecadd.py --size 1048576 --iters 20
    python -m triton.profiler.proton -n vecadd -k triton vecadd.py --size 1048576 --iters 20

Without a GPU (``--device cpu``, or ``auto`` when none is found) the kernel runs through the Triton
interpreter. With ``--proton-name`` (or ``PROTON_TUI_NAME``) the payload starts and finalizes Proton
itself ("env mode"); under Proton's CLI it leaves that to the CLI.

The script never calls ``sys.exit`` after its arguments are parsed: Proton 3.5-3.6 skips ``finalize()``
when the profiled script exits, and would then write no capture. PASS and FAIL are printed, not returned
as an exit code.
"""

from __future__ import annotations

import argparse
import os
import time

PREFIX = "vecadd:"
ENV_PREFIX = "PROTON_TUI_"
BACKENDS = ("cupti", "roctracer", "rocprofiler", "instrumentation")


def power_of_two(text: str) -> int:
    """argparse type: a positive power of two (``tl.arange`` needs one)."""
    value = positive_int(text)
    if value & (value - 1):
        raise argparse.ArgumentTypeError(f"{value} is not a power of two (tl.arange requires one)")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line; a bad value exits here with status 2, before Triton is imported."""
    parser = argparse.ArgumentParser(prog="vecadd", description="Triton vector add, checked against x + y.")
    parser.add_argument("--size", type=positive_int, default=1 << 20, help="elements per vector")
    parser.add_argument("--iters", type=positive_int, default=20, help="timed launches after the first")
    parser.add_argument("--block-size", type=power_of_two, default=1024, help="power of two")
    parser.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto",
                        help="cpu runs the Triton interpreter; auto picks it when no GPU is found")
    parser.add_argument("--inject-bug", action="store_true",
                        help="test only: the mask drops the last element, so the check must FAIL")
    parser.add_argument("--scoped", action="store_true",
                        help="the kernel with proton.language scopes (kernel ⊃ load, add, store) for Proton's "
                             "instrumentation backend; under any other backend the scopes record nothing")
    proton = parser.add_argument_group("env mode", "the payload starts and finalizes Proton itself")
    proton.add_argument("--proton-name", default=os.environ.get(ENV_PREFIX + "NAME"),
                        help="session path without suffix (env PROTON_TUI_NAME); enables env mode")
    for option, choices, default, meaning in (
            ("backend", BACKENDS, None, "unset lets Proton choose"),
            ("context", ("shadow", "python"), "shadow", "call-path context"),
            ("hook", ("none", "triton"), "triton", "triton: launch_metadata names, bytes, flops"),
            ("data", ("tree", "trace"), "tree", "tree: the .hatchet call tree; trace: a .chrome_trace timeline"),
            ("format", ("hatchet", "hatchet_msgpack"), "hatchet", "how a tree is written (msgpack: Triton >= 3.7)"),
            ("mode", None, None, "the backend's mode string, e.g. default:sampling_strategy=selective:"
                                 "sampling_options=0,2 for instrumentation")):
        variable = ENV_PREFIX + option.upper()
        value = os.environ.get(variable, default)
        if value is not None and choices is not None and value not in choices:
            parser.error(f"{variable}={value!r} is not one of {', '.join(choices)}")
        proton.add_argument(f"--proton-{option}", choices=choices, default=value, help=f"{meaning} (env {variable})")
    return parser.parse_args(argv)


def select_device(requested: str) -> tuple[str, bool]:
    """Return (torch device, interpreted). Sets TRITON_INTERPRET=1 before Triton is imported."""
    import torch  # importing torch does not import triton

    interpreted = requested == "cpu" or (requested == "auto" and not torch.cuda.is_available())
    if interpreted:
        os.environ["TRITON_INTERPRET"] = "1"
        return "cpu", True
    return "cuda", False


def launch_metadata(grid, metadata, args) -> dict:
    """Per-launch metrics Proton's triton hook records: a readable name, bytes moved, fp32 flops."""
    n = args["n_elements"]
    return {"name": f"add_kernel<n={n}>", "bytes": 3 * n * args["x_ptr"].element_size(), "flops32": n}


def build_kernel(scoped: bool = False):
    """Define the kernel after TRITON_INTERPRET is settled: ``triton.jit`` reads it at decoration time. ``scoped``:
    the same kernel with proton.language scopes around its loads, its add, its store and its whole body."""
    import triton
    import triton.language as tl

    if scoped:
        import triton.profiler.language as pl

        pl.enable_semantic("triton")  # Proton instruments Gluon kernels only unless told

        @triton.jit(launch_metadata=launch_metadata)
        def add_kernel_scoped(x_ptr, y_ptr, out_ptr, n_elements, n_stored, BLOCK_SIZE: tl.constexpr):
            with pl.scope("kernel"):
                pid = tl.program_id(axis=0)
                offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                mask = offsets < n_stored
                with pl.scope("load"):
                    x = tl.load(x_ptr + offsets, mask=mask)
                    y = tl.load(y_ptr + offsets, mask=mask)
                with pl.scope("add"):
                    total = x + y
                with pl.scope("store"):
                    tl.store(out_ptr + offsets, total, mask=mask)

        return add_kernel_scoped, triton.cdiv

    @triton.jit(launch_metadata=launch_metadata)
    def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, n_stored, BLOCK_SIZE: tl.constexpr):
        pid = tl.program_id(axis=0)
        offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_stored
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)

    return add_kernel, triton.cdiv


def start_proton(args: argparse.Namespace) -> bool:
    """Env mode: start a Proton session when a session name was given. Returns whether one started."""
    if not args.proton_name:
        return False
    import triton.profiler as proton

    hook = None if args.proton_hook == "none" else args.proton_hook
    extra = {"data": args.proton_data} if args.proton_data != "tree" else {}  # older Proton: no data argument needed
    if args.proton_mode:
        extra["mode"] = args.proton_mode
    proton.start(args.proton_name, context=args.proton_context, backend=args.proton_backend or None, hook=hook,
                 **extra)
    print(f"{PREFIX} proton=env session={args.proton_name}", flush=True)
    return True


def launch_and_check(args: argparse.Namespace, device: str, interpreted: bool) -> tuple[float, bool]:
    """Time the first (compiling) launch apart from the loop, then compare with x + y exactly."""
    import torch

    add_kernel, cdiv = build_kernel(args.scoped)

    def sync() -> None:
        if not interpreted:
            torch.cuda.synchronize()

    n = args.size
    x = torch.rand(n, device=device, dtype=torch.float32)
    y = torch.rand(n, device=device, dtype=torch.float32)
    out = torch.zeros_like(x)
    n_stored = n - 1 if args.inject_bug else n
    grid = (cdiv(n, args.block_size),)

    sync()
    start = time.perf_counter()
    add_kernel[grid](x, y, out, n, n_stored, BLOCK_SIZE=args.block_size)
    sync()
    print(f"{PREFIX} first_launch_ms={(time.perf_counter() - start) * 1e3:.3f} (includes compile)", flush=True)

    start = time.perf_counter()
    for _ in range(args.iters):
        add_kernel[grid](x, y, out, n, n_stored, BLOCK_SIZE=args.block_size)
    sync()
    loop_s = time.perf_counter() - start
    gbps = 3 * n * x.element_size() * args.iters / loop_s / 1e9
    print(f"{PREFIX} loop_ms={loop_s * 1e3:.3f} per_iter_us={loop_s / args.iters * 1e6:.3f} gbps={gbps:.3g}",
          flush=True)

    if not interpreted:
        print_sm_clock()
    expected = x + y
    return (out - expected).abs().max().item(), torch.equal(out, expected)


def print_sm_clock() -> None:
    """The GPU's SM clock in kHz as Triton's driver reports it (the maximum; Proton's device info writes the same):
    what an instrumentation capture's cycles are converted to time at."""
    try:
        import torch
        from triton.runtime import driver

        clock = driver.active.utils.get_device_properties(torch.cuda.current_device())["sm_clock_rate"]
    except Exception:  # another driver, or an older Triton: the clock is then unknown, nothing else changes
        return
    print(f"{PREFIX} sm_clock_khz={clock}", flush=True)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    device, interpreted = select_device(args.device)

    import torch

    if interpreted:
        print(f"{PREFIX} device=cpu (Triton interpreter, TRITON_INTERPRET=1)", flush=True)
    else:
        print(f"{PREFIX} device={torch.cuda.get_device_name()}", flush=True)
    print(f"{PREFIX} size={args.size} iters={args.iters} block_size={args.block_size}", flush=True)

    profiling = start_proton(args)
    try:
        max_abs_err, passed = launch_and_check(args, device, interpreted)
    finally:
        if profiling:  # env mode: write the capture whatever happened, as Proton >= 3.7's CLI does
            import triton.profiler as proton

            proton.finalize(**({"output_format": args.proton_format} if args.proton_format != "hatchet" else {}))
    print(f"{PREFIX} max_abs_err={max_abs_err:.3e}", flush=True)
    print(f"{PREFIX} {'PASS' if passed else 'FAIL'}", flush=True)


if __name__ == "__main__":
    main()
