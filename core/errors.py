"""Exceptions whose messages are written for a teacher, not a developer.

The app shows ``str(error)`` as it is, so every message says what happened and what to do.
"""


class ExplorerError(Exception):
    """Base class: anything the app can show as a clear message and recover from."""


class ModelLoadError(ExplorerError):
    """A model could not be loaded (unreachable, unknown, not BERT, too large, unsafe files)."""


class ModelUnavailableError(ModelLoadError):
    """The model is not on this machine and the model hub cannot be reached."""


class NotBertError(ModelLoadError):
    """The model exists but is not a BERT-family model this explorer can take apart."""


class ModelTooLargeError(ModelLoadError):
    """The model would not fit the memory this explorer allows itself."""


class InputError(ExplorerError):
    """The text given cannot be analysed as it is (empty, B without A, too long untruncated)."""
