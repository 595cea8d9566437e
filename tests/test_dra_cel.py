"""The DRA CEL environment: Kubernetes' quantity/semver libraries and device selectors.

Expected values come from Kubernetes' own documentation and tests
(k8s.io/apiserver/pkg/cel/library/quantity.go, semverlib.go and their
_test.go files; k8s.io/dynamic-resource-allocation/cel/compile.go).
"""

from __future__ import annotations

import copy
import math

import pytest
from gpu_fungibility import dra_cel
from gpu_fungibility.dra_cel import CelCompileError, CelEvaluationError, Device, Quantity, Semver, evaluate, matches


def cel(expression: str):
    return evaluate(expression)


# ---------------------------------------------------------------- quantity()

@pytest.mark.parametrize("expression, expected", [
    # quantity_test.go
    ('isQuantity("20")', True),
    ('isQuantity("20M")', True),
    ('isQuantity("20Mi")', True),
    ('isQuantity("20Mo")', False),
    ('isQuantity("10Mm")', False),
    ('quantity("200M") == quantity("200M")', True),
    ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True),
    ('quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") '
     '&& quantity("0.002G") == quantity("2000k")', True),
    ('quantity("200M") == quantity("0.3G")', False),
    ('quantity("50M").isLessThan(quantity("50Mi"))', True),
    ('quantity("50M").isLessThan(quantity("100M"))', True),
    ('quantity("100M").isLessThan(quantity("50M"))', False),
    ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
    ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', True),
    ('quantity("50M").isGreaterThan(quantity("100M"))', False),
    ('quantity("200M").compareTo(quantity("0.2G"))', 0),
    ('quantity("50M").compareTo(quantity("50Mi"))', -1),
    ('quantity("50Mi").compareTo(quantity("50M"))', 1),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
    ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
    ('quantity("50k").sub(20) == quantity("49980")', True),
    ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
    ('quantity("50k").asInteger()', 50000),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    ('quantity("50").isInteger()', True),
    ('quantity("50.703k").asApproximateFloat()', 50703.0),
    # quantity.go doc comments
    ('isQuantity("1.3G")', True),
    ('isQuantity("1.3Gi")', True),
    ('isQuantity("1,3G")', False),
    ('isQuantity("10000k")', True),
    ('isQuantity("200K")', False),
    ('isQuantity("Three")', False),
    ('quantity("50000000G").isInteger()', True),
    ('quantity("50k").isInteger()', True),
    ('quantity("50k").asInteger() == 50000', True),
    ('quantity("50k").sub(20000).asApproximateFloat() == 30000.0', True),
    ('quantity("50k").add(20) == quantity("50020")', True),
    ('quantity("50k").sub(20000) == quantity("30k")', True),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000) == quantity("20")', True),
])
def test_quantity_library_matches_kubernetes_examples(expression, expected):
    assert cel(expression) == expected


@pytest.mark.parametrize("expression, message", [
    ('quantity("10Mo")', "quantities must match the regular expression"),
    ('quantity("10Mm")', "unable to parse quantity's suffix"),
    ('quantity("200K")', "unable to parse quantity's suffix"),
    ('quantity("Three")', "quantities must match the regular expression"),
    ('quantity("9999999999999999999999999999999999999G").asInteger()', "cannot convert value to integer"),
    ('quantity("")', "quantities must match"),
])
def test_quantity_runtime_errors_use_kubernetes_messages(expression, message):
    with pytest.raises(CelEvaluationError, match=message.replace("(", r"\(")):
        cel(expression)


@pytest.mark.parametrize("text, value", [
    ("80Gi", 80 * 2**30),
    ("81559Mi", 81559 * 2**20),
    ("1Ki", 1024),
    ("1Ei", 2**60),
    ("1.5Gi", 3 * 2**29),
    ("500m", 0.5),
    ("1n", 1e-9),
    ("1u", 1e-6),
    ("2k", 2000),
    ("3M", 3e6),
    ("4G", 4e9),
    ("5T", 5e12),
    ("6P", 6e15),
    ("7E", 7e18),
    ("1e3", 1000),
    ("1E3", 1000),
    ("12e-3", 0.012),
    ("+1.5", 1.5),
    ("-2Ki", -2048),
    (".5", 0.5),
    ("0.1n", 1e-9),  # rounded up to one nano
    ("-0.1n", -1e-9),  # away from zero
])
def test_quantity_parses_every_format_by_value(text, value):
    assert math.isclose(float(Quantity.parse(text).value), value, rel_tol=1e-15)


def test_quantity_equality_is_by_value_across_formats():
    assert cel("quantity('80Gi') == quantity('85899345920')")
    assert cel("quantity('1Gi') == quantity('1073741824')")
    assert cel("quantity('1k') == quantity('1e3')")
    assert not cel("quantity('1Gi') == quantity('1G')")
    # an H100 80GB publishes 81559Mi: an exact 80Gi selector misses it
    assert not cel("quantity('81559Mi') == quantity('80Gi')")


def test_quantity_integer_form_follows_kubernetes_representation():
    # fractional binary values take the arbitrary-precision path: not "integer" for CEL
    assert not cel("quantity('1.5Gi').isInteger()")
    assert cel("quantity('1.5Gi') == quantity('1536Mi')")
    assert not cel("quantity('1500m').isInteger()")  # negative scale is never reduced
    assert cel("quantity('1k').asInteger()") == 1000


def test_quantity_sign_and_binary_cap():
    assert cel("sign(quantity('-5'))") == -1
    assert cel("sign(quantity('0'))") == 0
    assert cel("quantity('2').sign()") == 1
    assert Quantity.parse("99999999999999999999Ei").value == 2**63 - 1


# ---------------------------------------------------------------- semver()

@pytest.mark.parametrize("expression, expected", [
    ('isSemver("1.2.3-beta.1+build.1")', True),
    ('isSemver("")', False),
    ('isSemver("v1.0.0")', False),
    ('isSemver(" 1.0.0")', False),
    ('isSemver("1. 0.0")', False),
    ('isSemver("1.0.0 ")', False),
    ('isSemver("01.01.01")', False),
    ('isSemver("1")', False),
    ('isSemver("1.1")', False),
    ('isSemver("", true)', False),
    ('isSemver(" 1.0.0", true)', False),
    ('isSemver("1. 0.0", true)', False),
    ('isSemver("1.0.0 ", true)', False),
    ('isSemver("v1.0.0", true)', True),
    ('isSemver("01.01.01", true)', True),
    ('isSemver("1", true)', True),
    ('isSemver("1.1", true)', True),
    ('semver("v01.01", true) == semver("1.1.0")', True),
    ('semver("1.2.3") == semver("1.2.3")', True),
    ('semver("1.2.3") == semver("1.0.0")', False),
    ('semver("1.0.0").isLessThan(semver("1.2.3"))', True),
    ('semver("1.0.0").isLessThan(semver("1.0.0"))', False),
    ('semver("1.2.3").isGreaterThan(semver("1.0.0"))', True),
    ('semver("1.0.0").isGreaterThan(semver("1.0.0"))', False),
    ('semver("1.2.3").compareTo(semver("1.2.3"))', 0),
    ('semver("1.0.0").compareTo(semver("1.2.3"))', -1),
    ('semver("1.2.3").compareTo(semver("1.0.0"))', 1),
    ('semver("1.2.3").compareTo(semver("0.1.2"))', 1),
    ('semver("1.2.3").compareTo(semver("2.0.0"))', -1),
    ('semver("1.2.3").major()', 1),
    ('semver("1.2.3").minor()', 2),
    ('semver("1.2.3").patch()', 3),
    ('semver("1.0", true) == semver("1.0.0")', True),
    # semver.org precedence: pre-releases sort before the release, numerics before strings
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    ('semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta"))', True),
    ('semver("1.0.0-beta.2").isLessThan(semver("1.0.0-beta.11"))', True),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0-alpha.1"))', True),
    ('semver("1.0.0+build.1") == semver("1.0.0+build.2")', True),
])
def test_semver_library_matches_kubernetes_examples(expression, expected):
    assert cel(expression) == expected


def test_semver_parse_errors_use_blang_messages():
    with pytest.raises(CelEvaluationError, match="No Major.Minor.Patch elements found"):
        cel('semver("v1.0")')
    with pytest.raises(CelEvaluationError):
        cel('semver("Three")')


# ---------------------------------------------------------------- the DRA environment

A100 = {
    "name": "gpu-0",
    "attributes": {
        "architecture": {"string": "Ampere"},
        "brand": {"string": "Nvidia"},
        "cudaComputeCapability": {"version": "8.0.0"},
        "driverVersion": {"version": "580.126.20"},
        "productName": {"string": "NVIDIA A100-SXM4-80GB"},
        "resource.kubernetes.io/pciBusID": {"string": "0000:00:05.0"},
        "type": {"string": "gpu"},
        "uuid": {"string": "GPU-e89d84ee-93b4-a63d-ac3f-8c242831ac09"},
        "index": {"int": 0},
        "migCapable": {"bool": True},
    },
    "capacity": {"memory": {"value": "80Gi"}},
}


@pytest.fixture()
def a100() -> Device:
    return Device.from_slice_device("gpu.nvidia.com", A100)


def test_slice_device_names_are_qualified_with_the_driver(a100):
    assert a100.attributes["gpu.nvidia.com"]["productName"] == "NVIDIA A100-SXM4-80GB"
    assert a100.attributes["resource.kubernetes.io"]["pciBusID"] == "0000:00:05.0"
    assert a100.attributes["gpu.nvidia.com"]["driverVersion"] == Semver.parse("580.126.20")
    assert a100.capacity["gpu.nvidia.com"]["memory"] == Quantity.parse("85899345920")


@pytest.mark.parametrize("expression, expected", [
    ("device.capacity['gpu.nvidia.com'].memory == quantity('80Gi')", True),  # seed 000
    ("device.capacity['gpu.nvidia.com'].memory == quantity('40Gi')", False),
    ("device.driver == 'gpu.nvidia.com' && "
     "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0", True),
    ("device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'", True),  # seed 002
    ("device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))", True),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.major() >= 8", True),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.isLessThan(semver('9.0.0'))", True),
    ("device.attributes['resource.kubernetes.io'].pciBusID.startsWith('0000:')", True),
    ("device.attributes['gpu.nvidia.com'].index == 0 && device.attributes['gpu.nvidia.com'].migCapable", True),
    ("'profile' in device.attributes['gpu.nvidia.com']", False),
    ("has(device.attributes['gpu.nvidia.com'].productName)", True),
    ("device.driver == 'tpu.google.com' && device.attributes['tpu.google.com'].x == 1", False),
])
def test_selectors_against_a_published_device(a100, expression, expected):
    assert matches(expression, a100) is expected


def test_a_missing_attribute_is_a_runtime_error_not_false(a100):
    # Kubernetes' allocator returns "CEL runtime error" and scheduling of the pod aborts.
    with pytest.raises(CelEvaluationError, match="no such key: profile"):
        matches("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'", a100)
    # an unknown domain reads as an empty map, so the error is about the key
    with pytest.raises(CelEvaluationError, match="no such key"):
        matches("device.attributes['dra.example.com'].x == 1", a100)


def test_non_bool_result_is_a_runtime_error(a100):
    with pytest.raises(CelEvaluationError, match="could not be converted to bool"):
        matches("device.attributes['gpu.nvidia.com'].productName", a100)


@pytest.mark.parametrize("expression, message", [
    ("device.capacity['gpu.nvidia.com'].memory >= quantity('40Gi')", "no matching overload for '_>=_'"),
    ("semver('1.0.0') < semver('2.0.0')", "no matching overload for '_<_'"),
    ("device.capacity['gpu.nvidia.com'].memory == '80Gi'", "no matching overload for '_==_'"),
    ("quantity('1') + quantity('2') == quantity('3')", "no matching overload for '_\\+_'"),
    ("quantity(1) == quantity('1')", "no matching overload for 'quantity'"),
    ("quantity('1').major() == 1", "no matching overload for 'major'"),
    ("device.gpu == 1", "undefined field 'gpu'"),
    ("gpu.memory == 1", "undeclared reference to 'gpu'"),
    ("device.attributes['gpu.nvidia.com'].productName.lowerAscii(1) == 'x'", "no matching overload for 'lowerAscii'"),
    ("device.attributes['gpu.nvidia.com'].productName.find('A100') == 'A100'", "'find' is not provided"),
    ("cel.bind(g, device.attributes['gpu.nvidia.com'], g.type == 'gpu')", "cel.bind"),
    ("device.driver", "must evaluate to bool"),
    ("device.driver == ", "syntax error"),
    ("", "empty"),
])
def test_compile_errors_are_reported_with_a_clear_message(expression, message):
    with pytest.raises(CelCompileError, match=message):
        dra_cel.compile_expression(expression)


def test_functions_this_engine_lacks_are_unsupported_not_invalid():
    with pytest.raises(dra_cel.CelUnsupportedError):
        dra_cel.compile_expression("cel.bind(g, device.attributes['gpu.nvidia.com'], g.type == 'gpu')")
    with pytest.raises(CelCompileError) as invalid:
        dra_cel.compile_expression("device.capacity['gpu.nvidia.com'].memory >= quantity('40Gi')")
    assert not isinstance(invalid.value, dra_cel.CelUnsupportedError)


@pytest.mark.parametrize("expression", [
    "'NVIDIA A100-SXM4-80GB'.lowerAscii() == 'nvidia a100-sxm4-80gb'",
    "'nvidia'.upperAscii() == 'NVIDIA'",
    "'a,b,c'.split(',') == ['a', 'b', 'c'] && 'a,b,c'.split(',', 2) == ['a', 'b,c']",
    "'hello'.indexOf('l') == 2 && 'hello'.lastIndexOf('l') == 3 && 'hello'.indexOf('l', 3) == 3",
    "'hello'.substring(1, 3) == 'el' && 'hello'.substring(3) == 'lo' && 'hello'.charAt(1) == 'e'",
    "'  x '.trim() == 'x' && 'aaa'.replace('a', 'b', 2) == 'bba' && ['a', 'b'].join('-') == 'a-b'",
])
def test_strings_extension_of_the_kubernetes_environment(expression):
    assert cel(expression) == True  # noqa: E712 (a CEL bool)


def test_macros_bind_their_variable(a100):
    assert matches("['Ampere', 'Hopper'].exists(a, device.attributes['gpu.nvidia.com'].architecture == a)", a100)


def test_programs_are_cached_by_expression_text():
    first = dra_cel.compile_expression("device.driver == 'gpu.nvidia.com'")
    assert dra_cel.compile_expression("device.driver == 'gpu.nvidia.com'") is first


def test_malformed_slice_entries_are_refused():
    with pytest.raises(ValueError, match="parse semantic version"):
        Device.from_slice_device("gpu.nvidia.com", {"attributes": {"driverVersion": {"version": "580.126"}}})
    with pytest.raises(ValueError, match="capacity memory"):
        Device.from_slice_device("gpu.nvidia.com", {"capacity": {"memory": {"value": "80GB"}}})


# ---------------------------------------------------------------- sharing results between equal devices

def _gpu(uuid: str, memory: str = "80Gi", product: str = "NVIDIA A100-SXM4-80GB") -> Device:
    entry = copy.deepcopy(A100)
    entry["attributes"]["uuid"] = {"string": uuid}
    entry["attributes"]["productName"] = {"string": product}
    entry["capacity"]["memory"] = {"value": memory}
    return Device.from_slice_device("gpu.nvidia.com", entry)


@pytest.mark.parametrize("expression, paths", [
    ("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
     (("device", "attributes", "gpu.nvidia.com", "type"), ("device", "driver"))),
    ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
     (("device", "capacity", "gpu.nvidia.com", "memory"),)),
    ("'profile' in device.attributes['gpu.nvidia.com']", (("device", "attributes", "gpu.nvidia.com"),)),
    ("size(device.attributes) > 0", (("device",),)),
])
def test_programs_know_which_device_paths_they_read(expression, paths):
    assert dra_cel.compile_expression(expression).device_paths == paths


def test_devices_that_agree_on_what_a_selector_reads_share_its_result():
    product = dra_cel.compile_expression("device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'")
    uuid = dra_cel.compile_expression("device.attributes['gpu.nvidia.com'].uuid == 'GPU-1'")
    domain = dra_cel.compile_expression("'uuid' in device.attributes['gpu.nvidia.com']")
    one, two = _gpu("GPU-1"), _gpu("GPU-2")
    assert one.fingerprint(product) == two.fingerprint(product)
    assert one.fingerprint(uuid) != two.fingerprint(uuid)
    assert one.fingerprint(domain) != two.fingerprint(domain)  # the whole domain holds the uuid
    assert _gpu("GPU-1", product="NVIDIA H100 80GB HBM3").fingerprint(product) != one.fingerprint(product)
    memory = dra_cel.compile_expression("device.capacity['gpu.nvidia.com'].memory == quantity('80Gi')")
    assert one.fingerprint(memory) == _gpu("GPU-3", memory="81920Mi").fingerprint(memory)
    assert one.fingerprint(memory) != _gpu("GPU-3", memory="81559Mi").fingerprint(memory)


def test_huge_exponents_are_refused_instead_of_hanging():
    with pytest.raises(CelEvaluationError, match="exponent 999999999 is beyond"):
        cel("quantity('1e999999999') == quantity('1')")
    assert cel("quantity('1e4096').isGreaterThan(quantity('1e4095'))")


def test_comparing_a_version_attribute_with_a_string_is_a_runtime_error(a100):
    # attributes are dyn at compile time; Kubernetes' Semver.Equal has no overload for a string
    with pytest.raises(CelEvaluationError, match=r"no matching overload for '_==_' applied to "
                                                 r"'\(kubernetes.Semver, string\)'"):
        matches("device.attributes['gpu.nvidia.com'].driverVersion == '580.126.20'", a100)
