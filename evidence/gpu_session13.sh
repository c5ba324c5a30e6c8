#!/usr/bin/env bash
# GPU evidence, call 13 (H200): this session's final code (as call 12, plus the table mounted while a capture is read and the
# loader's 1 MB pipe)
# through the GPU-marked tests and the TUI driven headless with Proton's auto backend.
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
python3 -m compileall -q proton_tui payload > /dev/null
export PYTHONPATH=/tmp/site:$PWD
E=$OUT/ev13; mkdir -p "$E"
python3 -m pytest -m gpu -q -p no:cacheprovider tests/ > "$E/pytest-gpu.log" 2>&1; echo "pytest exit=$?" >> "$E/pytest-gpu.log"
python3 evidence/drive_tui.py "$E/tui" --backend auto > "$E/tui.log" 2>&1; echo "drive exit=$?" >> "$E/tui.log"
find "$E" -name "*.hatchet" -size +5M -delete
tar czf "$OUT/evidence13.tar.gz" -C "$OUT" ev13
tail -4 "$E/pytest-gpu.log"; tail -15 "$E/tui.log"
