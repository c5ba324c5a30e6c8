"""The start-up hook of a workload run in env mode: proton-tui copies this file as ``sitecustomize.py`` into a folder
of the run and puts that folder first on the workload's PYTHONPATH for that run only, with the run's settings in
PROTON_TUI_HOOK (JSON). Python imports it at start-up in every process of the workload; it acts in the processes to
profile and in no other:

- under a launcher (torchrun, srun, mpirun), each process that has a rank (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK,
  PMI_RANK, PMIX_RANK), exactly once; never the launcher's own agent (torch.distributed.run);
- with one process, the first Python process of the command;
- never a child of a process it acts in (data-loader and compile workers inherit PROTON_TUI_PROFILED and pass).

In such a process it writes a sidecar (`<stem>.sidecar.json`: rank, local rank, world size, host, pid, the GPU as the
process saw it, *_VISIBLE_DEVICES, versions), sends the process's output to `<stem>.log` under a launcher (proton-tui
shows it prefixed by the rank), starts Proton writing `<stem>` (`<name>.rank<R>`, or `<name>` with one process), and
finalizes Proton at exit, on SIGTERM and on SIGINT, so a rank ended by its launcher still leaves its capture. A
`sitecustomize` the workload already had is imported after it. Nothing here may stop the workload: a failure is one
line on stderr and a field of the sidecar.

Runs under the workload's interpreter (any Python 3.8 or later), so it imports nothing but the standard library and,
when profiling, Triton.
"""

import json
import os
import signal
import socket
import sys
import time

CONFIG_VAR = "PROTON_TUI_HOOK"
PROFILED_VAR = "PROTON_TUI_PROFILED"  # set in a process the hook acts in; its children inherit it and pass
RANK_VARS = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")
LOCAL_RANK_VARS = ("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK")
WORLD_SIZE_VARS = ("WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE")
LAUNCHER_AGENTS = ("torch.distributed.run", "torch.distributed.launch", "torchrun")
VISIBLE_VARS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")
SIDECAR_SUFFIX = ".sidecar.json"
LOG_SUFFIX = ".log"


def first_int(env, names):
    """The first of the variables `names` set to a whole number: (its name, its value); (None, None) else."""
    for name in names:
        value = env.get(name, "").strip()
        if value.lstrip("-").isdigit():
            return name, int(value)
    return None, None


def command_line(pid="self"):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as stream:
            return [arg.decode("utf-8", "replace") for arg in stream.read().split(b"\0") if arg]
    except OSError:
        return list(getattr(sys, "argv", []) or [])


def is_launcher_agent(argv):
    """A launcher's own process (torchrun's agent): it starts the ranks and is never one of them."""
    for index, arg in enumerate(argv[:4]):
        base = os.path.basename(arg)
        if base in LAUNCHER_AGENTS or (arg == "-m" and index + 1 < len(argv) and argv[index + 1] in LAUNCHER_AGENTS):
            return True
    return False


def identity(config, env):
    """Whether this process is one to profile, and who it is: None for a process the hook leaves alone."""
    if env.get(PROFILED_VAR):
        return None  # a child of a profiled process
    argv = command_line()
    if is_launcher_agent(argv):
        return None
    rank_var, rank = first_int(env, RANK_VARS)
    if config.get("ranks") and rank is None:
        return None  # under a launcher, a process without a rank is not a worker
    _, local_rank = first_int(env, LOCAL_RANK_VARS)
    _, world_size = first_int(env, WORLD_SIZE_VARS)
    stem = config["name"] + (".rank%d" % rank if config.get("ranks") else "")
    return {
        "rank": rank, "rank_variable": rank_var, "local_rank": local_rank, "world_size": world_size,
        "host": socket.gethostname(), "pid": os.getpid(), "argv": argv, "stem": stem,
        "visible_devices": {var: env[var] for var in VISIBLE_VARS if var in env},
        "python": sys.executable, "python_version": "%d.%d.%d" % sys.version_info[:3],
        "started_ns": time.time_ns(), "ending_ns": None, "finished_ns": None, "finalized": False, "profiling": False,
        "proton_error": None, "triton_version": None, "torch_version": None,
        "gpu_index": None, "gpu_name": None, "gpu_uuid": None, "gpu_pci_bus_id": None,
    }


class Hook:
    """The hook's work in one profiled process."""

    def __init__(self, config, me):
        self.config, self.me = config, me
        self.folder = config["folder"]
        self.stem_path = os.path.join(self.folder, me["stem"])
        self.proton = None
        self.done = False  # the end has begun
        self.ended = False  # the end is written
        self.deferred = None  # a signal that came while the end was under way: (number, frame, what it did before)

    def say(self, text):
        try:
            sys.stderr.write("proton-tui: %s\n" % text)
            sys.stderr.flush()
        except Exception:
            pass

    def write_sidecar(self):
        path = self.stem_path + SIDECAR_SUFFIX
        partial = "%s.%d.partial" % (path, os.getpid())
        try:
            with open(partial, "w") as stream:
                json.dump(self.me, stream, indent=2)
            os.replace(partial, path)
        except OSError as error:
            self.say("%s: cannot be written: %s" % (path, error.strerror or error))
            try:
                os.unlink(partial)
            except OSError:
                pass

    def redirect_output(self):
        """Under a launcher, the process's stdout and stderr go to its own log, which proton-tui shows prefixed by
        the rank (written by the kernel as they come: nothing is lost when the process is killed)."""
        log = os.open(self.stem_path + LOG_SUFFIX, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)

    def start(self):
        os.environ[PROFILED_VAR] = str(os.getpid())
        if self.config.get("ranks"):
            self.redirect_output()
        self.write_sidecar()
        if self.config.get("profile"):
            self.start_proton()
        import atexit

        atexit.register(self.finish)
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            self.chain_signal(signum)

    def start_proton(self):
        try:
            import triton
            import triton.profiler as proton

            self.me["triton_version"] = getattr(triton, "__version__", None)
            options = {"context": self.config.get("context", "shadow"), "backend": self.config.get("backend"),
                       "hook": self.config.get("hook")}
            if self.config.get("data", "tree") != "tree":
                options["data"] = self.config["data"]
            if self.config.get("mode"):
                options["mode"] = self.config["mode"]
            proton.start(self.stem_path, **options)
        except BaseException as error:  # noqa: BLE001 - the workload runs on whatever Proton did
            message = ("%s: %s" % (type(error).__name__, error)).strip().splitlines()
            self.me["proton_error"] = message[-1] if message else type(error).__name__
            self.say("Proton did not start in %s: %s" % (self.who(), self.me["proton_error"]))
            self.write_sidecar()
            return
        self.proton, self.me["profiling"] = proton, True
        self.write_sidecar()

    def who(self):
        rank = self.me["rank"]
        return "pid %d" % self.me["pid"] if rank is None else "rank %d" % rank

    def mine(self):
        """Whether this is the process the hook started in (not a child forked from it, which inherits the hook's
        exit and signal handlers and must not write its sidecar)."""
        return os.getpid() == self.me["pid"]

    def stamp_ending(self):
        """The moment the process began to end, once: what tells which rank failed first."""
        if self.me.get("ending_ns") is None and self.mine():
            self.me["ending_ns"] = time.time_ns()

    def chain_excepthook(self):
        """An uncaught exception stamps the end before it is printed (and before the exit closes the process's
        connections, which is when its peers fail in turn). Installed after the workload's own `sitecustomize`, so
        that one replacing `sys.excepthook` keeps this one in front of it."""
        before = sys.excepthook

        def excepthook(kind, value, traceback):
            self.stamp_ending()
            before(kind, value, traceback)

        sys.excepthook = excepthook

    def chain_signal(self, signum):
        """On `signum`, finalize first, then what the process did before (its own handler, or the default)."""
        try:
            before = signal.getsignal(signum)
        except (ValueError, OSError):
            return
        if before is signal.SIG_IGN:
            return

        def handler(number, frame):
            if not self.done:
                self.finish(in_handler=True)
            elif not self.ended and self.deferred is None:  # the end is under way: it ends first, then this acts
                self.deferred = (number, frame, before)
                return
            # (a second signal while the end is under way, which may hang, acts at once)
            act_before(number, frame, before)
            deferred, self.deferred = self.deferred, None
            if deferred is not None:
                act_before(*deferred)

        try:
            signal.signal(signum, handler)
        except (ValueError, OSError):
            pass

    def finish(self, in_handler=False):
        """Finalize Proton and write the sidecar, once. A signal that comes meanwhile acts once it is written: here
        at exit, else (`in_handler`) in the handler of the signal that began it, after that signal's own action."""
        if self.done or not self.mine():
            return
        self.done = True
        self.stamp_ending()
        try:
            if self.proton is not None:  # a finalize cut short by SIGKILL still leaves when the end began
                self.write_sidecar()
            self.read_gpu()
            if self.proton is not None:
                try:
                    fmt = self.config.get("format", "hatchet")
                    self.proton.finalize(**({"output_format": fmt} if fmt != "hatchet" else {}))
                except BaseException as error:  # noqa: BLE001
                    self.me["proton_error"] = "finalize: %s: %s" % (type(error).__name__, error)
                    self.say("Proton did not finalize in %s: %s" % (self.who(), self.me["proton_error"]))
            self.me["finalized"], self.me["finished_ns"] = True, time.time_ns()
            self.write_sidecar()
        finally:
            self.ended = True
            deferred = None if in_handler else self.deferred
            if deferred is not None:
                self.deferred = None
                act_before(*deferred)

    def read_gpu(self):
        """The GPU this process used, as torch saw it (only where torch already initialized CUDA: the hook never
        starts a GPU context of its own)."""
        torch = sys.modules.get("torch")
        if torch is None:
            return
        self.me["torch_version"] = str(getattr(torch, "__version__", "")) or None
        try:
            if not torch.cuda.is_initialized():
                return
            index = torch.cuda.current_device()
            props = torch.cuda.get_device_properties(index)
            self.me["gpu_index"], self.me["gpu_name"] = index, getattr(props, "name", None)
            uuid = getattr(props, "uuid", None)
            self.me["gpu_uuid"] = str(uuid) if uuid is not None else None
            if hasattr(props, "pci_bus_id"):
                self.me["gpu_pci_bus_id"] = "%08X:%02X:%02X.0" % (props.pci_domain_id, props.pci_bus_id,
                                                                  props.pci_device_id)
        except Exception:  # noqa: BLE001 - what torch could not say is left out
            return


def act_before(number, frame, before):
    """Do what the process did on signal `number` before the hook: its own handler, or the default."""
    if callable(before):
        before(number, frame)
        return
    signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)


def chain_sitecustomize():
    """Import the `sitecustomize` the workload would have had without this one (the next on sys.path)."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["_proton_tui_chained_sitecustomize"] = module
    spec.loader.exec_module(module)


def main():
    raw = os.environ.get(CONFIG_VAR)
    hook = None
    if raw:
        try:
            config = json.loads(raw)
            me = identity(config, os.environ)
            if me is not None:
                hook = Hook(config, me)
                hook.start()
        except Exception as error:  # noqa: BLE001
            sys.stderr.write("proton-tui: the start-up hook failed: %s: %s\n" % (type(error).__name__, error))
    chain_sitecustomize()
    if hook is not None:
        hook.chain_excepthook()


if __name__ == "sitecustomize":
    main()
