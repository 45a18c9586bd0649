"""The `modelplane` command: `serve`, and the offline tools (`render`, `plan`, `fleet`) that drive a
real server the way `crossplane render` does.
"""
