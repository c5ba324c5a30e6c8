"""The capture engine: run the payload under Proton and judge the result. Never imports Textual.

``RunParams`` (validated options) -> ``plan_run`` (probe the interpreter, apply the rules) ->
``execute_run`` (run folder, live lines, verdict, run.json).
"""
