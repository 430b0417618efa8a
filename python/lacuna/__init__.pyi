"""Type stubs of lacuna's Python package (the classes live in the compiled `lacuna._lacuna`)."""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

class LacunaError(ValueError):
    """An input lacuna cannot use (grammar, schema, tokenizer, canvas); the message says what
    and where."""

class Grammar:
    """A context-free grammar; immutable, shared by many matchers."""

    @staticmethod
    def from_spec(spec: str) -> Grammar:
        """`json`, `smiles`, `cpp`, a `.lark` path or `schema:PATH`, optionally `+fence`."""
    @staticmethod
    def from_lark(text: str, name: str = "<lark>") -> Grammar:
        """A grammar from Lark text; `name` names it in errors."""
    @staticmethod
    def from_json_schema(
        schema: Union[str, Dict[str, Any], bool], lenient: bool = False, for_generation: bool = False
    ) -> Grammar:
        """A grammar from a JSON Schema (text, or a dict); strict unless `lenient`. With
        `for_generation`, a subset of the valid instances for a model to write: objects that
        name their members take no others unless `additionalProperties` says so, objects of
        more than 8 declared properties name each member once in schema order, and number
        exponents have at most two digits."""
    @property
    def warnings(self) -> List[str]:
        """What lenient compilation left unenforced."""

class Tokenizer:
    """A vocabulary: every id's exact bytes, its end-of-output ids, its forbidden ids."""

    @staticmethod
    def from_file(path: Union[str, "os.PathLike[str]"], eos: Optional[Sequence[str]] = None) -> Tokenizer:
        """Reads a Hugging Face `tokenizer.json`."""
    @staticmethod
    def from_json(text: str, eos: Optional[Sequence[str]] = None) -> Tokenizer:
        """Reads the text of a `tokenizer.json`."""
    @staticmethod
    def from_tokens(
        tokens: Sequence[bytes], eos_ids: Sequence[int], forbidden_ids: Sequence[int] = ()
    ) -> Tokenizer:
        """A vocabulary given id by id."""
    @property
    def vocab_size(self) -> int: ...
    @property
    def eos_ids(self) -> List[int]: ...
    def token_bytes(self, id: int) -> bytes: ...
    def token_kind(self, id: int) -> str:
        """`"text"`, `"eos"` or `"forbidden"`."""

class CanvasMatcher:
    """One canvas of `length` positions (ids or masks) over a grammar and a vocabulary."""

    def __init__(
        self,
        grammar: Grammar,
        tokenizer: Tokenizer,
        length: int,
        vocab_size: Optional[int] = None,
    ) -> None: ...
    @property
    def length(self) -> int: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def stats(self) -> Dict[str, int]:
        """masks, mask_micros, unknown_ids, checks."""
    def set_canvas(self, ids: Sequence[Optional[int]]) -> None:
        """One id or None (masked) per position."""
    def canvas(self) -> List[Optional[int]]: ...
    def masked_positions(self) -> List[int]: ...
    def reset(self) -> None:
        """Masks every position again (and clears an error)."""
    def is_error(self) -> bool:
        """Whether a call found that the canvas cannot be completed."""
    def get_error(self) -> Optional[str]:
        """Why the canvas cannot be completed; None when no call has found that."""
    def set_timeout_ms(self, ms: Optional[int]) -> None:
        """Later calls give up after `ms` of work (answers unknown); None: no limit."""
    def fill_bitmask(self, bitmask: Any, positions: Sequence[int], row0: int = 0) -> None:
        """Exact masks of masked `positions` into rows `row0..` of an int32 bitmask."""
    def allowed_tokens(self, position: int) -> List[int]:
        """The ids allowed at a masked position, ascending."""
    def validate(self, pairs: Sequence[Tuple[int, int]]) -> int:
        """How many (position, id) pairs, placed in order, keep the canvas completable."""
    def commit(self, pairs: Sequence[Tuple[int, int]]) -> int:
        """`validate`, placing the accepted pairs."""
    def retract(self, positions: Sequence[int]) -> None:
        """Masks positions again (and clears an error)."""
    def is_completable(self) -> Optional[bool]:
        """None when a budget or the timeout ran out."""
    def completion(self) -> Optional[bytes]:
        """A full output keeping every placed token's text (holes filled by the grammar)."""

class InfillMatcher:
    """A middle written left to right between `prefix` and `suffix` (fill-in-the-middle): the
    next token's exact mask, llguidance's matcher shape. `suffix` may be a list of texts with
    later holes between them. The tokenizer's end-of-output ids end the middle."""

    def __init__(
        self,
        grammar: Grammar,
        tokenizer: Tokenizer,
        prefix: Union[str, bytes],
        suffix: Union[str, bytes, Sequence[Union[str, bytes]]],
        vocab_size: Optional[int] = None,
    ) -> None: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def stats(self) -> Dict[str, int]: ...
    def fill_next_token_bitmask(self, bitmask: Any, row: int = 0) -> None:
        """The next token's mask into row `row` of an int32 bitmask."""
    def allowed_tokens(self) -> List[int]: ...
    def consume_token(self, id: int) -> bool:
        """Appends `id` if allowed (an end id ends the middle); a refusal is an error state."""
    def validate_tokens(self, ids: Sequence[int]) -> int: ...
    def may_end(self) -> Optional[bool]: ...
    def is_finished(self) -> bool: ...
    def middle(self) -> bytes: ...
    def middle_ids(self) -> List[int]: ...
    def is_error(self) -> bool: ...
    def get_error(self) -> Optional[str]: ...
    def reset(self) -> None: ...
    def set_timeout_ms(self, ms: Optional[int]) -> None: ...

def fill_bitmasks(
    items: Sequence[Tuple[CanvasMatcher, Sequence[int], int]],
    bitmask: Any,
    threads: Optional[int] = None,
) -> None:
    """`fill_bitmask` for many matchers at once, on several threads."""

def allocate_token_bitmask(rows: int, vocab_size: int) -> Any:
    """A zeroed int32 NumPy array [rows, ceil(vocab_size / 32)]."""

def bitmask_to_bool(bitmask: Any, vocab_size: int) -> Any:
    """Booleans [rows, vocab_size], True where allowed."""

def apply_token_bitmask_inplace(logits: Any, bitmask: Any) -> None:
    """-inf where an id is not allowed (NumPy or torch)."""

def tokenizer_from_huggingface(tokenizer: Any, eos: Optional[Sequence[str]] = None) -> Tokenizer:
    """A Tokenizer from a `tokenizers.Tokenizer` or a fast `transformers` tokenizer."""
