"""The write guard on the texts mem0 makes itself: each fact its LLM extracts (``add(infer=True)``), a procedural
summary, and the text of every memory mem0 creates or updates, screened per ``hygiene.secrets`` before mem0
embeds and stores it. What goes *in* is screened by :mod:`mem0_hygiene.memory.guard`; this module screens what
comes back, so a credential the model did not get from this call (copied from an old memory written before the
guard, from custom instructions, or made up) never reaches the vector store, history.db or the entity store.

Where the hooks sit, and why. mem0 2.x (2.0 to 2.2) turns the LLM's answer into facts inside
``_add_to_vector_store``: each fact's payload (``data``, ``hash``, ``text_lemmatized``), its history row, its entity
links and its result item are all made from the answer's texts, with no per-fact method to wrap. So the answer is
screened where mem0 receives it: while mem0's ``_add_to_vector_store`` (or ``_create_procedural_memory``) runs,
the LLM's ``generate_response`` is seen through :func:`_screened_call`, which parses the answer as mem0 does
(``remove_code_blocks``, ``json.loads``, ``extract_json``), screens each fact's ``text`` and hands mem0 the result.
``_create_memory`` and ``_update_memory``, the two methods through which every other text reaches the stores
(``infer=False`` texts, image descriptions, procedural summaries, ``update``), screen their ``data`` too.

The screening call is put on the LLM object the first time it is needed (and again when a test or an app replaced
``generate_response`` since), and it only screens inside those methods (a context variable says so), so other
calls to the same LLM (the write decision's judge) get their answers untouched.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import SecretRefused
from ..stores.ledger import LedgerRow
from .guard import screen_text

logger = logging.getLogger(__name__)

_SCREENS = "_mem0_hygiene_screens"  # marks the screening call put on an LLM object


@dataclass
class _AnswerScreen:
    """One screened LLM call: the policy, what the answer is (``facts``: mem0's extraction JSON; else one text),
    what was taken out of each stored text, and the refusal when the policy is "refuse"."""

    secrets: str
    facts: bool
    found: dict[str, tuple[str, ...]] = field(default_factory=dict)  # text as stored -> kinds redacted from it
    refused: SecretRefused | None = None

    def screen(self, text: str, where: str) -> str:
        cleaned, seen = screen_text(text, self.secrets, "allow", where)
        if seen.redacted:
            self.found[cleaned] = tuple(dict.fromkeys((*self.found.get(cleaned, ()), *seen.redacted)))
        return cleaned

    def answer(self, answer: Any) -> Any:
        """The LLM's answer as mem0 may read it."""
        if not isinstance(answer, str) or self.secrets == "allow":
            return answer
        try:
            return self._facts(answer) if self.facts else self.screen(answer, "the summary the LLM wrote")
        except SecretRefused as exc:
            self.refused = exc  # raised once mem0 is done: here mem0 would wrap it in its LLMError
            return json.dumps({"memory": []}) if self.facts else ""

    def _facts(self, answer: str) -> str:
        from mem0.memory.utils import extract_json, remove_code_blocks

        try:  # as mem0 reads it
            body = remove_code_blocks(answer)
            try:
                parsed = json.loads(body, strict=False)
            except json.JSONDecodeError:
                parsed = json.loads(extract_json(body), strict=False)
            facts = parsed.get("memory", [])
        except Exception:
            # mem0 cannot read it either and stores nothing from it; its log line may quote it, redacted
            return self.screen(answer, "the LLM's answer")
        if not isinstance(facts, list):
            return answer
        changed = False
        for index, fact in enumerate(facts, start=1):
            if isinstance(fact, dict) and isinstance(fact.get("text"), str):
                cleaned = self.screen(fact["text"], f"fact {index} the LLM extracted")
                if cleaned != fact["text"]:
                    fact["text"] = cleaned
                    changed = True
        return json.dumps(parsed) if changed else answer


_ACTIVE: ContextVar[_AnswerScreen | None] = ContextVar("mem0_hygiene_llm_answer_screen", default=None)
_COLLECTED: ContextVar[dict[str, tuple[str, ...]] | None] = ContextVar("mem0_hygiene_llm_redactions", default=None)


def _screened_call(call: Callable[..., Any]) -> Callable[..., Any]:
    def generate_response(*args: Any, **kwargs: Any) -> Any:
        answer = call(*args, **kwargs)
        screen = _ACTIVE.get()
        return answer if screen is None else screen.answer(answer)

    setattr(generate_response, _SCREENS, True)
    generate_response.__wrapped__ = call  # type: ignore[attr-defined]
    return generate_response


def _install(llm: Any) -> None:
    """Put the screening call on ``llm`` unless its ``generate_response`` is one already."""
    current = getattr(llm, "generate_response", None)
    if current is None or getattr(current, _SCREENS, None) is True:  # (a mock answers any attribute)
        return
    try:
        llm.generate_response = _screened_call(current)
    except (AttributeError, TypeError):  # an object that takes no attributes: its answers pass the guard below
        logger.warning(
            "mem0-hygiene could not screen the answers of %s; facts it returns are screened when stored",
            type(llm).__name__,
        )


@contextlib.contextmanager
def collecting_redactions() -> Iterator[dict[str, tuple[str, ...]]]:
    """Within the block, the kinds of credential taken out of each fact mem0's LLM returned, by memory id."""
    found: dict[str, tuple[str, ...]] = {}
    token = _COLLECTED.set(found)
    try:
        yield found
    finally:
        _COLLECTED.reset(token)


def with_redactions(
    results: list[dict[str, Any]], rows: list[LedgerRow], found: dict[str, tuple[str, ...]]
) -> list[LedgerRow]:
    """Say in each result item (``["hygiene"]["redacted"]``) and ledger row what was taken out of its fact;
    returns the rows (changed ones replaced)."""
    for item in results:
        kinds = found.get(str(item.get("id")))
        if kinds and item.get("event", "ADD") in ("ADD", "UPDATE"):
            facts = item.setdefault("hygiene", {})
            facts["redacted"] = list(dict.fromkeys((*(facts.get("redacted") or ()), *kinds)))
    out = []
    for row in rows:
        kinds = found.get(row.memory_id)
        if kinds:
            merged = dict.fromkeys((*(row.redacted.split(",") if row.redacted else ()), *kinds))
            row = LedgerRow.of(**{**row.__dict__, "redacted": ",".join(merged)})
        out.append(row)
    return out


class FactGuardMixin:
    """Mixin for the drop-in ``Memory``: the hooks above, over mem0's own methods. Expects ``hygiene_settings``
    and mem0's ``llm``."""

    if TYPE_CHECKING:
        from ..config import HygieneSettings

        hygiene_settings: HygieneSettings
        llm: Any

    @contextlib.contextmanager
    def _screening_llm(self, facts: bool) -> Iterator[_AnswerScreen]:
        screen = _AnswerScreen(self.hygiene_settings.secrets, facts)
        _install(self.llm)
        token = _ACTIVE.set(screen)
        try:
            yield screen
        except Exception:
            if screen.refused is not None:  # what mem0 made of the empty answer it was given instead
                raise screen.refused from None
            raise
        finally:
            _ACTIVE.reset(token)
        if screen.refused is not None:
            raise screen.refused

    def _add_to_vector_store(self, messages: Any, metadata: Any, filters: Any, infer: Any, prompt: Any = None) -> Any:
        if not infer:
            return super()._add_to_vector_store(messages, metadata, filters, infer, prompt=prompt)  # type: ignore[misc]
        with self._screening_llm(facts=True) as screen:
            items = super()._add_to_vector_store(messages, metadata, filters, infer, prompt=prompt)  # type: ignore[misc]
        self._note(items, screen)
        return items

    def _create_procedural_memory(self, *args: Any, **kwargs: Any) -> Any:
        with self._screening_llm(facts=False) as screen:
            result = super()._create_procedural_memory(*args, **kwargs)  # type: ignore[misc]
        self._note(result.get("results") if isinstance(result, dict) else None, screen)
        return result

    @staticmethod
    def _note(items: Any, screen: _AnswerScreen) -> None:
        collected = _COLLECTED.get()
        if not screen.found or collected is None or not isinstance(items, list):
            return
        for item in items:
            kinds = screen.found.get(str(item.get("memory"))) if isinstance(item, dict) else None
            if kinds:
                collected[str(item.get("id"))] = kinds

    def _guarded(self, data: Any, where: str) -> Any:
        if not isinstance(data, str) or self.hygiene_settings.secrets == "allow":
            return data
        cleaned, _seen = screen_text(data, self.hygiene_settings.secrets, "allow", where)
        return cleaned

    def _create_memory(self, data: Any, existing_embeddings: Any, metadata: Any = None) -> Any:
        return super()._create_memory(  # type: ignore[misc]
            self._guarded(data, "the memory's text"), existing_embeddings, metadata=metadata
        )

    def _update_memory(self, memory_id: Any, data: Any, existing_embeddings: Any, metadata: Any = None) -> Any:
        return super()._update_memory(  # type: ignore[misc]
            memory_id, self._guarded(data, "the new text"), existing_embeddings, metadata=metadata
        )
