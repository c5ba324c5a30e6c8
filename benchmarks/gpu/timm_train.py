"""A third-party model's training steps for `proton-tui run --`: a timm model (random weights, no download),
torch.compile'd, a few SGD steps on random images, each step in a Proton scope `step<N>` (a no-op without Proton).

    proton-tui run -- python3 benchmarks/gpu/timm_train.py [--model resnet18] [--steps 3]
    cd benchmarks/gpu && proton-tui run -- python3 -m timm_train
"""

import argparse

import timm
import torch

try:
    from triton.profiler import scope
except ImportError:  # no Proton: plain steps
    from contextlib import nullcontext as scope


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    model = torch.compile(timm.create_model(args.model, pretrained=False).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    images = torch.randn(args.batch, 3, 224, 224, device="cuda")
    labels = torch.randint(0, 1000, (args.batch,), device="cuda")
    for step in range(args.steps):
        with scope(f"step{step}"):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        torch.cuda.synchronize()
        print(f"timm_train: step {step} loss {loss.item():.4f}", flush=True)


if __name__ == "__main__":
    main()
