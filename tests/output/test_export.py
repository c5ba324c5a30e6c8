"""Exports of the tree and the kernel summary from real captures: CSV, JSON, Markdown, and never overwriting."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from proton_tui.hatchet import load_profile
from proton_tui.output.export import export_text, format_for_path, write_export
from proton_tui.view.display import Display
from tests.helpers import capture_path, kernel, scope

CELL_BORDER = re.compile(r"(?<!\\)\|")  # a pipe that is not escaped


def csv_rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def markdown_table(text: str) -> list[list[str]]:
    """The cells of every table line, split on unescaped pipes."""
    return [[cell.strip() for cell in CELL_BORDER.split(line)[1:-1]] for line in text.splitlines() if
            line.startswith("|")]


def test_tree_csv_rows_in_display_order():
    profile = load_profile(capture_path("vecadd_auto"))
    rows = csv_rows(export_text(Display(profile), view="tree", fmt="csv"))
    assert list(rows[0]) == ["depth", "path", "name", "value", "unit", "percent", "launches", "avg", "gbps",
                             "peak_percent", "device"]
    assert [row["name"] for row in rows[:2]] == ["ROOT", "add_kernel"] and len(rows) == 6
    add = rows[1]
    assert (add["depth"], add["path"], add["value"], add["unit"], add["launches"]) == \
        ("1", "add_kernel", "46112", "ns", "20")  # a whole number written as one, as every count is
    assert add["avg"] == "2305.6" and float(add["percent"]) == pytest.approx(68.488, 1e-4)
    assert add["device"] == "CUDA:0" and add["gbps"] == ""
    times = [float(row["value"]) for row in rows[1:]]
    assert times == sorted(times, reverse=True)


@pytest.mark.parametrize("sort_key", ["launches", "avg", "name"])
def test_tree_sort_keys(sort_key):
    profile = load_profile(capture_path("gpt2_shadow"))
    rows = csv_rows(export_text(Display(profile, sort=sort_key), fmt="csv"))
    optimizer = [row for row in rows if row["path"].startswith("step / optimizer / ")]
    assert len(optimizer) > 3
    keys = {"launches": lambda r: -int(r["launches"]), "avg": lambda r: -float(r["avg"] or 0),
            "name": lambda r: r["name"]}
    assert optimizer == sorted(optimizer, key=keys[sort_key])


def test_tree_keeps_only_shown_rows_and_filtered_percentages():
    profile = load_profile(capture_path("gpt2_shadow")).filtered(include=re.compile("^forward$").search)
    rows = json.loads(export_text(Display(profile, visible=profile.visible(max_depth=2)), fmt="json"))["rows"]
    assert [(row["depth"], row["path"]) for row in rows] == [(0, "ROOT"), (1, "step"), (2, "step / forward")]
    assert rows[0]["percent"] < 100  # a share of the whole capture, also in the filtered view
    assert rows[0]["value"] == rows[2]["value"]


def test_tree_json_has_bandwidth_and_peak():
    document = json.loads(export_text(Display(load_profile(capture_path("vecadd_hook"))), fmt="json"))
    assert (document["view"], document["unit"], document["sort"]) == ("tree", "ns", "time")
    add = document["rows"][1]
    assert add["name"] == "add_kernel<n=268435456>" and add["launches"] == 50 and add["depth"] == 1
    assert add["gbps"] == pytest.approx(4400.4, abs=0.1) and add["peak_percent"] == pytest.approx(91.4, abs=0.05)
    assert document["rows"][0]["gbps"] is None and document["rows"][0]["device"] is None


def test_tree_markdown_is_a_github_table():
    profile = load_profile(capture_path("multigpu"))
    text = export_text(Display(profile), fmt="md")
    lines = text.splitlines()
    assert lines[0].startswith("multigpu.hatchet  GPU time 1.38 ms") and lines[1] == ""
    table = markdown_table(text)
    assert table[0] == ["depth", "time", "%", "launches", "avg", "device", "name"]
    assert lines[3] == "|---:|---:|---:|---:|---:|---:|:---|"
    assert len(table) == 2 + profile.node_count and all(len(row) == 7 for row in table)
    gpu1_kernel = next(row for row in table[2:] if row[0] == "2" and row[5] == "CUDA:1")
    assert gpu1_kernel[6] == "add_kernel"  # underscores inside a word cannot start emphasis: kept bare


def test_kernel_summary_in_three_formats():
    profile = load_profile(capture_path("gpt2_shadow"))
    rows = csv_rows(export_text(Display(profile), view="kernels", fmt="csv"))
    assert len(rows) == 50 and sum(int(row["launches"]) for row in rows) == 1439
    assert rows[0]["name"].startswith("sm80_xmma_gemm") and rows[0]["devices"] == "CUDA:0"
    document = json.loads(export_text(Display(profile, sort="name"), view="kernels", fmt="json"))
    names = [row["name"] for row in document["rows"]]
    assert document["view"] == "kernels" and names == sorted(names) and len(names) == 50
    table = markdown_table(export_text(Display(profile, sort="launches"), view="kernels", fmt="md"))
    assert table[0] == ["time", "%", "launches", "avg", "kernel"] and len(table) == 52
    launches = [int(row[2].replace(",", "")) for row in table[2:]]
    assert launches == sorted(launches, reverse=True) and launches[0] == 164


NASTY = "a|b`c[bold red]x[/]*y*_z_<br>"


@pytest.mark.parametrize("view", ["tree", "kernels"])
def test_markdown_escapes_names(view, write_capture):
    profile = load_profile(write_capture([scope("ROOT", kernel(NASTY, 100), kernel("ok", 50)), {}]))
    text = export_text(Display(profile), view=view, fmt="md")
    assert "a\\|b\\`c\\[bold red\\]x\\[/\\]\\*y\\*\\_z\\_\\<br>" in text
    table = markdown_table(text)
    assert {len(row) for row in table} == {len(table[0])}
    markdown_it = pytest.importorskip("markdown_it")  # Rich's Markdown parser, installed with Textual
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(text)
    assert "<td style=\"text-align:left\">a|b`c[bold red]x[/]*y*_z_&lt;br&gt;</td>" in html


@pytest.mark.parametrize("view", ["tree", "kernels"])
@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_machine_formats_keep_names_as_written(view, fmt, write_capture):
    profile = load_profile(write_capture([scope("ROOT", kernel(NASTY, 100)), {}]))
    text = export_text(Display(profile), view=view, fmt=fmt)
    rows = csv_rows(text) if fmt == "csv" else json.loads(text)["rows"]
    assert rows[-1]["name"] == NASTY


def test_cycles_capture_keeps_the_columns_and_names_its_unit(write_capture):
    """The same keys whatever the unit (scripts read them): the unit is a value, not a column name."""
    region = {"frame": {"name": "loop", "type": "function"}, "metrics": {"cycles": 5000, "count": 2}, "children": []}
    profile = load_profile(write_capture([scope("ROOT", region), {}]))
    rows = csv_rows(export_text(Display(profile), fmt="csv"))
    assert list(rows[0])[3:8] == ["value", "unit", "percent", "launches", "avg"] and rows[1]["unit"] == "cycles"
    assert rows[1]["value"] == "5000" and rows[1]["avg"] == "2500"
    kernels = csv_rows(export_text(Display(profile), view="kernels", fmt="csv"))
    assert list(kernels[0])[:3] == ["name", "value", "unit"] and kernels[0]["unit"] == "cycles"
    document = json.loads(export_text(Display(profile), fmt="json"))
    assert document["schema"] == "proton-tui/1" and document["unit"] == "cycles" and "value" in document["rows"][0]
    assert markdown_table(export_text(Display(profile), view="kernels", fmt="md"))[2][0] == "5,000 cyc"


@pytest.mark.parametrize("kwargs, fragment", [
    ({"view": "flat", "fmt": "csv"}, "view 'flat'"),
    ({"fmt": "xlsx"}, "format 'xlsx'"),
])
def test_unknown_view_or_format_is_an_error(kwargs, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        export_text(Display(load_profile(capture_path("vecadd_auto"))), **kwargs)


def test_unknown_sort_key_is_an_error():
    with pytest.raises(ValueError, match=re.escape("unknown sort key 'size'")):
        Display(load_profile(capture_path("vecadd_auto")), sort="size")


@pytest.mark.parametrize("name, fmt", [("a.csv", "csv"), ("b.JSON", "json"), ("dir.v2/c.md", "md")])
def test_format_from_the_suffix(name, fmt):
    assert format_for_path(name) == fmt


@pytest.mark.parametrize("name", ["report.txt", "report", "report.md.bak"])
def test_unknown_suffix_is_a_clear_error(name):
    with pytest.raises(ValueError) as caught:
        format_for_path(name)
    assert name in str(caught.value) and ".csv, .json or .md" in str(caught.value) and "\n" not in str(caught.value)


def test_write_export_creates_a_new_file(tmp_path):
    text = export_text(Display(load_profile(capture_path("vecadd_auto"))), view="kernels", fmt="csv")
    path = write_export(tmp_path / "kernels.csv", text)
    assert path.read_bytes() == text.encode()


def test_write_export_never_overwrites(tmp_path):
    path = tmp_path / "mine.md"
    path.write_text("the user's notes\n")
    with pytest.raises(FileExistsError) as caught:
        write_export(path, "| export |\n")
    assert str(caught.value) == f"{path}: already exists; not overwritten"
    assert path.read_text() == "the user's notes\n"


def test_write_export_into_a_missing_folder_is_one_line(tmp_path):
    path = tmp_path / "no-such-folder" / "x.json"
    with pytest.raises(OSError) as caught:
        write_export(path, "{}\n")
    assert str(caught.value) == f"{path}: cannot write: No such file or directory"


def test_json_rows_tell_apart_paths_that_read_alike(write_capture):
    path = write_capture([scope("ROOT", scope("a / b", kernel("k", 10)), scope("a", scope("b", kernel("k", 20)))), {}])
    rows = json.loads(export_text(Display(load_profile(path)), fmt="json"))["rows"]
    kernels = [row for row in rows if row["name"] == "k"]
    assert len({row["path"] for row in kernels}) == 1  # the text reads the same
    assert sorted(row["path_names"] for row in kernels) == [["a", "b", "k"], ["a / b", "k"]]
