"""Member -> node pool device matching (design §4 item 6).

A member's device requests share one node: each request takes `count` devices of ONE device
kind of the pool that satisfies all its selectors, and a kind's per-node `count` is a budget
shared by every request assigned to it. The assignment is found by an exact search (dynamic
programming over requests x remaining budgets), never greedy first-fit, so overlapping requests
never reject a feasible pool. Among feasible assignments the one resolving the most requests
to DRA devices wins; ties go to the smallest device names in request order. A member with
requests must resolve at least one DRA device on the pool; a member without requests is
claimless and matches any pool at zero cost.

A selector that fails to evaluate on a device does not match it. `validate` refuses, before any
decision, a selector that does not compile or that failed on every device kind it reached in the
fleet (see explain): Kubernetes would fail every claim through it, so it is an invalid selector,
not a scarce device, and the caller keeps what runs.

A `DeviceMatcher` lives for one scheduling pass and memoises everything: selector outcomes per
(device content, expression) -- so identical device kinds across hundreds of clusters cost one
CEL evaluation per selector -- and member results per (requests, pool content); what a pool's and
a device's content are is read once per object for the whole process (kinds.py). A long-running
caller (the function) also shares one bounded `SelectorResults` across passes: a fleet that has
not changed then costs no CEL evaluation at all, which also keeps cel-expr-python's per-call
allocations in Python extension functions from adding up over millions of calls.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from modelplane.devices import library
from modelplane.devices.cel import CelCompileError, CompiledSelector, Outcome, activation, compile_selector
from modelplane.devices.cel import missing_domains as missing_domains_of
from modelplane.devices.explain import failing_everywhere, published, suggestion, why_unmatched
from modelplane.devices.kinds import device_digest, pool_kinds
from modelplane.devices.lookups import Lookups
from modelplane.devices.results import SelectorResults
from modelplane.errors import InvalidNodeSelectorError
from modelplane.model import (
    ClaimKind,
    Cluster,
    Deployment,
    Device,
    DeviceRequest,
    Member,
    NodePool,
    ResolvedDeviceRequest,
)

MAX_SELECTOR_TEXT = 64 * 1024  # characters of distinct selectors per deployment


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberMatch:
    """How a member's device requests resolve on one pool."""

    resolved: tuple[ResolvedDeviceRequest, ...]  # DRA-resolved requests, in the member's request order


_CLAIMLESS = MemberMatch(resolved=())


class DeviceMatcher:
    """Device matching for one scheduling pass, memoised; `results` may outlive the pass."""

    def __init__(self, *, results: SelectorResults | None = None) -> None:
        self._evaluations = 0
        self._pools: dict[int, tuple[NodePool, tuple[Device, ...], int]] = {}
        self._contents: dict[Hashable, int] = {}
        self._values: dict[bytes, dict[str, Any] | str] = {}
        self._activations: dict[tuple[bytes, Lookups], Any] = {}
        self._results = results if results is not None else SelectorResults(max_bytes=1 << 62)
        self._members: dict[tuple[tuple[DeviceRequest, ...], int], MemberMatch | None] = {}

    @property
    def cel_evaluations(self) -> int:
        """CEL evaluations actually performed (memo hits excluded)."""
        return self._evaluations

    def validate(self, deployment: Deployment, clusters: Sequence[Cluster] = ()) -> None:
        """Raise InvalidNodeSelectorError for the first selector that cannot work.

        One that does not compile, or, given the fleet's `clusters`, one that failed to evaluate on
        every device kind it reached: no device anywhere can be allocated through it.
        """
        total = 0
        seen: set[str] = set()
        for engine, member, request in _requests(deployment):
            for index, expression in enumerate(request.selectors, 1):
                if expression not in seen:
                    seen.add(expression)
                    total += len(expression)
                if total > MAX_SELECTOR_TEXT:
                    detail = f"the deployment's distinct selectors total over {MAX_SELECTOR_TEXT} characters"
                    raise _invalid(engine, member, request, detail)
                try:
                    compile_selector(expression)
                except CelCompileError as error:
                    raise _invalid(engine, member, request, error.detail, index) from error
        for engine, member, request in _requests(deployment):
            failure = failing_everywhere(self, request, self.fleet_kinds(clusters))
            if failure is not None:
                kinds = tuple(self.fleet_kinds(clusters))
                hint = suggestion(failure.error, kinds, failure.expression)
                detail = (
                    f"failed to evaluate on every device it reached ({failure.devices} device kinds in the fleet): "
                    f"{failure.error}{hint}; {published(kinds, 'in the fleet')}"
                )
                raise _invalid(engine, member, request, detail, failure.index)

    def fleet_kinds(self, clusters: Sequence[Cluster]) -> Iterator[Device]:
        """The distinct usable device kinds of the clusters, lazily, in (cluster, pool, device) name order."""
        seen: set[bytes] = set()
        contents: set[int] = set()
        for cluster in sorted(clusters, key=lambda c: c.name):
            for pool in sorted(cluster.pools, key=lambda p: p.name):
                pool_kinds, content = self.pool_kinds(pool)
                if content in contents:
                    continue
                contents.add(content)
                for kind in _usable(pool_kinds):
                    key = device_digest(kind)
                    if key not in seen:
                        seen.add(key)
                        yield kind

    def match_member(self, member: Member, pool: NodePool) -> MemberMatch | None:
        """The member's best device assignment on the pool, or None when it cannot be placed there."""
        if not member.device_requests:
            return _CLAIMLESS
        kinds, content = self.pool_kinds(pool)
        key = (member.device_requests, content)
        if key not in self._members:
            self._members[key] = self._match(member.device_requests, kinds)
        return self._members[key]

    def selector_matches(self, selector: CompiledSelector, device: Device) -> bool:
        """Whether the selector holds for the device (an evaluation error does not)."""
        return self.outcome(selector, device) is True

    def outcome(self, selector: CompiledSelector, device: Device) -> Outcome:
        """Memoised evaluation of one selector against one device's content."""
        content = device_digest(device)
        key = content + selector.digest
        result = self._results.get(key)
        if result is None:
            value = self._value(content, device)
            if isinstance(value, str):
                result = value
            else:
                self._evaluations += 1
                missing = missing_domains_of(value, selector.lookups)
                result = selector.evaluate_activation(self._activation(content, value, missing))
            self._results.put(key, result)
        return result

    def unmatched(self, request: DeviceRequest, pools: Iterable[NodePool]) -> str | None:
        """Why no device kind of the pools serves `request` on its own (None when one does), for diagnosis."""
        kinds: dict[bytes, Device] = {}
        for pool in pools:
            for kind in _usable(self.pool_kinds(pool)[0]):
                kinds.setdefault(device_digest(kind), kind)
        return why_unmatched(self, request, tuple(kinds.values()))

    def pool_kinds(self, pool: NodePool) -> tuple[tuple[Device, ...], int]:
        """The pool's device kinds by name and a small id of their content, once per pool object and pass."""
        entry = self._pools.get(id(pool))
        if entry is None or entry[0] is not pool:
            kinds, content = pool_kinds(pool)
            entry = (pool, kinds, self._contents.setdefault(content, len(self._contents)))
            self._pools[id(pool)] = entry
        return entry[1], entry[2]

    def _match(self, requests: tuple[DeviceRequest, ...], kinds: tuple[Device, ...]) -> MemberMatch | None:
        usable = _usable(kinds)
        candidates = tuple(
            tuple(index for index, kind in enumerate(usable) if self._request_fits(request, kind))
            for request in requests
        )
        if not all(candidates):
            return None
        assignment = _best_assignment(
            tuple(request.count for request in requests),
            candidates,
            tuple(kind.count for kind in usable),
            tuple(kind.claim is ClaimKind.DRA for kind in usable),
        )
        if assignment is None:
            return None
        resolved = tuple(
            ResolvedDeviceRequest(
                name=request.name,
                device_class_name=usable[index].device_class_name or "",
                count=request.count,
                selectors=request.selectors,
            )
            for request, index in zip(requests, assignment, strict=True)
            if usable[index].claim is ClaimKind.DRA
        )
        return MemberMatch(resolved=resolved) if resolved else None

    def _request_fits(self, request: DeviceRequest, kind: Device) -> bool:
        if kind.count < request.count:
            return False
        # Selectors were validated up front; one that does not compile simply matches nothing here.
        try:
            selectors = [compile_selector(expression) for expression in request.selectors]
        except CelCompileError:
            return False
        return all(self.selector_matches(selector, kind) for selector in selectors)

    def _value(self, device_digest: bytes, device: Device) -> dict[str, Any] | str:
        """The `device` variable's value, or why the device's own values do not parse."""
        value = self._values.get(device_digest)
        if value is None:
            try:
                value = library.device_value(device)
            except ValueError as error:
                value = f"the device's own values do not parse: {error}"
            self._values[device_digest] = value
        return value

    def _activation(self, device_digest: bytes, value: dict[str, Any], missing: Lookups) -> Any:
        key = (device_digest, missing)
        prepared = self._activations.get(key)
        if prepared is None:
            prepared = activation(value, missing)
            self._activations[key] = prepared
        return prepared


def _requests(deployment: Deployment) -> Iterable[tuple[str, Member, DeviceRequest]]:
    for engine in deployment.engines:
        for member in engine.members:
            for request in member.device_requests:
                yield engine.name, member, request


def _invalid(engine: str, member: Member, request: DeviceRequest, detail: str, index: int = 0) -> Exception:
    return InvalidNodeSelectorError(
        engine=engine,
        role=member.role.value,
        request=request.name,
        detail=detail,
        selector=index,
        expression=request.selectors[index - 1] if index else "",
    )


def _usable(kinds: Sequence[Device]) -> tuple[Device, ...]:
    """Kinds a request can take: Synthetic ones, and DRA ones with a device class."""
    return tuple(kind for kind in kinds if kind.claim is ClaimKind.SYNTHETIC or kind.device_class_name)


def _best_assignment(
    counts: tuple[int, ...],
    candidates: tuple[tuple[int, ...], ...],
    budgets: tuple[int, ...],
    dra: tuple[bool, ...],
) -> tuple[int, ...] | None:
    """Kind index per request maximising DRA resolutions; ties -> smallest indices in request order.

    best(i, budgets) is the most DRA resolutions requests i.. can still reach (None: infeasible).
    States are (request index, remaining budgets); a member has at most 16 requests and a pool a
    handful of kinds, so the reachable states stay small.
    """

    @cache
    def best(i: int, left: tuple[int, ...]) -> int | None:
        if i == len(counts):
            return 0
        result: int | None = None
        for kind in candidates[i]:
            if left[kind] < counts[i]:
                continue
            rest = best(i + 1, _take(left, kind, counts[i]))
            if rest is not None and (result is None or rest + dra[kind] > result):
                result = rest + dra[kind]
        return result

    target = best(0, budgets)
    if target is None:
        return None
    assignment: list[int] = []
    left = budgets
    for i, count in enumerate(counts):
        for kind in candidates[i]:
            if left[kind] < count:
                continue
            rest = best(i + 1, _take(left, kind, count))
            if rest is not None and rest + dra[kind] == target:
                assignment.append(kind)
                left = _take(left, kind, count)
                target = rest
                break
    return tuple(assignment)


def _take(budgets: tuple[int, ...], kind: int, count: int) -> tuple[int, ...]:
    return (*budgets[:kind], budgets[kind] - count, *budgets[kind + 1 :])
