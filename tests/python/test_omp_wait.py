"""`import tessera` before torch starts libgomp passive when another process keeps a core
busy (as the `tessera` launcher does); the user's own setting, or a libgomp already
loaded, is left alone."""

import os
import subprocess
import sys

import pytest


def run(code, **env):
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    clean.update(env)
    return subprocess.run([sys.executable, "-c", code], env=clean, capture_output=True, text=True, check=True)


def test_beside_a_busy_process_libgomp_starts_passive(busy_process):
    r = run("import tessera, os; print(os.environ.get('OMP_WAIT_POLICY', 'unset'))", OMP_DISPLAY_ENV="verbose")
    assert r.stdout.strip() == "passive"
    assert "GOMP_SPINCOUNT = '0'" in r.stderr  # what libgomp itself read: no spinning


def test_the_users_setting_is_kept(busy_process):
    r = run("import tessera, os; print(os.environ.get('OMP_WAIT_POLICY', 'unset'), os.environ['GOMP_SPINCOUNT'])",
            GOMP_SPINCOUNT="777")
    assert r.stdout.split() == ["unset", "777"]


def test_too_late_after_torch_is_left_alone(busy_process):
    r = run("import torch, tessera, os; print(os.environ.get('OMP_WAIT_POLICY', 'unset'))")
    assert r.stdout.strip() == "unset"
