"""The one exception tree.

Findings are data; exceptions are for bugs and I/O. Each error carries the exit
status the CLI maps it to, so no command ever ends in a traceback.

Exit statuses (SPEC §4, fixed):
  125  ringfence could not run the command safely (fail closed)
   77  denied by the profile
   75  waiting for approval
    2  bad usage of a non-run command
    1  lint found errors
"""

from __future__ import annotations

EXIT_USAGE = 2
EXIT_LINT = 1
EXIT_WAITING = 75
EXIT_DENIED = 77
EXIT_UNSAFE = 125
EXIT_LIMIT = 137           # a limit ended the run (state `limit`), whatever the command's status


class RingfenceError(Exception):
    """Base of every error ringfence raises on purpose."""

    exit_code = EXIT_UNSAFE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  fix: {self.hint}"


class UsageError(RingfenceError):
    """Bad arguments or bad input to a command."""

    exit_code = EXIT_UNSAFE


class InputError(RingfenceError):
    """Input we were asked to read could not be read (bad JSON, bad file)."""

    exit_code = EXIT_USAGE


class ProfileError(RingfenceError):
    """A profile could not be found, parsed or validated."""

    exit_code = EXIT_UNSAFE

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 key: str | None = None, hint: str | None = None) -> None:
        self.file, self.line, self.key = file, line, key
        where = ":".join(str(x) for x in (file, line) if x is not None)
        prefix = f"{where}: " if where else ""
        keypart = f" [{key}]" if key else ""
        super().__init__(f"{prefix}{message}{keypart}", hint=hint)


class SandboxError(RingfenceError):
    """The sandbox could not be built or started; we refuse to run."""

    exit_code = EXIT_UNSAFE


class LedgerError(RingfenceError):
    """The ledger could not be opened or written."""

    exit_code = EXIT_UNSAFE


class SettleError(RingfenceError):
    """The command ran, but its staged writes could not be recorded or applied; they
    are kept in the stage (nothing is lost) and the run is recorded as failed."""

    exit_code = EXIT_UNSAFE


class ApprovalError(RingfenceError):
    """An approval id is unknown, already decided, or cannot be executed."""

    exit_code = EXIT_USAGE


def ledger_write_error(exc: Exception, path: str | None = None) -> LedgerError:
    """One clear error for a ledger write that failed (disk full, read-only, corrupt),
    with the fix: the run's row is never half written (the transaction rolled back)."""
    import os

    text = str(exc)
    full = "full" in text
    if path and not full:
        try:
            st = os.statvfs(os.path.dirname(os.path.abspath(path)))
            full = st.f_bavail * st.f_frsize < 256 * 1024 or st.f_favail == 0
        except OSError:
            pass
    if full or "disk I/O" in text:
        why = "is full" if full else "is full or failing"
        return LedgerError(f"cannot write the ledger: {text} (the state dir's filesystem "
                           f"{why})",
                           hint="free space where RINGFENCE_HOME (or ~/.local/state/"
                                "ringfence) lives, or point RINGFENCE_HOME at a dir with "
                                "space; 'ringfence doctor' checks it")
    if "readonly" in text or "read-only" in text:
        return LedgerError(f"cannot write the ledger: {text}",
                           hint="make the state dir writable, or point RINGFENCE_HOME "
                                "elsewhere; read-only commands (ledger list/show/export) "
                                "still work")
    return LedgerError(f"cannot write the ledger: {text}",
                       hint="run 'ringfence doctor'; a corrupt ledger can be moved aside "
                            "(ringfence starts a new one)")
