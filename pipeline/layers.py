"""Transformer building blocks in backend-neutral Keras 3 (`keras.ops` only, no `tf.*`).

Masks are explicit: padding masks of shape (batch, length), True for real tokens, are
turned into key masks by `attention_mask()`; decoder self-attention adds the causal part.
Training attention runs through `fused_attention`, which picks the kernel per backend and device (see
there): cuDNN flash attention on a CUDA GPU under JAX, `keras.ops.dot_product_attention` elsewhere. The
explicit einsum path remains where the weights are wanted (plots), and cached decoding uses plain matmuls.
Every layer builds all of its sublayers in `build()`, so `.keras` files reload on any backend.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import keras
from keras import ops

from pipeline.extras import attention_choice

PACKAGE = "ita_nmt"


def pos_enc_matrix(length: int, depth: int, n: int = 10000) -> np.ndarray:
    """Sinusoidal position table of "Attention Is All You Need": sin on even, cos on odd dims."""
    if depth % 2:
        raise ValueError(f"depth must be even for the sinusoidal table, got {depth}")
    positions = np.arange(length, dtype=np.float64)[:, None]             # (length, 1)
    rates = np.power(float(n), -np.arange(depth // 2) / (depth // 2))    # (depth/2,)
    angles = positions * rates[None, :]                                  # (length, depth/2)
    table = np.zeros((length, depth), dtype=np.float32)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    return table


def attention_mask(query_mask, key_mask):
    """Padding masks (batch, q) and (batch, k) -> (batch, 1, k) booleans, True where a key may be attended to.

    Query padding is ignored (those rows are discarded by the loss); the causal part is added by
    the attention itself (`causal=True`, see `causal_mask`).
    """
    return ops.expand_dims(ops.cast(key_mask, "bool"), 1)


def causal_mask(q_len, k_len):
    """(q, k) booleans: query i may see keys 0 .. i."""
    rows = ops.expand_dims(ops.arange(q_len), 1)                          # (q, 1)
    cols = ops.expand_dims(ops.arange(k_len), 0)                          # (1, k)
    return cols <= rows


@functools.lru_cache(maxsize=None)
def _cudnn_attention_device() -> int:
    """The largest head dimension cuDNN flash attention takes on this process's first device: 256 on Hopper
    or later, 128 on Ampere; 0 where it is not to be had (not JAX, no CUDA GPU, no cuDNN, older than Ampere)."""
    if keras.backend.backend() != "jax":
        return 0
    try:
        import jax
        from jax._src.cudnn.fused_attention_stablehlo import check_compute_capability, check_cudnn_version

        if jax.devices()[0].platform != "gpu":
            return 0
        check_cudnn_version()
        if not check_compute_capability("8.0"):
            return 0
        return 256 if check_compute_capability("9.0") else 128
    except (ImportError, RuntimeError, AttributeError):
        return 0


def cudnn_attention_applies(query) -> bool:
    """Whether `fused_attention` sends `query` (batch, q, heads, dk) to cuDNN's flash attention: JAX on a CUDA
    GPU of Ampere or later with cuDNN, float16/bfloat16 (mixed precision), head dimension a multiple of 8.
    `NMT_ATTENTION` (`attention_choice`) overrides it: "xla" never, "cudnn" always on JAX."""
    choice = attention_choice()
    if choice != "auto":
        return choice == "cudnn" and keras.backend.backend() == "jax"
    head_dim = query.shape[-1]
    return (str(query.dtype) in ("bfloat16", "float16") and head_dim % 8 == 0
            and head_dim <= _cudnn_attention_device())


def key_lengths(mask):
    """(batch, 1, k) key mask, padding at the end -> (batch,) int32 numbers of real keys, at least 1."""
    return ops.maximum(ops.sum(ops.cast(mask[:, 0, :], "int32"), axis=-1), 1)


def _pad_to_even(x):
    """(batch, length, heads, dk) with one zero position appended where the length is odd."""
    return ops.pad(x, [[0, 0], [0, 1], [0, 0], [0, 0]]) if x.shape[1] % 2 else x


def fused_attention(query, key, value, mask, scale: float, causal: bool = False, implementation: str | None = None):
    """Attention of `query` (batch, q, heads, dk) over `key`/`value` (batch, k, heads, dk) where the boolean
    `mask` (batch, 1 or q, k) is True, causal on request -> (batch, q, heads, dk).

    Where cuDNN's flash attention applies (`cudnn_attention_applies`) and the mask is a key-padding mask
    (batch, 1, k), it is called directly with the keys' lengths (`key_value_seq_lengths`): the padding
    form cuDNN fuses without a bias tensor, so no length must be even and no bias gradient is computed.
    The pipeline's batches are always padded at the end, which is what lengths describe. `implementation`
    forces that path with another kernel ("xla"), for tests on a CPU.

    Everywhere else `keras.ops.dot_product_attention` gets the mask at its full size (batch, 1, q, k), the
    layout every fused kernel accepts (cuDNN's refuses a mask broadcast over queries); on JAX with its
    plain XLA kernel, asked for explicitly, so that nothing tries cuDNN and logs its refusal.
    """
    if mask.shape[1] == 1 and (implementation or cudnn_attention_applies(query)):
        import jax

        # cuDNN trains masked patterns on even lengths only ("Unsupported sequence length Q 101, KV 101" on an
        # H100, JAX 0.11.2): an odd length gets one more position at the end, outside the key lengths (so no
        # real query sees it) and cut from the output (so nothing downstream sees its query)
        q_len = query.shape[1]
        query = _pad_to_even(query)
        key, value = _pad_to_even(key), _pad_to_even(value)
        out = jax.nn.dot_product_attention(query, key, value, scale=scale, is_causal=causal,
                                           key_value_seq_lengths=key_lengths(mask),
                                           implementation=implementation or "cudnn")
        return out[:, :q_len] if q_len % 2 else out
    batch, q_len, k_len = ops.shape(query)[0], ops.shape(query)[1], ops.shape(key)[1]
    full_mask = ops.broadcast_to(ops.expand_dims(mask, 1), (batch, 1, q_len, k_len))     # (batch, 1, q, k)
    flash = False if keras.backend.backend() == "jax" else None
    return ops.dot_product_attention(query, key, value, mask=full_mask, scale=scale, is_causal=causal,
                                     flash_attention=flash)


class _ConsumesMask:
    """Layers here take explicit padding masks, so a Keras mask arriving on the input is
    consumed (not propagated to the logits, where it would weight the loss a second time)."""

    supports_masking = True

    def compute_mask(self, *args, **kwargs):
        return None


@keras.saving.register_keras_serializable(PACKAGE)
class Dropout(keras.layers.Dropout):
    """`keras.layers.Dropout` whose mask, on JAX, comes from XLA's own random bit generator (Philox, counter
    based) instead of `jax.random`'s threefry, which XLA builds out of dozens of integer operations per call.

    Keras's JAX dropout draws a threefry key per call; every dropout layer of a training step then adds its
    own threefry computation to the program. Measured on this 2-core CPU (JAX 0.10.2), that was a seventh of
    the compile time of a training step of the tiny model (3.7 -> 3.2 s), at the same step time. The layer's
    seed generator, its seed and its rate are Keras's; only where the bits come from changes (other backends
    and a `noise_shape` are Keras's own dropout). Inference never drops anything, so outputs are unchanged."""

    def call(self, inputs, training=False):
        if not (training and self.rate > 0) or self.noise_shape is not None or keras.backend.backend() != "jax":
            return super().call(inputs, training=training)
        return philox_dropout(inputs, self.rate, self.seed_generator.next())


def philox_dropout(inputs, rate: float, seed):
    """JAX: `inputs` with each element zeroed with probability `rate` and the rest scaled by 1/(1-rate), from
    XLA's RngBitGenerator (Philox 4x32) keyed by the two 32-bit words of a Keras seed (a new seed per call)."""
    import jax
    import jax.numpy as jnp

    key = jnp.concatenate([jnp.asarray(seed, jnp.uint32).reshape(2), jnp.zeros((2,), jnp.uint32)])
    _, bits = jax.lax.rng_bit_generator(key, inputs.shape, dtype=jnp.uint32,
                                        algorithm=jax.lax.RandomAlgorithm.RNG_PHILOX)
    keep = bits >= jnp.uint32(min(int(rate * 2.0 ** 32), 2 ** 32 - 1))     # P(keep) = 1 - rate (to 2^-32)
    return jnp.where(keep, inputs / jnp.asarray(1.0 - rate, inputs.dtype), jnp.zeros((), inputs.dtype))


@keras.saving.register_keras_serializable(PACKAGE)
class PositionalEmbedding(keras.layers.Layer):
    """Token embedding (id 0 = padding, masked) plus fixed sinusoidal or learned positions."""

    def __init__(self, sequence_length: int, vocab_size: int, embed_dim: int, positional: str = "sinusoidal",
                 scale_embeddings: bool = True, dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        if positional not in ("sinusoidal", "learned"):
            raise ValueError(f"positional must be 'sinusoidal' or 'learned', got {positional!r}")
        if positional == "sinusoidal" and embed_dim % 2:
            raise ValueError(f"embed_dim must be even for the sinusoidal table, got {embed_dim}")
        self.sequence_length, self.vocab_size, self.embed_dim = sequence_length, vocab_size, embed_dim
        self.positional, self.scale_embeddings, self.dropout = positional, scale_embeddings, dropout
        self.token_embedding = keras.layers.Embedding(vocab_size, embed_dim, mask_zero=True, name="token_embedding")
        self.position_embedding = (keras.layers.Embedding(sequence_length, embed_dim, name="position_embedding")
                                   if positional == "learned" else None)
        self.dropout_layer = Dropout(dropout)
        self.supports_masking = True

    def build(self, input_shape):
        self.token_embedding.build(input_shape)
        if self.position_embedding is not None:
            self.position_embedding.build((None,))
        else:
            self.table = ops.convert_to_tensor(pos_enc_matrix(self.sequence_length, self.embed_dim))
        self.built = True

    def positions(self, length, start=0):
        """Position vectors for positions start .. start+length-1, shape (length, embed_dim)."""
        index = ops.arange(length) + start
        if self.position_embedding is not None:
            return self.position_embedding(index)
        return ops.cast(ops.take(self.table, index, axis=0), self.compute_dtype)

    def call(self, inputs, training=None, start=0):
        x = self.token_embedding(inputs)                                  # (batch, len, d)
        if self.scale_embeddings:
            x = x * ops.cast(math.sqrt(self.embed_dim), x.dtype)
        x = x + self.positions(ops.shape(inputs)[-1], start)[None]
        return self.dropout_layer(x, training=training)

    def compute_mask(self, inputs, mask=None):
        return ops.not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        return (*input_shape, self.embed_dim)

    def get_config(self):
        return {**super().get_config(), "sequence_length": self.sequence_length, "vocab_size": self.vocab_size,
                "embed_dim": self.embed_dim, "positional": self.positional,
                "scale_embeddings": self.scale_embeddings, "dropout": self.dropout}


def _masked_softmax(scores, mask):
    """Attention weights from scores (batch, heads, q, k) where `mask` (batch, q, k; broadcastable) is True;
    float32, also under mixed precision."""
    return ops.softmax(ops.where(ops.expand_dims(mask, 1), ops.cast(scores, "float32"), -1e9), axis=-1)


@keras.saving.register_keras_serializable(PACKAGE)
class MultiHeadAttention(_ConsumesMask, keras.layers.Layer):
    """Scaled dot-product attention with an explicit boolean mask and an optional key/value cache.

    `dropout` is attention-weight dropout, applied only on the explicit path (when the weights are
    returned): the fused `keras.ops.dot_product_attention` has none, and the model trains without it
    (dropout still acts on the embeddings, every sublayer output and the feed-forward)."""

    def __init__(self, num_heads: int, key_dim: int, dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.num_heads, self.key_dim, self.dropout = num_heads, key_dim, dropout
        width = num_heads * key_dim
        self.query_dense = keras.layers.Dense(width, name="query")
        self.key_dense = keras.layers.Dense(width, name="key")
        self.value_dense = keras.layers.Dense(width, name="value")
        self.output_dense = keras.layers.Dense(width, name="attention_output")
        self.dropout_layer = Dropout(dropout)

    def build(self, query_shape, key_shape=None):
        key_shape = key_shape or query_shape
        self.query_dense.build(query_shape)
        self.key_dense.build(key_shape)
        self.value_dense.build(key_shape)
        self.output_dense.build((*query_shape[:-1], self.num_heads * self.key_dim))
        self.built = True

    def _split_heads(self, x):
        batch, length = ops.shape(x)[0], ops.shape(x)[1]
        return ops.reshape(x, (batch, length, self.num_heads, self.key_dim))   # (batch, len, heads, dk)

    def project_key_value(self, source):
        """Keys and values of `source`, (batch, len, heads, dk) each; computed once for a cache."""
        return self._split_heads(self.key_dense(source)), self._split_heads(self.value_dense(source))

    def attend(self, query, key, value, mask, training=None, return_scores=False, causal=False):
        """`query` (batch, q, d) attends to projected `key`/`value` (batch, k, heads, dk) where the boolean
        `mask` (batch, q or 1, k) is True, and with `causal` only to keys at or before its own position
        (q == k). With `return_scores`, also the weights (batch, heads, q, k), from the explicit path."""
        q = self._split_heads(self.query_dense(query))                     # (batch, q, heads, dk)
        if return_scores:
            context, weights = self._explicit_attention(q, key, value, mask, causal, training)
        else:
            context = fused_attention(q, key, value, mask, 1.0 / math.sqrt(self.key_dim), causal)
        batch, length = ops.shape(context)[0], ops.shape(context)[1]
        output = self.output_dense(ops.reshape(context, (batch, length, self.num_heads * self.key_dim)))
        return (output, weights) if return_scores else output

    def _explicit_attention(self, q, key, value, mask, causal, training):
        """Einsum and softmax: (context (batch, q, heads, dk), float32 weights (batch, heads, q, k))."""
        if causal:
            mask = ops.logical_and(mask, causal_mask(ops.shape(q)[1], ops.shape(key)[1]))
        q = q * ops.cast(1.0 / math.sqrt(self.key_dim), q.dtype)
        weights = _masked_softmax(ops.einsum("bqhd,bkhd->bhqk", q, key), mask)   # (batch, heads, q, k)
        dropped = self.dropout_layer(ops.cast(weights, q.dtype), training=training)
        return ops.einsum("bhqk,bkhd->bqhd", dropped, value), weights

    def call(self, query, source, mask, training=None, return_scores=False, causal=False):
        key, value = self.project_key_value(source)
        return self.attend(query, key, value, mask, training, return_scores, causal)

    def project_key_value_heads(self, source):
        """Keys and values of `source` in the cache's layout: keys (batch, heads, dk, len), values (batch,
        heads, len, dk), so that both products of `attend_cached` are plain batched matmuls."""
        key, value = self.project_key_value(source)
        return ops.transpose(key, (0, 2, 3, 1)), ops.transpose(value, (0, 2, 1, 3))

    def _by_sentence(self, x, sentences):
        """(rows, 1, heads * dk), a sentence's hypotheses in consecutive rows -> (sentences, heads, hypotheses, dk)."""
        return ops.transpose(ops.reshape(x, (sentences, -1, self.num_heads, self.key_dim)), (0, 2, 1, 3))

    def attend_cached(self, query, keys, values, mask):
        """One position per hypothesis: `query` (rows, 1, d), rows = sentences x hypotheses, attends to its
        sentence's `keys` (sentences, heads, dk, positions) and `values` (sentences, heads, positions, dk)
        where the boolean `mask` (sentences or 1, hypotheses or 1, positions) is True -> (rows, 1, d).

        Explicit rather than fused: in this layout both products are plain batched matmuls over
        (sentences, heads), so no step copies or transposes a cache (XLA on CPU otherwise does, every step).
        """
        q = self._by_sentence(self.query_dense(query), ops.shape(values)[0])            # (s, heads, hyp, dk)
        q = q * ops.cast(1.0 / math.sqrt(self.key_dim), q.dtype)
        weights = _masked_softmax(ops.matmul(q, keys), mask)                             # (s, heads, hyp, positions)
        context = ops.matmul(ops.cast(weights, values.dtype), values)                    # (s, heads, hyp, dk)
        context = ops.transpose(context, (0, 2, 1, 3))                                   # (s, hyp, heads, dk)
        return self.output_dense(ops.reshape(context, (-1, 1, self.num_heads * self.key_dim)))

    def call_cached(self, query, cache, index, mask):
        """Self-attention for one new position per hypothesis: write its key and value at `index` in its
        own slot, then attend over its sentence's cache where `mask` (sentences, hypotheses, positions) is True.

        cache: (keys (sentences, heads, dk, max_len * hypotheses), values (sentences, heads, max_len *
        hypotheses, dk)); position p of slot k is entry p * hypotheses + k, so a step writes one block.
        Returns (output, cache).
        """
        keys, values = cache
        sentences, hypotheses = ops.shape(values)[0], ops.shape(mask)[1]                         # hypotheses: an int
        key = ops.transpose(self._by_sentence(self.key_dense(query), sentences), (0, 1, 3, 2))   # (s, h, dk, hyp)
        value = self._by_sentence(self.value_dense(query), sentences)                             # (s, h, hyp, dk)
        keys = ops.slice_update(keys, (0, 0, 0, index * hypotheses), ops.cast(key, keys.dtype))
        values = ops.slice_update(values, (0, 0, index * hypotheses, 0), ops.cast(value, values.dtype))
        return self.attend_cached(query, keys, values, mask), (keys, values)

    def compute_output_shape(self, query_shape, source_shape=None, mask_shape=None):
        return query_shape

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim, "dropout": self.dropout}


@keras.saving.register_keras_serializable(PACKAGE)
class FeedForward(_ConsumesMask, keras.layers.Layer):
    """Position-wise feed-forward network: Dense(ff, relu) -> Dense(d) -> dropout."""

    def __init__(self, d_model: int, ff_dim: int, dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.ff_dim, self.dropout = d_model, ff_dim, dropout
        self.inner = keras.layers.Dense(ff_dim, activation="relu", name="inner")
        self.outer = keras.layers.Dense(d_model, name="outer")
        self.dropout_layer = Dropout(dropout)

    def build(self, input_shape):
        self.inner.build(input_shape)
        self.outer.build((*input_shape[:-1], self.ff_dim))
        self.built = True

    def call(self, x, training=None):
        return self.dropout_layer(self.outer(self.inner(x)), training=training)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "d_model": self.d_model, "ff_dim": self.ff_dim, "dropout": self.dropout}


class _Residual(_ConsumesMask):
    """What encoder and decoder blocks share: hyperparameters, feed-forward, post-/pre-LN residuals."""

    def _init_block(self, d_model: int, num_heads: int, ff_dim: int, dropout: float, norm_first: bool) -> None:
        self.d_model, self.num_heads, self.ff_dim = d_model, num_heads, ff_dim
        self.dropout, self.norm_first = dropout, norm_first
        self.feed_forward = FeedForward(d_model, ff_dim, dropout, name="feed_forward")
        self.ff_norm = keras.layers.LayerNormalization(epsilon=1e-6, name="ff_norm")
        self.residual_dropout = Dropout(dropout)

    def get_config(self):
        return {**super().get_config(), "d_model": self.d_model, "num_heads": self.num_heads,
                "ff_dim": self.ff_dim, "dropout": self.dropout, "norm_first": self.norm_first}

    def residual(self, x, norm, sublayer, training):
        if self.norm_first:
            return x + self.residual_dropout(sublayer(norm(x)), training=training)
        return norm(x + self.residual_dropout(sublayer(x), training=training))


@keras.saving.register_keras_serializable(PACKAGE)
class TransformerEncoderBlock(_Residual, keras.layers.Layer):
    """Self-attention (padding-masked) + feed-forward, each with a residual and layer norm."""

    def __init__(self, d_model: int, num_heads: int, ff_dim: int, dropout: float = 0.1,
                 norm_first: bool = False, **kwargs):
        super().__init__(**kwargs)
        self._init_block(d_model, num_heads, ff_dim, dropout, norm_first)
        self.self_attention = MultiHeadAttention(num_heads, d_model // num_heads, dropout, name="self_attention")
        self.attention_norm = keras.layers.LayerNormalization(epsilon=1e-6, name="attention_norm")

    def build(self, input_shape):
        self.self_attention.build(input_shape, input_shape)
        self.feed_forward.build(input_shape)
        self.attention_norm.build(input_shape)
        self.ff_norm.build(input_shape)
        self.built = True

    def call(self, x, padding_mask, training=None):
        mask = attention_mask(padding_mask, padding_mask)                  # (batch, 1, src)
        x = self.residual(x, self.attention_norm,
                          lambda y: self.self_attention(y, y, mask, training=training), training)
        return self.residual(x, self.ff_norm, lambda y: self.feed_forward(y, training=training), training)

    def compute_output_shape(self, input_shape, mask_shape=None):
        return input_shape


@keras.saving.register_keras_serializable(PACKAGE)
class TransformerDecoderBlock(_Residual, keras.layers.Layer):
    """Causal self-attention, cross-attention over the encoder output, feed-forward."""

    def __init__(self, d_model: int, num_heads: int, ff_dim: int, dropout: float = 0.1,
                 norm_first: bool = False, **kwargs):
        super().__init__(**kwargs)
        self._init_block(d_model, num_heads, ff_dim, dropout, norm_first)
        key_dim = d_model // num_heads
        self.self_attention = MultiHeadAttention(num_heads, key_dim, dropout, name="self_attention")
        self.cross_attention = MultiHeadAttention(num_heads, key_dim, dropout, name="cross_attention")
        self.self_norm = keras.layers.LayerNormalization(epsilon=1e-6, name="self_attention_norm")
        self.cross_norm = keras.layers.LayerNormalization(epsilon=1e-6, name="cross_attention_norm")

    def build(self, input_shape, encoder_shape=None):
        encoder_shape = encoder_shape or input_shape
        self.self_attention.build(input_shape, input_shape)
        self.cross_attention.build(input_shape, encoder_shape)
        self.feed_forward.build(input_shape)
        for norm in (self.self_norm, self.cross_norm, self.ff_norm):
            norm.build(input_shape)
        self.built = True

    def call(self, x, encoder_output, target_mask, source_mask, training=None, return_attention=False):
        """(batch, tgt, d) -> (batch, tgt, d); with `return_attention`, also the cross-attention
        weights (batch, heads, tgt, src)."""
        self_mask = attention_mask(target_mask, target_mask)              # (batch, 1, tgt), causal below
        cross_mask = attention_mask(target_mask, source_mask)              # (batch, 1, src)
        x = self.residual(x, self.self_norm, lambda y: self.self_attention(y, y, self_mask, training=training,
                                                                           causal=True), training)
        weights = []

        def cross(y):
            if not return_attention:
                return self.cross_attention(y, encoder_output, cross_mask, training=training)
            output, scores = self.cross_attention(y, encoder_output, cross_mask, training=training,
                                                  return_scores=True)
            weights.append(scores)
            return output

        x = self.residual(x, self.cross_norm, cross, training)
        x = self.residual(x, self.ff_norm, lambda y: self.feed_forward(y, training=training), training)
        return (x, weights[0]) if return_attention else x

    def call_cached(self, x, self_cache, self_mask, index, cross_key, cross_value, cross_mask):
        """One decoding step (x: (rows, 1, d)) using this layer's cache (see `Seq2SeqTransformer.init_cache`);
        returns (x, cache)."""
        attend_self = lambda y: self.self_attention.call_cached(y, self_cache, index, self_mask)
        attend_cross = lambda y: self.cross_attention.attend_cached(y, cross_key, cross_value, cross_mask)
        if self.norm_first:
            attended, self_cache = attend_self(self.self_norm(x))
            x = x + attended
            x = x + attend_cross(self.cross_norm(x))
            return x + self.feed_forward(self.ff_norm(x)), self_cache
        attended, self_cache = attend_self(x)
        x = self.self_norm(x + attended)
        x = self.cross_norm(x + attend_cross(x))
        return self.ff_norm(x + self.feed_forward(x)), self_cache

    def compute_output_shape(self, input_shape, *args, **kwargs):
        return input_shape
