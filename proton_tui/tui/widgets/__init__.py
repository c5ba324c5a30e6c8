"""The TUI's own widgets."""
