"""summary.md: a report ready to paste as a pull-request comment."""

from __future__ import annotations

from collections import Counter
from typing import Any

from gpu_fungibility import catalog, mig_geometry

from offline_plan import before_deploy, node_sizes
from offline_plan.comment_size import fit_comment
from offline_plan.manifests import SchemaResult
from offline_plan.run import PlanRun


def render(run: PlanRun, objects: list[dict[str, Any]], schema: list[SchemaResult],
           sections: list[tuple[str, str]], advisories: list[str] | None = None) -> str:
    cfg = run.config
    parts = [_header(run), before_deploy.markdown(run), _resources(run), _diagnostics(run, advisories),
             _fallback_chain(cfg),
             _fungibility(cfg, objects), node_sizes.render(cfg, objects), _schemas(schema)]
    parts += [f"## {title}\n\n{body.strip()}\n" for title, body in sections]
    return fit_comment("\n".join(p for p in parts if p).rstrip() + "\n",
                       "plan.json and manifests/ beside this file hold every resource.")


def _header(run: PlanRun) -> str:
    cfg = run.config
    c = cfg.cluster
    return (
        f"# Plan for stack `{run.stack}`\n\n"
        f"{c.cloud.upper()} cluster `{c.name}` in `{c.location}` (zones {', '.join(c.zones)}), "
        f"Kubernetes {c.kubernetes_version}: **{len(run.resources)} resources to create**.\n"
    )


def _resources(run: PlanRun) -> str:
    counts = Counter(r.type for r in run.resources)
    rows = "\n".join(f"| `{t}` | {n} |" for t, n in sorted(counts.items()))
    return f"## Resources by type\n\n| type | count |\n|---|---:|\n{rows}\n"


def _diagnostics(run: PlanRun, advisories: list[str] | None = None) -> str:
    items = [(d.severity, d.message) for d in run.diagnostics] + [("advisory", a) for a in advisories or []]
    items += [("info", n) for n in run.notes]
    if not items:
        return "## Diagnostics\n\nNone.\n"
    lines = "\n".join(f"- **{sev}**: {msg}" for sev, msg in items)
    return f"## Diagnostics\n\n{lines}\n"


def _pool_caption(cfg: Any, pool_name: str) -> str:
    pool = cfg.node_pools[pool_name]
    acc = pool.accelerator
    from stacks.arguments import machine_types

    shape = ", ".join(machine_types(cfg, pool_name))
    capacity = "spot" if pool.spot else "on-demand"
    return (f"{pool_name}<br/>{acc.count} x {acc.type}<br/>{shape}<br/>"
            f"{capacity}, {pool.autoscaling.min}-{pool.autoscaling.max} nodes")


def _fallback_chain(cfg: Any) -> str:
    if not cfg.workloads:
        return ""
    lines = ["```mermaid", "flowchart LR"]
    for wl_name, wl in sorted(cfg.workloads.items()):
        pools = cfg.placement_pools(wl)
        source = f"wl_{_id(wl_name)}"
        lines.append(f'  {source}(["{wl_name}<br/>{wl.replicas} replica(s)"])')
        previous = source
        for rank, pool_name in enumerate(pools, start=1):
            node = f"{_id(wl_name)}_{_id(pool_name)}"
            lines.append(f'  {node}["{_pool_caption(cfg, pool_name)}"]')
            label = "first choice" if rank == 1 else "else"
            lines.append(f"  {previous} -->|{rank}. {label}| {node}")
            previous = node
    lines.append("```")
    classes = ", ".join(f"`{n}`: {' → '.join(cc.pools)}" for n, cc in sorted(cfg.compute_classes.items()))
    intro = ("Each workload tries its pools in order: the autoscaler scales them up in this order "
             "and the claim's `firstAvailable` alternatives follow the same list.")
    if classes:
        intro += f" Compute classes: {classes}."
    return "## Fallback chain\n\n" + intro + "\n\n" + "\n".join(lines) + "\n"


def _id(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text)


def _mig_slices(cfg: Any) -> dict[tuple[str, str], tuple[str, str]]:
    """``(claim template, request) -> (accelerator type, MIG profile)`` of every MIG workload."""
    from gpu_fungibility.claims import template_name

    found = {}
    for name, wl in cfg.workloads.items():
        pool = cfg.node_pools.get(wl.pool or "")
        for piece in (wl.mig or []) if pool is not None else []:
            found[(template_name(name), piece.name)] = (pool.accelerator.type, piece.profile)
    return found


def _mig_memory(accelerator_type: str, profile: str) -> str:
    """A MIG slice's memory as NVML gives it (not the profile name's nominal figure)."""
    found = mig_geometry.profiles_of(accelerator_type).get(profile)
    if found is None:
        return "-"
    estimate = "" if found.measured else ", estimated"
    return f"{found.memory_mib / 1024:.2f} GiB ({profile}: {found.memory_mib} MiB{estimate})"


def _fungibility(cfg: Any, objects: list[dict[str, Any]]) -> str:
    """One row per claim alternative, read back from the generated claim objects."""
    rows = []
    mig = _mig_slices(cfg)
    for obj in objects:
        if obj.get("kind") not in ("ResourceClaimTemplate", "ResourceClaim"):
            continue
        spec = obj.get("spec", {})
        spec = spec.get("spec", spec) if obj["kind"] == "ResourceClaimTemplate" else spec
        name = obj.get("metadata", {}).get("name", "")
        for request in spec.get("devices", {}).get("requests", []):
            alternatives = request.get("firstAvailable") or [{**request.get("exactly", {}),
                                                              "name": request.get("name")}]
            for rank, alt in enumerate(alternatives, start=1):
                pool = cfg.node_pools.get(alt.get("name", ""))
                mode = alt.get("allocationMode", "ExactCount")
                count = alt.get("count", 1) if mode == "ExactCount" else "all"
                slice_of = mig.get((name, str(request.get("name"))))
                memory = _mig_memory(*slice_of) if slice_of else _memory(pool, count)
                selectors = " && ".join(s.get("cel", {}).get("expression", "").strip()
                                        for s in alt.get("selectors", [])) or "(device class only)"
                rows.append(f"| `{obj['kind']}/{name}` | {request.get('name')} | {rank} | {alt.get('name')} "
                            f"| `{alt.get('deviceClassName')}` | {count} | {memory} | `{selectors}` |")
    if not rows:
        return ""
    header = ("| claim | request | # | alternative | device class | devices | memory | selector |\n"
              "|---|---|---:|---|---|---:|---|---|")
    return "## Fungibility\n\n" + header + "\n" + "\n".join(rows) + "\n" + _shadowed_notes(cfg)


def _shadowed_notes(cfg: Any) -> str:
    """What the scheduler does where an earlier alternative also fits a later pool's nodes (see the rule)."""
    from stacks.shadowed import shadowed_alternatives

    notes = [f"\n> On `{later}` nodes ({high} x {cfg.node_pools[later].accelerator.type}) the scheduler takes the "
             f"`{earlier}` alternative ({low} device{'s' if low != 1 else ''}), listed first, which fits there too: "
             f"each replica there gets {low} (tensor-parallel {low}), {high // low} replicas per node, "
             f"not the {high} devices the `{later}` row offers (compute class `{name}`)."
             for name, _, earlier, later, low, high in shadowed_alternatives(cfg)]
    return "".join(notes) + ("\n" if notes else "")


def _memory(pool: Any, count: Any) -> str:
    if pool is None or not isinstance(count, int):
        return "-"
    model = pool.accelerator.model
    if isinstance(model, catalog.GpuModel):
        return f"{count * model.memory_gib} GiB ({count} x {model.memory_gib})"
    return f"{count * model.hbm_gib_per_chip} GiB HBM"


def _schemas(results: list[SchemaResult]) -> str:
    if not results:
        return ""
    counts = Counter(r.status for r in results)
    text = (f"## Kubernetes manifests\n\n{len(results)} objects in `manifests/`: "
            f"{counts.get('valid', 0)} valid against the Kubernetes schemas (strict), "
            f"{counts.get('no-schema', 0)} custom resources without a published schema, "
            f"{counts.get('invalid', 0)} invalid.\n")
    bad = [r for r in results if r.status != "valid"]
    if bad:
        text += "\n" + "\n".join(f"- `{r.filename}` ({r.status}): {r.detail}" for r in bad) + "\n"
    return text
