#!/usr/bin/env python3
"""Generate deterministic, Proton-shaped `.hatchet` captures for benchmarking.

The output is byte-for-byte what Triton 3.6's Proton writes (`TreeData::dumpHatchet`: a newline, the JSON list
`[ROOT, device_info]` dumped with indent 4 and sorted keys, a newline), i.e. what

    "\n" + json.dumps([root, device_info], indent=4, sort_keys=True) + "\n"

gives, with children sorted by name as Proton <= 3.6 stores them. `--verify` checks that equivalence.

Shape: ROOT -> scopes nested D levels deep (fan-out ~10; D grows with the size), a few kernels directly under
inner scopes, ~10 kernels under every innermost scope. Kernels are the real mangled torch/cuBLAS/cutlass names
of a GPT-2 capture (plus template-argument variants) and Triton kernels named by a `launch_metadata` hook
(`add_kernel<n=4194304>`) that carry `bytes`/`flops32`; scopes that launched a hooked kernel hold Proton's
`__proton_launch_metadata` `{}` leaf. Because hooked kernels carry `bytes`/`flops32`, ROOT carries 3.6's hints
`{"bytes": 0, "count": 0, "flops32": 0, "time (ns)": 0}` (without hooks it would be `{"count": 0, "time (ns)": 0}`).
The node count (ROOT and the internal frames included) equals the requested size exactly.

Usage:  python benchmarks/make_capture.py 10000 100000 1000000 [--out DIR] [--seed N] [--verify]
Prints one line per file: path, nodes, bytes, seconds.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from json.encoder import encode_basestring_ascii as _quote
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parent / ".captures"
DEVICE_INFO = {
    "CUDA": {"0": {"arch": "90", "bus_width": 6016, "clock_rate": 1980000, "memory_clock_rate": 3201000, "num_sms": 132}}
}
FANOUT = 10
KERNELS_PER_LEAF = 10
INTERNAL = "__proton_launch_metadata"

# Kernel names seen in a real Triton 3.6 / torch 2.11 capture on an H200 (shared/captures/gpt2_shadow.hatchet).
TORCH_KERNELS = [
    "_Z39fmha_cutlassF_f32_aligned_64x64_rf_sm80N22PyTorchMemEffAttention15AttentionKernelIfN7cutlass4arch4Sm80ELb1ELi64ELi64ELi64ELb1ELb1EE6ParamsE",
    "_Z48fmha_cutlassB_f32_aligned_64x64_k64_dropout_sm80N22PyTorchMemEffAttention23AttentionBackwardKernelIN7cutlass4arch4Sm80EfLb1ELb1ELb0ELi64ELi64ELi64ELb0EE6ParamsE",
    "_ZN2at6native13reduce_kernelILi128ELi4ENS0_8ReduceOpIfNS0_14func_wrapper_tIfZNS0_11sum_functorIfffEclERNS_14TensorIteratorEEUlffE_EEjfLi4ELi4EEEEEvT1_",
    "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfZNS0_11sum_functorIfffEclERNS_14TensorIteratorEEUlffE_EEjfLi4ELi4EEEEEvT1_",
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_15CUDAFunctor_addIfEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_",
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE2_clEvEUllE_EEvS4_RKT_EUliE_EEviT1_",
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE5_clEvEUlfE_EEvS4_RKT_EUliE_EEviT1_",
    "_ZN2at6native24vectorized_gather_kernelILi16ElEEvPcS2_PT0_illllb",
    "_ZN2at6native29vectorized_elementwise_kernelILi2ENS0_11FillFunctorIlEESt5arrayIPcLm1EEEEviT0_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi2ENS0_21CUDAFunctorOnSelf_addIlEESt5arrayIPcLm2EEEEviT0_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIhEESt5arrayIPcLm1EEEEviT0_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_21CUDAFunctorOnSelf_addIfEESt5arrayIPcLm2EEEEviT0_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZNS0_43_GLOBAL__N__50f1b6c4_10_Dropout_cu_0e96ed3819masked_scale_kernelIbffEEvRNS_6TensorERKS4_S7_T1_EUlfbE_St5arrayIPcLm3EEEEviT0_S8_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZNS0_51_GLOBAL__N__b1108092_12_PowKernel_cu_751192d7_2139629pow_tensor_scalar_kernel_implIffEEvRNS_18TensorIteratorBaseET0_EUlfE0_St5arrayIPcLm2EEEEviS6_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_16tanh_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE0_clEvENKUlvE0_clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_25tanh_backward_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE0_clEvENKUlvE0_clEvEUlffE_St5arrayIPcLm3EEEEviT0_T1_",
    "_ZN2at6native39_GLOBAL__N__5cd812b1_7_Loss_cu_5b0651e138nll_loss_forward_reduce_cuda_kernel_2dIfflEEvPT_S4_PKS3_PKT1_S6_bllll",
    "_ZN2at6native39_GLOBAL__N__5cd812b1_7_Loss_cu_5b0651e139nll_loss_backward_reduce_cuda_kernel_2dIflEEvPT_PKS3_PKT0_S6_S6_biill",
    "_ZN2at6native40_GLOBAL__N__0f1a8107_8_Shape_cu_49f7391c19CatArrayBatchedCopyINS1_10OpaqueTypeILj4EEEjLi4ELi64ELi64EEEvPT_NS1_25CatArrInputTensorMetadataIS5_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_",
    "_ZN2at6native43_GLOBAL__N__50f1b6c4_10_Dropout_cu_0e96ed3824fused_dropout_kernel_vecIffjLi1ELi4EbEEvNS_4cuda6detail10TensorInfoIKT_T1_EENS5_IS6_S8_EENS5_IT4_S8_EES8_T0_NS_15PhiloxCudaStateE",
    "_ZN2at6native43_GLOBAL__N__b6de9c8c_10_SoftMax_cu_9f978f6322cunn_SoftMaxForwardRegIfffNS1_25LogSoftMaxForwardEpilogueElLi8EEEvPT1_PKT_T3_",
    "_ZN2at6native43_GLOBAL__N__b6de9c8c_10_SoftMax_cu_9f978f6324cunn_SoftMaxBackwardSmemILi4EfffNS1_26LogSoftMaxBackwardEpilogueEEEvPT0_PKT2_S8_l",
    "_ZN2at6native45_GLOBAL__N__83039fe0_12_Embedding_cu_9c8c8d3a33embedding_backward_feature_kernelIfflEEvPKT1_PKT_PS6_ili",
    "_ZN2at6native50_GLOBAL__N__b6ca21f8_17_ForeachUnaryOp_cu_77fe623d25multi_tensor_apply_kernelINS1_18TensorListMetadataILi2EEENS1_14UnaryOpFunctorIfLi2ELi1ELi1EEEJNS0_4SqrtIfEEEEEvT_T0_DpT1_",
    "_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a28vectorized_layer_norm_kernelIffLb0EEEviT0_PKT_S6_S6_PS3_S7_PS4_",
    "_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a35GammaBetaBackwardCUDAKernelTemplateIffLj32ELj32ELj256ELb0ELb1ELb0EEEvllPKT_S5_PKT0_S8_PS3_S9_",
    "_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a39layer_norm_grad_input_kernel_vectorizedIffLb0EEEvPKT_S5_PKT0_S8_S5_PS3_i",
    "_ZN2at6native54_GLOBAL__N__f8a10d72_21_ForeachPointwiseOp_cu_ef478fac25multi_tensor_apply_kernelINS1_18TensorListMetadataILi3EEENS1_24PointwiseOpScalarFunctorIfLi3ELi3ELi0EEEJSt10multipliesIfEfEEEvT_T0_DpT1_",
    "_ZN2at6native57_GLOBAL__N__e658eeb9_24_ForeachBinaryOpScalar_cu_86b9896c25multi_tensor_apply_kernelINS1_18TensorListMetadataILi1EEENS1_21BinaryOpScalarFunctorIfLi1ELi1ELi0EEEJSt4plusIfEfEEEvT_T0_DpT1_",
    "_ZN50_GLOBAL__N__fa15d16e_17_RangeFactories_cu_38772b0829elementwise_kernel_with_indexIiZZZN2at6native15arange_cuda_outERKN3c106ScalarES6_S6_RNS1_6TensorEENKUlvE_clEvENKUlvE2_clEvEUllE_EEvT_T0_PN15function_traitsISD_E11result_typeE",
    "_ZN7cutlass7Kernel2I42cutlass_80_simt_sgemm_128x64_8x5_nt_align1EEvNT_6ParamsE",
    "_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_256x128_8x4_nn_align1EEvNT_6ParamsE",
    "_ZN8cublasLt19splitKreduce_kernelILi32ELi16EiffffLb0EfffLb1ELb0ELb0ELb0EEEvNS_18cublasSplitKParamsIT4_EEPKT2_PKT8_PT7_PT3_PKS2_SF_PKT9_S6_PSG_PvlPS2_PiSL_SL_SF_SF_SF_SF_SF_",
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x128x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
    "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
]


def _kernel_pool() -> tuple[list[str], list[tuple[str, str, int]]]:
    """Distinct kernel names: the real ones plus template-argument variants (a model has a few hundred), and
    Triton kernels renamed by a launch_metadata hook, each with its per-launch (bytes, flops32) kind and size."""
    torch = list(TORCH_KERNELS)
    for vec in (1, 2, 8):
        torch += [k.replace("kernelILi4E", f"kernelILi{vec}E", 1) for k in TORCH_KERNELS if "kernelILi4E" in k]
    for tile in ("64x64x8", "128x64x8", "256x64x8", "64x256x8"):
        torch += [k.replace("tilesize64x128x8", f"tilesize{tile}") for k in TORCH_KERNELS if "tilesize64x128x8" in k]
    torch = sorted(set(torch))
    hooked = []
    for n in (2**k for k in range(12, 28, 2)):
        hooked.append((f"add_kernel<n={n}>", "add", n))
    for m in (512, 1024, 2048, 4096, 8192):
        for k in (1024, 4096):
            hooked.append((f"matmul_kernel<M={m},N={m},K={k}>", "matmul", m * m * k))
    for ctx in (512, 1024, 2048, 4096):
        hooked.append((f"_attn_fwd<Z=4,H=32,N_CTX={ctx},HEAD_DIM=128>", "attn", ctx))
    return torch, hooked


SCOPE_WORDS = [
    "step", "forward", "backward", "optimizer", "layer", "attn", "mlp", "ln", "embed", "loss",
    "qkv_proj", "out_proj", "ffn_up", "ffn_down", "rotary", "softmax", "dropout", "allreduce", "grad_clip", "zero_grad",
]


def _levels(leaves: int) -> list[int]:
    """Number of scopes at each depth (1 = ROOT's children ... D = innermost), growing geometrically (~10x)."""
    depth = max(1, math.ceil(math.log(max(leaves, 2), FANOUT) - 1e-9))
    return [max(1, round(leaves ** (level / depth))) for level in range(1, depth + 1)]


def _split(rng: random.Random, total: int, parts: int) -> list[int]:
    """total items over parts buckets, each at least 1, roughly even with some jitter."""
    counts = [1] * parts
    for _ in range(total - parts):
        counts[rng.randrange(parts)] += 1
    return counts


class _Gen:
    def __init__(self, seed: int, hooked_share: float = 0.2) -> None:
        self.rng = random.Random(seed)
        self.hooked_share = hooked_share
        self.torch, self.hooked = _kernel_pool()
        self.hooked_names = {name for name, _, _ in self.hooked}

    def kernel(self, name: str, kind: str | None = None, size: int = 0) -> tuple:
        rng = self.rng
        count = max(1, int(rng.lognormvariate(2.5, 1.5)))
        if kind is None:
            per_launch = max(1500, int(rng.lognormvariate(9.5, 1.3)))  # ~13 us median, ns
            return (name, {"count": count, "device_id": "0", "device_type": "CUDA", "time (ns)": count * per_launch}, [])
        if kind == "add":
            nbytes, flops = 3 * size * 4, size
        elif kind == "matmul":
            m = round(size ** (1 / 3))
            nbytes, flops = 3 * m * m * 2, 2 * size
        else:
            nbytes, flops = 4 * 32 * size * 128 * 2, 4 * 4 * 32 * size * size * 128
        # memory-bound at 1.5-4.4 TB/s or compute-bound at 200-700 TFLOP/s, whichever is slower
        per_launch = max(nbytes / rng.uniform(1.5e3, 4.4e3), flops / rng.uniform(2e5, 7e5), 2000.0)
        metrics = {
            "bytes": count * nbytes,
            "count": count,
            "device_id": "0",
            "device_type": "CUDA",
            "flops32": count * flops,
            "time (ns)": int(count * per_launch),
        }
        return (name, metrics, [])

    def kernels(self, how_many: int) -> list[tuple]:
        """how_many distinct kernels for one scope, plus the __proton_launch_metadata leaf where a hooked kernel
        ran (included in how_many)."""
        rng = self.rng
        n_hooked = sum(rng.random() < self.hooked_share for _ in range(how_many - 1)) if how_many >= 3 else 0
        out = []
        if n_hooked:
            out.append((INTERNAL, {}, []))
            out += [self.kernel(*spec) for spec in rng.sample(self.hooked, n_hooked)]
        out += [self.kernel(name) for name in rng.sample(self.torch, how_many - len(out))]
        return out


def build(nodes: int, seed: int = 0, hooked_share: float = 0.2) -> tuple:
    """The ROOT node as nested (name, metrics, children) tuples with exactly `nodes` nodes, ROOT included.
    hooked_share: the share of kernels that are Triton kernels with launch_metadata (bytes/flops32); 0 gives a
    capture made without `-k triton`: no bytes anywhere, ROOT hints {"count": 0, "time (ns)": 0}."""
    if nodes < 1:
        raise ValueError("nodes must be >= 1")
    gen = _Gen(seed, hooked_share)
    rng = gen.rng
    root_metrics = {"count": 0, "time (ns)": 0}
    if hooked_share > 0:
        root_metrics.update({"bytes": 0, "flops32": 0})
    if nodes == 1:
        return ("ROOT", root_metrics, [])
    budget = nodes - 1
    leaves = max(1, budget // (KERNELS_PER_LEAF + 1 + 1))  # leaf scope + ~10 kernels + the odd inner kernel
    levels = _levels(leaves)
    if sum(levels) >= budget:  # tiny sizes: kernels straight under ROOT
        return ("ROOT", root_metrics, sorted(gen.kernels(min(budget, len(gen.torch))), key=lambda n: n[0]))
    # scopes level by level; each parent gets its share of the next level, with unique names among siblings
    scopes_by_level: list[list[tuple]] = []
    parents = [("ROOT", root_metrics, [])]
    root = parents[0]
    for level, count in enumerate(levels):
        shares = _split(rng, count, len(parents))
        current = []
        for parent, share in zip(parents, shares):
            words = rng.sample(SCOPE_WORDS, min(share, len(SCOPE_WORDS)))
            for i in range(share):
                name = f"{words[i % len(words)]}_{i}" if level else f"step_{i}"
                scope = (name, {}, [])
                parent[2].append(scope)
                current.append(scope)
        scopes_by_level.append(current)
        parents = current
    inner = [s for level in scopes_by_level[:-1] for s in level]
    innermost = scopes_by_level[-1]
    used = sum(levels)
    # a few kernels directly under inner scopes (optimizer steps, copies launched outside sub-scopes)
    for scope in inner:
        extra = rng.choice((0, 0, 1, 2))
        if extra and used + extra + len(innermost) <= budget:
            scope[2].extend(gen.kernel(name) for name in rng.sample(gen.torch, extra))
            used += extra
    # the rest under the innermost scopes, ~10 each, the total hitting `nodes` exactly
    left = budget - used
    shares = [1] * len(innermost)
    spread = left - len(innermost)
    mean = spread / len(innermost)
    for i in range(len(innermost)):
        want = max(0, round(rng.uniform(mean - 4, mean + 4)))
        shares[i] += min(want, spread)
        spread -= min(want, spread)
    i = 0
    while spread > 0:  # leftovers, round robin (bounded by the pool size)
        if shares[i % len(shares)] < len(gen.torch):
            shares[i % len(shares)] += 1
            spread -= 1
        i += 1
    for scope, share in zip(innermost, shares):
        scope[2].extend(gen.kernels(share))
    # Proton <= 3.6 stores children sorted by name (std::map)
    stack = [root]
    while stack:
        node = stack.pop()
        node[2].sort(key=lambda child: child[0])
        stack.extend(node[2])
    return root


def count_nodes(root: tuple) -> int:
    total, stack = 0, [root]
    while stack:
        node = stack.pop()
        total += 1
        stack.extend(node[2])
    return total


def _value(value) -> str:
    if type(value) is str:
        return _quote(value)
    if type(value) is float:
        return float.__repr__(value)
    return int.__repr__(value)


def write_hatchet(root: tuple, device_info: dict, out) -> None:
    """Stream "\\n" + json.dumps([root, device_info], indent=4, sort_keys=True) + "\\n" to a text file,
    iteratively (no recursion, any depth)."""
    w = out.write
    ind = [" " * (4 * level) for level in range(4)]

    def indent(level: int) -> str:
        while len(ind) <= level:
            ind.append(" " * (4 * len(ind)))
        return ind[level]

    device = json.dumps(device_info, indent=4, sort_keys=True).replace("\n", "\n    ")
    w("\n[\n    ")
    stack: list = ["",  ",\n    " + device + "\n]\n", (root, 1)]
    while stack:
        item = stack.pop()
        if type(item) is str:
            w(item)
            continue
        (name, metrics, kids), level = item
        i0, i1, i2 = indent(level), indent(level + 1), indent(level + 2)
        if metrics:
            body = ",\n".join(f"{i2}{_quote(k)}: {_value(metrics[k])}" for k in sorted(metrics))
            metrics_text = "{\n" + body + "\n" + i1 + "}"
        else:
            metrics_text = "{}"
        tail = (
            f'{i1}"frame": {{\n{i2}"name": {_quote(name)},\n{i2}"type": "function"\n{i1}}},\n'
            f'{i1}"metrics": {metrics_text}\n{i0}}}'
        )
        if not kids:
            w('{\n' + i1 + '"children": [],\n' + tail)
            continue
        w('{\n' + i1 + '"children": [\n' + i2)
        stack.append("\n" + i1 + "],\n" + tail)
        sep = ",\n" + i2
        for index in range(len(kids) - 1, -1, -1):
            stack.append((kids[index], level + 2))
            if index:
                stack.append(sep)


def to_json_tree(node: tuple) -> dict:
    """The tuple tree as Proton's dicts (for --verify; recursion is fine at these depths)."""
    name, metrics, kids = node
    return {"children": [to_json_tree(k) for k in kids], "frame": {"name": name, "type": "function"}, "metrics": metrics}


def capture_path(out: Path, nodes: int, seed: int, hooked_share: float = 0.2) -> Path:
    variant = "" if hooked_share == 0.2 else f"_hook{hooked_share:g}"
    return out / f"proton_{nodes}_seed{seed}{variant}.hatchet"


def make(nodes: int, out: Path = DEFAULT_OUT, seed: int = 0, force: bool = False, hooked_share: float = 0.2) -> Path:
    """Write (or reuse) the capture of `nodes` nodes; returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    path = capture_path(out, nodes, seed, hooked_share)
    if path.exists() and not force:
        return path
    root = build(nodes, seed + nodes, hooked_share)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="ascii", newline="\n", buffering=1 << 20) as handle:
        write_hatchet(root, DEVICE_INFO, handle)
    tmp.replace(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000, 100_000, 1_000_000], help="node counts")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"folder (default {DEFAULT_OUT})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--force", action="store_true", help="rewrite existing files")
    parser.add_argument(
        "--hooked-share", type=float, default=0.2, help="share of Triton kernels with bytes/flops32 (0: no hook)"
    )
    parser.add_argument("--verify", action="store_true", help="check the bytes against json.dumps (slow for 1M)")
    args = parser.parse_args(argv)
    for nodes in args.sizes:
        start = time.perf_counter()
        path = make(nodes, args.out, args.seed, args.force, args.hooked_share)
        seconds = time.perf_counter() - start
        print(f"{path}\tnodes={nodes}\tbytes={path.stat().st_size}\t{seconds:.1f}s", flush=True)
        if args.verify:
            root = build(nodes, args.seed + nodes, args.hooked_share)
            expected = "\n" + json.dumps([to_json_tree(root), DEVICE_INFO], indent=4, sort_keys=True) + "\n"
            same = path.read_text(encoding="ascii") == expected
            got, stack = 0, [json.loads(path.read_bytes())[0]]
            while stack:
                got += 1
                stack.extend(stack.pop()["children"])
            print(f"  verify: identical to json.dumps: {same}; nodes parsed: {got}", flush=True)
            if not same or got != nodes:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
