"""The TUI's screens, one module each; they post messages (`..messages`) and the app routes them."""
