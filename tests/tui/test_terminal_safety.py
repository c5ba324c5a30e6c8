"""The viewer draws names with control characters escaped: in the table, its header, the detail pane and the
compare screen; columns stay aligned."""

from __future__ import annotations

from proton_tui.console import printable
from proton_tui.hatchet import load_profile
from proton_tui.tui.app import ProtonApp
from tests.helpers import CONTROL_BYTES, HOSTILE_NAMES, hostile_tree


async def test_the_viewer_draws_escaped_names(write_capture):
    app = ProtonApp(load_profile(write_capture(hostile_tree())))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("e")
        table = app.screen.query_one("#table")
        drawn = []
        for row in range(len(table.model.rows)):
            await pilot.press("down")
            drawn.append(str(app.screen.query_one("#detail").render()))
        drawn += [table.render_line(y).text for y in range(table.scrollable_content_region.height)]
        drawn.append(str(app.screen.query_one("#summary").render()))
        text = "\n".join(drawn)
        assert not [byte for byte in CONTROL_BYTES if byte in text]
        for name in HOSTILE_NAMES:
            assert printable(name) in text
        widths = {len(line) for line in drawn[-(len(HOSTILE_NAMES) + 4):-1]}
        assert widths == {table.scrollable_content_region.width}  # every row exactly as wide as the table


async def test_the_flame_view_draws_names_as_data(write_capture):
    """Frames and the zoomed title carry names escaped, never read as markup."""
    from tests.helpers import kernel, scope

    markup = "[bold]not bold[/bold] [link=x]y"
    tree = hostile_tree()
    tree[0]["children"][0]["frame"]["name"] = markup
    tree[0]["children"].append(scope("plain", kernel("other", 10)))
    app = ProtonApp(load_profile(write_capture(tree)))
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.press("g", "down", "enter")  # zoom into the scope named like markup
        flame = app.screen.query_one("#flame")
        assert flame.top == 1 and flame.border_title.startswith("Flame: ROOT ▸ " + markup.replace("[", "\\["))
        drawn = "\n".join(flame.render_line(y).text for y in range(4))
        assert markup in drawn and not [byte for byte in CONTROL_BYTES if byte in drawn]
        assert any(printable(name)[:20] in drawn for name in HOSTILE_NAMES)


async def test_a_rank_set_draws_names_and_hosts_escaped(write_capture):
    """Kernel names of the captures and the hosts of the sidecars, in the tables, the details and the header."""
    import msgspec

    from proton_tui.output.ranks import rank_files
    from proton_tui.records import RankRecord
    from proton_tui.tui.opening import Opening
    from tests.helpers import wait_for

    hosts = HOSTILE_NAMES[:2]
    for rank, host in enumerate(hosts):
        path = write_capture(hostile_tree(), f"job.rank{rank}.hatchet")
        record = RankRecord(stem=f"job.rank{rank}", rank=rank, host=host, gpu_index=0, gpu_uuid=HOSTILE_NAMES[2])
        path.with_name(f"job.rank{rank}.sidecar.json").write_bytes(msgspec.json.encode(record))
    app = ProtonApp(opening=Opening.of_rank_set(rank_files([path.parent])))
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(lambda: getattr(app.screen, "rank_set", None) is not None, what="the rank set read")
        await app.workers.wait_for_complete()
        await pilot.pause()
        drawn = []
        for _ in HOSTILE_NAMES:
            drawn.append(str(app.screen.query_one("#detail").render()))
            await pilot.press("down")
        await pilot.press("tab")
        for _ in hosts:
            drawn.append(str(app.screen.query_one("#detail").render()))
            await pilot.press("down")
        for table in app.screen.query("DataTable"):
            drawn += [table.render_line(y).text for y in range(table.scrollable_content_region.height)]
        text = "\n".join(drawn)
        assert not [byte for byte in CONTROL_BYTES if byte in text]
        for name in (*hosts, HOSTILE_NAMES[2]):
            assert printable(name) in text


async def test_a_capture_being_read_is_named_escaped_while_it_is_read(tmp_path):
    """The line that says which file is being read (the viewer's header, compare's notice) writes a path's control
    bytes as escapes."""
    import shutil

    from proton_tui.hatchet import pending_capture
    from proton_tui.tui.opening import Opening
    from tests.helpers import capture_path

    path = tmp_path / "run\x1b]2;T\x07.hatchet"
    shutil.copy(capture_path("vecadd_hook"), path)
    pending = pending_capture(path)
    try:
        label = Opening.of(pending).label
    finally:
        pending.close()
    assert not [byte for byte in CONTROL_BYTES if byte in label] and "run\\x1b]2;T\\x07.hatchet" in label
