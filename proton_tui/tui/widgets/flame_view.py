"""The flame view: the capture as an icicle (`proton_tui.view.flame` computes it), one row per depth, frames as wide as
their share of the time. Arrows move between frames, Enter zooms into one, Escape zooms out; the frame under the
cursor is announced (`Selected`) so the screen shows its details and the table follows it."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.color import Color
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from proton_tui.console import cut_field, printable
from proton_tui.tui.widgets.table_rows import fit
from proton_tui.view.display import Display
from proton_tui.view.flame import KERNEL, MERGED, PYTHON, REGION, SCOPE, FlameLayout, Frame, kind

PEAK_GOOD, PEAK_FAIR = 80.0, 50.0  # % of the DRAM peak from which a kernel is coloured good, fair (else poor)
KIND_CLASSES = {KERNEL: "flame-view--kernel", REGION: "flame-view--region", SCOPE: "flame-view--scope",
                PYTHON: "flame-view--python", MERGED: "flame-view--merged"}
PEAK_CLASSES = ("flame-view--peak-good", "flame-view--peak-fair", "flame-view--peak-poor", "flame-view--peak-none")


class FlameView(ScrollView, can_focus=True):
    """An icicle of a Display's tree, zoomable, with one selected frame."""

    BINDINGS = [
        Binding("up,k", "move('up')", "Parent", show=False),
        Binding("down,j", "move('down')", "Child", show=False),
        Binding("left", "move('left')", "Left", show=False),
        Binding("right", "move('right')", "Right", show=False),
        Binding("enter", "zoom_in", "Zoom in"),
        Binding("escape", "zoom_out", "Zoom out"),
        Binding("p", "toggle_colour", "Colour: kind/% peak"),
    ]

    COMPONENT_CLASSES = {*KIND_CLASSES.values(), *PEAK_CLASSES, "flame-view--selected"}

    DEFAULT_CSS = """
    FlameView { background: $surface; }
    FlameView > .flame-view--kernel { background: $accent 70%; color: $text; }
    FlameView > .flame-view--region { background: $success 60%; color: $text; }
    FlameView > .flame-view--scope { background: $primary 60%; color: $text; }
    FlameView > .flame-view--python { background: $secondary 50%; color: $text; }
    FlameView > .flame-view--merged { background: $panel; color: $text-muted; }
    FlameView > .flame-view--peak-good { background: $success 70%; color: $text; }
    FlameView > .flame-view--peak-fair { background: $warning 70%; color: $text; }
    FlameView > .flame-view--peak-poor { background: $error 70%; color: $text; }
    FlameView > .flame-view--peak-none { background: $panel; color: $text-muted; }
    FlameView > .flame-view--selected { text-style: bold reverse; }
    """

    class Selected(Message):
        """The selected frame changed: its node (None for a "…" frame) and the frame."""

        def __init__(self, view: FlameView, frame: Frame) -> None:
            super().__init__()
            self.set_sender(view)  # made inside its parent's handler, Textual would stop it at that parent
            self.view, self.frame, self.node = view, frame, frame.node

    class Left(Message):
        """Escape with nothing to zoom out of: the screen goes back to the table."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.display_spec: Display | None = None
        self.top = 0
        self.layout_: FlameLayout | None = None
        self.selected: Frame | None = None
        self.by_peak = False

    # ---- what it shows ----------------------------------------------------------------------------------------
    def show(self, display: Display, node: int = 0) -> None:
        """Show `display` (zoomed out), the frame of `node` (or the nearest shown) selected."""
        self.display_spec, self.top = display, 0
        self._lay_out(node)

    def _lay_out(self, node: int | None = None) -> None:
        if self.display_spec is None:
            return
        width = self.scrollable_content_region.width or self.size.width or 80
        keep = node if node is not None else (self.selected.node if self.selected is not None else self.top)
        merged = self.selected.merged if node is None and self.selected is not None else ()
        self.layout_ = FlameLayout(self.display_spec, self.top, width)
        self.virtual_size = Size(width, len(self.layout_.rows))
        if keep is None and merged:
            keep = merged[0]
        if keep is not None and keep != self.top and self.top not in self.display_spec.profile.ancestors(keep):
            keep = self.top
        self.select(self.layout_.nearest(keep if keep is not None else self.top))
        self.border_title = Text(printable(self.zoom_path()))  # Text: a name is never read as markup

    def zoom_path(self) -> str:
        display = self.display_spec
        chain = [0, *display.profile.lineage(self.top)]  # ROOT, then the top level down to the zoomed frame
        path = " ▸ ".join(cut_field(display.name(node)) for node in chain)
        return f"Flame: {path}" + ("  (zoomed: Esc zooms out)" if self.top else "")

    def select(self, frame: Frame) -> None:
        self.selected = frame
        top, height = round(self.scroll_y), self.scrollable_content_region.height
        if frame.row < top:
            self.scroll_to(y=frame.row, animate=False)
        elif height and frame.row >= top + height:
            self.scroll_to(y=frame.row - height + 1, animate=False)
        self.refresh()
        self.post_message(self.Selected(self, frame))

    def on_resize(self) -> None:
        if self.layout_ is not None and self.layout_.width != self.scrollable_content_region.width:
            self._lay_out()

    # ---- keys and mouse ---------------------------------------------------------------------------------------
    def action_move(self, where: str) -> None:
        if self.layout_ is None or self.selected is None:
            return
        layout, frame = self.layout_, self.selected
        target = {"up": lambda: layout.parent_of(frame), "down": lambda: layout.first_child(frame),
                  "left": lambda: layout.beside(frame, -1), "right": lambda: layout.beside(frame, 1)}[where]()
        if target is not None:
            self.select(target)

    def action_zoom_in(self) -> None:
        frame = self.selected
        if frame is not None and frame.node is not None and frame.node != self.top:
            self.top = frame.node
            self._lay_out(frame.node)

    def action_zoom_out(self) -> None:
        if self.top == 0:
            self.post_message(self.Left())
            return
        self.top = self.display_spec.profile.parents[self.top]
        self._lay_out()  # the selected frame stays selected

    def action_toggle_colour(self) -> None:
        self.by_peak = not self.by_peak
        self.refresh()
        self.notify("Kernels coloured by % of the DRAM peak (green ≥ 80 %, yellow ≥ 50 %)" if self.by_peak
                    else "Frames coloured by kind: kernel, scope, python frame", timeout=3)

    def on_click(self, event) -> None:
        inside = event.get_content_offset(self)  # the view has a border: positions inside it
        if inside is not None and self.layout_ is not None and \
                (frame := self.layout_.at(inside.x, round(self.scroll_y) + inside.y)):
            if frame is self.selected:
                self.action_zoom_in()
            else:
                self.select(frame)

    # ---- drawing ----------------------------------------------------------------------------------------------
    def style_of(self, frame: Frame) -> str:
        if frame.node is None:
            return KIND_CLASSES[MERGED]
        what = kind(self.display_spec, frame.node)
        if not self.by_peak:
            return KIND_CLASSES[what]
        peak = self.display_spec.profile.peak_percent(frame.node) if what == KERNEL else None
        if peak is None:
            return PEAK_CLASSES[3]
        return PEAK_CLASSES[0 if peak >= PEAK_GOOD else 1 if peak >= PEAK_FAIR else 2]

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        row = round(self.scroll_y) + y
        if self.layout_ is None or row >= len(self.layout_.rows):
            return Strip.blank(width, base)
        segments, at = [], 0
        for index, frame in enumerate(self.layout_.rows[row]):
            if frame.x > at:
                segments.append(Segment(" " * (frame.x - at), base))
            style = base + self.get_component_rich_style(self.style_of(frame))
            if index % 2 and style.bgcolor is not None:  # neighbours told apart by shade
                shade = Color.from_rich_color(style.bgcolor).darken(0.12)
                style += Style(bgcolor=shade.rich_color)
            if frame == self.selected:
                style += self.get_component_rich_style("flame-view--selected")
            name = "…" if frame.node is None else cut_field(self.display_spec.name(frame.node))
            segments.append(Segment(fit(name if frame.width < 3 else " " + name, frame.width), style))
            at = frame.end
        return Strip(segments).adjust_cell_length(width, base)  # padded to the width: no cell of a view before it stays
