"""make verify on hostile snapshots: a refusal naming the object and field (exit 2), or a correct verdict."""

from __future__ import annotations

import copy
import functools
import json

import pytest

from tests import verify_fixtures
from tests.hostile_inputs import HOSTILE_SNAPSHOT_FILES, HOSTILE_SNAPSHOTS
from verify.__main__ import main


@pytest.fixture(scope="module")
def bases() -> dict[str, dict]:
    return {name: build() for name, build in verify_fixtures.VARIANTS.items()}


@pytest.fixture(autouse=True)
def stack_loaded_once(monkeypatch):
    """The dev stack is loaded once for the module: each case is about the snapshot, not the stack file."""
    from verify import stack

    monkeypatch.setattr(stack, "load_stack", _cached_load(stack.load_stack))


@functools.cache
def _cached_load(load):
    return functools.cache(load)


@pytest.mark.parametrize("case", sorted(HOSTILE_SNAPSHOTS))
def test_hostile_snapshot(case, bases, tmp_path, capsys):
    hostile = HOSTILE_SNAPSHOTS[case]
    snap = copy.deepcopy(bases[hostile.base])
    hostile.mutate(snap)
    path = tmp_path / f"{case}.json"
    path.write_text(json.dumps(snap))
    simulate = [] if "simulated" in " ".join(hostile.words) else ["--no-simulate"]
    code = main(["--stack", "dev", "--snapshot", str(path), "--out", str(tmp_path / "build"), *simulate])
    out, err = capsys.readouterr()
    assert code == hostile.code, err or out
    assert "Traceback" not in err and "unexpected" not in err, err
    said = err if hostile.code == 2 else out
    for word in hostile.words:
        assert word in said, said
    if hostile.code == 2:
        assert str(path) in err and "items[" in err, "the error names the file and the object"


@pytest.mark.parametrize("case", sorted(HOSTILE_SNAPSHOT_FILES))
def test_hostile_snapshot_file(case, tmp_path, capsys):
    content, words = HOSTILE_SNAPSHOT_FILES[case]
    path = tmp_path / "snapshot.json"
    path.write_bytes(content)
    assert main(["--stack", "dev", "--snapshot", str(path), "--no-simulate", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert words in err and str(path) in err, err
