"""The one filter of a view (`ViewFilter`), on real captures: what it parses and refuses, what it keeps, and the
totals it leaves."""

from __future__ import annotations

import re

import pytest

from proton_tui.hatchet import load_profile
from proton_tui.view.filters import FilterError, ViewFilter
from proton_tui.view.names import Names
from tests.helpers import FIXTURES


@pytest.mark.parametrize("field, kwargs, words", [
    ("include", {"include": "add_kernel("}, "not a valid regular expression"),
    ("exclude", {"exclude": "[unclosed"}, "not a valid regular expression"),
    ("threshold", {"threshold": "abc"}, "is not a number"),
    ("threshold", {"threshold": "101"}, "between 0 and 100"),
    ("depth", {"depth": "1.5"}, "not a whole number"),
    ("depth", {"depth": "-1"}, "is negative"),
])
def test_a_bad_value_names_its_field_as_the_caller_calls_it(field, kwargs, words):
    with pytest.raises(FilterError) as caught:
        ViewFilter.parse(**kwargs, labels={field: f"--{field}"})
    assert caught.value.field == field and str(caught.value).startswith(f"--{field} ") and words in str(caught.value)


def test_empty_text_is_no_filter():
    chosen = ViewFilter.parse("", "", "", "")
    assert not chosen and not chosen.hides_rows and chosen == ViewFilter()


def test_include_keeps_the_kernel_with_its_ancestors_and_recomputes_totals():
    profile = load_profile(FIXTURES / "gpt2_shadow.hatchet")
    chosen = ViewFilter.parse(include="gemm")
    filtered, visible = chosen.apply(profile, Names())
    kept = set(filtered.names[1:])
    assert visible is None and kept and any("gemm" in name for name in kept)
    for node in range(1, filtered.node_count):  # every row is a match, an ancestor of one or below one
        lineage = [filtered.names[step] for step in filtered.lineage(node)]
        subtree_hit = any("gemm" in filtered.names[other] for other in range(filtered.node_count)
                          if node in filtered.lineage(other))
        assert any("gemm" in name for name in lineage) or subtree_hit
    assert 0 < filtered.total < profile.total
    assert filtered.total == sum(filtered.inclusive[child] for child in filtered.children[0])


def test_exclude_drops_the_subtree_and_its_time():
    profile = load_profile(FIXTURES / "gpt2_shadow.hatchet")
    top = max(profile.children[0], key=lambda node: profile.inclusive[node])
    filtered, _ = ViewFilter(exclude=re.compile(re.escape(profile.names[top]) + "$")).apply(profile, Names())
    assert profile.names[top] not in filtered.names
    assert filtered.total == pytest.approx(profile.total - profile.inclusive[top])


def test_depth_and_threshold_only_hide_rows():
    profile = load_profile(FIXTURES / "gpt2_shadow.hatchet")
    filtered, visible = ViewFilter.parse(depth="1").apply(profile, Names())
    assert filtered.node_count == profile.node_count and filtered.total == profile.total
    assert visible is not None and all(not shown for node, shown in enumerate(visible) if profile.depths[node] > 1)
    filtered, visible = ViewFilter.parse(threshold="50").apply(profile, Names())
    assert filtered.total == profile.total
    assert all(profile.percent(profile.inclusive[node]) >= 50 for node, shown in enumerate(visible) if shown and node)


def test_a_filter_matches_the_raw_name_as_well_as_the_one_shown():
    profile = load_profile(FIXTURES / "gpt2_shadow.hatchet")
    raw = next(name for name in profile.names if name.startswith("_Z"))
    names = Names.demangled(set(profile.names))
    by_raw, _ = ViewFilter(include=re.compile(re.escape(raw))).apply(profile, names)
    by_shown, _ = ViewFilter(include=re.compile(re.escape(names.shown(raw)))).apply(profile, names)
    assert raw in by_raw.names and raw in by_shown.names
