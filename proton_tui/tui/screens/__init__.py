"""The TUI's screens, one module each; they post messages (`..messages`) and the app routes them."""


def over_another_screen(screen) -> bool:
    """Whether `screen` was opened over another of the app's screens, which closing it goes back to; not when it is
    the app's first (the bottom of the stack is Textual's default screen)."""
    stack = screen.app.screen_stack
    return screen in stack and stack.index(screen) > 1
