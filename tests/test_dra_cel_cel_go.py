"""The DRA CEL engine as cel-go and Kubernetes' DRA CEL environment evaluate and check selectors.

Sources (Kubernetes v1.35.4 builds with cel-go v0.26): cel-go's heterogeneous equality (common/types: ``Equal``
of int, uint, double, bool, string; the cel-spec conformance tables tests/simple/testdata/comparisons.textproto:
``1 == 1.0`` is true when checking is off and "no matching overload" when it is on); Kubernetes' base environment
(k8s.io/apiserver/pkg/cel/environment/base.go: CrossTypeNumericComparisons, OptionalTypes, the sets library, the
regex-literal and homogeneous-aggregate-literal validators); its own types (k8s.io/apiserver/pkg/cel/semver.go
and quantity.go: ``Equal`` with another type is "no such overload"; library/quantity.go: ``sign`` is a global
function). The reduced case tests/fixtures/differential/reduced-cel-cross-types.json is kube-scheduler
v1.35.4's own answer to the runtime cases below; reduced-admission.json the API server's to the refusals.
"""

import pytest
from gpu_fungibility.dra_cel import CelCompileError, CelEvaluationError, Device, Quantity, Semver, matches

from policies.cel import compile_error

NIC = "nic.example.com"
A = f"device.attributes['{NIC}']"


@pytest.fixture
def nic():
    return Device(NIC, {NIC: {"index": 1, "model": "cx7", "speed": 200, "sriov": True,
                              "firmware": Semver.parse("2.1.0")}}, {NIC: {"bandwidth": Quantity.parse("200G")}})


@pytest.mark.parametrize("expression, expected", [
    # heterogeneous equality: values of two types are not equal (numbers compare by value)
    (f"{A}.model == 100", False),
    (f"{A}.model != 100", True),
    (f"{A}.sriov == 1", False),
    (f"{A}.index == 1.0", True),
    (f"{A}.index == 1u", True),
    (f"{A}.index != 'one'", True),
    (f"'2.1.0' == {A}.firmware", False),  # string.Equal(version): false
    (f"{A}.firmware != '2.1.0'", True),  # evalNe: Equal(version, string) is an error, and not true
    (f"{A}.index in [0, 1, 2]", True),
    (f"{A}.model in ['cx6', 'e810']", False),
    # cross-type numeric ordering
    (f"{A}.index < 1.5", True),
    (f"{A}.index >= 2u", False),
    (f"{A}.speed > 100.0", True),
    (f"{A}.speed <= 200u", True),
    # optional fields and the sets library
    (f"{A}.?model.orValue('none') == 'cx7'", True),
    (f"{A}.?vendor.orValue('none') == 'none'", True),
    (f"{A}.?vendor.hasValue()", False),
    (f"sets.contains(['cx6', 'cx7'], [{A}.model])", True),
    (f"sets.intersects([{A}.model], ['e810'])", False),
    (f"sets.equivalent([{A}.model, 'cx7'], ['cx7'])", True),
    (f"sign(device.capacity['{NIC}'].bandwidth) == 1", True),
    (f"{A}.firmware == semver('2.1.0')", True),
])
def test_what_cel_go_answers(nic, expression, expected):
    assert compile_error(expression) is None
    assert matches(expression, nic) is expected


@pytest.mark.parametrize("expression, error", [
    (f"{A}.firmware == '2.1.0'", r"no matching overload for '_==_' applied to '\(kubernetes.Semver, string\)'"),
    (f"string({A}.firmware) == '2.1.0'", r"no matching overload for 'string' applied to '\(kubernetes.Semver\)'"),
    (f"{A}.model < 1", r"no matching overload for '_<_' applied to '\(string, int\)'"),
    (f"{A}.?vendor.value() == 'x'", "optional.none"),
])
def test_runtime_errors_where_cel_go_has_no_overload(nic, expression, error):
    with pytest.raises(CelEvaluationError, match=error):
        matches(expression, nic)


@pytest.mark.parametrize("expression, reason", [
    ("device.capacity['gpu.nvidia.com'].memory.sign() == 1", "no matching overload for 'sign'"),
    ("device.attributes['gpu.nvidia.com'].productName.matches('[')", "error parsing regexp"),
    ("matches(device.attributes['gpu.nvidia.com'].productName, '(')", "error parsing regexp"),
    ("device.attributes['gpu.nvidia.com'].productName in ['NVIDIA L4', 1]", "expected type 'string' but found 'int'"),
    ("1 == 1.0", "no matching overload for '_==_' applied to '(int, double)'"),
    ("string(semver('1.0.0')) == '1.0.0'", "no matching overload for 'string'"),
])
def test_what_the_api_server_refuses(expression, reason):
    with pytest.raises(CelCompileError):
        matches(expression, Device("gpu.nvidia.com", {}, {}))
    assert reason in compile_error(expression)


@pytest.mark.parametrize("expression", [
    "device.attributes['gpu.nvidia.com'].productName.matches('^NVIDIA (L4|H100)')",
    "1 < 1.5", "2u >= 1", "[1, 2] == [1, 2]", "'sets.contains(' == 'x.?y'",
])
def test_what_the_api_server_accepts(expression):
    assert compile_error(expression) is None
