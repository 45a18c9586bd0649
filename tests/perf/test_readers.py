"""The reader benchmark measures every reader it lists, and its meaning checks tell them apart."""

from __future__ import annotations

import yaml

from tests.benchmarks import readers
from tests.benchmarks.fleet import generate


def test_each_reader_is_measured_and_checked_or_said_missing() -> None:
    fleet = generate(clusters=3, pools=2, existing=4, seed=1)
    text = yaml.dump_all([*fleet.clusters, *fleet.replicas], Dumper=yaml.CSafeDumper)
    want = readers._pyyaml(text)
    got = {r.name: readers.measure(r, text, want, runs=1) for r in readers.READERS}
    checks = {name: (r.same_fleet, r.same_probe) for name, r in got.items()}
    # YAML 1.2 readers read the fleet alike but not YAML 1.1's scalars; a reader not installed is said so.
    yaml_12 = {"ryaml (serde_yaml)", "yaml-rs (saphyr)"}
    assert checks == {
        r.name: (None, None) if readers.missing(r.module) else (True, r.name not in yaml_12) for r in readers.READERS
    }
    assert all(r.cpu is not None and r.cpu >= 0 for name, r in got.items() if checks[name] != (None, None))
