"""The built wheel, as a user installs it: one importable name, the defaults inside, a console
script that indexes a folder from anywhere (no checkout on the path, no editable install)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory, repo_root) -> Path:
    # built from a copy: setuptools writes build/ and *.egg-info beside the sources it builds
    src = tmp_path_factory.mktemp("src") / "provrag"
    shutil.copytree(repo_root, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "output", "bench"))
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(src), "-w", str(out)],
                   check=True, capture_output=True, text=True, cwd=out)
    (whl,) = out.glob("provrag-*.whl")
    return whl


def test_the_wheel_holds_one_package_with_its_defaults(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"provrag"}
    for part in ("provrag/cli.py", "provrag/config.toml", "provrag/__main__.py", "provrag/pipelines/index.py",
                 "provrag/engines/offline/judge/data/wordnet-antonyms.tsv"):
        assert part in names
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "provrag = provrag.cli:main" in entry


def test_the_wheel_holds_every_file_the_web_app_serves(wheel, repo_root):
    """provrag serve's pages load only what provrag serves: templates, script, styles, favicon and
    Swagger UI for /docs must be package data, or an installed server's pages break offline."""
    names = set(zipfile.ZipFile(wheel).namelist())
    web = repo_root / "provrag" / "serve" / "web"
    served = {str(p.relative_to(repo_root)) for sub in ("templates", "static") for p in (web / sub).rglob("*")
              if p.is_file()}
    assert {"provrag/serve/web/static/swagger/swagger-ui-bundle.js", "provrag/serve/web/static/app.js",
            "provrag/serve/web/templates/base.html", "provrag/serve/web/static/swagger/LICENSE"} <= served
    assert served <= names, sorted(served - names)


def test_the_installed_wheel_indexes_a_folder_from_outside_the_repository(wheel, tmp_path, repo_root, sample_data):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    pip = env_dir / "bin" / "pip"
    subprocess.run([str(pip), "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True, text=True)
    # the dependencies come from the test venv's site-packages, put on the path as a plain folder:
    # its .pth files (the editable install of this checkout) are not read that way
    deps = sysconfig.get_paths()["purelib"]
    env = dict(os.environ, PYTHONPATH=deps, XDG_DATA_HOME=str(tmp_path / "xdg"))
    env.pop("PYTHONHOME", None)
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = subprocess.run([str(env_dir / "bin" / "python"), "-c", "import provrag; print(provrag.__file__)"],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout
    assert str(env_dir) in where and str(repo_root) not in where  # the wheel's copy, not the checkout
    run = subprocess.run([str(env_dir / "bin" / "provrag"), "index", str(sample_data), "--out", "idx", "--json"],
                         cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads(run.stdout)
    assert summary["documents_ok"] == len([p for p in sample_data.iterdir() if p.is_file()]) and summary["text_units"] > 0
    ask = subprocess.run([str(env_dir / "bin" / "python"), "-m", "provrag", "ask", "Who leads the commissioning team?",
                          "--index", "idx", "--json"], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert ask.returncode == 0, ask.stderr[-2000:]
    assert json.loads(ask.stdout)["sources"][0]["page_start"] is not None
