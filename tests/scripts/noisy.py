"""Output a terminal would clean up: \r progress, ANSI colours, CRLF, bad UTF-8, no final newline."""

import sys
import time

out = sys.stdout.buffer
out.write(b"plain line\n")
for percent in (10, 50, 100):
    out.write(b"\rprogress %d%%" % percent)
    out.flush()
    time.sleep(0.01)
out.write(b"\n")
out.write(b"\x1b[1;32mgreen\x1b[0m and \x1b]0;title\x07text\n")
out.write(b"windows line\r\n")
out.write(b"bad utf-8: \xff\xfe end\n")
out.write(b"caf\xc3\xa9\n")
sys.stderr.write("to stderr\n")
sys.stderr.flush()
out.write(b"no newline at the end")
out.flush()
