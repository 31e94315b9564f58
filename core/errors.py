"""Exceptions whose messages are written for a teacher, not a developer.

Each error keeps its message as a template and the values that fill it, so the app can show it
in the reader's language: ``template`` is the English text (and the key of its translation),
``params`` the values. ``str(error)`` is the English message, for a notebook.
"""

from __future__ import annotations


def N_(template: str) -> str:  # noqa: N802 - gettext's conventional name
    """Mark a message for translation without translating it here: core never imports the UI.

    Babel's extractor collects every string passed to N_ into the catalog; the app translates it
    when it shows the error.
    """
    return template


def N_plural(singular: str, plural: str) -> tuple[str, str]:  # noqa: N802 - as N_
    """Mark a message with a count (its English singular and plural) for translation: an error
    given it with ``how_many=`` keeps the form for that count as its ``template``, which the app
    translates as any other (components.i18n knows both forms of a plural entry)."""
    return singular, plural


class ExplorerError(Exception):
    """Base class: anything the app can show as a clear message and recover from."""

    def __init__(self, template: str | tuple[str, str], **params: object) -> None:
        # N_plural: English has one form for 1 and one for other counts; ``how_many`` is taken
        # from the params (not a parameter of its own, so callers' **params still type-check).
        how_many = params.pop("how_many", None)
        if isinstance(template, tuple):
            template = template[0] if how_many == 1 else template[1]
        self.template = template
        self.params = params
        super().__init__(template.format(**params) if params else template)


class ModelLoadError(ExplorerError):
    """A model could not be loaded (unreachable, unknown, not BERT, too large, unsafe files)."""


class ModelUnavailableError(ModelLoadError):
    """The model is not on this machine and the model hub cannot be reached."""


class NotBertError(ModelLoadError):
    """The model exists but is not a BERT-family model this explorer can take apart."""


class ModelTooLargeError(ModelLoadError):
    """The model would not fit the memory this explorer allows itself."""


class ModelNotOnHubError(ModelLoadError):
    """The hub answered, and it has no model by that name (or will not give it to us)."""


class DownloadStalledError(ModelLoadError):
    """The hub stopped sending bytes part-way; a retry resumes the partial file."""


class NotSafetensorsError(ModelLoadError):
    """The checkpoint has no safetensors weights (only pickled ones, which are never read)."""


class VocabularyError(ModelLoadError):
    """The tokenizer has no vocabulary, or one that does not fit the model's word table."""


class InputError(ExplorerError):
    """The text given cannot be analysed as it is (empty, B without A, too long untruncated)."""


class NoPretrainingHeadError(ExplorerError):
    """The model has no masked-language-model head (``cls.predictions``) or no next-sentence head
    (``cls.seq_relationship``): a checkpoint saved as a bare BertModel, such as the default
    all-MiniLM-L6-v2. ``params["head"]`` names the missing head's weights."""
