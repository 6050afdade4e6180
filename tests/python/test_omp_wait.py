"""`import tessera` before torch starts libgomp with tessera's wait policy (the value of
include/tessera/core/omp_wait.h); the user's own setting, or a libgomp already loaded, is
left alone."""

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT = re.search(r'TESSERA_DEFAULT_OMP_WAIT_POLICY "([a-z]+)"',
                    (ROOT / "include/tessera/core/omp_wait.h").read_text()).group(1)


def run(code, **env):
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    clean.update(env)
    return subprocess.run([sys.executable, "-c", code], env=clean, capture_output=True, text=True, check=True)


def test_import_tessera_first_starts_libgomp_passive():
    r = run("import tessera, os; print(os.environ['OMP_WAIT_POLICY'])", OMP_DISPLAY_ENV="verbose")
    assert r.stdout.strip() == DEFAULT == "passive"
    assert "GOMP_SPINCOUNT = '0'" in r.stderr  # what libgomp itself read: no spinning


def test_the_users_setting_is_kept():
    r = run("import tessera, os; print(os.environ.get('OMP_WAIT_POLICY', 'unset'), os.environ['GOMP_SPINCOUNT'])",
            GOMP_SPINCOUNT="777")
    assert r.stdout.split() == ["unset", "777"]


def test_too_late_after_torch_is_left_alone():
    r = run("import torch, tessera, os; print(os.environ.get('OMP_WAIT_POLICY', 'unset'))")
    assert r.stdout.strip() == "unset"
