import json
import subprocess
import sys
from types import SimpleNamespace

import pytest
from sacrebleu.metrics import BLEU, CHRF

from pipeline.config import DecodeConfig
from pipeline.evaluation import EvalSet, evaluate, load_parallel_files, load_split_set, score
from pipeline.extras import MissingExtra, require

from conftest import ROOT
from pipeline.rundir import prepared_path, run_path


def evaluate_cli(*args):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "evaluate.py"), *args],
                          capture_output=True, text=True, timeout=600)


class FixedTranslator:
    """A stand-in whose outputs are given, to check the report's arithmetic exactly."""

    def __init__(self, outputs):
        self.outputs = outputs
        self.config = SimpleNamespace(decode=DecodeConfig(beam_size=4, length_penalty=0.6, ban_unk=True))

    def translate(self, sentences, beam=None, batch_size=None, length_penalty=None, progress=False):
        return [self.outputs[s] for s in sentences]


def test_score_uses_sacrebleu_with_multiple_references():
    hyps = ["Il gatto è qui.", "Ciao!"]
    refs = [["Il gatto sta qui.", "Il gatto è qui."], ["Salve!"]]
    result = score(hyps, refs)
    assert result["bleu"] == round(BLEU().corpus_score(hyps, [[r[0] for r in refs], [refs[0][1], None]]).score, 2)
    assert result["chrf"] == round(CHRF().corpus_score(hyps, [[r[0] for r in refs], [refs[0][1], None]]).score, 2)
    assert result["bleu_signature"].startswith("nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:")
    assert result["chrf_signature"].startswith("nrefs:var|case:mixed|eff:yes|nc:6|nw:0|space:no|version:")
    assert score(["Il gatto è qui."], [["Il gatto è qui."]])["bleu"] == 100.0


def test_evaluate_reports_unk_share_length_buckets_and_single_reference():
    sources = ["Hi.", "The black cat is sleeping here.", "Tom bought a very old red car in the small town near the lake."]
    evalset = EvalSet("t", sources, [["Ciao."], ["Il gatto è qui.", "La gatta è qui."], ["Tom ha comprato."]])
    outputs = dict(zip(sources, ["Ciao.", "Il [UNK] è qui.", "Tom ha comprato."]))
    report, hypotheses = evaluate(FixedTranslator(outputs), evalset, beam=2, progress=False)
    assert hypotheses == [outputs[s] for s in sources]
    assert report["unk_output_share"] == round(1 / 3, 4)
    assert (report["sentences"], report["pairs"], report["beam"]) == (3, 4, 2)
    buckets = {b["source_tokens"]: b["sentences"] for b in report["bleu_by_source_length"]}
    assert buckets == {"1-5": 1, "6-10": 1, "11-15": 1, "16-20": 0, "21+": 0}
    assert report["bleu_by_source_length"][2]["bleu"] == 100.0      # the long sentence, translated exactly
    assert report["single_reference"]["bleu_signature"].startswith("nrefs:1|")
    assert report["seconds"] >= 0 and report["sentences_per_second"] > 0


def test_split_file_groups_references_by_english_sentence(tmp_path):
    tsv = tmp_path / "test.tsv"
    tsv.write_text("Go.\tVai.\nHi.\tCiao.\nGo.\tVada.\n", encoding="utf-8")
    evalset = load_split_set(tsv)
    assert evalset.sources == ["Go.", "Hi."] and evalset.references == [["Vai.", "Vada."], ["Ciao."]]
    tsv.write_text("Go.\tVai.\nbroken line\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"test.tsv line 2: expected 2 tab-separated columns, got 1"):
        load_split_set(tsv)


def test_parallel_files_must_have_equal_line_counts(tmp_path):
    src, ref = tmp_path / "src.en", tmp_path / "ref.it"
    src.write_text("a\nb\nc\n", encoding="utf-8")
    ref.write_text("x\r\ny\r\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_parallel_files(src, ref)
    assert str(info.value) == f"line counts differ: source file {src} has 3 lines, reference file {ref} has 2"
    ref.write_text("x\r\ny\r\nz\r\n", encoding="utf-8")
    assert load_parallel_files(src, ref).references == [["x"], ["y"], ["z"]]


def test_missing_extra_names_the_extra():
    with pytest.raises(MissingExtra, match=r"no_such_pkg is not installed; it comes with the 'plots' extra"):
        require("no_such_pkg.sub", "plots")


def test_evaluate_cli_on_the_test_split_matches_sacrebleu_on_its_files(trained_tiny, tmp_path):
    out = tmp_path / "report.json"
    result = evaluate_cli("--run", str(run_path(trained_tiny)), "--beam", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    hypotheses = (tmp_path / "report.hyp.txt").read_text(encoding="utf-8").splitlines()
    evalset = load_split_set(prepared_path(trained_tiny) / "test.tsv")
    assert len(hypotheses) == report["sentences"] == len(evalset.sources)
    assert report["pairs"] == sum(1 for _ in open(prepared_path(trained_tiny) / "test.tsv", encoding="utf-8"))
    streams = [[r[k] if k < len(r) else None for r in evalset.references]
               for k in range(max(map(len, evalset.references)))]
    assert report["bleu"] == round(BLEU().corpus_score(hypotheses, streams).score, 2)
    assert report["chrf"] == round(CHRF().corpus_score(hypotheses, streams).score, 2)
    assert not any(marker in h for h in hypotheses for marker in ("[start]", "[end]"))
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"test: BLEU {report['bleu']:.2f}, chrF {report['chrf']:.2f} on {report['sentences']:,}")


def test_evaluate_cli_errors_in_one_line(trained_tiny, tmp_path):
    src, ref = tmp_path / "src.en", tmp_path / "ref.it"
    src.write_text("I love you.\nHello.\n", encoding="utf-8")
    ref.write_text("Ti amo.\n", encoding="utf-8")
    result = evaluate_cli("--run", str(run_path(trained_tiny)), "--src", str(src), "--ref", str(ref))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == \
        f"error: line counts differ: source file {src} has 2 lines, reference file {ref} has 1"
    result = evaluate_cli("--run", str(tmp_path / "nowhere"), "--split", "test")
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: run directory {tmp_path / 'nowhere'}: not found"), last
