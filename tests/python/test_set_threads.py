"""`tessera.set_threads()`: the command line's thread rule from Python (the given count,
TESSERA_THREADS, or the cores the load leaves free now), applied to torch's pool."""


import pytest
import torch

import tessera


@pytest.fixture(autouse=True)
def keep_torch_threads(monkeypatch):
    monkeypatch.delenv("TESSERA_THREADS", raising=False)
    monkeypatch.delenv("TESSERA_BLAS_THREADS", raising=False)
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_a_given_count_is_applied_to_torch():
    c = tessera.set_threads(1)
    assert (c["threads"], c["source"], c["threads_from"]) == (1, "explicit", "--threads")
    assert torch.get_num_threads() == 1


def test_the_environment_comes_before_the_load(monkeypatch):
    monkeypatch.setenv("TESSERA_THREADS", "1")
    c = tessera.set_threads()
    assert (c["threads"], c["source"]) == (1, "TESSERA_THREADS")
    assert torch.get_num_threads() == 1


def test_beside_a_busy_process_the_free_cores(busy_process):
    c = tessera.set_threads()
    assert c["busy"] >= 1  # the busy process, sampled now
    # the free cores when some but not all are taken, else every core (other tests may run beside)
    free = c["cores"] - c["busy"]
    expect = free if 0 < free < c["cores"] else c["cores"]
    assert c["threads"] == expect
    assert c["source"] == ("load" if expect < c["cores"] else "hardware")
    assert torch.get_num_threads() == expect
    assert "other process" in c["threads_from"]


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2"])
def test_a_bad_count_is_refused(bad):
    with pytest.raises(tessera.InvalidInput, match="positive int or None"):
        tessera.set_threads(bad)
