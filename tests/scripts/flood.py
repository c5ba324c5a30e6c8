"""A payload stand-in that floods its output: N numbered lines, then the payload's verdict lines."""

import sys

count = int(sys.argv[sys.argv.index("--size") + 1])
out = sys.stdout
for number in range(count):
    out.write(f"line {number}\n")
out.write("vecadd: device=cpu (flood)\nvecadd: max_abs_err=0.000e+00\nvecadd: PASS\n")
