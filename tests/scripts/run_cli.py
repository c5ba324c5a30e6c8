"""`proton-tui run` as its own process, the way cli.py wires it: a Typer app with `register(app)` called."""

import typer

from proton_tui.cli_run import register

app = typer.Typer(add_completion=False)


@app.callback()
def main() -> None:
    """proton-tui (test entry)."""


register(app)

if __name__ == "__main__":
    app()
