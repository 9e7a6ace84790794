"""The tests' Python commands (``python -m scrapy_neardup ...``, ``python -m scrapy.cmdline crawl
...``, a crawl script) run in processes forked from a server that has imported Scrapy, Twisted
and the package once, instead of each process importing them again: those imports are most of
a short command's CPU, and the suite runs about two hundred such commands.

``run`` and ``Popen`` take subprocess's arguments and give its objects (``Popen`` is a
``subprocess.Popen``: pipes, ``communicate``, timeouts, signals, ``returncode``). The forked
process is the command as ``python`` would run it: a process of its own (its own pid, so a
signal the test sends reaches it; its exit status, negative when a signal ended it), the
test's argv, working folder, environment (``PYTHONPATH`` in ``sys.path`` as Python puts it),
standard streams, and the ``__main__`` module, ``atexit`` handlers and exit of a real start.
It shares no state with the test or another command: the server holds no connection, thread
or reactor (Scrapy installs the reactor its settings choose, in each command), and nothing the
package imports reads the environment at import time.

A command runs as a real ``python`` process instead when the fork could not be the same: a
command line other than ``python -m MODULE``, ``python -c CODE`` or ``python SCRIPT`` followed
by arguments, options subprocess would apply at exec (``shell``, ``preexec_fn``, ``pass_fds``, a
new session, ...), or an environment whose variables Python reads at start-up (``PYTHON*``
other than ``PYTHONPATH``, the locale's) differ from the tests'.

Some tests keep ``subprocess`` so that the real start-up stays covered, each once at least:
a test of tests/cli/test_first_hour_cli.py (``python -m scrapy_neardup``, started anew),
tests/crawl/test_example_project.py and test_distributed_crawl.py (``scrapy crawl`` and the
example project's scripts, as a user runs them), and the tests about what a fresh process
imports or loads (test_rules_cache.py, test_prepared.py, test_workers.py).

``Popen`` replaces three methods of ``subprocess.Popen`` (``_execute_child``, ``_internal_poll``,
``_wait``) whose form is the same in CPython 3.10 to 3.13.
"""

from __future__ import annotations

import atexit
import builtins
import functools
import importlib.machinery
import io
import json
import os
import runpy
import signal
import subprocess
import sys
import threading
import time
import traceback
import types
from collections.abc import Sequence
from multiprocessing import forkserver, process, reduction, resource_tracker
from typing import Any

from support.processes import server_context

# subprocess options a fork cannot apply as exec does: a command given them runs for real.
# Popen's private methods that Popen below replaces have this form in these CPython versions;
# under another, every command runs as a real python process.
_KNOWN_POPEN = sys.implementation.name == "cpython" and (3, 10) <= sys.version_info[:2] <= (3, 13)
_EXEC_ONLY = ("executable", "preexec_fn", "pass_fds", "shell", "start_new_session", "process_group", "user", "group")
_EXEC_ONLY_UNLESS = {"close_fds": True, "restore_signals": True, "extra_groups": None, "umask": -1}


def _read_at_start(name: str) -> bool:
    """Whether Python reads variable ``name`` when it starts (so a fork cannot honour a new value)."""
    return (name.startswith("PYTHON") and name != "PYTHONPATH") or name.startswith("LC_") or name == "LANG"


_STARTED_WITH = {name: value for name, value in os.environ.items() if _read_at_start(name)}


class Popen(subprocess.Popen):
    """A ``subprocess.Popen`` whose Python command is forked from the warm server."""

    _process: Any = None

    def _execute_child(self, args, executable, preexec_fn, close_fds, pass_fds, cwd, env, *rest):
        # The rest of subprocess's arguments: startupinfo, creationflags, shell, then the six
        # pipe ends, then options run() and Popen() refuse for a fork (see forkable).
        p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite = rest[3:9]
        command = _command([os.fspath(arg) for arg in args])
        if command is None:
            raise ValueError(f"not a python command the warm server runs: {args!r}")
        environment = dict(os.environ if env is None else env)
        folder = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()
        streams = [_Fd(p2cread if p2cread != -1 else 0), _Fd(c2pwrite if c2pwrite != -1 else 1)]
        streams.append(_Fd(errwrite if errwrite != -1 else 2))
        self._process = server_context().Process(
            target=_run_command, args=(command, folder, environment, _base_path(), streams), daemon=True
        )
        try:
            self._process.start()
        finally:
            self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)
        self.pid = self._process.pid
        self._child_created = True

    def _internal_poll(self, _deadstate=None, **_ignored):
        if self.returncode is None and self._process is not None:
            self.returncode = self._process.exitcode
        return self.returncode

    def _wait(self, timeout):
        if self.returncode is None:
            self._process.join(timeout)
            if self._process.exitcode is None:
                raise subprocess.TimeoutExpired(self.args, timeout)
            self.returncode = self._process.exitcode
        return self.returncode


def forkable(args: Sequence[Any], options: dict[str, Any]) -> bool:
    """Whether ``args`` with subprocess ``options`` can run forked from the warm server."""
    if not _KNOWN_POPEN:
        return False
    if _command([os.fspath(arg) for arg in args]) is None:
        return False
    if any(options.get(name) for name in _EXEC_ONLY):
        return False
    if any(name in options and options[name] != default for name, default in _EXEC_ONLY_UNLESS.items()):
        return False
    env = options.get("env")
    starting = {name: value for name, value in (os.environ if env is None else env).items() if _read_at_start(name)}
    return starting == _STARTED_WITH


def popen(args: Sequence[Any], **options: Any) -> subprocess.Popen:
    """``subprocess.Popen(args, **options)``, forked from the warm server when it can be."""
    return (Popen if forkable(args, options) else subprocess.Popen)(args, **options)


def run(
    args: Sequence[Any],
    *,
    input: Any = None,
    capture_output: bool = False,
    timeout: float | None = None,
    check: bool = False,
    **options: Any,
) -> subprocess.CompletedProcess:
    """``subprocess.run`` with the command forked from the warm server when it can be."""
    if not forkable(args, options):
        return subprocess.run(args, input=input, capture_output=capture_output, timeout=timeout, check=check, **options)
    if input is not None:
        options["stdin"] = subprocess.PIPE
    if capture_output:
        options["stdout"] = options["stderr"] = subprocess.PIPE
    with Popen(args, **options) as running:
        try:
            stdout, stderr = running.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            running.kill()
            running.wait()
            raise
        except BaseException:
            running.kill()
            raise
    done = subprocess.CompletedProcess(running.args, running.returncode, stdout, stderr)
    if check:
        done.check_returncode()
    return done


def _command(args: list[str]) -> tuple[str, str, list[str]] | None:
    """(how, what, sys.argv) of ``python -m MODULE``, ``-c CODE`` or ``SCRIPT``, else None."""
    if len(args) < 2 or os.path.realpath(args[0]) != os.path.realpath(sys.executable):
        return None
    if args[1] in ("-m", "-c") and len(args) >= 3:
        return (args[1], args[2], [args[1], *args[3:]])
    if args[1].startswith("-"):
        return None
    return ("script", args[1], args[1:])


@functools.cache
def _base_path() -> list[str]:
    """The ``sys.path`` of a ``python`` started without PYTHONPATH, after its first entry."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    probe = [sys.executable, "-c", "import json, sys; print(json.dumps(sys.path[1:]))"]
    return json.loads(subprocess.run(probe, env=env, capture_output=True, text=True, check=True).stdout)


class _Fd:
    """A file descriptor of the test's, handed to the forked process (as a duplicate)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self):
        return (_received_fd, (reduction.DupFd(self.fd),))


def _received_fd(duplicate: Any) -> int:
    return duplicate.detach()


def _run_command(
    command: tuple[str, str, list[str]],
    folder: str,
    environment: dict[str, str],
    base_path: list[str],
    streams: list[int],
) -> None:
    """The forked process: becomes ``python`` running ``command``, then exits as it would."""
    _become_main_process()
    for name in [name for name in sys.modules if name == "support" or name.startswith("support.")]:
        del sys.modules[name]  # this module's own, imported to run it: the command imports its own
    for target, fd in enumerate(streams):
        os.dup2(fd, target)
        os.close(fd)
    _standard_streams()
    os.chdir(folder)
    os.environ.clear()
    os.environ.update(environment)
    time.tzset()
    how, what, argv = command
    first = {"-m": os.getcwd(), "-c": "", "script": os.path.dirname(os.path.realpath(what))}[how]
    extra = [entry for entry in environment.get("PYTHONPATH", "").split(os.pathsep) if entry]
    sys.path[:] = [first, *map(os.path.abspath, extra), *base_path]
    sys.argv[:] = argv
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=builtins, __annotations__={}, __loader__=importlib.machinery.BuiltinImporter)
    sys.modules["__main__"] = main
    code, interrupted = 0, False
    try:
        if how == "-m":
            # Run anew, as python -m does, not the copy the server imported (a package's
            # __main__ runs; the package itself stays).
            if not hasattr(sys.modules.get(what), "__path__"):
                sys.modules.pop(what, None)
            sys.modules.pop(what + ".__main__", None)
            runpy._run_module_as_main(what)  # what python -m runs, in this __main__
        elif how == "-c":
            exec(compile(what, "<string>", "exec"), main.__dict__)
        else:
            loader = importlib.machinery.SourceFileLoader("__main__", what)
            main.__dict__.update(__file__=what, __cached__=None, __loader__=loader)
            with open(what, "rb") as source:
                exec(compile(source.read(), what, "exec"), main.__dict__)
    except SystemExit as stop:
        code = _exit_status(stop.code)
    except KeyboardInterrupt as error:
        _print_traceback(error, how)
        code, interrupted = 1, True
    except BaseException as error:
        _print_traceback(error, how)
        code = 1
    threading._shutdown()  # non-daemon threads end first, as at the end of python's main
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120
    if interrupted:  # an uncaught KeyboardInterrupt: python ends by SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


def _print_traceback(error: BaseException, how: str) -> None:
    """The traceback python prints: from the command's frames on (runpy's, under -m)."""
    frames = error.__traceback__
    while frames is not None and frames.tb_next is not None and frames.tb_frame.f_code.co_filename == __file__:
        frames = frames.tb_next
    traceback.print_exception(type(error), error, frames)


def _exit_status(code: Any) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _become_main_process() -> None:
    """multiprocessing in the command sees a main process of its own, as in a real start: no
    parent, no children, its own forkserver and resource tracker when it starts one."""
    me = process.current_process()
    me._identity, me._name, me._parent_pid, me._popen = (), "MainProcess", None, None
    me._config.pop("daemon", None)
    me._config["authkey"] = process.AuthenticationString(os.urandom(32))
    process._parent_process = None
    process._children = set()
    server = forkserver._forkserver
    for fd in (server._forkserver_alive_fd, resource_tracker._resource_tracker._fd):
        if fd is not None:
            os.close(fd)
    server._forkserver_alive_fd = server._forkserver_address = server._forkserver_pid = None
    server._inherited_fds = None
    server._preload_modules = ["__main__"]
    resource_tracker._resource_tracker._fd = resource_tracker._resource_tracker._pid = None


def _standard_streams() -> None:
    """sys.stdin, stdout and stderr made anew on file descriptors 0, 1 and 2, as python makes them."""
    made = []
    for fd, name, like in (
        (0, "<stdin>", sys.__stdin__),
        (1, "<stdout>", sys.__stdout__),
        (2, "<stderr>", sys.__stderr__),
    ):
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        raw.name = name
        # stdin and stdout buffered (by lines on a terminal); stderr written through.
        buffered = raw if fd == 2 else io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        text = io.TextIOWrapper(
            buffered,  # type: ignore[arg-type]
            encoding=like.encoding if like else "utf-8",
            errors=like.errors if like else None,
            newline="\n",
            line_buffering=fd != 2 and raw.isatty(),
            write_through=fd == 2,
        )
        made.append(text)
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made
