"""One decoding of a resource's properties per analyzer call, shared by every policy of the pack.

The Python policy runtime (pulumi-policy 1.21, ``policy.py``, ``Analyze`` and ``AnalyzeStack``) decodes a
resource's properties again for each policy: ``json_format.MessageToDict``, ``deserialize_properties``,
``unknown_checking_proxy``, and builds its options and provider, once per policy and resource. With this
pack's policies, most of them over the whole stack, that decoding was most of the pack's time on a large
preview (about 1 ms per resource and stack policy for a Deployment), and grew with the number of policies as
well as with the stack.

:func:`install` keeps, for the length of one ``Analyze`` or ``AnalyzeStack`` call, what those functions (and
the servicer's ``_get_resource_options`` and ``_get_provider_resource``) returned for each input object, so
the second and later policies get the very same decoded properties (:mod:`policies.call_cache`, whose
:func:`shared` the pack's own conversions, such as ``stack_view.plain``, use too). Nothing changes in what a
policy sees: the same values, which are read-only (the rules copy them with ``plain``; a write through a
proxy fails the call, and :mod:`policies.read_only` checks every shared value when asked).

It patches private names of one pulumi-policy minor (:data:`TESTED_MINOR`, the minor the pack's pins name):
on another version, or a layout without these names, nothing is installed, a line on stderr says why, and
the pack runs on the runtime as it ships.

Three more things the runtime repeats, done once here (each keeps what a policy is given):

- ``AnalyzeStack`` built the stack's resources (a ``PolicyResource`` each, linked to its parent and
  dependencies) again for every stack policy; :func:`_analyze_stack` builds them once per call and hands every
  stack policy the same list, in the same order, with the same links.
- ``unknown_checking_proxy`` copied the whole property tree into proxies up front; :class:`_LazyDict` and
  :class:`_LazyList` (the runtime's proxy classes, so ``isinstance`` still holds) wrap a value when it is read,
  raising the same ``UnknownValueError`` with the same path; ``["__target"]`` is the plain value.
- ``deserialize_properties(MessageToDict(...))`` walked each property tree twice;
  :func:`policies.decoding.decode_struct` does both in one walk (a map with Pulumi's signature key, a secret
  or an asset, is handed to the runtime's own deserializer, so it comes out as before).

And one thing the runtime does not offer: answering many ``Analyze`` requests in one call. The Analyzer
service has one call per resource, and each costs the Python gRPC server and client about half a millisecond
of CPU, several times what the pack's resource policies take. :func:`install` adds a second service beside
the Analyzer one, ``gpu_fungibility.policy.AnalyzerBatch/Analyze`` (:mod:`policies.wire`): its request is
``AnalyzeRequest`` messages framed one after the other (protobuf field 1, length-delimited, as a ``repeated``
field is encoded), each handed to the servicer's own ``Analyze`` exactly as a single call would hand it; its
reply is, in the same order, each ``AnalyzeResponse`` (field 1) or the error that request raised (field 2, text,
its traceback written to stderr as the gRPC server writes one). The engine never calls it; policy_gate does
when a pack offers it, and falls back to one call per resource when it does not.

``GPU_FUNGIBILITY_GENERIC_POLICY_RUNTIME=1`` in the pack's environment leaves the runtime as it ships (a
way to rule this module out). tests/test_policy_runtime.py holds both to byte-identical answers through the
gate, and tests/engine/test_policy_runtime_engine.py to the same policy events under ``pulumi preview``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

# The rules take ``shared`` from call_cache itself; these names stay importable from here.
from .call_cache import current, memoized, memoized_method, one_cache_per_call, shared, watch
from .decoding import decode_struct, is_struct, struct_to_dict
from .read_only import CHECK_ENV, READ_ONLY
from .wire import BATCH_SERVICE, ERROR_FIELD, REPLY_FIELD, frame, read_frames

_MARK = "_gpu_fungibility_shared_decoding"
_NEEDED = ("json_format", "deserialize_properties", "unknown_checking_proxy", "_PolicyAnalyzerServicer")
#: The servicer's per-resource helpers (options, provider), also called once per policy and resource.
_PER_RESOURCE = ("_get_resource_options", "_get_provider_resource")


def _provider_by_content(method: Callable[..., Any]) -> Callable[..., Any]:
    """``_get_provider_resource`` decoding each distinct provider once per call, whichever resource carries it.

    Every resource of a request carries its provider's whole resource (type, URN, name, properties); a stack
    has a handful of providers, so AnalyzeStack decoded the same provider properties once per resource. The
    same bytes give the same provider, which the policies only read.
    """
    @functools.wraps(method)
    def wrapper(self: Any, message: Any) -> Any:
        cache = current()
        if cache is None or not message.HasField("provider"):
            return method(self, message)
        key = ("provider", message.provider.SerializeToString(deterministic=True))
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = (method(self, message),)
            watch("_get_provider_resource", hit[0])
        return hit[0]

    return wrapper


class _Pending:
    """``MessageToDict`` of a Struct within a call, not converted yet: ``deserialize_properties`` decodes it."""

    __slots__ = ("message",)

    def __init__(self, message: Any) -> None:
        self.message = message


class _JsonFormat:
    """The runtime's ``json_format`` module whose ``MessageToDict`` leaves a Struct to be decoded in one walk.

    Inside ``Analyze`` and ``AnalyzeStack`` the runtime only ever passes ``MessageToDict``'s result to
    ``deserialize_properties``; for a Struct it gets a :class:`_Pending`, which that function (wrapped by
    :func:`_deserializing`) decodes with :func:`decode_struct`, once per message and call. Outside a call, or
    with the printer's options, the conversion is the printer's (a Struct's by :func:`struct_to_dict`).
    """

    def __init__(self, module: Any) -> None:
        self._module = module
        self._generic = module.MessageToDict

    def _convert(self, message: Any, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs and is_struct(message):
            return struct_to_dict(message)
        return self._generic(message, *args, **kwargs)

    def MessageToDict(self, message: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 (the module's name)
        if current() is None or args or kwargs or not is_struct(message):
            return self._convert(message, *args, **kwargs)
        return _Pending(message)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


def _deserializing(function: Callable[..., Any], special: Callable[[Any], Any]) -> Callable[..., Any]:
    decode = functools.partial(decode_struct, special=special)

    @functools.wraps(function)
    def wrapper(value: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(value, _Pending):
            return function(value, *args, **kwargs)
        if args or kwargs:
            return function(struct_to_dict(value.message), *args, **kwargs)
        return shared(decode, value.message)

    return wrapper


# ---- proxies made when read -------------------------------------------------------------------------------


def _lazy_proxies() -> tuple[type, type, Callable[[Any], Any]]:
    """The runtime's ``_DictProxy`` and ``_ListProxy``, wrapping each value when it is read, and the function
    that wraps a property tree (``unknown_checking_proxy``'s answer, made lazily).

    The runtime's proxy copies the whole tree into proxies first: each map and list, with the path to it, for
    every resource of every call, whether a policy reads it or not. These proxies hold the plain tree and
    make a child's proxy (with the same path) when it is read, so a read returns what the runtime's would, and
    an unknown value raises the same ``UnknownValueError`` naming the same path.
    """
    from pulumi_policy.proxy import UnknownValueError, _DictProxy, _is_unknown, _ListProxy

    def wrap(value: Any, path: list[str]) -> Any:
        if isinstance(value, list):
            return LazyList(value, path)
        if isinstance(value, dict):
            return LazyDict(value, path)
        return value

    def read(value: Any, path: list[str], key: Any, index: Any = None) -> Any:
        """A read of ``key``: the error names the key as asked, a child's path its place (a list's index
        from the start, as the runtime's copy numbers it)."""
        if _is_unknown(value):
            raise UnknownValueError(value, [*path, str(key)])
        return wrap(value, [*path, str(key if index is None else index)])

    class LazyDict(_DictProxy):
        __slots__ = ("_target", "_path")

        def __init__(self, target: dict[str, Any], path: list[str]) -> None:
            super().__init__(target, path)
            self._target, self._path = target, path

        def __getitem__(self, key: Any) -> Any:
            if key == "__target":
                return self._target
            return read(self._target[key], self._path, key)

        def __setitem__(self, key: Any, value: Any) -> None:
            if current() is not None:  # shared by every policy of the call
                raise TypeError(f"{READ_ONLY} (setting {'.'.join([*self._path, str(key)])})")
            self._target[key] = value

    class LazyList(_ListProxy):
        __slots__ = ("_target", "_path")

        def __init__(self, target: list[Any], path: list[str]) -> None:
            super().__init__(target, path)
            self._target, self._path = target, path

        def __getitem__(self, key: Any) -> Any:
            if key == "__target":
                return self._target
            if isinstance(key, slice):  # a plain list, as the runtime's (its unknown values left in it)
                return [wrap(self._target[i], [*self._path, str(i)]) for i in range(*key.indices(len(self._target)))]
            value = self._target[key]
            return read(value, self._path, key, key if key >= 0 else key + len(self._target))

    return LazyDict, LazyList, lambda props: wrap(props, [])


#: The servicer's private state the stack-once ``AnalyzeStack`` reads (pulumi-policy 1.21 sets them in __init__).
_SERVICER_STATE = ("_PolicyAnalyzerServicer__policies", "_PolicyAnalyzerServicer__stack_tags",
                   "_PolicyAnalyzerServicer__policy_pack_name", "_PolicyAnalyzerServicer__policy_pack_version")


def _analyze_stack(runtime: Any, shipped: Callable[..., Any]) -> Callable[..., Any]:
    """The servicer's ``AnalyzeStack``, the stack's resources built once per call for every stack policy.

    What each stack policy is given is what the runtime gives it: a ``StackValidationArgs`` with every resource
    of the request, in order, as a ``PolicyResource`` whose parent, dependencies and property dependencies are
    the other resources of the request they name; its config and the stack's tags. The runtime builds that
    list again for each policy; here it is built once, before the first enabled stack policy runs, and the
    policies share it (this pack's rules only read it). Levels, violations, ``UnknownValueError`` (an advisory
    "can't run policy ... during preview") and ``not_applicable`` are reported as the runtime reports them.
    """
    from pulumi_policy import EnforcementLevel

    proto = runtime.proto

    def resources_of(servicer: Any, request: Any) -> list[Any]:
        made: list[tuple[Any, Any]] = []
        by_urn: dict[str, Any] = {}
        for item in request.resources:
            props = runtime.unknown_checking_proxy(
                runtime.deserialize_properties(runtime.json_format.MessageToDict(item.properties)))
            resource = runtime.PolicyResource(item.type, props, item.urn, item.name,
                                              servicer._get_resource_options(item),
                                              servicer._get_provider_resource(item), None, [], {})
            made.append((resource, item))
            by_urn[item.urn] = resource
        for resource, item in made:
            if item.parent in by_urn:
                resource.parent = by_urn[item.parent]
            resource.dependencies.extend(by_urn[urn] for urn in item.dependencies if urn in by_urn)
            for key, urns in item.propertyDependencies.items():
                resource.property_dependencies[key] = [by_urn[urn] for urn in urns.urns if urn in by_urn]
        return [resource for resource, _ in made]

    def analyze_stack(self: Any, request: Any, _context: Any) -> Any:
        if not all(hasattr(self, name) for name in _SERVICER_STATE):  # another runtime's layout: its own method
            return shipped(self, request, _context)
        self._configure_runtime_settings()
        response = proto.AnalyzeResponse()
        resources: list[Any] | None = None
        for policy in self._PolicyAnalyzerServicer__policies:
            level = self._get_enforcement_level(policy)
            if level == EnforcementLevel.DISABLED or not isinstance(policy, runtime.StackValidationPolicy):
                continue
            if level == EnforcementLevel.REMEDIATE:  # a stack policy cannot remediate: mandatory
                level = EnforcementLevel.MANDATORY
            report = self._create_report_violation(response, policy.name, policy.description, level,
                                                   policy.severity)
            if resources is None:
                resources = resources_of(self, request)
                watch("the stack's resources", resources)
            args = runtime.StackValidationArgs(resources, self._get_policy_config(policy.name),
                                               self._PolicyAnalyzerServicer__stack_tags)
            _validate(runtime, self, policy, args, report, response)
        return response

    return analyze_stack


def _validate(runtime: Any, servicer: Any, policy: Any, args: Any, report: Any, response: Any) -> None:
    """Run one policy as the runtime does: awaited when it returns an awaitable, an unknown value reported as
    an advisory diagnostic, a policy that declares itself not applicable listed as such."""
    import asyncio
    import inspect

    from pulumi_policy import EnforcementLevel

    proto = runtime.proto
    try:
        result = policy.validate(args, report)
        if inspect.isawaitable(result):
            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(asyncio.Task(result, loop=loop))
            finally:
                loop.close()
    except runtime.UnknownValueError as exc:
        name = servicer._PolicyAnalyzerServicer__policy_pack_name
        version = servicer._PolicyAnalyzerServicer__policy_pack_version
        response.diagnostics.append(proto.AnalyzeDiagnostic(
            policyName=policy.name, policyPackName=name, policyPackVersion=version,
            message=f"can't run policy '{policy.name}' from policy pack '{name}@v{version}' during preview: "
                    f"{exc.message}",
            urn="", description=policy.description,
            enforcementLevel=servicer._map_enforcement_level(EnforcementLevel.ADVISORY)))
    except runtime._NotApplicableError as exc:
        response.not_applicable.append(proto.PolicyNotApplicable(policy_name=policy.name, reason=exc.reason or ""))


def analyze_batch(servicer: Any, data: bytes, context: Any) -> bytes:
    """The batch call: each framed ``AnalyzeRequest`` through ``servicer.Analyze``, in order (see the module)."""
    import sys
    import traceback

    from pulumi.runtime.proto import analyzer_pb2

    replies = []
    for _, payload in read_frames(data):
        try:
            reply = servicer.Analyze(analyzer_pb2.AnalyzeRequest.FromString(payload), context)
        except Exception as exc:  # as the gRPC server does for one call: the traceback on stderr, the text back
            traceback.print_exc(file=sys.stderr)
            replies.append(frame(ERROR_FIELD, f"Exception calling application: {exc}".encode(errors="replace")))
            continue
        replies.append(frame(REPLY_FIELD, reply.SerializeToString()))
    return b"".join(replies)


def _with_batch(add_servicer: Callable[..., Any]) -> Callable[..., Any]:
    """``add_AnalyzerServicer_to_server`` that also serves the batch call for the same servicer."""
    @functools.wraps(add_servicer)
    def add(servicer: Any, server: Any) -> Any:
        import grpc

        added = add_servicer(servicer, server)
        handler = grpc.unary_unary_rpc_method_handler(lambda data, context: analyze_batch(servicer, data, context))
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(BATCH_SERVICE, {"Analyze": handler}),))
        return added

    return add


#: What the stack-once ``AnalyzeStack`` uses of the runtime (pulumi-policy 1.21's policy.py).
_STACK_NEEDED = ("proto", "PolicyResource", "StackValidationArgs", "StackValidationPolicy", "UnknownValueError",
                 "_NotApplicableError", "analyzer_pb2_grpc")
_SERVICER_NEEDED = ("_configure_runtime_settings", "_get_enforcement_level", "_create_report_violation",
                    "_get_policy_config", "_map_enforcement_level", "_get_resource_options", "_get_provider_resource")
#: Set in the pack's environment to leave the runtime as it ships.
GENERIC_RUNTIME_ENV = "GPU_FUNGIBILITY_GENERIC_POLICY_RUNTIME"
#: The pulumi-policy minor whose private internals this module patches and its tests hold to the runtime as
#: it ships. policies/pyproject.toml and pyproject.toml pin the same minor (``~=1.21.0``); another minor
#: gets the runtime as it ships until this module has been reviewed against it (tests/test_policy_runtime.py).
TESTED_MINOR = (1, 21)


def tested_against(version: str) -> bool:
    """Whether ``version`` (``1.21.0``, ``1.21.1rc1``) is of :data:`TESTED_MINOR`."""
    parts = version.split(".")
    if len(parts) < 2 or not parts[0].isdigit():
        return False
    minor = "".join(itertools.takewhile(str.isdigit, parts[1]))
    return bool(minor) and (int(parts[0]), int(minor)) == TESTED_MINOR


def runtime_version() -> str:
    """The installed pulumi-policy's version ('' when its metadata cannot be read)."""
    from importlib import metadata

    try:
        return metadata.version("pulumi-policy")
    except metadata.PackageNotFoundError:
        return ""


def _refuse(why: str) -> bool:
    import sys

    tested = ".".join(map(str, TESTED_MINOR))
    print(f"gpu-fungibility policy pack: {why}; the pack runs on pulumi-policy's runtime as it ships "
          f"(the same verdicts, without the shared decoding or the batch call). policies/runtime.py is tested "
          f"against pulumi-policy {tested}.x: pin pulumi-policy~={tested}.0, or review it for this version.",
          file=sys.stderr, flush=True)
    return False


def install() -> bool:
    """Share decoding in this process's policy runtime. False, the runtime left as it ships, when
    ``GPU_FUNGIBILITY_GENERIC_POLICY_RUNTIME`` asks for that, or (with a line on stderr saying why) when the
    installed pulumi-policy is not of :data:`TESTED_MINOR` or its layout is not the one known."""
    import os

    from pulumi_policy import deserialize
    from pulumi_policy import policy as runtime

    if getattr(runtime, _MARK, False):
        return True
    if os.environ.get(GENERIC_RUNTIME_ENV, "") not in ("", "0"):
        return False
    version = runtime_version()
    if not tested_against(version):
        return _refuse(f"pulumi-policy {version or '(version unknown)'} is not the minor the runtime's patch "
                       "was tested against")
    servicer = runtime._PolicyAnalyzerServicer if hasattr(runtime, "_PolicyAnalyzerServicer") else None
    if (servicer is None or not all(hasattr(runtime, name) for name in (*_NEEDED, *_STACK_NEEDED))
            or not all(hasattr(servicer, name) for name in _SERVICER_NEEDED)
            or not hasattr(deserialize, "_deserialize_property")):
        return _refuse(f"pulumi-policy {version} lacks the private names the runtime's patch replaces")
    runtime.json_format = _JsonFormat(runtime.json_format)
    runtime.deserialize_properties = _deserializing(runtime.deserialize_properties, deserialize._deserialize_property)
    runtime.unknown_checking_proxy = memoized(_lazy_proxies()[2])
    servicer._get_provider_resource = _provider_by_content(servicer._get_provider_resource)
    for name in _PER_RESOURCE:
        setattr(servicer, name, memoized_method(getattr(servicer, name)))
    checked = os.environ.get(CHECK_ENV, "") not in ("", "0")
    servicer.Analyze = one_cache_per_call(servicer.Analyze, checked)
    servicer.AnalyzeStack = one_cache_per_call(_analyze_stack(runtime, servicer.AnalyzeStack), checked)
    services = runtime.analyzer_pb2_grpc
    services.add_AnalyzerServicer_to_server = _with_batch(services.add_AnalyzerServicer_to_server)
    setattr(runtime, _MARK, True)
    return True
