"""`python -m proton_tui` runs the command line."""

from .entry import main

main()
