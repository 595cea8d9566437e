"""The library's own error for invalid arguments.

Every component checks its arguments when it is constructed and reports every
problem at once, each naming the argument (``autoscaling.max_nodes``,
``taints[1].key``) in the Python spelling. A program that read its arguments
from a config file catches :class:`ComponentArgsError` and maps the names
back to its own keys.
"""


class ComponentArgsError(ValueError):
    """Invalid arguments: ``issues`` holds every (argument path, message)."""

    def __init__(self, component: str, issues: list[tuple[str, str]]):
        self.component = component
        self.issues = list(issues)
        count = len(self.issues)
        lines = [f"{component}: {count} invalid argument{'s' if count != 1 else ''}"]
        lines += [f"  - {path}: {message}" for path, message in self.issues]
        super().__init__("\n".join(lines))


class UnknownCloudError(ComponentArgsError):
    """A cloud the library has no profile for: nothing cloud-specific is ever guessed."""

    def __init__(self, cloud: object, known: tuple[str, ...]):
        super().__init__("cloud", [("cloud", f"{cloud!r} is not a cloud this library knows; "
                                             f"accepted: {', '.join(known)}")])
