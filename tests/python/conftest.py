"""Shared fixtures of the Python tests: the package is found through PYTHONPATH=<build>/python
(ctest sets it); TESSERA_SHARED_DATA points to ../shared/data."""

import os
import pathlib
import subprocess
import time

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED_DATA = pathlib.Path(os.environ.get("TESSERA_SHARED_DATA", ROOT.parent / "shared" / "data"))
BUILD_DIR = pathlib.Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))

torch.set_num_threads(1)


@pytest.fixture
def shared_data():
    assert SHARED_DATA.is_dir(), f"shared data not found at {SHARED_DATA} (set TESSERA_SHARED_DATA)"
    return SHARED_DATA


@pytest.fixture
def build_dir():
    return BUILD_DIR


@pytest.fixture
def busy_process():
    """One other process keeping a core busy for the test's duration."""
    p = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    time.sleep(0.5)
    yield
    p.kill()
    p.wait()
