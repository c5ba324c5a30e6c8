"""The table of text rows the rank set draws: a cell's control characters never reach the terminal, whoever made
the cell."""

from __future__ import annotations

from textual.app import App

from proton_tui.tui.widgets.row_table import Column, RowTable


class OneTable(App):
    def compose(self):
        yield RowTable()


async def test_a_cells_control_characters_are_drawn_as_their_escapes():
    app = OneTable()
    async with app.run_test(size=(60, 6)) as pilot:
        table = app.query_one(RowTable)
        table.show([Column("name", 40)], [["\x1b[2Jcleared\u202eright-to-left\x07"], ["plain"]])
        await pilot.pause()
        drawn = "".join(segment.text for y in range(3) for segment in table.render_line(y))
        assert not any(ord(char) < 32 or char == "\u202e" for char in drawn)
        assert "\\x1b[2Jcleared\\u202eright-to-left\\x07" in drawn and "plain" in drawn
