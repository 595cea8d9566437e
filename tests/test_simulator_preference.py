"""The shipped stacks' first replicas land on the most preferred running pool, and the report says what
moves a replica on a less preferred pool back (or that nothing will)."""

from __future__ import annotations

import contextlib
import copy
import io

import pytest

from offline_plan.manifests import kubernetes_objects
from offline_plan.run import run_stack_file
from simulator import SCHEDULED, render_markdown, render_table, simulate, to_json
from simulator.recovery import moves_back, preferred_before


@pytest.fixture(scope="module")
def stacks():
    loaded = {}
    for stack in ("eks-dev", "aks-dev", "prod"):
        with contextlib.redirect_stdout(io.StringIO()):
            run = run_stack_file(stack)
        loaded[stack] = (run.config, kubernetes_objects(run))
    return loaded


def _places(result):
    return [(r.status, r.pool) for r in result.of("vllm-gpu")]


def test_eks_dev_schedules_l40s_before_a10g(stacks):
    cfg, objects = stacks["eks-dev"]
    result = simulate(cfg, objects, replicas={"vllm-gpu": 3})
    assert _places(result) == [(SCHEDULED, "l40s"), (SCHEDULED, "a10g-4x"), (SCHEDULED, "l40s")]
    second = result.of("vllm-gpu")[1]
    assert second.moves_back.startswith("nothing moves it back to l40s")
    assert "nothing moves it back to l40s" in render_table(result)


def test_aks_dev_takes_a100spot_first(stacks):
    cfg, objects = stacks["aks-dev"]
    result = simulate(cfg, objects, replicas={"vllm-gpu": 3})
    assert _places(result) == [(SCHEDULED, "a100spot"), (SCHEDULED, "a100od"), (SCHEDULED, "t4spot")]
    assert result.of("vllm-gpu")[0].moves_back is None


def test_prod_replica_one_moves_back_to_spot_by_active_migration(stacks):
    cfg, objects = stacks["prod"]
    result = simulate(cfg, objects)
    first, second = result.of("vllm-gpu")
    assert (first.pool, second.pool) == ("a100-80gb-ondemand", "a100-80gb-spot")
    assert first.moves_back.startswith("moves back: GKE active migration "
                                       "(computeClasses.vllm-gpu-ccc.activeMigration.optimizeRulePriority)")
    assert "a100-80gb-spot or a100-40gb-spot" in first.moves_back
    assert second.moves_back is None
    assert "moves back: GKE active migration" in render_markdown(result)
    assert to_json(result)["replicas"][0]["movesBack"] == first.moves_back


def test_without_active_migration_the_report_says_nothing_moves_it(stacks):
    cfg, _ = stacks["prod"]
    cc = cfg.compute_classes["vllm-gpu-ccc"]
    cfg = cfg.model_copy(update={"compute_classes": {"vllm-gpu-ccc": cc.model_copy(update={"active_migration": None})}})
    text = moves_back(cfg, "vllm-gpu", "a100-80gb-ondemand")
    assert text == ("nothing moves it back to a100-80gb-spot or a100-40gb-spot "
                    "(set computeClasses.vllm-gpu-ccc.activeMigration.optimizeRulePriority: true)")


def test_first_choice_and_unknown_pools_need_nothing(stacks):
    cfg, _ = stacks["prod"]
    assert preferred_before(cfg, "vllm-gpu", "a100-80gb-spot") == []
    assert moves_back(cfg, "vllm-gpu", "not-a-pool") is None
    assert moves_back(cfg, "no-such-workload", "a100-80gb-spot") is None


def test_spot_reclaim_lands_on_the_fallback_and_says_so(stacks):
    cfg, objects = stacks["aks-dev"]
    result = simulate(cfg, copy.deepcopy(objects), replicas={"vllm-gpu": 1}, reclaim=["a100spot"])
    (replica,) = result.of("vllm-gpu")
    assert (replica.status, replica.pool) == (SCHEDULED, "a100od")
    assert replica.note.startswith("rescheduled: aks-a100spot-0 was reclaimed")
    assert replica.moves_back.startswith("nothing moves it back to a100spot")
