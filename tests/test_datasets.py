"""Token-based batches of a few fixed shapes, padded rows, and the weights of gradient accumulation."""
import numpy as np
import pytest
import keras

from pipeline.config import ConfigError, load_config
from pipeline.datasets import (ArrayBatches, Batching, batch_plan, batch_shape, batch_shapes, bucket_boundaries,
                               gather_batch, group_weights, load_split, make_dataset, steps_per_epoch)

from conftest import ROOT
from pipeline.rundir import prepared_path


@pytest.fixture(scope="module")
def arrays(prepared_tiny):
    config, _ = prepared_tiny
    return load_split(prepared_path(config), "train"), load_split(prepared_path(config), "valid")


def test_bucket_boundaries_are_few_shared_widths_and_the_last_fits_every_pair(arrays):
    (en, it), _ = arrays
    for buckets, multiple in ((1, 4), (6, 1), (12, 2), (12, 8)):
        bounds = bucket_boundaries(en, it, buckets, multiple)
        assert len(bounds) <= buckets and list(bounds) == sorted(set(bounds)) and bounds[-1] == 21
        assert all(b % multiple == 0 for b in bounds[:-1])
    assert bucket_boundaries(en, it, 1) == (21,)
    with pytest.raises(ValueError, match="buckets must be in 1..12, got 13"):
        bucket_boundaries(en, it, 13)


def test_token_batches_have_fixed_rows_per_bucket_and_at_most_12_shapes(arrays):
    (en, it), (ven, vit) = arrays
    batching = Batching.for_data(en, it, batch_tokens=1024, buckets=12, bucket_width=1)
    plan = batch_plan(en, it, batching, seed=0, epoch=0)
    assert len(plan) == steps_per_epoch(en, it, batching)
    assert sorted(np.concatenate(plan).tolist()) == list(range(len(en)))
    shapes = batch_shapes(en, it, batching) | batch_shapes(ven, vit, batching)
    assert len(shapes) <= 12
    for rows, src, tgt in shapes:   # the token budget counts rows x the wider side, rows a multiple of 8
        assert rows * max(src, tgt) <= 1024 < (rows + 8) * max(src, tgt) and rows % 8 == 0
    assert {(batching.rows(w), min(w, 20), w) for w in batching.boundaries} >= shapes
    assert Batching((21,), batch_size=50, batch_tokens=0).rows(21) == 50   # sentences when no token budget


def test_padded_rows_are_empty_and_tf_data_equals_pydataset_with_weights(arrays):
    _, (en, it) = arrays
    batching = Batching.for_data(en, it, batch_tokens=700, buckets=3, bucket_width=2, accumulate_steps=3)
    plan = batch_plan(en, it, batching, seed=5, epoch=1)
    assert len(plan) % 3 == 0 and len(plan) == steps_per_epoch(en, it, batching)
    tf_batches = list(make_dataset((en, it), batching, seed=5, epochs=[1], skip=2).as_numpy_iterator())
    py = ArrayBatches(en, it, batching, seed=5, first_epoch=1, skip=2)
    weights = group_weights(it, plan, 3)
    assert np.allclose(weights.reshape(-1, 3).sum(axis=1), 3.0)
    assert len(tf_batches) == len(py) == len(plan) - 2
    seen = 0
    for i, (x, y, w) in enumerate(tf_batches):
        px, py_, pw = py[i]
        assert all(np.array_equal(a, b) for a, b in zip(keras.tree.flatten((x, y, w)), keras.tree.flatten((px, py_, pw))))
        real = len(plan[i + 2])
        assert w.shape == (len(y), 1) and np.all(w == weights[i + 2])
        assert not y[real:].any() and not x["encoder_inputs"][real:].any() and not x["decoder_inputs"][real:].any()
        assert (y[:real] != 0).any(axis=1).all()
        seen += real
    assert seen == len(en) - sum(len(rows) for rows in plan[:2])


def test_group_weights_make_micro_batch_means_sum_to_the_union_mean():
    italian = np.array([[2, 5, 3, 0], [2, 5, 6, 3], [2, 3, 0, 0], [2, 7, 7, 3]])
    plan = [np.array([0]), np.array([1, 2]), np.array([3]), np.zeros(0, np.int64)]   # 2, 4, 3 and 0 tokens
    assert np.allclose(group_weights(italian, plan, 2), [2 * 2 / 6, 2 * 4 / 6, 2 * 3 / 3, 0.0])
    means = np.array([1.0, 2.0])            # token means of the first two batches; the optimizer averages over k
    assert np.dot(group_weights(italian, plan[:2], 2), means) / 2 == pytest.approx((2 * 1.0 + 4 * 2.0) / 6)


@pytest.mark.parametrize("override, message", [
    ("train.batch_tokens=-1", "config key 'train.batch_tokens': must be >= 0, got -1"),
    ("train.accumulate_steps=0", "config key 'train.accumulate_steps': must be > 0, got 0"),
    ("train.buckets=13", "config key 'train.buckets': at most 12 batch widths, got 13"),
    ("train.buckets=0", "config key 'train.buckets': must be > 0, got 0"),
    ("train.accumulate_steps=2 train.distribute=mirrored",
     "config key 'train.accumulate_steps': needs train.distribute=none, got 2 with train.distribute=mirrored"),
])
def test_batching_keys_are_validated_in_one_line(override, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_config(ROOT / "configs" / "tiny.yaml", override.split())


def test_pydataset_serves_its_first_epoch_and_skip_through_keras_epoch_iterator(arrays):
    """Keras's JAX and PyTorch trainers call the dataset's `on_epoch_end` once before training
    (`EpochIterator.reset`): the first epoch served must still be `first_epoch` from batch `skip`."""
    from keras.src.trainers.epoch_iterator import EpochIterator

    _, (en, it) = arrays
    batching = Batching.for_data(en, it, batch_size=64, buckets=3)
    plans = [batch_plan(en, it, batching, seed=7, epoch=e) for e in (1, 2)]
    iterator = EpochIterator(x=ArrayBatches(en, it, batching, seed=7, first_epoch=1, skip=3), shuffle=False)
    iterator.reset()                                   # what fit() does before its first epoch
    for plan, skip in zip(plans, (3, 0)):
        served = [batch for _, _, batches in iterator for batch in batches][:len(plan) - skip]
        for (x, y), rows in zip(served, plan[skip:]):
            shape = batch_shape(en, it, rows, batching)
            assert np.array_equal(y, gather_batch(en, it, rows, shape)[1])


def test_validation_feeder_serves_the_same_batches_every_pass(arrays):
    """Keras re-begins the validation data after each epoch: a `fixed` feeder must not re-plan it
    (a new grouping would move val_loss, and with it best.keras, with the weights unchanged)."""
    _, (en, it) = arrays
    batching = Batching.for_data(en, it, batch_size=64, buckets=3)
    fixed, training = (ArrayBatches(en, it, batching, seed=7, reshuffle=r) for r in (False, True))
    first = [fixed[i][1] for i in range(len(fixed))]
    for dataset in (fixed, training):
        dataset.on_epoch_begin()
        dataset.on_epoch_begin()                        # a second pass
    assert all(np.array_equal(a, fixed[i][1]) for i, a in enumerate(first))
    assert not all(np.array_equal(a, training[i][1]) for i, a in enumerate(first[:len(training)]))
