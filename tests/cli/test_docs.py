"""Every fenced code block in README.md and docs/**/*.md is run or checked (issue 12).

The convention (docs/development.md, "Code blocks in the docs"): the fence's info string says
what a block is. `sh` and `python` blocks are run here as written, in the order of their file,
against the real ferry binary, the test's Ceph RGW and ferry.data from the build; `synopsis`,
`excerpt=` and `no-run:` blocks are checked without running and `text` blocks are left alone
(doc_blocks.py finds, classifies and statically checks blocks). A block without a tag, or with
a tag or attribute nobody knows, fails the test, so nothing slips through unclassified.

Example names in snippets are mapped to real resources by PLACEHOLDERS (a textual substitution
before running), fragments run inside CONTEXTS, and SPECIALS check what some blocks claim.
"""
import dataclasses
import io
import json
import os
import pathlib
import re
import shlex
import shutil
import signal
import subprocess
import textwrap
import uuid

import pytest

from conftest import ASAN_OPTIONS, ROOT, python_env
from doc_blocks import (DOC_FILES, Help, check_excerpt, check_not_run, check_synopsis, classify,
                        find_blocks, kind, parse_blocks)

BLOCK_TIMEOUT = 120
# The files of examples/ (not Markdown) and the test that runs each; an excerpt= block must
# quote one of those a test runs.
EXAMPLES = {
    "job.yaml": "tests/cli/test_docs.py",          # test_example_job_spec below
    "train_resume.py": "tests/cli/test_resume.py",
    "slurm.sbatch": "tests/cli/test_slurm.py",
    "kubernetes-job.yaml": "tests/cli/test_examples.py",
    "slurm-array.sbatch": "tests/cli/test_slurm.py",
    "train.py": "scripts/demo.py",                 # run by tests/cli/test_demo.py
}


def all_blocks():
    blocks, problems = [], []
    for path in DOC_FILES:
        for block in find_blocks(path):
            problems += classify(block, CONTEXTS)
            blocks.append(block)
    return blocks, problems


# ---------------------------------------------------------------------------------------------
# Placeholders, contexts and claims

# Example names in snippets -> real resources. Matched where a name starts (after a space, `=`,
# a quote, `(` or a line start), replaced in one pass. Keep in sync with docs/development.md.
PLACEHOLDERS = {
    "s3://bucket/": "a prefix on the test RGW; a small shard dataset is packed at ds/train and "
                    "datasets/train",
    "s3://datasets/": "a prefix on the test RGW; the same dataset is packed at imagenet-shards/",
    "s3://runs/": "a prefix on the test RGW",
    "/nas/": "a temp dir; imagenet/train/ holds a small image folder (CLASS/CLASS_N.JPEG + .cls)",
    "/scratch/": "an empty temp dir",
    "/tmp/rgw": "a temp dir holding the test RGW's env file (rgw.sh start reuses the running "
                "server, rgw.sh stop removes the dir)",
}
PLACEHOLDER_RE = re.compile(r"(?<![\w/.:-])(" + "|".join(
    re.escape(p) + ("" if p.endswith("/") else r"(?![\w-])") for p in PLACEHOLDERS) + ")")


@dataclasses.dataclass
class Context:
    doc: str
    prelude: str
    epilogue: str


_MANIFEST_CHECK = textwrap.dedent("""\
    import json, subprocess
    url = os.environ["FERRY_OUTPUT_URL_0"] + "_ferry/manifest.json"
    manifest = json.loads(subprocess.run(["ferry", "cat", url], check=True,
                                         capture_output=True).stdout)
    listed = {f["path"]: f["size"] for f in manifest["files"]}
    out = os.environ["FERRY_OUTPUT"]
    for name in os.listdir(out):
        assert listed.get(name) == os.path.getsize(os.path.join(out, name)), (name, manifest)
    """)

CONTEXTS = {
    # docs/guides/nas-to-shards.md's train.py: a whole script that takes DATASET [EPOCHS].
    "train-script": Context(
        doc="a script run as the command of `ferry run --out /scratch/ctx-N=s3://runs/ctx-N/` "
            "with the arguments `s3://datasets/imagenet/train 2` (the dataset the guide packed "
            "before; 2 epochs): it must train and exit 0",
        prelude='import os, sys\nsys.argv[1:] = ["s3://datasets/imagenet/train", "2"]\n',
        epilogue=""),
    # docs/semantics/run.md's on-demand sync: the snippet is the body of a training command.
    "ferry-run": Context(
        doc="the command of `ferry run --out /scratch/ctx-N=s3://runs/ctx-N/`, after a prelude "
            "(import os, time, torch; a `state` and a `step`); afterwards every file in the "
            "output dir must be in the manifest ferry wrote, with its size",
        prelude=textwrap.dedent("""\
            import os, time
            import torch
            state, step = {"weights": torch.zeros(4)}, 7
            """),
        epilogue=_MANIFEST_CHECK),
}


@dataclasses.dataclass
class Special:
    """What one block needs beyond running as written: found by its file and a piece of its
    text (a Special whose block is gone fails the test, so claims do not vanish silently)."""
    path: str
    contains: str
    why: str
    env: dict = dataclasses.field(default_factory=dict)   # None removes a variable
    preload: bool = False  # LD_PRELOAD for every process, not only python3 on PATH (ASan build)
    check: object = None   # check(page, block, completed_process) raises AssertionError


def check_venv_install(page, block, p):
    """The venv has the binary in bin/ and the package (with its native module) in site-packages,
    not the build's: imported with the ASan runtime a sanitizer build needs, from another dir."""
    venv = page.work / ".venv"
    assert p.stdout.splitlines()[-1].startswith("ferry "), p.stdout   # .venv/bin/ferry --version
    code = "import ferry.data, ferry._native; print(ferry.data.__file__, ferry._native.__file__)"
    env = page.env(preload=True, PYTHONPATH=None)
    q = subprocess.run([str(venv / "bin/python3"), "-c", code], env=env, cwd=page.dir,
                       capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
    assert q.returncode == 0, q.stderr
    assert all(x.startswith(str(venv / "lib")) for x in q.stdout.split()), q.stdout


def check_pack_names(page, block, p):
    # shards.md: `pack SRC s3://b/ds/train` writes train-000000.tar, ... and train.index.json.
    listing = page.ferry("ls", page.substitute("s3://datasets/imagenet/"))
    assert "train-000000.tar" in listing and "train.index.json" in listing, listing


def check_resume_twice(page, block, p):
    """resume.md: the same command on an empty node continues the job as attempt 1."""
    job = page.run_id
    runs = page.substitute("s3://bucket/runs/")
    latest = json.loads(page.ferry("cat", f"{runs}{job}/_ferry/latest.json"))
    assert (latest["attempt"], latest["state"], latest["final"]) == ("0", "succeeded", True), latest
    shutil.rmtree(page.scratch / "ckpt")   # the next attempt lands on another machine
    p2 = page.run(block)
    assert p2.returncode == 0, page.report(p2)
    assert "resumed from attempt 0" in p2.stderr, page.report(p2)
    latest = json.loads(page.ferry("cat", f"{runs}{job}/_ferry/latest.json"))
    assert (latest["attempt"], latest["state"]) == ("1", "succeeded"), latest
    # "What is where"
    listing = page.ferry("ls", "-r", f"{runs}{job}/")
    for name in ("0/ckpt.pt", "0/_ferry/manifest.json", "1/ckpt.pt", "_ferry/latest.json",
                 "_ferry/attempts/rank0/"):
        assert any(x.startswith(name) for x in listing.split()), (name, listing)
    manifest = json.loads(page.ferry("cat", f"{runs}{job}/1/_ferry/manifest.json"))
    assert manifest["resumed_from"]["attempt"] == "0", manifest


# The CMake build under test (its python/ is FERRY_PYTHONPATH).
BUILD_DIR = pathlib.Path(os.environ.get("FERRY_PYTHONPATH") or ROOT / "build/dev/python").resolve().parent


SPECIALS = [
    Special("README.md", "pip install --no-build-isolation ./python",
            "installs ferry into a venv itself: runs without the test's PYTHONPATH, reusing the "
            "test's build (FERRY_BUILD_DIR) instead of a fresh Release build",
            env={"PYTHONPATH": None, "FERRY_BUILD_DIR": str(BUILD_DIR)}, check=check_venv_install),
    Special("docs/guides/nas-to-shards.md", "ferry shard pack", "shard names", check=check_pack_names),
    Special("docs/guides/resume.md", "ferry run --resume", "a second attempt resumes the first",
            check=check_resume_twice),
]


# ---------------------------------------------------------------------------------------------
# The resources behind the placeholders

STUB_TRAIN = '''\
"""train.py of examples/job.yaml: writes two checkpoints and a log into $FERRY_OUTPUT."""
import os, sys
out = os.environ["FERRY_OUTPUT"]
assert os.listdir(os.environ["FERRY_INPUT_0"]), "stage-in brought nothing"
for step in (1, 2):
    with open(os.path.join(out, f"ckpt-{step}.pt"), "wb") as f:
        f.write(os.urandom(1000))
with open(os.path.join(out, "log.txt"), "w") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
'''


def jpeg(shade):
    from PIL import Image
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (shade, 64, 128)).save(buf, "JPEG")
    return buf.getvalue()


def write_samples(root, names):
    """One small JPEG and a class label per sample name."""
    for i, name in enumerate(names):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(jpeg(i * 7 % 256))
        (root / name).with_suffix(".cls").write_text(str(i % 2))


class Docs:
    """The module's shared resources: a bin dir for PATH, datasets on RGW."""

    def __init__(self, ferry, rgw, root):
        self.rgw, self.root = rgw, root
        self.prefix = f"s3://{rgw['FERRY_TEST_S3_BUCKET']}/docs-{uuid.uuid4().hex[:10]}/"
        # An ASan build's ferry._native needs the ASan runtime preloaded into python (conftest's
        # python_env), but curl and other tools hang with it: only python3 on PATH gets it.
        self.preload = python_env(rgw).get("LD_PRELOAD", "")
        self.bin = root / "bin"
        self.bin.mkdir()
        (self.bin / "ferry").symlink_to(ferry.binary)
        for name in ("python3", "python"):   # the python a user runs sees torch and ferry.data
            wrapper = self.bin / name
            preload = (f"export LD_PRELOAD={shlex.quote(self.preload)} ASAN_OPTIONS={ASAN_OPTIONS}:detect_leaks=0\n"
                       if self.preload else "")
            wrapper.write_text(f"#!/bin/sh\n{preload}exec /usr/bin/python3 \"$@\"\n")
            wrapper.chmod(0o755)


@pytest.fixture(scope="module")
def docs(ferry, rgw, tmp_path_factory):
    d = Docs(ferry, rgw, tmp_path_factory.mktemp("docs"))
    samples = d.root / "samples"
    write_samples(samples, [f"s{i:04d}.jpg" for i in range(24)])
    for url in ("bucket/ds/train", "bucket/datasets/train", "datasets/imagenet-shards/"):
        ferry.run("shard", "pack", samples, d.prefix + url, "--samples-per-shard", "6", check=True)
    yield d
    ferry.run("rm", "-r", "-q", d.prefix)


class Page:
    """One doc file's run: its own scratch dirs, job name and working directory, shared by its
    blocks in order (as a reader following the page would)."""

    def __init__(self, docs, rel):
        self.docs, self.rel = docs, rel
        self.dir = docs.root / re.sub(r"\W+", "-", rel)
        self.scratch, self.nas, self.rgw_dir = self.dir / "scratch", self.dir / "nas", self.dir / "rgw"
        self.work = self.dir / "work"   # stands in for the repository root
        for d in (self.scratch, self.rgw_dir, self.work / "build"):
            d.mkdir(parents=True)
        write_samples(self.nas / "imagenet/train",
                      [f"{c}/{c}_{10026 + i}.JPEG" for c in ("n01440764", "n01443537") for i in range(4)])
        env_file = pathlib.Path(os.environ["FERRY_RGW_ENV"])
        (self.rgw_dir / "env").write_text(env_file.read_text())
        for name in ("scripts", "tests", "bench", "docs", "python"):
            (self.work / name).symlink_to(ROOT / name)
        (self.work / "build/release").symlink_to(BUILD_DIR)
        (self.work / "train_resume.py").symlink_to(ROOT / "examples/train_resume.py")
        (self.work / "train.py").write_text(STUB_TRAIN)
        self.run_id = f"docs-{uuid.uuid4().hex[:8]}"   # FERRY_RUN_ID, as a scheduler would set it
        self.map = {"s3://bucket/": docs.prefix + "bucket/", "s3://datasets/": docs.prefix + "datasets/",
                    "s3://runs/": docs.prefix + "runs/", "/nas/": f"{self.nas}/",
                    "/scratch/": f"{self.scratch}/", "/tmp/rgw": str(self.rgw_dir)}
        assert set(self.map) == set(PLACEHOLDERS)

    def substitute(self, text):
        out = PLACEHOLDER_RE.sub(lambda m: self.map[m[1]], text)
        for name in PLACEHOLDERS:   # never run `rgw.sh stop /tmp/rgw` on a developer's server
            assert not re.search(r"(?<![\w/.:-])" + re.escape(name.rstrip("/")) + r"(?![\w-])", out), \
                f"placeholder {name} left in: {out}"
        return out

    def env(self, preload=False, **extra):
        env = python_env(self.docs.rgw, PATH=f"{self.docs.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                         FERRY_RUN_ID=self.run_id)
        if not preload:
            env.pop("LD_PRELOAD", None)
            env["ASAN_OPTIONS"] = ASAN_OPTIONS   # for ferry (an ASan build's); others ignore it
        for k, v in extra.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def ferry(self, *args):
        p = subprocess.run(["ferry", *map(str, args)], env=self.env(), capture_output=True, text=True,
                           timeout=BLOCK_TIMEOUT)
        assert p.returncode == 0, f"ferry {' '.join(map(str, args))}: {p.stderr}"
        return p.stdout

    def run(self, block):
        """Runs a block as written (after placeholder substitution) in the working directory."""
        special = special_for(block) or Special("", "", "")
        text = self.substitute(block.text)
        if block.lang == "sh":
            script = self.dir / f"block-{block.number}.sh"
            script.write_text(text)
            cmd = ["bash", "-e", "-o", "pipefail", str(script)]
        elif "context" in block.attrs:
            ctx = CONTEXTS[block.attrs["context"]]
            script = self.dir / f"block-{block.number}.py"
            script.write_text(self.substitute(ctx.prelude) + text + ctx.epilogue)
            out = self.scratch / f"ctx-{block.number}"
            cmd = ["ferry", "run", "--out", f"{out}={self.map['s3://runs/']}ctx-{block.number}/", "--",
                   "python3", str(script)]
        else:
            script = self.dir / f"block-{block.number}.py"
            script.write_text(text)
            cmd = ["python3", str(script)]
        p = self.spawn(cmd, self.env(special.preload, **special.env))
        p.script = script.read_text()
        return p

    def spawn(self, cmd, env):
        """Runs cmd in its own process group; on timeout the whole group is killed."""
        proc = subprocess.Popen(cmd, cwd=self.work, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=BLOCK_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            err += f"\n[test_docs: killed after {BLOCK_TIMEOUT} s]"
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)

    @staticmethod
    def report(p):
        return (f"exit status {p.returncode}\n--- as run ---\n{p.script}--- stdout (end) ---\n"
                f"{p.stdout[-2000:]}\n--- stderr (end) ---\n{p.stderr[-3000:]}")


def special_for(block):
    found = [s for s in SPECIALS if s.path == block.path and s.contains in block.text]
    assert len(found) <= 1, f"{block.where()}: more than one Special matches"
    return found[0] if found else None


# ---------------------------------------------------------------------------------------------
# The tests

def test_every_block_is_classified():
    blocks, problems = all_blocks()
    for special in SPECIALS:
        if not any(b.path == special.path and special.contains in b.text and kind(b) == "run"
                   for b in blocks):
            problems.append(f"{special.path}: no run block contains {special.contains!r} any more "
                            f"({special.why}); update SPECIALS")
    assert not problems, "\n".join(problems)
    counts = {}
    for b in blocks:
        counts[kind(b)] = counts.get(kind(b), 0) + 1
    not_run = [f"  {b.path}:{b.line}: {b.no_run}" for b in blocks if b.no_run]
    print(f"\ndoc code blocks: {len(blocks)} in {len(DOC_FILES)} files; run {counts.get('run', 0)}; "
          f"checked without running: synopsis {counts.get('synopsis', 0)}, excerpt "
          f"{counts.get('excerpt', 0)}, no-run {counts.get('no-run', 0)}; text {counts.get('text', 0)}")
    print("not run:\n" + "\n".join(not_run))


@pytest.fixture(scope="module")
def helper(ferry_bin):
    return Help(ferry_bin)


def evaluate(block, page, helper):
    """Runs or checks one block; returns its problems, each naming the block."""
    problems = classify(block, CONTEXTS)   # these name the block already
    if problems:
        return problems
    k = kind(block)
    if k == "synopsis":
        problems = check_synopsis(block, helper)
    elif k == "no-run":
        problems = check_not_run(block)
    elif k == "excerpt":
        problems = check_excerpt(block, EXAMPLES)
    elif k == "run":
        p = page().run(block)
        want, special = int(block.attrs.get("exit", 0)), special_for(block)
        if p.returncode != want:
            problems = [f"expected exit status {want}: {page().report(p)}"]
        elif special and special.check:
            try:
                special.check(page(), block, p)
            except AssertionError as e:
                problems = [f"claim not met ({special.why}): {e}\n{page().report(p)}"]
    return [f"{block.where()}: {x}" for x in problems]


def lazy_page(docs, rel):
    """The file's Page, made when its first block runs."""
    made = []
    return lambda: made[0] if made else (made.append(Page(docs, rel)) or made[0])


@pytest.mark.parametrize("rel", [str(p.relative_to(ROOT)) for p in DOC_FILES])
def test_doc_blocks(rel, docs, helper):
    """The file's blocks in order: run blocks run (and must end with their exit status), the
    others are checked. Every failing block is reported with its file and line."""
    page = lazy_page(docs, rel)
    failures = [x for block in find_blocks(ROOT / rel) for x in evaluate(block, page, helper)]
    assert not failures, "\n\n".join(failures)


SELF_TEST = """\
```
no tag
```
```sh exit=2
ferry ls s3:/bucket/typo/
```
```sh
ferry ls s3:/bucket/typo/
```
```synopsis
ferry shard pack SRC DST [--target-size 1G] [--no-such-flag]
ferry shard ls|verify URL
ferry shard frobnicate URL
```
```python excerpt=examples/train_resume.py
def save_checkpoint(directory, state):
    ...
not_in_the_file()
```
```sh no-run: for the self-test
bash scripts/install-deps.sh --no-such-option
```
```yaml
a: 1
```
```sh verbose=1
true
```
1. In a list, with placeholders:
   ```python
   import os
   scratch = "/scratch/"
   assert scratch != "/" + "scratch/" and os.path.isdir(scratch), scratch
   ```
"""


def test_the_checks_catch_broken_blocks(docs, helper):
    """The harness itself: each kind of mistake in SELF_TEST is reported, the good blocks pass."""
    page = lazy_page(docs, "self-test.md")
    problems = {b.number: evaluate(b, page, helper) for b in parse_blocks(SELF_TEST, "self-test.md")}
    expect = {1: ["no tag"], 2: [], 3: ["expected exit status 0"],
              4: ["has no --no-such-flag", "`ferry shard` has no subcommand 'frobnicate'"],
              5: ["not in examples/train_resume.py"], 6: ["does not know --no-such-option"],
              7: ["unknown tag 'yaml'"], 8: ["unknown attribute 'verbose=1'"], 9: []}
    assert set(problems) == set(expect)
    for number, wants in expect.items():
        got = problems[number]
        assert len(got) == len(wants) and all(w in g for w, g in zip(wants, got)), \
            f"block {number}: expected {wants}, got {got}"
    text = page().substitute(
        "s3://bucket/a =s3://runs/b '/nas/c' /scratch/d /tmp/rgw/env /tmp/rgwx s3://bucketx/ x/scratch/")
    m, d = page().map, page().dir
    assert text == (f"{m['s3://bucket/']}a ={m['s3://runs/']}b '{d}/nas/c' {d}/scratch/d {d}/rgw/env "
                    "/tmp/rgwx s3://bucketx/ x/scratch/")


def test_examples_are_run_by_a_test():
    """Every file in examples/ is accounted for in EXAMPLES, and the test named runs it."""
    names = {p.name for p in (ROOT / "examples").iterdir()}
    assert names == set(EXAMPLES), f"examples/ has {sorted(names)}; update EXAMPLES"
    for name, test in EXAMPLES.items():
        if test:
            assert name in (ROOT / test).read_text(), f"{test} does not mention {name}"


def test_example_job_spec(docs):
    """examples/job.yaml as its first line says: `ferry run --spec job.yaml` (train.py is a
    stub that writes two checkpoints and a log), and what its comments promise."""
    page = Page(docs, "examples/job.yaml")
    (page.work / "job.yaml").write_text(page.substitute((ROOT / "examples/job.yaml").read_text()))
    p = page.spawn(["ferry", "run", "--spec", "job.yaml"], page.env())
    p.script = (page.work / "job.yaml").read_text()
    assert p.returncode == 0, page.report(p)
    out, runs = page.scratch / "out", page.map["s3://runs/"]
    assert (out / "log.txt").read_text() == "--epochs 10\n"           # the command, as a list
    assert sorted(x.name for x in (page.scratch / "data").iterdir()) == sorted(
        ["shard.index.json"] + [f"shard-{i:06d}.tar" for i in range(4)])  # the input, staged in
    assert not list(out.glob("ckpt-*.pt")), "delete_after_upload left checkpoints behind"
    # "latest pointer: s3://runs/resnet50/JOB/_ferry/latest.json"
    latest = json.loads(page.ferry("cat", f"{runs}resnet50/{page.run_id}/_ferry/latest.json"))
    assert (latest["run_id"], latest["state"], latest["final"]) == (page.run_id, "succeeded", True)
    manifest = json.loads(page.ferry("cat", latest["manifest"]))
    assert sorted(f["path"] for f in manifest["files"]) == ["ckpt-1.pt", "ckpt-2.pt", "log.txt"]
    assert latest["url"] == f"{runs}resnet50/{page.run_id}/0/"
