"""`make run` on a fresh machine (issue 29 item 6): it sets OCR up where it can — as root with
apt-get it installs Tesseract — and otherwise ends by saying, in one line, what to run, even
when a step failed.

The Makefile runs for real; what it would do to the machine is observed through its PATH: a
folder of links to every program of this machine except tesseract, where `id` may say another
user and `apt-get` records what it was asked (and "installs" tesseract into that folder, or
fails as an offline machine's would). RUN_STEPS (the index, ask and verify steps) is given as
`true` or `false`: those steps have tests of their own.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

OCR_SAY = ("scanned PDF pages wait for OCR (Tesseract is not installed): run `sudo make ocr`, "
           "then `make run` again")
SYSTEM_BIN = ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin")


@pytest.fixture()
def machine(tmp_path):
    """A PATH without tesseract; `as_user(uid)` and `apt(works)` put stand-ins for id and apt-get on it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in SYSTEM_BIN:
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            target = bin_dir / entry.name
            if entry.name != "tesseract" and not target.exists() and os.access(entry.path, os.X_OK):
                target.symlink_to(entry.path)
    calls = tmp_path / "apt-calls"

    def script(name: str, body: str) -> None:
        f = bin_dir / name
        f.unlink(missing_ok=True)
        f.write_text("#!/bin/sh\n" + body)
        f.chmod(0o755)

    class Machine:
        path = str(bin_dir)
        apt_calls = calls

        @staticmethod
        def as_user(uid: int) -> None:
            script("id", f'[ "$1" = "-u" ] && echo {uid} && exit 0\nexec /usr/bin/id "$@"\n')

        @staticmethod
        def apt(works: bool) -> None:
            install = f'printf "#!/bin/sh\\necho tesseract 5.3.0\\n" > {bin_dir}/tesseract; chmod 755 {bin_dir}/tesseract\n'
            script("apt-get", f'echo "$*" >> {calls}\n' + (install if works else "exit 100\n"))

    assert shutil.which("tesseract", path=Machine.path) is None
    return Machine


def make_run(repo_root: Path, path: str, steps: str = "true") -> subprocess.CompletedProcess:
    # -o: the install stamp is taken as made (installing is not what is tested here)
    return subprocess.run(["make", "--no-print-directory", "-s", "-o", ".venv/.installed", "run", f"RUN_STEPS={steps}"],
                          cwd=repo_root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PATH": path})


def test_not_root_it_ends_with_the_one_line_to_run(repo_root, machine):
    machine.as_user(1000)
    machine.apt(works=True)
    r = make_run(repo_root, machine.path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == OCR_SAY
    assert not machine.apt_calls.exists()  # not root: nothing installed behind the user's back


def test_the_line_comes_even_when_a_step_failed(repo_root, machine):
    machine.as_user(1000)
    r = make_run(repo_root, machine.path, steps="false")
    assert r.returncode != 0
    assert r.stdout.strip().splitlines()[-1] == OCR_SAY


def test_as_root_with_apt_it_installs_tesseract_and_says_nothing_more(repo_root, machine):
    machine.as_user(0)
    machine.apt(works=True)
    r = make_run(repo_root, machine.path)
    assert r.returncode == 0, r.stderr
    assert "install -y -qq tesseract-ocr tesseract-ocr-eng" in machine.apt_calls.read_text()
    assert OCR_SAY not in r.stdout


def test_as_root_when_apt_fails_it_still_ends_with_the_line(repo_root, machine):
    machine.as_user(0)
    machine.apt(works=False)
    r = make_run(repo_root, machine.path)
    assert r.returncode == 0, r.stderr
    calls = machine.apt_calls.read_text().splitlines()
    assert calls[0].endswith("tesseract-ocr tesseract-ocr-eng") and "update -qq" in calls  # the cache, then update
    assert r.stdout.strip().splitlines()[-1] == OCR_SAY


def test_with_tesseract_installed_nothing_is_said_or_installed(repo_root, machine):
    machine.as_user(0)
    machine.apt(works=True)
    (Path(machine.path) / "tesseract").write_text("#!/bin/sh\necho tesseract 5.3.0\n")
    (Path(machine.path) / "tesseract").chmod(0o755)
    r = make_run(repo_root, machine.path)
    assert r.returncode == 0 and OCR_SAY not in r.stdout and not machine.apt_calls.exists()
