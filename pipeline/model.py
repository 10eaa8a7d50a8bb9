"""The encoder-decoder Transformer: `build_model`, `encode`, `decode`, cached `decode_step`."""
from __future__ import annotations

import math
from typing import Any

import keras
from keras import ops

from pipeline.config import Config, ModelConfig
from pipeline.layers import PACKAGE, PositionalEmbedding, TransformerDecoderBlock, TransformerEncoderBlock


@keras.saving.register_keras_serializable(PACKAGE)
class Seq2SeqTransformer(keras.Model):
    """Inputs {"encoder_inputs": (batch, src), "decoder_inputs": (batch, tgt)} -> float32 logits (batch, tgt, vocab)."""

    def __init__(self, source_vocab_size: int, target_vocab_size: int, sequence_length: int,
                 d_model: int = ModelConfig.d_model, num_heads: int = ModelConfig.num_heads,
                 ff_dim: int = ModelConfig.ff_dim, encoder_layers: int = ModelConfig.encoder_layers,
                 decoder_layers: int = ModelConfig.decoder_layers, dropout: float = ModelConfig.dropout,
                 positional: str = ModelConfig.positional, scale_embeddings: bool = ModelConfig.scale_embeddings,
                 norm_first: bool = ModelConfig.norm_first, tie_embeddings: bool = ModelConfig.tie_embeddings,
                 share_embeddings: bool = ModelConfig.share_embeddings, **kwargs):
        """The architecture's defaults are `config.ModelConfig`'s (one place); `build_model` sizes it from a config."""
        super().__init__(**kwargs)
        self.hyper = dict(source_vocab_size=source_vocab_size, target_vocab_size=target_vocab_size,
                          sequence_length=sequence_length, d_model=d_model, num_heads=num_heads, ff_dim=ff_dim,
                          encoder_layers=encoder_layers, decoder_layers=decoder_layers, dropout=dropout,
                          positional=positional, scale_embeddings=scale_embeddings, norm_first=norm_first,
                          tie_embeddings=tie_embeddings, share_embeddings=share_embeddings)
        if share_embeddings and source_vocab_size != target_vocab_size:
            raise ValueError(f"share_embeddings needs one vocabulary, got source {source_vocab_size} "
                             f"and target {target_vocab_size} ids")
        self.d_model, self.num_heads, self.norm_first = d_model, num_heads, norm_first
        self.tie_embeddings, self.target_vocab_size = tie_embeddings, target_vocab_size
        embed = dict(embed_dim=d_model, positional=positional, scale_embeddings=scale_embeddings, dropout=dropout)
        block = dict(d_model=d_model, num_heads=num_heads, ff_dim=ff_dim, dropout=dropout, norm_first=norm_first)
        self.target_embedding = PositionalEmbedding(sequence_length, target_vocab_size, name="target_embedding", **embed)
        self.source_embedding = self.target_embedding if share_embeddings else PositionalEmbedding(
            sequence_length, source_vocab_size, name="source_embedding", **embed)
        self.encoder_blocks = [TransformerEncoderBlock(name=f"encoder_{i}", **block) for i in range(encoder_layers)]
        self.decoder_blocks = [TransformerDecoderBlock(name=f"decoder_{i}", **block) for i in range(decoder_layers)]
        # pre-LN needs a final norm on each stack's output
        self.encoder_norm = keras.layers.LayerNormalization(epsilon=1e-6, name="encoder_norm") if norm_first else None
        self.decoder_norm = keras.layers.LayerNormalization(epsilon=1e-6, name="decoder_norm") if norm_first else None
        self.output_projection = None if tie_embeddings else keras.layers.Dense(
            target_vocab_size, dtype="float32", name="output_projection")

    def build(self, input_shape=None):
        batch = None
        source_shape, target_shape = (batch, None), (batch, None)
        hidden = (batch, None, self.d_model)
        self.target_embedding.build(target_shape)
        if self.source_embedding is not self.target_embedding:
            self.source_embedding.build(source_shape)
        for block in self.encoder_blocks:
            block.build(hidden)
        for block in self.decoder_blocks:
            block.build(hidden, hidden)
        for norm in (self.encoder_norm, self.decoder_norm):
            if norm is not None:
                norm.build(hidden)
        if self.tie_embeddings:
            self.output_bias = self.add_weight(shape=(self.target_vocab_size,), initializer="zeros",
                                               name="output_bias", dtype="float32")
        else:
            self.output_projection.build(hidden)
        self.built = True

    # -- the three pieces ---------------------------------------------------------------
    def encode(self, source_ids, training=None):
        """(batch, src) ids -> encoder output (batch, src, d) and the source padding mask (batch, src)."""
        source_mask = ops.not_equal(source_ids, 0)
        x = self.source_embedding(source_ids, training=training)
        for block in self.encoder_blocks:
            x = block(x, source_mask, training=training)
        if self.encoder_norm is not None:
            x = self.encoder_norm(x)
        return x, source_mask

    def logits(self, hidden):
        """Decoder states (..., d) -> float32 logits (..., vocab)."""
        if self.decoder_norm is not None:
            hidden = self.decoder_norm(hidden)
        if self.output_projection is not None:
            return self.output_projection(hidden)
        table = ops.cast(self.target_embedding.token_embedding.embeddings, "float32")   # (vocab, d)
        return ops.matmul(ops.cast(hidden, "float32"), ops.transpose(table)) + ops.cast(self.output_bias, "float32")

    def decode(self, target_ids, encoder_output, source_mask, training=None, return_attention=False):
        """Teacher-forced decoder: (batch, tgt) ids -> logits (batch, tgt, vocab); with `return_attention`,
        also every layer's cross-attention weights, (layers, batch, heads, tgt, src)."""
        target_mask = ops.not_equal(target_ids, 0)
        x = self.target_embedding(target_ids, training=training)
        weights = []
        for block in self.decoder_blocks:
            x = block(x, encoder_output, target_mask, source_mask, training=training,
                      return_attention=return_attention)
            if return_attention:
                x, scores = x
                weights.append(scores)
        return (self.logits(x), ops.stack(weights)) if return_attention else self.logits(x)

    def cross_attention(self, source_ids, target_ids):
        """Teacher-forced cross-attention weights of every decoder layer: (layers, batch, heads, tgt, src)."""
        encoder_output, source_mask = self.encode(source_ids)
        return self.decode(target_ids, encoder_output, source_mask, return_attention=True)[1]

    def call(self, inputs, training=None):
        encoder_output, source_mask = self.encode(inputs["encoder_inputs"], training=training)
        return self.decode(inputs["decoder_inputs"], encoder_output, source_mask, training=training)

    # -- incremental decoding -------------------------------------------------------------
    def init_cache(self, encoder_output, source_mask, max_length) -> dict[str, Any]:
        """Cross-attention keys/values (computed once per sentence) and empty self-attention caches, for
        one hypothesis per sentence (`expand_cache` makes several, for beam search).

        Caches are per sentence, laid out for the cached step's matmuls (see `MultiHeadAttention.call_cached`):
        - "self": one (keys, values) pair per decoder layer, keys (sentences, heads, key_dim, max_length x
          hypotheses) and values (sentences, heads, max_length x hypotheses, key_dim); each hypothesis
          writes its new position in its own slot;
        - "slots": (rows, max_length) int32, rows = sentences x hypotheses: for each earlier position of
          the row's hypothesis, the slot that holds it. Beam search reorders these (`reorder_cache`),
          never the keys and values;
        - "cross_key", "cross_value": per layer, in the same layout over the source; "cross_mask".
        """
        sentences = ops.shape(encoder_output)[0]
        heads, key_dim, dtype = self.num_heads, self.d_model // self.num_heads, encoder_output.dtype
        cross = [block.cross_attention.project_key_value_heads(encoder_output) for block in self.decoder_blocks]
        return {"self": [(ops.zeros((sentences, heads, key_dim, max_length), dtype=dtype),
                          ops.zeros((sentences, heads, max_length, key_dim), dtype=dtype))
                         for _ in self.decoder_blocks],
                "slots": ops.zeros((sentences, max_length), "int32"),
                "cross_key": [k for k, _ in cross], "cross_value": [v for _, v in cross],
                "cross_mask": ops.expand_dims(source_mask, 1)}

    @staticmethod
    def expand_cache(cache, hypotheses: int) -> dict[str, Any]:
        """From one hypothesis per sentence to `hypotheses`, each continuing the history of the first."""
        def widen(t, axis):     # entry p becomes p * hypotheses: new slots are empty
            t = ops.expand_dims(t, axis + 1)
            t = ops.concatenate([t] + [ops.zeros_like(t)] * (hypotheses - 1), axis=axis + 1)
            shape = ops.shape(t)
            return ops.reshape(t, (*shape[:axis], shape[axis] * hypotheses, *shape[axis + 2:]))
        return {**cache, "self": [(widen(keys, 3), widen(values, 2)) for keys, values in cache["self"]],
                "slots": ops.repeat(cache["slots"], hypotheses, axis=0)}

    @staticmethod
    def reorder_cache(cache, parent) -> dict[str, Any]:
        """Row r continues the hypothesis of row parent[r] (of the same sentence): its slots, (rows,) int32."""
        return {**cache, "slots": ops.take(cache["slots"], parent, axis=0)}

    def decode_step_states(self, token_ids, index, cache):
        """One step without the output projection: token ids (rows,) at `index` -> (states (rows, d), cache)."""
        x = self.target_embedding(ops.expand_dims(token_ids, 1), start=index)   # (rows, 1, d)
        rows, positions = ops.shape(cache["slots"])
        sentences = ops.shape(cache["cross_value"][0])[0]
        hypotheses = ops.shape(cache["self"][0][1])[2] // positions     # a Python int even where rows are not
        own = ops.arange(rows, dtype="int32") % hypotheses                       # (rows,) each row's slot
        slots = ops.slice_update(cache["slots"], (0, index), ops.expand_dims(own, 1))
        # a row sees entry (p, k) where its history's position p lies in slot k, for p up to `index`
        seen = ops.logical_and(ops.expand_dims(slots, 2) == ops.arange(hypotheses, dtype="int32"),
                               ops.expand_dims(ops.arange(positions) <= index, 1))   # (rows, positions, hyp)
        self_mask = ops.reshape(seen, (sentences, hypotheses, positions * hypotheses))
        layer_caches = []
        for block, layer_cache, key, value in zip(self.decoder_blocks, cache["self"], cache["cross_key"],
                                                  cache["cross_value"]):
            x, layer_cache = block.call_cached(x, layer_cache, self_mask, index, key, value, cache["cross_mask"])
            layer_caches.append(layer_cache)
        return x[:, 0], {**cache, "self": layer_caches, "slots": slots}

    def decode_step(self, token_ids, index, cache):
        """One step: token ids (batch,) at position `index` -> (float32 logits (batch, vocab), new cache)."""
        states, cache = self.decode_step_states(token_ids, index, cache)
        return self.logits(states), cache

    def get_config(self):
        return {**super().get_config(), **self.hyper}


def build_model(config: Config, source_vocab_size: int, target_vocab_size: int) -> Seq2SeqTransformer:
    """The model described by `config.model`, sized for the prepared vocabularies, built."""
    m = config.model
    model = Seq2SeqTransformer(
        source_vocab_size=source_vocab_size, target_vocab_size=target_vocab_size,
        sequence_length=config.data.max_length + 2 + config.decode.max_extra_length,
        d_model=m.d_model, num_heads=m.num_heads, ff_dim=m.ff_dim, encoder_layers=m.encoder_layers,
        decoder_layers=m.decoder_layers, dropout=m.dropout, positional=m.positional,
        scale_embeddings=m.scale_embeddings, norm_first=m.norm_first, tie_embeddings=m.tie_embeddings,
        share_embeddings=m.share_embeddings, name="seq2seq_transformer")
    model.build()
    return model


def count_parameters(model: keras.Model) -> int:
    return int(sum(math.prod(v.shape) for v in model.trainable_weights))
