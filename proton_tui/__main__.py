"""`python -m proton_tui` runs the command line."""

from .launch import main

main()
