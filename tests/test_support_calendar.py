"""Each cloud's support calendar and DRA availability: cited, dated, reviewed, and enforced by the pack.

No test here reads today's date: each passes the day it judges on (TODAY, the calendar's reading date).
"""

import datetime as dt
import functools

import pytest
import yaml
from gpu_fungibility import support_calendar as cal

from policies.rules.support import JUDGE_DATE_ENV, judge_date, validate_version_advisories, validate_version_supported
from stacks.loader import parse_stack_config
from tests.policy_fixtures import Collector, R, resource_args
from tools import calendar_review

GKE, EKS, AKS = "gcp:container/cluster:Cluster", "aws:eks/cluster:Cluster", "azure-native:containerservice:ManagedCluster"
TODAY = dt.date(2026, 11, 26)


def test_the_review_date_follows_the_reading_date():
    assert cal.AS_OF <= cal.REVIEW_BY


@pytest.mark.parametrize("today, due", [
    (cal.AS_OF, False), (cal.REVIEW_BY, False), (cal.REVIEW_BY + dt.timedelta(days=1), True),
    (cal.AS_OF - dt.timedelta(days=1), True),
])
def test_a_stale_calendar_is_a_lint_warning_and_a_scheduled_failure(today, due, capsys):
    """Never a red make test on a later day: make lint warns, the scheduled job (--strict) fails."""
    assert (calendar_review.review_problem(today, cal.AS_OF, cal.REVIEW_BY) is not None) == due
    assert calendar_review.main([], today=today) == 0
    assert ("warning:" in capsys.readouterr().err) == due
    assert calendar_review.main(["--strict"], today=today) == (1 if due else 0)


def test_every_entry_cites_its_sources():
    for cloud, minors in cal.calendar().items():
        for minor, entry in minors.items():
            assert entry.support_source and entry.dra_source, f"{cloud} {minor}"
            assert entry.dra in ("on", "off", "unconfirmed"), f"{cloud} {minor}"


@pytest.mark.parametrize("cloud,minor,ends", [
    ("gke", "1.34", dt.date(2026, 10, 1)),   # GKE release schedule: 1.34 end of life
    ("gke", "1.36", dt.date(2027, 8, 9)),    # GKE release schedule, read 2026-11
    ("eks", "1.36", dt.date(2027, 8, 2)),    # EKS release calendar, read 2026-11
    ("eks", "1.34", dt.date(2026, 12, 2)),   # EKS release calendar: end of standard support
    ("eks", "1.35", dt.date(2027, 3, 27)),
    ("aks", "1.34", dt.date(2026, 11, 1)),   # AKS calendar: "Nov 2026", the month's first day
    ("aks", "1.35", dt.date(2027, 3, 1)),
])
def test_recorded_end_of_standard_support(cloud, minor, ends):
    assert cal.support(cloud, minor).standard_support_ends == ends


def test_a_minor_past_standard_support_is_refused_and_one_close_to_it_warned():
    assert cal.support_problem("gke", "1.34", TODAY)
    assert cal.support_problem("aks", "1.34", TODAY)
    assert cal.support_problem("eks", "1.34", TODAY) is None
    assert any("in 6 days" in note for note in cal.support_advisories("eks", "1.34", TODAY))
    assert cal.support_problem("eks", "1.34", dt.date(2026, 12, 2))
    assert not any("leaves standard support" in n for n in cal.support_advisories("eks", "1.35", TODAY))
    assert any("in 90 days" in n for n in cal.support_advisories("eks", "1.35", dt.date(2026, 12, 27)))
    assert any("no cited support calendar entry" in n for n in cal.support_advisories("eks", "1.37", TODAY))


def test_dra_off_is_refused_and_unconfirmed_is_warned():
    assert "AKS-2025-008" in cal.dra_problem("aks", "1.33")
    assert cal.dra_problem("aks", "1.35") is None
    assert any("DRA on AKS 1.35 is unconfirmed" in n for n in cal.support_advisories("aks", "1.35", TODAY))
    for cloud in ("gke", "eks"):
        assert cal.support(cloud, "1.35").dra == "on"
        assert not any("DRA" in n for n in cal.support_advisories(cloud, "1.35", TODAY))


@pytest.mark.parametrize("cloud,version,channel,minor", [
    ("gke", "1.34", "REGULAR", "1.35"),     # the channel's default is above the floor: the cluster runs 1.35
    ("gke", "1.34", "STABLE", "1.35"),
    ("gke", "1.36", "REGULAR", "1.36"),     # a floor above the default wins
    ("gke", "1.34", "RAPID", "1.34"),       # no recorded default: modelled at the floor
    ("gke", "1.34", "UNSPECIFIED", "1.34"),
    ("eks", "1.34", "REGULAR", "1.34"),     # EKS has no channel: the version is the version
])
def test_the_minor_the_cluster_will_run(cloud, version, channel, minor):
    assert cal.effective_minor(cloud, version, channel) == minor


def test_every_tool_models_the_minor_a_gke_channel_runs():
    raw = yaml.safe_load(open("Pulumi.dev.yaml"))["config"]
    config = {k.split(":", 1)[1]: v for k, v in raw.items() if k.startswith("gpu-fungibility:")}
    config["cluster"] = {**config["cluster"], "kubernetesVersion": "1.34"}
    assert parse_stack_config(config, checks=False).cluster.minor_version == "1.35"   # plan, simulator and pack read this


def run(rule, resource: R) -> Collector:
    collector = Collector()
    rule(resource_args(resource), collector)
    return collector


supported = functools.partial(validate_version_supported, today=TODAY)
advisories = functools.partial(validate_version_advisories, today=TODAY)


def test_the_pack_refuses_a_cluster_past_standard_support():
    floor_only = R(GKE, "c", {"minMasterVersion": "1.34", "releaseChannel": {"channel": "UNSPECIFIED"}})
    assert "left standard support on 2026-10-01" in run(supported, floor_only).messages[0]
    # pulumi-gcp sends minMasterVersion as the create version: a channel's higher default does not excuse it,
    # alike on every cloud.
    in_channel = R(GKE, "c", {"minMasterVersion": "1.34", "releaseChannel": {"channel": "REGULAR"}})
    assert "left standard support on 2026-10-01" in run(supported, in_channel).messages[0]
    assert run(supported, R(GKE, "c", {"minMasterVersion": "1.35", "releaseChannel": {"channel": "STABLE"}})).messages == []
    assert run(supported, R(AKS, "c", {"kubernetesVersion": "1.34"})).messages
    assert run(supported, R(AKS, "c", {"kubernetesVersion": "1.33"})).messages == []  # dra-kubernetes-version's
    assert run(supported, R(EKS, "c", {"version": "1.35"})).messages == []


def test_the_pack_warns_about_extended_support_and_unconfirmed_dra():
    no_policy = run(advisories, R(EKS, "c", {"version": "1.35"})).messages
    assert any("$0.60 per cluster hour" in m for m in no_policy)
    standard = run(advisories, R(EKS, "c", {"version": "1.35", "upgradePolicy": {"supportType": "STANDARD"}}))
    assert standard.messages == []
    assert any("unconfirmed" in m for m in run(advisories, R(AKS, "c", {"kubernetesVersion": "1.35"})).messages)


@pytest.mark.parametrize("stack,cloud", [("dev", "gke"), ("eks-dev", "eks"), ("prod", "gke"), ("aks-dev", "aks")])
def test_the_shipped_stacks_run_a_supported_minor_that_serves_dra(stack, cloud):
    raw = yaml.safe_load(open(f"Pulumi.{stack}.yaml"))["config"]
    config = {k.split(":", 1)[1]: v for k, v in raw.items() if k.startswith("gpu-fungibility:")}
    minor = parse_stack_config(config, checks=False).cluster.minor_version
    assert minor == "1.35", stack
    assert cal.support_problem(cloud, minor, TODAY) is None, stack
    assert cal.dra_problem(cloud, minor) is None, stack


def test_the_policy_config_fixes_the_date_the_pack_judges_against(monkeypatch):
    """A CI run holds the verdict to one date with judgeDate; the environment's date is the fallback."""
    monkeypatch.setenv(JUDGE_DATE_ENV, "2026-11-26")
    eks_134 = R(EKS, "c", {"version": "1.34", "upgradePolicy": {"supportType": "STANDARD"}})
    judged = functools.partial(_run_with_config, eks_134)
    assert judged(validate_version_supported, None) == []  # 2026-11-26: still in standard support
    assert any("in 6 days" in m for m in judged(validate_version_advisories, None))
    assert "left standard support on 2026-12-02" in judged(validate_version_supported, {"judgeDate": "2026-12-02"})[0]
    monkeypatch.setenv(JUDGE_DATE_ENV, "2026-12-02")
    assert judged(validate_version_supported, {"judgeDate": "2026-11-26"}) == []  # the config wins
    assert "left standard support" in judged(validate_version_supported, None)[0]
    assert judged(validate_version_supported, {"judgeDate": "26/11/2026"}) == [
        "judgeDate '26/11/2026' is not a date (YYYY-MM-DD)"]


def test_without_a_fixed_date_the_pack_judges_against_today(monkeypatch):
    monkeypatch.delenv(JUDGE_DATE_ENV, raising=False)
    assert judge_date(None) == dt.date.today()
    assert judge_date({}, environ={JUDGE_DATE_ENV: "2030-01-02"}) == dt.date(2030, 1, 2)


def test_the_test_suite_judges_support_on_the_calendar_s_reading_date():
    """tests/conftest.py fixes the date every pack a test starts judges against: no test depends on today."""
    import os

    assert os.environ[JUDGE_DATE_ENV] == cal.AS_OF.isoformat()


def _run_with_config(resource: R, rule, config: dict | None) -> list[str]:
    collector = Collector()
    rule(resource_args(resource, config), collector)
    return collector.messages
