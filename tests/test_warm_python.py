"""support.warm_python: a command forked from the warm server is the command python runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from support import warm_python

# What a command sees of its start: argv, path, folder, __main__, environment, streams, modules.
PROBE = """
import json, os, sys
import __main__
seen = {
    "argv": sys.argv,
    "path": sys.path,
    "cwd": os.getcwd(),
    "main": sorted(name for name in vars(__main__) if name.startswith("__")),
    "name": __name__,
    "variable": os.environ.get("PROBE_VARIABLE"),
    "stdin": sys.stdin.read(),
    "streams": [(s.encoding, s.errors, s.line_buffering) for s in (sys.stdin, sys.stdout, sys.stderr)],
    "reactor": "twisted.internet.reactor" in sys.modules,
    "multiprocessing": [__import__("multiprocessing").current_process().name, __import__("multiprocessing").parent_process()],
}
print(json.dumps(seen))
print("to stderr", file=sys.stderr)
sys.exit(3)
"""


@pytest.fixture
def probe(tmp_path):
    (tmp_path / "probe.py").write_text(PROBE, encoding="utf-8")
    (tmp_path / "probing").mkdir()
    (tmp_path / "probing" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "probing" / "__main__.py").write_text(PROBE, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("form", ["script", "-m", "-c"])
def test_a_forked_command_sees_what_python_gives_it(probe, form):
    args = {"script": ["probe.py", "a"], "-m": ["-m", "probing", "a"], "-c": ["-c", PROBE, "a"]}[form]
    env = {**os.environ, "PROBE_VARIABLE": "set", "PYTHONPATH": f"{probe / 'extra'}{os.pathsep}relative"}
    options = {"cwd": probe, "env": env, "input": "the input", "capture_output": True, "text": True, "timeout": 120}
    real = subprocess.run([sys.executable, *args], **options)
    forked = warm_python.run([sys.executable, *args], **options)
    assert warm_python.forkable([sys.executable, *args], {"env": env})
    assert (forked.returncode, forked.stderr) == (real.returncode, real.stderr) == (3, "to stderr\n")
    assert json.loads(forked.stdout) == json.loads(real.stdout)
    assert json.loads(real.stdout)["stdin"] == "the input"


def test_a_signal_reaches_the_forked_process_and_ends_it_as_it_would_python():
    code = "import sys; print('up', flush=True); sys.stdin.read()"
    running = warm_python.popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert isinstance(running, warm_python.Popen)
        assert running.stdout.readline() == "up\n"
        assert running.poll() is None
        running.send_signal(signal.SIGTERM)
        assert running.wait(60) == -signal.SIGTERM
    finally:
        running.kill()


def test_an_uncaught_exception_and_an_interrupt_end_it_as_they_end_python():
    failing = warm_python.run([sys.executable, "-c", "raise KeyError('k')"], capture_output=True, text=True)
    assert failing.returncode == 1
    assert (
        failing.stderr
        == "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nKeyError: 'k'\n"
    )
    interrupted = warm_python.run([sys.executable, "-c", "raise KeyboardInterrupt"], capture_output=True, text=True)
    assert interrupted.returncode == -signal.SIGINT


def test_the_exit_handlers_run_and_the_output_is_flushed():
    code = "import atexit, sys; atexit.register(print, 'at exit'); sys.stdout.write('unflushed')"
    done = warm_python.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "unflushedat exit\n")


def test_a_timeout_kills_the_forked_process():
    with pytest.raises(subprocess.TimeoutExpired):
        warm_python.run([sys.executable, "-c", "import time; time.sleep(60)"], timeout=1)


def test_what_one_command_changes_the_next_does_not_see(tmp_path):
    code = (
        "import scrapy_neardup, sys; print(getattr(scrapy_neardup, 'probe_mark', None)); scrapy_neardup.probe_mark = 1"
    )
    runs = [warm_python.run([sys.executable, "-c", code], capture_output=True, text=True) for _ in range(2)]
    assert [done.stdout for done in runs] == ["None\n", "None\n"]


@pytest.mark.parametrize(
    ("args", "options"),
    [
        (["-X", "utf8", "-c", "pass"], {}),
        (["-c", "pass"], {"env": {**os.environ, "PYTHONIOENCODING": "ascii"}}),
        (["-c", "pass"], {"env": {**os.environ, "LC_ALL": "C"}}),
        (["-c", "pass"], {"start_new_session": True}),
        (["-c", "pass"], {"close_fds": False}),
    ],
)
def test_what_a_fork_cannot_honour_runs_as_a_real_python(args, options):
    assert not warm_python.forkable([sys.executable, *args], options)
    running = warm_python.popen([sys.executable, *args], **options)
    assert type(running) is subprocess.Popen
    assert running.wait(120) == 0


def test_the_tests_support_modules_are_not_left_imported_in_the_command(tmp_path):
    code = "import sys; print(sorted(name for name in sys.modules if name.split('.')[0] == 'support'))"
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    done = warm_python.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "[]\n")
