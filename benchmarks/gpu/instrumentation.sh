#!/usr/bin/env bash
# What Proton's instrumentation backend accepts and writes with the interpreter's Triton: the payload's scoped
# kernel in env and cli mode, tree and trace, warp sampling, buffer sizes, granularities, and a plain kernel
# launched after a scoped one. Raw outputs go to OUT (default gpu-results/instr-<UTC time>); nothing is committed.
#
#   benchmarks/gpu/instrumentation.sh [PYTHON] [OUT]
set -u
cd "$(dirname "$0")/../.." || exit 1
PY=${1:-python3}
OUT=${2:-gpu-results/instr-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
V=$($PY -c 'import triton; print(triton.__version__)')
echo "triton $V  torch $($PY -c 'import torch; print(torch.__version__)')  $(date -u +%FT%TZ)  $(git rev-parse --short HEAD 2>/dev/null)"

payload() {  # NAME MODE [payload args...]: env mode, instrumentation; prints rc, verdict line, artifact size
    local name=$1 mode=$2; shift 2
    $PY payload/vecadd.py --scoped --proton-name "$OUT/$name" --proton-backend instrumentation \
        --proton-mode "$mode" "$@" >"$OUT/$name.log" 2>&1
    local rc=$?
    local art
    art=$(ls -1 "$OUT/$name".* 2>/dev/null | grep -v '\.log$' | head -1)
    printf '%-28s rc=%-4s %-14s %-10s %s\n' "$name" "$rc" "$(grep -o 'vecadd: \(PASS\|FAIL\)' "$OUT/$name.log")" \
        "$( [ -n "$art" ] && stat -c %s "$art" || echo no-file)" \
        "$(grep -m1 -i 'error\|Error\|must\|Floating' "$OUT/$name.log" | cut -c1-150)"
}

echo "== scoped payload, env mode"
payload tree_default "" --size 1048576 --iters 20
payload trace_default "" --size 16384 --iters 2 --proton-data trace
payload tree_sampled_02 "default:sampling_strategy=selective:sampling_options=0,2" --size 1048576 --iters 20
payload trace_sampled_02 "default:sampling_strategy=selective:sampling_options=0,2" --size 16384 --iters 2 \
    --proton-data trace
payload tree_sampled_3 "default:sampling_strategy=selective:sampling_options=3" --size 1048576 --iters 20
payload tree_sampled_bad7 "default:sampling_strategy=selective:sampling_options=7" --size 1048576 --iters 20
for size in 64 256 1000 1024 4096 65536 262144 1048576; do
    payload "tree_buffer_$size" "default:buffer_size=$size" --size 1048576 --iters 20
done
payload trace_buffer_256 "default:buffer_size=256" --size 16384 --iters 2 --proton-data trace
for gran in cta warp_2 warp_group; do
    payload "tree_gran_$gran" "default:granularity=$gran" --size 1048576 --iters 20
done
payload tree_global_buffer "default:buffer_type=global" --size 1048576 --iters 20
echo "== scoped payload, cli mode (-m given: does this Proton pass it?)"
$PY -m triton.profiler.proton -n "$OUT/cli_mode_sampled" -b instrumentation \
    -m "default:sampling_strategy=selective:sampling_options=0,2" payload/vecadd.py --scoped --size 1048576 \
    --iters 20 >"$OUT/cli_mode_sampled.log" 2>&1
echo "cli_mode_sampled rc=$? $(grep -o 'vecadd: \(PASS\|FAIL\)' "$OUT/cli_mode_sampled.log") $(tail -1 "$OUT/cli_mode_sampled.log" | cut -c1-150)"
echo "== a plain kernel after a scoped one"
for order in scoped,plain plain,scoped scoped,scoped; do
    $PY benchmarks/gpu/sigfpe.py "$OUT/order_${order/,/_}" "$order" >"$OUT/order_${order/,/_}.log" 2>&1
    echo "order $order rc=$? $(tr '\n' ' ' <"$OUT/order_${order/,/_}.log" | cut -c1-200)"
done
echo "== normalized_cycles against cycles per scope (tree captures)"
for f in "$OUT"/tree_*.hatchet; do
    $PY - "$f" <<'PY'
import json, sys
tree = json.load(open(sys.argv[1]))[0]
def walk(node, depth=0):
    m = node["metrics"]
    if "cycles" in m:
        print(f"  {sys.argv[1].rsplit('/', 1)[1]:28} {'  ' * depth}{node['frame']['name']:8} cycles={m['cycles']} "
              f"normalized={m.get('normalized_cycles')} ratio={m['cycles'] / m['normalized_cycles']:.1f}")
    for child in node["children"]:
        walk(child, depth + 1)
walk(tree)
PY
done
