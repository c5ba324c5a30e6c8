"""A payload that prints a line far wider than any terminal (a long traceback line does), then passes."""

print("vecadd: device=cpu (long line test)", flush=True)
print("begin " + " ".join(f"word{i:03d}" for i in range(60)) + " end", flush=True)
print("vecadd: PASS", flush=True)
