"""Member -> node pool device matching (design §4 item 6).

A member's device requests share one node: each request takes `count` devices of ONE device
kind of the pool that satisfies all its selectors, and a kind's per-node `count` is a budget
shared by every request assigned to it. The assignment is found by an exact search (dynamic
programming over requests x remaining budgets), never greedy first-fit, so overlapping requests
never reject a feasible pool. Among feasible assignments the one resolving the most requests
to DRA devices wins; ties go to the smallest device names in request order. A member with
requests must resolve at least one DRA device on the pool; a member without requests is
claimless and matches any pool at zero cost.

A `DeviceMatcher` lives for one scheduling pass and memoises everything: selector results per
(device content, expression) -- so identical device kinds across hundreds of clusters cost one
CEL evaluation per selector -- and member results per (requests, pool content). A long-running
caller (the function) also shares one bounded `SelectorResults` across passes: a fleet that has
not changed then costs no CEL evaluation at all, which also keeps cel-expr-python's per-call
allocations in Python extension functions from adding up over millions of calls.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from modelplane.devices.cel import CelCompileError, CompiledSelector, compile_selector, device_activation
from modelplane.errors import InvalidNodeSelectorError
from modelplane.model import ClaimKind, Deployment, Device, DeviceRequest, Member, NodePool, ResolvedDeviceRequest

# Rather than evaluate, an unparsable device (bad quantity or version) never matches.
_UNUSABLE = object()


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberMatch:
    """How a member's device requests resolve on one pool."""

    resolved: tuple[ResolvedDeviceRequest, ...]  # DRA-resolved requests, in the member's request order


_CLAIMLESS = MemberMatch(resolved=())

_ResultKey = tuple[Hashable, str]


class SelectorResults:
    """Selector results per (device content, expression), bounded: the oldest entries go first."""

    def __init__(self, *, limit: int = 100_000) -> None:
        self._limit = limit
        self._results: dict[_ResultKey, bool] = {}

    def __len__(self) -> int:
        return len(self._results)

    def get(self, key: _ResultKey) -> bool | None:
        return self._results.get(key)

    def put(self, key: _ResultKey, result: bool) -> None:  # noqa: FBT001 - a cache value, not a flag
        if len(self._results) >= self._limit:
            del self._results[next(iter(self._results))]
        self._results[key] = result


class DeviceMatcher:
    """Device matching for one scheduling pass, memoised; `results` may outlive the pass."""

    def __init__(self, *, results: SelectorResults | None = None) -> None:
        self._evaluations = 0
        self._fingerprints: dict[int, tuple[Device, Hashable]] = {}
        self._pools: dict[int, tuple[NodePool, tuple[Device, ...], int]] = {}
        self._contents: dict[Hashable, int] = {}
        self._activations: dict[Hashable, Any] = {}
        self._results = results if results is not None else SelectorResults(limit=1 << 62)
        self._members: dict[tuple[tuple[DeviceRequest, ...], int], MemberMatch | None] = {}

    @property
    def cel_evaluations(self) -> int:
        """CEL evaluations actually performed (memo hits excluded)."""
        return self._evaluations

    def validate(self, deployment: Deployment) -> None:
        """Compile every selector of the deployment; raise InvalidNodeSelectorError on the first bad one."""
        for engine in deployment.engines:
            for member in engine.members:
                for request in member.device_requests:
                    for expression in request.selectors:
                        try:
                            compile_selector(expression)
                        except CelCompileError as error:
                            raise InvalidNodeSelectorError(
                                engine=engine.name, role=member.role.value, request=request.name, detail=error.detail
                            ) from error

    def match_member(self, member: Member, pool: NodePool) -> MemberMatch | None:
        """The member's best device assignment on the pool, or None when it cannot be placed there."""
        if not member.device_requests:
            return _CLAIMLESS
        kinds, content = self._pool(pool)
        key = (member.device_requests, content)
        if key not in self._members:
            self._members[key] = self._match(member.device_requests, kinds)
        return self._members[key]

    def unmatched_request(self, member: Member, pools: Iterable[NodePool]) -> DeviceRequest | None:
        """The member's first request that no device of any pool satisfies on its own, for diagnosis."""
        devices = [device for pool in pools for device in pool.devices]
        return next(
            (r for r in member.device_requests if not any(self._request_fits(r, d) for d in devices)),
            None,
        )

    def selector_matches(self, selector: CompiledSelector, device: Device) -> bool:
        """Memoised evaluation of one selector against one device's content."""
        fingerprint = self._fingerprint(device)
        key = (fingerprint, selector.expression)
        result = self._results.get(key)
        if result is None:
            activation = self._activation(fingerprint, device)
            if activation is _UNUSABLE:
                result = False
            else:
                self._evaluations += 1
                result = selector.evaluate_activation(activation)
            self._results.put(key, result)
        return result

    def _match(self, requests: tuple[DeviceRequest, ...], kinds: tuple[Device, ...]) -> MemberMatch | None:
        usable = tuple(kind for kind in kinds if kind.claim is ClaimKind.SYNTHETIC or kind.device_class_name)
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

    def _pool(self, pool: NodePool) -> tuple[tuple[Device, ...], int]:
        """The pool's device kinds by name and a small id of their content, computed once per pool object.

        Every member of every engine asks about the same pools; sorting and fingerprinting their
        devices on each call dominated cold scheduling on large fleets.
        """
        entry = self._pools.get(id(pool))
        if entry is None or entry[0] is not pool:
            kinds = tuple(sorted(pool.devices, key=lambda device: device.name))
            content = tuple((self._fingerprint(kind), _kind_key(kind)) for kind in kinds)
            entry = (pool, kinds, self._contents.setdefault(content, len(self._contents)))
            self._pools[id(pool)] = entry
        return entry[1], entry[2]

    def _fingerprint(self, device: Device) -> Hashable:
        entry = self._fingerprints.get(id(device))
        if entry is None or entry[0] is not device:
            fingerprint = (
                device.driver,
                tuple(sorted((key, attr.type.value, attr.value) for key, attr in device.attributes.items())),
                tuple(sorted(device.capacity.items())),
            )
            entry = (device, fingerprint)
            self._fingerprints[id(device)] = entry
        return entry[1]

    def _activation(self, fingerprint: Hashable, device: Device) -> Any:
        if fingerprint not in self._activations:
            activation = device_activation(device)
            self._activations[fingerprint] = _UNUSABLE if activation is None else activation
        return self._activations[fingerprint]


def _kind_key(kind: Device) -> Hashable:
    return (kind.name, kind.claim, kind.device_class_name, kind.count)


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
