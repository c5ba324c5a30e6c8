"""`proton-tui view` through the installed console script: text, JSON, CSV and one-line errors."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import time

import pytest

import proton_tui
from proton_tui.hatchet import load_profile
from tests.helpers import BAD_INPUTS, CLI, capture_path, kernel, on_a_terminal, scope


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_piped_view_prints_the_tree():
    result = run_cli("view", str(capture_path("vecadd_auto")))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("vecadd_auto.hatchet  GPU time 67.33 µs  26 launches  5 kernels")
    add_row = next(line for line in lines if line.endswith("├─ add_kernel"))
    assert add_row.split()[:5] == ["46.11", "µs", "68.5%", "20", "2.31"]


def test_plain_depth_threshold_include_exclude():
    gpt2 = str(capture_path("gpt2_shadow"))
    top = run_cli("view", gpt2, "--plain", "--depth", "2").stdout
    assert "backward" in top and "cutlass" not in top
    big = run_cli("view", gpt2, "--threshold", "9").stdout
    assert "sm80_xmma_gemm" in big and "reduce_kernel" not in big
    forward = run_cli("view", gpt2, "--include", "^forward$").stdout
    assert "forward" in forward and "backward" not in forward and "optimizer" not in forward
    no_gemm = run_cli("view", gpt2, "--exclude", "gemm|cutlass").stdout
    assert "gemm" not in no_gemm and "cutlass" not in no_gemm and "layer_norm" in no_gemm


def test_json_has_metrics_and_kernel_summary():
    result = run_cli("view", str(capture_path("vecadd_hook")), "--json")
    document = json.loads(result.stdout)
    assert document["metrics_summary"]["proton_kernel_count"] == 56
    assert document["metrics_summary"]["proton_top_kernels"][0] == "add_kernel<n=268435456>"
    top = document["kernels"][0]
    assert top["launches"] == 50 and top["gbps"] == pytest.approx(4400.4, abs=0.1)


def test_json_keys_are_one_versioned_schema_whatever_the_unit(write_capture):
    """Time and cycle captures give the same keys; the unit is a value. % of peak and per-device totals, which the
    text outputs show, are there too."""
    timed = json.loads(run_cli("view", str(capture_path("vecadd_hook")), "--json").stdout)
    region = {"frame": {"name": "loop"}, "metrics": {"cycles": 5000, "count": 2}, "children": []}
    cycled = json.loads(run_cli("view", str(write_capture([scope("ROOT", region), {}])), "--json").stdout)
    assert timed["schema"] == cycled["schema"] == "proton-tui/1"
    assert set(timed) == set(cycled) and (timed["unit"], cycled["unit"]) == ("ns", "cycles")
    assert set(timed["kernels"][0]) == set(cycled["kernels"][0]) >= {"value", "avg", "peak_percent", "gbps"}
    top = timed["kernels"][0]
    peak = load_profile(capture_path("vecadd_hook")).peak_bytes_per_s("CUDA:0")
    assert top["peak_percent"] == pytest.approx(100 * top["gbps"] * 1e9 / peak)
    assert timed["device_totals"] == {"CUDA:0": pytest.approx(sum(k["value"] for k in timed["kernels"]))}


def test_csv_is_the_kernel_summary():
    rows = list(csv.DictReader(io.StringIO(run_cli("view", str(capture_path("gpt2_shadow")), "--csv").stdout)))
    assert len(rows) == 50
    assert sum(int(row["launches"]) for row in rows) == 1439
    times = [float(row["value"]) for row in rows]
    assert times == sorted(times, reverse=True) and {row["unit"] for row in rows} == {"ns"}


def test_csv_export_writes_what_csv_prints(tmp_path):
    path = tmp_path / "k.csv"
    result = run_cli("view", str(capture_path("gpt2_shadow")), "--csv", "--export", str(path))
    assert result.returncode == 0, result.stderr
    assert path.read_text() == run_cli("view", str(capture_path("gpt2_shadow")), "--csv").stdout


def test_empty_capture_is_said_plainly():
    result = run_cli("view", str(capture_path("vecadd_instr")))
    assert result.returncode == 0
    assert result.stdout.strip() == "vecadd_instr.hatchet: Proton recorded no kernels"


def test_markup_like_kernel_name_is_printed_as_written(write_capture):
    name = "[bold red]x[/]"
    path = write_capture([scope("ROOT", kernel(name, 100)), {}])
    assert f"└─ {name}" in run_cli("view", str(path)).stdout
    assert name in run_cli("view", str(path), "--kernels").stdout


@pytest.mark.parametrize("case", ["empty", "truncated", "not json", "binary", "dict", "string metric", "nan metric"])
def test_bad_input_one_line_exit_2_no_traceback(case, write_capture):
    path = write_capture(BAD_INPUTS[case][0], name="bad.hatchet")
    result = run_cli("view", str(path))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and str(path) in result.stderr and BAD_INPUTS[case][1] in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["view", "/nonexistent/x.hatchet"], "/nonexistent/x.hatchet: no such file"),
        (["view", "."], "no Proton capture in this folder"),
        (["view", "FIXTURE", "--include", "("], "--include '(' is not a valid regular expression"),
        (["view", "FIXTURE", "--depth", "-1"], "--depth"),
        (["view", "FIXTURE", "--json", "--csv"], "exclusive"),
        (["view", "FIXTURE", "--json", "--export", "/nonexistent/out.csv"], "--json is for standard output"),
        (["view", "FIXTURE", "--plain", "--export", "/nonexistent/out.md"], "--plain is for standard output"),
        (["view", "FIXTURE", "--json", "--depth", "1"], "--depth and --threshold hide rows"),
        (["view", "FIXTURE", "--bogus"], "--bogus"),
        (["view"], "Missing argument"),
    ],
)
def test_bad_flags_one_line_exit_2(args, fragment):
    args = [str(capture_path("vecadd_auto")) if a == "FIXTURE" else a for a in args]
    result = run_cli(*args)
    assert result.returncode == 2 and fragment in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_help_is_fast_and_does_not_import_textual():
    started = time.perf_counter()
    result = run_cli("--help")
    assert result.returncode == 0 and "view" in result.stdout
    probe = subprocess.run(
        [sys.executable, "-c", "import sys, proton_tui.cli; print('textual' in sys.modules)"],
        capture_output=True, text=True, check=True,
    )
    assert probe.stdout.strip() == "False"
    assert time.perf_counter() - started < 30  # a sanity bound, not a benchmark (benchmarks/ measures speed)


@pytest.mark.parametrize("name", ["missing.hatchet", "empty.hatchet"])
def test_view_file_on_a_terminal_opens_without_the_command_line(tmp_path, name):
    """`view FILE` on a terminal skips Typer (entry.main); its errors read as the command line's: one line, exit 2."""
    import pty

    (tmp_path / "empty.hatchet").write_bytes(b"")
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: print('typer imported:', 'typer' in sys.modules, file=sys.stderr))\n"
             "from proton_tui.entry import main\n"
             f"sys.argv = ['proton-tui', 'view', {str(tmp_path / name)!r}]\n"
             "main()\n")
    leader, follower = pty.openpty()
    try:
        result = subprocess.run([sys.executable, "-c", probe], stdout=follower, stderr=subprocess.PIPE, text=True,
                                timeout=60)
    finally:
        os.close(leader)
        os.close(follower)
    error, imported = result.stderr.splitlines()
    assert result.returncode == 2 and imported == "typer imported: False"
    assert error.startswith(f"proton-tui: error: {tmp_path / name}: ") and "Traceback" not in result.stderr
    assert error == run_cli("view", str(tmp_path / name), "--plain").stderr.strip()  # Typer's path says the same


def test_broken_pipe_is_quiet():
    command = f"{CLI} view {capture_path('gpt2_shadow')} | head -1"
    result = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60)
    assert result.stdout.startswith("gpt2_shadow.hatchet") and "Traceback" not in result.stderr


MANGLED_FILL = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
READABLE_FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
                 "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")


SHORT_FILL = "vectorized_elementwise_kernel<…, FillFunctor<…>, …>"


@pytest.mark.parametrize("option", ["--plain", "--kernels", "--csv"])
def test_text_outputs_print_short_names_and_the_others_on_request(option):
    fail = str(capture_path("vecadd_fail"))
    short, full = run_cli("view", fail, option), run_cli("view", fail, option, "--names", "full")
    raw, alias = run_cli("view", fail, option, "--names", "raw"), run_cli("view", fail, option, "--raw-names")
    assert {short.returncode, full.returncode, raw.returncode, alias.returncode} == {0}, short.stderr + full.stderr
    assert SHORT_FILL in short.stdout and READABLE_FILL not in short.stdout and MANGLED_FILL not in short.stdout
    assert READABLE_FILL in full.stdout and MANGLED_FILL not in full.stdout
    assert MANGLED_FILL in raw.stdout and READABLE_FILL not in raw.stdout and raw.stdout == alias.stdout


@pytest.mark.parametrize("options", [["--names", "long"], ["--names", "full", "--raw-names"]])
def test_a_bad_names_option_is_one_line_and_exit_2(options):
    result = run_cli("view", str(capture_path("vecadd_fail")), "--kernels", *options)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1 and "--names" in result.stderr


def test_markdown_export_prints_short_names_and_json_carries_every_form(tmp_path):
    fail = str(capture_path("vecadd_fail"))
    markdown = tmp_path / "tree.md"
    assert run_cli("view", fail, "--export", str(markdown)).returncode == 0
    assert "vectorized_elementwise_kernel\\<…, FillFunctor\\<…>, …>" in markdown.read_text()  # short
    assert MANGLED_FILL not in markdown.read_text()
    document = json.loads(run_cli("view", fail, "--json").stdout)
    fill = next(k for k in document["kernels"] if k["name"] == MANGLED_FILL)
    assert fill["readable_name"] == READABLE_FILL
    raw = json.loads(run_cli("view", fail, "--json", "--raw-names").stdout)  # both, whichever rule the text follows
    assert next(k for k in raw["kernels"] if k["name"] == MANGLED_FILL)["readable_name"] == READABLE_FILL
    assert {(k["short_name"], k["full_name"]) for k in raw["kernels"] if k["name"] == MANGLED_FILL} == {
        (SHORT_FILL, READABLE_FILL)}


def test_include_matches_the_full_name():
    result = run_cli("view", str(capture_path("gpt2_shadow")), "--kernels", "--include", "at::native", "--names", "full")
    assert result.returncode == 0 and "Proton recorded no kernels" not in result.stdout
    kernels = result.stdout.splitlines()[2:]
    assert len(kernels) > 5 and all("at::native" in line for line in kernels)
    short = run_cli("view", str(capture_path("gpt2_shadow")), "--kernels", "--include", "at::native")
    assert len(short.stdout.splitlines()) == len(result.stdout.splitlines())  # the same kernels, named short


@pytest.mark.parametrize("form", ["short", "full", "raw"])
def test_include_by_any_form_of_a_name_finds_the_same_kernel(form):
    from proton_tui.view.names import Names

    gpt2 = str(capture_path("gpt2_shadow"))
    raw = next(k["name"] for k in json.loads(run_cli("view", gpt2, "--json").stdout)["kernels"]
               if "pow_tensor_scalar" in k["name"])
    name = Names.demangled(load_profile(capture_path("gpt2_shadow")).names).in_form(raw, form)
    document = json.loads(run_cli("view", gpt2, "--json", "--include", re.escape(name)).stdout)
    assert [kernel["name"] for kernel in document["kernels"]] == [raw]


def test_sort_and_reverse_order_the_kernel_summary():
    result = run_cli("view", str(capture_path("gpt2_shadow")), "--kernels", "--sort", "name")
    names = [row["name"] for row in csv.DictReader(io.StringIO(
        run_cli("view", str(capture_path("gpt2_shadow")), "--csv", "--sort", "name").stdout))]
    assert names == sorted(names) and len(names) == 50 and all(name in result.stdout for name in names)
    backwards = run_cli("view", str(capture_path("gpt2_shadow")), "--kernels", "--sort", "name", "--reverse")
    assert backwards.stdout.splitlines()[2:] == result.stdout.splitlines()[2:][::-1]
    assert run_cli("view", str(capture_path("gpt2_shadow")), "--sort", "size").returncode == 2


def test_what_is_not_a_regular_file_is_refused_at_once(tmp_path):
    fifo = tmp_path / "capture.hatchet"
    os.mkfifo(fifo)  # no writer: opening it would block
    loop_a, loop_b = tmp_path / "a.hatchet", tmp_path / "b.hatchet"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    for path, words in ((fifo, "is a FIFO, not a capture file"), (loop_a, "a loop of symbolic links")):
        started = time.monotonic()
        result = run_cli("view", str(path), "--plain")
        assert result.returncode == 2 and result.stdout == "" and time.monotonic() - started < 30
        assert result.stderr == f"proton-tui: error: {path}: {words}" + result.stderr.split(words, 1)[1]
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_dash_reads_the_capture_from_standard_input():
    data = capture_path("vecadd_auto").read_bytes()
    result = subprocess.run([CLI, "view", "-", "--kernels"], input=data, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().splitlines()[2].endswith("add_kernel")


def test_a_file_named_dash_is_read_as_a_file_when_its_path_says_so(tmp_path):
    """`-` alone is standard input; `./-` (which pathlib reads as `-`) is the file of that name, for `view` and for
    either side of `diff`."""
    (tmp_path / "-").write_bytes(capture_path("vecadd_auto").read_bytes())

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([CLI, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                              cwd=tmp_path)

    viewed = run("view", "./-", "--kernels")
    assert viewed.returncode == 0, viewed.stderr
    assert viewed.stdout.splitlines()[2].endswith("add_kernel")
    compared = run("diff", "./-", "./-")
    assert compared.returncode == 0 and "add_kernel" in compared.stdout, compared.stderr
    from_stdin = run("diff", "./-", "-")  # the other side is standard input, here empty
    assert from_stdin.returncode == 2 and from_stdin.stderr == "proton-tui: error: -: empty file\n"


def test_standard_input_twice_is_no_rank_set_and_a_blank_file_or_folder_name_is_refused(tmp_path):
    """`view - -` (a rank set read from standard input twice) and a blank `--export`, `--output` or `--report-dir`
    (no name, which a path would take for the current folder) are each refused in one line naming what is wrong,
    exit 2, with nothing written."""
    data = capture_path("vecadd_auto").read_bytes()
    for forms in ([], ["--plain"]):
        result = subprocess.run([CLI, "view", "-", "-", *forms], input=data, capture_output=True, timeout=60)
        assert result.returncode == 2 and result.stderr.decode() == (
            "proton-tui: error: -: standard input holds one capture; give a rank set as capture files, one per "
            "rank, or as their folder\n")
    one, two = str(capture_path("vecadd_auto")), str(capture_path("vecadd_hook"))
    for files in ([one], [one, two]):
        for name in ("", "  "):
            result = subprocess.run([CLI, "view", *files, "--export", name], capture_output=True, text=True,
                                    timeout=60, cwd=tmp_path)
            assert (result.returncode, result.stderr) == (2, "proton-tui: error: --export: no file or folder name given\n")
    assert not list(tmp_path.iterdir())
    for command in (["check", "--output"], ["check", "--report-dir"], ["doctor", "--output"], ["run", "--output"]):
        result = subprocess.run([CLI, *command, ""], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert (result.returncode, result.stderr) == (2, f"proton-tui: error: {command[1]}: no file or folder name "
                                                         "given\n")
    assert not list(tmp_path.iterdir())


def test_a_filter_that_matches_nothing_says_so():
    result = run_cli("view", str(capture_path("gpt2_shadow")), "--include", "no-such-kernel")
    assert result.returncode == 0 and result.stdout == "gpt2_shadow.hatchet: no node matches the filter\n"


def test_plain_output_of_a_deep_chain_stays_small(tmp_path):
    """A 20,000-deep python-context chain: the drawn indent is capped (the depth shown as a number), the output
    stays within a small multiple of the node count."""
    depth = 20_000  # nested deeper than json.dumps recurses: written out
    opening = "".join(f'{{"frame": {{"name": "frame{level}"}}, "metrics": {{}}, "children": [' for level in range(depth))
    path = tmp_path / "deep.hatchet"
    path.write_text('[{"frame": {"name": "ROOT"}, "metrics": {}, "children": [' + opening + json.dumps(kernel("leaf", 5))
                    + "]}" * depth + "]}, {}]")
    result = run_cli("view", str(path), "--plain")
    assert result.returncode == 0, result.stderr[-500:]
    assert len(result.stdout) < 100 * 20_003 and result.stdout.rstrip().endswith("[20001] └─ leaf")


def test_a_capture_of_scopes_with_user_metrics_and_no_kernel(write_capture):
    """What Triton >= 3.7 writes for scopes with user metrics and no kernel: the scopes are shown with their
    metrics, the capture is never called ROOT-only, and its unit is neither time nor cycles."""
    tree = scope("ROOT", scope("step", scope("attention", bytes=4096, flops16=1e9, my_metric=[1, 2])),
                 scope("optimizer", bytes=1024))
    path = write_capture([tree, {}])
    plain = run_cli("view", str(path), "--plain").stdout
    assert plain.splitlines()[0] == "capture.hatchet: no kernel time recorded; 3 scopes with their metrics"
    assert "└─ attention" in plain and "optimizer" in plain and "ROOT" in plain and "no kernels" not in plain
    document = json.loads(run_cli("view", str(path), "--json").stdout)
    assert document["unit"] is None and document["nodes"] == 4 and document["empty"] is True
    root_only = write_capture([scope("ROOT"), {}], name="root.hatchet")
    assert run_cli("view", str(root_only), "--plain").stdout == "root.hatchet: Proton recorded no kernels\n"


def test_version():
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout == f"proton-tui {proton_tui.__version__}\n"


@pytest.mark.parametrize("args, words", [
    (["view", str(capture_path("gpt2_shadow")), "--kernels", "--threshold", "5"], "--depth and --threshold hide rows"),
    (["view", str(capture_path("gpt2_shadow")), "--csv", "--depth", "1"], "--depth and --threshold hide rows"),
    (["diff", str(capture_path("vecadd_auto")), str(capture_path("vecadd_fail")), "--limit", "0"], "--limit"),
])
def test_options_that_would_be_ignored_are_refused(args, words):
    result = run_cli(*args)
    assert result.returncode == 2 and result.stdout == "" and words in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_empty_frames_are_hidden_unless_asked_for(tmp_path):
    """A python-context capture with scopes holds frames that recorded nothing (`__enter__  scope.py:56`): the tree
    hides them and says how many, every number unchanged; --show-empty shows them; the JSON documents count them."""
    path = str(capture_path("python_scopes"))
    hidden = run_cli("view", path, "--plain").stdout.splitlines()
    shown = run_cli("view", path, "--plain", "--show-empty").stdout.splitlines()
    assert not any("scope.py" in line for line in hidden) and sum("__enter__  scope.py:56" in line for line in shown) == 2
    assert hidden[-1] == "(6 empty frames hidden: nothing recorded below them; --show-empty shows them)"
    assert len(shown) == len(hidden) - 1 + 6 and not any("empty frame" in line for line in shown)
    assert hidden[0] == shown[0] and hidden[2] == shown[2]  # header and ROOT: the same numbers
    document = json.loads(run_cli("view", path, "--json").stdout)
    assert document["empty_nodes"] == 6 and document["nodes"] == 11
    run_cli("view", path, "--export", str(tmp_path / "tree.json"))
    export = json.loads((tmp_path / "tree.json").read_text())
    assert export["hidden_empty_rows"] == 6 and len(export["rows"]) == 5
    kernels = run_cli("view", path, "--kernels").stdout
    assert kernels == run_cli("view", path, "--kernels", "--show-empty").stdout  # no kernel is ever empty




def test_share_bars_on_a_terminal_never_in_a_pipe():
    """--plain and --kernels on a terminal draw a share bar beside each %; piped, CSV and JSON never hold one."""
    path = str(capture_path("gpt2_shadow"))
    tree = on_a_terminal("view", path, "--plain").splitlines()
    assert tree[1].split()[:4] == ["time", "%", "share", "launches"]
    assert "100.0%  ████████  " in tree[2] and "ROOT" in tree[2]  # ROOT: the whole bar
    kernels = on_a_terminal("view", path, "--kernels")
    assert "share" in kernels.splitlines()[1] and "▏" in kernels  # a small kernel still shows an eighth
    for args in (["--plain"], ["--kernels"], ["--csv"], ["--json"]):
        piped = run_cli("view", path, *args).stdout
        assert not set("▏▎▍▌▋▊▉█") & set(piped) and "share" not in piped, args


def test_the_kernel_summary_of_a_pytorch_capture_fits_200_columns():
    result = run_cli("view", str(capture_path("gpt2_shadow")), "--kernels")
    assert result.returncode == 0, result.stderr
    assert max(map(len, result.stdout.splitlines())) <= 200


def test_a_non_finite_total_is_one_line_exit_2(write_capture):
    path = write_capture([scope("ROOT", kernel("a", 1.7e308), kernel("b", 1.7e308)), {}])
    for option in ("--plain", "--json"):
        result = run_cli("view", str(path), option)
        assert result.returncode == 2 and str(path) in result.stderr and "infinite" in result.stderr
        assert result.stderr.count("\n") == 1 and result.stdout == ""


def test_json_and_csv_hold_integers_and_percent_exact(write_capture):
    path = write_capture([scope("ROOT", kernel("a", 123456789012345678901234567890), kernel("b", 1), kernel("c", 2)),
                          {}])
    document = json.loads(run_cli("view", str(path), "--json").stdout)
    assert document["total"] == 123456789012345678901234567893
    shares = {row["name"]: row["percent"] for row in document["kernels"]}
    assert shares["c"] == 100 * 2 / 123456789012345678901234567893
    small = write_capture([scope("ROOT", kernel("a", 1), kernel("b", 2)), {}], name="small.hatchet")
    rows = list(csv.DictReader(io.StringIO(run_cli("view", str(small), "--csv").stdout)))
    assert {row["name"]: float(row["percent"]) for row in rows} == {"a": 100 / 3, "b": 200 / 3}


def test_launches_a_cycle_capture_does_not_record_are_null_everywhere():
    path = str(capture_path("instr_vecadd_3.7.1"))
    document = json.loads(run_cli("view", path, "--json").stdout)
    assert document["kernel_launches"] is None and document["metrics_summary"]["proton_kernel_count"] is None
    assert {kernel["launches"] for kernel in document["kernels"]} == {None}
    rows = list(csv.DictReader(io.StringIO(run_cli("view", path, "--csv").stdout)))
    assert {row["launches"] for row in rows} == {""}


def test_milliseconds_in_the_metrics_summary_are_the_exact_decimal():
    document = json.loads(run_cli("view", str(capture_path("vecadd_hook")), "--json").stdout)
    assert document["total"] == 39661509
    assert repr(document["metrics_summary"]["proton_gpu_time_ms"]) == "39.661509"
    top_ns = document["kernels"][0]["value"]
    assert document["metrics_summary"]["proton_top_kernel_ms"] == top_ns / 10**6


def test_json_milliseconds_are_the_exact_decimal_of_the_integer_nanoseconds():
    """A real capture (vecadd on an H200): 39,661,509 ns in all is written 39.661509 ms, as the text says it."""
    done = run_cli("view", "--json", str(capture_path("vecadd_hook")))
    summary = json.loads(done.stdout)["metrics_summary"]
    assert '"proton_gpu_time_ms": 39.661509,' in done.stdout and summary["proton_gpu_time_ms"] == 39.661509
    assert json.loads(done.stdout)["total"] == 39661509


def test_a_tree_capture_is_written_as_text_json_and_csv_without_numpy(tmp_path):
    """numpy is for traces: the text, JSON and CSV of a tree capture never load it (a tenth of a second of every
    start on the 2-core machine)."""
    no_numpy = ("import sys; sys.modules['numpy'] = None; sys.argv = ['proton-tui', *sys.argv[1:]]; "
                "from proton_tui.entry import main; main()")
    capture = capture_path("gpt2_shadow")
    for flags in (["--plain"], ["--json"], ["--kernels"], ["--csv"], ["--export", str(tmp_path / "tree.md")]):
        alone = subprocess.run([sys.executable, "-c", no_numpy, "view", str(capture), *flags], capture_output=True,
                               text=True, timeout=60)
        assert alone.returncode == 0 and "numpy" not in alone.stderr, (flags, alone.stderr[-2000:])
