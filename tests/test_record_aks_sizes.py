"""tools/record_aks_sizes.py on small synthetic sources written here (tables in the size pages' layout,
the autoscaler's generated Go table, AgentBaker's Go map), from git and from copies."""

import json
import os
import subprocess
from fractions import Fraction

import pytest

from tools import record_aks_sizes as recorder

PAGE = """---
title: Example size series
---

# Example sizes series

[!INCLUDE [example-summary](./includes/example-series-summary.md)]

## Host specifications
[!INCLUDE [example-series-specs](./includes/example-series-specs.md)]

## Sizes in series

### [Basics](#tab/sizebasic)

| Size Name | vCPUs (Qty.) | Memory (GiB) |
| --- | --- | --- |
| Standard_X4_v9 | 4 | 30.5 |
| Standard_X64_v9 | 64 | 1,024 |

### [Network](#tab/sizenetwork)

| Size Name | Max NICs (Qty.) | Max Bandwidth (Mbps) |
| --- | --- | --- |
| Standard_X4_v9 | 2 | 8,000 |
| Standard_X64_v9 | 8 | 32,000 |

### [Accelerators](#tab/sizeaccelerators)

| Size Name | Accelerators (Qty.) | Accelerator-Memory (GB) |
| --- | --- | --- |
| Standard_X4_v9 | 1/4 | 12 |
| Standard_X64_v9 | 2 | 96 |
"""

SPECS = """| Part | Quantity | Specs |
|---|---|---|
| Processor | 4 - 64 vCPUs | Some CPU |
| Accelerators | 1/4 - 2 GPUs | Example GPU (48GB) |
"""

SKUS_GO = """package azure

var InstanceTypes = map[string]*InstanceType{
\t"Standard_X4_v9": {
\t\tInstanceType: "Standard_X4_v9",
\t\tSkuFamily:    "standardXv9Family",
\t\tVCPU:         4,
\t\tMemoryMb:     30720,
\t\tGPU:          1,
\t\tArchitecture: "amd64",
\t},
\t"Standard_X64_v9": {
\t\tInstanceType: "Standard_X64_v9",
\t\tSkuFamily:    "standardXv9Family",
\t\tVCPU:         64,
\t\tMemoryMb:     1048576,
\t\tGPU:          2,
\t\tArchitecture: "amd64",
\t},
}
"""

GRID_GO = """package gpu

var ConvergedGPUDriverSizes = map[string]bool{
\t"standard_x4_v9":  true,
\t"standard_x64_v9": false,
}

var Other = map[string]bool{
\t"standard_y_v1": true,
}
"""


def test_tables_are_read_with_their_header_and_without_the_separator():
    found = recorder.tables(PAGE)
    assert [header[0] for header, _ in found] == ["Size Name"] * 3
    assert found[0] == (["Size Name", "vCPUs (Qty.)", "Memory (GiB)"],
                        [["Standard_X4_v9", "4", "30.5"], ["Standard_X64_v9", "64", "1,024"]])
    assert recorder.tables("| not | a table |\ntext") == []


def test_a_page_gives_each_size_its_vcpus_memory_and_gpus_with_slices_as_fractions():
    assert recorder.size_figures(PAGE) == {
        "Standard_X4_v9": {"vcpus": 4, "memory_gib": Fraction(61, 2), "gpus": Fraction(1, 4), "gpu_memory_gib": 12},
        "Standard_X64_v9": {"vcpus": 64, "memory_gib": 1024, "gpus": 2, "gpu_memory_gib": 96},
    }


@pytest.mark.parametrize("text", ["1 TB", "-", "one", "1/"])
def test_a_figure_the_recorder_does_not_know_stops_it(text):
    with pytest.raises(recorder.RecordError):
        recorder.quantity(text)


def test_memory_in_another_unit_stops_it():
    with pytest.raises(recorder.RecordError, match="unit"):
        recorder.size_figures(PAGE.replace("Memory (GiB)", "Memory (TB)"))


def test_two_tables_disagreeing_on_a_size_stop_it():
    twice = PAGE + "\n| Size Name | vCPUs (Qty.) |\n| --- | --- |\n| Standard_X4_v9 | 8 |\n"
    with pytest.raises(recorder.RecordError, match="two vcpus"):
        recorder.size_figures(twice)


def test_the_specs_include_is_found_beside_the_page_and_names_the_gpu():
    assert recorder.specs_include("a/b/example-series.md", PAGE) == "a/b/includes/example-series-specs.md"
    assert recorder.gpu_model(SPECS) == "Example GPU (48GB)"
    with pytest.raises(recorder.RecordError):
        recorder.specs_include("a/b/example-series.md", "no include here")
    with pytest.raises(recorder.RecordError):
        recorder.gpu_model(SPECS.replace("Accelerators", "Other"))


def test_the_fixture_numbers_keep_whole_figures_whole_and_slices_as_the_page_writes_them():
    assert recorder._json_number(Fraction(24), "gpus") == 24
    assert recorder._json_number(Fraction(1, 6), "gpus") == "1/6"
    assert recorder._json_number(Fraction(7, 2), "memory_gib") == 3.5


def test_the_autoscaler_s_sku_table_and_agentbaker_s_map_are_read():
    skus = recorder.resource_skus(SKUS_GO)
    assert skus["Standard_X64_v9"] == {"InstanceType": "Standard_X64_v9", "SkuFamily": "standardXv9Family",
                                       "VCPU": 64, "MemoryMb": 1048576, "GPU": 2, "Architecture": "amd64"}
    with pytest.raises(recorder.RecordError):
        recorder.resource_skus(SKUS_GO.replace('InstanceType: "Standard_X4_v9"', 'InstanceType: "Standard_Z"'))
    assert recorder.go_bool_map(GRID_GO, "ConvergedGPUDriverSizes") == ["standard_x4_v9"]
    with pytest.raises(recorder.RecordError):
        recorder.go_bool_map(GRID_GO, "Missing")


def _git_repo(path, files: dict[str, str], date: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "files"]):
        subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=path, env=env, check=True)
    return str(path / ".git")


@pytest.fixture
def sources(tmp_path, monkeypatch):
    monkeypatch.setattr(recorder, "PAGES", ("example-series.md",))
    monkeypatch.setattr(recorder, "OTHER_SIZES", ())
    page = f"{recorder.PAGE_DIR}/example-series.md"
    include = f"{recorder.PAGE_DIR}/includes/example-series-specs.md"
    (tmp_path / "docs").mkdir()
    (tmp_path / "skus").mkdir()
    (tmp_path / "grid").mkdir()
    return {
        "docs": _git_repo(tmp_path / "docs", {page: PAGE, include: SPECS}, "2026-01-02T03:04:05+00:00"),
        "skus": _git_repo(tmp_path / "skus", {recorder.SKU_PATH: SKUS_GO}, "2026-02-03T04:05:06+00:00"),
        "grid": _git_repo(tmp_path / "grid", {recorder.GRID_PATH: GRID_GO}, "2026-03-04T05:06:07+00:00"),
        "page": page, "include": include, "tmp": tmp_path,
    }


def test_recording_from_git_names_each_file_s_commit_and_date(sources):
    out = sources["tmp"] / "sizes.json"
    assert recorder.main(["--docs-git", sources["docs"], "--autoscaler-git", sources["skus"],
                          "--agentbaker-git", sources["grid"], "--out", str(out), "--today", "2026-11-26"]) == 0
    data = json.loads(out.read_text())
    assert data["rows"] == [["Standard_X4_v9", "example-series.md", 4, 30.5, "1/4", 12],
                            ["Standard_X64_v9", "example-series.md", 64, 1024, 2, 96]]
    assert data["gpu_model"] == {"example-series.md": "Example GPU (48GB)"}
    meta = data["size_pages"]["pages"]["example-series.md"]
    assert meta["path"] == sources["page"] and meta["committed"] == "2026-01-02T03:04:05+00:00"
    assert meta["specs_include"]["path"] == sources["include"] and data["size_pages"]["read_from"] == "git"
    assert data["commits"] == {"example-series.md": meta["commit"]} and len(meta["commit"]) == 40
    assert data["resource_skus"]["rows"] == [["Standard_X4_v9", "standardXv9Family", 4, 30720, 1],
                                             ["Standard_X64_v9", "standardXv9Family", 64, 1048576, 2]]
    assert data["resource_skus"]["committed"] == "2026-02-03T04:05:06+00:00"
    assert data["grid_driver_sizes"]["sizes"] == ["standard_x4_v9"]
    assert (data["recorded_by"], data["recorded_on"]) == (recorder.TOOL, "2026-11-26")
    assert '["Standard_X4_v9", "example-series.md", 4, 30.5, "1/4", 12]' in out.read_text()


def test_recording_from_copies_names_each_file_s_commit_without_a_date(sources):
    copies = sources["tmp"] / "copies"
    for path, commit in ((sources["page"], "a" * 40), (sources["include"], "b" * 40)):
        (copies / commit / path).parent.mkdir(parents=True)
        (copies / commit / path).write_text(PAGE if path == sources["page"] else SPECS)
    out = sources["tmp"] / "sizes.json"
    assert recorder.main(["--docs-copies", str(copies), "--autoscaler-git", sources["skus"],
                          "--agentbaker-git", sources["grid"], "--out", str(out)]) == 0
    meta = json.loads(out.read_text())["size_pages"]["pages"]["example-series.md"]
    assert (meta["commit"], meta["committed"], meta["specs_include"]["commit"]) == ("a" * 40, None, "b" * 40)


def test_a_size_missing_from_the_sku_table_stops_the_recording(sources, capsys):
    out = sources["tmp"] / "sizes.json"
    bare = _git_repo(sources["tmp"] / "skus", {recorder.SKU_PATH: SKUS_GO.split('\t"Standard_X64_v9"')[0] + "}\n"},
                     "2026-02-04T00:00:00+00:00")
    assert recorder.main(["--docs-git", sources["docs"], "--autoscaler-git", bare,
                          "--agentbaker-git", sources["grid"], "--out", str(out)]) == 1
    assert "Standard_X64_v9 is not in" in capsys.readouterr().err and not out.exists()


def test_two_copies_of_one_file_stop_the_recording(tmp_path):
    for commit in ("a" * 40, "b" * 40):
        (tmp_path / commit / "x.md").parent.mkdir(parents=True)
        (tmp_path / commit / "x.md").write_text("x")
    with pytest.raises(recorder.RecordError, match="copies at"):
        recorder.CopiedTree(str(tmp_path))
