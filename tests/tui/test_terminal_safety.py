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
