"""score.child_command, which the other tests replace by a stand-in: the judge's own start
of a candidate's ranks, each with the variables torchrun would set, and NVLink multicast
off whatever the caller's environment says. Values worked out from the docstring."""

import sys

from linkroof.scoring import score as S


def test_two_ranks_get_torchruns_variables_and_the_same_command(monkeypatch):
    monkeypatch.delenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", raising=False)
    monkeypatch.delenv("NCCL_NVLS_ENABLE", raising=False)
    made = S.child_command(2, 29511, ["--fn", "m:good"])
    assert [argv for argv, _ in made] == [[sys.executable, "-m", "linkroof.scoring.child", "--fn", "m:good"]] * 2
    for r, (_, env) in enumerate(made):
        assert {k: env[k] for k in ("MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                                    "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK")} == {
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29511", "RANK": str(r), "LOCAL_RANK": str(r),
            "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "0", "ROLE_RANK": str(r)}
        assert (env["TORCH_SYMM_MEM_DISABLE_MULTICAST"], env["NCCL_NVLS_ENABLE"], env["NVSHMEM_DISABLE_NVLS"]) == (
            "1", "0", "1")


def test_no_rank_asked_is_one_rank(monkeypatch):
    (argv, env), = S.child_command(0, 1, [])
    assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_WORLD_SIZE"]) == ("0", "1", "1")


def test_the_callers_environment_is_kept(monkeypatch):
    monkeypatch.setenv("LINKROOF_TEST_MARK", "x")
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")
    (_, env), = S.child_command(1, 2, [])
    assert env["LINKROOF_TEST_MARK"] == "x" and env["NCCL_NVLS_ENABLE"] == "0"


def test_multicast_stays_off_when_the_caller_turned_it_on(monkeypatch):
    """The judge runs code it does not trust on a shared host: a caller's (or a cluster's)
    NCCL_NVLS_ENABLE=1 is overridden for every rank, not passed on."""
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")
    monkeypatch.setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "0")
    monkeypatch.setenv("NVSHMEM_DISABLE_NVLS", "0")
    for _, env in S.child_command(2, 29512, []):
        assert (env["NCCL_NVLS_ENABLE"], env["TORCH_SYMM_MEM_DISABLE_MULTICAST"], env["NVSHMEM_DISABLE_NVLS"]) == (
            "0", "1", "1")
