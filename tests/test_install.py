"""A plain install is a whole install: the wheel, installed into a fresh environment and used
from a folder outside the repository, has everything a notebook or a bertlib function needs."""

import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Runs in the fresh environment, from an unrelated folder.
SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path

    import bertlib
    from bertlib import load_small_bert, load_small_corpus, make_pretrain_data, train_bert
    from bertlib.text.corpus import tokenize_paragraphs
    from bertlib.support.i18n import tr
    from bertlib.finetuning.tasks import load_task_sentences, split_tasks
    from bertlib.viz import (AttentionWidget, InputRepresentationWidget, LossPlot,
                             MaskingWidget, NSPWidget)
    from bertlib.viz.fonts import use_cjk_font

    venv = Path(sys.argv[1]).resolve()
    assert venv in Path(bertlib.__file__).resolve().parents, bertlib.__file__
    assert not Path.cwd().resolve().is_relative_to(Path(sys.argv[2]).resolve())
    model, tokenizer = load_small_bert()
    split = load_small_corpus()
    assert len(split.train) > 1000 and len(split.held_out) > 100
    assert use_cjk_font()
    for lang in ("en", "zh"):
        widgets = [InputRepresentationWidget(model, tokenizer, lang),
                   MaskingWidget(tokenizer, lang), AttentionWidget(model, tokenizer, lang),
                   NSPWidget(model, tokenizer, lang)]
        for widget in widgets:
            assert widget.message == "", (type(widget).__name__, lang, widget.message)
            assert bytes(widget.image.value).startswith(b"\\x89PNG")
        assert LossPlot(lang=lang).ax.get_xlabel()
    # The notebooks' printed texts, translated from the package data in any folder.
    assert tr("key j", "zh") == "键 j" and tr("key j", "en") == "key j"
    paragraphs = tokenize_paragraphs(split.train[:20], tokenizer.tokenize)
    data = make_pretrain_data(paragraphs, tokenizer.vocab, 64, seed=0,
                              groups=split.train_langs[:20])
    history = train_bert(model, data, num_steps=1, batch_size=16, progress=False)
    assert len(history.mlm) == 1
    tasks = split_tasks(load_task_sentences())
    assert len(tasks.train) > 2000 and len(tasks.seen) > 500 and len(tasks.held_out) > 500
    assert {s.lang for s in tasks.held_out} == {"en", "zh"}
    print("whole install works")
""")


@pytest.fixture(scope="module")
def fresh_install(tmp_path_factory) -> Path:
    """A new virtual environment holding only the wheel; its dependencies come from this
    environment's site-packages, added as a plain path (so the editable bertlib is not)."""
    tmp = tmp_path_factory.mktemp("install")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps",
                    "--no-build-isolation", "--quiet", "-w", str(tmp / "dist")], check=True)
    (wheel,) = (tmp / "dist").glob("bertlib-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target",
                    str(site), str(wheel)], check=True)
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def test_the_wheel_carries_the_model_the_corpus_the_tasks_and_the_strings(fresh_install):
    (wheel,) = (fresh_install.parent / "dist").glob("bertlib-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("bertlib/strings.json", "bertlib/notebook_strings.json",
                   "bertlib/assets/small_bert/model.safetensors",
                   "bertlib/assets/small_bert/config.json",
                   "bertlib/assets/small_bert/tokenizer.json",
                   "bertlib/assets/small_bert/metrics.json",
                   "bertlib/assets/small_bert/snapshots.safetensors",
                   "bertlib/assets/small_corpus/en.txt", "bertlib/assets/small_corpus/zh.txt",
                   "bertlib/assets/tasks/en.jsonl", "bertlib/assets/tasks/zh.jsonl",
                   "bertlib/assets/wikitext/wiki.train.tokens", "bertlib/viz/widgets.py"):
        assert needed in names, needed


def test_installed_wheel_works_from_an_unrelated_folder(fresh_install, tmp_path):
    elsewhere = tmp_path / "somewhere_else"
    elsewhere.mkdir()
    done = subprocess.run([str(fresh_install / "bin" / "python"), "-c", SCRIPT,
                           str(fresh_install), str(ROOT)],
                          cwd=elsewhere, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                               "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("whole install works")
