"""Finding, classifying and statically checking the fenced code blocks of the docs (issue 12).

Used by test_docs.py, which runs the blocks meant to be run; the convention is in
docs/development.md ("Code blocks in the docs"). Nothing here touches a server.
"""
import dataclasses
import json
import pathlib
import re
import shlex
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC_FILES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
RUN_TAGS = {"sh", "python"}
# Shown, not run: plain text, command synopses, and config files a guide shows as written (a
# systemd unit, an nginx site; tests/cli/test_deploy_guide.py runs the nginx one itself).
QUIET_TAGS = {"text", "synopsis", "ini", "nginx"}


@dataclasses.dataclass
class Block:
    path: str          # relative to the repository root
    line: int          # line of the opening fence (1-based)
    number: int        # n-th fenced block of its file (1-based)
    info: str          # the whole info string
    text: str          # the content, dedented by the fence's indentation
    lang: str = ""
    attrs: dict = dataclasses.field(default_factory=dict)
    no_run: str = ""   # the stated reason when not run

    def where(self):
        return f"{self.path}:{self.line} (block {self.number}, ```{self.info})"


FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


def find_blocks(path):
    return parse_blocks(path.read_text(), str(path.relative_to(ROOT)))


def parse_blocks(markdown, rel):
    """The fenced code blocks of a Markdown text (CommonMark fences, also inside list items)."""
    lines = markdown.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        indent, fence, start = len(m["indent"]), m["fence"], i
        body = []
        i += 1
        while i < len(lines):
            s = lines[i].strip()
            if s.startswith(fence[0] * len(fence)) and not s.lstrip(fence[0]):
                break
            line = lines[i]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            i += 1
        else:
            raise AssertionError(f"{rel}:{start + 1}: code fence never closed")
        blocks.append(Block(rel, start + 1, len(blocks) + 1, m["info"].strip(), "\n".join(body) + "\n"))
        i += 1
    return blocks


ATTRIBUTE = re.compile(r"^(exit=\d+|excerpt=\S+|context=[\w-]+)$")


def classify(block, contexts):
    """Fills lang/attrs/no_run from the info string; returns a list of problems."""
    info = block.info
    if not info:
        return [f"{block.where()}: no tag; say what the block is (sh, python, text, synopsis, ini, nginx)"]
    lang, _, rest = info.partition(" ")
    block.lang = lang
    if lang not in RUN_TAGS | QUIET_TAGS:
        return [f"{block.where()}: unknown tag {lang!r} (sh, python, text, synopsis, ini, nginx)"]
    rest = rest.strip()
    if rest.startswith("no-run:"):
        block.no_run = rest[len("no-run:"):].strip()
        if lang not in RUN_TAGS or not block.no_run:
            return [f"{block.where()}: no-run needs a reason and an sh or python block"]
        return []
    problems = []
    for word in rest.split():
        if not ATTRIBUTE.match(word):
            problems.append(f"{block.where()}: unknown attribute {word!r}")
            continue
        key, value = word.split("=", 1)
        block.attrs[key] = value
    if block.attrs and lang not in RUN_TAGS:
        problems.append(f"{block.where()}: attributes only on sh and python blocks")
    if ("excerpt" in block.attrs or "context" in block.attrs) and lang != "python":
        problems.append(f"{block.where()}: excerpt= and context= are for python blocks")
    if "context" in block.attrs and block.attrs["context"] not in contexts:
        problems.append(f"{block.where()}: unknown context {block.attrs['context']!r}")
    if "excerpt" in block.attrs and not (ROOT / block.attrs["excerpt"]).is_file():
        problems.append(f"{block.where()}: excerpt source {block.attrs['excerpt']} does not exist")
    return problems


def kind(block):
    if block.lang in QUIET_TAGS:
        return block.lang
    if block.no_run:
        return "no-run"
    return "excerpt" if "excerpt" in block.attrs else "run"


def strip_sh_comment(line):
    return re.sub(r"(^|\s)#.*$", "", line)


def check_not_run_sh(block):
    """`bash -n`; each repo script the block calls exists and mentions every --flag it gets;
    each `--preset NAME` is a preset of CMakePresets.json."""
    problems = []
    p = subprocess.run(["bash", "-n"], input=block.text, capture_output=True, text=True)
    if p.returncode:
        problems.append(f"bash -n: {p.stderr.strip()}")
    presets = json.loads((ROOT / "CMakePresets.json").read_text())
    preset_names = {p["name"] for section in ("configurePresets", "buildPresets", "testPresets")
                    for p in presets.get(section, [])}
    cwd = ROOT
    clones = set()  # directories a `git clone` in the block made: copies of this repo
    for line in block.text.splitlines():
        for segment in re.split(r"&&|\|\||;|\|", strip_sh_comment(line)):
            try:
                words = shlex.split(segment)
            except ValueError:
                continue
            if words[:2] == ["git", "clone"]:
                args = [w for w in words[2:] if not w.startswith("-")]
                if len(args) == 2:
                    clones.add(args[1])
                continue
            if words[:1] == ["cd"] and len(words) == 2:
                cwd = ROOT if words[1] in clones else cwd / words[1]
                continue
            for i, word in enumerate(words):
                if word == "--preset" and i + 1 < len(words) and words[i + 1] not in preset_names:
                    problems.append(f"no CMake preset {words[i + 1]!r}")
                if not re.fullmatch(r"[\w./-]+\.(sh|py)", word):
                    continue
                script = cwd / word
                if not script.is_file():
                    where = cwd.relative_to(ROOT) if cwd.is_relative_to(ROOT) else cwd
                    problems.append(f"{word}: no such file (from {where or '.'})")
                    break
                source = script.read_text()
                for flag in words[i + 1:]:
                    name = flag.split("=", 1)[0]
                    if name.startswith("--") and name not in source:
                        problems.append(f"{word} does not know {name}")
                break
    return problems


def check_not_run(block):
    if block.lang == "sh":
        return check_not_run_sh(block)
    try:
        compile(block.text, block.where(), "exec")
    except SyntaxError as e:
        return [f"does not compile: {e}"]
    return []


def normalise_py(line):
    return re.sub(r"\s+#[^'\"]*$", "", line.strip())


def check_excerpt(block, examples):
    """Each run of lines between `...` lines appears, in order, in the source (comments at the
    end of a line, indentation and blank lines aside); the source is an example a test runs."""
    name = block.attrs["excerpt"].removeprefix("examples/")
    if not examples.get(name):
        return [f"excerpt source {block.attrs['excerpt']} is not an example some test runs (EXAMPLES)"]
    source = [normalise_py(x) for x in (ROOT / block.attrs["excerpt"]).read_text().splitlines()]
    source = [x for x in source if x]
    chunks, chunk = [], []
    for line in block.text.splitlines():
        if line.strip() == "...":
            chunks.append(chunk)
            chunk = []
        elif normalise_py(line):
            chunk.append(normalise_py(line))
    chunks.append(chunk)
    at = 0
    for chunk in filter(None, chunks):
        for start in range(at, len(source) - len(chunk) + 1):
            if source[start:start + len(chunk)] == chunk:
                at = start + len(chunk)
                break
        else:
            return [f"not in {block.attrs['excerpt']} (in this order): {chunk[0]!r} ..."]
    return []


class Help:
    """`ferry [SUB...] --help`, parsed: flags and subcommands."""

    def __init__(self, ferry_bin):
        self.ferry_bin, self.cache = ferry_bin, {}

    def get(self, path):
        if path not in self.cache:
            p = subprocess.run([self.ferry_bin, *path, "--help"], capture_output=True, text=True)
            assert p.returncode == 0, f"ferry {' '.join(path)} --help: {p.stderr}"
            subs = re.findall(r"^  (\w+)\s", p.stdout.split("Subcommands:", 1)[1], re.M) \
                if "Subcommands:" in p.stdout else []
            self.cache[path] = (p.stdout, subs)
        return self.cache[path]

    def knows(self, path, flag):
        """A flag of the command, of one of its subcommands, or a global one."""
        text, subs = self.get(path)
        texts = [text, self.get(())[0]] + [self.get(path + (s,))[0] for s in subs]
        pattern = re.escape(flag) + r"(?![\w-])"
        return any(re.search(r"(?<![\w-])" + pattern, t) for t in texts)


def check_synopsis(block, helper):
    """Each `ferry SUB ...` line names real subcommands, and its flags (also on the indented
    lines that follow it) are in that command's --help."""
    problems, path = [], None
    for line in block.text.splitlines():
        code = strip_sh_comment(line)
        if line.startswith("ferry "):
            path = ()
            for word in code.split()[1:]:
                if word.startswith("-") or word == "...":
                    continue
                subs = helper.get(path)[1]
                if not re.fullmatch(r"[a-z][\w|-]*", word) or not subs:
                    break   # an argument (URL, SRC, ...): the command is complete
                if any(alt not in subs for alt in word.split("|")):
                    problems.append(f"`ferry {' '.join(path)}` has no subcommand {word!r}: {line.strip()!r}")
                    break
                if "|" in word:   # `ls|verify`: flags are checked against all of them
                    break
                path += (word,)
            flags_from = code
        elif path is not None and line[:1].isspace() and code.strip():
            flags_from = re.split(r"\s{2,}", code.strip())[0]   # option lists: the option part
        else:
            continue
        for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*|-[a-zA-Z])(?![\w-])", flags_from):
            if not helper.knows(path, flag):
                problems.append(f"`ferry {' '.join(path)}` has no {flag}: {line.strip()!r}")
    return problems


