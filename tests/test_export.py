import json
import subprocess
import sys

from pipeline.export import export_saved_model
from pipeline.translator import Translator

SENTENCES = ["I love you.", "Where is the station?", "", "Tom's dog is here, isn't it?", "It's raining."]

SERVE = """
import json, sys
import tensorflow as tf
serve = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
out = serve(english=tf.constant(json.loads(sys.argv[2])))["italian"].numpy()
print(json.dumps({"out": [s.decode("utf-8") for s in out], "pipeline": "pipeline" in sys.modules}))
"""


def test_saved_model_serves_strings_in_a_process_without_pipeline(trained_tiny, tmp_path):
    for beam in (1, 3):
        out = export_saved_model(trained_tiny.run_dir, tmp_path / f"sm{beam}", beam=beam)
        result = subprocess.run([sys.executable, "-c", SERVE, str(out), json.dumps(SENTENCES)],
                                capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert result.returncode == 0, result.stderr[-2000:]
        served = json.loads(result.stdout.strip().splitlines()[-1])
        assert served["pipeline"] is False
        expected = Translator.from_run(trained_tiny.run_dir).translate(SENTENCES, beam=beam)
        assert served["out"] == expected
        assert served["out"][2] == ""
