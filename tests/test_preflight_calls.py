"""preflight.calls, the layer every preflight's cloud calls go through: deadlines, retries, malformed answers.

A fake clock and sleep make the retry arithmetic exact; the deadline tests use real threads and
short real deadlines (a fraction of a second).
"""

from __future__ import annotations

import json
import threading

import pytest

from preflight.calls import (
    DENIED,
    MALFORMED,
    SERVER,
    THROTTLED,
    TIMEOUT,
    CallError,
    CallPolicy,
    Calls,
    mapping,
    number,
    retry_after_seconds,
)


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def scripted(*outcomes):
    """A fetch that raises or returns each outcome in turn, counting its attempts."""
    remaining = list(outcomes)
    attempts = []

    def fetch(seconds: float):
        attempts.append(seconds)
        outcome = remaining.pop(0) if len(remaining) > 1 else remaining[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return fetch, attempts


def calls_with(fake: FakeTime, **policy) -> Calls:
    return Calls(CallPolicy(**policy), clock=fake.clock, sleep=fake.sleep)


def test_a_throttled_call_is_retried_with_exponential_backoff_then_answers():
    fake = FakeTime()
    calls = calls_with(fake, attempts=4, backoff_seconds=0.5)
    fetch, attempts = scripted(CallError(THROTTLED, "429"), CallError(SERVER, "503"), {"ok": 1})
    assert calls.run("demo.get", fetch) == {"ok": 1}
    assert fake.slept == [0.5, 1.0] and len(attempts) == 3
    assert calls.answered == 1 and calls.failures == []


def test_retries_are_bounded_and_the_error_says_so():
    fake = FakeTime()
    calls = calls_with(fake, attempts=3, backoff_seconds=0.5, backoff_cap_seconds=0.75)
    fetch, attempts = scripted(CallError(THROTTLED, "throttled (429)"))
    with pytest.raises(CallError) as caught:
        calls.run("demo.get", fetch)
    assert len(attempts) == 3 and fake.slept == [0.5, 0.75]  # capped backoff
    assert str(caught.value) == "demo.get: throttled (429) (gave up after 3 attempts)"
    assert calls.failures == [caught.value] and calls.answered == 0


def test_retry_after_is_honoured_and_never_waited_past_the_run_deadline():
    fake = FakeTime()
    calls = calls_with(fake, run_seconds=30)
    fetch, _ = scripted(CallError(THROTTLED, "429", retry_after=7), "answer")
    assert calls.run("demo.get", fetch) == "answer" and fake.slept == [7]

    fetch, attempts = scripted(CallError(THROTTLED, "429", retry_after=60), "answer")
    with pytest.raises(CallError, match=r"a retry in 60 s would pass the run's 30 s deadline") as caught:
        calls.run("demo.get", fetch)
    assert len(attempts) == 1 and fake.slept == [7] and caught.value.kind == THROTTLED


@pytest.mark.parametrize("kind", [DENIED, MALFORMED, TIMEOUT])
def test_other_kinds_are_not_retried(kind):
    fake = FakeTime()
    calls = calls_with(fake)
    fetch, attempts = scripted(CallError(kind, "no"), "answer")
    with pytest.raises(CallError):
        calls.run("demo.get", fetch, needs="demo.get permission")
    assert len(attempts) == 1 and not fake.slept


def test_denied_names_the_permission():
    calls = Calls()
    fetch, _ = scripted(CallError(DENIED, "403 forbidden"))
    with pytest.raises(CallError) as caught:
        calls.run("compute regions.get", fetch, needs="compute.regions.get")
    assert str(caught.value) == "compute regions.get: 403 forbidden (needs compute.regions.get)"


@pytest.mark.parametrize(("raw", "parse", "expected"), [
    (b'{"quotas": [{"metric": "CPUS", "li', json.loads, "JSONDecodeError"),
    (b"[1, 2]", lambda raw: mapping(json.loads(raw), "the answer"), "the answer is a list, not an object"),
    (b'{"limit": "lots"}', lambda raw: number(json.loads(raw)["limit"], "limit"), "limit is 'lots', not a number"),
    (b'{"limit": NaN}', lambda raw: number(json.loads(raw)["limit"], "limit"), "limit is nan, not a finite number"),
    (b"{}", lambda raw: json.loads(raw)["quotas"], "KeyError"),
    (b"\x80binary\xff", lambda raw: json.loads(raw), "DecodeError"),
])
def test_malformed_answers_become_an_error_naming_the_call(raw, parse, expected):
    calls = Calls()
    with pytest.raises(CallError) as caught:
        calls.run("compute regions.get us-central1", lambda seconds: raw, parse)
    assert caught.value.kind == MALFORMED
    assert str(caught.value).startswith("compute regions.get us-central1: malformed answer (")
    assert expected in str(caught.value)


def test_an_unexpected_exception_in_a_call_is_reported_not_raised():
    calls = Calls()
    with pytest.raises(CallError, match=r"^demo.get: RuntimeError: boom$"):
        calls.run("demo.get", lambda seconds: (_ for _ in ()).throw(RuntimeError("boom")))


def test_a_call_that_never_returns_is_cut_at_its_deadline():
    release, returned = threading.Event(), threading.Event()

    def never_returns(seconds):
        release.wait(30)
        returned.set()

    calls = Calls(CallPolicy(call_seconds=0.2, run_seconds=5))
    with pytest.raises(CallError, match=r"no complete answer within 0.2 s") as caught:
        calls.run("demo.get", never_returns)
    assert caught.value.kind == TIMEOUT
    assert not returned.is_set(), "the caller waited for the call to return instead of its deadline"
    release.set()


def test_the_run_deadline_bounds_every_later_call():
    """On an injected clock: each call gets what is left of the run, and none is made once it has passed."""
    now = [0.0]
    made: list[float] = []

    def slow(seconds):
        made.append(seconds)
        now[0] += seconds  # the call used all the time it was given
        raise TimeoutError

    calls = Calls(CallPolicy(call_seconds=0.2, run_seconds=0.3), clock=lambda: now[0])
    for _ in range(5):
        with pytest.raises(CallError):
            calls.run("demo.get", slow)
    assert made == [0.2, pytest.approx(0.1)]
    assert "deadline has passed" in str(calls.failures[-1])


def test_each_attempt_is_told_its_time_budget():
    calls = Calls(CallPolicy(call_seconds=3, run_seconds=10))
    fetch, attempts = scripted("answer")
    calls.run("demo.get", fetch)
    assert 0 < attempts[0] <= 3


@pytest.mark.parametrize(("header", "seconds"), [
    ("7", 7.0), (" 12 ", 12.0), (None, None), ("", None), ("soon", None), ("-3", None), ("²", None),
    ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),  # a date in the past: retry at once
])
def test_retry_after_header_values(header, seconds):
    assert retry_after_seconds(header) == seconds


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "99999"])
def test_deadline_options_refuse_what_is_not_a_sensible_number_of_seconds(value, capsys):
    from preflight.__main__ import main

    for option in ("--deadline", "--call-timeout"):
        with pytest.raises(SystemExit) as exited:
            main(["--stack", "dev", option, value])
        err = capsys.readouterr().err
        assert exited.value.code == 2 and f"argument {option}: " in err and "Traceback" not in err


@pytest.mark.parametrize(("status", "kind"), [(429, THROTTLED), (500, SERVER), (503, SERVER), (403, DENIED),
                                              (401, "credentials"), (400, "failed")])
def test_http_statuses_map_to_kinds_with_retry_after(status, kind):
    from preflight.calls import http_error

    error = http_error(status, f"{status}: said", {"Retry-After": "3"})
    assert error.kind == kind and "said" in error.detail
    assert error.retry_after == (3.0 if kind in (THROTTLED, SERVER) else None)


def test_an_unexpected_error_anywhere_in_a_run_is_one_line_and_exit_2(monkeypatch, capsys):
    import preflight.__main__ as entry

    def broken(args, policy):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(entry, "_run", broken)
    assert entry.main(["--stack", "dev"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == "preflight: stopped by an unexpected RecursionError: maximum recursion depth exceeded\n"
