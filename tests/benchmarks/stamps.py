"""How much a warm RunFunction call saves when fleet objects carry the API server's stamps.

The function memoises each parsed fleet object (handlers/memo.py). Objects Crossplane passes from
the API server carry metadata.uid and metadata.resourceVersion, which name their content, so the
memo key is read off three fields; objects without them (offline input) are keyed by a digest of
their serialization. Both requests below are the same steady-state fleet, over real gRPC to one
`modelplane serve` process, the second with every object stamped as the API server stamps it.

Usage: python -m tests.benchmarks.stamps [--quick]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.benchmarks import rpc
from tests.benchmarks.cases import Size, case
from tests.benchmarks.timing import measure

SIZES = (Size(clusters=100, existing=1000, new=100), Size(clusters=1000, existing=10000, new=100))
QUICK_SIZES = (Size(clusters=100, existing=1000, new=100),)


def stamped(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionRequest:
    """`req` with a uid and resourceVersion on every required and observed object."""
    out = fnv1.RunFunctionRequest()
    out.CopyFrom(req)
    resources = [item.resource for found in out.required_resources.values() for item in found.items]
    resources += [r.resource for r in out.observed.resources.values()]
    for n, resource in enumerate(resources, start=1):
        meta = resource.fields["metadata"].struct_value
        meta.fields["uid"].string_value = f"00000000-0000-4000-8000-{n:012d}"
        meta.fields["resourceVersion"].string_value = str(100000 + n)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Warm RunFunction: fleet objects keyed by digest vs by stamp")
    parser.add_argument("--quick", action="store_true", help="the smaller fleet only")
    args = parser.parse_args(argv)
    print("Warm RunFunction, steady state, ms (median p95): fleet objects keyed by content digest vs by stamp")
    for size in QUICK_SIZES if args.quick else SIZES:
        c = case(size)
        plain = c.steady_request()
        stamps = stamped(plain)
        limit = rpc.recv_limit_mib(stamps.ByteSize())
        with rpc.serving(limit) as client:
            by_digest = measure(lambda req=plain: client.run(req), budget=5.0)
            by_stamp = measure(lambda req=stamps: client.run(req), budget=5.0)
        ratio = by_stamp.median / by_digest.median
        print(f"  {size.label():<22} digest {by_digest.ms()}  stamp {by_stamp.ms()}  stamp/digest {ratio:5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
