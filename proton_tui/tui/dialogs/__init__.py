"""The TUI's modal screens (help, a path to act on): they know no screen and dismiss with their result."""
