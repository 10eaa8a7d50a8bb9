"""Cached greedy and beam-search decoding in `keras.ops` (one `while_loop`, every backend).

The benchmark's baseline: the decoder as it was before issue 11, loop and cached step alike (the
step's per-row key/value cache, copied on every beam reorder, is kept here so the baseline stays fixed
while the model's own cache changes).

The encoder runs once; cross-attention keys/values are computed once; each step feeds
one new token through the decoder and writes its keys/values into a fixed-size cache.
Greedy is beam search with one beam: both share `beam_search`'s loop, and differ only in
how the next token is chosen.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import keras
from keras import ops

NEG_INF = -1e9


# -- the model's cached step before issue 11 ---------------------------------------------------------
def init_cache(model, encoder_output, source_mask, max_length) -> dict[str, Any]:
    """Cross keys/values once; one (batch, 2, max_length, heads, key_dim) self cache per decoder layer."""
    batch = ops.shape(encoder_output)[0]
    heads, key_dim = model.num_heads, model.d_model // model.num_heads
    cross = [block.cross_attention.project_key_value(encoder_output) for block in model.decoder_blocks]
    shape = (batch, 2, max_length, heads, key_dim)
    return {"self": [ops.zeros(shape, dtype=encoder_output.dtype) for _ in model.decoder_blocks],
            "cross_key": [k for k, _ in cross], "cross_value": [v for _, v in cross],
            "cross_mask": ops.expand_dims(source_mask, 1)}


def _self_attention_cached(attention, query, cache, index, mask):
    key, value = attention.project_key_value(query)                           # (batch, 1, heads, dk)
    cache = ops.slice_update(cache, (0, 0, index, 0, 0), ops.cast(ops.stack([key, value], axis=1), cache.dtype))
    return attention.attend(query, cache[:, 0], cache[:, 1], mask), cache


def _block_cached(block, x, self_cache, index, cross_key, cross_value, cross_mask):
    positions = ops.shape(self_cache)[2]
    valid = ops.expand_dims(ops.arange(positions) <= index, 0)                # (1, max_len)
    self_mask = ops.expand_dims(ops.broadcast_to(valid, (ops.shape(x)[0], positions)), 1)
    attend_self = lambda y: _self_attention_cached(block.self_attention, y, self_cache, index, self_mask)
    if block.norm_first:
        attended, self_cache = attend_self(block.self_norm(x))
        x = x + attended
        x = x + block.cross_attention.attend(block.cross_norm(x), cross_key, cross_value, cross_mask)
        return x + block.feed_forward(block.ff_norm(x)), self_cache
    attended, self_cache = attend_self(x)
    x = block.self_norm(x + attended)
    x = block.cross_norm(x + block.cross_attention.attend(x, cross_key, cross_value, cross_mask))
    return block.ff_norm(x + block.feed_forward(x)), self_cache


def decode_step_states(model, token_ids, index, cache):
    x = model.target_embedding(ops.expand_dims(token_ids, 1), start=index)     # (batch, 1, d)
    layer_caches = []
    for block, layer_cache, key, value in zip(model.decoder_blocks, cache["self"], cache["cross_key"],
                                              cache["cross_value"]):
        x, layer_cache = _block_cached(block, x, layer_cache, index, key, value, cache["cross_mask"])
        layer_caches.append(layer_cache)
    return x[:, 0], {**cache, "self": layer_caches}


def _length_penalty(length, alpha: float):
    """GNMT: ((5 + length) / 6) ** alpha."""
    return ops.power((5.0 + ops.cast(length, "float32")) / 6.0, alpha)


def _normalize(scores, lengths, alpha: float, batch, beams):
    """Length-normalised scores (batch, beams) of hypotheses with `lengths` (batch * beams,)."""
    return scores / ops.reshape(_length_penalty(ops.maximum(lengths, 1), alpha), (batch, beams))


def beam_search(model, source_ids, start_id: int, end_id: int, max_steps, beams: int = 1,
                alpha: float = 0.0, cache_length: int | None = None, banned_id: int | None = None):
    """Decode a batch: (batch, src) source ids -> (batch, max(max_steps)) target ids after [start].

    Rows are padded with 0 after [end]. `max_steps` (batch,) bounds the number of tokens of
    each sentence (its last one is then [end]), so a sentence decodes the same alone or in
    any batch; decoding stops early once every hypothesis has ended. `banned_id` (the
    [UNK] id) is never generated: the model's best in-vocabulary choice is taken instead.
    """
    batch = ops.shape(source_ids)[0]
    if cache_length is None:   # room for the longest allowed output, within the position table
        table = model.target_embedding.sequence_length
        cache_length = ops.minimum(ops.max(ops.cast(max_steps, "int32")), table - 1) + 1
        if keras.backend.backend() != "tensorflow":   # eager shapes must be Python ints
            cache_length = int(ops.convert_to_numpy(cache_length))
    encoder_output, source_mask = model.encode(source_ids, training=False)
    cache = init_cache(model, encoder_output, source_mask, cache_length)   # cross keys/values once per sentence
    if beams > 1:   # then each beam gets its own row: (batch * beams, ...)
        cache = keras.tree.map_structure(lambda t: ops.repeat(t, beams, axis=0), cache)
    rows = batch * beams
    tokens = ops.concatenate([ops.full((rows, 1), start_id, dtype="int32"),
                              ops.zeros((rows, cache_length - 1), dtype="int32")], axis=1)
    first = np.full((beams,), NEG_INF, dtype="float32")
    first[0] = 0.0                                       # identical beams at the start: keep one
    scores = ops.tile(ops.convert_to_tensor(first)[None], (batch, 1))         # (batch, beams)
    finished = ops.zeros((rows,), dtype="bool")
    lengths = ops.zeros((rows,), dtype="int32")
    row_limit = ops.repeat(ops.minimum(ops.cast(max_steps, "int32"), cache_length - 1), beams, axis=0)
    limit = ops.max(row_limit)

    sentence_limit = ops.reshape(row_limit, (batch, beams))[:, 0]

    def sentence_done(scores, finished, lengths):
        """A sentence is done when no live hypothesis can still beat its best finished one.

        Raw log-prob scores only fall as a hypothesis grows and the GNMT penalty is largest
        at the length limit, so live_score / lp(limit) bounds what a live hypothesis can reach.
        """
        finished = ops.reshape(finished, (batch, beams))
        best_finished = ops.max(ops.where(finished, _normalize(scores, lengths, alpha, batch, beams), NEG_INF), axis=1)
        best_live = ops.max(ops.where(finished, NEG_INF, scores), axis=1) / _length_penalty(sentence_limit, alpha)
        return ops.logical_or(ops.all(finished, axis=1), best_finished >= best_live)

    def cond(index, tokens, scores, finished, lengths, cache):
        return ops.logical_and(index < limit, ops.logical_not(ops.all(sentence_done(scores, finished, lengths))))

    slot = ops.arange(beams)[None]                                          # (1, beams)

    def expand(logits, at_limit):
        """Each row's `beams` best next tokens and their log-probs, (rows, beams) each.

        The best `beams` continuations of the whole beam are among these (any other token has
        `beams` better ones in its own row), so the global choice ranks beams*beams candidates,
        not beams*vocab. A row at its length limit may only end.
        """
        top_logits, top_ids = ops.top_k(logits, k=beams)
        if beams == 1:      # greedy: the argmax is all that matters, no normalisation needed
            step, end_step = top_logits, ops.zeros_like(top_logits)
        else:
            log_norm = ops.logsumexp(logits, axis=-1, keepdims=True)
            step, end_step = top_logits - log_norm, logits[:, end_id:end_id + 1] - log_norm
        at_limit = at_limit[:, None]
        step = ops.where(at_limit, ops.where(slot == 0, end_step, NEG_INF), step)
        return ops.where(at_limit, end_id, top_ids), step

    def body(index, tokens, scores, finished, lengths, cache):
        last = ops.take_along_axis(tokens, ops.full((rows, 1), index, dtype="int32"), axis=1)[:, 0]
        states, cache = decode_step_states(model, last, index, cache)        # (rows, d)
        # Only live hypotheses of unfinished sentences are projected onto the vocabulary (the
        # largest cost of a step); the others (finished, done or empty) stay as they are.
        done = ops.repeat(sentence_done(scores, finished, lengths), beams, axis=0)
        empty = ops.reshape(scores, (rows,)) <= NEG_INF / 2                  # e.g. beams 2.. at the first step
        frozen = ops.logical_or(ops.logical_or(finished, done), empty)
        live = ops.cast(ops.where(ops.logical_not(frozen))[0], "int32")     # (live,)
        logits = ops.cast(model.logits(ops.take(states, live, axis=0)), "float32")
        if banned_id is not None:
            logits = ops.slice_update(logits, (0, banned_id), ops.full((ops.shape(live)[0], 1), NEG_INF))
        live_ids, live_step = expand(logits, ops.take(index + 1 >= row_limit, live, axis=0))
        frozen_step = ops.where(slot == 0, 0.0, NEG_INF) + ops.zeros((rows, 1))
        step = ops.scatter_update(frozen_step, live[:, None], live_step)
        next_ids = ops.scatter_update(ops.zeros((rows, beams), dtype=live_ids.dtype), live[:, None], live_ids)
        candidates = ops.reshape(ops.reshape(scores, (rows, 1)) + step, (batch, beams * beams))
        scores, flat = ops.top_k(candidates, k=beams)                        # (batch, beams)
        parent = flat // beams + ops.arange(batch)[:, None] * beams          # row of the parent beam
        parent = ops.reshape(ops.cast(parent, "int32"), (rows,))
        token = ops.take_along_axis(ops.reshape(next_ids, (batch, beams * beams)), flat, axis=1)
        token = ops.reshape(ops.cast(token, "int32"), (rows,))
        tokens = ops.take(tokens, parent, axis=0)
        finished = ops.take(finished, parent, axis=0)
        frozen = ops.take(frozen, parent, axis=0)
        lengths = ops.take(lengths, parent, axis=0) + ops.cast(ops.logical_not(frozen), "int32")
        if beams > 1:
            cache = {**cache, "self": [ops.take(layer, parent, axis=0) for layer in cache["self"]]}
        tokens = ops.slice_update(tokens, (0, index + 1), ops.expand_dims(token, 1))
        finished = ops.logical_or(finished, token == end_id)
        return index + 1, tokens, scores, finished, lengths, cache

    state = (ops.convert_to_tensor(0, dtype="int32"), tokens, scores, finished, lengths, cache)
    _, tokens, scores, finished, lengths, _ = ops.while_loop(cond, body, state)
    if beams == 1:
        return tokens[:, 1:]
    normalized = _normalize(scores, lengths, alpha, batch, beams)
    finished = ops.reshape(finished, (batch, beams))
    # prefer finished hypotheses: a live one left when the loop stopped early cannot beat them
    normalized = ops.where(ops.logical_and(ops.any(finished, axis=1, keepdims=True), ops.logical_not(finished)),
                           2 * NEG_INF, normalized)
    best = ops.argmax(normalized, axis=-1) + ops.arange(batch) * beams
    return ops.take(tokens, ops.cast(best, "int32"), axis=0)[:, 1:]



def compile_decoder(model, start_id: int, end_id: int, jit_compile: bool = False,
                    banned_id: int | None = None) -> Callable:
    """`decode(source_ids, max_steps (batch,), beams, alpha) -> ids`, compiled where the backend allows."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        functions: dict[tuple[int, float], Any] = {}

        def decode(source_ids, max_steps, beams=1, alpha=0.0):
            key = (int(beams), float(alpha))
            if key not in functions:
                functions[key] = tf.function(
                    lambda s, m: beam_search(model, s, start_id, end_id, m, key[0], key[1], banned_id=banned_id),
                    input_signature=[tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([None], tf.int32)],
                    jit_compile=jit_compile)
            return functions[key](tf.constant(source_ids, tf.int32), tf.constant(max_steps, tf.int32)).numpy()
        return decode

    def decode(source_ids, max_steps, beams=1, alpha=0.0):
        ids = beam_search(model, ops.convert_to_tensor(source_ids, "int32"), start_id, end_id, max_steps,
                          int(beams), float(alpha), banned_id=banned_id)
        return np.asarray(ops.convert_to_numpy(ids))
    return decode
