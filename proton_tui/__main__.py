"""`python -m proton_tui` runs the command line."""

from proton_tui.entry import main

main()
