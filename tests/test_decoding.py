"""Decoding (greedy, beam search, sampling) on every installed backend, the KerasEngine API and the CLI.

`decode_everything` runs every decoding that the equality tests compare, on the backend of the process
that calls it: this one (TensorFlow), and one subprocess per other installed backend, which runs this
file as a script: `KERAS_BACKEND=jax python tests/test_decoding.py RUN_DIR SOURCE.npy OUT.npz`.
"""
import importlib.util
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from pipeline.datasets import load_split
from pipeline.decoding import (BeamSearch, Greedy, compile_decoder, decode_loop, full_recompute_greedy,
                               top_k_by_chunks)
from pipeline.rundir import RunDirectoryError, prepared_path, run_path
from pipeline.translate.keras_engine import KerasEngine
from pipeline.vectorizers import VectorizerFileError

from conftest import OTHERS_TEMPORARY, ROOT

SENTENCES = ["I love you.", "Where is the station?", "Tom is my friend.", "I don't know what to do.",
             "It's raining.", "We have to go now, because the last train leaves at ten."]
STEPS, FEW = 12, 8
SAMPLED = {"sample": dict(sample=True, temperature=1.5, seed=7),
           "sample_again": dict(sample=True, temperature=1.5, seed=7),
           "sample_seed_8": dict(sample=True, temperature=1.5, seed=8),
           "top_k_1": dict(sample=True, top_k=1, seed=7),
           "nucleus": dict(sample=True, temperature=0.8, top_k=50, top_p=0.9, seed=7),
           "top_p": dict(sample=True, top_p=0.9, seed=7)}
# the [UNK] ban under each strategy, with programs compiled already (the same options and shapes: weights are inputs)
UNK_STRATEGIES = {"greedy": {}, "beam_4": dict(beams=4, alpha=0.6), "sample": SAMPLED["sample"],
                  "nucleus": SAMPLED["nucleus"], "top_p": SAMPLED["top_p"]}


def decode_everything(run_dir, source: np.ndarray) -> dict[str, np.ndarray]:
    """Ids (sentences, STEPS) of every decoding compared below, on this process's Keras backend."""
    from keras import ops

    tiny_engine = KerasEngine.from_run(run_dir)
    model, start, end, unk = tiny_engine.model, tiny_engine.start_id, tiny_engine.end_id, tiny_engine.banned_id
    few_rows = np.argsort((source != 0).sum(1), kind="stable")[:FEW]     # the shortest: alone, one width bucket
    decode, limits, few = tiny_engine.decoder, np.full(len(source), STEPS), source[few_rows]

    def alone(**options):
        return np.concatenate([decode(s[None, :max(1, int((s != 0).sum()))], limits[:1], **options) for s in few])

    out = {"greedy": decode(source, limits),
           "full_recompute": full_recompute_greedy(model, source, start, end, STEPS, unk, pad_to=8),
           "beam_1": ops.convert_to_numpy(decode_loop(model, source, limits, BeamSearch(1, 0.6), start, end,
                                                      STEPS + 1, unk)),
           "greedy_alone": alone(), "beam_4": decode(few, limits[:FEW], beams=4, alpha=0.6),
           "beam_4_alone": alone(beams=4, alpha=0.6),
           **{name: decode(source, limits, **options) for name, options in SAMPLED.items()}}
    decode(source[:5, :3], limits[:5])
    traces = decode.traces
    decode(source[:7, :6], limits[:7])              # the same buckets (8 rows, width 8): no new compilation
    out["new_traces"] = np.array(decode.traces - traces)
    # programs readied ahead, side by side (JAX; elsewhere nothing to do): the same ids, nothing traced after
    ahead = KerasEngine(model, tiny_engine.vectorizers, tiny_engine.config).decoder
    out["prepared"] = np.array([ahead.prepare([(len(source), source.shape[1], STEPS), (5, 3, STEPS)]),
                                ahead.prepare([(FEW, few.shape[1], STEPS)], beams=4, alpha=0.6),
                                ahead.prepare([(7, 6, STEPS)])])      # 8 rows, width 8: readied already
    traces = ahead.traces
    out["greedy_prepared"], out["beam_4_prepared"] = ahead(source, limits), ahead(few, limits[:FEW], beams=4, alpha=0.6)
    ahead(source[:7, :6], limits[:7])
    out["prepared_new_traces"] = np.array(ahead.traces - traces)
    # the engine readies, before decoding, every program its batches then use (greedy, n-best, sampling)
    engine = KerasEngine(model, tiny_engine.vectorizers, tiny_engine.config)
    readied, prepare, traces = [], engine.decoder.prepare, engine.decoder.traces
    engine.decoder.prepare = lambda *args, **options: readied.append(prepare(*args, **options)) or readied[-1]
    engine.translate_sentences(SENTENCES, batch_size=2)
    engine.n_best_sentences(SENTENCES, 2, batch_size=2)
    engine.translate_sentences(SENTENCES, batch_size=2, sample=True, seed=3)
    out["engine_readied"], out["engine_traces"] = np.array(readied), np.array(engine.decoder.traces - traces)
    bias = np.array(ops.convert_to_numpy(model.output_bias))
    bias[unk] += 100.0                              # the model now prefers [UNK] everywhere
    model.output_bias.assign(bias)
    out["unk_allowed"] = compile_decoder(model, start, end)(few, limits[:FEW])
    for name, options in UNK_STRATEGIES.items():
        out[f"unk_banned_{name}"] = decode(few, limits[:FEW], **options) if options.get("beams") else \
            decode(source, limits, **options)
    out["unk_id"], out["start_id"], out["end_id"] = np.array(unk), np.array(start), np.array(end)
    out["few_rows"] = few_rows
    return out


BACKENDS = ["tensorflow"] + [pytest.param(name, marks=pytest.mark.skipif(importlib.util.find_spec(name) is None,
                                                                         reason=f"{name} is not installed"))
                             for name in ("jax", "torch")]


@pytest.mark.parametrize("vocab, k", [(8000, 4), (1003, 5), (70, 2), (64, 3)])
def test_top_k_by_chunks_equals_top_k_ties_included(vocab, k):
    from keras import ops

    rng = np.random.default_rng(vocab)
    scores = rng.normal(size=(40, vocab)).astype("float32").round(1)        # many exact ties
    scores[:, :3] = -1e9                                                       # masked ids, as decoding has them
    scores[1] = 0.5                                                            # a row of nothing but ties
    scores[2, :] = -1e9
    scores[2, vocab - 1] = 3.0                                                 # one finite score, in the last chunk
    values, ids = (np.asarray(x) for x in top_k_by_chunks(ops.convert_to_tensor(scores), k))
    want_values, want_ids = (np.asarray(x) for x in ops.top_k(ops.convert_to_tensor(scores), k=k))
    assert np.array_equal(values, want_values)
    assert np.array_equal(ids, want_ids)
    assert ids.dtype == np.int32 and list(ids[1]) == list(range(k))


def test_sampling_without_a_cut_draws_in_vocabulary_order_from_the_right_distribution():
    """No top-k or top-p cut: no sort; draws follow the softmax, and masked tokens, wherever they lie in the
    vocabulary, are never drawn, even by a uniform that rounds to the total weight."""
    from keras import ops

    from pipeline.decoding import NEG_INF, Sampling

    rng = np.random.default_rng(3)
    vocab, rows = 12, 20000
    logits = rng.normal(size=vocab).astype("float32")
    masked = [0, 4, 5, 11]                                       # padding, banned... interspersed, and the last
    logits[masked] = NEG_INF
    uniforms = rng.random((rows, 1), dtype=np.float32)
    uniforms[:3, 0] = [0.0, np.nextafter(np.float32(1), np.float32(0)), 0.5]
    tiled = ops.convert_to_tensor(np.tile(logits, (rows, 1)))
    probabilities = np.exp(logits - logits.max())
    probabilities[masked] = 0
    probabilities /= probabilities.sum()
    for strategy in (Sampling(ops.convert_to_tensor(uniforms)),                         # vocabulary order
                     Sampling(ops.convert_to_tensor(uniforms), top_k=vocab - 1)):         # sorted, best first
        draws = np.asarray(ops.convert_to_numpy(strategy.next_token(tiled, 0)))
        assert draws.dtype == np.int32 and not np.isin(draws, masked).any()
        frequencies = np.bincount(draws, minlength=vocab) / rows
        assert np.abs(frequencies - probabilities).max() < 0.015, (frequencies, probabilities)
    unsorted = np.asarray(ops.convert_to_numpy(Sampling(ops.convert_to_tensor(uniforms)).next_token(tiled, 0)))
    assert unsorted[0] == 1 and unsorted[1] == 10                # the first and the last token with a weight


def running_sum_cut(ranked: np.ndarray, top_p: float) -> np.ndarray:
    """The reference nucleus of rows of weights sorted best first: a sort keeps each token while the tokens before
    it hold less than `top_p` of the row's weight."""
    return np.cumsum(ranked, axis=1) - ranked < top_p * ranked.sum(1, keepdims=True)


def test_top_p_alone_keeps_the_sorted_nucleus_without_sorting_and_draws_from_it():
    """Top-p without top-k: the nucleus found by bisection is the best-first set a sort cuts (every row, peaked
    and flat, masked tokens anywhere), and draws follow its renormalised weights."""
    from keras import ops

    from pipeline.decoding import NEG_INF, Sampling

    rng = np.random.default_rng(5)
    vocab, rows, top_p = 300, 3000, 0.9
    logits = (rng.normal(size=(rows, vocab)) * rng.choice([0.3, 1.0, 4.0], (rows, 1))).astype("float32")
    logits[:, [0, 7, vocab - 1]] = NEG_INF
    logits[1] = NEG_INF
    logits[1, 5] = 2.0                                          # one token left: the nucleus is that token
    sampling = Sampling(ops.convert_to_tensor(rng.random((rows, 1), dtype=np.float32)), top_p=top_p)
    weights = np.exp(logits - logits.max(1, keepdims=True))
    order = np.argsort(-logits, axis=1, kind="stable")
    ranked = np.take_along_axis(weights, order, axis=1)
    size = running_sum_cut(ranked, top_p).sum(1)                                    # a sort's cut
    sorted_cut = np.argsort(order, axis=1) < size[:, None]                      # in vocabulary order
    edge = np.take_along_axis(logits, order, axis=1)[np.arange(rows), size - 1]
    # the same rows moved so that each edge lies near 0 (the bisection's precision is absolute, not relative)
    shifted = np.where(logits > NEG_INF, logits - edge[:, None] + 1e-4, NEG_INF).astype("float32")
    floors = [np.asarray(ops.convert_to_numpy(sampling.nucleus_floor(ops.convert_to_tensor(x))))
              for x in (logits, shifted)]
    for rows_logits, floor in zip((logits, shifted), floors):
        assert np.array_equal(rows_logits >= floor, sorted_cut)
    floor = floors[0][:, 0]
    assert size[1] == 1 and np.unique(size).size > 20                # one token, and nuclei of many sizes
    draws = np.asarray(ops.convert_to_numpy(sampling.next_token(ops.convert_to_tensor(logits), 0)))
    assert draws.dtype == np.int32 and (logits[np.arange(rows), draws] >= floor).all() and draws[1] == 5
    # every row the same distribution: the draws' frequencies are the nucleus's renormalised weights
    same = np.tile(logits[2], (20000, 1))
    repeated = Sampling(ops.convert_to_tensor(rng.random((20000, 1), dtype=np.float32)), top_p=top_p)
    drawn = np.asarray(ops.convert_to_numpy(repeated.next_token(ops.convert_to_tensor(same), 0)))
    kept = np.where(logits[2] >= floor[2], weights[2], 0.0)
    assert np.abs(np.bincount(drawn, minlength=vocab) / 20000 - kept / kept.sum()).max() < 0.01


def test_top_k_with_top_p_draws_from_the_nucleus_of_the_k_best_as_a_sorted_cut_does():
    """Top-k then top-p: the k best, cut by the same bisection floor as top-p alone, are the best-first set a
    sort's running sum cuts, and each draw is the inverse-CDF pick over them (a row with fewer than k tokens left
    included)."""
    from keras import ops

    from pipeline.decoding import NEG_INF, Sampling

    rng = np.random.default_rng(8)
    rows, vocab, k, top_p = 2000, 300, 20, 0.8
    logits = (rng.normal(size=(rows, vocab)) * rng.choice([0.3, 1.0, 4.0], (rows, 1))).astype("float32")
    logits[:, [3, 9]] = NEG_INF
    logits[0, 3:] = NEG_INF                                     # three tokens left
    uniforms = rng.random((rows, 1), dtype=np.float32)
    draws = np.asarray(ops.convert_to_numpy(Sampling(ops.convert_to_tensor(uniforms), top_k=k, top_p=top_p)
                                            .next_token(ops.convert_to_tensor(logits), 0)))
    order = np.argsort(-logits, axis=1, kind="stable")[:, :k]
    best = np.take_along_axis(logits, order, axis=1)
    weights = np.where(best > NEG_INF, np.exp(best - best[:, :1]), 0.0)
    kept = np.where(running_sum_cut(weights, top_p), weights, 0.0)
    running = np.cumsum(kept, axis=1)
    threshold = uniforms * running[:, -1:]
    expected = order[np.arange(rows), np.argmax((running > threshold) & (kept > 0), axis=1)]
    clear = np.abs(running - threshold).min(1) > 1e-5 * running[:, -1]        # no boundary within rounding
    assert clear.mean() > 0.99 and np.array_equal(draws[clear], expected[clear])
    assert all(draw in order[row][kept[row] > 0] for row, draw in enumerate(draws))  # every draw in its nucleus
    assert draws[0] in (0, 1, 2) and len(np.unique((kept > 0).sum(1))) > 5


def test_draws_never_pick_a_zero_weight_token_even_where_the_running_total_steps_over_one(monkeypatch):
    """XLA computes a long cumulative sum as a parallel scan, not a left-to-right running total: across a run of
    zero weights it may step up or down by a rounding error, so "the first column past the threshold" could be
    a masked token. Here the running total steps up at every odd column, masked or not: no draw, in
    vocabulary order (temperature, top-p) or sorted (top-k), picks a masked token."""
    from keras import ops

    import pipeline.decoding as decoding

    exact = ops.cumsum

    def stepping(x, axis=-1):
        total = exact(x, axis=axis)
        odd = ops.cast(ops.arange(ops.shape(x)[-1]) % 2, x.dtype)
        return total + 1e-3 * total[:, -1:] * odd

    rng = np.random.default_rng(11)
    rows, vocab = 512, 1000
    logits = rng.normal(size=(rows, vocab)).astype("float32")
    masked = rng.random((rows, vocab)) < 0.9
    logits[masked] = decoding.NEG_INF
    logits[:, 0] = 0.0                                  # every row has a token to draw
    masked[:, 0] = False
    uniforms = ops.convert_to_tensor(rng.random((rows, 1), dtype=np.float32))
    monkeypatch.setattr(decoding.ops, "cumsum", stepping)
    for options in ({}, {"top_p": 0.9}, {"top_k": 50}):
        picks = np.asarray(ops.convert_to_numpy(decoding.Sampling(uniforms, **options).next_token(
            ops.convert_to_tensor(logits), 0)))
        assert not masked[np.arange(rows), picks].any(), options


@pytest.fixture(scope="module")
def valid_source(trained_tiny):
    source, _ = load_split(prepared_path(trained_tiny), "valid")
    assert len(source) >= 200
    return source[:200]


@pytest.fixture(scope="module")
def decoded(trained_tiny, valid_source, tmp_path_factory):
    """backend -> decode_everything's results there (each backend computed once, when first asked)."""
    results: dict[str, dict[str, np.ndarray]] = {}

    def on(backend: str) -> dict[str, np.ndarray]:
        if backend not in results:
            if backend == "tensorflow":
                results[backend] = decode_everything(run_path(trained_tiny), valid_source)
            else:
                tmp = tmp_path_factory.mktemp(f"decode-{backend}")
                np.save(tmp / "source.npy", valid_source)
                env = {**os.environ, "KERAS_BACKEND": backend, "PYTHONPATH": str(ROOT)}
                worker = subprocess.run([sys.executable, __file__, str(run_path(trained_tiny)), str(tmp / "source.npy"),
                                         str(tmp / "out.npz")], capture_output=True, text=True, env=env, timeout=600)
                assert worker.returncode == 0, worker.stderr[-3000:]
                assert f"backend {backend}" in worker.stdout
                results[backend] = dict(np.load(tmp / "out.npz"))
        return results[backend]
    return on


@pytest.fixture(scope="module", params=BACKENDS)
def results(request, decoded):
    return request.param, decoded(request.param)


def test_cached_greedy_equals_full_recompute_on_200_validation_sentences(results):
    _, out = results
    assert out["greedy"].shape == (200, STEPS)
    assert np.array_equal(out["greedy"], out["full_recompute"])


def test_beam_search_with_one_beam_equals_greedy(results):
    _, out = results
    assert np.array_equal(out["beam_1"], out["greedy"])


def test_a_sentence_decodes_the_same_alone_or_in_a_batch(results):
    _, out = results
    assert np.array_equal(out["greedy_alone"], out["greedy"][out["few_rows"]])
    assert np.array_equal(out["beam_4_alone"], out["beam_4"])


def test_sampling_is_seeded_and_top_k_one_is_greedy(results):
    _, out = results
    assert np.array_equal(out["sample"], out["sample_again"])
    assert (out["sample"] != out["sample_seed_8"]).any(axis=1).mean() > 0.5
    assert (out["sample"] != out["greedy"]).any(axis=1).mean() > 0.5
    assert np.array_equal(out["top_k_1"], out["greedy"])


def test_unk_is_never_generated_by_any_strategy(results):
    _, out = results
    unk = int(out["unk_id"])
    assert (out["unk_allowed"][:, 0] == unk).all()              # the biased model wants [UNK] first
    for name in UNK_STRATEGIES:
        assert not (out[f"unk_banned_{name}"] == unk).any(), name


def test_every_output_ends_once_and_then_pads(results):
    _, out = results
    start, end = int(out["start_id"]), int(out["end_id"])
    for name, ids in out.items():
        if ids.ndim != 2:
            continue
        assert (ids == end).sum(axis=1).tolist() == [1] * len(ids), name      # the limit forces [end]
        after_end = np.cumsum(ids == end, axis=1) - (ids == end) > 0
        assert (ids[after_end] == 0).all() and (ids[~after_end] != 0).all(), name
        assert not (ids == start).any(), name


def test_buckets_avoid_recompiling(results):
    backend, out = results
    if backend == "torch":
        pytest.skip("PyTorch runs the loop eagerly: nothing is compiled")
    assert int(out["new_traces"]) == 0


def test_programs_readied_ahead_decode_the_same_and_trace_nothing_after(results):
    backend, out = results
    assert (out["greedy_prepared"] == out["greedy"]).all() and (out["beam_4_prepared"] == out["beam_4"]).all()
    if backend == "jax":    # compiled side by side: two greedy buckets, one beam bucket, then none left to compile
        assert out["prepared"].tolist() == [2, 1, 0] and int(out["prepared_new_traces"]) == 0, out["prepared"]
    else:                   # TensorFlow traces once per option set and cache length; PyTorch runs eagerly
        assert out["prepared"].tolist() == [0, 0, 0]
    readied = out["engine_readied"].tolist()
    assert len(readied) == 3, readied                  # each of the three translations planned its batches
    if backend == "jax":                               # and then traced nothing it had not readied
        assert min(readied) > 0 and int(out["engine_traces"]) == sum(readied), (readied, out["engine_traces"])


def float_ties(model, start_id: int, source, a: np.ndarray, b: np.ndarray) -> list[tuple[int, int, float]]:
    """Rows where greedy ids `a` and `b` differ: (row, first differing step, logit gap between the two
    tokens chosen there, from the full teacher-forced model on their common prefix)."""
    ties = []
    for row in np.flatnonzero((a != b).any(axis=1)):
        step = int(np.argmax(a[row] != b[row]))
        prefix = np.array([[start_id, *a[row, :step]]], dtype=np.int32)
        logits = np.asarray(model({"encoder_inputs": source[row:row + 1], "decoder_inputs": prefix},
                                  training=False))[0, -1]
        ties.append((int(row), step, float(abs(logits[a[row, step]] - logits[b[row, step]]))))
    return ties


def assert_only_float_ties(tiny_engine, source, a, b, what: str) -> None:
    """`a` == `b`, except in a few rows whose first difference is a near-tie of two logits (reported)."""
    ties = float_ties(tiny_engine.model, tiny_engine.start_id, source, a, b)
    if ties:
        warnings.warn(f"{what}: {len(ties)} of {len(a)} greedy outputs differ, each first at a float tie "
                      f"(row, step, logit gap): {ties}")
    assert len(ties) <= len(a) // 20, ties
    assert all(gap < 1e-3 for _, _, gap in ties), ties


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_one_keras_file_gives_the_same_greedy_ids_on_tensorflow_and_jax(decoded, tiny_engine, valid_source):
    assert_only_float_ties(tiny_engine, valid_source, decoded("tensorflow")["greedy"], decoded("jax")["greedy"],
                           "TensorFlow vs JAX")


def test_xla_compiles_the_whole_loop_and_decodes_as_graph_mode(tiny_engine, valid_source):
    import tensorflow as tf

    model, limits = tiny_engine.model, np.full(len(valid_source), STEPS, dtype=np.int32)
    loop = tf.function(lambda s, m: decode_loop(model, s, m, Greedy(), tiny_engine.start_id, tiny_engine.end_id, 16),
                       jit_compile=True)
    hlo = loop.experimental_get_compiler_ir(valid_source[:4], limits[:4])(stage="hlo")
    assert "while" in hlo                          # one XLA program, the loop inside it
    xla = compile_decoder(model, tiny_engine.start_id, tiny_engine.end_id, jit_compile=True,
                          banned_id=tiny_engine.banned_id)
    graph = tiny_engine.decoder
    assert_only_float_ties(tiny_engine, valid_source, graph(valid_source, limits), xla(valid_source, limits),
                           "TensorFlow graph vs XLA")
    few = valid_source[:FEW]
    assert np.array_equal(graph(few, limits[:FEW], beams=4, alpha=0.6), xla(few, limits[:FEW], beams=4, alpha=0.6))


def test_beam_one_equals_greedy_and_beam_four_decodes(tiny_engine):
    greedy = tiny_engine.translate(SENTENCES, beam=1)
    assert tiny_engine.translate(SENTENCES, beam=1, length_penalty=0.6) == greedy
    beam = tiny_engine.translate(SENTENCES, beam=4)
    assert len(beam) == len(SENTENCES) and all(isinstance(s, str) and s for s in beam)
    assert not any(marker in s for s in greedy + beam for marker in ("[start]", "[end]"))


def test_unk_is_never_generated_unless_allowed(trained_tiny):
    """The run's `decode.ban_unk` reaches the engine's decoder, both ways (each strategy's ban on every backend:
    test_unk_is_never_generated_by_any_strategy)."""
    from pipeline.serializable import load_model
    from pipeline.rundir import load_run_config
    from pipeline.vectorizers import load_vectorizers
    model = load_model(run_path(trained_tiny))
    unk = 1
    bias = np.array(model.output_bias)
    bias[unk] = 100.0                       # the model now prefers [UNK] everywhere
    model.output_bias.assign(bias)
    vectorizers = load_vectorizers(run_path(trained_tiny) / "vectorizers.pkl")
    config = load_run_config(run_path(trained_tiny))
    assert unk == vectorizers.italian.unk_id and vectorizers.italian_vocabulary[unk] in ("[UNK]", "<unk>")
    banned = KerasEngine(model, vectorizers, config).translate(SENTENCES, beam=1)
    assert not any("[UNK]" in s for s in banned), banned
    config.decode.ban_unk = False
    allowed = KerasEngine(model, vectorizers, config).translate(SENTENCES, beam=1)
    assert all(s.startswith("[UNK]") for s in allowed), allowed


def test_sampling_through_the_python_api(tiny_engine):
    greedy = tiny_engine.translate(SENTENCES, beam=1)
    assert tiny_engine.translate(SENTENCES, sample=True, top_k=1, seed=3) == greedy
    sampled = tiny_engine.translate(SENTENCES * 3, sample=True, temperature=1.5, seed=3, batch_size=4)
    assert sampled == tiny_engine.translate(SENTENCES * 3, sample=True, temperature=1.5, seed=3, batch_size=4)
    assert sampled != tiny_engine.translate(SENTENCES * 3, sample=True, temperature=1.5, seed=4, batch_size=4)
    assert all(isinstance(s, str) and s for s in sampled)


@pytest.mark.parametrize("options, message", [
    (dict(sample=True, beam=4), "sampling draws one hypothesis per sentence: beam must be 1, got 4"),
    (dict(temperature=0.7), "temperature applies only when sampling (sample=True, --sample)"),
    (dict(sample=True, temperature=0), "temperature must be > 0, got 0.0"),
    (dict(sample=True, top_k=-1), "top_k must be >= 0 (0: no cut), got -1"),
    (dict(sample=True, top_p=1.5), "top_p must be in (0, 1] (1: no cut), got 1.5"),
])
def test_bad_decoding_options_name_the_option(tiny_engine, options, message):
    with pytest.raises(ValueError) as info:
        tiny_engine.translate(["Hi."], **options)
    assert str(info.value) == message


@pytest.mark.parametrize("beam", [1, 4])
def test_batch_gives_the_same_translation_as_alone(tiny_engine, beam):
    together = tiny_engine.translate(SENTENCES, beam=beam, batch_size=4)
    alone = [tiny_engine.translate([s], beam=beam)[0] for s in SENTENCES]
    assert together == alone


def test_bad_inputs(tiny_engine):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = tiny_engine.translate(["", "   ", "Zyxwv qwrtp blorf?", "word " * 40])
    assert out[:2] == ["", ""] and isinstance(out[2], str) and isinstance(out[3], str)
    assert not [w for w in caught if "truncated" in str(w.message)]     # cut into pieces instead (test_splitting.py)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tiny_engine.translate_sentences(["word " * 40])
    messages = [str(w.message) for w in caught if "truncated" in str(w.message)]
    assert messages == [f"1 input sentence(s) longer than the model's maximum of {tiny_engine.max_input_length} "
                        "tokens were truncated"]
    assert tiny_engine.translate([]) == []
    with pytest.raises(ValueError, match="beam must be >= 1, got 0"):
        tiny_engine.translate(["Hi."], beam=0)


@pytest.mark.parametrize("damage, message", [
    (lambda run: (run / "vectorizers.pkl").unlink(), "vectorizer file {run}/vectorizers.pkl: not found"),
    (lambda run: (run / "vectorizers.pkl").write_bytes(b"\x80\x04garbage"), "vectorizer file {run}/vectorizers.pkl: corrupt"),
    (lambda run: (run / "best.keras").write_bytes(b"not a zip"), "model file {run}/best.keras: not a complete .keras file"),
    (lambda run: (run / "best.keras").unlink(), "model file {run}/best.keras: not found"),
    (lambda run: (run / "config.yaml").write_text("model: [\n"), "run file {run}/config.yaml: unreadable"),
])
def test_damaged_run_directory_names_the_file(trained_tiny, tmp_path, damage, message):
    import shutil
    run = tmp_path / "run"
    shutil.copytree(run_path(trained_tiny), run, ignore=OTHERS_TEMPORARY)
    damage(run)
    with pytest.raises((RunDirectoryError, VectorizerFileError, ValueError, FileNotFoundError)) as info:
        KerasEngine.from_run(run)
    assert message.format(run=run) in str(info.value)


def translate_cli(*args, stdin=None):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "translate.py"), *args], input=stdin,
                          capture_output=True, text=True, timeout=300)


def test_cli_arguments_and_stdin(trained_tiny, tiny_engine):
    run = str(run_path(trained_tiny))
    expected = tiny_engine.translate(SENTENCES[:2], beam=2)
    result = translate_cli("--run", run, "--beam", "2", *SENTENCES[:2])
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected
    # --input/--output files: tests/test_splitting.py and tests/test_cli_files.py
    result = translate_cli("--run", run, "--beam", "2", stdin="\n".join(SENTENCES[:2]) + "\n")
    assert result.stdout.splitlines() == expected


def test_cli_samples_with_a_seed(trained_tiny, tiny_engine):
    run = str(run_path(trained_tiny))
    flags = ["--sample", "--temperature", "1.5", "--top-p", "0.95", "--seed", "5"]
    result = translate_cli("--run", run, *flags, *SENTENCES)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == tiny_engine.translate(SENTENCES, sample=True, temperature=1.5, top_p=0.95,
                                                              seed=5)
    result = translate_cli("--run", run, "--top-p", "0.9", "Hi.")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == "error: top_p applies only when sampling (sample=True, --sample)"


def test_cli_rejects_non_utf8_input_naming_the_line(trained_tiny, tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes(b"Hello.\nBad \xff line\n")
    result = translate_cli("--run", str(run_path(trained_tiny)), "--input", str(source))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"error: input file {source} line 2: not valid UTF-8"


def test_package_exposes_the_python_api(trained_tiny):
    import pipeline
    assert pipeline.KerasEngine is KerasEngine
    assert pipeline.KerasEngine.from_run(run_path(trained_tiny)).translate([""]) == [""]


if __name__ == "__main__":          # the worker for one other backend (see the module docstring)
    import keras

    run_dir, source_file, out_file = sys.argv[1:4]
    np.savez(out_file, **decode_everything(run_dir, np.load(source_file)))
    print("backend", keras.backend.backend())
