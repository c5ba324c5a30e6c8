"""A payload that never ends and leaves a grandchild holding its output pipe.

Writes "<own pid> <grandchild pid>" to the file named by PROTON_TUI_TEST_PIDFILE, prints "ready", then:
by default sleeps forever; with --ignore-term it also ignores SIGTERM (so only SIGKILL ends it); with
--leader-exits it exits at once, leaving the grandchild behind. Other arguments are ignored.
"""

import os
import signal
import subprocess
import sys
import time

grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(os.environ["PROTON_TUI_TEST_PIDFILE"], "w") as pidfile:
    pidfile.write(f"{os.getpid()} {grandchild.pid}\n")
if "--ignore-term" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
if "--leader-exits" in sys.argv:
    os._exit(0)
while True:
    time.sleep(1)
