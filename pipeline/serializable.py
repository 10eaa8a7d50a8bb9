"""Importing this module registers every Keras-serializable class of the package (layers, model,
schedule, loss, metric), so that `keras.saving.load_model` can rebuild a saved run."""
from pipeline.layers import (FeedForward, MultiHeadAttention, PositionalEmbedding, TransformerDecoderBlock,
                             TransformerEncoderBlock)
from pipeline.model import Seq2SeqTransformer
from pipeline.objectives import MaskedAccuracy, MaskedSparseCrossEntropy, NoamSchedule

__all__ = ["FeedForward", "MultiHeadAttention", "PositionalEmbedding", "TransformerDecoderBlock",
           "TransformerEncoderBlock", "Seq2SeqTransformer", "MaskedAccuracy", "MaskedSparseCrossEntropy",
           "NoamSchedule"]
