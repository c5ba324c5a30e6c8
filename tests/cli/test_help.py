"""Every command's --help at 80 columns, as the console script prints it: whole names, the file types each takes,
a type for each number, paragraphs wrapped to the terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

COMMANDS = ["", "view", "run", "check", "diff", "doctor"]
# Options that take a number (or a list of them): their help names a type, never Typer's `<str>`.
NUMERIC = ["--size", "--iters", "--block-size", "--timeout", "--warps", "--buffer-size", "--device", "--depth",
           "--threshold", "--sm-clock-khz", "--gpus", "--gpu", "--jobs", "--min-fraction"]


def help_of(command: str) -> str:
    """`proton-tui COMMAND --help` through the console script's entry point, on an 80-column terminal."""
    script = "import sys; from proton_tui.entry import main; sys.argv[0] = 'proton-tui'; main()"
    args = [sys.executable, "-c", script, *([command] if command else []), "--help"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "80", "TERM": "dumb"})
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def helps() -> dict[str, str]:
    return {command: help_of(command) for command in COMMANDS}


def test_the_top_level_help_says_no_command_opens_the_tui(helps):
    assert "With no command, proton-tui opens the TUI" in " ".join(helps[""].split())


def test_check_names_its_extra_whole(helps):
    assert "pip install 'proton-tui[gpu]'" in " ".join(helps["check"].split())


def test_view_takes_a_trace_or_a_folder_of_rank_captures_and_its_usage_says_file(helps):
    text = " ".join(helps["view"].split())
    assert "Usage: proton-tui view [OPTIONS] FILE... " in text  # one capture, or a rank set of several
    assert ".chrome_trace" in text and "a folder of rank captures" in text and "a fleet" in text


def test_usage_lines_name_arguments_as_written(helps):
    for command, text in helps.items():
        usage = next(line for line in text.splitlines() if "Usage:" in line)
        assert "{" not in usage, usage
    assert "Usage: proton-tui diff [OPTIONS] A.hatchet[:SCOPE] B.hatchet[:SCOPE]" in helps["diff"]


@pytest.mark.parametrize("command", COMMANDS[1:])
def test_numeric_options_name_their_type(helps, command):
    for flag in NUMERIC:
        found = re.search(rf"│ {re.escape(flag)}\s+(\S+)", helps[command])
        if found:
            assert found[1] != "<str>", (command, flag)


def test_help_paragraphs_are_wrapped_to_the_terminal_not_where_the_source_broke_them(helps):
    """Each command's description in the command list fills its lines: only a paragraph's last line is short."""
    box = helps[""].split("Commands")[1]
    descriptions: list[list[str]] = []
    for line in (line for line in box.splitlines() if line.startswith("│")):
        name, text = line[2:10].strip(), line[10:-1].rstrip()
        if name:
            descriptions.append([])
        descriptions[-1].append(text)
    assert len(descriptions) == 5
    for lines in descriptions:
        for line, after in zip(lines, lines[1:]):
            assert len(line) + 1 + len(after.split()[0]) > 68, lines  # the next word did not fit
    for command in COMMANDS[1:]:
        lines = [line.rstrip() for line in helps[command].split("╭")[0].splitlines()[3:]]
        for line, after in zip(lines, lines[1:]):
            if line and after and not line.startswith("   ") and not after.startswith("   "):  # in a paragraph, not a list
                assert len(line) + 1 + len(after.split()[0]) > 78, (command, line)


@pytest.mark.parametrize("args, line", [
    (["--python", "/no/such/python", "run", "--no-profile"],
     "proton-tui: error: --python before a command is the TUI's option: put it after the command (proton-tui run "
     "--python …)"),
    (["--output", "elsewhere", "check", "--cpu"],
     "proton-tui: error: --output before a command is the TUI's option: put it after the command (proton-tui check "
     "--output …)"),
    (["--output", "elsewhere", "view", "capture.hatchet"],
     "proton-tui: error: --output before a command is the TUI's option: view takes none"),
])
def test_the_tuis_options_before_a_command_are_refused_not_ignored(tmp_path, args, line):
    done = subprocess.run([sys.executable, "-c", "import sys; from proton_tui.entry import main; "
                           "sys.argv[0] = 'proton-tui'; main()", *args], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60)
    assert (done.returncode, done.stdout, done.stderr.strip()) == (2, "", line)
    assert list(tmp_path.iterdir()) == []  # nothing run, nothing written
