"""How long a test waits on a subprocess before calling it hung.

Only a hang guard: no test asserts how fast anything is (figures belong to bench/). It is long enough that a
2-CPU machine running two test suites at once never reaches it for a command that is merely slow.
"""

HANG_GUARD_SECONDS = 900
