"""Every numeric flag is range-checked: nan, inf, 0, negative, overflow and huge values are exit 2 naming it."""

from __future__ import annotations

import pytest

from tests.hostile_inputs import HOSTILE_NUMBERS, NUMBERS_ACCEPTED, NUMERIC_FLAGS


@pytest.mark.parametrize("case", sorted(HOSTILE_NUMBERS))
@pytest.mark.parametrize("flag", sorted(NUMERIC_FLAGS))
def test_a_numeric_flag_refuses_what_is_no_number_for_it(flag, case, capsys):
    if (flag, case) in NUMBERS_ACCEPTED:
        pytest.skip(f"{flag} takes {HOSTILE_NUMBERS[case]!r}")
    try:
        code = NUMERIC_FLAGS[flag](HOSTILE_NUMBERS[case])
    except SystemExit as exited:  # argparse's usage error
        code = exited.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert flag.split()[1] in err and "Traceback" not in err, err
