"""The FieldsIgnored condition: Modelplane fields an XR sets that have no effect here (modelplane.api.compat).

Set while such fields are present; flipped to False once they are gone (a condition stays on the
XR until changed); never added to an XR that has not set any.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api, names

from modelplane_function.handlers.conditions import Condition, observed_condition, report


def report_ignored(rsp: fnv1.RunFunctionResponse, xr: Mapping[str, Any]) -> None:
    fields = api.ignored_fields(xr)
    typ = names.CONDITION_FIELDS_IGNORED
    if fields:
        c = Condition(type=typ, status="True", reason=names.REASON_NO_EFFECT_HERE, message=api.ignored_message(fields))
    elif observed_condition(xr, typ) is not None:
        c = Condition(
            type=typ, status="False", reason=names.REASON_ALL_FIELDS_USED, message="Every field set takes effect."
        )
    else:
        return
    report(rsp, xr, c)
