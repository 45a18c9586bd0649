"""The gRPC function: the servicer, the server, worker processes with deadlines, request logging.

It dispatches each request to `handlers` and knows nothing of the offline tools (`cli`).
"""
