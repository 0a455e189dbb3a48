"""DWS ResourceError: how driver failures read in Workflow status (§1.14).

A failure has a user message, a debug message, a type (Internal, User, WLM)
and a severity (Minor, Major, Fatal).  Severity picks the driver status
(Minor: Running, so the workflow shows DriverWait; Major:
TransientCondition; Fatal: Error).  The driver message is
``"<Type> error: <user message>"`` -- an empty user message gives the
literal ``"Internal error: "`` -- and the driver error field
``"<type> error: <debug or user message>"``.
"""

from __future__ import annotations

from dataclasses import dataclass

SEVERITY_STATUS = {"Minor": "Running", "Major": "TransientCondition", "Fatal": "Error"}


@dataclass(frozen=True)
class ResourceError(Exception):
    user_message: str = ""
    debug_message: str = ""
    type: str = "Internal"      # Internal | User | WLM
    severity: str = "Fatal"     # Minor | Major | Fatal

    def __post_init__(self) -> None:
        if self.type not in ("Internal", "User", "WLM"):
            raise ValueError(f"invalid ResourceError type {self.type!r}")
        if self.severity not in SEVERITY_STATUS:
            raise ValueError(f"invalid ResourceError severity {self.severity!r}")

    def __str__(self) -> str:
        return self.driver_message

    @property
    def driver_status(self) -> str:
        return SEVERITY_STATUS[self.severity]

    @property
    def driver_message(self) -> str:
        return f"{self.type} error: {self.user_message}"

    @property
    def driver_error(self) -> str:
        return f"{self.type.lower()} error: {self.debug_message or self.user_message}"


def user(msg: str, severity: str = "Fatal") -> ResourceError:
    return ResourceError(user_message=msg, type="User", severity=severity)


def internal(msg: str = "", debug: str = "", severity: str = "Fatal") -> ResourceError:
    return ResourceError(user_message=msg, debug_message=debug, severity=severity)


def wlm(msg: str, severity: str = "Fatal") -> ResourceError:
    return ResourceError(user_message=msg, type="WLM", severity=severity)


def apply_to_driver(driver: dict[str, object], err: ResourceError) -> dict[str, object]:
    """The driver entry after its start/finish failed with err."""
    out = dict(driver)
    out.update(status=err.driver_status, message=err.driver_message, error=err.driver_error,
               completed=False)
    return out
