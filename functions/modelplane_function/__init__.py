"""The `modelplane` command: `serve`, and the offline tools (`render`, `plan`, `fleet`) that drive a
real server the way `crossplane render` does.
"""

import os

# gRPC's C core logs to stderr on its own (a GOAWAY at shutdown, "Failed to add port" before our
# own message): stderr carries only the project's words. Set before any module imports grpc, so it
# holds in this process and in the workers, which inherit the environment; GRPC_VERBOSITY set by the
# user (to debug the transport) wins.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")
