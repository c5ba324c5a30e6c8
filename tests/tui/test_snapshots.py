"""Snapshots of the main screens (pytest-textual-snapshot). Review changes with `pytest --snapshot-update`."""



from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import Input

from proton_tui.hatchet import load_profile
from proton_tui.tui.app import ProtonApp, sample_capture
from proton_tui.tui.widgets.profile_table import ProfileTable
from tests.helpers import FIXTURES, H200_PYTHON, capture_path, h200_probe, plant_probe, run_folder

SIZE = (130, 36)


def viewer(name: str) -> ProtonApp:
    path = sample_capture() if name == "sample" else capture_path(name)
    return ProtonApp(load_profile(path))


def settle(*keys: str):
    """Wait for the screen's workers (the readable names, the interpreter's probe) and the messages they posted, so
    every snapshot shows the same names and readings, then press."""

    async def run_before(pilot) -> None:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        tables = pilot.app.screen.query(ProfileTable)
        assert not tables or tables.first().display_spec.names.readable is not None
        for key in keys:
            await pilot.press(key)
        await pilot.pause()

    return run_before


def form_on_the_h200(monkeypatch, tmp_path) -> ProtonApp:
    """The form as it opens on the 2×H200 box: its interpreter's probe answer, recorded there
    (tests/fixtures/h200_probe.json), stands for the probe, which would ask this machine's Python instead."""

    plant_probe(monkeypatch, H200_PYTHON, h200_probe())
    monkeypatch.chdir(tmp_path)
    return ProtonApp(python=H200_PYTHON, output=Path("proton-runs"))


def detected():
    async def run_before(pilot) -> None:
        await settle()(pilot)
        assert "GPU" in str(pilot.app.screen.query_one("#detection").render())

    return run_before


SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])


THEMES = pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])  # the table and the form, both themes


DARK = pytest.mark.parametrize("theme", ["textual-dark"])  # every other screen: the dark theme only


def themed(theme: str, *keys: str):
    async def run_before(pilot) -> None:
        pilot.app.theme = theme
        await settle(*keys)(pilot)

    return run_before


def stored_run(monkeypatch):
    """A real run read back from its folder (an unprofiled CPU run kept in tests/fixtures/runs), from the fixtures
    folder so the paths it shows are the same everywhere."""
    from proton_tui.engine.history import stored_runs

    monkeypatch.chdir(FIXTURES)
    return next(entry for entry in stored_runs(Path("runs")) if entry.kind == "run").run_result()


def on_the_run_screen(run, theme: str):
    async def run_before(pilot) -> None:
        from proton_tui.tui.screens.run import RunScreen

        pilot.app.theme = theme
        await pilot.app.push_screen(RunScreen(finished=run))
        await settle()(pilot)

    return run_before


def themed_after_detection(theme: str):
    async def run_before(pilot) -> None:
        pilot.app.theme = theme
        await detected()(pilot)

    return run_before


def on_a_screen(make, theme: str):
    async def run_before(pilot) -> None:
        pilot.app.theme = theme
        await pilot.app.push_screen(make())
        await settle()(pilot)

    return run_before


class TestProfileScreen:
    """The profile screen: the table, the kernel summary, the flame view, the timelines."""

    def test_viewer_opens_on_the_top_levels(self, snap_compare):
        assert snap_compare(viewer("gpt2_shadow"), run_before=settle(), terminal_size=SIZE)

    def test_viewer_expanded_with_details(self, snap_compare):
        assert snap_compare(viewer("gpt2_shadow"), run_before=settle("e", "down", "down", "down"), terminal_size=SIZE)

    def test_kernel_summary(self, snap_compare):
        assert snap_compare(viewer("gpt2_shadow"), run_before=settle("K"), terminal_size=SIZE)

    def test_bandwidth_columns_on_the_sample_capture(self, snap_compare):
        assert snap_compare(viewer("sample"), run_before=settle("down"), terminal_size=SIZE)

    def test_multi_device_capture(self, snap_compare):
        assert snap_compare(viewer("multigpu"), run_before=settle(), terminal_size=SIZE)

    def test_empty_capture(self, snap_compare):
        assert snap_compare(viewer("vecadd_instr"), run_before=settle(), terminal_size=SIZE)

    def test_filter_bar(self, snap_compare):
        async def run_before(pilot) -> None:
            await settle("f")(pilot)
            field = pilot.app.screen.query_one("#include", Input)
            field.value = "forward"
            for _ in range(100):
                if "backward" not in pilot.app.screen.query_one(ProfileTable).profile.names:
                    break
                await asyncio.sleep(0.025)
            await pilot.pause()

        assert snap_compare(viewer("gpt2_shadow"), run_before=run_before, terminal_size=SIZE)

    @pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
    def test_viewer_at_the_smallest_and_a_large_terminal(self, snap_compare, size):
        """The sample capture expanded, a kernel selected: whole columns left out at 80 columns, the name keeping 30
        cells or more, the key bar's most used keys and help always there."""
        assert snap_compare(viewer("sample"), run_before=settle("e", "down"), terminal_size=size)

    @pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
    def test_kernel_summary_with_bandwidth_at_the_smallest_and_a_large_terminal(self, snap_compare, size):
        assert snap_compare(viewer("vecadd_hook"), run_before=settle("K"), terminal_size=size)

    @SIZES
    @THEMES
    def test_table_with_share_bars(self, snap_compare, size, theme):
        assert snap_compare(viewer("gpt2_shadow"), run_before=themed(theme, "down"), terminal_size=size)

    @SIZES
    @DARK
    def test_flame_view(self, snap_compare, size, theme):
        assert snap_compare(viewer("gpt2_shadow"), run_before=themed(theme, "down", "down", "g"), terminal_size=size)

    @SIZES
    @DARK
    def test_flame_view_zoomed(self, snap_compare, size, theme):
        keys = ("down", "down", "g", "right", "enter", "down")  # zoomed into forward, its largest kernel selected
        assert snap_compare(viewer("gpt2_shadow"), run_before=themed(theme, *keys), terminal_size=size)

    @SIZES
    @DARK
    def test_timeline(self, snap_compare, size, theme):
        app = ProtonApp(load_profile(FIXTURES / "triton390_two_streams.chrome_trace"))
        assert snap_compare(app, run_before=themed(theme, "down", "n"), terminal_size=size)  # opened on the timeline

    @SIZES
    @DARK
    def test_instrumentation_tree_of_a_sampled_run(self, snap_compare, size, theme, tmp_path):
        """Per warp·launch and the time at the SM clock, the unattributed part, and the kernel scope's details."""
        from proton_tui.hatchet import open_capture

        capture = run_folder(tmp_path, "instr_vecadd_warps02_3.6.0", warps=[0, 2])
        app = ProtonApp(open_capture(capture))
        assert snap_compare(app, run_before=themed(theme, "e", "down", "down"), terminal_size=size)

    @SIZES
    @DARK
    def test_warp_timeline(self, snap_compare, size, theme):
        """An instrumentation trace: its first launch, the slowest warp of the kernel scope selected and its CTA open."""
        app = ProtonApp(load_profile(FIXTURES / "instr_scopes_trace.chrome_trace"))
        assert snap_compare(app, run_before=themed(theme), terminal_size=size)


class TestHelp:
    """The help dialog."""

    def test_help(self, snap_compare):
        assert snap_compare(viewer("vecadd_auto"), run_before=settle("f1"), terminal_size=SIZE)

    def test_help_at_the_smallest_terminal(self, snap_compare):
        assert snap_compare(viewer("vecadd_auto"), run_before=settle("f1"), terminal_size=(80, 24))


def captures_beside(tmp_path, monkeypatch) -> ProtonApp:
    """A viewer on a capture with one other beside it, from a working folder of their own: the paths the dialogs
    suggest and offer are the same everywhere."""
    folder = tmp_path / "captures"
    folder.mkdir()
    for name, fixture in (("before.hatchet", "vecadd_auto"), ("after.hatchet", "vecadd_hook")):
        (folder / name).write_bytes(capture_path(fixture).read_bytes())
    monkeypatch.chdir(tmp_path)
    return ProtonApp(load_profile(Path("captures/before.hatchet")), output=Path("proton-runs"))


class TestPathDialogs:
    """The export and compare dialogs."""

    @SIZES
    def test_export_dialog(self, snap_compare, tmp_path, monkeypatch, size):
        assert snap_compare(captures_beside(tmp_path, monkeypatch), run_before=settle("x"), terminal_size=size)

    @SIZES
    def test_compare_dialog(self, snap_compare, tmp_path, monkeypatch, size):
        assert snap_compare(captures_beside(tmp_path, monkeypatch), run_before=settle("m"), terminal_size=size)


def compared(a: str, b: str):
    async def run_before(pilot) -> None:
        from proton_tui.output.diff import diff_profiles
        from proton_tui.tui.screens.diff import DiffScreen
        from proton_tui.view.names import Names

        diff = diff_profiles(load_profile(Path(f"{a}.hatchet")), load_profile(Path(f"{b}.hatchet")))
        names = Names.demangled({kernel.name for kernel in diff.kernels})  # readable, as the viewer's table has them
        await pilot.app.push_screen(DiffScreen(diff, names))
        await settle()(pilot)

    return run_before


class TestDiffScreen:
    """Two captures compared (read from the fixtures folder: the paths shown are the same everywhere)."""

    @SIZES
    def test_diff_screen(self, snap_compare, monkeypatch, size):
        monkeypatch.chdir(FIXTURES)
        assert snap_compare(ProtonApp(python=H200_PYTHON), run_before=compared("vecadd_auto", "vecadd_hook"),
                            terminal_size=size)

    def test_diff_with_no_kernel_in_b(self, snap_compare, monkeypatch):
        monkeypatch.chdir(FIXTURES)
        assert snap_compare(ProtonApp(python=H200_PYTHON), run_before=compared("vecadd_auto", "vecadd_instr"),
                            terminal_size=(80, 24))


class TestFormScreen:
    """The form, on the H200 recorded probe."""

    @pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
    def test_form_at_the_smallest_and_a_large_terminal(self, snap_compare, monkeypatch, tmp_path, size):
        assert snap_compare(form_on_the_h200(monkeypatch, tmp_path), run_before=detected(), terminal_size=size)

    @SIZES
    @THEMES
    def test_form_themed(self, snap_compare, monkeypatch, tmp_path, size, theme):
        assert snap_compare(form_on_the_h200(monkeypatch, tmp_path), run_before=themed_after_detection(theme),
                            terminal_size=size)


class TestRunScreen:
    """A finished run."""

    @SIZES
    @DARK
    def test_run_screen(self, snap_compare, monkeypatch, size, theme):
        run = stored_run(monkeypatch)
        assert snap_compare(ProtonApp(python=H200_PYTHON), run_before=on_the_run_screen(run, theme), terminal_size=size)


class TestRunsScreen:
    """The runs list."""

    @SIZES
    @DARK
    def test_runs_list(self, snap_compare, monkeypatch, size, theme):
        from proton_tui.tui.screens.runs import RunsScreen

        monkeypatch.chdir(FIXTURES)
        assert snap_compare(ProtonApp(python=H200_PYTHON), run_before=on_a_screen(lambda: RunsScreen([], Path("runs")),
                                                                                  theme), terminal_size=size)


class TestCheckScreen:
    """The box check."""

    @SIZES
    @DARK
    def test_check_screen(self, snap_compare, monkeypatch, size, theme):
        from proton_tui.engine.history import stored_runs
        from proton_tui.tui.screens.check import CheckScreen

        monkeypatch.chdir(FIXTURES)
        report = next(entry for entry in stored_runs(Path("runs")) if entry.kind == "check").check_report()
        assert snap_compare(ProtonApp(python=H200_PYTHON), run_before=on_a_screen(lambda: CheckScreen(finished=report),
                                                                                  theme), terminal_size=size)

    @SIZES
    @DARK
    def test_gpu_check_with_a_likely_cause(self, snap_compare, size, theme):
        """A 2xH200 check read back: the slow GPU selected, its likely cause and its NVML readings in the detail pane."""
        from proton_tui.engine.history import stored_runs
        from proton_tui.tui.screens.check import CheckScreen

        (report,) = [entry.check_report() for entry in stored_runs(FIXTURES / "gpu_checks") if entry.kind == "check"]
        assert snap_compare(ProtonApp(python=H200_PYTHON), run_before=on_a_screen(lambda: CheckScreen(finished=report),
                                                                                  theme), terminal_size=size)


def rank_set_read(*keys: str):
    """The rank set read (on its reading thread) and its readable names landed, then `keys` pressed."""
    async def run_before(pilot) -> None:
        from tests.helpers import wait_for

        await wait_for(lambda: getattr(pilot.app.screen, "rank_set", None) is not None, what="the rank set read")
        await settle(*keys)(pilot)

    return run_before


class TestRankSetScreen:
    """The two H200 ranks as a rank set, from the fixtures folder so the paths it shows are the same everywhere."""

    @pytest.mark.parametrize("keys", [(), ("enter",)], ids=["kernels", "kernel-on-every-rank"])
    def test_rank_set(self, snap_compare, monkeypatch, keys):
        from proton_tui.output.ranks import rank_files
        from proton_tui.tui.opening import Opening

        monkeypatch.chdir(FIXTURES)
        app = ProtonApp(opening=Opening.of_rank_set(rank_files([Path("ranks_h200")])))
        assert snap_compare(app, run_before=rank_set_read(*keys), terminal_size=(80, 24))

    def test_traces_on_one_timeline(self, snap_compare, monkeypatch, tmp_path):
        """Two ranks of a real 3.9 trace, the second's clock base 2.5 ms later; its first kernel's launch on rank 1."""
        import orjson

        from proton_tui.output.ranks import rank_files
        from proton_tui.tui.opening import Opening

        original = orjson.loads((FIXTURES / "triton390_two_streams.chrome_trace").read_bytes())
        (tmp_path / "traces").mkdir()
        for rank in (0, 1):
            document = dict(original, baseTimeNanoseconds=original["baseTimeNanoseconds"] + rank * 2_500_000)
            (tmp_path / "traces" / f"job.rank{rank}.chrome_trace").write_bytes(orjson.dumps(document))
        monkeypatch.chdir(tmp_path)
        app = ProtonApp(opening=Opening.of_rank_set(rank_files([Path("traces")])))
        assert snap_compare(app, run_before=rank_set_read("n"), terminal_size=(80, 24))
