"""The three XR handlers: ModelDeployment (schedule, compose ModelReplicas), ModelReplica (render the
workload) and InferenceCluster (publish its pools), with what they read from a request.

This package imports neither the transport (`server`) nor the offline tools (`cli`).
"""
