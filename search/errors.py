"""The search's input errors, beneath every module of the search so that any of them may raise one."""


from ..gp.errors import InputError


class RunError(InputError, ValueError):
    """A run that cannot start or resume (the message says why); the CLI exits 1."""
