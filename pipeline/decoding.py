"""Cached decoding in `keras.ops`: one static-shape loop; greedy, sampling and beam search choose the tokens.

The encoder runs once and the cross-attention keys/values are projected once per sentence; each step
then feeds one token per hypothesis through the decoder, writing its keys/values into a cache whose
length is a Python int. Every shape is fixed before the loop starts, so it compiles whole with XLA on
TensorFlow and with `jax.jit` on JAX: rows that have ended keep their place and are masked, never
gathered out. Beam search takes its first step once per sentence (every hypothesis is still [start]),
then moves hypotheses between rows through the cache's small slot tables, never its keys and values
(`Seq2SeqTransformer.init_cache`).

Read top to bottom:
    Step, only_end_at_limit   what the loop hands a strategy at each step
    Greedy.next_token         the most likely token
    Sampling.next_token       a token drawn with temperature, top-k and top-p (nucleus)
    BeamSearch.choose         the best `beams` continuations of each sentence, GNMT length penalty
    BeamSearch.best           the best hypothesis of each sentence, or its `n_best` best
    top_k_by_chunks           ops.top_k for beam search's small k, in two fast stages
    decode_loop               the loop they share (encode, step until every sentence is done)
    full_recompute_greedy     the tutorials' slow loop, the tests' reference
    compile_decoder           numpy in, numpy out; compiled once per static setting on each backend
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Iterable, NamedTuple, Sequence

import numpy as np
import keras
from keras import ops

from pipeline.options import OPTIONS

NEG_INF = -1e9          # a masked score: its softmax weight is exactly 0 in float32
BISECTION_STEPS = 32    # halvings of a row's logit range for top-p's floor: to range / 2**32, absolute


# -- what a strategy sees -------------------------------------------------------------------------
class Step(NamedTuple):
    """What the loop knows when a strategy chooses the next token of each of its `rows` hypotheses."""
    index: Any          # int32 scalar: the output position being chosen
    logits: Any         # (rows, vocab) float32; padding, [start] and the banned [UNK] already at NEG_INF
    at_limit: Any       # (rows,) bool: the row's last allowed position, where only [end] may come
    finished: Any       # (rows,) bool: the row has already emitted [end]
    end_id: int


def only_end_at_limit(scores, step: Step):
    """Rows at their length limit may only end: every other token's score becomes NEG_INF."""
    not_end = ops.arange(ops.shape(scores)[-1]) != step.end_id                   # (vocab,)
    return ops.where(ops.logical_and(step.at_limit[:, None], not_end[None]), NEG_INF, scores)


def top_k_by_chunks(scores, k: int, chunk: int = 32):
    """`ops.top_k(scores, k)` over the last axis of (rows, vocab), the same values and ids, ties to the lower
    id, but several times faster on CPU for a large vocabulary and small `k` (beam search's k = beams).

    The best k of a row lie in the k chunks of `chunk` ids with the largest maxima (ties to the lower
    chunk): a best entry outside them would be beaten by each of their maxima. Those chunks, read in id
    order, give the answer with a second top_k over k * chunk candidates.
    """
    rows, vocab = ops.shape(scores)[0], scores.shape[-1]
    chunks = -(-vocab // chunk)
    if chunks <= k:
        return ops.top_k(scores, k=k)
    padded = ops.pad(scores, [(0, 0), (0, chunks * chunk - vocab)], constant_values=float("-inf"))
    padded = ops.reshape(padded, (rows, chunks, chunk))
    _, best_chunks = ops.top_k(ops.max(padded, axis=-1), k=k)                      # (rows, k)
    best_chunks = ops.sort(ops.cast(best_chunks, "int32"), axis=-1)                 # in id order
    candidates = ops.take_along_axis(padded, best_chunks[:, :, None], axis=1)       # (rows, k, chunk)
    values, where = ops.top_k(ops.reshape(candidates, (rows, k * chunk)), k=k)
    where = ops.cast(where, "int32")
    return values, ops.take_along_axis(best_chunks, where // chunk, axis=1) * chunk + where % chunk


# -- strategies: how the next token is chosen --------------------------------------------------------
class Strategy:
    """One hypothesis per sentence, whose next token `next_token` chooses; padding once it has ended."""

    beams = 1

    def start(self, row_limit) -> Any:
        """The strategy's own loop state, given each row's length limit (rows,)."""
        return ()

    def all_done(self, finished, state):
        return ops.all(finished)

    def choose(self, step: Step, state):
        """-> (next token of each row (rows,), the row each continues (rows,) or None, new state)."""
        token = ops.cast(self.next_token(only_end_at_limit(step.logits, step), step.index), "int32")
        return ops.where(step.finished, 0, token), None, state

    def next_token(self, logits, index):
        raise NotImplementedError

    def best(self, tokens, finished, state):
        """The hypothesis kept for each sentence: (rows, steps) -> (batch, steps)."""
        return tokens


class Greedy(Strategy):
    """The most likely token (keras-hub's GreedySampler)."""

    def next_token(self, logits, index):
        # ops.argmax, as two plain reductions: XLA on CPU runs argmax's paired reduction slowly
        best = ops.max(logits, axis=-1, keepdims=True)
        vocab = ops.shape(logits)[-1]
        return ops.min(ops.where(logits == best, ops.arange(vocab, dtype="int32"), vocab), axis=-1)   # the first best


class Sampling(Strategy):
    """A token drawn from the model's distribution, sharpened (`temperature` < 1) or flattened (> 1),
    cut to the `top_k` most likely tokens (0: no cut) and to the smallest set of them whose
    probability reaches `top_p` (nucleus sampling; 1.0: no cut). Only top-k sorts, and only its k best; the
    nucleus is found by bisection (`nucleus_floor`), and draws without top-k go in vocabulary order.

    Draws are inverse-CDF look-ups of `uniforms` (rows, steps), numbers in [0, 1) drawn up front
    from a seed with numpy, so one seed gives the same samples on every backend.
    """

    def __init__(self, uniforms, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0):
        self.uniforms, self.temperature, self.top_k, self.top_p = uniforms, temperature, top_k, top_p

    def next_token(self, logits, index):
        logits = ops.where(logits > NEG_INF, logits / self.temperature, NEG_INF)   # masked stays masked
        ids = None                                          # no top-k: draw in vocabulary order, no sort
        if self.top_k and self.top_k < ops.shape(logits)[-1]:
            logits, ids = ops.top_k(logits, k=self.top_k)                              # (rows, k), best first
        return self._draw(logits, ids, index, self.nucleus_floor(logits) if self.top_p < 1.0 else None)

    def nucleus_floor(self, logits):
        """(rows, 1): the lowest logit of each row's nucleus, found without sorting the vocabulary. The tokens at
        or above a logit t hold top_p of the weight for every t up to that floor and for none above it, so
        bisection between the row's lowest logit (everything: enough) and its best one finds it, to within the
        row's logit range / 2**BISECTION_STEPS, in that many passes over the vocabulary; a sort of every row costs
        far more. The nucleus is then every token at or above the floor: a sort's best-first cut, except that
        every token tied with its last one is kept (a sort keeps the first of them in its order)."""
        peak = ops.max(logits, axis=-1, keepdims=True)
        weights = ops.exp(logits - peak)
        goal = self.top_p * ops.sum(weights, axis=-1, keepdims=True)

        def enough(floor):
            return ops.sum(ops.where(logits >= floor, weights, 0.0), axis=-1, keepdims=True) >= goal

        def halve(_, bounds):
            low, high = bounds                              # the tokens at or above `low` hold enough
            middle = (low + high) / 2
            more = enough(middle)
            return ops.where(more, middle, low), ops.where(more, high, middle)

        lowest = ops.min(ops.where(logits > NEG_INF, logits, peak), axis=-1, keepdims=True)
        low, _ = ops.fori_loop(0, BISECTION_STEPS, halve, (lowest, peak))
        return ops.where(enough(peak), peak, low)

    def _draw(self, logits, ids, index, floor=None):
        """The token whose cumulative weight passes this step's uniform, over `logits` (rows, k) in the order
        given; `ids` maps their columns to token ids (None: the columns are the ids). Only the tokens at or above
        `floor` (`nucleus_floor`, the top-p cut) take part when it is given."""
        weights = ops.exp(logits - ops.max(logits, axis=-1, keepdims=True))         # unnormalised probabilities
        if floor is not None:
            weights = ops.where(logits >= floor, weights, 0.0)
        cumulative = ops.cumsum(weights, axis=-1)                                    # (rows, k)
        threshold = ops.take(self.uniforms, index, axis=1)[:, None] * cumulative[:, -1:]
        # the first column with a weight whose running total passes the threshold: never a zero-probability token
        # (cut, banned, past the limit), even where XLA's parallel scan steps the total over a run of zero
        # weights; where rounding leaves none past it, the last column with a weight
        columns = ops.shape(weights)[-1]
        positive = weights > 0
        index_of = ops.arange(columns, dtype="int32")
        pick = ops.min(ops.where((cumulative > threshold) & positive, index_of, columns), axis=-1)
        last = ops.max(ops.where(positive, index_of, 0), axis=-1)
        pick = ops.minimum(pick, last)
        if ids is None:
            return pick
        return ops.take_along_axis(ids, pick[:, None], axis=1)[:, 0]


class BeamSearch(Strategy):
    """The `beams` most probable hypotheses of each sentence, grown together; the best finished one
    wins under the GNMT length penalty lp(length) = ((5 + length) / 6) ** alpha.

    Rows are hypotheses, `beams` consecutive rows per sentence. A sentence is done once no live
    hypothesis can beat its best finished one; its rows then freeze, so that a sentence decodes
    the same alone or in any batch.

    `n_best` > 1 keeps each sentence's `n_best` best hypotheses, best first (see `best`).
    """

    def __init__(self, beams: int, alpha: float = 0.0, n_best: int = 1):
        self.beams, self.alpha, self.n_best = beams, alpha, n_best

    def start(self, row_limit):
        first = np.full((1, self.beams), NEG_INF, dtype="float32")
        first[0, 0] = 0.0                                   # identical beams at the start: keep one
        limit = ops.reshape(row_limit, (-1, self.beams))[:, 0]                     # (batch,)
        return {"scores": ops.zeros_like(limit, "float32")[:, None] + first,      # (batch, beams) log-prob sums
                "lengths": ops.zeros_like(row_limit),                              # (rows,) tokens so far
                "limit": limit}

    def penalty(self, lengths):
        return ops.power((5.0 + ops.cast(lengths, "float32")) / 6.0, self.alpha)

    def normalized(self, state):
        """Length-normalised scores (batch, beams)."""
        lengths = ops.reshape(ops.maximum(state["lengths"], 1), (-1, self.beams))
        return state["scores"] / self.penalty(lengths)

    def done(self, finished, state):
        """(batch,) True where no live hypothesis can still beat the sentence's best finished one.

        Log-prob sums only fall as a hypothesis grows and the penalty is largest at the length
        limit, so score / lp(limit) bounds what a live hypothesis can still reach.
        """
        finished = ops.reshape(finished, (-1, self.beams))
        best_finished = ops.max(ops.where(finished, self.normalized(state), NEG_INF), axis=1)
        best_live = ops.max(ops.where(finished, NEG_INF, state["scores"]), axis=1) / self.penalty(state["limit"])
        return ops.logical_or(ops.all(finished, axis=1), best_finished >= best_live)

    def all_done(self, finished, state):
        return ops.all(self.done(finished, state))

    def choose(self, step: Step, state):
        beams = self.beams
        slot = ops.arange(beams)[None]                                                # (1, beams)
        top, ids = top_k_by_chunks(step.logits, beams)                               # (rows, beams)
        # a row at its length limit may only end (`only_end_at_limit`, applied to the top `beams`)
        at_limit = step.at_limit[:, None]
        end_score = ops.where(slot == 0, step.logits[:, step.end_id:step.end_id + 1], NEG_INF)
        top, ids = ops.where(at_limit, end_score, top), ops.where(at_limit, step.end_id, ids)
        top = top - ops.logsumexp(step.logits, axis=-1, keepdims=True)               # log-probabilities
        # A frozen row (ended, of a done sentence, or an empty start placeholder) has one
        # continuation: itself, score unchanged, followed by padding.
        frozen = ops.logical_or(step.finished, ops.repeat(self.done(step.finished, state), beams, axis=0))
        frozen = ops.logical_or(frozen, ops.reshape(state["scores"], (-1,)) <= NEG_INF / 2)
        top = ops.where(frozen[:, None], ops.where(slot == 0, 0.0, NEG_INF), top)
        ids = ops.where(frozen[:, None], 0, ids)
        # A sentence's best `beams` continuations are among its rows' own best `beams`: rank
        # beams * beams candidates per sentence, not beams * vocab.
        candidates = ops.reshape(ops.reshape(state["scores"], (-1, 1)) + top, (-1, beams * beams))
        scores, pick = ops.top_k(candidates, k=beams)                                  # (batch, beams)
        token = ops.take_along_axis(ops.reshape(ids, (-1, beams * beams)), pick, axis=1)
        parent = pick // beams + ops.arange(ops.shape(pick)[0])[:, None] * beams       # row continued
        parent = ops.reshape(ops.cast(parent, "int32"), (-1,))
        grew = ops.logical_not(ops.take(frozen, parent, axis=0))
        lengths = ops.take(state["lengths"], parent, axis=0) + ops.cast(grew, "int32")
        token = ops.reshape(ops.cast(token, "int32"), (-1,))
        return token, parent, {**state, "scores": scores, "lengths": lengths}

    def best(self, tokens, finished, state):
        finished = ops.reshape(finished, (-1, self.beams))
        # prefer finished hypotheses: a live one left when the loop stopped cannot beat them
        unfinished_loses = ops.logical_and(ops.any(finished, axis=1, keepdims=True), ops.logical_not(finished))
        normalized = ops.where(unfinished_loses, 2 * NEG_INF, self.normalized(state))
        first_row = ops.arange(ops.shape(normalized)[0], dtype="int32") * self.beams        # (batch,)
        if self.n_best == 1:
            best = ops.cast(ops.argmax(normalized, axis=-1), "int32")
            return ops.take(tokens, best + first_row, axis=0)
        # (batch * n_best, steps), best first; a hypothesis that lost (unfinished beside a finished
        # one, or a start placeholder never filled) comes back as padding
        ranked, order = ops.top_k(normalized, k=self.n_best)                               # (batch, n_best)
        rows = ops.reshape(ops.cast(order, "int32") + first_row[:, None], (-1,))
        keep = ops.reshape(ranked > NEG_INF / 2, (-1, 1))
        return ops.where(keep, ops.take(tokens, rows, axis=0), 0)


# -- the loop they share ---------------------------------------------------------------------------
def decode_loop(model, source_ids, max_steps, strategy: Strategy, start_id: int, end_id: int,
                cache_length: int | None = None, banned_id: int | None = None):
    """(batch, src) source ids -> (batch, cache_length - 1) target ids after [start], 0 after [end].

    `max_steps` (batch,) bounds each sentence's output, whose last token is then [end]; a sentence
    decodes the same alone or in any batch. `cache_length` (a Python int; default: the model's
    position table) fixes every shape of the loop. Padding, [start] and `banned_id` ([UNK]) are
    never generated: the model's best other choice is taken instead. The loop stops once every
    sentence is done.
    """
    if cache_length is None:
        cache_length = model.target_embedding.sequence_length
    beams = strategy.beams
    encoder_output, source_mask = model.encode(source_ids, training=False)
    cache = model.init_cache(encoder_output, source_mask, cache_length)     # cross keys/values once
    row_limit = ops.repeat(ops.minimum(ops.cast(max_steps, "int32"), cache_length - 1), beams, axis=0)
    limit = ops.max(row_limit)
    # padding and [start] are never outputs; nor is [UNK] when banned
    never = ops.convert_to_tensor(np.isin(np.arange(model.target_vocab_size),
                                          [0, start_id] + ([] if banned_id is None else [banned_id])))

    def scores(hidden):
        """Decoder states (rows, d) -> float32 logits (rows, vocab), tokens never output at NEG_INF."""
        return ops.where(never[None], NEG_INF, ops.cast(model.logits(hidden), "float32"))

    def advance(index, logits, tokens, finished, cache, state):
        """The strategy chooses each row's next token at `index`; the rows record it."""
        step = Step(index, logits, index + 1 >= row_limit, finished, end_id)
        token, parent, state = strategy.choose(step, state)                        # the strategy decides
        if parent is not None:          # beam search: each hypothesis continues one of its sentence's rows
            tokens, finished = ops.take(tokens, parent, axis=0), ops.take(finished, parent, axis=0)
            cache = model.reorder_cache(cache, parent)
        tokens = ops.slice_update(tokens, (0, index), token[:, None])
        return index + 1, token, tokens, ops.logical_or(finished, token == end_id), cache, state

    def cond(index, last, tokens, finished, cache, state):
        return ops.logical_and(index < limit, ops.logical_not(strategy.all_done(finished, state)))

    def body(index, last, tokens, finished, cache, state):
        hidden, cache = model.decode_step_states(last, index, cache)               # (rows, d)
        return advance(index, scores(hidden), tokens, finished, cache, state)

    rows = ops.shape(row_limit)[0]
    index = ops.convert_to_tensor(0, "int32")                  # the output position being chosen
    tokens = ops.zeros((rows, cache_length - 1), "int32")      # the output so far
    finished = ops.zeros((rows,), "bool")                      # the row has emitted [end]
    last = ops.full((ops.shape(source_ids)[0],), start_id, "int32")   # each row's last token
    if beams == 1:
        state = (index, last, tokens, finished, cache, strategy.start(row_limit))
    else:   # a sentence's hypotheses all start from [start] alone: take the first step once per sentence,
        hidden, cache = model.decode_step_states(last, index, cache)         # then give each hypothesis its row
        cache = model.expand_cache(cache, beams)
        logits = ops.repeat(scores(hidden), beams, axis=0)
        state = advance(index, logits, tokens, finished, cache, strategy.start(row_limit))
    _, _, tokens, finished, _, state = ops.while_loop(cond, body, state)
    return strategy.best(tokens, finished, state)

def full_recompute_greedy(model, source_ids, start_id: int, end_id: int, max_steps: int,
                          banned_id: int | None = None, pad_to: int = 1) -> np.ndarray:
    """The tutorials' slow loop: re-run the whole decoder on the prefix at every step (test reference).

    Like `decode_loop`, the last allowed token is [end], and padding, [start] and `banned_id` are never output.
    `pad_to` > 1 pads the prefix to a multiple of it: the causal mask hides the padding from the positions
    before it, and a backend that compiles each op per shape (JAX eagerly) sees a few shapes, not one per step
    (never wider than the model's position table).
    """
    batch = source_ids.shape[0]
    tokens = np.zeros((batch, _round_up(max_steps + 1, pad_to)), dtype="int32")
    tokens[:, 0] = start_id
    done = np.zeros(batch, dtype=bool)
    table = model.target_embedding.sequence_length            # padding never reaches past the position table
    for t in range(max_steps):
        width = max(t + 1, min(_round_up(t + 1, pad_to), table))
        inputs = {"encoder_inputs": source_ids, "decoder_inputs": tokens[:, :width]}
        logits = np.array(ops.convert_to_numpy(model(inputs, training=False)))
        logits[..., [0, start_id] + ([] if banned_id is None else [banned_id])] = -np.inf
        nxt = logits[:, t].argmax(-1) if t < max_steps - 1 else np.full(batch, end_id)
        tokens[:, t + 1] = np.where(done, 0, nxt)
        done |= nxt == end_id
        if done.all():
            break
    return tokens[:, 1:max_steps + 1]


# -- numpy in, numpy out, compiled -----------------------------------------------------------------
class DecodeOptions(NamedTuple):
    """What a compiled decoder is specialised on (with the cache length)."""
    kind: str                   # "greedy" | "beam" | "sample"
    beams: int = 1
    alpha: float = 0.0
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    n_best: int = 1             # hypotheses kept per sentence (beam search)


def decode_options(beams: int = 1, alpha: float = 0.0, sample: bool = False, temperature: float | None = None,
                   top_k: int | None = None, top_p: float | None = None, seed=None,
                   n_best: int = 1) -> DecodeOptions:
    """Check the decoding arguments (`seed` only for being given without `sample`); ValueError names the wrong one."""
    beams, n_best = int(beams), int(n_best)
    OPTIONS["beam"].check(beams)
    if not 1 <= n_best <= beams or (n_best > 1 and sample):
        raise ValueError(f"n_best must be from 1 to the beam size ({beams}) without sampling, got {n_best}")
    given = [name for name, value in (("temperature", temperature), ("top_k", top_k), ("top_p", top_p),
                                      ("seed", seed)) if value is not None]
    if not sample:
        if given:
            raise ValueError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only when sampling "
                             "(sample=True, --sample)")
        return DecodeOptions("beam", beams, float(alpha), n_best=n_best) if beams > 1 else DecodeOptions("greedy")
    if beams > 1:
        raise ValueError(f"sampling draws one hypothesis per sentence: beam must be 1, got {beams}")
    temperature = 1.0 if temperature is None else float(temperature)
    top_k = 0 if top_k is None else int(top_k)
    top_p = 1.0 if top_p is None else float(top_p)
    for name, value in (("temperature", temperature), ("top_k", top_k), ("top_p", top_p)):
        OPTIONS[name].check(value)                      # the ranges declared in `pipeline.options`
    return DecodeOptions("sample", temperature=temperature, top_k=top_k, top_p=top_p)


def make_strategy(options: DecodeOptions, uniforms=None) -> Strategy:
    if options.kind == "sample":
        return Sampling(uniforms, options.temperature, options.top_k, options.top_p)
    return BeamSearch(options.beams, options.alpha, options.n_best) if options.kind == "beam" else Greedy()


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _pad(array: np.ndarray, shape: tuple[int, ...], value: int | float = 0) -> np.ndarray:
    return np.pad(array, [(0, size - now) for size, now in zip(shape, array.shape)], constant_values=value)


def compile_decoder(model, start_id: int, end_id: int, jit_compile: bool = False,
                    banned_id: int | None = None) -> Callable[..., np.ndarray]:
    """`decode(source_ids, max_steps, beams=1, alpha=0.0, sample=False, temperature=None, top_k=None,
    top_p=None, seed=None, n_best=1)` -> int32 ids (batch, max(max_steps)) after [start], 0-padded after
    [end]; with `n_best` > 1, (batch, n_best, max(max_steps)): each sentence's best hypotheses, best first.

    `beams` > 1 is beam search, `sample=True` seeded sampling (`seed`: an int, a sequence of ints,
    or None for fresh entropy), otherwise greedy. Inputs are padded to buckets (batch to a power of
    two, source width and cache length to multiples of 8) so that few shapes get compiled. Compiled
    with `tf.function` on TensorFlow (XLA with `jit_compile`), `jax.jit` on JAX; PyTorch runs the loop
    eagerly under `torch.no_grad()`.

    `decode.prepare(shapes, **options)`, given the (sentences, width, most steps) of the calls to come with
    the same options, compiles the programs they need that are not compiled yet side by side
    (`compilation.compile_side_by_side`; JAX only, elsewhere nothing to do) and returns how many it readied
    (compiled, or handed back by JAX's persistent cache): a translator that knows its batches ahead
    (`KerasEngine`) pays for the slowest program, not for each.
    """
    table = model.target_embedding.sequence_length            # positions the decoder can embed
    source_table = model.source_embedding.sequence_length
    compiled: dict[tuple[DecodeOptions, int], Callable] = {}
    creating = threading.Lock()      # a service's threads may share one decoder (both directions of a model)

    def padded(source_ids: np.ndarray, max_steps: np.ndarray, options: DecodeOptions,
               seed: Any) -> tuple[tuple[DecodeOptions, int], list[np.ndarray]]:
        """(the program's key, its inputs): the batch padded to its bucket."""
        (batch, width), steps = source_ids.shape, min(int(max_steps.max(initial=0)), table - 1)
        cache_length = min(_round_up(steps + 1, 8), table)
        rows = 1 << (batch - 1).bit_length()
        inputs = [_pad(source_ids, (rows, min(_round_up(width, 8), max(width, source_table)))),
                  _pad(max_steps, (rows,), value=1)]          # padding rows: empty sources that end at once
        if options.kind == "sample":     # drawn for the whole table, so a seed's draws do not depend on buckets
            uniforms = np.random.default_rng(seed).random((batch, table - 1), dtype=np.float32)
            inputs.append(_pad(uniforms[:, :cache_length - 1], (rows, cache_length - 1)))
        return (options, cache_length), inputs

    def program(key: tuple[DecodeOptions, int], inputs: list[np.ndarray]) -> Callable:
        with creating:
            if key not in compiled:
                def function(source, limits, uniforms=None, options=key[0], cache_length=key[1]):
                    decode.traces += 1
                    return decode_loop(model, source, limits, make_strategy(options, uniforms), start_id, end_id,
                                       cache_length, banned_id)
                compiled[key] = _compile(model, function, inputs, jit_compile)
            return compiled[key]

    def decode(source_ids, max_steps, beams: int = 1, alpha: float = 0.0, sample: bool = False,
               temperature: float | None = None, top_k: int | None = None, top_p: float | None = None,
               seed=None, n_best: int = 1) -> np.ndarray:
        options = decode_options(beams, alpha, sample, temperature, top_k, top_p, seed, n_best)
        source_ids, max_steps = np.asarray(source_ids, np.int32), np.asarray(max_steps, np.int32)
        batch, steps = source_ids.shape[0], min(int(max_steps.max(initial=0)), table - 1)
        if batch == 0:
            return np.zeros((0, steps) if options.n_best == 1 else (0, options.n_best, steps), np.int32)
        key, inputs = padded(source_ids, max_steps, options, seed)
        ids = program(key, inputs)(*inputs)
        rows = inputs[0].shape[0]
        if options.n_best > 1:
            return ids.reshape(rows, options.n_best, -1)[:batch, :, :steps]
        return ids[:batch, :steps]

    def prepare(shapes: Iterable[tuple[int, int, int]], beams: int = 1, alpha: float = 0.0, sample: bool = False,
                temperature: float | None = None, top_k: int | None = None, top_p: float | None = None,
                seed=None, n_best: int = 1) -> int:
        options = decode_options(beams, alpha, sample, temperature, top_k, top_p, seed, n_best)
        lowerings, seen = [], set()
        for batch, width, steps in shapes:
            if batch < 1 or width < 1:
                continue
            key, inputs = padded(np.zeros((batch, width), np.int32), np.full(batch, steps, np.int32), options, 0)
            target = program(key, inputs)
            signature = (key, *(x.shape for x in inputs))
            if isinstance(target, _JaxProgram) and signature not in seen and not target.has_program(inputs):
                seen.add(signature)
                lowerings.append((target, inputs))
        if not lowerings:
            return 0
        from pipeline.compilation import compile_side_by_side
        built = compile_side_by_side([lambda t=target, xs=xs: t.lower(*xs) for target, xs in lowerings])
        for (target, inputs), ready in zip(lowerings, built):
            target.set_ready(inputs, ready)
        return len(built)

    decode.traces = 0           # loops traced for compilation so far (on PyTorch: loops run)
    decode.prepare = prepare
    return decode


class _JaxProgram:
    """A decoding loop under `jax.jit`, the model's weights passed as arguments (so they are not baked into the
    program); the input shapes readied ahead (`lower`, `set_ready`) run their compiled program directly, the
    others go through `jax.jit`, which compiles each new shape when it first comes."""

    def __init__(self, model, function: Callable):
        import jax

        self.variables = model.variables

        def stateless(values, *xs):
            with keras.StatelessScope(state_mapping=list(zip(self.variables, values))):
                return function(*xs)

        self.jitted = jax.jit(stateless)
        self.ready: dict[tuple, Any] = {}
        self.jitted_shapes: set[tuple] = set()

    @staticmethod
    def _signature(inputs: Sequence[np.ndarray]) -> tuple:
        return tuple((x.shape, str(x.dtype)) for x in inputs)

    def has_program(self, inputs: Sequence[np.ndarray]) -> bool:
        """Whether these inputs' shapes have a compiled program already (readied, or compiled by `jax.jit`)."""
        signature = self._signature(inputs)
        return signature in self.ready or signature in self.jitted_shapes

    def lower(self, *inputs: np.ndarray) -> Any:
        return self.jitted.lower([v.value for v in self.variables], *inputs)

    def set_ready(self, inputs: Sequence[np.ndarray], compiled: Any) -> None:
        self.ready[self._signature(inputs)] = compiled

    def __call__(self, *inputs: np.ndarray) -> np.ndarray:
        signature = self._signature(inputs)
        program = self.ready.get(signature)
        if program is not None:
            return np.asarray(program([v.value for v in self.variables], *inputs))
        ids = np.asarray(self.jitted([v.value for v in self.variables], *inputs))
        self.jitted_shapes.add(signature)                   # compiled (a failed compile is not counted)
        return ids


def _compile(model, function: Callable, inputs: list[np.ndarray], jit_compile: bool) -> Callable[..., np.ndarray]:
    """`function` (tensors -> tensor) as numpy -> numpy, compiled as the backend allows."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        signature = [tf.TensorSpec([None] * x.ndim, tf.as_dtype(x.dtype)) for x in inputs]
        traced = tf.function(function, input_signature=signature, jit_compile=jit_compile)
        return lambda *xs: traced(*xs).numpy()
    if backend == "jax":
        return _JaxProgram(model, function)
    if backend == "torch":
        import torch

        def eager(*xs):
            with torch.no_grad():
                return ops.convert_to_numpy(function(*[ops.convert_to_tensor(x) for x in xs]))
        return eager
    return lambda *xs: ops.convert_to_numpy(function(*[ops.convert_to_tensor(x) for x in xs]))
