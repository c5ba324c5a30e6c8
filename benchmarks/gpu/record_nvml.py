"""Record what `proton-tui check` reads from NVML around a GPU's run, in the reader's own JSON format (the format of
tests/fixtures/nvml/*.json and of each row's `readings` in check.json).

    python benchmarks/gpu/record_nvml.py --gpu 0 --seconds 5 --out tests/fixtures/nvml/recorded_h200_load.json
    python benchmarks/gpu/record_nvml.py --gpu 0 --seconds 0 --out tests/fixtures/nvml/recorded_h200_idle.json

Between the reading before and the reading after, it runs a memory-bound torch loop on the GPU for `--seconds`
(0: nothing runs, the GPU's idle state). This process is left out of the GPU's processes, as the check leaves out
its own runs; any other process on the GPU (e.g. benchmarks/gpu/load_gpu.py) is recorded. The device is found as
the check finds it: by the UUID torch gives for `--gpu` (a CUDA index as this interpreter sees it). Prints the
likely causes the rules find in the recording, and its detail lines."""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

import torch

from proton_tui.engine.gpuhealth import Nvml, Watch, detail_lines, likely_causes


def load(device: torch.device, seconds: float) -> None:
    if seconds <= 0:
        time.sleep(0.5)  # a few idle samples
        return
    source = torch.ones(2**28, dtype=torch.float32, device=device)
    target = torch.empty_like(source)
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        for _ in range(20):
            target.copy_(source)
        torch.cuda.synchronize(device)


async def record(gpu: int, seconds: float) -> dict:
    nvml, problem = Nvml.open()
    if nvml is None:
        raise SystemExit(f"record_nvml: {problem}")
    try:
        device = torch.device("cuda", gpu)
        torch.cuda.init()
        props = torch.cuda.get_device_properties(device)
        bus = (f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
               if hasattr(props, "pci_bus_id") else None)
        handle, found = nvml.find(str(getattr(props, "uuid", "") or "") or None, bus)
        watch = Watch(nvml, handle, found)
        await watch.begin()
        await asyncio.to_thread(load, device, seconds)
        return await watch.end()
    finally:
        nvml.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", type=int, default=0, help="CUDA index (default 0)")
    parser.add_argument("--seconds", type=float, default=5.0, help="the load between the readings (0: idle)")
    parser.add_argument("--out", type=Path, required=True, help="the JSON file to write (never overwritten)")
    args = parser.parse_args()
    if args.out.exists():
        raise SystemExit(f"record_nvml: {args.out} exists; choose another name")
    readings = asyncio.run(record(args.gpu, args.seconds))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(readings, indent=2) + "\n")
    print(f"record_nvml: wrote {args.out}")
    print("likely causes: " + ("; ".join(cause.text for cause in likely_causes(readings)) or "none"))
    print("\n".join(detail_lines(readings)))


if __name__ == "__main__":
    main()
