"""proton-tui: capture Triton kernels with Proton and explore where GPU time goes."""

__version__ = "0.1.0"
JSON_SCHEMA = "proton-tui/1"  # the version of every JSON document proton-tui writes (docs/json.md)
