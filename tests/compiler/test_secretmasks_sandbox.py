"""Strict's workspace-secret masks in real sandboxes: links to / and ~ are not
walked, nothing outside the workspace is masked, the cache never unmasks."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess

import pytest

from .sandbox_util import CLI, SECRET_DOTENV

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]


def spec_masks(box) -> list[str]:
    """Paths the compiled Strict spec masks with /dev/null or an empty tmpfs."""
    out = subprocess.run([*CLI, "profile", "compile", "strict", "--workspace", str(box.ws),
                          "--format", "json"], cwd=box.ws, env=box.env(),
                         capture_output=True, text=True, check=True)
    ops = json.loads(out.stdout)["ops"]
    return [op["dst"] for op in ops if op["op"] in ("DevNullOver", "Tmpfs")]


def read_inside(box, *paths: str) -> subprocess.CompletedProcess:
    return box.run("strict", "--", "sh", "-c",
                   "for f in " + " ".join(paths) + "; do cat \"$f\"; done; true")


@pytest.mark.parametrize("target", ["/", "~"])
def test_a_link_to_root_or_home_masks_nothing_outside(box, target):
    (box.ws / "everything").symlink_to(box.home if target == "~" else "/")
    (box.home / "proj").mkdir()
    (box.home / "proj" / ".env").write_text("other project\n")
    r = read_inside(box, ".env", "sub/.env.local", "server.pem")
    assert r.returncode == 0, r.stderr
    assert SECRET_DOTENV not in r.stdout + r.stderr
    masks = spec_masks(box)
    base = {m for m in masks if not m.startswith(str(box.ws))}
    # outside the workspace: only the base profile's fixed masks (/tmp, /run, the
    # home's credential stores, ringfence's own dirs); no walked .env/.pem
    assert [m for m in base if os.path.basename(m).startswith((".env", "id_"))
            or m.endswith((".pem", ".key"))] == []
    assert str(box.home / "proj" / ".env") not in masks
    assert sorted(m for m in masks if m.startswith(str(box.ws))) == sorted(
        [str(box.ws / ".env"), str(box.ws / "sub" / ".env.local"), str(box.ws / "server.pem")])


def test_a_secret_named_link_is_masked_at_its_target_inside(box):
    (box.ws / "cfg").mkdir()
    (box.ws / "cfg" / "values").write_text(SECRET_DOTENV + "\n")
    (box.ws / ".env.prod").symlink_to("cfg/values")
    (box.outside / "shared.env").write_text("outside\n")
    (box.ws / ".env.shared").symlink_to(box.outside / "shared.env")
    r = read_inside(box, ".env.prod", "cfg/values")
    assert r.returncode == 0, r.stderr
    assert SECRET_DOTENV not in r.stdout + r.stderr
    masks = spec_masks(box)
    assert str(box.ws / "cfg" / "values") in masks
    assert str(box.outside / "shared.env") not in masks
    assert "RF660" in r.stderr and ".env.shared" in r.stderr


def test_an_env_created_between_runs_is_masked(box):
    assert box.run("strict", "--", "true").returncode == 0
    (box.ws / "sub" / "deeper").mkdir()
    (box.ws / "sub" / "deeper" / ".env.test").write_text(SECRET_DOTENV + "\n")
    r = read_inside(box, "sub/deeper/.env.test")
    assert r.returncode == 0, r.stderr
    assert SECRET_DOTENV not in r.stdout + r.stderr


@pytest.mark.parametrize("garbage", ["", "{", '{"v": 1, "dirs": {}, "known": []}'])
def test_a_corrupt_cache_never_unmasks(box, garbage):
    assert box.run("strict", "--", "true").returncode == 0
    caches = glob.glob(str(box.state / "cache" / "patterns" / "secrets-*.bin"))
    assert len(caches) == 1
    with open(caches[0], "w") as fh:
        fh.write(garbage)
    r = read_inside(box, ".env", "sub/.env.local", "server.pem")
    assert r.returncode == 0, r.stderr
    assert SECRET_DOTENV not in r.stdout + r.stderr


def test_the_cache_is_hidden_from_the_sandbox(box):
    assert box.run("strict", "--", "true").returncode == 0
    assert glob.glob(str(box.state / "cache" / "patterns" / "secrets-*.bin"))
    r = box.run("strict", "--", "sh", "-c", f"ls -A {box.state}/cache/patterns | wc -l")
    assert (r.returncode, r.stdout.strip()) == (0, "0")
