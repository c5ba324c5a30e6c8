"""`python -m proton_tui` runs the command line."""

from .cli import main

main()
