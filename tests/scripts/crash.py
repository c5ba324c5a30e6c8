"""A payload that starts like vecadd, then raises: its traceback must reach the verdict."""

print("vecadd: device=cpu (crash test)", flush=True)
raise RuntimeError("boom: the payload crashed on purpose")
