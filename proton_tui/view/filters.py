"""The one filter of a view, parsed once for the command line and the TUI alike: include/exclude regexes (matched
against the name shown and the raw name; totals recomputed, ancestors kept), and a minimum share, a maximum depth
and the empty frames, hidden unless asked for (these only hide rows)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from proton_tui.hatchet import Profile
from proton_tui.view.display import Display
from proton_tui.view.names import Names

FIELDS = ("include", "exclude", "threshold", "depth")


class FilterError(ValueError):
    """A filter value that cannot be used; `field` names which one (include, exclude, threshold, depth)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ViewFilter:
    include: re.Pattern | None = None
    exclude: re.Pattern | None = None
    threshold: float = 0.0  # % of the capture's total
    depth: int | None = None
    show_empty: bool = False  # frames with no value in their whole subtree (Proton's viewer hides them too)

    @classmethod
    def parse(cls, include: str | None = None, exclude: str | None = None, threshold: str | float | None = None,
              depth: str | int | None = None, labels: dict[str, str] | None = None,
              show_empty: bool = False) -> ViewFilter:
        """A filter from text as typed; FilterError naming the field (as `labels` call it: "--include" on the
        command line, the field's label in the TUI) for a bad value. Empty text means no filter."""
        labels = {field: field for field in FIELDS} | (labels or {})
        patterns = []
        for field, text in (("include", include), ("exclude", exclude)):
            try:
                patterns.append(re.compile(text) if text else None)
            except re.error as error:
                raise FilterError(field, f"{labels[field]} {text!r} is not a valid regular expression: {error}") \
                    from None
        return cls(patterns[0], patterns[1], _number(threshold, "threshold", labels), _depth(depth, labels),
                   show_empty)

    @property
    def hides_rows(self) -> bool:
        """A depth or threshold was chosen (the empty frames aside, which every view hides unless asked)."""
        return bool(self.threshold) or self.depth is not None

    def __bool__(self) -> bool:
        return self.include is not None or self.exclude is not None or self.hides_rows or self.show_empty

    def replace(self, **changes) -> ViewFilter:
        """The same filter with some fields changed."""
        return replace(self, **changes)

    def hidden_empty(self, profile: Profile) -> int:
        """How many empty frames of `profile` this filter hides."""
        return 0 if self.show_empty else profile.empty_count()

    def apply(self, profile: Profile, names: Names | None = None) -> tuple[Profile, list[bool] | None]:
        """The filtered profile and the rows it shows (None: all)."""
        names = names or Names()
        include, exclude = self.include, self.exclude
        filtered = profile.filtered(
            (lambda raw: names.matches(include, raw)) if include is not None else None,
            (lambda raw: names.matches(exclude, raw)) if exclude is not None else None,
        )
        if self.hides_rows or self.hidden_empty(filtered):
            return filtered, filtered.visible(self.threshold, self.depth, self.show_empty)
        return filtered, None

    def shown(self, profile: Profile, names: Names | None = None, sort: str = "time", reverse: bool = False,
              bars: bool = False) -> Display:
        """`profile` through this filter as a view shows it."""
        filtered, visible = self.apply(profile, names)
        return Display(filtered, names, sort, reverse, visible, self.hidden_empty(filtered), bars)


def _number(text: str | float | None, field: str, labels: dict[str, str]) -> float:
    if text is None or (isinstance(text, str) and not text.strip()):
        return 0.0
    try:
        value = float(text)
    except ValueError:
        raise FilterError(field, f"{labels[field]} {text!r} is not a number") from None
    if not 0.0 <= value <= 100.0:
        raise FilterError(field, f"{labels[field]} {text!r} is not a share between 0 and 100 %")
    return value


def _depth(text: str | int | None, labels: dict[str, str]) -> int | None:
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    try:
        value = int(text)
    except ValueError:
        raise FilterError("depth", f"{labels['depth']} {text!r} is not a whole number") from None
    if value < 0:
        raise FilterError("depth", f"{labels['depth']} {text!r} is negative")
    return value
