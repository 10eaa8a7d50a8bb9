import numpy as np
import pytest
import keras
from keras import ops

from pipeline.config import load_config
from pipeline.layers import PositionalEmbedding, TransformerEncoderBlock, pos_enc_matrix
from pipeline.model import Seq2SeqTransformer, build_model
from pipeline.training import MaskedAccuracy, MaskedSparseCrossEntropy, NoamSchedule

VOCAB_EN, VOCAB_IT = 50, 60


def tiny_model(norm_first=False, tie=True, positional="sinusoidal", dropout=0.0):
    config = load_config(None, [f"model.d_model=32", "model.num_heads=4", "model.ff_dim=64",
                                "model.encoder_layers=2", "model.decoder_layers=2", f"model.dropout={dropout}",
                                f"model.norm_first={str(norm_first).lower()}", f"model.tie_embeddings={str(tie).lower()}",
                                f"model.positional={positional}", "data.max_length=12"])
    keras.utils.set_random_seed(0)
    return build_model(config, VOCAB_EN, VOCAB_IT)


def batch(rng, n=3, src=7, tgt=6):
    en = rng.integers(2, VOCAB_EN, size=(n, src)).astype("int32")
    it = rng.integers(2, VOCAB_IT, size=(n, tgt)).astype("int32")
    en[0, 4:] = 0          # real padding in the batch
    it[1, 3:] = 0
    return en, it


def logits(model, en, it):
    return np.asarray(model({"encoder_inputs": en, "decoder_inputs": it}, training=False))


def test_pos_enc_matrix_is_the_paper_table():
    table = pos_enc_matrix(50, 16)
    assert table.shape == (50, 16)
    pos, i = 7, 3
    assert table[pos, 2 * i] == pytest.approx(np.sin(pos / 10000 ** (2 * i / 16)), abs=1e-6)
    assert table[pos, 2 * i + 1] == pytest.approx(np.cos(pos / 10000 ** (2 * i / 16)), abs=1e-6)
    with pytest.raises(ValueError, match="depth must be even for the sinusoidal table, got 15"):
        pos_enc_matrix(10, 15)


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_positional_embedding_crops_masks_and_round_trips(tmp_path, positional):
    layer = PositionalEmbedding(20, 30, 8, positional=positional, scale_embeddings=False)
    ids = np.array([[5, 6, 7, 0, 0]])
    out = np.asarray(layer(ids))
    assert out.shape == (1, 5, 8)
    assert np.asarray(layer.compute_mask(ids)).tolist() == [[True, True, True, False, False]]
    if positional == "sinusoidal":
        token = np.asarray(layer.token_embedding(ids))
        assert np.allclose(out - token, pos_enc_matrix(20, 8)[:5], atol=1e-6)
    inputs = keras.Input((None,), dtype="int32")
    model = keras.Model(inputs, layer(inputs))
    model.save(tmp_path / "pe.keras")
    reloaded = keras.saving.load_model(tmp_path / "pe.keras")
    assert np.allclose(np.asarray(reloaded(ids)), out)
    assert reloaded.layers[-1].get_config()["positional"] == positional


def test_encoder_ignores_whatever_sits_in_padded_positions():
    block = TransformerEncoderBlock(16, 2, 32, dropout=0.0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 6, 16)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 0]], dtype=bool)
    noisy = x.copy()
    noisy[~mask] = rng.normal(size=noisy[~mask].shape) * 10
    a, b = np.asarray(block(x, mask)), np.asarray(block(noisy, mask))
    assert np.allclose(a[mask], b[mask], atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_extra_source_padding_changes_nothing(norm_first):
    """Fails if the encoder self-attention or the cross-attention padding mask is dropped."""
    model = tiny_model(norm_first)
    en, it = batch(np.random.default_rng(1))
    longer = np.concatenate([en, np.zeros((3, 5), dtype="int32")], axis=1)
    assert np.allclose(logits(model, en, it), logits(model, longer, it), atol=1e-4)


def test_cross_attention_mask_alone_is_needed():
    """Padding only hurts through cross-attention if the encoder mask is right: check the decoder sees no pad key."""
    model = tiny_model()
    en, it = batch(np.random.default_rng(2))
    encoder_output, source_mask = model.encode(en)
    noisy = np.asarray(encoder_output).copy()
    noisy[~np.asarray(source_mask)] = 100.0                      # garbage in padded encoder states
    a = np.asarray(model.decode(it, encoder_output, source_mask))
    b = np.asarray(model.decode(it, noisy, source_mask))
    assert np.allclose(a, b, atol=1e-4)


@pytest.mark.parametrize("norm_first", [False, True])
def test_later_decoder_tokens_do_not_change_earlier_logits(norm_first):
    """Fails if the causal mask is dropped."""
    model = tiny_model(norm_first)
    en, it = batch(np.random.default_rng(3))
    changed = it.copy()
    changed[:, 4:] = np.random.default_rng(4).integers(2, VOCAB_IT, size=changed[:, 4:].shape)
    a, b = logits(model, en, it), logits(model, en, changed)
    assert np.allclose(a[:, :4], b[:, :4], atol=1e-4)
    assert not np.allclose(a[0, 4:], b[0, 4:], atol=1e-3)


def test_loss_and_accuracy_ignore_padded_targets():
    rng = np.random.default_rng(5)
    y = np.array([[3, 4, 5, 0, 0], [6, 7, 0, 0, 0]], dtype="int32")
    pred = rng.normal(size=(2, 5, 10)).astype("float32")
    pred2 = pred.copy()
    pred2[y == 0] = rng.normal(size=pred2[y == 0].shape) * 50       # garbage where the target is padding
    for smoothing in (0.0, 0.1):
        loss = MaskedSparseCrossEntropy(smoothing)
        assert float(loss(y, pred)) == pytest.approx(float(loss(y, pred2)), rel=1e-6)
    log_probs = pred - np.log(np.exp(pred).sum(-1, keepdims=True))
    expected = -np.mean([log_probs[b, t, y[b, t]] for b in range(2) for t in range(5) if y[b, t]])
    assert float(MaskedSparseCrossEntropy(0.0)(y, pred)) == pytest.approx(expected, rel=1e-5)
    perfect = np.eye(10, dtype="float32")[y] * 10
    perfect[y == 0] = np.eye(10)[9] * 10                           # wrong, but only on padding
    metric = MaskedAccuracy()
    metric.update_state(y, perfect)
    assert float(metric.result()) == 1.0


def test_noam_schedule_warms_up_then_decays():
    schedule = NoamSchedule(512, 4000)
    lr = [float(schedule(s)) for s in (0, 1999, 3999, 15999)]
    assert lr[0] < lr[1] < lr[2] and lr[3] == pytest.approx(lr[2] / 2, rel=1e-3)
    assert lr[2] == pytest.approx(512 ** -0.5 * 4000 ** -0.5, rel=1e-3)


@pytest.mark.parametrize("norm_first, tie", [(False, True), (True, False)])
def test_cached_decoding_equals_full_decoder(norm_first, tie):
    model = tiny_model(norm_first, tie)
    en, it = batch(np.random.default_rng(6))
    it[1, 3:] = 7                                   # no padding: compare every position
    full = logits(model, en, it)
    encoder_output, source_mask = model.encode(en)
    cache = model.init_cache(encoder_output, source_mask, it.shape[1])
    for t in range(it.shape[1]):
        step, cache = model.decode_step(ops.convert_to_tensor(it[:, t]), t, cache)
        assert np.allclose(np.asarray(step), full[:, t], atol=1e-4), t


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_hypotheses_follow_their_reordered_histories(norm_first):
    """Beam search's cache: several hypotheses per sentence, reordered every step (`reorder_cache`
    moves only their slot tables), each step's logits equal the full decoder on the row's own history."""
    model, rng, hypotheses = tiny_model(norm_first), np.random.default_rng(11), 3
    en, _ = batch(rng)
    sentences, steps = en.shape[0], 6
    encoder_output, source_mask = model.encode(en)
    cache = model.init_cache(encoder_output, source_mask, steps)
    _, cache = model.decode_step(ops.convert_to_tensor(np.full(sentences, 2, "int32")), 0, cache)  # once per sentence
    cache = model.expand_cache(cache, hypotheses)
    histories = [[2] for _ in range(sentences * hypotheses)]
    rows_source = np.repeat(en, hypotheses, axis=0)
    for t in range(1, steps):
        tokens = rng.integers(3, VOCAB_IT, size=sentences * hypotheses).astype("int32")
        step, cache = model.decode_step(ops.convert_to_tensor(tokens), t, cache)
        histories = [h + [int(x)] for h, x in zip(histories, tokens)]
        full = logits(model, rows_source, np.array(histories, dtype="int32"))[:, -1]
        assert np.allclose(np.asarray(step), full, atol=1e-4), t
        parent = (np.arange(sentences)[:, None] * hypotheses
                  + rng.integers(0, hypotheses, size=(sentences, hypotheses))).reshape(-1).astype("int32")
        parent[0] = 1 if parent[0] == 0 else 0          # rows do change hypothesis at every step
        cache = model.reorder_cache(cache, ops.convert_to_tensor(parent))
        histories = [list(histories[p]) for p in parent]


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_model_keras_file_round_trip(tmp_path, positional):
    model = tiny_model(positional=positional, dropout=0.1)
    en, it = batch(np.random.default_rng(7))
    model.save(tmp_path / "m.keras")
    reloaded = keras.saving.load_model(tmp_path / "m.keras")
    assert isinstance(reloaded, Seq2SeqTransformer)
    assert np.array_equal(logits(model, en, it), logits(reloaded, en, it))
