"""Several corpora mixed by weight, held-out exclusion, and fine-tuning a trained run (issue 23)."""
import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from pipeline.config import ConfigError, load_config
from pipeline.datasets import (ArrayBatches, Batching, batch_plan, load_split, make_dataset, mixture,
                               steps_per_epoch)
from pipeline.finetune import load_child_config, load_parent_weights
from pipeline.prepare import prepare
from pipeline.rundir import RunDir, prepared_path, run_path
from pipeline.shards import corpus_rows
from pipeline.text import ExclusionList, grouping_key

from conftest import ROOT, SMALL_MODEL

SAMPLE = ROOT / "data" / "ita-eng-sample.txt.gz"
TINY = ROOT / "configs" / "tiny.yaml"


def _sample_lines() -> list[str]:
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()


def test_corpora_are_translated_in_one_call_and_each_scored_on_its_own_sentences(corpora, tmp_path):
    from pipeline.evaluation import score_corpora, split_sets

    config = _mixed_run_config(corpora, tmp_path / "run")
    sets = split_sets(prepared_path(config), "valid")
    answers = {source: refs for evalset in sets.values() for source, refs in zip(evalset.sources, evalset.references)}
    calls = []

    class Oracle:                   # answers each source with its own reference: 100 BLEU where scored aligned
        def __init__(self):
            self.config = config

        def translate(self, sources, beam, length_penalty, progress):
            calls.append((len(sources), beam))
            return [answers[source][0] for source in sources]

    scores = score_corpora(Oracle(), prepared_path(config), "valid", max_sentences=15, beam=3)
    expected = {name: min(15, len(evalset.sources)) for name, evalset in sets.items()}
    assert len(expected) == 2 and calls == [(sum(expected.values()), 3)]
    assert {name: (r["sentences"], r["bleu"], r["chrf"]) for name, r in scores.items()} == {
        name: (count, 100.0, 100.0) for name, count in expected.items()}


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """Two corpora from the bundled sample: `phrases` (lines 0-5999) and `more` (lines 6000-8999), plus the
    phrases prepared alone, for comparison. `more` also holds 150 of phrases' English sentences with new
    Italian sides, some of which phrases holds out."""
    lines = _sample_lines()
    root = tmp_path_factory.mktemp("corpora")
    phrases, more = root / "phrases.tsv", root / "more.txt.gz"
    phrases.write_text("\n".join(lines[:6000]) + "\n", encoding="utf-8")
    borrowed = [f"{line.split(chr(9))[0]}\tTraduzione alternativa numero {i}." for i, line in enumerate(lines[:6000:40])]
    with gzip.open(more, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines[6000:9000] + borrowed) + "\n")
    corpora = f"data.corpora=[{{path: {phrases}}}, {{path: {more}, weight: 2.5}}]"
    mixed = load_config(TINY, [corpora, "data.valid_fraction=0.05", "data.test_fraction=0.05"], str(root / "mixed"))
    alone = load_config(TINY, ["data.valid_fraction=0.05", "data.test_fraction=0.05"], str(root / "alone"))
    return {"mixed": mixed, "mixed_report": prepare(mixed, progress=False), "alone": alone,
            "alone_report": prepare(alone, phrases, progress=False), "phrases": phrases, "more": more}


@pytest.mark.parametrize("override, message", [
    ("data.corpora=[{path: a.tsv, weight: -1}]", r"'data.corpora\[0\].weight': must be >= 0"),
    ("data.corpora=[{path: a.tsv, weight: 0}]", "at least one corpus needs a weight > 0"),
    ("data.corpora=[a.tsv, b/a.txt]", "names must differ, got a more than once"),
    ("data.corpora=[{path: a.tsv, name: 'bad name'}]", r"'data.corpora\[0\].name': expected letters"),
    ("data.corpora=[{path: [a, b, c]}]", "a list of two line-aligned files"),
    ("data.corpora=[{file: a.tsv}]", r"'data.corpora\[0\].file' is unknown; allowed here: path, weight, name"),
    ("data.exclude=[3]", r"'data.exclude\[0\]': expected str, got int"),
])
def test_corpus_entries_are_validated_in_one_line(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(TINY, [override])


def test_each_corpus_is_split_as_if_prepared_alone(corpora):
    mixed, alone = prepared_path(corpora["mixed"]), prepared_path(corpora["alone"])
    for split in ("valid", "test"):
        assert (mixed / f"{split}.phrases.tsv").read_bytes() == (alone / f"{split}.tsv").read_bytes()
        both = (mixed / f"{split}.phrases.tsv").read_text() + (mixed / f"{split}.more.tsv").read_text()
        assert (mixed / f"{split}.tsv").read_text() == both
    rows = corpus_rows(mixed, "train")
    assert [name for name, _, _ in rows] == ["phrases", "more"]
    from pipeline.vectorizers import load_vectorizers      # (each prepare fitted its own tokenizers)

    def decode(prepared, ids):
        english = load_vectorizers(prepared / "vectorizers.pkl").english
        return [english.decode(row) for row in ids]
    start, stop = rows[0][1], rows[0][2]
    assert decode(mixed, load_split(mixed, "train")[0][start:stop]) == decode(alone, np.asarray(load_split(alone, "train")[0]))


def test_no_english_sentence_held_out_in_one_corpus_is_trained_on_in_another(corpora):
    report, mixed = corpora["mixed_report"], prepared_path(corpora["mixed"])
    held_out = {grouping_key(line.split("\t")[0]) for split in ("valid", "test")
                for line in (mixed / f"{split}.tsv").read_text().splitlines()}
    assert report["dropped"]["held_out_elsewhere"] == sum(c["dropped"]["held_out_elsewhere"] for c in report["corpora"])
    # every kept training pair's English sentence, decoded from the ids, is absent from the held-out splits
    from pipeline.vectorizers import load_vectorizers
    vectorizers = load_vectorizers(mixed / "vectorizers.pkl")
    english, _ = load_split(mixed, "train")
    trained = {grouping_key(vectorizers.english.decode(ids)) for ids in np.asarray(english)}
    assert not trained & held_out


def test_a_training_pair_whose_source_another_corpus_holds_out_is_dropped():
    from collections import Counter

    from pipeline.prepare import Scan, drop_held_out_elsewhere

    def scan(groups, splits):
        return Scan(len(groups), Counter(), np.array(groups, np.uint64), np.ones(len(groups), bool),
                    np.array(splits, np.int8))
    first, second = scan([1, 2, 3, 4], [0, 1, 2, 0]), scan([2, 3, 4, 5, 1], [0, 0, 0, 2, 0])
    drop_held_out_elsewhere([first, second])
    assert second.keep.tolist() == [False, False, True, True, True]      # 2 and 3 are held out in first
    assert first.keep.tolist() == [True, True, True, True]               # 5 is held out in second only
    assert (first.dropped["held_out_elsewhere"], second.dropped["held_out_elsewhere"]) == (0, 2)


def test_report_gives_each_corpus_its_drops_sizes_and_too_long_share(corpora, tmp_path):
    report = corpora["mixed_report"]
    phrases, more = report["corpora"]
    assert (phrases["name"], phrases["weight"], more["weight"]) == ("phrases", 1.0, 2.5)
    assert phrases["lines"] == 6000 and more["lines"] == 3150
    for key in ("pairs_kept",):
        assert report[key] == phrases[key] + more[key]
    assert report["split_sizes"] == {s: phrases["split_sizes"][s] + more["split_sizes"][s] for s in report["split_sizes"]}
    # a max_length that cuts the longer sentences is reported per corpus, with a warning naming the corpus
    config = load_config(TINY, [f"data.corpora=[{{path: {corpora['phrases']}}}, {{path: {corpora['more']}}}]",
                                "data.max_length=6"], str(tmp_path))
    short = prepare(config, progress=False)
    for entry in short["corpora"]:
        kept = entry["pairs_kept"]
        assert entry["too_long_share"] == pytest.approx(entry["dropped"]["too_long"] / (kept + entry["dropped"]["too_long"]),
                                                        abs=1e-6)
        assert entry["too_long_share"] > 0.01
    assert any("data.max_length=6 drops" in w and "corpus phrases" in w for w in short["warnings"])


def test_weights_give_the_documented_rates_every_epoch(corpora):
    prepared = prepared_path(corpora["mixed"])
    english, italian = load_split(prepared, "train")
    rows = corpus_rows(prepared, "train")
    sizes = {name: stop - start for name, start, stop in rows}
    for weights in ({"phrases": 0.5, "more": 2.5}, {"phrases": 1.0, "more": 0.0}, {"phrases": 0.3, "more": 1.7}):
        batching = Batching.for_data(english, italian, batch_size=32, buckets=4, mixture=mixture(rows, weights))
        seen = []
        for epoch in range(3):
            plan = batch_plan(english, italian, batching, seed=7, epoch=epoch)
            assert len(plan) == steps_per_epoch(english, italian, batching)
            flat = np.concatenate(plan)
            counts = {name: int(((flat >= a) & (flat < b)).sum()) for name, a, b in rows}
            for name, count in counts.items():      # round(w x n) per length bucket: within one row per bucket
                assert abs(count - weights[name] * sizes[name]) <= len(batching.boundaries), (weights, name, count)
            seen.append(flat)
        if weights["more"] == 0:
            assert not any(((s >= rows[1][1]) & (s < rows[1][2])).any() for s in seen)
        if 0 < weights["phrases"] < 1:              # a different sample of the corpus each epoch
            firsts = [set(s[s < rows[0][2]].tolist()) for s in seen]
            assert firsts[0] != firsts[1]
        if weights["more"] == 2.5:                  # every pair at least twice, none more than three times
            more = np.bincount(seen[0][seen[0] >= rows[1][1]] - rows[1][1], minlength=sizes["more"])
            assert more.min() == 2 and more.max() == 3


def test_equal_weights_are_exactly_the_plain_plan(corpora):
    prepared = prepared_path(corpora["mixed"])
    english, italian = load_split(prepared, "train")
    rows = corpus_rows(prepared, "train")
    assert mixture(rows, {"phrases": 1, "more": 1}) == ()
    with pytest.raises(ValueError, match="no weight for corpus more"):
        mixture(rows, {"phrases": 1})
    plain = Batching.for_data(english, italian, batch_size=32, buckets=4)
    mixed = Batching.for_data(english, italian, batch_size=32, buckets=4,
                              mixture=tuple((a, b, 1.0) for _, a, b in rows))
    for a, b in zip(batch_plan(english, italian, plain, 3, 1), batch_plan(english, italian, mixed, 3, 1)):
        assert np.array_equal(a, b)


def test_tf_data_and_pydataset_serve_the_same_mixed_batches(corpora):
    prepared = prepared_path(corpora["mixed"])
    english, italian = load_split(prepared, "train")
    batching = Batching.for_data(english, italian, batch_size=64, buckets=4,
                                 mixture=mixture(corpus_rows(prepared, "train"), {"phrases": 0.4, "more": 3.0}))
    served = list(make_dataset((english, italian), batching, seed=5, epochs=[2]).take(6))
    batches = ArrayBatches(english, italian, batching, seed=5, first_epoch=2)
    for index, (inputs, targets) in enumerate(served):
        mine, theirs = batches[index]
        assert np.array_equal(inputs["encoder_inputs"].numpy(), mine["encoder_inputs"])
        assert np.array_equal(targets.numpy(), theirs)


def test_exclusion_matches_either_side_after_normalising(tmp_path):
    held_out = tmp_path / "test.tsv.gz"
    with gzip.open(held_out, "wt", encoding="utf-8") as handle:
        handle.write("Where is  the STATION?\tDov'è la stazione?\n\nCafe\u0301 au lait.\n")
    exclusion = ExclusionList([held_out])
    assert len(exclusion) == 3
    assert exclusion.excludes("where is the station?", "Something else.")          # case and spaces folded
    assert exclusion.excludes("Another sentence.", "DOV'È LA STAZIONE?")           # the Italian side, casefolded
    assert exclusion.excludes("Café au lait.", "x")                                # NFC
    assert not exclusion.excludes("Where is the station", "Dov'è la stazione")    # a different sentence
    with pytest.raises(ValueError, match="exclusion file .*missing.txt: not found"):
        ExclusionList([tmp_path / "missing.txt"])
    (tmp_path / "latin1.txt").write_bytes(b"ok\ncaf\xe9\n")
    with pytest.raises(ValueError, match=r"exclusion file .*latin1.txt line 2: not UTF-8"):
        ExclusionList([tmp_path / "latin1.txt"])


def test_prepare_exclude_drops_and_counts_pairs_of_held_out_sentences(corpora, tmp_path):
    lines = corpora["phrases"].read_text(encoding="utf-8").splitlines()
    english = [line.split("\t")[0] for line in lines[:300]]
    italian = [line.split("\t")[1] for line in lines[300:400]]
    (tmp_path / "held_out.en").write_text("\n".join(s.upper() for s in english) + "\n", encoding="utf-8")
    (tmp_path / "held_out.it").write_text("\n".join(italian) + "\n", encoding="utf-8")
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "prepare.py"), "--config", str(TINY),
                             "--workdir", str(tmp_path / "w"), "--input", str(corpora["phrases"]), "--quiet",
                             "--exclude", str(tmp_path / "held_out.en"), str(tmp_path / "held_out.it")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads((tmp_path / "w" / "prepared" / "report.json").read_text())
    keys = {grouping_key(s) for s in english} | {grouping_key(s) for s in italian}
    expected = sum(1 for line in set(lines) if grouping_key(line.split("\t")[0]) in keys
                   or grouping_key(line.split("\t")[1]) in keys)
    assert report["dropped"]["excluded"] == expected > 300
    assert report["excluded_sentences"]["distinct"] == len(keys)
    kept = (tmp_path / "w" / "prepared" / "valid.tsv").read_text() + (tmp_path / "w" / "prepared" / "test.tsv").read_text()
    assert not any(grouping_key(line.split("\t")[0]) in keys for line in kept.splitlines())
    assert "excluded" in result.stdout


def _mixed_run_config(corpora, workdir, *extra):
    prepared = workdir / "prepared"
    if not prepared.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        os.symlink(prepared_path(corpora["mixed"]), prepared)
    names = f"data.corpora=[{{path: {corpora['phrases']}}}, {{path: {corpora['more']}, weight: 2.5}}]"
    return load_config(TINY, SMALL_MODEL + [names, "data.valid_fraction=0.05", "data.test_fraction=0.05",
                                            "train.epochs=1", "train.max_steps=30", *extra], str(workdir))


def test_training_reports_validation_loss_and_bleu_per_corpus(corpora, tmp_path):
    from pipeline.training import train

    config = _mixed_run_config(corpora, tmp_path / "run", "train.final_bleu_sentences=15")
    summary = train(config, verbose=0)
    history = json.loads((tmp_path / "run" / "run" / "history.json").read_text())
    for name in ("phrases", "more"):
        assert np.isfinite(history[-1][f"val_loss_{name}"])
        assert 0 <= history[-1][f"val_masked_accuracy_{name}"] <= 1
        assert summary["best_val_loss_by_corpus"][name] == history[-1][f"val_loss_{name}"]
        assert summary["final_bleu"][name]["sentences"] == 15
        assert summary["final_bleu"][name]["bleu_signature"].startswith("nrefs:")
    from pipeline.evaluation import prepared_split_file, split_sets
    assert prepared_split_file(tmp_path / "run" / "run", "test", "more").name == "test.more.tsv"
    sets = split_sets(tmp_path / "run" / "prepared", "valid")
    rows = {name: stop - start for name, start, stop in corpus_rows(tmp_path / "run" / "prepared", "valid")}
    assert {name: s.pairs for name, s in sets.items()} == rows                 # each corpus's own pairs, all of them
    # the loss over the whole valid split lies between the corpora's (a weighted mix of them)
    low, high = sorted(history[-1][f"val_loss_{n}"] for n in ("phrases", "more"))
    assert low - 1e-4 <= history[-1]["val_loss"] <= high + 1e-4
    # each sentence is evaluated once, corpus by corpus: the overall loss and accuracy combined from the corpora's
    # are what Keras gives for all the corpora's batches evaluated together (the weights are rows and tokens)
    from pipeline.training import TrainingData
    from pipeline.rundir import RunDir
    from pipeline.serializable import load_keras_file

    feeds = TrainingData.load(config).validation_by_corpus()
    batches = [batch for feed in feeds.values() for batch in
               (list(feed) if hasattr(feed, "concatenate") else [feed[i] for i in range(len(feed))])]
    model = load_keras_file(RunDir(tmp_path / "run" / "run").checkpoint_model, "checkpoint model", compile=True)
    together = model.evaluate((batch for batch in batches), steps=len(batches), verbose=0, return_dict=True)
    assert history[-1]["val_loss"] == pytest.approx(together["loss"], rel=1e-5)
    assert history[-1]["val_masked_accuracy"] == pytest.approx(together["masked_accuracy"], abs=1e-6)
    # JAX's data parallelism pads each batch's rows to a multiple of the devices, which Keras counts too: with
    # rows that differ by bucket (token batches), that changes the corpora's weights
    import dataclasses
    from pipeline.datasets import ArrayBatches
    from pipeline.distribution import PaddedBatches
    from pipeline.training import CorpusValidation

    data = TrainingData.load(config)
    data.batching = dataclasses.replace(data.batching, batch_tokens=120)
    plain = data.validation_weights()
    data.row_multiple = 7
    weights = data.validation_weights()
    assert plain["more"][0] / plain["phrases"][0] != pytest.approx(weights["more"][0] / weights["phrases"][0])
    feeds = {name: PaddedBatches(ArrayBatches(data.valid_en[a:b], data.valid_it[a:b], data.valid_batching,
                                              config.seed, reshuffle=False), 7) for name, a, b in data.valid_corpora}
    combined = CorpusValidation(feeds, weights)
    combined.set_model(model)
    logs = {}
    combined.on_epoch_end(0, logs)
    batches = [feed[i] for feed in feeds.values() for i in range(len(feed))]
    together = model.evaluate((batch for batch in batches), steps=len(batches), verbose=0, return_dict=True)
    assert logs["val_loss"] == pytest.approx(together["loss"], rel=1e-5)
    with pytest.raises(ValueError, match="no weight for corpus more .*run scripts/prepare.py with this config"):
        bad = _mixed_run_config(corpora, tmp_path / "bad", f"data.corpora=[{{path: {corpora['phrases']}}}]")
        train(bad, verbose=0)


@pytest.fixture(scope="module")
def fine_tuned(corpora, trained_tiny, tmp_path_factory):
    """The tiny trained run fine-tuned 20 steps on the two corpora prepared with its tokenizers."""
    from pipeline.training import train

    workdir = tmp_path_factory.mktemp("fine_tuned")
    names = f"data.corpora=[{{path: {corpora['more']}, name: domain}}, {{path: {corpora['phrases']}, weight: 0.1}}]"
    overrides = [names, "train.epochs=1", "train.max_steps=20", "train.jit_compile=false", "train.batch_size=32",
                 "train.final_bleu_sentences=0", "finetune.warmup_steps=5", "finetune.peak_learning_rate=0.0002"]
    config = load_child_config(None, overrides, str(workdir), run_path(trained_tiny))   # no model section: inherited
    report = prepare(config, progress=False, vectorizers_from=run_path(trained_tiny))
    summary = train(config, verbose=0, init_from=run_path(trained_tiny))
    return config, report, summary


def test_fine_tuning_inherits_the_parent_and_records_its_lineage(fine_tuned, trained_tiny):
    config, report, summary = fine_tuned
    parent = RunDir(run_path(trained_tiny))
    assert config.model == parent.load_config().model                 # the architecture came from the parent
    assert report["vectorizers_from"] == str(parent.path.resolve())
    assert (prepared_path(config) / "vectorizers.pkl").read_bytes() != b""
    child_vectorizers = RunDir(run_path(config)).load_vectorizers()
    assert child_vectorizers.english.encode(["The cat sleeps."], 10).tolist() == \
        parent.load_vectorizers().english.encode(["The cat sleeps."], 10).tolist()
    lineage = RunDir(run_path(config)).load_lineage()
    assert lineage["parent"] == str(parent.path.resolve()) and lineage["parent_model"] == "best"
    assert lineage["parent_model_sha256"] == __import__("pipeline.finetune").finetune.file_sha256(parent.model_file("best"))
    assert lineage["parent_lineage"] is None
    assert summary["parent"] == lineage["parent"]
    # a fine-tuned run is a run like any other: it translates from its directory
    from pipeline.translate.keras_engine import KerasEngine
    assert len(KerasEngine.from_run(run_path(config)).translate(["I see a cat."], beam=1)) == 1


def test_fine_tuning_starts_from_the_parent_weights_on_its_own_schedule(fine_tuned, trained_tiny):
    from pipeline.model import build_model
    from pipeline.serializable import load_model
    from pipeline.training import compile_model

    config, _, _ = fine_tuned
    vectorizers = RunDir(run_path(trained_tiny)).load_vectorizers()
    model = build_model(config, len(vectorizers.english), len(vectorizers.italian))
    load_parent_weights(model, run_path(trained_tiny))
    parent = load_model(run_path(trained_tiny), "best")
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), parent.get_weights()))
    from pipeline.objectives import NoamSchedule
    schedule = NoamSchedule(**_schedule_config(compile_model(model, config, finetune=True).optimizer))
    assert schedule.warmup_steps == 5
    assert float(schedule(4)) == pytest.approx(0.0002, rel=1e-5)        # step 5 of the warm-up: the peak
    assert float(schedule(19)) == pytest.approx(0.0002 * (5 / 20) ** 0.5, rel=1e-5)


def _schedule_config(optimizer) -> dict:
    return optimizer.get_config()["learning_rate"]["config"]


def test_fine_tuning_mismatches_are_one_line_errors(fine_tuned, trained_tiny, tmp_path):
    from pipeline.training import train

    config, _, _ = fine_tuned
    with pytest.raises(ConfigError, match="'model.d_model': fine-tuning keeps the parent run's value 32 .*got 64"):
        load_child_config(TINY, ["model.d_model=64"], str(tmp_path), run_path(trained_tiny))
    with pytest.raises(ConfigError, match="'data.joint_vocab_size': fine-tuning keeps"):
        load_child_config(None, ["data.joint_vocab_size=500"], str(tmp_path), run_path(trained_tiny))
    assert load_child_config(None, ["model.dropout=0.3"], str(tmp_path), run_path(trained_tiny)).model.dropout == 0.3
    # data encoded with other tokenizers (prepared without --vectorizers-from)
    fresh = load_child_config(None, [], str(tmp_path / "fresh"), run_path(trained_tiny))
    prepare(load_config(TINY, ["data.joint_vocab_size=400"], str(tmp_path / "fresh")), progress=False)
    with pytest.raises(ValueError, match="tokenizer is not the one of .*prepare it with --vectorizers-from"):
        train(fresh, verbose=0, init_from=run_path(trained_tiny))
    with pytest.raises(ValueError, match="--init-from starts a new run"):
        train(config, resume=True, init_from=run_path(trained_tiny))


def test_fine_tuning_script_resumes_with_its_lineage_and_schedule(corpora, trained_tiny, tmp_path):
    config = tmp_path / "finetune.yaml"           # a fine-tuning config: no model section (the parent's is kept)
    config.write_text(f"""data:
  corpora:
    - {{path: {corpora['more']}, name: domain}}
    - {{path: {corpora['phrases']}, weight: 0.1}}   # replay of the parent's kind of data
train: {{epochs: 1, jit_compile: false, batch_size: 32, final_bleu_sentences: 0, checkpoint_every_steps: 5}}
finetune: {{warmup_steps: 7}}
""")
    common = ["--config", str(config), "--workdir", str(tmp_path)]
    script = lambda name, *args: subprocess.run([sys.executable, str(ROOT / "scripts" / name), *common, *args],
                                                capture_output=True, text=True, timeout=300)
    result = script("prepare.py", "--vectorizers-from", str(run_path(trained_tiny)), "--quiet")
    assert result.returncode == 0, result.stderr[-2000:]
    result = script("train.py", "--init-from", str(run_path(trained_tiny)), "--verbose", "0", "--set=train.max_steps=10")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "fine-tuning from" in result.stdout
    run = RunDir(tmp_path / "run")
    lineage = run.lineage_file.read_bytes()
    state = json.loads(run.checkpoint_state.read_text())
    assert state["global_step"] == 10 and state["step_in_epoch"] == 10          # the epoch is still open
    result = script("train.py", "--resume", "--verbose", "0", "--set=train.max_steps=18")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "resuming at epoch 1, step 10 (10 batches into the epoch)" in result.stdout
    assert json.loads(run.checkpoint_state.read_text())["global_step"] == 18
    assert run.lineage_file.read_bytes() == lineage
    assert run.load_config().model == RunDir(run_path(trained_tiny)).load_config().model
    from pipeline.serializable import load_keras_file
    optimizer = load_keras_file(run.checkpoint_model, compile=True).optimizer
    assert _schedule_config(optimizer)["warmup_steps"] == 7                        # still the fine-tuning schedule
    result = script("train.py", "--resume", "--init-from", str(run_path(trained_tiny)))
    assert result.returncode == 2 and "--init-from starts a new run" in result.stderr
