"""Options shared by every test directory (pytest reads addoption hooks only from the rootdir conftest)."""

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden want files from the current output instead of comparing",
    )
