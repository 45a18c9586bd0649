"""Conformance of what we emit: every object validated against the upstream schemas in schemas/upstream.

`Validator` checks one object as the API server would on create; `report.validate_files` runs it
over YAML streams; `python -m tests.kubeschema` is the command line. Modules: `catalog` (which
schema validates a kind), `xcrd` (Crossplane's XRD -> CRD), `openapi` (schema -> JSON Schema),
`structural` (pruning, defaulting, list types, CEL), `cel`, `metadata`, `webhooks`.
"""
