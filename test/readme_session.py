"""Runs README commands as a reader would type them in one shell per README section: the
section's ``source``/``export`` lines carry over to its later commands (``cd X && …`` too), every
command runs in a scratch directory on a ROS domain of its own, a command that talks to a running
stack finds one started in the background, and a command that runs until stopped is stopped with
SIGINT once it printed its first result, then its exit status and output are checked.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import domains
from readme_commands import (
    COMMAND_TIMEOUT_S,
    FIRST_RESULT_TIMEOUT_S,
    STRICT_DEGRADED,
    Command,
    Ran,
    is_setup,
    shortened,
    split_line,
)
from ros2_env import Watched, crashed_as


@dataclass(frozen=True)
class Endless:
    """A kind of command that runs until stopped: the regex naming it, the regex of the output line
    that is its first result, how long it then runs on, the regex its output must match once
    SIGINT stopped it, and the exit statuses that mean it stopped as asked."""

    pattern: str
    first: str
    settle_s: float = 0.0
    after_stop: str = ""
    stopped_codes: tuple[int, ...] = (0,)  # its exit status after SIGINT
    # a crash of the program itself on SIGINT (killed by a signal, its output matching this):
    # a known fault of a third-party tool, so the line is run once more (and must then pass)
    upstream_crash: str = ""


@dataclass
class Suite:
    """What a suite's sessions need: the stack commands talking to a stack find running (a shell
    command), the regex of its line saying the loop runs, which commands need it, the endless
    kinds, the checks of commands that end by themselves, and each placeholder's value."""

    stack: str
    stack_ready: str
    needs_stack: Callable[[str], bool]
    endless: list[Endless]
    checks: list[tuple[str, str]] = field(default_factory=list)  # (command regex, stdout regex)
    placeholders: dict[str, str] = field(default_factory=dict)
    # (regex, replacement): a command it matches is followed by the command re.sub makes of it
    follow_ups: list[tuple[str, str]] = field(default_factory=list)
    # a section's first endless command matching this is the stack its bus commands talk to (as
    # the README's "in a second terminal"); else `stack`
    section_stack: str | None = None


class Session:
    """One README section's shell: setup lines so far, scratch directory, background stack."""

    def __init__(self, suite: Suite, cwd: Path, env: dict[str, str]):
        self.suite, self.cwd, self.env = suite, cwd, env
        self.prefix: list[str] = []
        self.stack: Watched | None = None
        self.stack_domain: int | None = None
        self.stack_text: str | None = None  # the section's own stack command (section_stack)
        self.used_domains: set[int] = set()  # (a ros2 command may leave a daemon on each)
        self.previous: str = ""  # the README's command before: a trailing `…` repeats its arguments

    # --- the shell ---------------------------------------------------------------------------
    def argv(self, text: str, exec_last: bool = False) -> list[str]:
        """bash running the section's set-up lines, then the command (``exec``'d: the signals
        a test sends reach it, as Ctrl-C in a terminal does)."""
        if exec_last:  # `exec` after the command's variable assignments: `A=1 exec cmd`
            text = re.sub(r"^((?:\w+=\S*\s+)*)", r"\1exec ", text, count=1)
        return ["bash", "-c", "\n".join([*self.prefix, text])]

    def environment(self, domain: int) -> dict[str, str]:
        self.used_domains.add(domain)
        return {**self.env, "ROS_DOMAIN_ID": str(domain)}

    def filled(self, text: str) -> str:
        """The text with the suite's placeholders replaced by their values."""
        for placeholder, value in self.suite.placeholders.items():
            text = re.sub(rf"(?<![\w/]){re.escape(placeholder)}(?![\w])", value, text)
        return text

    def prepared(self, text: str) -> str:
        """The command with its placeholders filled in and a long --duration shortened."""
        if text.endswith("…") and " " in text:  # "the same arguments" as the command before it
            shown = text[:-1].split(" ", 1)[1].strip()  # the words after the program
            before = self.previous.split(" ", 1)[-1]
            if before.startswith(shown):
                text = text[:-1] + before[len(shown):].strip()
        return shortened(self.filled(text))

    # --- running -----------------------------------------------------------------------------
    def run_line(self, command: Command) -> list[Ran]:
        """Run one README line (its ';'- and '&'-separated commands); what each did."""
        started = time.monotonic()
        done = self._run_line(command)
        crash = self.upstream_crash(done)
        if crash:
            print(f"README.md:{command.line}: {crash}; run once more in a fresh directory")
            first_cwd, self.cwd = self.cwd, self.cwd / f"again-{command.line}"
            self.cwd.mkdir()
            try:
                done = self._run_line(command)
            finally:
                self.cwd = first_cwd
        self.previous = command.text
        print(f"README.md:{command.line}: {time.monotonic() - started:6.1f} s  {command.key}")
        return done

    def passed_over(self, command: Command) -> None:
        """A command of the section this suite does not run (still the one a `…` refers to)."""
        self.previous = command.text

    def _run_line(self, command: Command) -> list[Ran]:
        text = command.text
        cd = re.match(r"^cd (\S+) && (.+)$", text, re.S)
        if cd and not command.inline:
            self.prefix.append(f"cd {cd.group(1)}")
            text = cd.group(2)
        if is_setup(text) and not command.inline:
            self.prefix.append(self.filled(text))
            return [Ran(text, 0, "", "")]
        parts = split_line(text)
        if any(self.suite.needs_stack(p) for p, _ in parts):
            problem = self.ensure_stack()
            if problem:
                return [Ran(text, None, self.stack.output if self.stack else "", problem)]
        own = domains.claim(f"readme-{command.line}-{os.getpid()}")
        try:
            done: list[Ran] = []
            background: list[tuple[str, Watched]] = []
            for part, sep in parts:
                prepared = self.prepared(part)
                domain = self.stack_domain if self.suite.needs_stack(part) else own
                endless = self.endless(prepared)
                pattern = self.suite.section_stack
                if endless and pattern and self.stack_text is None and re.search(pattern, prepared):
                    self.stack_text = prepared
                if endless or sep == "&":
                    background.append((prepared, self.start(prepared, domain)))
                    if sep != "&":
                        done += self.finish(background)
                        background = []
                else:
                    done.append(self.once(prepared, domain))
            done += self.finish(background)
            return done
        finally:
            domains.release(own)

    def upstream_crash(self, done: list[Ran]) -> str:
        """What crashed, when a command of the line failed only by its endless kind's known
        third-party crash on SIGINT; else ''."""
        for ran in done:
            kind = self.endless(ran.text)
            if (ran.problem and kind is not None and kind.upstream_crash
                    and crashed_as(ran.code, ran.output, kind.upstream_crash)):
                return f"{ran.text!r} crashed on SIGINT (exit {ran.code}) as {kind.upstream_crash!r}"
        return ""

    def endless(self, text: str) -> Endless | None:
        return next((e for e in self.suite.endless if re.search(e.pattern, text)), None)

    def start(self, text: str, domain: int) -> Watched:
        return Watched(self.argv(text, exec_last=True), self.environment(domain), cwd=str(self.cwd))

    def finish(self, started: list[tuple[str, Watched]]) -> list[Ran]:
        """Wait for each endless command's first result, then SIGINT them all; what each did."""
        problems = {}
        for text, proc in started:
            kind = self.endless(text)
            if kind is None:
                problems[text] = "runs until stopped, but no rule says what its first result is"
            elif proc.wait_for_line(kind.first, FIRST_RESULT_TIMEOUT_S) is None:
                problems[text] = f"no first result ({kind.first!r}) within {FIRST_RESULT_TIMEOUT_S:g} s"
        if started and not problems:
            settle = max(self.endless(t).settle_s for t, _ in started)
            time.sleep(settle)  # let it work a while (a recorder records)
        out = []
        for text, proc in started:
            code = stop(proc)
            kind = self.endless(text)
            problem = problems.get(text, "")
            if not problem and code not in kind.stopped_codes:
                problem = f"exit status not {' or '.join(map(str, kind.stopped_codes))} after SIGINT"
            if not problem and kind.after_stop and not re.search(kind.after_stop,
                                                                  proc.output.rstrip(), re.M):
                problem = f"after SIGINT its output lacks {kind.after_stop!r}"
            out.append(Ran(text, code, proc.output, problem))
        return out

    def once(self, text: str, domain: int) -> Ran:
        """Run a command that ends by itself; it worked if it exits 0 and passes its checks."""
        try:
            proc = subprocess.run(self.argv(text), env=self.environment(domain), cwd=self.cwd,
                                  capture_output=True, text=True, errors="replace",
                                  timeout=COMMAND_TIMEOUT_S, start_new_session=True)
        except subprocess.TimeoutExpired as exc:
            output = "".join(s.decode(errors="replace") if isinstance(s, bytes) else (s or "")
                             for s in (exc.stdout, exc.stderr))
            return Ran(text, None, output, f"no exit within {COMMAND_TIMEOUT_S:g} s")
        output = proc.stdout + proc.stderr
        held = proc.returncode == 1 and re.search(STRICT_DEGRADED, proc.stdout.rstrip(), re.M)
        problem = "" if proc.returncode == 0 or held else "exit status not 0"
        for pattern, expected in self.suite.checks:
            if not problem and re.search(pattern, text) and not re.search(
                    expected, proc.stdout.rstrip(), re.M):
                problem = f"its standard output lacks {expected!r}"
        for pattern, replacement in self.suite.follow_ups:
            if not problem and re.search(pattern, text):
                follow_up = re.sub(pattern, replacement, text)
                after = self.once(follow_up, domain)
                problem = after.problem and f"the follow-up {follow_up!r}: {after.problem}"
        return Ran(text, proc.returncode, output, problem)

    # --- the background stack ---------------------------------------------------------------
    def ensure_stack(self) -> str:
        """Start the background stack if it is not running; why it is not, or ''."""
        if self.stack is not None and self.stack.proc.poll() is None:
            return ""
        if self.stack is not None:
            return "the background stack ended"
        self.stack_domain = domains.claim(f"readme-stack-{id(self)}")
        self.stack = self.start(self.stack_text or self.suite.stack, self.stack_domain)
        if self.stack.wait_for_line(self.suite.stack_ready, FIRST_RESULT_TIMEOUT_S) is None:
            return f"the background stack ({self.stack_text or self.suite.stack}) did not start"
        return ""

    def close(self) -> Ran | None:
        """Stop the background stack (SIGINT); what it did, None if there was none."""
        if self.stack is None or self.stack_domain is None:
            return None
        code = stop(self.stack)
        domains.release(self.stack_domain)
        self.stack_domain = None
        return Ran(self.stack_text or self.suite.stack, code, self.stack.output,
                   "" if code == 0 else "the background stack did not end cleanly on SIGINT")


def check_section(session: Session, section: str, commands: list, suites: dict,
                  run_here: tuple[str, ...], ran: list | None = None) -> None:
    """Run a section's commands whose suite is in ``run_here`` (passing over the others), stop
    the background stack they used, and fail with every command that went wrong."""
    ran = list(ran or [])
    for command in commands:
        if suites[command] in run_here:
            ran += session.run_line(command)
        else:
            session.passed_over(command)
    stack = session.close()
    ran += [stack] if stack else []
    failed = [r.report() for r in ran if r.problem]
    assert not failed, f"README.md, section {section!r}:\n\n" + "\n\n".join(failed)


def stop(proc: Watched, timeout_s: float = 30.0) -> int:
    """SIGINT to the command's process group (as Ctrl-C in a terminal), SIGKILL after timeout_s."""
    if proc.proc.poll() is None:
        try:
            os.killpg(proc.proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
    try:
        proc.proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        pass
    code = proc.proc.poll()
    try:
        os.killpg(proc.proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.proc.wait(10)
    time.sleep(0.2)  # the reader thread takes the last lines
    return code if code is not None else proc.proc.returncode
